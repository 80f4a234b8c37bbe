//! The keyspace: one `Db` per logical database, holding values and their expiry.
//!
//! Expiry is lazy on every lookup, as in Redis, and also active: the engine calls
//! `purge_expired` before each command and on every tick, which removes due keys in deadline
//! order, a bounded slice at a time, so a million keys expiring at once do not stall every
//! client for the whole purge (Redis bounds its active expire cycle the same way). Keys past
//! their deadline that the active cycle has not reached yet are nevertheless invisible:
//! lookups expire them lazily, and the whole-keyspace views (`len`, `iter`, `expires_len`)
//! leave them out, so DBSIZE, SCAN and KEYS are exact at once. Keys that expire are logged
//! so the engine can send `expired` notifications, once per key.

pub mod access;
pub mod digest;
pub mod encoding;
pub mod hash;
pub mod hash_ttl;
pub mod key;
pub mod keyspace;
pub mod packed;
pub mod rdb;
pub mod scan;
pub mod set;
pub mod stream;
pub mod strvalue;
pub mod value;
pub mod zset;
pub mod zset_packed;
pub mod zset_value;

use std::collections::BTreeSet;

use foldhash::fast::FixedState;

pub use access::Access;
pub use key::Key;
use keyspace::Keyspace;
pub use strvalue::StrValue;
pub use value::{HashValue, ListValue, SetValue, Value, ValueType};
pub use zset_value::ZSet;

/// Whether a key with deadline `t` (Unix ms) has expired at `now`. As in Redis 7.0
/// (`keyIsExpired`: `now > when`), a key lives through its deadline's own millisecond: PTTL
/// answers 0 then, and the key is gone from the next millisecond on. (Setting a deadline that
/// is already reached, `when <= now`, deletes at once: that is EXPIRE's rule, not this one.)
#[inline]
pub fn is_expired(t: i64, now: i64) -> bool {
    now > t
}

/// `Entry::expire`'s value for a key without a deadline. A deadline this far in the past is
/// never stored: setting one deletes the key at once.
const NO_DEADLINE: i64 = i64::MIN;

#[derive(Clone, Debug)]
pub struct Entry {
    pub value: Value,
    /// Absolute deadline in Unix milliseconds, or `NO_DEADLINE` (an `Option<i64>` would take
    /// 16 bytes of every key). Only `Db` changes it, keeping its deadline index in step.
    expire: i64,
    /// The last access (LRU policies and OBJECT IDLETIME) or the access counter (LFU
    /// policies and OBJECT FREQ): Redis's 24-bit `lru` field, see `access`.
    pub access: Access,
    /// What this entry counts for in used_memory, as last measured (`keyspace::entry_size`).
    size: u32,
    /// A string value is in its non-compact encoding for good, whatever it holds now: a
    /// string changed in place (APPEND, SETRANGE, SETBIT, BITFIELD) or built by BITOP is
    /// "raw" (Redis never converts it back). See `encoding::of_entry`. (Sets keep their
    /// encoding in their representation, db/set.rs.)
    pub raw: bool,
}

#[derive(Debug, Default)]
pub struct Db {
    map: Keyspace,
    expires: BTreeSet<(i64, Vec<u8>)>,
    /// "Now" for this command, set by the engine before every access (frozen during a script).
    pub(crate) now: i64,
    /// Keys removed by expiry since the engine last drained the log.
    pub(crate) expired_log: Vec<Vec<u8>>,
    /// Set while the latency monitor is on: each deletion by expiry is timed, and the
    /// slowest since the log was last drained kept for its `expire-del` event.
    pub(crate) time_expiry: bool,
    pub(crate) slowest_expiry_ms: u64,
    /// Set while a CLIENT NO-TOUCH client runs a command: lookups leave access times alone.
    pub(crate) no_touch: bool,
    /// How a lookup records an access (the LRU clock or the LFU counter), set by the engine.
    pub(crate) touch: access::Touch,
    /// Keys already counted as accessed in the call `seen_epoch` (LFU only).
    seen: Vec<Vec<u8>>,
    seen_epoch: u64,
    /// Count keys past their deadline that are still stored, as Redis does when active
    /// expiry is off (DEBUG SET-ACTIVE-EXPIRE 0); otherwise counts leave them out.
    pub(crate) count_due: bool,
    /// CLIENT PAUSE is in effect: a key past its deadline reads as missing but stays
    /// stored (Redis deletes nothing by expiry during a pause).
    pub(crate) hold_expired: bool,
    /// Set while notifications of class `n` are wanted: keys added to the database are
    /// logged in `new_log` for the engine's `new` events (Redis sends one from dbAdd).
    pub(crate) log_new: bool,
    pub(crate) new_log: Vec<Vec<u8>>,
    /// The accounting of used_memory (`Db::memory`).
    sizes: Sizes,
}

