//! A key's access record: Redis's 24-bit `lru` field, read one of two ways by the policy.
//!
//! Under an LRU policy (and under any policy that is not LFU) the field holds the LRU clock
//! of the last access: seconds of Unix time, modulo 2^24. Under allkeys-lfu and volatile-lfu
//! it holds two things instead: the high 16 bits are the minute of the last decrement (Unix
//! minutes modulo 2^16) and the low 8 bits a logarithmic access counter. A new key starts at
//! 5 (`LFU_INIT_VAL`), so it is not evicted before it had a chance to be read. Each access
//! first takes off one per `lfu-decay-time` minutes elapsed since the stored minute, then
//! adds one with probability 1 / ((counter - 5) * lfu-log-factor + 1).
//!
//! Like Redis, redlab does not convert the field when the policy changes at run time: a key
//! written under LRU reads as a (meaningless) counter under LFU until it is accessed again.
//! That is Redis's documented behaviour ("LRU and LFU data will take some time to adjust").
//!
//! Why four bytes and not a Unix timestamp: the field sits in every key's entry, and issue
//! 17 holds redlab's memory per key to Redis's, which pays 24 bits for this.

/// The counter of a new key (Redis's LFU_INIT_VAL).
pub const LFU_INIT_VAL: u8 = 5;

/// The LRU clock's range: 24 bits of seconds.
const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;

/// The LFU parameters in force while a command runs: set when an LFU policy is selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lfu {
    /// `lfu-log-factor`.
    pub log_factor: u32,
    /// `lfu-decay-time`, in minutes; 0 never decays.
    pub decay_time: u32,
}

/// How a database touches the keys it looks up, set by the engine before each access: the
/// policy's reading of the field, and the generator of the counter's random draws.
#[derive(Clone, Copy, Debug, Default)]
pub struct Touch {
    /// Some under an LFU policy.
    pub lfu: Option<Lfu>,
    /// SplitMix64 state of the LFU draws. Seeded from the engine's seed (`Engine::seed_dbs`)
    /// so that a replayed schedule draws the same numbers and counts the same.
    pub rng: u64,
    /// The command call now running (`Engine::call_epoch`). Redis's handlers look a key up
    /// once per call, and each lookup is an access; redlab's handlers sometimes look the
    /// same key up twice (to create it, then change it), so under LFU a key counts once per
    /// call (`Db::first_access`), as in Redis.
    pub epoch: u64,
}

