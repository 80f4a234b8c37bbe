//! Consumer groups: the last delivered ID, the entries-read counter behind lag, the pending
//! entries list (PEL: delivered, not yet acknowledged) and the consumers, each with its own
//! view of the PEL. Both PELs are ordered by ID; a pending entry belongs to one consumer.
//! Times are the engine clock's milliseconds, so a test that moves the clock makes entries
//! idle.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::StreamId;

/// A delivered, unacknowledged entry.
#[derive(Clone, Debug)]
pub struct Nack {
    pub delivery_time: i64,
    pub delivery_count: u64,
    pub consumer: Arc<[u8]>,
}

#[derive(Clone, Debug)]
pub struct Consumer {
    pub name: Arc<[u8]>,
    /// Last time the consumer read or claimed (Redis 7.0's seen-time).
    pub seen_time: i64,
    /// Last time an entry entered its pending list by a delivery or a claim, -1 if never
    /// (Redis 7.2's active-time, shown from that profile on). Reads that return nothing and
    /// NOACK reads leave it, as valkey-server 8.1 shows; redlab's RDB (7.0's format) does
    /// not keep it, so a loaded consumer gets its seen-time, as Redis 7.2 loading a 7.0 RDB.
    pub active_time: i64,
    pub pel: BTreeSet<StreamId>,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub last_id: StreamId,
    pub entries_read: i64,
    pub pel: BTreeMap<StreamId, Nack>,
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
}

impl Group {
    pub fn new(last_id: StreamId, entries_read: i64) -> Group {
        Group {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }

    pub fn approx_size(&self) -> usize {
        self.pel.len() * 64
            + self
                .consumers
                .iter()
                .map(|(n, c)| n.len() * 2 + 64 + c.pel.len() * 40)
                .sum::<usize>()
    }

    /// Creates a consumer; false if it exists.
    pub fn create_consumer(&mut self, name: &[u8], now: i64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        self.consumers.insert(
            name.to_vec(),
            Consumer {
                name: Arc::from(name),
                seen_time: now,
                active_time: -1,
                pel: BTreeSet::new(),
            },
        );
        true
    }

    /// Deletes a consumer and its pending entries; returns how many it had, None if absent.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let c = self.consumers.remove(name)?;
        for id in &c.pel {
            self.pel.remove(id);
        }
        Some(c.pel.len())
    }

    /// Records a delivery of `id` to `consumer` (which must exist): a new pending entry, or
    /// one already pending moved to this consumer with its count restarted at 1.
    pub fn deliver(&mut self, id: StreamId, consumer: &[u8], now: i64) {
        let name = self.consumers[consumer].name.clone();
        if let Some(old) = self.pel.get(&id).map(|n| n.consumer.clone()) {
            if let Some(c) = self.consumers.get_mut(&old[..]) {
                c.pel.remove(&id);
            }
        }
        self.pel.insert(
            id,
            Nack {
                delivery_time: now,
                delivery_count: 1,
                consumer: name,
            },
        );
        self.consumers
            .get_mut(consumer)
            .expect("checked")
            .pel
            .insert(id);
    }

    /// `consumer` (which must exist) was given an entry: a delivery or a claim.
    pub fn mark_active(&mut self, consumer: &[u8], now: i64) {
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.active_time = now;
        }
    }

    /// Acknowledges `id`; true if it was pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(n) = self.pel.remove(&id) else {
            return false;
        };
        if let Some(c) = self.consumers.get_mut(&n.consumer[..]) {
            c.pel.remove(&id);
        }
        true
    }

    /// Moves a pending entry to `consumer` (which must exist).
    pub fn reassign(&mut self, id: StreamId, consumer: &[u8]) {
        let name = self.consumers[consumer].name.clone();
        let Some(n) = self.pel.get_mut(&id) else {
            return;
        };
        if n.consumer[..] != *consumer {
            let old = std::mem::replace(&mut n.consumer, name);
            if let Some(c) = self.consumers.get_mut(&old[..]) {
                c.pel.remove(&id);
            }
            self.consumers
                .get_mut(consumer)
                .expect("checked")
                .pel
                .insert(id);
        }
    }
}
