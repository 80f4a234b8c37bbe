//! redlab-client: connections to redlab or to real Redis, scripts with the NOSCRIPT
//! fallback, and the tested patterns (lock, limiters, monotonic max, versioned write).
//!
//! The same code runs against three targets: redlab in-process (`InProcess`), redlab over
//! TCP, and a real redis-server (`Connection::tcp`, `RealRedis`).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod codec;
pub mod connection;
pub mod error;
pub mod explore;
/// The RESP decoder's fuzz body, for fuzz/ and the corpus replay test.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod inprocess;
mod numtext;
pub mod patterns;
pub mod real_redis;
#[cfg(feature = "redis-rs")]
pub mod redis_rs;
pub mod script;
pub mod tcp;
pub mod value;

pub use connection::{Connection, Pipeline, Transport};
pub use error::{Error, Result};
pub use inprocess::InProcess;
pub use patterns::limiter::{Decision, FixedWindow, SlidingLog, TokenBucket};
pub use patterns::lock::{Acquire, Guard, Lock, Watchdog, WatchdogEnd};
pub use patterns::max::MonotonicMax;
pub use patterns::stream::{Delivery, StreamEntry, StreamGroup};
pub use patterns::versioned::{VersionedHash, Write};
pub use real_redis::{RealRedis, RealRedisError};
pub use script::Script;
pub use value::Value;
