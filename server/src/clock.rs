//! `Clock`: the only source of "now" in the server.
//!
//! TIME, TTLs, expiry and TIME inside scripts all read this clock, so a test that moves it
//! moves all of them together. It is shared between the server thread and the test thread
//! (cheap clones of one `Arc` of atomics), never locked.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, Default)]
struct State {
    /// When frozen, the fixed time in microseconds since the epoch.
    frozen_at_us: AtomicI64,
    frozen: AtomicBool,
    /// Added to the system time while running.
    offset_us: AtomicI64,
}

/// A clock that follows system time by default and can be frozen, set and advanced.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    state: Arc<State>,
}

fn system_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

impl Clock {
    /// A clock that follows system time.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// A frozen clock at `unix_ms`.
    pub fn manual(unix_ms: i64) -> Clock {
        let c = Clock::default();
        // Frozen first, then set: setting a running clock and freezing it after would let a
        // microsecond or two slip in between.
        c.state.frozen.store(true, Ordering::Release);
        c.set_unix_ms(unix_ms);
        c
    }

    /// Microseconds since the Unix epoch.
    pub fn now_us(&self) -> i64 {
        if self.state.frozen.load(Ordering::Acquire) {
            self.state.frozen_at_us.load(Ordering::Acquire)
        } else {
            system_us() + self.state.offset_us.load(Ordering::Acquire)
        }
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.now_us().div_euclid(1000)
    }

    pub fn is_frozen(&self) -> bool {
        self.state.frozen.load(Ordering::Acquire)
    }

    /// Stops time at its current value.
    pub fn freeze(&self) {
        let now = self.now_us();
        self.state.frozen_at_us.store(now, Ordering::Release);
        self.state.frozen.store(true, Ordering::Release);
    }

    /// Lets time run again from where it stands.
    pub fn resume(&self) {
        if self.is_frozen() {
            let at = self.state.frozen_at_us.load(Ordering::Acquire);
            self.state.offset_us.store(at - system_us(), Ordering::Release);
            self.state.frozen.store(false, Ordering::Release);
        }
    }

    /// Jumps to `unix_ms`; a frozen clock stays frozen there, a running one runs on from it.
    pub fn set_unix_ms(&self, unix_ms: i64) {
        let target = unix_ms.saturating_mul(1000);
        if self.is_frozen() {
            self.state.frozen_at_us.store(target, Ordering::Release);
        } else {
            self.state.offset_us.store(target - system_us(), Ordering::Release);
        }
    }

    /// Jumps to a `SystemTime`.
    pub fn set(&self, t: SystemTime) {
        let ms = t.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
        self.set_unix_ms(ms);
    }

    /// Moves time forward.
    pub fn advance(&self, d: Duration) {
        let us = d.as_micros().min(i64::MAX as u128) as i64;
        if self.is_frozen() {
            self.state.frozen_at_us.fetch_add(us, Ordering::AcqRel);
        } else {
            self.state.offset_us.fetch_add(us, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frozen_clock_moves_only_when_told() {
        let c = Clock::manual(1_000_000);
        assert_eq!(c.now_us(), 1_000_000_000, "exactly the time it was set to");
        c.advance(Duration::from_millis(1500));
        assert_eq!(c.now_ms(), 1_001_500);
        c.resume();
        assert!(c.now_ms() >= 1_001_500);
    }
}
