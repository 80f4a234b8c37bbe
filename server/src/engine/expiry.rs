//! Time-driven work around each command: reading the clock, active expiry in the databases
//! that may hold due keys, and the `expired` notifications.

use super::Engine;
use crate::db::Db;
use crate::notify;

impl Engine {
    /// Advances time-driven work: active expiry and blocked-command timeouts. The shell calls
    /// it periodically; in-process users may call it after moving the clock.
    pub fn tick(&mut self) {
        self.begin(if self.cron_paused {
            0
        } else {
            EXPIRE_SLICE_PER_TICK
        });
        // XREADGROUP ... CLAIM readers whose pending entries became idle enough are served
        // before the timeouts are answered.
        if crate::cmd::stream::wake_idle_claims(self) {
            self.serve_ready_keys();
            self.drain_expired();
        }
        self.expire_blocked();
        // Clients over maxmemory-clients first, as Redis's beforeSleep does, so the eviction
        // timer below never takes keys for memory the clients' eviction frees.
        if self.config.maxmemory_clients != "0" {
            self.evict_clients(None);
        }
        self.enforce_soft_limits_idle();
        if !self.cron_paused {
            self.resize_query_buffers();
        }
        // Redis's eviction timer: memory over a lowered maxmemory is freed while idle too.
        if self.config.maxmemory > 0 && !self.cron_paused {
            self.perform_evictions();
        }
        self.end_command();
        crate::cluster::bus::reconcile::tick(self);
        crate::repl::failover::update(self);
        self.serve_postponed();
        if !self.cron_paused {
            self.tracking_limit();
        }
        if !self.tracking.defer_broadcast {
            self.tracking_broadcast();
        }
        if self.repl.feeding() {
            self.repl_flush();
        }
    }

    /// Reads the clock and expires what is due, in the databases that may hold keys with a
    /// deadline or keys lazy expiry removed since the last command. This runs before every
    /// command, so it looks only at the databases `maybe_expiring` names, not all sixteen.
    pub(super) fn begin_command(&mut self) {
        self.begin(EXPIRE_SLICE_PER_COMMAND);
    }

    /// `begin_command` with a budget of keys the active expiry may remove per database.
    pub(super) fn begin(&mut self, budget: usize) {
        if !self.time_frozen {
            self.now_ms = self.clock.now_ms();
        }
        let now = self.now_ms;
        self.expiry_hold = self.expiry_paused();
        // The active expiry's own duration, for the latency monitor's "expire-cycle".
        let mut cycle: Option<std::time::Instant> = None;
        let monitored = self.latency.enabled(&self.config);
        self.latency_on = monitored;
        for idx in self.maybe_expiring_dbs() {
            let db = &mut self.dbs[idx];
            db.now = now;
            db.time_expiry = monitored;
            db.count_due = !self.active_expire || self.expiry_hold;
            db.hold_expired = self.expiry_hold;
            if self.active_expire
                && !self.expiry_hold
                && db
                    .next_deadline()
                    .is_some_and(|t| crate::db::is_expired(t, now))
            {
                if cycle.is_none() && monitored {
                    cycle = Some(std::time::Instant::now());
                }
                db.purge_expired(budget);
            }
            if !db.expired_log.is_empty() {
                self.drain_db(idx);
            }
            if self.dbs[idx].next_deadline().is_none() && idx < 64 {
                self.maybe_expiring &= !(1 << idx);
            }
        }
        // Hash fields past their deadline (`db::hash_ttl`).
        if self.active_expire && !self.hash_ttl.is_empty() {
            self.expire_due_fields();
        }
        if let Some(started) = cycle {
            let ms = started.elapsed().as_millis() as u64;
            self.latency
                .record(&self.config, "expire-cycle", ms, now.div_euclid(1000));
        }
    }

    pub(super) fn end_command(&mut self) {
        self.drain_new_keys();
        self.drain_expired();
        crate::cmd::stream::unblock_lost_groups(self);
        if !self.ready_keys.is_empty() {
            self.serve_ready_keys();
            // Keys found expired while serving (see `serve_ready_keys`) are announced now.
            self.drain_expired();
        }
        self.settle_memory();
    }

