//! The network shell: a tokio current-thread runtime on one background thread that owns
//! the engine; connection tasks parse requests and call the engine synchronously. Server
//! threads are parked and reused across the servers of a process (`workers`).

pub mod busy;
pub(crate) mod busy_poll;
pub mod conn;
pub mod flush;
pub mod io;
mod listen;
pub mod parser;
pub mod server;
pub(crate) mod stream;
pub(crate) mod timers;
mod wake;
mod workers;
