//! One node of a stream: up to `stream-node-max-entries` entries packed in one buffer, laid
//! out as Redis lays out the listpack of a stream node. The node's first entry is its
//! "master": its field names are stored once, and later entries with the same fields store
//! only their values (the SAMEFIELDS flag). Entry IDs are stored as differences from the
//! node's key (the master ID), so most take one or two bytes.
//!
//! Layout of `buf`, each item a listpack element:
//! `num-fields field... 0` (the master entry without its two counters), then per entry
//! `flags ms-diff seq-diff [num-fields] (field value)... | value... lp-count`.
//! The live and deleted counters that head Redis's listpack are kept as plain integers and
//! written when the node is serialized, so an append never shifts the buffer.

use super::lp::{self, Elem};
use super::StreamId;

pub const FLAG_DELETED: i64 = 1;
pub const FLAG_SAMEFIELDS: i64 = 2;

#[derive(Clone, Debug, Default)]
pub struct Node {
    buf: Vec<u8>,
    /// Where the first entry starts (after the master fields).
    entries_at: u32,
    master_fields: u32,
    pub live: u32,
    pub deleted: u32,
}

/// One entry as found in a node: where it lies and what it holds.
#[derive(Clone, Copy, Debug)]
pub struct RawEntry {
    pub id: StreamId,
    pub flags: i64,
    /// Offset of the entry's flags element (what deletion rewrites).
    pub at: usize,
    /// Offset of the first field (or value, with SAMEFIELDS).
    body: usize,
    nfields: usize,
}

impl RawEntry {
    pub fn is_deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
}

impl Node {
    /// A node whose master entry has the fields of its first entry, `first`.
    pub fn new(fields: &[(&[u8], &[u8])]) -> Node {
        let mut buf = Vec::with_capacity(64);
        lp::push_int(&mut buf, fields.len() as i64);
        for (f, _) in fields {
            lp::push_str(&mut buf, f);
        }
        lp::push_int(&mut buf, 0);
        Node {
            entries_at: buf.len() as u32,
            master_fields: fields.len() as u32,
            buf,
            live: 0,
            deleted: 0,
        }
    }

    /// The size of this node as a Redis listpack (`lpBytes`): header, counters, body, end.
    pub fn lp_bytes(&self) -> usize {
        6 + lp::int_size(self.live as i64) + lp::int_size(self.deleted as i64) + self.buf.len() + 1
    }

    /// Gives back the spare capacity of a node that will not grow any more (a newer node
    /// took over appends), so a full node costs its bytes and not up to twice that.
    pub fn shrink(&mut self) {
        self.buf.shrink_to_fit();
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    fn same_fields(&self, fields: &[(&[u8], &[u8])]) -> bool {
        if fields.len() != self.master_fields as usize {
            return false;
        }
        let mut pos = 0;
        lp::next(&self.buf, &mut pos);
        fields
            .iter()
            .all(|(f, _)| lp::next(&self.buf, &mut pos).is_some_and(|e| e.eq_bytes(f)))
    }

    /// Appends an entry; `master` is the node's key.
    pub fn push(&mut self, master: StreamId, id: StreamId, fields: &[(&[u8], &[u8])]) {
        let same = self.same_fields(fields);
        let buf = &mut self.buf;
        lp::push_int(buf, if same { FLAG_SAMEFIELDS } else { 0 });
        lp::push_int(buf, id.ms.wrapping_sub(master.ms) as i64);
        lp::push_int(buf, id.seq.wrapping_sub(master.seq) as i64);
        if same {
            for (_, v) in fields {
                lp::push_str(buf, v);
            }
        } else {
            lp::push_int(buf, fields.len() as i64);
            for (f, v) in fields {
                lp::push_str(buf, f);
                lp::push_str(buf, v);
            }
        }
        let count = if same {
            fields.len()
        } else {
            fields.len() * 2 + 1
        };
        lp::push_int(buf, count as i64 + 3);
        self.live += 1;
    }

    /// Decodes the entry starting at `pos`, moving `pos` past it.
    pub fn entry_at(&self, master: StreamId, pos: &mut usize) -> Option<RawEntry> {
        let at = *pos;
        let buf = &self.buf;
        let flags = lp::next(buf, pos)?.int()?;
        let ms = master.ms.wrapping_add(lp::next(buf, pos)?.int()? as u64);
        let seq = master.seq.wrapping_add(lp::next(buf, pos)?.int()? as u64);
        let (nfields, body, elems) = if flags & FLAG_SAMEFIELDS != 0 {
            let n = self.master_fields as usize;
            (n, *pos, n)
        } else {
            let n = lp::next(buf, pos)?.int()?;
            let n = usize::try_from(n).ok()?;
            (n, *pos, n.checked_mul(2)?)
        };
        for _ in 0..elems {
            lp::next(buf, pos)?;
        }
        lp::next(buf, pos)?;
        Some(RawEntry {
            id: StreamId { ms, seq },
            flags,
            at,
            body,
            nfields,
        })
    }

    /// Every entry (deleted ones included), in order.
    pub fn entries(&self, master: StreamId) -> NodeIter<'_> {
        NodeIter {
            node: self,
            master,
            pos: self.entries_at as usize,
        }
    }

