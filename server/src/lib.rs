//! redlab-server: a single-threaded, Redis 7 compatible engine with Lua scripting, and the
//! network shell that serves it over RESP2/RESP3.
//!
//! Two ways in:
//! - [`Server`]: a real TCP port on a background thread, for any Redis client;
//! - [`Engine`]: the same engine called directly, with no thread and no socket.

#![deny(unsafe_op_in_unsafe_fn)]

pub(crate) mod acl;
pub(crate) mod admission;
pub(crate) mod arg_buffer;
pub(crate) mod busy;
pub(crate) mod client_output;
pub(crate) mod client_query;
pub(crate) mod client_reply;
pub mod clock;
pub mod cluster;
pub(crate) mod cmd;
pub mod compat;
pub mod config;
pub(crate) mod db;
pub(crate) mod engine;
pub(crate) mod errors;
pub mod faults;
mod fpconv;
/// Fuzz bodies for the cargo-fuzz targets in `fuzz/` and the corpus replay tests; not part of
/// the API a test author uses, so only built with the `fuzzing` feature.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod glob;
mod global_alloc;
pub(crate) mod latency;
pub(crate) mod ldouble;
pub(crate) mod lua;
pub(crate) mod net;
pub(crate) mod notify;
pub(crate) mod numfmt;
mod observe;
pub mod oom_score;
pub(crate) mod persist;
pub(crate) mod repl;
pub mod reply;
pub(crate) mod rng;
pub(crate) mod session;
pub(crate) mod slowlog;
pub(crate) mod snapshot;
pub(crate) mod stats;
#[cfg(test)]
pub(crate) mod test_support;

pub use clock::Clock;
pub use cluster::{Cluster, ClusterBuilder};
pub use compat::Profile;
pub use config::Config;
pub use engine::Engine;
pub use faults::{Fault, FaultAction, Faults, Fired};
pub use global_alloc::MiMalloc;
pub use net::server::{Server, ServerBuilder};
pub use reply::Reply;
pub use session::ConnId;
pub use snapshot::{Fork, Snapshot};

/// Lua states built ahead, by a server thread between two servers (off by default): see
/// `lua::prepared`.
pub use lua::prepared::set_enabled as prepare_lua_states_ahead;
/// The process-wide pool of Lua states in-process engines (outside server threads) take at
/// their first script, refilled by a background thread at idle priority (on by default): see
/// `lua::prepared`.
pub use lua::prepared::set_pool_enabled as pool_lua_states;
/// A fresh random seed, as the explorer draws one for a scenario without a fixed seed.
pub use rng::fresh_seed;

/// The users a server starts with: the config file's `user` lines and the aclfile, checked
/// as redis-server checks them (`redlab-server` refuses to start as it does).
pub mod users {
    pub use crate::acl::startup::{check_at_start, check_declaration};
}

/// Redis's text forms of a command line, for clients and tools built on the engine.
pub mod protocol {
    /// Redis's `sdscatrepr`: bytes quoted and escaped as Redis prints them.
    pub use crate::cmd::server::repr;
    /// redis-cli's splitting of a typed line into arguments (quotes and escapes).
    pub use crate::net::parser::split_args;
    /// The incremental RESP request parser the network shell uses.
    pub use crate::net::parser::{Parsed, RequestParser};
}
