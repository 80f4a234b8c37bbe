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
//!
//! Short arguments that come back again and again (command names, a script's SHA1, the keys
//! a test hammers) are shared instead: the third time an argument is seen it is kept in a
//! small table, and from then on it costs a hash, a compare and a reference count instead of
//! an allocation and a free. An in-process engine runs on its caller's allocator (the system
//! malloc, under a test), where that pair cost about 320 instructions per argument and was a
//! fifth of an EVALSHA of a short script (`cargo bench --bench eval`, under callgrind). An
//! argument seen once or twice (a unique key, a value, a value a script passes on to SET) is
//! only noted, never kept, so a bulk load allocates exactly as before; and a kept argument
//! that is still being used is not pushed out by a newcomer to its slot. Handlers copy what they store (`StrValue`, the packed
//! encodings), so a shared argument is never pinned by the keyspace.

use bytes::Bytes;
use std::hash::BuildHasher;

/// Vectors longer than this are not kept for reuse, so one huge command does not pin memory.
const KEEP_UP_TO: usize = 64;
/// Arguments up to this length are copied out of a network read into their own allocation;
/// longer ones are sliced out of the read buffer (`net::parser`).
pub(crate) const KEEP_BUFFER_UP_TO: usize = 64;

/// Slots of the table of recurring arguments (a power of two).
const SHARED_SLOTS: usize = 64;
/// The longest argument the table keeps: a SHA1 in hex (EVALSHA) fits.
const SHARED_UP_TO: usize = 48;
/// Arguments copied before the table is made: an engine that runs a handful of commands (a
/// test's first script) does not pay for setting it up.
const SHARED_AFTER: u32 = 64;

/// Sightings after which an argument is kept.
const KEEP_AFTER: u32 = 3;

/// One slot of the table: the argument kept there, and the last argument seen at this slot
/// that is not kept (by hash), with how many times in a row it was seen.
#[derive(Default)]
struct Slot {
    kept: Option<(u64, Bytes)>,
    /// Whether `kept` was used since a newcomer last asked for the slot: a newcomer takes
    /// the slot only from an argument that was not.
    used: bool,
    seen: u64,
    seen_times: u32,
}

#[derive(Default)]
pub struct ArgBuffer {
    args: Vec<Bytes>,
    spare: Vec<Vec<Bytes>>,
    /// Recurring short arguments, made after `SHARED_AFTER` arguments.
    shared: Vec<Slot>,
    /// Arguments pushed while `shared` was not made yet.
    pushed: u32,
}

impl ArgBuffer {
    /// Starts a command.
    pub fn begin(&mut self) {
        self.args = self.spare.pop().unwrap_or_default();
        self.args.clear();
    }

    pub fn push(&mut self, arg: &[u8]) {
        let b = if arg.len() <= SHARED_UP_TO && self.pushed >= SHARED_AFTER {
            self.recurring(arg)
        } else {
            self.pushed = self.pushed.saturating_add(1);
            Bytes::copy_from_slice(arg)
        };
        self.args.push(b);
    }

