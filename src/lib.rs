//! redlab: test Redis Lua scripts against a Redis 7 compatible server that lives in your
//! test process, with a controllable clock and fault injection.
//!
//! ```no_run
//! let server = redlab::Server::start();          // 127.0.0.1:<free port>, ready on return
//! let url = server.url();                        // hand it to any Redis client
//! # let _ = url;
//! ```

pub use redlab_server::{
    clock, cluster, compat, config, reply, Clock, Cluster, ClusterBuilder, Config, ConnId, Engine,
    Fault, FaultAction, Faults, Fired, Profile, Reply, Server, ServerBuilder,
};

/// The client crate: connections, scripts and the tested patterns.
pub use redlab_client as client;

/// The interleaving explorer: a `Scenario` of logical clients run against an engine under
/// every schedule (or a sample), with the checks that judge each run.
///
/// ```no_run
/// use redlab::explore::Scenario;
/// # let _ = std::mem::size_of::<Scenario>();
/// ```
pub mod explore {
    pub use redlab_client::explore::*;
}
