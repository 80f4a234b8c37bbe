//! Argument vectors for commands built from borrowed bytes (in-process `Engine::execute`,
//! redis.call, requests read from the network), without a new vector per command.
//!
//! Commands take their arguments as `Vec<Bytes>`. Each argument is copied into its own
//! buffer; the vectors that hold them come back through `recycle` and are reused, and so are
//! the small argument buffers no handler kept (a value SET stored is not). Slicing all
//! arguments out of one shared buffer was tried and measured slower: every slice is an
//! atomic reference count taken and dropped, which cost more than a small allocation each.
//! Reusing a buffer costs a uniqueness check instead of an allocation and a free.

use bytes::{Bytes, BytesMut};

/// Vectors longer than this are not kept for reuse, so one huge command does not pin memory.
const KEEP_UP_TO: usize = 64;
/// Argument buffers longer than this are not kept, for the same reason. (The network parser
/// copies arguments up to this length and slices longer ones out of the read buffer.)
pub(crate) const KEEP_BUFFER_UP_TO: usize = 64;
/// How many argument buffers of one length are kept.
const KEEP_PER_LENGTH: usize = 8;

#[derive(Default)]
pub struct ArgBuffer {
    args: Vec<Bytes>,
    spare: Vec<Vec<Bytes>>,
    /// Buffers of arguments whose command is done, empty and ready for the next ones, by
    /// length (index `n` holds buffers of exactly `n` bytes).
    by_len: Vec<Vec<BytesMut>>,
}

impl ArgBuffer {
    /// Starts a command.
    pub fn begin(&mut self) {
        self.args = self.spare.pop().unwrap_or_default();
        self.args.clear();
    }

    pub fn push(&mut self, arg: &[u8]) {
        // Only a buffer of exactly the argument's length is taken: a frozen buffer with room
        // to spare would cost an allocation of its own (`Bytes::from(Vec)`). Commands sent
        // again and again repeat their lengths.
        let bytes = match self.by_len.get_mut(arg.len()).and_then(Vec::pop) {
            Some(mut buf) => {
                buf.extend_from_slice(arg);
                buf.freeze()
            }
            None => Bytes::copy_from_slice(arg),
        };
        self.args.push(bytes);
    }

    /// Adds an argument that already has its own buffer (a large one, sliced out of a
    /// network read rather than copied).
    pub fn push_bytes(&mut self, arg: Bytes) {
        self.args.push(arg);
    }

    /// The arguments pushed since `begin`.
    pub fn finish(&mut self) -> Vec<Bytes> {
        std::mem::take(&mut self.args)
    }

    /// Takes back an argument vector whose command is done.
    pub fn recycle(&mut self, mut args: Vec<Bytes>) {
        for arg in args.drain(..) {
            // Only a small buffer nothing else holds comes back (`try_into_mut`); one a
            // handler kept, or a slice of a larger one (a network read), is dropped here.
            let len = arg.len();
            if len == 0 || len > KEEP_BUFFER_UP_TO {
                continue;
            }
            if self
                .by_len
                .get(len)
                .is_some_and(|b| b.len() >= KEEP_PER_LENGTH)
            {
                continue;
            }
            if let Ok(mut buf) = arg.try_into_mut() {
                if buf.capacity() == len {
                    buf.clear();
                    if self.by_len.len() <= len {
                        self.by_len.resize_with(len + 1, Vec::new);
                    }
                    self.by_len[len].push(buf);
                }
            }
        }
        args.clear();
        if args.capacity() > 0 && args.capacity() <= KEEP_UP_TO && self.spare.len() < 4 {
            self.spare.push(args);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ArgBuffer, KEEP_BUFFER_UP_TO};

    fn build(b: &mut ArgBuffer, parts: &[&str]) -> Vec<bytes::Bytes> {
        b.begin();
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
    fn an_argument_buffer_is_reused_only_when_nothing_else_holds_it() {
        let mut b = ArgBuffer::default();
        let args = build(&mut b, &["SET", "key", "value"]);
        let kept = args[2].clone();
        let mut three = [args[0].as_ptr(), args[1].as_ptr()];
        b.recycle(args);
        // "value" is still held, so only the other two buffers come back.
        assert_eq!(b.by_len.iter().map(Vec::len).sum::<usize>(), 2);
        // "GET" and "abc" have the length of "SET" and "key": they take those buffers.
        let again = build(&mut b, &["GET", "abc", "value"]);
        assert_eq!(again, ["GET", "abc", "value"]);
        let mut reused = [again[0].as_ptr(), again[1].as_ptr()];
        three.sort();
        reused.sort();
        assert_eq!(reused, three);
        assert_ne!(again[2].as_ptr(), kept.as_ptr());
        assert_eq!(kept, "value", "a held argument is never overwritten");
        // A long argument's buffer is not kept.
        let long = "x".repeat(500);
        let more = build(&mut b, &[long.as_str()]);
        assert_eq!(more[0], long.as_bytes());
        b.recycle(more);
        assert!(b.by_len.len() <= KEEP_BUFFER_UP_TO + 1);
    }

    #[test]
    fn a_recycled_vector_is_reused_and_a_huge_one_is_not() {
        let mut b = ArgBuffer::default();
        let args = build(&mut b, &["SET", "key", "value"]);
        let at = args.as_ptr();
        b.recycle(args);
        let again = build(&mut b, &["SET", "key", "value"]);
        assert_eq!(again.as_ptr(), at);
        let huge: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let huge = build(&mut b, &huge.iter().map(String::as_str).collect::<Vec<_>>());
        b.recycle(huge);
        b.recycle(again);
        let next = build(&mut b, &["PING"]);
        assert!(next.capacity() <= 64);
    }
}
