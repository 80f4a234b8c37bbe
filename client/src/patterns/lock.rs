//! `Lock`: a lease-based lock released only by its owner, renewed by a watchdog, handed over
//! between owners, with a fencing token.
//!
//! A lock in Redis is a lease, not a guarantee: a holder that pauses longer than the TTL
//! (a GC pause, a stalled VM) loses it without knowing. The fencing token is how a resource
//! protects itself: it is strictly increasing per lock, so the resource rejects a write that
//! carries a token lower than one it has already seen.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::script::Script;

use super::{int_at, status_reply};

const ACQUIRE: &str = include_str!("../../../scripts/lock_acquire.lua");
const RELEASE: &str = include_str!("../../../scripts/lock_release.lua");
const RENEW: &str = include_str!("../../../scripts/lock_renew.lua");
const HANDOVER: &str = include_str!("../../../scripts/lock_handover.lua");

/// A lock definition: which key, which lease. Cheap to clone.
#[derive(Clone)]
pub struct Lock {
    conn: Connection,
    key: String,
    fence_key: String,
    ttl: Duration,
    scripts: Arc<[Script; 4]>,
}

/// A held lock: the proof of ownership (token) and the fencing token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    pub token: String,
    pub fence: i64,
}

/// The outcome of a try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acquire {
    Acquired(Guard),
    /// Someone else holds it for this long still.
    Held {
        remaining: Duration,
    },
}

