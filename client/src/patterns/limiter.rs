//! Rate limiters: fixed window, sliding log and token bucket, each one script, timed by the
//! server's clock.

use std::time::Duration;

use crate::connection::Connection;
use crate::error::Result;
use crate::script::Script;
use crate::value::Value;

use super::{int_at, status_reply};

const FIXED_WINDOW: &str = include_str!("../../../scripts/fixed_window.lua");
const SLIDING_LOG: &str = include_str!("../../../scripts/sliding_log.lua");
const TOKEN_BUCKET: &str = include_str!("../../../scripts/token_bucket.lua");

/// A limiter's answer. Invalid input is `Err(Error::Invalid(reason))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Let the request through; `remaining` more fit before the limit.
    Allowed { remaining: u64 },
    /// Refuse it; try again after `retry_after`.
    Limited { retry_after: Duration },
}

fn ms(n: i64) -> Duration {
    Duration::from_millis(n.max(0) as u64)
}

/// The decision in a `{status, remaining, retry_after_ms}` reply (the sliding log's and the
/// token bucket's shape): status 1 allows, anything else limits.
fn remaining_or_retry(v: &Value) -> Result<Decision> {
    let (status, rest) = status_reply(v)?;
    Ok(if status == 1 {
        Decision::Allowed {
            remaining: int_at(rest, 0)?.max(0) as u64,
        }
    } else {
        Decision::Limited {
            retry_after: ms(int_at(rest, 1)?),
        }
    })
}

/// At most `limit` hits per window; the window starts at its first hit.
pub struct FixedWindow {
    conn: Connection,
    limit: String,
    window_secs: String,
    script: Script,
}

impl FixedWindow {
    /// Arguments are passed to the script as given, so invalid ones (0, "1.5") reach its
    /// validation and come back as `Error::Invalid`.
    pub fn new(conn: Connection, limit: impl ToString, window_secs: impl ToString) -> FixedWindow {
        FixedWindow {
            conn,
            limit: limit.to_string(),
            window_secs: window_secs.to_string(),
            script: Script::fixed(FIXED_WINDOW),
        }
    }

    pub async fn hit(&self, key: &str) -> Result<Decision> {
        let v = self
            .script
            .invoke(&self.conn, &[key], &[&self.limit, &self.window_secs])
            .await?;
        let (status, rest) = status_reply(&v)?;
        let count = int_at(rest, 0)?;
        let ttl = int_at(rest, 1)?;
        let limit: i64 = self.limit.parse().unwrap_or(0);
        Ok(if status == 1 {
            Decision::Allowed {
                remaining: (limit - count).max(0) as u64,
            }
        } else {
            Decision::Limited {
                retry_after: ms(ttl),
            }
        })
    }
}

/// At most `limit` hits in any window of `window`.
pub struct SlidingLog {
    conn: Connection,
    limit: String,
    window_ms: String,
    script: Script,
}

impl SlidingLog {
    pub fn new(conn: Connection, limit: impl ToString, window: Duration) -> SlidingLog {
        SlidingLog {
            conn,
            limit: limit.to_string(),
            window_ms: window.as_millis().to_string(),
            script: Script::fixed(SLIDING_LOG),
        }
    }

    pub async fn hit(&self, key: &str) -> Result<Decision> {
        let id = super::lock::new_token();
        let v = self
            .script
            .invoke(&self.conn, &[key], &[&self.limit, &self.window_ms, &id])
            .await?;
        remaining_or_retry(&v)
    }
}

/// Bursts up to `capacity`, refilled at `rate_per_sec`.
pub struct TokenBucket {
    conn: Connection,
    capacity: String,
    rate: String,
    script: Script,
}

impl TokenBucket {
    pub fn new(
        conn: Connection,
        capacity: impl ToString,
        rate_per_sec: impl ToString,
    ) -> TokenBucket {
        TokenBucket {
            conn,
            capacity: capacity.to_string(),
            rate: rate_per_sec.to_string(),
            script: Script::fixed(TOKEN_BUCKET),
        }
    }

    /// Takes `cost` tokens if there are enough.
    pub async fn take(&self, key: &str, cost: u64) -> Result<Decision> {
        let v = self
            .script
            .invoke(
                &self.conn,
                &[key],
                &[&self.capacity, &self.rate, &cost.to_string()],
            )
            .await?;
        remaining_or_retry(&v)
    }
}
