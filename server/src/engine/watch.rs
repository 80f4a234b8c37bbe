//! WATCH bookkeeping: what a write, a flush or SWAPDB does to the clients watching a key.

use super::Engine;
use crate::notify;
use crate::session::ConnId;

impl Engine {
    // ---- what write handlers call -------------------------------------------------------

    /// Records that a write changed `key`: breaks WATCHes, counts a change, and sends the
    /// keyspace notification `event` of class `class` (see `notify`). Every write handler
    /// calls this once per key it changed.
    pub(crate) fn modified(&mut self, db: usize, key: &[u8], class: u32, event: &str) {
        self.dirty += 1;
        self.touch_watched(db, key);
        self.announce_if_new(db, key);
        notify::keyspace_event(self, class, event, db, key);
    }

    /// A write changed (db, key) (Redis's signalModifiedKey): the clients watching it are
    /// dirty, and those that may cache it get an invalidation.
    pub(crate) fn touch_watched(&mut self, db: usize, key: &[u8]) {
        self.dirty_watchers(db, key);
        self.tracking_invalidate(key, true);
    }

    /// Marks every client watching (db, key) dirty.
    fn dirty_watchers(&mut self, db: usize, key: &[u8]) {
        if self.watched_keys.is_empty() {
            return;
        }
        if let Some(conns) = self.watched_keys.get(&(db, key.to_vec())) {
            for c in conns.clone() {
                if let Some(s) = self.sessions.get_mut(&c) {
                    s.watch_dirty = true;
                }
            }
        }
    }

    /// Expiry removed (db, key): every client watching it is dirty, except one that watched
    /// it already expired, for which nothing changed (it only forgets that it was expired).
    pub(crate) fn touch_watched_expired(&mut self, db: usize, key: &[u8]) {
        if self.watched_keys.is_empty() {
            return;
        }
        let slot = (db, key.to_vec());
        let Some(conns) = self.watched_keys.get(&slot) else {
            return;
        };
        for c in conns.clone() {
            if let Some(s) = self.sessions.get_mut(&c) {
                match s.watched_expired.iter().position(|w| *w == slot) {
                    Some(i) => {
                        s.watched_expired.swap_remove(i);
                    }
                    None => s.watch_dirty = true,
                }
            }
        }
    }

    /// At EXEC: whether a key the client watched while it was live is now past its deadline
    /// though not removed yet (Redis 7.0's isWatchedKeyExpired).
    pub(crate) fn watched_key_expired(&mut self, conn: ConnId) -> bool {
        let Some(s) = self.sessions.get(&conn) else {
            return false;
        };
        let live: Vec<(usize, Vec<u8>)> = s
            .watched
            .iter()
            .filter(|slot| !s.watched_expired.contains(slot))
            .cloned()
            .collect();
        live.iter()
            .any(|(db, key)| *db < self.dbs.len() && self.db(*db).is_stale(key))
    }

    /// FLUSHDB / FLUSHALL (`db` None: every database): call before emptying. Marks dirty
    /// the clients watching a key that exists there; as in Redis, a watched key that did not
    /// exist is not changed by a flush. Tracking clients get the null invalidation (all
    /// their keys, whatever the database).
    pub(crate) fn touch_all_watched(&mut self, db: Option<usize>) {
        self.tracking_flush();
        let slots: Vec<(usize, Vec<u8>)> = self
            .watched_keys
            .keys()
            .filter(|(d, _)| db.is_none_or(|x| x == *d))
            .cloned()
            .collect();
        for (d, key) in slots {
            if d < self.dbs.len() && self.db(d).contains(&key) {
                self.dirty_watchers(d, &key);
            }
        }
    }

    /// SWAPDB a b: call before swapping. A watched key changes if it exists on either side.
    pub(crate) fn touch_watched_swapdb(&mut self, a: usize, b: usize) {
        let slots: Vec<(usize, Vec<u8>)> = self
            .watched_keys
            .keys()
            .filter(|(d, _)| *d == a || *d == b)
            .cloned()
            .collect();
        for (d, key) in slots {
            if a < self.dbs.len()
                && b < self.dbs.len()
                && (self.db(a).contains(&key) || self.db(b).contains(&key))
            {
                self.dirty_watchers(d, &key);
            }
        }
    }

    pub(crate) fn unwatch_all(&mut self, conn: ConnId) {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return;
        };
        let watched = std::mem::take(&mut s.watched);
        s.watched_expired.clear();
        s.watch_dirty = false;
        for k in watched {
            if let Some(list) = self.watched_keys.get_mut(&k) {
                list.retain(|&c| c != conn);
                if list.is_empty() {
                    self.watched_keys.remove(&k);
                }
            }
        }
    }
}
