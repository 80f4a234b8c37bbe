//! redlab: test Redis Lua scripts against a Redis 7 compatible server that lives in your
//! test process, with a controllable clock and fault injection.
//!
//! ```no_run
//! let server = redlab::Server::start();          // 127.0.0.1:<free port>, ready on return
//! let url = server.url();                        // hand it to any Redis client
//! # let _ = url;
//! ```

pub use redlab_server::faults::{Fault, FaultAction, Faults, Fired};
pub use redlab_server::{
    clock, compat, config, reply, Clock, Config, ConnId, Engine, Profile, Reply, Server,
    ServerBuilder,
};

/// The client crate: connections, scripts and the tested patterns.
pub use redlab_client as client;
