//! The engine's one source of randomness.
//!
//! Every random choice an engine makes (SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER,
//! RANDOMKEY, Lua's math.random) draws from the `EngineRng` the engine owns, so an engine
//! built with a seed (`ServerBuilder::seed`, the `redlab-seed` parameter) answers the same
//! command sequence with the same replies every time: the explorer relies on it to replay a
//! schedule exactly. There is deliberately no process- or thread-wide generator: two engines
//! in one thread never disturb each other's sequences.

use std::hash::{BuildHasher, Hasher};

/// A seed nobody chose: drawn from the standard library's per-process random hash keys,
/// mixed with a counter so two engines made in the same instant still differ.
pub fn fresh_seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static MADE: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(MADE.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    // 63 bits, so the seed can be given back through CONFIG SET redlab-seed.
    h.finish() >> 1
}

/// The engine's generator: SplitMix64 for the commands (small, fast, and every 64-bit state
/// is a good one, so any seed works), and a separate drand48 state for Lua's math.random,
/// which Redis 7 defines through its own lrand48 (so `math.randomseed(n)` followed by
/// `math.random()` gives Redis's numbers).
#[derive(Clone, Debug)]
pub struct EngineRng {
    state: u64,
    /// The 48-bit drand48 state behind math.random; one per engine, never reset between
    /// scripts, as in Redis 7.0 (consecutive EVALs see consecutive numbers).
    pub(crate) lua48: u64,
}

impl EngineRng {
    pub fn new(seed: u64) -> EngineRng {
        let mut r = EngineRng {
            state: seed,
            lua48: 0,
        };
        // Lua's generator starts from the engine seed too, but not from the same numbers.
        r.lua48 = r.next_u64() & LRAND48_MASK;
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (n > 0; 0 when n is 0). The widening multiply keeps the
    /// bias below n / 2^64, invisible at any collection size.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// `n` uniform indices below `len` (len > 0), repeats allowed.
    pub fn indices(&mut self, len: usize, n: usize) -> Vec<usize> {
        (0..n).map(|_| self.below(len)).collect()
    }

    /// `n` distinct indices below `len` (n <= len), in ascending order: a partial
    /// Fisher-Yates shuffle when n is a large share of len, rejection otherwise, so the cost
    /// follows n rather than len for a few picks from a big collection.
    pub fn distinct(&mut self, len: usize, n: usize) -> Vec<usize> {
        let n = n.min(len);
        let mut out = if n.saturating_mul(4) >= len {
            let mut all: Vec<usize> = (0..len).collect();
            for i in 0..n {
                let j = i + self.below(len - i);
                all.swap(i, j);
            }
            all.truncate(n);
            all
        } else {
            let mut seen = std::collections::HashSet::with_capacity(n);
            let mut picked = Vec::with_capacity(n);
            while picked.len() < n {
                let i = self.below(len);
                if seen.insert(i) {
                    picked.push(i);
                }
            }
            picked
        };
        out.sort_unstable();
        out
    }
}

const LRAND48_A: u64 = 0x5_DEEC_E66D;
const LRAND48_C: u64 = 0xB;
const LRAND48_MASK: u64 = (1 << 48) - 1;

/// The drand48 state `srand48(s)` sets: the seed in the high 32 bits, 0x330E below.
pub fn lrand48_seed(s: i32) -> u64 {
    ((s as u32 as u64) << 16 | 0x330E) & LRAND48_MASK
}

/// Steps a drand48 state and returns the 31-bit value lrand48 would.
pub fn lrand48_next(state: &mut u64) -> i32 {
    *state = state.wrapping_mul(LRAND48_A).wrapping_add(LRAND48_C) & LRAND48_MASK;
    (*state >> 17) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_different_seeds_differ() {
        let (mut a, mut b, mut c) = (EngineRng::new(7), EngineRng::new(7), EngineRng::new(8));
        let sa: Vec<u64> = (0..20).map(|_| a.next_u64()).collect();
        let sb: Vec<u64> = (0..20).map(|_| b.next_u64()).collect();
        let sc: Vec<u64> = (0..20).map(|_| c.next_u64()).collect();
        assert_eq!(sa, sb);
        assert_ne!(sa, sc);
        assert_eq!(a.lua48, EngineRng::new(7).lua48);
        assert_ne!(a.lua48, c.lua48);
    }

    #[test]
    fn fresh_seeds_differ() {
        assert_ne!(fresh_seed(), fresh_seed());
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = EngineRng::new(1);
        let mut hit = [false; 7];
        for _ in 0..1000 {
            let i = r.below(7);
            hit[i] = true;
        }
        assert!(hit.iter().all(|&h| h));
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn distinct_picks_are_distinct_sorted_and_in_range() {
        let mut r = EngineRng::new(3);
        for (len, n) in [(10, 10), (10, 3), (1000, 5), (1000, 900), (1, 1), (5, 0)] {
            let d = r.distinct(len, n);
            assert_eq!(d.len(), n);
            assert!(d.windows(2).all(|w| w[0] < w[1]), "{d:?}");
            assert!(d.iter().all(|&i| i < len));
        }
    }

    #[test]
    fn lrand48_matches_the_c_library() {
        // glibc: srand48(1); lrand48() x3
        let mut s = lrand48_seed(1);
        assert_eq!(
            [
                lrand48_next(&mut s),
                lrand48_next(&mut s),
                lrand48_next(&mut s)
            ],
            [89400484, 976015093, 1792756325]
        );
    }
}
