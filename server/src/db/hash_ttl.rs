//! Hash field expiration (Redis 7.4): a deadline per field, on redlab's clock.
//!
//! The deadlines live beside the keyspace, keyed by (database, key), so the hash value and
//! every hash command stay as they are. The engine keeps them true around each command
//! (`Engine::call`): before a command, the due fields of the keys it names are deleted (with
//! the `hexpired` event, and `del` when the hash empties); after it, the deadlines of keys it
//! changed follow the change: a field that is gone loses its deadline, a field HSET wrote
//! again loses it, a key that is no longer a hash loses them all, and RENAME, MOVE, COPY,
//! SWAPDB and FLUSHDB/FLUSHALL carry or drop them. Between commands, `expire_due_fields`
//! deletes due fields of every hash, as Redis's active expiry does.

use std::collections::HashMap;

/// Field -> deadline in Unix ms.
pub type Deadlines = HashMap<Vec<u8>, i64>;

/// (database, key) of a hash with deadlines.
pub(crate) type KeyOf = (usize, Vec<u8>);

/// Every hash field deadline of the engine.
#[derive(Default, Debug, Clone)]
pub struct FieldTtls {
    pub(crate) map: HashMap<KeyOf, Deadlines>,
    /// The earliest deadline, or i64::MAX: nothing is due before it.
    next_due: i64,
}

impl FieldTtls {
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The deadline of `field` of `key`, if it has one.
    pub fn get(&self, db: usize, key: &[u8], field: &[u8]) -> Option<i64> {
        self.map.get(&(db, key.to_vec()))?.get(field).copied()
    }

    pub fn set(&mut self, db: usize, key: &[u8], field: &[u8], at: i64) {
        self.map
            .entry((db, key.to_vec()))
            .or_default()
            .insert(field.to_vec(), at);
        if self.is_empty_bound() || at < self.next_due {
            self.next_due = at;
        }
    }

    pub(crate) fn is_empty_bound(&self) -> bool {
        self.next_due == 0
    }

    /// Removes the deadline of `field`; true when it had one.
    pub fn remove(&mut self, db: usize, key: &[u8], field: &[u8]) -> bool {
        let k = (db, key.to_vec());
        let Some(fields) = self.map.get_mut(&k) else {
            return false;
        };
        let had = fields.remove(field).is_some();
        if fields.is_empty() {
            self.map.remove(&k);
        }
        had
    }

    pub(crate) fn take_key(&mut self, db: usize, key: &[u8]) -> Option<Deadlines> {
        self.map.remove(&(db, key.to_vec()))
    }

    pub(crate) fn put_key(&mut self, db: usize, key: &[u8], d: Deadlines) {
        if d.is_empty() {
            return;
        }
        if let Some(min) = d.values().min() {
            if self.is_empty_bound() || *min < self.next_due {
                self.next_due = *min;
            }
        }
        self.map.insert((db, key.to_vec()), d);
    }

    /// Keys with a field due at `now`, and those fields.
    pub(crate) fn due(&self, now: i64) -> Vec<(KeyOf, Vec<Vec<u8>>)> {
        if !self.is_empty_bound() && now < self.next_due {
            return Vec::new();
        }
        self.map
            .iter()
            .filter_map(|(k, fields)| {
                let due: Vec<Vec<u8>> = fields
                    .iter()
                    .filter(|(_, at)| **at <= now)
                    .map(|(f, _)| f.clone())
                    .collect();
                (!due.is_empty()).then(|| (k.clone(), due))
            })
            .collect()
    }

    pub(crate) fn recompute_next_due(&mut self) {
        self.next_due = self
            .map
            .values()
            .flat_map(|f| f.values())
            .min()
            .copied()
            .unwrap_or(0);
    }
}
