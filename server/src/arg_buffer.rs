//! Argument vectors for commands built from borrowed bytes (in-process `Engine::execute`,
//! redis.call, requests read from the network), without a new vector per command.
//!
//! Commands take their arguments as `Vec<Bytes>`. Each argument is copied into its own
//! allocation; the vectors that hold them come back through `recycle` and are reused.
//! Slicing all arguments out of one shared buffer was tried and measured slower: every slice
//! is an atomic reference count taken and dropped, which cost more than a small allocation
//! each. Keeping the argument buffers themselves for reuse (a pool by length, taken back with
//! `Bytes::try_into_mut`) was tried too and cost more than it saved: under callgrind, about
//! 290 instructions per argument for the pool's push and take-back against about 210 for an
//! allocation and its free under mimalloc (`redis-benchmark -P 16` PFADD against
//! redlab-server).

use bytes::Bytes;

/// Vectors longer than this are not kept for reuse, so one huge command does not pin memory.
const KEEP_UP_TO: usize = 64;
/// Arguments up to this length are copied out of a network read into their own allocation;
/// longer ones are sliced out of the read buffer (`net::parser`).
pub(crate) const KEEP_BUFFER_UP_TO: usize = 64;

#[derive(Default)]
pub struct ArgBuffer {
    args: Vec<Bytes>,
    spare: Vec<Vec<Bytes>>,
}

impl ArgBuffer {
    /// Starts a command.
    pub fn begin(&mut self) {
        self.args = self.spare.pop().unwrap_or_default();
        self.args.clear();
    }

    pub fn push(&mut self, arg: &[u8]) {
        self.args.push(Bytes::copy_from_slice(arg));
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

    /// Takes back an argument vector whose command is done: its arguments are dropped (a
    /// value a handler stored keeps its own reference), the vector is kept for the next one.
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
    fn an_argument_a_handler_kept_outlives_its_command() {
        let mut b = ArgBuffer::default();
        let args = build(&mut b, &["SET", "key", "value"]);
        let kept = args[2].clone();
        b.recycle(args);
        let again = build(&mut b, &["GET", "abc", "other"]);
        assert_eq!(again, ["GET", "abc", "other"]);
        assert_eq!(kept, "value", "a held argument is never overwritten");
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
