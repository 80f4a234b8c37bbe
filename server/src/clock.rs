//! `Clock`: the only source of "now" in the server.
//!
//! TIME, TTLs, expiry and TIME inside scripts all read this clock, so a test that moves it
//! moves all of them together. It is shared between the server thread and the test thread
//! (cheap clones of one `Arc` of atomics), never locked: a test thread can move it while the
//! server thread is inside a long script, and the script's next TIME sees the move.
//!
//! As in Redis 7.0, TIME reads this clock afresh on every call, inside a script or a
//! transaction too; what stands still for a script or a transaction is the "now" key expiry
//! is judged by (the engine's `now_ms`, taken at its start), so a key cannot expire halfway.

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

/// System time in microseconds since the epoch (negative before it).
fn system_us() -> i64 {
    read_us(libc::CLOCK_REALTIME)
}

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`, the one `Instant` reads) in whole
/// microseconds. Commands are timed with two of these (`Engine::elapsed_us`): integer
/// arithmetic, where `Instant` differences cost about three times the instructions per
/// command (`Timespec` subtraction, `Duration` to microseconds).
pub(crate) fn monotonic_us() -> u64 {
    read_us(libc::CLOCK_MONOTONIC) as u64
}

/// One `clock_gettime` of `clock` in whole microseconds (the engine reads the system time
/// before every command; `SystemTime::now` and `duration_since` cost about twice the
/// instructions).
// time_t and c_long are i64 here but i32 on 32-bit targets: the casts are for those.
#[allow(clippy::unnecessary_cast)]
fn read_us(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and both clocks read here always exist,
    // so the call cannot fail (it would leave `ts` at 0).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec as i64)
        .saturating_mul(1_000_000)
        .saturating_add(ts.tv_nsec as i64 / 1000)
}

impl Clock {
    /// A clock that follows system time.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// A frozen clock at `unix_ms`: it moves only when the test moves it.
    ///
    /// TIME, inside a script as outside, answers this clock's value, so a script that waits
    /// in a loop for TIME to move on waits until the test advances the clock: from another
    /// thread through a clone of this `Clock` (the server thread is busy running the script),
    /// or with `REDLAB.CLOCK ADVANCE` on another connection where the server admits it while
    /// a script runs.
    pub fn manual(unix_ms: i64) -> Clock {
        Clock::manual_us(unix_ms.saturating_mul(1000))
    }

    /// A frozen clock at `unix_us` microseconds: TIME's microsecond part is exactly the one
    /// given here.
    pub fn manual_us(unix_us: i64) -> Clock {
        let c = Clock::default();
        // Frozen first, then set: setting a running clock and freezing it after would let a
        // microsecond or two slip in between.
        c.state.frozen.store(true, Ordering::Release);
        c.set_unix_us(unix_us);
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
            self.state
                .offset_us
                .store(at - system_us(), Ordering::Release);
            self.state.frozen.store(false, Ordering::Release);
        }
    }

    /// Jumps to `unix_ms`; a frozen clock stays frozen there, a running one runs on from it.
    pub fn set_unix_ms(&self, unix_ms: i64) {
        self.set_unix_us(unix_ms.saturating_mul(1000));
    }

    /// Jumps to `unix_us` microseconds since the epoch, like `set_unix_ms`.
    pub fn set_unix_us(&self, target: i64) {
        if self.is_frozen() {
            self.state.frozen_at_us.store(target, Ordering::Release);
        } else {
            self.state
                .offset_us
                .store(target - system_us(), Ordering::Release);
        }
    }

    /// Jumps to a `SystemTime`, to the microsecond.
    pub fn set(&self, t: SystemTime) {
        let us = t
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros().min(i64::MAX as u128) as i64)
            .unwrap_or(0);
        self.set_unix_us(us);
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

    #[test]
    fn a_manual_clock_keeps_microseconds() {
        let c = Clock::manual_us(1_700_000_000_123_456);
        assert_eq!(c.now_us(), 1_700_000_000_123_456);
        c.advance(Duration::from_micros(7));
        assert_eq!(c.now_us(), 1_700_000_000_123_463);
        c.set(UNIX_EPOCH + Duration::from_micros(42_000_017));
        assert_eq!(
            c.now_us(),
            42_000_017,
            "SystemTime is taken to the microsecond"
        );
        c.set_unix_us(-5);
        assert_eq!(
            c.now_ms(),
            -1,
            "before the epoch rounds down, as the clock's ms always has"
        );
    }

    #[test]
    fn another_thread_moves_the_clock_this_thread_reads() {
        let c = Clock::manual(1_000);
        let mover = c.clone();
        std::thread::spawn(move || mover.advance(Duration::from_micros(2_500)))
            .join()
            .unwrap();
        assert_eq!(c.now_us(), 1_002_500);
    }
}