thread_local! {
    /// The explorer's token generator for the schedule running on this thread (see
    /// `seed_tokens`); None outside the explorer.
    static TOKEN_RNG: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// A random 128-bit token, hex. Under the explorer the tokens come from the scenario's
/// seed, in the order the schedule asks for them, so a replay prints the same tokens.
pub fn new_token() -> String {
    let seeded = TOKEN_RNG.with(|c| {
        let mut state = c.get()?;
        let hi = splitmix(&mut state);
        let lo = splitmix(&mut state);
        c.set(Some(state));
        Some(((hi as u128) << 64) | lo as u128)
    });
    format!("{:032x}", seeded.unwrap_or_else(rand::random::<u128>))
}

/// Makes the tokens `new_token` gives on this thread a sequence drawn from `seed`: the
/// explorer calls it as each schedule starts. Explored clients run on the explorer's
/// thread only, so the tokens of a schedule depend on the seed and the schedule alone.
pub(crate) fn seed_tokens(seed: u64) {
    TOKEN_RNG.with(|c| c.set(Some(seed ^ 0x70CE_4E5E_ED00_0001)));
}

/// Ends seeded tokens on this thread (the explorer is done with it).
pub(crate) fn unseed_tokens() {
    TOKEN_RNG.with(|c| c.set(None));
}

/// One SplitMix64 step.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Lock {
    /// A lock on `key` with lease `ttl`; its fencing counter lives at `<key>:fence`.
    pub fn new(conn: Connection, key: &str, ttl: Duration) -> Lock {
        Lock {
            conn,
            key: key.to_string(),
            fence_key: format!("{}:fence", key),
            ttl,
            scripts: Arc::new([
                Script::fixed(ACQUIRE),
                Script::fixed(RELEASE),
                Script::fixed(RENEW),
                Script::fixed(HANDOVER),
            ]),
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    fn ttl_ms(&self) -> String {
        self.ttl.as_millis().max(1).to_string()
    }

    /// One attempt.
    pub async fn try_acquire(&self) -> Result<Acquire> {
        let token = new_token();
        let v = self.scripts[0]
            .invoke(
                &self.conn,
                &[&self.key, &self.fence_key],
                &[token.as_str(), &self.ttl_ms()],
            )
            .await?;
        let (status, rest) = status_reply(&v)?;
        Ok(if status == 1 {
            Acquire::Acquired(Guard {
                token,
                fence: int_at(rest, 0)?,
            })
        } else {
            Acquire::Held {
                remaining: Duration::from_millis(int_at(rest, 0)?.max(0) as u64),
            }
        })
    }

    /// Retries with exponential backoff (capped at the remaining lease) until acquired or
    /// `timeout` passes; None on timeout.
    pub async fn acquire(&self, timeout: Duration) -> Result<Option<Guard>> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut backoff = Duration::from_millis(5);
        loop {
            match self.try_acquire().await? {
                Acquire::Acquired(g) => return Ok(Some(g)),
                Acquire::Held { remaining } => {
                    let now = tokio::time::Instant::now();
                    if now >= deadline {
                        return Ok(None);
                    }
                    // Wake just after the lease ends: Redis keeps a key through the last
                    // millisecond of its TTL (PTTL 0), so waking at `remaining` would
                    // find it still held.
                    let wait = backoff
                        .min(remaining + Duration::from_millis(1))
                        .min(deadline - now);
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
            }
        }
    }

    /// Releases if still the owner; false if the lease had already run out or changed hands.
    pub async fn release(&self, guard: &Guard) -> Result<bool> {
        let v = self.scripts[1]
            .invoke(&self.conn, &[&self.key], &[&guard.token])
            .await?;
        Ok(v.as_int() == Some(1))
    }

    /// Extends the lease to a fresh `ttl` if still the owner.
    pub async fn renew(&self, guard: &Guard) -> Result<bool> {
        let v = self.scripts[2]
            .invoke(
                &self.conn,
                &[&self.key],
                &[guard.token.as_str(), &self.ttl_ms()],
            )
            .await?;
        if v.as_array().is_some() {
            status_reply(&v)?;
        }
        Ok(v.as_int() == Some(1))
    }

    /// Hands the lock to a new owner with a fresh lease and a new fencing token; None if
    /// the caller no longer owns it.
    pub async fn handover(&self, guard: &Guard) -> Result<Option<Guard>> {
        let token = new_token();
        let v = self.scripts[3]
            .invoke(
                &self.conn,
                &[&self.key, &self.fence_key],
                &[guard.token.as_str(), &token, &self.ttl_ms()],
            )
            .await?;
        let (status, rest) = status_reply(&v)?;
        Ok((status == 1)
            .then(|| int_at(rest, 0))
            .transpose()?
            .map(|fence| Guard { token, fence }))
    }

    /// The watchdog's loop as a future: renews the lease every ttl/3 and resolves when a
    /// renewal finds the lock gone (`Lost`) or fails. Run it beside the work that needs the
    /// lock (`tokio::select!`), so the work stops when the lock is lost; this is also the
    /// form the explorer can drive (it polls one future per client and runs no spawned
    /// tasks).
    pub async fn keep_alive(&self, guard: &Guard) -> WatchdogEnd {
        let period = self.ttl / 3;
        loop {
            tokio::time::sleep(period).await;
            match self.renew(guard).await {
                Ok(true) => continue,
                Ok(false) => return WatchdogEnd::Lost,
                Err(e) => return WatchdogEnd::Failed(e),
            }
        }
    }

    /// Starts a watchdog task (`tokio::spawn`) running `keep_alive` while the returned handle
    /// lives. `lost()` on the handle resolves when a renewal finds the lock gone (the lease
    /// ran out, for example during a stall longer than the TTL).
    pub fn watchdog(&self, guard: &Guard) -> Watchdog {
        let (tx, rx) = watch::channel(None);
        let lock = self.clone();
        let guard = guard.clone();
        let task = tokio::spawn(async move {
            let end = lock.keep_alive(&guard).await;
            let _ = tx.send(Some(end));
        });
        Watchdog { rx, task }
    }
}

/// Why a watchdog stopped renewing.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchdogEnd {
    /// A renewal found the lock gone or owned by someone else.
    Lost,
    /// A renewal failed (connection or server error).
    Failed(Error),
}

/// A running watchdog; dropping it stops the renewals.
pub struct Watchdog {
    rx: watch::Receiver<Option<WatchdogEnd>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watchdog {
    /// Resolves when the watchdog stops: the lock was lost or a renewal failed.
    pub async fn lost(&mut self) -> WatchdogEnd {
        loop {
            if let Some(end) = self.rx.borrow().clone() {
                return end;
            }
            if self.rx.changed().await.is_err() {
                return WatchdogEnd::Failed(Error::Connection("watchdog stopped".into()));
            }
        }
    }

    /// Whether the watchdog has reported a loss already.
    pub fn is_lost(&self) -> bool {
        self.rx.borrow().is_some()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.task.abort();
    }
}