    /// `arg` as a shared copy when it was seen before, else as a copy of its own.
    fn recurring(&mut self, arg: &[u8]) -> Bytes {
        if self.shared.is_empty() {
            self.shared.resize_with(SHARED_SLOTS, Slot::default);
        }
        // A fixed seed: the table is private to this buffer and a collision only costs a
        // compare, so nothing is gained by a random one.
        let h = foldhash::fast::FixedState::with_seed(0x5eed).hash_one(arg) | 1;
        // Two slots per argument (a pair), so two recurring arguments that meet in one slot
        // (three of an EVALSHA's eight did, at one seed) can both be kept.
        let at = (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize & (SHARED_SLOTS - 1);
        let pair = [at, at ^ 1];
        for i in pair {
            let slot = &mut self.shared[i];
            if let Some((kh, kb)) = &slot.kept {
                if *kh == h && kb[..] == *arg {
                    slot.used = true;
                    return kb.clone();
                }
            }
        }
        let b = Bytes::copy_from_slice(arg);
        let slot = &mut self.shared[at];
        if slot.seen == h {
            slot.seen_times += 1;
        } else {
            (slot.seen, slot.seen_times) = (h, 1);
        }
        if slot.seen_times >= KEEP_AFTER {
            (slot.seen, slot.seen_times) = (0, 0);
            let free = pair
                .into_iter()
                .find(|&i| self.shared[i].kept.is_none() || !self.shared[i].used);
            match free {
                Some(i) => {
                    self.shared[i].kept = Some((h, b.clone()));
                    self.shared[i].used = true;
                }
                // Both kept arguments stay; each must be used again to hold off the next one.
                None => pair.iter().for_each(|&i| self.shared[i].used = false),
            }
        }
        b
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

    /// A buffer past the arguments it copies before sharing any.
    fn warm() -> ArgBuffer {
        let mut b = ArgBuffer::default();
        let warmup: Vec<String> = (0..super::SHARED_AFTER)
            .map(|i| format!("warm-{i}"))
            .collect();
        for w in &warmup {
            build(&mut b, &[w.as_str()]);
        }
        assert!(b.shared.is_empty(), "not made while warming up");
        b
    }

    #[test]
    fn a_recurring_argument_is_shared_and_a_one_off_is_not() {
        let mut b = warm();
        let first = build(&mut b, &["GET", "key", "unique-1", "unique-1"]);
        let second = build(&mut b, &["GET", "key", "unique-2", "unique-2"]);
        let third = build(&mut b, &["GET", "key", "unique-3", "unique-3"]);
        let fourth = build(&mut b, &["GET", "key", "unique-4", "unique-4"]);
        assert_eq!(fourth, ["GET", "key", "unique-4", "unique-4"]);
        // The third sighting keeps the argument; the fourth shares that copy.
        assert_eq!(third[0].as_ptr(), fourth[0].as_ptr());
        assert_eq!(third[1].as_ptr(), fourth[1].as_ptr());
        assert_ne!(second[0].as_ptr(), third[0].as_ptr());
        assert_ne!(first[0].as_ptr(), second[0].as_ptr());
        // Values seen only twice are copies of their own.
        assert!(b.shared.iter().all(|s| s
            .kept
            .as_ref()
            .is_none_or(|(_, k)| !k.starts_with(b"unique"))));
        assert_ne!(fourth[2].as_ptr(), fourth[3].as_ptr());
        // An argument too long for the table is never shared.
        let long = "x".repeat(super::SHARED_UP_TO + 1);
        let l: Vec<_> = (0..5).map(|_| build(&mut b, &[long.as_str()])).collect();
        assert_eq!(l[4][0], long.as_bytes());
        assert_ne!(l[3][0].as_ptr(), l[4][0].as_ptr());
    }

    #[test]
    fn a_kept_argument_in_use_is_not_pushed_out_by_newcomers() {
        let mut b = warm();
        let kept = (0..4)
            .map(|_| build(&mut b, &["EVALSHA"]))
            .last()
            .expect("built");
        // Hundreds of other recurring arguments, some of which land in its slot, each seen
        // often enough to be kept, while EVALSHA is used in every command.
        for i in 0..500 {
            let w = format!("word-{i}");
            for _ in 0..super::KEEP_AFTER {
                let got = build(&mut b, &["EVALSHA", w.as_str()]);
                assert_eq!(got, ["EVALSHA", w.as_str()]);
                assert_eq!(got[0].as_ptr(), kept[0].as_ptr(), "EVALSHA was replaced");
            }
        }
    }

    #[test]
    fn arguments_that_share_a_slot_come_back_as_pushed() {
        let mut b = warm();
        // Many more distinct recurring arguments than slots: every one still reads back
        // exactly, whichever copy the table holds.
        let words: Vec<String> = (0..500).map(|i| format!("w{i}")).collect();
        for _ in 0..4 {
            for w in &words {
                let got = build(&mut b, &[w.as_str(), "", w.as_str()]);
                assert_eq!(got, [w.as_str(), "", w.as_str()]);
            }
        }
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