/// Keeps the keyspace's running total of used_memory true when values change in place: a
/// value handed out by `get_mut` may be changed by the caller, so its key is measured again
/// before the total is next read. While `track` is off (no maxmemory: only INFO and MEMORY
/// read the total) the keys are not listed; the total is recounted in full when next read.
/// Keys listed in `Sizes::dirty` before the total is marked stale instead.
const MAX_DIRTY: usize = 1024;

#[derive(Clone, Debug, Default)]
struct Sizes {
    track: bool,
    /// Keys handed out by `get_mut` since the total was last brought up to date.
    dirty: Vec<Vec<u8>>,
    /// Some value may have changed in place while `track` was off.
    stale: bool,
}

/// Cloned field by field so that `clone_from` keeps the keyspace's tables: an explorer
/// resume copies a fork's databases back at every schedule.
impl Clone for Db {
    fn clone(&self) -> Db {
        // The settings first, so that a database holding nothing is cloned by them alone
        // (`same_and_bare`); `clone_from` copies the rest.
        let mut db = Db {
            now: self.now,
            time_expiry: self.time_expiry,
            slowest_expiry_ms: self.slowest_expiry_ms,
            no_touch: self.no_touch,
            touch: self.touch,
            seen_epoch: self.seen_epoch,
            count_due: self.count_due,
            hold_expired: self.hold_expired,
            log_new: self.log_new,
            sizes: Sizes {
                track: self.sizes.track,
                stale: self.sizes.stale,
                dirty: Vec::new(),
            },
            ..Db::default()
        };
        db.clone_from(self);
        db
    }

    fn clone_from(&mut self, source: &Db) {
        if self.same_and_bare(source) {
            return;
        }
        let Db {
            map,
            expires,
            now,
            expired_log,
            time_expiry,
            slowest_expiry_ms,
            no_touch,
            touch,
            seen,
            seen_epoch,
            count_due,
            hold_expired,
            log_new,
            new_log,
            sizes,
        } = source;
        self.map.clone_from(map);
        self.expires.clone_from(expires);
        self.now = *now;
        self.expired_log.clone_from(expired_log);
        self.time_expiry = *time_expiry;
        self.slowest_expiry_ms = *slowest_expiry_ms;
        self.no_touch = *no_touch;
        self.touch = *touch;
        self.seen.clone_from(seen);
        self.seen_epoch = *seen_epoch;
        self.count_due = *count_due;
        self.hold_expired = *hold_expired;
        self.log_new = *log_new;
        self.new_log.clone_from(new_log);
        self.sizes.clone_from(sizes);
    }
}

impl Entry {
    /// A new entry; its access record is set when it is stored.
    pub fn new(value: Value, expire_at: Option<i64>) -> Entry {
        Entry {
            value,
            expire: expire_at.unwrap_or(NO_DEADLINE),
            access: Access::default(),
            size: 0,
            raw: false,
        }
    }

    /// The absolute deadline in Unix milliseconds, if the key has one.
    #[inline]
    pub fn expire_at(&self) -> Option<i64> {
        (self.expire != NO_DEADLINE).then_some(self.expire)
    }

    fn set_expire_at(&mut self, t: Option<i64>) {
        self.expire = t.unwrap_or(NO_DEADLINE);
    }
}

impl Db {
    pub fn new() -> Db {
        Db::default()
    }