    /// The database `idx`, with "now" set for lazy expiry.
    pub(crate) fn db(&mut self, idx: usize) -> &mut Db {
        if idx < 64 {
            self.maybe_expiring |= 1 << idx;
        }
        let now = self.now_ms;
        let hold = self.expiry_hold;
        let log_new = self.notify_flags & notify::NEW != 0;
        let lfu = self.config.lfu();
        let timed = self.latency_on;
        let db = &mut self.dbs[idx];
        db.now = now;
        db.time_expiry = timed;
        db.hold_expired = hold;
        db.log_new = log_new;
        db.touch.lfu = lfu;
        db.touch.epoch = self.call_epoch;
        db
    }

    /// Sends the `new` events for keys added to a database (class `n`), for keys no
    /// `modified` call announced first: a handler announces its key's own event after the key
    /// exists, and the `new` event goes out just before it, as Redis sends it from dbAdd.
    pub(crate) fn drain_new_keys(&mut self) {
        if self.notify_flags & notify::NEW == 0 {
            return;
        }
        for idx in 0..self.dbs.len() {
            if self.dbs[idx].new_log.is_empty() {
                continue;
            }
            for key in std::mem::take(&mut self.dbs[idx].new_log) {
                notify::keyspace_event(self, notify::NEW, "new", idx, &key);
            }
        }
    }

    /// The `new` event for `key` if it was added to database `idx` since the last drain;
    /// `modified` calls it before the key's own event.
    pub(super) fn announce_if_new(&mut self, idx: usize, key: &[u8]) {
        let Some(db) = self.dbs.get_mut(idx) else {
            return;
        };
        if db.new_log.is_empty() {
            return;
        }
        let Some(pos) = db.new_log.iter().position(|k| k.as_slice() == key) else {
            return;
        };
        db.new_log.remove(pos);
        notify::keyspace_event(self, notify::NEW, "new", idx, key);
    }

    /// After databases changed places or contents wholesale (SWAPDB, a rollback): look at
    /// every one again.
    pub(crate) fn recheck_all_dbs(&mut self) {
        self.maybe_expiring = all_dbs_mask(self.dbs.len());
    }

    /// The databases `maybe_expiring` names, and every one past the 64 it can name.
    pub(crate) fn maybe_expiring_dbs(&self) -> impl Iterator<Item = usize> + use<> {
        let mut bits = self.maybe_expiring;
        let n = self.dbs.len();
        std::iter::from_fn(move || {
            let i = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            (i < 64).then_some(i)
        })
        .chain(64.min(n)..n)
    }

    /// Sends `expired` notifications for keys expiry removed, and breaks the WATCHes on them
    /// (Redis 7.0: a watched key that expires makes EXEC fail, unless it had already expired
    /// when it was watched).
    pub(super) fn drain_expired(&mut self) {
        for idx in self.maybe_expiring_dbs() {
            if !self.dbs[idx].expired_log.is_empty() {
                self.drain_db(idx);
            }
        }
    }

    pub(super) fn drain_db(&mut self, idx: usize) {
        self.repl_before_expired_drain(idx);
        let keys = std::mem::take(&mut self.dbs[idx].expired_log);
        // Redis's `expire-del`: the slowest single deletion by expiry (the monitor keeps the
        // highest of each second anyway).
        let slowest = std::mem::take(&mut self.dbs[idx].slowest_expiry_ms);
        if self.latency_on && !keys.is_empty() {
            let now_s = self.now_ms.div_euclid(1000);
            self.latency
                .record(&self.config, "expire-del", slowest, now_s);
        }
        for key in keys {
            self.stats.expired_keys += 1;
            self.touch_watched_expired(idx, &key);
            self.tracking_invalidate(&key, true);
            notify::keyspace_event(self, notify::EXPIRED, "expired", idx, &key);
        }
    }
}

/// How many due keys the active expiry removes per database before each command: about
/// 2 ms of work (a key and its `expired` notification cost under 2 µs), so a mass expiry
/// never stalls another client for long; before, a million keys expiring at once held the
/// next command for 1.75 s. A fixed count rather than a time budget keeps runs repeatable.
/// Lookups expire a due key themselves, so nothing depends on how far the purge has got.
pub(super) const EXPIRE_SLICE_PER_COMMAND: usize = 1_000;
/// The same on every tick (each 10 ms in the shell), so an idle server still drains a mass
/// expiry steadily: a million keys in a few seconds, under 10 ms at a time.
pub(super) const EXPIRE_SLICE_PER_TICK: usize = 5_000;

/// `maybe_expiring` with a bit for each of the first `n` databases (at most 64).
pub(super) fn all_dbs_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}
