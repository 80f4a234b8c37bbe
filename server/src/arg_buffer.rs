//! Argument vectors built without an allocation per command.
//!
//! Commands take their arguments as `Vec<Bytes>`. Built naively, every redis.call and every
//! in-process `Engine::execute` would allocate a buffer per argument and a vector to hold
//! them, and malloc/free were about a tenth of an EVALSHA's time. Here all arguments of a
//! command are copied into one reused buffer and handed out as slices of it; once the
//! command is done and its slices are dropped, the buffer is unique again and `reserve`
//! reuses it from the start. Vectors come back through `recycle` and are reused too.
//! Handlers copy what they keep (values are stored as `Vec<u8>`), so a slice pins the
//! buffer only while a command holds it (a blocked command, a queued MULTI).

use bytes::{Bytes, BytesMut};

/// Vectors longer than this are not kept for reuse, so one huge command does not pin memory.
const KEEP_UP_TO: usize = 64;

#[derive(Default)]
pub struct ArgBuffer {
    bytes: BytesMut,
    /// End offset in `bytes` of each argument pushed since the last `finish`.
    ends: Vec<usize>,
    spare: Vec<Vec<Bytes>>,
}

impl ArgBuffer {
    /// Starts a command of about `total` bytes.
    pub fn begin(&mut self, total: usize) {
        self.bytes.clear();
        self.ends.clear();
        self.bytes.reserve(total);
    }

    pub fn push(&mut self, arg: &[u8]) {
        self.bytes.extend_from_slice(arg);
        self.ends.push(self.bytes.len());
    }

    /// The arguments pushed since `begin`.
    pub fn finish(&mut self) -> Vec<Bytes> {
        let all = self.bytes.split().freeze();
        let mut args = self.spare.pop().unwrap_or_default();
        args.reserve(self.ends.len());
        let mut start = 0;
        for &end in &self.ends {
            args.push(all.slice(start..end));
            start = end;
        }
        self.ends.clear();
        args
    }

    /// Takes back an argument vector whose command is done.
    pub fn recycle(&mut self, mut args: Vec<Bytes>) {
        args.clear();
        if args.capacity() > 0 && args.capacity() <= KEEP_UP_TO && self.spare.len() < 4 {
            self.spare.push(args);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ArgBuffer;

    fn build(b: &mut ArgBuffer, parts: &[&str]) -> Vec<bytes::Bytes> {
        b.begin(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            b.push(p.as_bytes());
        }
        b.finish()
    }

    #[test]
    fn arguments_come_back_as_pushed_even_while_older_ones_live() {
        let mut b = ArgBuffer::default();
        let first = build(&mut b, &["SET", "k", "v"]);
        let second = build(&mut b, &["GET", "", "longer argument"]);
        assert_eq!(first, ["SET", "k", "v"]);
        assert_eq!(second, ["GET", "", "longer argument"]);
        b.recycle(first);
        let third = build(&mut b, &["PING"]);
        assert_eq!(third, ["PING"]);
        assert_eq!(second, ["GET", "", "longer argument"]);
    }

    #[test]
    fn the_buffer_is_reused_once_the_slices_are_gone() {
        let mut b = ArgBuffer::default();
        let args = build(&mut b, &["SET", "key", "value"]);
        let at = args[0].as_ptr();
        b.recycle(args);
        let again = build(&mut b, &["SET", "key", "value"]);
        assert_eq!(again[0].as_ptr(), at);
    }
}
