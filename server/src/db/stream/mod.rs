//! The stream type: entries with IDs `ms-seq` in ID order, kept as Redis keeps them — a
//! sorted map from each node's first ID to a node packing many entries in one buffer (Redis's
//! radix tree of listpacks; see `node`) — plus the consumer groups (`group`).
//!
//! Memory grows with the entries' bytes: an entry costs its encoded fields and a few bytes of
//! ID, never a heap object of its own. Deleting an entry flags it in place, as Redis does; a
//! node goes away when its last live entry does. The stream's metadata follows Redis 7.0:
//! the last generated ID, the largest deleted ID and the count of entries ever added, from
//! which consumer groups' lag is derived.

pub mod group;
pub mod lp;
pub mod node;
pub mod refs;

use std::collections::BTreeMap;
use std::fmt;

pub use group::{Group, Nack};
pub use node::{Node, RawEntry};
pub use refs::Refs;

/// A stream entry ID: milliseconds and a sequence number, ordered as a pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The next ID, or None after the last possible one.
    pub fn incr(self) -> Option<StreamId> {
        if self.seq < u64::MAX {
            Some(StreamId::new(self.ms, self.seq + 1))
        } else if self.ms < u64::MAX {
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            None
        }
    }

    /// The previous ID, or None before 0-0.
    pub fn decr(self) -> Option<StreamId> {
        if self.seq > 0 {
            Some(StreamId::new(self.ms, self.seq - 1))
        } else if self.ms > 0 {
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            None
        }
    }

    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The 128-bit big-endian form Redis uses as the radix-tree key and in RDB files.
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut b = [0; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    pub fn from_be_bytes(b: &[u8]) -> Option<StreamId> {
        if b.len() != 16 {
            return None;
        }
        Some(StreamId::new(
            u64::from_be_bytes(b[..8].try_into().ok()?),
            u64::from_be_bytes(b[8..].try_into().ok()?),
        ))
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// How XADD and XTRIM trim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    MaxLen(u64),
    MinId(StreamId),
}

/// "No valid value" for a group's entries-read counter (Redis's SCG_INVALID_ENTRIES_READ).
pub const INVALID_ENTRIES_READ: i64 = -1;

#[derive(Clone, Debug, Default)]
pub struct Stream {
    nodes: BTreeMap<StreamId, Node>,
    length: u64,
    pub last_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
    pub groups: BTreeMap<Vec<u8>, Group>,
}

/// An entry read out of a stream: its ID and field/value pairs.
#[cfg(test)]
pub type OwnedEntry = (StreamId, Vec<(Vec<u8>, Vec<u8>)>);

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Number of live entries.
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Number of nodes (the radix tree's keys).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn nodes(&self) -> impl Iterator<Item = (&StreamId, &Node)> {
        self.nodes.iter()
    }

    /// Bytes held by entries and groups, for INFO memory and MEMORY USAGE.
    pub fn approx_size(&self) -> usize {
        let nodes: usize = self.nodes.values().map(|n| n.heap_bytes() + 64).sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + 96 + g.approx_size())
            .sum();
        nodes + groups + 96
    }

    /// The first live entry's ID, or 0-0 when empty.
    pub fn first_id(&self) -> StreamId {
        self.first_entry_id().unwrap_or(StreamId::MIN)
    }

    fn first_entry_id(&self) -> Option<StreamId> {
        let (master, node) = self.nodes.iter().next()?;
        node.entries(*master)
            .find(|e| !e.is_deleted())
            .map(|e| e.id)
    }

    /// The last live entry's ID, or 0-0 when empty (Redis's streamLastValidID).
    pub fn last_valid_id(&self) -> StreamId {
        let Some((master, node)) = self.nodes.iter().next_back() else {
            return StreamId::MIN;
        };
        node.entries(*master)
            .filter(|e| !e.is_deleted())
            .last()
            .map_or(StreamId::MIN, |e| e.id)
    }

    /// Appends an entry with an ID the caller checked is above `last_id`. A new node is
    /// started when the last one has reached `max_entries` entries (live and deleted), or
    /// when its listpack size plus the new fields' bytes reaches `max_bytes`, as Redis does.
    pub fn append(
        &mut self,
        id: StreamId,
        fields: &[(&[u8], &[u8])],
        max_entries: u64,
        max_bytes: u64,
    ) {
        let max_bytes = if max_bytes == 0 || max_bytes > 1 << 30 {
            1 << 30
        } else {
            max_bytes as usize
        };
        let elems: usize = fields.iter().map(|(f, v)| f.len() + v.len()).sum();
        let fits = match self.nodes.last_key_value() {
            None => false,
            Some((_, n)) => {
                n.lp_bytes() + elems < max_bytes
                    && (max_entries == 0 || ((n.live + n.deleted) as u64) < max_entries)
            }
        };
        if fits {
            let mut last = self.nodes.last_entry().expect("checked");
            let master = *last.key();
            last.get_mut().push(master, id, fields);
        } else {
            if let Some(mut last) = self.nodes.last_entry() {
                last.get_mut().shrink();
            }
            let mut node = Node::new(fields);
            node.push(id, id, fields);
            self.nodes.insert(id, node);
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
    }

    /// Visits live entries with IDs in `start..=end`, ascending or (`rev`) descending, until
    /// `f` returns false.
    pub fn visit(
        &self,
        start: StreamId,
        end: StreamId,
        rev: bool,
        mut f: impl FnMut(&Node, &RawEntry) -> bool,
    ) {
        if start > end {
            return;
        }
        if !rev {
            let from = self
                .nodes
                .range(..=start)
                .next_back()
                .map_or(start, |(k, _)| *k);
            for (master, node) in self.nodes.range(from..) {
                if *master > end {
                    return;
                }
                for e in node.entries(*master) {
                    if e.is_deleted() || e.id < start {
                        continue;
                    }
                    if e.id > end || !f(node, &e) {
                        return;
                    }
                }
            }
        } else {
            let mut buf = Vec::new();
            for (master, node) in self.nodes.range(..=end).rev() {
                buf.clear();
                buf.extend(node.entries(*master).filter(|e| !e.is_deleted()));
                for e in buf.iter().rev() {
                    if e.id > end {
                        continue;
                    }
                    if e.id < start || !f(node, e) {
                        return;
                    }
                }
            }
        }
    }

    /// Owned copies of the entries in a range (at most `count`, 0 for all).
    #[cfg(test)]
    pub fn range(
        &self,
        start: StreamId,
        end: StreamId,
        count: usize,
        rev: bool,
    ) -> Vec<OwnedEntry> {
        let mut out = Vec::new();
        self.visit(start, end, rev, |node, e| {
            out.push((e.id, owned_fields(node, e)));
            count == 0 || out.len() < count
        });
        out
    }

    /// The entry with this ID, if live.
    pub fn get(&self, id: StreamId) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut found = None;
        self.visit(id, id, false, |node, e| {
            found = Some(owned_fields(node, e));
            false
        });
        found
    }

    pub fn contains(&self, id: StreamId) -> bool {
        let mut found = false;
        self.visit(id, id, false, |_, _| {
            found = true;
            false
        });
        found
    }

    /// Deletes one entry (XDEL); false if it is not there. A node left with no live entry
    /// is dropped; the largest deleted ID is remembered for lag computations.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else {
            return false;
        };
        let Some(e) = node.entries(master).find(|e| e.id == id && !e.is_deleted()) else {
            return false;
        };
        if node.live == 1 {
            self.nodes.remove(&master);
        } else {
            node.mark_deleted(&e);
        }
        self.length -= 1;
        if id > self.max_deleted_id {
            self.max_deleted_id = id;
        }
        true
    }

    /// Trims as Redis's streamTrim: whole nodes are dropped from the head while the
    /// strategy allows; with `approx` it stops at the first node it cannot drop whole,
    /// otherwise it flags entries inside that node. `limit` (approx only, 0 for none) caps
    /// the entries removed. Returns how many entries were removed.
    pub fn trim(&mut self, strategy: Trim, approx: bool, limit: u64) -> u64 {
        let mut deleted = 0u64;
        let keys: Vec<StreamId> = self.nodes.keys().copied().collect();
        for master in keys {
            if let Trim::MaxLen(max) = strategy {
                if self.length <= max {
                    break;
                }
            }
            let node = self.nodes.get_mut(&master).expect("key from the map");
            let entries = node.live as u64;
            if limit != 0 && deleted + entries > limit {
                break;
            }
            let remove_node = match strategy {
                Trim::MaxLen(max) => self.length - entries >= max,
                Trim::MinId(min) => {
                    let last = node.entries(master).last().map_or(master, |e| e.id);
                    last < min
                }
            };
            if remove_node {
                self.nodes.remove(&master);
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if approx {
                break;
            }
            let all: Vec<RawEntry> = node.entries(master).collect();
            for e in all {
                if e.is_deleted() {
                    continue;
                }
                let stop = match strategy {
                    Trim::MaxLen(max) => self.length <= max,
                    Trim::MinId(min) => e.id >= min,
                };
                if stop {
                    break;
                }
                node.mark_deleted(&e);
                self.length -= 1;
                deleted += 1;
            }
            break;
        }
        deleted
    }

    /// Whether the range may contain a deleted entry (Redis's streamRangeHasTombstones).
    pub fn range_has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        if self.length == 0 || self.max_deleted_id.is_zero() {
            return false;
        }
        if self.first_id() > self.max_deleted_id {
            return false;
        }
        start <= self.max_deleted_id && self.max_deleted_id <= end
    }

    /// The logical position ("entries read") of `id` counted from the first entry ever
    /// added, when it can be known (Redis's streamEstimateDistanceFromFirstEverEntry).
    pub fn estimate_distance(&self, id: StreamId) -> i64 {
        if self.entries_added == 0 {
            return 0;
        }
        if self.length == 0 && id <= self.last_id {
            return self.entries_added as i64;
        }
        if id == self.last_id {
            return self.entries_added as i64;
        } else if id > self.last_id {
            return INVALID_ENTRIES_READ;
        }
        let first = self.first_id();
        if self.max_deleted_id.is_zero() || self.max_deleted_id < first {
            if id < first {
                return (self.entries_added - self.length) as i64;
            } else if id == first {
                return (self.entries_added - self.length + 1) as i64;
            }
        }
        INVALID_ENTRIES_READ
    }

    /// A group's lag, None when it cannot be known (Redis's streamReplyWithCGLag).
    pub fn lag(&self, g: &Group) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if g.entries_read != INVALID_ENTRIES_READ
            && !self.range_has_tombstones(g.last_id, StreamId::MAX)
        {
            return Some(self.entries_added as i64 - g.entries_read);
        }
        let read = self.estimate_distance(g.last_id);
        (read != INVALID_ENTRIES_READ).then(|| self.entries_added as i64 - read)
    }

    /// Inserts a node read from a DUMP payload; the caller checks order and counts.
    pub fn insert_node(&mut self, master: StreamId, node: Node) {
        self.length += node.live as u64;
        self.nodes.insert(master, node);
    }

    /// Sets the live count after loading (RESTORE checks it against the nodes).
    pub fn counted_length(&self) -> u64 {
        self.nodes.values().map(|n| n.live as u64).sum()
    }

    /// The number of nodes Redis's radix tree would have for these keys: its nodes are the
    /// canonical compressed trie over the 16-byte big-endian IDs (XINFO STREAM's
    /// radix-tree-nodes).
    pub fn radix_nodes(&self) -> usize {
        let keys: Vec<[u8; 16]> = self.nodes.keys().map(|k| k.to_be_bytes()).collect();
        if keys.is_empty() {
            return 1;
        }
        trie_nodes(&keys, 0)
    }
}

