//! `Keyspace`: one database's keys and entries, stored densely.
//!
//! The entries sit side by side in one vector, and the hash table holds only each entry's
//! position (4 bytes). A hash table grows by doubling and is between 44% and 88% full, so
//! slots holding whole entries (70-odd bytes) would cost twice an entry per key right after a
//! doubling; 4-byte positions cost 9 bytes per key at worst (with the table's control byte),
//! and the vector's unused tail is never touched, so it takes no resident memory.
//!
//! Why: memory per key at most Redis's (issue 17), and a keyspace that clones as two flat
//! copies for the explorer's snapshots. A removal moves the last entry into the hole, so the
//! order of iteration is the order of insertion, changed by removals; nothing may rely on it
//! beyond being the same for the same history (replays do).

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::{Entry, Key};

#[derive(Default)]
pub struct Keyspace {
    index: HashTable<u32>,
    slots: Vec<(Key, Entry)>,
    /// The sum of every stored entry's `Entry::size`, kept as entries come and go.
    total: u64,
}

/// `clone_from` keeps both tables' allocations (see `Db`'s `Clone`).
impl Clone for Keyspace {
    fn clone(&self) -> Keyspace {
        Keyspace {
            index: self.index.clone(),
            slots: self.slots.clone(),
            total: self.total,
        }
    }

    fn clone_from(&mut self, source: &Keyspace) {
        self.index.clone_from(&source.index);
        self.slots.clone_from(&source.slots);
        self.total = source.total;
    }
}

/// The bytes a key and its value count for in INFO used_memory: its name, 48 bytes of
/// bookkeeping and the value's approximate size (see engine/evict.rs).
pub fn entry_size(key: &[u8], e: &Entry) -> u32 {
    let n = key.len() + 48 + e.value.approx_size();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The hasher of the positions table; a fixed seed, so every run builds the same table.
fn hash(key: &[u8]) -> u64 {
    FixedState::with_seed(0x6b65_7973).hash_one(key)
}

impl Keyspace {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    fn position(&self, key: &[u8]) -> Option<usize> {
        let slots = &self.slots;
        self.index
            .find(hash(key), |&i| slots[i as usize].0.as_bytes() == key)
            .map(|&i| i as usize)
    }

    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.position(key).map(|i| &self.slots[i].1)
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.position(key).map(|i| &mut self.slots[i].1)
    }

    /// Stores `entry` under `key`; returns the entry it replaced.
    pub fn insert(&mut self, key: &[u8], mut entry: Entry) -> Option<Entry> {
        entry.size = entry_size(key, &entry);
        self.total += u64::from(entry.size);
        let h = hash(key);
        let slots = &self.slots;
        if let Some(&i) = self
            .index
            .find(h, |&i| slots[i as usize].0.as_bytes() == key)
        {
            let old = std::mem::replace(&mut self.slots[i as usize].1, entry);
            self.total -= u64::from(old.size);
            return Some(old);
        }
        let i = u32::try_from(self.slots.len()).expect("fewer than 2^32 keys");
        self.slots.push((Key::from(key), entry));
        let slots = &self.slots;
        self.index
            .insert_unique(h, i, |&j| hash(slots[j as usize].0.as_bytes()));
        None
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let slots = &self.slots;
        let found = self
            .index
            .find_entry(hash(key), |&i| slots[i as usize].0.as_bytes() == key)
            .ok()?;
        let (i, _) = found.remove();
        let i = i as usize;
        let last = self.slots.len() - 1;
        let (_, entry) = self.slots.swap_remove(i);
        self.total -= u64::from(entry.size);
        if i != last {
            // The last entry moved into the hole: point its position there.
            let moved = hash(self.slots[i].0.as_bytes());
            let pos = self
                .index
                .find_mut(moved, |&j| j as usize == last)
                .expect("every entry has a position");
            *pos = i as u32;
        }
        Some(entry)
    }

    /// The accounted bytes of every stored entry (see `entry_size`).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Measures `key`'s entry again after its value changed in place.
    pub fn resize(&mut self, key: &[u8]) {
        if let Some(i) = self.position(key) {
            let (k, e) = &mut self.slots[i];
            let size = entry_size(k.as_bytes(), e);
            self.total = self.total - u64::from(e.size) + u64::from(size);
            e.size = size;
        }
    }

    /// Measures every entry again; returns the total.
    pub fn recount(&mut self) -> u64 {
        self.total = 0;
        for (k, e) in &mut self.slots {
            e.size = entry_size(k.as_bytes(), e);
            self.total += u64::from(e.size);
        }
        self.total
    }

    /// What `recount` would find, without storing it (the check of the running total).
    pub fn measure(&self) -> u64 {
        self.slots
            .iter()
            .map(|(k, e)| u64::from(entry_size(k.as_bytes(), e)))
            .sum()
    }

    /// Empties the keyspace and gives its memory back.
    pub fn clear(&mut self) {
        *self = Keyspace::default();
    }

    /// The entry at position `i` of the dense order (what `iter` walks), for picking
    /// entries at random.
    pub fn nth(&self, i: usize) -> Option<(&Key, &Entry)> {
        self.slots.get(i).map(|(k, e)| (k, e))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Entry)> + '_ {
        self.slots.iter().map(|(k, e)| (k, e))
    }
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{StrValue, Value};

    fn entry(n: usize) -> Entry {
        Entry::new(
            Value::Str(StrValue::from_slice(n.to_string().as_bytes())),
            None,
        )
    }

    fn value_of(e: &Entry) -> usize {
        match &e.value {
            Value::Str(s) => std::str::from_utf8(s).unwrap().parse().unwrap(),
            _ => unreachable!(),
        }
    }

    /// Random inserts, overwrites and removals agree with a std HashMap at every step.
    #[test]
    fn agrees_with_a_hash_map() {
        let mut ks = Keyspace::default();
        let mut model = std::collections::HashMap::new();
        let mut x: u64 = 12345;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = format!("k{}", x % 500).into_bytes();
            match x % 3 {
                0 | 1 => {
                    let old = ks.insert(&key, entry(step)).map(|e| value_of(&e));
                    assert_eq!(old, model.insert(key.clone(), step));
                }
                _ => {
                    let old = ks.remove(&key).map(|e| value_of(&e));
                    assert_eq!(old, model.remove(&key));
                }
            }
            assert_eq!(ks.len(), model.len());
        }
        for (k, v) in &model {
            assert_eq!(ks.get(k).map(value_of), Some(*v));
        }
        assert_eq!(ks.iter().count(), model.len());
        ks.clear();
        assert_eq!(ks.len(), 0);
        assert!(ks.get(b"k1").is_none());
    }
}
