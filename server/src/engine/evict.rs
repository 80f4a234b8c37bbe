//! maxmemory eviction: before a command runs, while used memory is over `maxmemory`, keys
//! the `maxmemory-policy` picks are deleted (Redis's performEvictions).
//!
//! used_memory is `Engine::used_memory`: a fixed baseline (900 KiB, about what an empty
//! Redis reports) plus, for every key, its name, 48 bytes of bookkeeping and the value's
//! approximate size (`Value::approx_size`: the bytes of its elements plus a per-element
//! overhead). It tracks Redis's figure in shape (it grows and shrinks with the data) but not
//! to the byte, so a test's maxmemory evicts at about the same point, not at the same key.
//! It counts every stored key, as Redis's does (those past their deadline that expiry has
//! not removed yet too), and is a running total: each database adds and subtracts entries as
//! they are stored and removed, and measures again, after each command, the values handed
//! out for a change in place (`Db::settle_memory`), so reading it costs no walk over the keys.
//!
//! Candidates are sampled as Redis does: `maxmemory-samples` random keys per database (only
//! keys with a deadline for the volatile-* policies), the best of them evicted, and again
//! until memory is under the limit. Best means: the longest idle (lru), the lowest access
//! counter (lfu: redlab counts no accesses, so the counter is the initial one decayed by the
//! idle minutes, see OBJECT FREQ), the nearest deadline (volatile-ttl), any (random). Each
//! eviction counts in INFO evicted_keys, sends the `evicted` keyspace event, breaks WATCHes
//! and invalidates tracking clients, before the command that caused it replies.

use super::Engine;
use crate::notify;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Policy {
    NoEviction,
    Lru,
    Lfu,
    Random,
    Ttl,
}

/// The policy and whether it only considers keys with a deadline.
fn policy_of(name: &str) -> (Policy, bool) {
    match name {
        "allkeys-lru" => (Policy::Lru, false),
        "allkeys-lfu" => (Policy::Lfu, false),
        "allkeys-random" => (Policy::Random, false),
        "volatile-lru" => (Policy::Lru, true),
        "volatile-lfu" => (Policy::Lfu, true),
        "volatile-random" => (Policy::Random, true),
        "volatile-ttl" => (Policy::Ttl, true),
        _ => (Policy::NoEviction, false),
    }
}

/// The LFU counter of a new object (Redis's LFU_INIT_VAL).
const LFU_INIT_VAL: i64 = 5;

/// A key that may be evicted: its database, name, and what the policy ranks it by.
struct Candidate {
    db: usize,
    key: Vec<u8>,
    last_access: i64,
    expire_at: Option<i64>,
}

impl Engine {
    /// Evicts until used memory is within maxmemory. Returns false when it is still over
    /// (noeviction, or nothing left the policy may evict): then commands that may grow
    /// memory are refused with -OOM. Nothing is evicted during CLIENT PAUSE, as in Redis.
    pub(crate) fn perform_evictions(&mut self) -> bool {
        let max = self.config.maxmemory;
        if max == 0 || self.expiry_hold {
            return true;
        }
        let used = self.used_memory();
        if used <= max {
            return true;
        }
        let (policy, volatile) = policy_of(&self.config.maxmemory_policy);
        if policy == Policy::NoEviction {
            return false;
        }
        let samples = self
            .config
            .extra
            .get("maxmemory-samples")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(5)
            .max(1);
        let mut pools: Vec<Vec<Candidate>> = (0..self.dbs.len())
            .map(|db| {
                self.dbs[db]
                    .iter()
                    .filter(|(_, e)| !volatile || e.expire_at().is_some())
                    .map(|(k, e)| Candidate {
                        db,
                        key: k.to_vec(),
                        last_access: e.last_access,
                        expire_at: e.expire_at(),
                    })
                    .collect()
            })
            .collect();
        let mut to_free = used - max;
        let now = self.now_ms;
        let mut next_db = 0;
        while to_free > 0 {
            let pick = match policy {
                Policy::Random => self.pick_random(&pools, &mut next_db),
                _ => self.pick_best(&pools, policy, samples, now),
            };
            let Some((db, i)) = pick else {
                return false;
            };
            let c = pools[db].swap_remove(i);
            let size = self.dbs[c.db]
                .get_shared(&c.key)
                .map_or(0, |e| c.key.len() + 48 + e.value.approx_size())
                as u64;
            self.db(c.db).remove(&c.key);
            self.stats.evicted_keys += 1;
            // Redis's signalModifiedKey with no client: WATCH and tracking, then the event.
            let modifier = self.tracking.modifier.take();
            self.touch_watched(c.db, &c.key);
            self.tracking.modifier = modifier;
            notify::keyspace_event(self, notify::EVICTED, "evicted", c.db, &c.key);
            to_free = to_free.saturating_sub(size.max(1));
        }
        true
    }

    /// Random policies: a random key of the next database that has one (round robin).
    fn pick_random(
        &mut self,
        pools: &[Vec<Candidate>],
        next_db: &mut usize,
    ) -> Option<(usize, usize)> {
        for _ in 0..pools.len() {
            let db = *next_db % pools.len();
            *next_db = db + 1;
            if !pools[db].is_empty() {
                return Some((db, self.rng.below(pools[db].len())));
            }
        }
        None
    }

    /// Sampling policies: `samples` random keys of each database, the best one overall.
    fn pick_best(
        &mut self,
        pools: &[Vec<Candidate>],
        policy: Policy,
        samples: usize,
        now: i64,
    ) -> Option<(usize, usize)> {
        let mut best: Option<(i64, usize, usize)> = None;
        for (db, pool) in pools.iter().enumerate() {
            if pool.is_empty() {
                continue;
            }
            // Distinct keys, as Redis's dictGetSomeKeys gives.
            for i in self.rng.distinct(pool.len(), samples.min(pool.len())) {
                let c = &pool[i];
                let idle = (now - c.last_access).max(0);
                // Higher is a better candidate.
                let score = match policy {
                    Policy::Lru => idle,
                    Policy::Lfu => 255 - (LFU_INIT_VAL - idle / 60_000).max(0),
                    Policy::Ttl => i64::MAX - c.expire_at.unwrap_or(i64::MAX),
                    Policy::Random | Policy::NoEviction => 0,
                };
                if best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, db, i));
                }
            }
        }
        best.map(|(_, db, i)| (db, i))
    }
}