    /// Whether both hold no key and nothing pending, with the same settings: then
    /// `clone_from` would change nothing. The explorer forks and resumes all sixteen
    /// databases at every schedule, and nearly all of them are empty.
    pub(crate) fn same_and_bare(&self, other: &Db) -> bool {
        let bare = |d: &Db| {
            d.map.len() == 0
                && d.map.total() == 0
                && d.expires.is_empty()
                && d.expired_log.is_empty()
                && d.seen.is_empty()
                && d.new_log.is_empty()
                && d.sizes.dirty.is_empty()
        };
        // Every field named, so that a new one must be considered here.
        let Db {
            map: _,
            expires: _,
            expired_log: _,
            seen: _,
            new_log: _,
            now,
            time_expiry,
            slowest_expiry_ms,
            no_touch,
            touch,
            seen_epoch,
            count_due,
            hold_expired,
            log_new,
            sizes,
        } = self;
        bare(self)
            && bare(other)
            && *now == other.now
            && *time_expiry == other.time_expiry
            && *slowest_expiry_ms == other.slowest_expiry_ms
            && *no_touch == other.no_touch
            && touch.lfu == other.touch.lfu
            && touch.rng == other.touch.rng
            && touch.epoch == other.touch.epoch
            && *seen_epoch == other.seen_epoch
            && *count_due == other.count_due
            && *hold_expired == other.hold_expired
            && *log_new == other.log_new
            && sizes.track == other.sizes.track
            && sizes.stale == other.sizes.stale
    }

    /// Number of live keys (see `count_due` for the exception).
    pub fn len(&self) -> usize {
        self.map.len() - self.hidden_due()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of live keys with a deadline.
    pub fn expires_len(&self) -> usize {
        self.expires.len() - self.hidden_due()
    }

    /// Keys past their deadline still stored, which counts leave out. Walks only those
    /// keys, which the active cycle is removing a slice at a time.
    fn hidden_due(&self) -> usize {
        if self.count_due {
            return 0;
        }
        self.expires
            .iter()
            .take_while(|(t, _)| is_expired(*t, self.now))
            .count()
    }

    fn is_live(&self, e: &Entry) -> bool {
        self.count_due || e.expire_at().is_none_or(|t| !is_expired(t, self.now))
    }

    fn expire_if_needed(&mut self, key: &[u8]) -> bool {
        // Most databases hold no key with a deadline: then nothing can be due, and the
        // lookup below (a second hash of the key) is skipped.
        if self.expires.is_empty() {
            return false;
        }
        let expired = matches!(self.map.get(key), Some(e) if e.expire_at().is_some_and(|t| is_expired(t, self.now)));
        if expired && !self.hold_expired {
            let started = self.time_expiry.then(std::time::Instant::now);
            drop(self.take(key));
            self.timed_expiry(started);
            self.expired_log.push(key.to_vec());
        }
        expired
    }

    /// Keeps the duration of one deletion by expiry when it is the slowest so far.
    fn timed_expiry(&mut self, started: Option<std::time::Instant>) {
        if let Some(t) = started {
            let ms = t.elapsed().as_millis() as u64;
            self.slowest_expiry_ms = self.slowest_expiry_ms.max(ms);
        }
    }

    /// Looks a key up, expiring it first if its deadline passed; updates its access time.
    pub fn get(&mut self, key: &[u8]) -> Option<&Entry> {
        self.lookup(key).map(|e| &*e)
    }

    /// Looks a key up for a change in place (see `get`).
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        if self.map.get(key).is_some() {
            // A long list is a full recount anyway; bounded, it cannot grow without end in a
            // database whose tracking the engine no longer settles (one restored from a
            // snapshot taken under maxmemory, say).
            if self.sizes.track && self.sizes.dirty.len() < MAX_DIRTY {
                self.sizes.dirty.push(key.to_vec());
            } else {
                self.sizes.stale = true;
            }
        }
        self.lookup(key)
    }

    fn lookup(&mut self, key: &[u8]) -> Option<&mut Entry> {
        if self.expire_if_needed(key) && self.hold_expired {
            return None;
        }
        let now = self.now;
        let touch = !self.no_touch && (self.touch.lfu.is_none() || self.first_access(key));
        let e = self.map.get_mut(key)?;
        if touch {
            e.access.touch(&mut self.touch, now);
        }
        Some(e)
    }

    /// Whether this is the current call's first access to `key` (under LFU a key counts one
    /// access per call, see `access::Touch::epoch`); notes it.
    fn first_access(&mut self, key: &[u8]) -> bool {
        if self.seen_epoch != self.touch.epoch {
            self.seen_epoch = self.touch.epoch;
            self.seen.clear();
        }
        if self.seen.iter().any(|k| k == key) {
            return false;
        }
        self.seen.push(key.to_vec());
        true
    }

