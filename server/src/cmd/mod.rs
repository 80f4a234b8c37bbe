//! Commands by group, as Redis groups them. Each file holds its handlers, its `COMMANDS`
//! table slice and its tests.

pub mod args;
pub(crate) mod help;
pub(crate) mod lookup;
pub mod table;

pub mod acl;
pub mod bitmap;
pub mod cfloat;
pub mod connection;
pub mod debug;
pub(crate) mod debug_populate;
pub(crate) mod debug_reload;
pub mod functions;
pub mod geo;
pub mod hash;
pub mod hyperloglog;
pub mod keys;
pub mod list;
pub mod pubsub;
pub(crate) mod random_picks;
pub mod redlab;
pub mod scripting;
pub mod server;
pub mod set;
pub mod sort;
pub mod stream;
pub mod string;
pub mod transactions;
pub mod zset;

pub use table::Command;
