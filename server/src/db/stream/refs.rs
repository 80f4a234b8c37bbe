//! Redis 8.2's reference policies: what deleting or trimming an entry does to the consumer
//! groups' pending entries lists (XDELEX, XACKDEL, and XADD/XTRIM's KEEPREF, DELREF and
//! ACKED). Written from the 8.2 command reference and Redis's own tests of it.
//!
//! An entry is *referenced* while some group still needs it: one of them has it pending, or
//! has not delivered it yet (its last delivered ID is below the entry's). ACKED deletes only
//! entries no group references; DELREF deletes and also drops the entry from every PEL;
//! KEEPREF (7.0's XDEL and XTRIM) deletes and leaves the PELs alone.

use super::{Stream, StreamId, Trim};

/// How a deletion treats the consumer groups' references to the entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refs {
    #[default]
    KeepRef,
    DelRef,
    Acked,
}

impl Refs {
    /// The option word (`KEEPREF`, `DELREF`, `ACKED`, any case), None for anything else.
    pub fn parse(word: &[u8]) -> Option<Refs> {
        [
            (&b"keepref"[..], Refs::KeepRef),
            (b"delref", Refs::DelRef),
            (b"acked", Refs::Acked),
        ]
        .into_iter()
        .find(|(w, _)| word.eq_ignore_ascii_case(w))
        .map(|(_, r)| r)
    }
}

/// What XDELEX and XACKDEL answer per ID.
pub const NOT_FOUND: i64 = -1;
pub const DELETED: i64 = 1;
pub const STILL_REFERENCED: i64 = 2;

impl Stream {
    /// Whether a consumer group still needs `id`: not yet delivered to one of them, or
    /// pending in one (Redis 8.2's streamEntryIsReferenced).
    pub fn is_referenced(&self, id: StreamId) -> bool {
        self.groups
            .values()
            .any(|g| id > g.last_id || g.pel.contains_key(&id))
    }

    /// Drops `id` from every group's PEL (and its consumer's).
    pub fn drop_refs(&mut self, id: StreamId) {
        for g in self.groups.values_mut() {
            g.ack(id);
        }
    }

    /// Deletes `id` under `refs`: `DELETED`, `NOT_FOUND` when it is not in the stream, or
    /// `STILL_REFERENCED` when ACKED keeps it. DELREF drops the references even when the
    /// entry itself is gone already (dangling ones).
    pub fn delete_with(&mut self, id: StreamId, refs: Refs) -> i64 {
        match refs {
            Refs::KeepRef => {}
            Refs::DelRef => self.drop_refs(id),
            Refs::Acked => {
                if !self.contains(id) {
                    return NOT_FOUND;
                }
                if self.is_referenced(id) {
                    return STILL_REFERENCED;
                }
            }
        }
        if self.delete(id) {
            DELETED
        } else {
            NOT_FOUND
        }
    }

    /// Trims as Redis 8.2's streamTrim with a reference policy. KEEPREF is 7.0's trim. With
    /// DELREF or ACKED no whole node is dropped: an approximate trim (`~`) removes nothing
    /// (8.2 and 8.4 behave so; redis/redis#14656, fixed in 8.6), and an exact one walks the
    /// entries from the oldest, DELREF removing each with its references and ACKED skipping
    /// the referenced ones, until the strategy's threshold is met.
    pub fn trim_with(&mut self, strategy: Trim, approx: bool, limit: u64, refs: Refs) -> u64 {
        if refs == Refs::KeepRef {
            return self.trim(strategy, approx, limit);
        }
        if approx {
            return 0;
        }
        let mut candidates = Vec::new();
        let end = match strategy {
            Trim::MinId(min) => match min.decr() {
                Some(end) => end,
                None => return 0,
            },
            Trim::MaxLen(_) => StreamId::MAX,
        };
        // DELREF under MAXLEN removes exactly the oldest excess; ACKED may skip any number.
        let wanted = match (strategy, refs) {
            (Trim::MaxLen(max), Refs::DelRef) => self.len().saturating_sub(max) as usize,
            _ => usize::MAX,
        };
        if wanted == 0 {
            return 0;
        }
        self.visit(StreamId::MIN, end, false, |_, e| {
            candidates.push(e.id);
            candidates.len() < wanted
        });
        let mut deleted = 0;
        for id in candidates {
            if let Trim::MaxLen(max) = strategy {
                if self.len() <= max {
                    break;
                }
            }
            if refs == Refs::Acked && self.is_referenced(id) {
                continue;
            }
            if refs == Refs::DelRef {
                self.drop_refs(id);
            }
            if self.delete_kept_max(id) {
                deleted += 1;
            }
        }
        deleted
    }

    /// `delete` without raising the largest deleted ID: trimming does not move it (as in
    /// Redis, where only XDEL records it).
    fn delete_kept_max(&mut self, id: StreamId) -> bool {
        let max = self.max_deleted_id;
        let done = self.delete(id);
        self.max_deleted_id = max;
        done
    }
}