    /// Counts one more access to `key` even if this call accessed it already: the second
    /// lookup Redis's SET ... GET and GETSET make (one to read, one to write).
    pub fn access_again(&mut self, key: &[u8]) {
        let now = self.now;
        if self.no_touch {
            return;
        }
        if let Some(e) = self.map.get_mut(key) {
            e.access.touch(&mut self.touch, now);
        }
    }

    /// Looks a key up without changing its access time (OBJECT IDLETIME, TYPE-free peeks).
    pub fn peek(&mut self, key: &[u8]) -> Option<&Entry> {
        if self.expire_if_needed(key) && self.hold_expired {
            return None;
        }
        self.map.get(key)
    }

    /// Looks a key up through a shared borrow, for commands that read several keys at once
    /// (SINTER, SUNION ...): an expired key counts as missing but is not removed, and the
    /// access time is left alone, so call `get` on each key first for both.
    pub fn get_shared(&self, key: &[u8]) -> Option<&Entry> {
        self.map
            .get(key)
            .filter(|e| e.expire_at().is_none_or(|t| !is_expired(t, self.now)))
    }

    /// Whether `key` is still stored but past its deadline (expiry has not removed it yet).
    pub fn is_stale(&self, key: &[u8]) -> bool {
        self.map
            .get(key)
            .is_some_and(|e| e.expire_at().is_some_and(|t| is_expired(t, self.now)))
    }

