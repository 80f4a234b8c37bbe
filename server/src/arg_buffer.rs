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

/// The hash that places an argument of at most `SHARED_UP_TO` bytes in the table: its
/// eight-byte words (`words`) folded with a multiply each. Fixed, not seeded: the table is
/// private to this buffer and a collision only costs a compare, so nothing is gained by a
/// random one. foldhash's general `hash_one` cost about three times as much on these short
/// strings (about 70 instructions for a three-byte command name, under callgrind), and an
/// EVALSHA of a three-command script hashes thirteen arguments.
#[inline]
fn short_hash(arg: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = arg.len() as u64;
    words(arg, |w| h = (h.rotate_left(5) ^ w).wrapping_mul(K));
    h
}

/// Calls `f` with words that together hold every byte of `b`, without a loop over bytes:
/// its whole eight-byte words, then its last eight bytes (overlapping the one before) when
/// the length is not a multiple of eight; a string shorter than eight bytes is one word of
/// two overlapping four-byte reads, or of its first, middle and last byte. Two strings of
/// the same length give the same words exactly when they are equal.
#[inline]
fn words(b: &[u8], mut f: impl FnMut(u64)) {
    let n = b.len();
    let at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
    if n >= 8 {
        let mut i = 0;
        while i + 8 <= n {
            f(at(i));
            i += 8;
        }
        if i < n {
            f(at(n - 8));
        }
    } else if n >= 4 {
        let half = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes"));
        f(u64::from(half(0)) | u64::from(half(n - 4)) << 32);
    } else if n > 0 {
        f(u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16);
    }
}

/// `a == b` for the short arguments of the table, compared a word at a time in line: the
/// slice comparison calls `memcmp`, whose call and set-up cost more than the compare for
/// strings this short (eleven such calls per EVALSHA of a three-command script, under
/// callgrind, at about fifteen instructions each besides the call). The words are those of
/// `words`, read from both strings side by side: collecting one string's words into an array
/// first (as this did) cost about twice the compare. Equal lengths and equal words mean equal
/// bytes.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let at = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
    if n >= 8 {
        let mut i = 0;
        while i + 8 <= n {
            if at(a, i) != at(b, i) {
                return false;
            }
            i += 8;
        }
        i == n || at(a, n - 8) == at(b, n - 8)
    } else if n >= 4 {
        let half = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("four"));
        half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4)
    } else {
        // At most three bytes: the first, middle and last are all of them.
        n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1])
    }
}

#[derive(Default)]
pub struct ArgBuffer {
    args: Vec<Bytes>,
    spare: Vec<Vec<Bytes>>,
    /// Recurring short arguments, made after `SHARED_AFTER` arguments.
    shared: Vec<Slot>,
    /// Arguments pushed while `shared` was not made yet.
    pushed: u32,
    /// The kept argument last pushed at each of the first `POSITIONS` positions of a command.
    /// The same command sent again and again (a test's EVALSHA, a pipeline of one command)
    /// repeats its name, SHA1 and keys at the same places: compared there first, such an
    /// argument skips the hash and the table (about 40 instructions each of the six of the
    /// eval bench's EVALSHA, under callgrind).
    last: [Option<Bytes>; POSITIONS],
}

/// Positions of a command whose last kept argument is remembered.
const POSITIONS: usize = 8;

impl ArgBuffer {
    /// Starts a command.
    pub fn begin(&mut self) {
        self.args = self.spare.pop().unwrap_or_default();
        self.args.clear();
    }

    pub fn push(&mut self, arg: &[u8]) {
        let pos = self.args.len();
        if let Some(Some(prev)) = self.last.get(pos) {
            if same_bytes(prev, arg) {
                let b = prev.clone();
                self.args.push(b);
                return;
            }
        }
        let b = if arg.len() <= SHARED_UP_TO && self.pushed >= SHARED_AFTER {
            let (b, kept) = self.recurring(arg);
            if kept && pos < POSITIONS {
                self.last[pos] = Some(b.clone());
            }
            b
        } else {
            self.pushed = self.pushed.saturating_add(1);
            Bytes::copy_from_slice(arg)
        };
        self.args.push(b);
    }