/// Nodes of a compressed trie over `keys` (sorted, distinct, same length) below depth `d`:
/// a chain of shared bytes is one compressed node, a fork is one branching node, and each
/// key ends in an empty leaf.
fn trie_nodes(keys: &[[u8; 16]], d: usize) -> usize {
    if d == 16 {
        return 1;
    }
    if keys.len() == 1 {
        return 2;
    }
    // Length of the common prefix from depth d.
    let first = &keys[0];
    let last = &keys[keys.len() - 1];
    let mut p = d;
    while p < 16 && first[p] == last[p] {
        p += 1;
    }
    let mut n = if p > d { 1 } else { 0 };
    // A branching node at depth p, and below it one subtree per distinct byte.
    n += 1;
    let mut i = 0;
    while i < keys.len() {
        let b = keys[i][p];
        let mut j = i;
        while j < keys.len() && keys[j][p] == b {
            j += 1;
        }
        n += trie_nodes(&keys[i..j], p + 1);
        i = j;
    }
    n
}

/// An entry's fields and values as owned byte strings.
pub fn owned_fields(node: &Node, e: &RawEntry) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::with_capacity(node.nfields(e));
    node.fields(e, |f, v| out.push((f.to_vec(), v.to_vec())));
    out
}

#[cfg(test)]
mod tests;
