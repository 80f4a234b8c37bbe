//! redlab-client: connections to redlab or to real Redis, scripts with NOSCRIPT fallback,
//! and the tested patterns.

pub mod real_redis;

pub use real_redis::{RealRedis, RealRedisError};
