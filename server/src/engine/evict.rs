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
//! The clients' buffers are added on top (`client_memory.rs`: query buffers, queued
//! transactions, output not yet sent); eviction compares maxmemory with that total less the
//! replicas' output, as Redis does.
//!
//! Candidates are picked as Redis picks them. The random policies take a random key of the
//! next database in turn. The others keep Redis's eviction pool: each round samples
//! `maxmemory-samples` keys of every database (only keys with a deadline for the volatile-*
//! policies), ranks them, and keeps the 16 best candidates seen so far across rounds and
//! commands; the best one still stored is evicted. Best means: the longest idle by the LRU
//! clock (lru), the lowest access counter after decay (lfu, see `db::access`), the nearest
//! deadline (volatile-ttl). Each eviction counts in INFO evicted_keys, sends the `evicted`
//! keyspace event, breaks WATCHes and invalidates tracking clients, before the command that
//! caused it replies. The latency monitor records each deletion (`eviction-del`) and the
//! whole run (`eviction-cycle`).

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

/// How many candidates the eviction pool keeps (Redis's EVPOOL_SIZE).
const POOL_SIZE: usize = 16;

/// A candidate kept in the pool: higher `score` is evicted first.
#[derive(Clone, Debug)]
struct PoolEntry {
    score: u64,
    db: usize,
    key: Vec<u8>,
}

/// Redis's EvictionPoolLRU: the best candidates seen, in ascending order of score. It lives
/// as long as the engine, as Redis's does, so candidates found by one command's eviction
/// stay in the running for the next.
#[derive(Clone, Debug, Default)]
pub(crate) struct EvictionPool {
    entries: Vec<PoolEntry>,
}

impl EvictionPool {
    /// Offers a candidate (evictionPoolPopulate's insertion): when the pool is full, a
    /// candidate worse than all of them is dropped, otherwise the worst one makes room.
    fn offer(&mut self, score: u64, db: usize, key: &[u8]) {
        let k = self.entries.partition_point(|p| p.score < score);
        if self.entries.len() < POOL_SIZE {
            self.entries.insert(
                k,
                PoolEntry {
                    score,
                    db,
                    key: key.to_vec(),
                },
            );
        } else if k > 0 {
            self.entries.remove(0);
            self.entries.insert(
                k - 1,
                PoolEntry {
                    score,
                    db,
                    key: key.to_vec(),
                },
            );
        }
    }
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
        let used = self.memory_for_eviction();
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
        let monitored = self.latency.enabled(&self.config);
        let cycle = monitored.then(std::time::Instant::now);
        let mut to_free = used - max;
        let now = self.now_ms;
        let mut freed_all = true;
        while to_free > 0 {
            let pick = match policy {
                Policy::Random => self.pick_random(volatile),
                _ => self.pick_best(policy, volatile, samples, now),
            };
            let Some((db, key)) = pick else {
                freed_all = false;
                break;
            };
            let size = self.dbs[db]
                .stored_entry(&key)
                .map_or(0, |e| crate::db::keyspace::entry_size(&key, e))
                as u64;
            let started = monitored.then(std::time::Instant::now);
            self.db(db).remove(&key);
            if let Some(t) = started {
                self.latency.record(
                    &self.config,
                    "eviction-del",
                    t.elapsed().as_millis() as u64,
                    now.div_euclid(1000),
                );
            }
            self.stats.evicted_keys += 1;
            self.repl_evicted(db, &key);
            // Redis's signalModifiedKey with no client: WATCH and tracking, then the event.
            let modifier = self.tracking.modifier.take();
            self.touch_watched(db, &key);
            self.tracking.modifier = modifier;
            notify::keyspace_event(self, notify::EVICTED, "evicted", db, &key);
            to_free = to_free.saturating_sub(size.max(1));
        }
        if let Some(t) = cycle {
            self.latency.record(
                &self.config,
                "eviction-cycle",
                t.elapsed().as_millis() as u64,
                now.div_euclid(1000),
            );
        }
        freed_all
    }

    /// Random policies: a random key of the next database that has one, in turn.
    fn pick_random(&mut self, volatile: bool) -> Option<(usize, Vec<u8>)> {
        let n = self.dbs.len();
        for _ in 0..n {
            let db = self.evict_next_db % n;
            self.evict_next_db = db + 1;
            let picked = self.dbs[db].sample(&mut self.rng, 1, volatile);
            if let Some((k, _)) = picked.first() {
                return Some((db, k.to_vec()));
            }
        }
        None
    }

    /// Pool policies: sample every database into the pool, then take the best candidate
    /// still stored; again while the pool held only keys gone since.
    fn pick_best(
        &mut self,
        policy: Policy,
        volatile: bool,
        samples: usize,
        now: i64,
    ) -> Option<(usize, Vec<u8>)> {
        let lfu = self.config.lfu();
        loop {
            let mut total = 0;
            for db in 0..self.dbs.len() {
                let d = &self.dbs[db];
                let size = d.stored_len_of(volatile);
                if size == 0 {
                    continue;
                }
                total += size;
                for (key, e) in d.sample(&mut self.rng, samples, volatile) {
                    let score = match (policy, lfu) {
                        (Policy::Lfu, Some(p)) => 255 - u64::from(e.access.decayed(p, now)),
                        (Policy::Ttl, _) => {
                            u64::MAX - e.expire_at().map_or(u64::MAX, |t| t.max(0) as u64)
                        }
                        _ => e.access.idle_ms(now),
                    };
                    self.evict_pool.offer(score, db, key);
                }
            }
            if total == 0 {
                return None;
            }
            while let Some(best) = self.evict_pool.entries.pop() {
                if self
                    .dbs
                    .get(best.db)
                    .is_some_and(|d| d.holds(&best.key, volatile))
                {
                    return Some((best.db, best.key));
                }
            }
        }
    }
}