impl Touch {
    /// A uniform number in [0, 1), as Redis's `rand()/RAND_MAX`.
    fn draw(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Seeds each database's LFU draws from the engine's seed (distinct per database, and
/// without drawing from the engine's own generator, whose sequence stays as it was).
pub fn seed_dbs(dbs: &mut [super::Db], seed: u64) {
    for (i, db) in dbs.iter_mut().enumerate() {
        db.touch.rng = seed ^ (i as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
    }
}

/// What a payload says of a key's last access: RESTORE's IDLETIME or FREQ, or an RDB
/// file's IDLE or FREQ opcode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hint {
    #[default]
    None,
    /// Idle seconds.
    Idle(i64),
    /// The LFU counter.
    Freq(u8),
}

/// The 24-bit field itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access(u32);

/// Redis's LRU clock at `now_ms`: Unix seconds modulo 2^24.
pub fn lru_clock(now_ms: i64) -> u32 {
    (now_ms.div_euclid(1000) as u64 & u64::from(LRU_CLOCK_MAX)) as u32
}

/// The LFU clock at `now_ms`: Unix minutes modulo 2^16.
fn lfu_minutes(now_ms: i64) -> u32 {
    (now_ms.div_euclid(60_000) as u64 & 0xFFFF) as u32
}

impl Access {
    /// The field of a key created now (Redis's createObject).
    pub fn fresh(lfu: Option<Lfu>, now_ms: i64) -> Access {
        match lfu {
            Some(_) => Access((lfu_minutes(now_ms) << 8) | u32::from(LFU_INIT_VAL)),
            None => Access(lru_clock(now_ms)),
        }
    }

    /// The field of a key loaded now with `hint` (Redis's objectSetLRUOrLFU): a counter is
    /// taken under an LFU policy and an idle time under any other; what does not apply
    /// leaves the field of a new key.
    pub fn loaded(lfu: Option<Lfu>, hint: Hint, now_ms: i64) -> Access {
        match (lfu, hint) {
            (Some(_), Hint::Freq(c)) => Access::with_counter(c, now_ms),
            (None, Hint::Idle(secs)) => Access::with_idle(secs, now_ms),
            _ => Access::fresh(lfu, now_ms),
        }
    }

    /// What an RDB file records of this field under the policy (rdbSaveKeyValuePair): the
    /// idle seconds under allkeys-lru and volatile-lru, the decayed counter under LFU.
    pub fn saved(self, policy: &str, lfu: Option<Lfu>, now_ms: i64) -> Hint {
        match lfu {
            Some(p) => Hint::Freq(self.decayed(p, now_ms)),
            None if policy.ends_with("-lru") => Hint::Idle((self.idle_ms(now_ms) / 1000) as i64),
            None => Hint::None,
        }
    }

    /// The raw 24 bits (DEBUG OBJECT's `lru:`).
    pub fn raw(self) -> u32 {
        self.0
    }

    /// Records an access (Redis's lookupKey without NOTOUCH): the LRU clock, or the counter
    /// decayed and then perhaps incremented.
    pub fn touch(&mut self, t: &mut Touch, now_ms: i64) {
        match t.lfu {
            None => self.0 = lru_clock(now_ms),
            Some(p) => {
                let mut counter = self.decayed(p, now_ms);
                if counter < 255 {
                    let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
                    let chance = 1.0 / (base * f64::from(p.log_factor) + 1.0);
                    if t.draw() < chance {
                        counter += 1;
                    }
                }
                *self = Access::with_counter(counter, now_ms);
            }
        }
    }

    /// The field holding `counter` as of now (RESTORE FREQ, and a load under LFU).
    pub fn with_counter(counter: u8, now_ms: i64) -> Access {
        Access((lfu_minutes(now_ms) << 8) | u32::from(counter))
    }

    /// The field of a key idle for `idle_secs` (RESTORE IDLETIME, and a load under LRU): the
    /// clock that far back, in Redis's arithmetic (objectSetLRUOrLFU), so an idle time beyond
    /// the clock's range wraps as it does in Redis.
    pub fn with_idle(idle_secs: i64, now_ms: i64) -> Access {
        let clock = i64::from(lru_clock(now_ms));
        let mut abs = clock.wrapping_sub(idle_secs);
        if abs < 0 {
            abs = abs.wrapping_add(i64::from(LRU_CLOCK_MAX));
        }
        // Stored in a 24-bit field: what is still negative keeps its low bits.
        Access((abs & i64::from(LRU_CLOCK_MAX)) as u32)
    }

    /// The counter with the decay since its stored minute taken off (LFUDecrAndReturn):
    /// what OBJECT FREQ reports and what LFU eviction ranks by.
    pub fn decayed(self, p: Lfu, now_ms: i64) -> u8 {
        let stored = lfu_minutes_of(self.0);
        let counter = (self.0 & 0xFF) as u8;
        if p.decay_time == 0 {
            return counter;
        }
        let now = lfu_minutes(now_ms);
        let elapsed = if now >= stored {
            now - stored
        } else {
            0xFFFF - stored + now
        };
        let periods = elapsed / p.decay_time;
        counter.saturating_sub(u8::try_from(periods).unwrap_or(u8::MAX))
    }

    /// Milliseconds since the last access by the LRU clock (estimateObjectIdleTime), with
    /// the clock's wrap-around.
    pub fn idle_ms(self, now_ms: i64) -> u64 {
        let clock = lru_clock(now_ms);
        let lru = self.0 & LRU_CLOCK_MAX;
        let secs = if clock >= lru {
            clock - lru
        } else {
            clock + (LRU_CLOCK_MAX - lru)
        };
        u64::from(secs) * 1000
    }
}

fn lfu_minutes_of(raw: u32) -> u32 {
    (raw >> 8) & 0xFFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    const P0: Lfu = Lfu {
        log_factor: 0,
        decay_time: 0,
    };

    #[test]
    fn log_factor_zero_counts_every_access_up_to_255() {
        let mut t = Touch {
            lfu: Some(P0),
            rng: 1,
            epoch: 0,
        };
        let mut a = Access::fresh(Some(P0), 0);
        assert_eq!(a.decayed(P0, 0), 5);
        for _ in 0..300 {
            a.touch(&mut t, 0);
        }
        assert_eq!(a.decayed(P0, 0), 255);
    }

    #[test]
    fn the_counter_grows_logarithmically_and_decays_per_period() {
        let p = Lfu {
            log_factor: 10,
            decay_time: 1,
        };
        let mut t = Touch {
            lfu: Some(p),
            rng: 42,
            epoch: 0,
        };
        let mut a = Access::fresh(Some(p), 0);
        // The first access past the initial value always counts.
        a.touch(&mut t, 0);
        assert_eq!(a.decayed(p, 0), 6);
        for _ in 0..1000 {
            a.touch(&mut t, 0);
        }
        let c = a.decayed(p, 0);
        // With factor 10, a thousand hits land in the low twenties (Redis's table: 18 at
        // 100 hits, 142 at 1M); the exact figure depends on the draws.
        assert!((10..60).contains(&c), "counter {c}");
        // Three idle minutes take three off; the stored minute does not move on a read.
        assert_eq!(a.decayed(p, 3 * 60_000), c - 3);
        assert_eq!(a.decayed(Lfu { decay_time: 0, ..p }, 3 * 60_000), c);
    }

    #[test]
    fn idle_time_wraps_with_the_24_bit_clock() {
        let a = Access::fresh(None, 10_000);
        assert_eq!(a.idle_ms(15_500), 5000);
        let old = Access(LRU_CLOCK_MAX - 1);
        assert_eq!(old.idle_ms(2000), 3000);
        assert_eq!(Access::with_idle(5, 100_000).idle_ms(100_000), 5000);
        assert_eq!(Access::with_idle(101, 100_000).idle_ms(100_000), 101_000);
    }
}