    /// Calls `f` with each field and value of `e`.
    pub fn fields(&self, e: &RawEntry, mut f: impl FnMut(Elem<'_>, Elem<'_>)) {
        let buf = &self.buf;
        let mut pos = e.body;
        if e.flags & FLAG_SAMEFIELDS != 0 {
            let mut mpos = 0;
            lp::next(buf, &mut mpos);
            for _ in 0..e.nfields {
                let (Some(name), Some(value)) = (lp::next(buf, &mut mpos), lp::next(buf, &mut pos))
                else {
                    return;
                };
                f(name, value);
            }
        } else {
            for _ in 0..e.nfields {
                let (Some(name), Some(value)) = (lp::next(buf, &mut pos), lp::next(buf, &mut pos))
                else {
                    return;
                };
                f(name, value);
            }
        }
    }

    pub fn nfields(&self, e: &RawEntry) -> usize {
        e.nfields
    }

    /// Marks the entry at `e` deleted: its flags element is rewritten in place (both flag
    /// values are one-byte integers, so nothing moves).
    pub fn mark_deleted(&mut self, e: &RawEntry) {
        let flags = e.flags | FLAG_DELETED;
        debug_assert!((0..=127).contains(&flags));
        self.buf[e.at] = flags as u8;
        self.live -= 1;
        self.deleted += 1;
    }

    /// The node as Redis's listpack, for DUMP.
    pub fn to_listpack(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.lp_bytes());
        out.extend_from_slice(&[0; 6]);
        lp::push_int(&mut out, self.live as i64);
        lp::push_int(&mut out, self.deleted as i64);
        out.extend_from_slice(&self.buf);
        out.push(0xff);
        let total = out.len() as u32;
        out[0..4].copy_from_slice(&total.to_le_bytes());
        // Element count: counters + master fields + terminator + every entry's elements.
        let mut count = 2usize + self.buf_elements();
        if count > 65535 {
            count = 65535;
        }
        out[4..6].copy_from_slice(&(count as u16).to_le_bytes());
        out
    }

    fn buf_elements(&self) -> usize {
        let mut pos = 0;
        let mut n = 0;
        while lp::next(&self.buf, &mut pos).is_some() {
            n += 1;
        }
        n
    }

    /// Reads a node from Redis's listpack (RESTORE), checking every entry decodes and the
    /// counters agree with the flags; returns the node and its entries' IDs range.
    pub fn from_listpack(lp_bytes: &[u8], master: StreamId) -> Option<(Node, StreamId)> {
        if lp_bytes.len() < 7 || *lp_bytes.last()? != 0xff {
            return None;
        }
        let total = u32::from_le_bytes(lp_bytes[0..4].try_into().ok()?) as usize;
        if total != lp_bytes.len() {
            return None;
        }
        let body = &lp_bytes[6..lp_bytes.len() - 1];
        let mut pos = 0;
        let live = lp::next(body, &mut pos)?.int()?;
        let deleted = lp::next(body, &mut pos)?.int()?;
        let start = pos;
        let nmaster = lp::next(body, &mut pos)?.int()?;
        if !(0..=1 << 20).contains(&nmaster) {
            return None;
        }
        for _ in 0..nmaster {
            lp::next(body, &mut pos)?;
        }
        if lp::next(body, &mut pos)?.int()? != 0 {
            return None;
        }
        let node = Node {
            buf: body[start..].to_vec(),
            entries_at: (pos - start) as u32,
            master_fields: nmaster as u32,
            live: u32::try_from(live).ok()?,
            deleted: u32::try_from(deleted).ok()?,
        };
        let (mut seen_live, mut seen_deleted) = (0i64, 0i64);
        let mut p = node.entries_at as usize;
        let mut last = master;
        while p < node.buf.len() {
            let e = node.entry_at(master, &mut p)?;
            if e.flags & !(FLAG_DELETED | FLAG_SAMEFIELDS) != 0 {
                return None;
            }
            if e.is_deleted() {
                seen_deleted += 1;
            } else {
                seen_live += 1;
            }
            last = e.id;
        }
        if seen_live != live || seen_deleted != deleted {
            return None;
        }
        Some((node, last))
    }
}

pub struct NodeIter<'a> {
    node: &'a Node,
    master: StreamId,
    pos: usize,
}

impl Iterator for NodeIter<'_> {
    type Item = RawEntry;

    fn next(&mut self) -> Option<RawEntry> {
        if self.pos >= self.node.buf.len() {
            return None;
        }
        self.node.entry_at(self.master, &mut self.pos)
    }
}
