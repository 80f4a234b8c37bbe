//! The network shell: a tokio current-thread runtime on one background thread that owns
//! the engine; connection tasks parse requests and call the engine synchronously.

pub mod busy;
pub mod conn;
pub mod flush;
pub mod io;
pub mod parser;
pub mod server;
pub(crate) mod stream;
