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

    /// SWAPDB a b: call before swapping. For a key watched in one database (the one
    /// emptied of it) and the key of the same name in the other (what replaces it), as
    /// Redis 7.0's touchAllWatchedKeysInDb decides, counting keys still stored though past
    /// their deadline: nothing happens when neither side stores the key; a client that
    /// watched the key already expired sees no change when nothing or another expired key
    /// replaces it (and forgets it was expired when nothing does); a client that watched a
    /// missing key sees no change when an expired key replaces it (it now watches an expired
    /// key); every other client is dirty.
    pub(crate) fn touch_watched_swapdb(&mut self, a: usize, b: usize) {
        if a >= self.dbs.len() || b >= self.dbs.len() {
            return;
        }
        let slots: Vec<(usize, Vec<u8>)> = self
            .watched_keys
            .keys()
            .filter(|(d, _)| *d == a || *d == b)
            .cloned()
            .collect();
        for slot in slots {
            let (emptied, key) = (slot.0, &slot.1[..]);
            let replaced_with = if emptied == a { b } else { a };
            let in_emptied = self.db(emptied).stored_entry(key).is_some();
            let in_replacement = self.db(replaced_with).stored_entry(key).is_some();
            if !in_emptied && !in_replacement {
                continue;
            }
            let replacement_expired = self.db(replaced_with).is_stale(key);
            let conns = self.watched_keys.get(&slot).cloned().unwrap_or_default();
            for c in conns {
                let Some(s) = self.sessions.get_mut(&c) else {
                    continue;
                };
                let was_expired = s.watched_expired.iter().position(|w| *w == slot);
                match was_expired {
                    Some(i) if !in_replacement => {
                        s.watched_expired.swap_remove(i);
                    }
                    Some(_) if replacement_expired => {}
                    None if !in_emptied && replacement_expired => {
                        s.watched_expired.push(slot.clone());
                    }
                    _ => s.watch_dirty = true,
                }
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