    /// Marks a value as held in its non-compact encoding for good (see `Entry::raw`).
    pub fn mark_raw(&mut self, key: &[u8]) {
        if let Some(e) = self.map.get_mut(key) {
            e.raw = true;
        }
    }

    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.peek(key).is_some()
    }

    /// Stores a value, dropping any deadline (what SET does).
    pub fn set(&mut self, key: &[u8], value: Value) {
        self.set_with_expire(key, value, None);
    }

    /// Stores a value, keeping the key's deadline if it had one (KEEPTTL, SETRANGE, ...).
    pub fn set_keep_ttl(&mut self, key: &[u8], value: Value) {
        self.expire_if_needed(key);
        let ttl = self.map.get(key).and_then(|e| e.expire_at());
        self.set_with_expire(key, value, ttl);
    }

    /// Stores a value with a fresh access record. An old entry whose deadline had passed is
    /// logged as expired, as the lookup Redis's `setKey` does first would have expired it.
    /// Under an LFU policy a value that replaces a live one keeps its counter, counted once
    /// more: Redis's setKey looks the key up for writing (an access) and its dbOverwrite
    /// carries the old object's counter over to the new one.
    pub fn set_with_expire(&mut self, key: &[u8], value: Value, expire_at: Option<i64>) {
        let mut entry = Entry::new(value, expire_at);
        entry.access = self.fresh_access();
        if self.touch.lfu.is_some() {
            let now = self.now;
            let live = |e: &&Entry| e.expire_at().is_none_or(|t| !is_expired(t, now));
            if let Some(mut access) = self.map.get(key).filter(live).map(|e| e.access) {
                // Counted once per call: a handler that looked the key up already did.
                if !self.no_touch && self.first_access(key) {
                    access.touch(&mut self.touch, now);
                }
                entry.access = access;
            }
        }
        self.insert_entry(key, entry);
    }

    /// The access record of a value created now (Redis's createObject).
    pub fn fresh_access(&self) -> Access {
        Access::fresh(self.touch.lfu, self.now)
    }

    /// Stores a whole entry (value, deadline and access time), replacing any old one:
    /// RENAME, MOVE and RESTORE keep what the entry carries.
    pub fn insert_entry(&mut self, key: &[u8], entry: Entry) {
        if self.touch.lfu.is_some() {
            // A key created or replaced by this call is not counted again by its lookups.
            self.first_access(key);
        }
        let expire_at = entry.expire_at();
        let mut created = true;
        if let Some(old) = self.map.insert(key, entry) {
            created = false;
            if let Some(t) = old.expire_at() {
                self.expires.remove(&(t, key.to_vec()));
                if is_expired(t, self.now) {
                    self.expired_log.push(key.to_vec());
                    created = true;
                }
            }
        }
        if let Some(t) = expire_at {
            self.expires.insert((t, key.to_vec()));
        }
        if created && self.log_new {
            self.new_log.push(key.to_vec());
        }
    }

    /// Removes a key. One past its deadline that the active cycle has not reached yet is
    /// expired instead (logged, and not returned), as the lookup before Redis's delete would.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let old = self.take(key)?;
        if old.expire_at().is_some_and(|t| is_expired(t, self.now)) {
            self.expired_log.push(key.to_vec());
            return None;
        }
        Some(old)
    }

    fn take(&mut self, key: &[u8]) -> Option<Entry> {
        let old = self.map.remove(key)?;
        if let Some(t) = old.expire_at() {
            self.expires.remove(&(t, key.to_vec()));
        }
        Some(old)
    }

    /// Sets or clears a live key's deadline; false if the key does not exist.
    pub fn set_expire(&mut self, key: &[u8], expire_at: Option<i64>) -> bool {
        self.expire_if_needed(key);
        let Some(entry) = self.map.get_mut(key) else {
            return false;
        };
        if let Some(t) = entry.expire_at() {
            self.expires.remove(&(t, key.to_vec()));
        }
        entry.set_expire_at(expire_at);
        if let Some(t) = expire_at {
            self.expires.insert((t, key.to_vec()));
        }
        true
    }

    /// The earliest deadline of any key, for the engine's active expiry.
    pub fn next_deadline(&self) -> Option<i64> {
        self.expires.first().map(|(t, _)| *t)
    }

    /// Removes up to `budget` keys whose deadline has passed (`is_expired`), in deadline order;
    /// returns true when none is left due.
    pub fn purge_expired(&mut self, budget: usize) -> bool {
        for _ in 0..budget {
            match self.expires.first() {
                Some((t, _)) if is_expired(*t, self.now) => {}
                _ => return true,
            }
            let (_, key) = self.expires.pop_first().expect("checked non-empty");
            let started = self.time_expiry.then(std::time::Instant::now);
            drop(self.map.remove(&key[..]));
            self.timed_expiry(started);
            self.expired_log.push(key);
        }
        self.next_deadline()
            .is_none_or(|t| !is_expired(t, self.now))
    }

    /// Removes a collection that became empty, as Redis does after every pop or remove.
    /// Returns true if the key was deleted.
    pub fn remove_if_empty(&mut self, key: &[u8]) -> bool {
        if matches!(self.map.get(key), Some(e) if e.value.is_empty_collection()) {
            self.remove(key);
            true
        } else {
            false
        }
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.expires.clear();
        self.sizes.dirty.clear();
        self.sizes.stale = false;
    }

    /// All live keys, in the map's (fixed-seed, so repeatable) order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// All live entries, in the map's order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        self.map
            .iter()
            .filter(|(_, e)| self.is_live(e))
            .map(|(k, e)| (k.as_bytes(), e))
    }

    /// Every stored entry, those past their deadline that expiry has not removed yet
    /// included: DEBUG DIGEST reads the keyspace as stored, as Redis's does.
    pub fn stored(&self) -> impl Iterator<Item = (&[u8], &Entry)> + '_ {
        self.map.iter().map(|(k, e)| (k.as_bytes(), e))
    }

    /// How many entries are stored, those past their deadline included.
    pub fn stored_len(&self) -> usize {
        self.map.len()
    }

    /// The `i`th stored entry in the map's order, live or not (RANDOMKEY's draw).
    pub fn stored_nth(&self, i: usize) -> Option<(&[u8], &Entry)> {
        self.map.nth(i).map(|(k, e)| (k.as_bytes(), e))
    }

    /// A stored entry, live or not, without expiring or touching it (DEBUG DIGEST-VALUE).
    pub fn stored_entry(&self, key: &[u8]) -> Option<&Entry> {
        self.map.get(key)
    }

    /// Up to `n` stored entries picked at random, the candidates of one eviction round
    /// (Redis's dictGetSomeKeys): distinct keys of the whole keyspace, or with `volatile`
    /// keys with a deadline (random keys of the keyspace that have one, or, when they are
    /// rare, neighbours in deadline order from a random point of the deadline index). Like Redis's
    /// sample, keys past their deadline that expiry has not removed yet are included.
    pub fn sample(
        &self,
        rng: &mut crate::rng::EngineRng,
        n: usize,
        volatile: bool,
    ) -> Vec<(&[u8], &Entry)> {
        if !volatile {
            return rng
                .distinct(self.map.len(), n)
                .into_iter()
                .filter_map(|i| self.map.nth(i))
                .map(|(k, e)| (k.as_bytes(), e))
                .collect();
        }
        // Keys with a deadline are picked among all keys where they are a fair share, so
        // the sample is not ordered by deadline (keys written together would be sampled
        // together); a deadline window is the fallback when they are rare.
        if self.expires.len() * 8 >= self.map.len() {
            let mut picked: Vec<(&[u8], &Entry)> = Vec::with_capacity(n);
            for _ in 0..n * 32 {
                if picked.len() >= n.min(self.expires.len()) {
                    break;
                }
                if let Some((k, e)) = self.map.nth(rng.below(self.map.len())) {
                    if e.expire_at().is_some() && !picked.iter().any(|(p, _)| *p == k.as_bytes()) {
                        picked.push((k.as_bytes(), e));
                    }
                }
            }
            if !picked.is_empty() {
                return picked;
            }
        }
        let (Some((first, _)), Some((last, _))) = (self.expires.first(), self.expires.last())
        else {
            return Vec::new();
        };
        let span = (*last as i128 - *first as i128 + 1) as u128;
        let from = *first + ((u128::from(rng.next_u64()) % span) as i64);
        let start = (from, Vec::new());
        self.expires
            .range(start..)
            .chain(self.expires.iter())
            .take(n.min(self.expires.len()))
            .filter_map(|(_, k)| self.map.get(k).map(|e| (&k[..], e)))
            .collect()
    }

    /// Whether `key` is stored (live or past its deadline), and with `volatile` has a
    /// deadline: whether an eviction candidate still exists.
    pub fn holds(&self, key: &[u8], volatile: bool) -> bool {
        self.map
            .get(key)
            .is_some_and(|e| !volatile || e.expire_at().is_some())
    }

    /// Number of stored keys (with `volatile`, of those with a deadline), live or not.
    pub fn stored_len_of(&self, volatile: bool) -> usize {
        if volatile {
            self.expires.len()
        } else {
            self.map.len()
        }
    }

    /// The hash the keyspace SCAN cursor is built on; the same every run.
    pub fn key_hash(key: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        FixedState::with_seed(0x5ca7).hash_one(key)
    }

    /// Approximate memory held by this database's stored keys and values (INFO used_memory):
    /// the running total, with the values changed in place since it was last settled
    /// measured again (all of them when they were not listed, see `Sizes`).
    pub fn memory(&self) -> u64 {
        if self.sizes.stale {
            return self.map.measure();
        }
        let mut total = self.map.total();
        let mut seen = std::collections::HashSet::new();
        for key in &self.sizes.dirty {
            if let Some(e) = self.map.get(key).filter(|_| seen.insert(&key[..])) {
                total = total - u64::from(e.size) + u64::from(keyspace::entry_size(key, e));
            }
        }
        total
    }

    /// Brings the running total up to date after a command. `track` says whether values
    /// handed out for a change in place are listed from now on (maxmemory is set: the total
    /// is read before every command) or only noted, for a full recount when next read.
    #[inline]
    pub fn settle_memory(&mut self, track: bool) {
        // Most commands leave most databases alone: nothing to do, without a call (debug
        // builds still check the total below while it is relied on).
        let checked = cfg!(debug_assertions) && track;
        if self.sizes.track == track
            && self.sizes.dirty.is_empty()
            && !(self.sizes.stale && track)
            && !checked
        {
            return;
        }
        self.settle_sizes(track);
    }

    fn settle_sizes(&mut self, track: bool) {
        // Untracked (no maxmemory), a stale total waits for its next reader (`memory`
        // measures then): recounting here would walk every key after each write.
        if self.sizes.stale && track {
            self.sizes.stale = false;
            self.sizes.dirty.clear();
            self.map.recount();
        }
        for key in std::mem::take(&mut self.sizes.dirty) {
            self.map.resize(&key);
        }
        self.sizes.track = track;
        // The check of the running total: in debug builds, while it is relied on.
        if cfg!(debug_assertions) && track {
            assert_eq!(
                self.map.total(),
                self.map.measure(),
                "the running total of used_memory strayed from a full recount"
            );
        }
    }

    /// The total `memory` would find, recounted from scratch (its check, in tests).
    #[cfg(test)]
    pub fn memory_recount(&self) -> u64 {
        self.map.measure()
    }
}
