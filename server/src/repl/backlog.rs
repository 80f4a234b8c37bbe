//! The replication backlog: the last `repl-backlog-size` bytes of the stream a primary sent
//! its replicas, with the offsets Redis reports, so a replica that lost its link can ask
//! for what it missed (PSYNC) instead of a whole new copy.

use std::collections::VecDeque;

/// A bounded window of the replication stream.
#[derive(Debug)]
pub(crate) struct Backlog {
    bytes: VecDeque<u8>,
    /// The most bytes kept (repl-backlog-size).
    limit: usize,
    /// The offset of the last byte fed (INFO master_repl_offset).
    end: i64,
}

impl Backlog {
    /// An empty backlog whose next byte will have offset `end + 1`.
    pub(crate) fn new(limit: usize, end: i64) -> Backlog {
        Backlog {
            bytes: VecDeque::new(),
            limit: limit.max(1),
            end,
        }
    }

    pub(crate) fn feed(&mut self, data: &[u8]) {
        self.end += data.len() as i64;
        // Extended from the slice (one copy per contiguous part), not byte by byte: every
        // write on a primary, and every command a replica applies, comes through here.
        self.bytes.extend(data);
        let over = self.bytes.len().saturating_sub(self.limit);
        if over > 0 {
            self.bytes.drain(..over);
        }
    }

    /// INFO master_repl_offset: the offset of the last byte fed.
    pub(crate) fn end(&self) -> i64 {
        self.end
    }

    /// INFO repl_backlog_histlen.
    pub(crate) fn histlen(&self) -> usize {
        self.bytes.len()
    }

    /// INFO repl_backlog_first_byte_offset: the offset of the oldest byte held.
    pub(crate) fn first_offset(&self) -> i64 {
        self.end - self.bytes.len() as i64 + 1
    }

    /// The bytes from `offset` (the next byte a replica wants) to the end, when the backlog
    /// still holds them all.
    pub(crate) fn since(&self, offset: i64) -> Option<Vec<u8>> {
        if offset < self.first_offset() || offset > self.end + 1 {
            return None;
        }
        let skip = (offset - self.first_offset()) as usize;
        Some(self.bytes.iter().skip(skip).copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Backlog;

    #[test]
    fn keeps_the_last_bytes_and_their_offsets() {
        let mut b = Backlog::new(4, 0);
        b.feed(b"abc");
        assert_eq!((b.first_offset(), b.end(), b.histlen()), (1, 3, 3));
        assert_eq!(b.since(2).as_deref(), Some(&b"bc"[..]));
        b.feed(b"def");
        assert_eq!((b.first_offset(), b.end(), b.histlen()), (3, 6, 4));
        assert_eq!(b.since(2), None);
        assert_eq!(b.since(3).as_deref(), Some(&b"cdef"[..]));
        assert_eq!(b.since(7).as_deref(), Some(&b""[..]));
        assert_eq!(b.since(8), None);
    }
}