    /// `arg` as a shared copy when it was seen before, else as a copy of its own; and
    /// whether the table keeps it.
    fn recurring(&mut self, arg: &[u8]) -> (Bytes, bool) {
        if self.shared.is_empty() {
            self.shared.resize_with(SHARED_SLOTS, Slot::default);
        }
        let h = short_hash(arg) | 1;
        // Two slots per argument (a pair), so two recurring arguments that meet in one slot
        // (three of an EVALSHA's eight did, at one seed) can both be kept.
        let at = (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize & (SHARED_SLOTS - 1);
        let pair = [at, at ^ 1];
        for i in pair {
            let slot = &mut self.shared[i];
            if let Some((kh, kb)) = &slot.kept {
                if *kh == h && same_bytes(kb, arg) {
                    slot.used = true;
                    return (kb.clone(), true);
                }
            }
        }
        let b = Bytes::copy_from_slice(arg);
        // Sightings are counted in either slot of the pair: two recurring arguments that
        // meet at one slot would otherwise reset each other's count at every sighting and
        // never be kept (the "2" and "max" of the eval bench's EVALSHA did: both, and the
        // "max" its script passes to GET, were copied on every call). A newcomer takes the
        // slot of the pair that has seen its argument fewer times.
        let counted = pair.into_iter().find(|&i| self.shared[i].seen == h);
        let slot = match counted {
            Some(i) => {
                self.shared[i].seen_times += 1;
                &mut self.shared[i]
            }
            None => {
                let i = if self.shared[at ^ 1].seen_times < self.shared[at].seen_times {
                    at ^ 1
                } else {
                    at
                };
                let slot = &mut self.shared[i];
                (slot.seen, slot.seen_times) = (h, 1);
                slot
            }
        };
        if slot.seen_times >= KEEP_AFTER {
            (slot.seen, slot.seen_times) = (0, 0);
            let free = pair
                .into_iter()
                .find(|&i| self.shared[i].kept.is_none() || !self.shared[i].used);
            match free {
                Some(i) => {
                    self.shared[i].kept = Some((h, b.clone()));
                    self.shared[i].used = true;
                    return (b, true);
                }
                // Both kept arguments stay; each must be used again to hold off the next one.
                None => pair.iter().for_each(|&i| self.shared[i].used = false),
            }
        }
        (b, false)
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
    fn a_repeated_command_shares_its_arguments_by_position_and_changes_read_as_themselves() {
        let mut b = warm();
        let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff831";
        let mut kept = Vec::new();
        for i in 0..6 {
            let v = format!("{i}");
            let line = ["EVALSHA", sha, "2", "max", "seen", v.as_str()];
            let args = build(&mut b, &line);
            assert_eq!(args, line);
            kept.push(args);
        }
        // From the fourth sighting on, the same copies, found by position or in the table.
        assert_eq!(kept[4][1].as_ptr(), kept[5][1].as_ptr());
        assert_eq!(kept[4][3].as_ptr(), kept[5][3].as_ptr());
        // Other arguments at those positions are themselves, remembered or not.
        let other = build(
            &mut b,
            &["EVALSHA", &sha.replace('e', "f"), "1", "mix", "x", "y"],
        );
        assert_eq!(
            other,
            ["EVALSHA", &sha.replace('e', "f"), "1", "mix", "x", "y"][..]
        );
        let again = build(&mut b, &["EVALSHA", sha, "2", "max", "seen", "7"]);
        assert_eq!(again, ["EVALSHA", sha, "2", "max", "seen", "7"]);
    }

    #[test]
    fn the_word_compare_sees_every_byte() {
        for n in 0..=super::SHARED_UP_TO + 8 {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 + 1) as u8).collect();
            assert!(super::same_bytes(&a, &a.clone()), "length {n}");
            assert_eq!(super::short_hash(&a), super::short_hash(&a.clone()));
            for j in 0..n {
                let mut b = a.clone();
                b[j] ^= 0x40;
                assert!(!super::same_bytes(&a, &b), "length {n}, byte {j}");
            }
            assert!(!super::same_bytes(&a, &a[..n.saturating_sub(1)]) || n == 0);
        }
    }

    #[test]
    fn two_recurring_arguments_that_meet_at_one_slot_are_both_kept() {
        // Two words whose first slot is the same (found by search, so the test does not
        // depend on knowing the hash), sent alternately with a fresh value each time.
        let slot = |w: &str| {
            let h = super::short_hash(w.as_bytes()) | 1;
            (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize & (super::SHARED_SLOTS - 1)
        };
        let words: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        let (a, b) = words
            .iter()
            .enumerate()
            .find_map(|(i, a)| {
                let b = words[i + 1..].iter().find(|b| slot(b) == slot(a))?;
                Some((a.as_str(), b.as_str()))
            })
            .expect("two words share a slot");
        let mut bu = warm();
        let mut last: Option<Vec<bytes::Bytes>> = None;
        for i in 0..8 {
            let v = format!("value-{i}");
            let got = build(&mut bu, &[a, b, v.as_str()]);
            assert_eq!(got, [a, b, v.as_str()]);
            if i >= 4 {
                let prev = last.as_ref().expect("kept");
                assert_eq!(got[0].as_ptr(), prev[0].as_ptr(), "{a} kept");
                assert_eq!(got[1].as_ptr(), prev[1].as_ptr(), "{b} kept");
            }
            last = Some(got);
        }
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
