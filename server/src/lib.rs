//! redlab-server: a single-threaded, Redis 7 compatible engine with Lua scripting, and the
//! network shell that serves it over RESP2/RESP3.
//!
//! Two ways in:
//! - [`Server`]: a real TCP port on a background thread, for any Redis client;
//! - [`Engine`]: the same engine called directly, with no thread and no socket.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod acl;
pub mod admission;
pub mod arg_buffer;
pub mod busy;
pub mod client_output;
pub mod clock;
pub mod cluster;
pub mod cmd;
pub mod config;
pub mod db;
pub mod engine;
pub mod errors;
pub mod faults;
#[doc(hidden)]
pub mod fuzzing;
pub mod glob;
pub mod latency;
pub mod ldouble;
pub mod lua;
pub mod net;
pub mod notify;
pub mod numfmt;
pub mod reply;
pub mod rng;
pub mod session;
pub mod slowlog;
pub mod snapshot;
pub mod stats;
#[cfg(test)]
pub(crate) mod test_support;

pub use clock::Clock;
pub use cluster::{Cluster, ClusterBuilder};
pub use config::Config;
pub use engine::Engine;
pub use faults::Faults;
pub use net::server::{Server, ServerBuilder};
pub use reply::Reply;
pub use session::ConnId;
pub use snapshot::Snapshot;
