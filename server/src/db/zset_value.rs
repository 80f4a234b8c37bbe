//! `ZSet`: a sorted set as the commands see it, packed while small (Redis's listpack,
//! zset_packed.rs) and a skiplist beside a dict once it outgrows zset-max-listpack-entries or
//! -value (zset.rs), never packed again after that.
//!
//! Why two forms: a ten-member skiplist costs fifteen times Redis's listpack (issue 17).
//! Why "never again": Redis 7.0 keeps a converted set a skiplist after deletions, and
//! OBJECT ENCODING, DUMP's payload type, ZSCAN's paging and the lex range scans all show
//! which one a set is (issue 13.8). Computed results (ZUNIONSTORE, ZRANGESTORE, GEO ... STORE)
//! and loaded payloads pick the form from their contents (`fit_encoding`), as Redis does.
//!
//! Both forms answer in (score, member) order; the methods here are the only place that
//! knows which form a set has.

use super::encoding::Limits;
use super::zset::{self as skip, LexRange, ScoreRange};
use super::zset_packed as packed;

type Skiplist = skip::ZSet;

#[derive(Clone)]
enum Repr {
    Packed(Box<[u8]>),
    Skip(Box<Skiplist>),
}

/// A sorted set; 16 bytes, so `Value` stays 24.
#[derive(Clone)]
pub struct ZSet(Repr);

impl Default for ZSet {
    fn default() -> Self {
        ZSet::new()
    }
}

impl std::fmt::Debug for ZSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.iter()
                    .map(|(m, s)| (String::from_utf8_lossy(m).into_owned(), s)),
            )
            .finish()
    }
}

impl ZSet {
    /// An empty set in the packed form, as ZADD creates one.
    pub fn new() -> ZSet {
        ZSet(Repr::Packed(Box::default()))
    }

    /// A set built as Redis builds a computed result or a loaded one: a skiplist (where -0
    /// scores survive) until `fit_encoding` decides.
    pub fn new_unpacked() -> ZSet {
        ZSet(Repr::Skip(Box::default()))
    }

    /// Whether Redis holds this set as a listpack (OBJECT ENCODING, ZSCAN, DUMP).
    pub fn is_listpack(&self) -> bool {
        matches!(self.0, Repr::Packed(_))
    }

    /// Chooses the form from the contents, as Redis does for a computed or loaded set:
    /// packed when within both limits (-0 scores become 0 then), else a skiplist.
    pub fn fit_encoding(&mut self, l: &Limits) {
        let small = l.zset_max_listpack_entries > 0
            && self.len() <= l.zset_max_listpack_entries
            && self
                .iter()
                .all(|(m, _)| m.len() <= l.zset_max_listpack_value);
        match (&self.0, small) {
            (Repr::Skip(z), true) => {
                let mut b: Box<[u8]> = Box::default();
                // Appended in order: each insert lands at the end.
                for (m, s) in z.iter() {
                    packed::insert(&mut b, m, s);
                }
                self.0 = Repr::Packed(b);
            }
            (Repr::Packed(_), false) => self.convert(),
            _ => {}
        }
    }

    fn convert(&mut self) {
        if let Repr::Packed(b) = &self.0 {
            let mut z = Skiplist::new();
            for s in packed::slots(b) {
                z.insert(s.member, s.score);
            }
            self.0 = Repr::Skip(Box::new(z));
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Packed(b) => packed::len(b),
            Repr::Skip(z) => z.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Repr::Packed(b) => b.is_empty(),
            Repr::Skip(z) => z.is_empty(),
        }
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.0 {
            Repr::Packed(b) => packed::find(b, member).map(|(_, s)| s.score),
            Repr::Skip(z) => z.score(member),
        }
    }

    /// Sets a member's score; returns the previous one. A new member that would pass
    /// zset-max-listpack-entries, or is longer than zset-max-listpack-value, turns a packed
    /// set into a skiplist first (Redis's `zsetAdd`).
    pub fn insert(&mut self, member: &[u8], score: f64, l: &Limits) -> Option<f64> {
        if let Repr::Packed(b) = &self.0 {
            let known = packed::find(b, member).is_some();
            if !known
                && (packed::len(b) + 1 > l.zset_max_listpack_entries
                    || member.len() > l.zset_max_listpack_value)
            {
                self.convert();
            }
        }
        match &mut self.0 {
            Repr::Skip(z) => z.insert(member, score),
            Repr::Packed(b) => {
                let old = match packed::find(b, member) {
                    Some((_, s)) => {
                        let (old, range) = (s.score, s.start..s.end);
                        if old == score {
                            return Some(old);
                        }
                        super::packed::splice(b, range, &[]);
                        Some(old)
                    }
                    None => None,
                };
                packed::insert(b, member, score);
                old
            }
        }
    }

    /// Adds a member to a result under construction (`new_unpacked`, then `fit_encoding`):
    /// no limit applies yet. Returns the previous score.
    pub fn push(&mut self, member: &[u8], score: f64) -> Option<f64> {
        match &mut self.0 {
            Repr::Skip(z) => z.insert(member, score),
            Repr::Packed(_) => self.insert(member, score, &Limits::unbounded()),
        }
    }

    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        match &mut self.0 {
            Repr::Skip(z) => z.remove(member),
            Repr::Packed(b) => {
                let (_, s) = packed::find(b, member)?;
                let (old, range) = (s.score, s.start..s.end);
                super::packed::splice(b, range, &[]);
                Some(old)
            }
        }
    }

    /// Members in ascending (score, member) order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// Ascending from zero-based rank `start`.
    pub fn iter_from(&self, start: usize) -> Iter<'_> {
        match &self.0 {
            Repr::Skip(z) => Iter::Skip(z.iter_from(start)),
            Repr::Packed(b) => Iter::Packed(
                packed::slots(b)
                    .skip(start)
                    .map(|s| (s.member, s.score))
                    .collect::<Vec<_>>()
                    .into_iter(),
            ),
        }
    }

    /// Descending from zero-based rank `start` (the element at `start` first).
    pub fn rev_iter_from(&self, start: usize) -> std::iter::Rev<Iter<'_>> {
        match &self.0 {
            Repr::Skip(z) => Iter::SkipRev(z.rev_iter_from(start)).rev(),
            Repr::Packed(b) => {
                let mut upto: Vec<_> = packed::slots(b)
                    .take(start.saturating_add(1))
                    .map(|s| (s.member, s.score))
                    .collect();
                // As the skiplist's: nothing when `start` is past the end.
                if upto.len() <= start {
                    upto.clear();
                }
                Iter::Packed(upto.into_iter()).rev()
            }
        }
    }

    /// Zero-based rank in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        match &self.0 {
            Repr::Skip(z) => z.rank(member),
            Repr::Packed(b) => packed::find(b, member).map(|(i, _)| i),
        }
    }

    /// The member and score at zero-based rank `rank`.
    pub fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        match &self.0 {
            Repr::Skip(z) => z.get_by_rank(rank),
            Repr::Packed(b) => packed::slots(b).nth(rank).map(|s| (s.member, s.score)),
        }
    }

    /// Zero-based rank of the first element within `r`.
    pub fn first_in_score_range(&self, r: &ScoreRange) -> Option<usize> {
        match &self.0 {
            Repr::Skip(z) => z.first_in_score_range(r),
            Repr::Packed(b) => packed::first_in_score_range(b, r),
        }
    }

    /// Zero-based rank of the last element within `r`.
    pub fn last_in_score_range(&self, r: &ScoreRange) -> Option<usize> {
        match &self.0 {
            Repr::Skip(z) => z.last_in_score_range(r),
            Repr::Packed(b) => packed::last_in_score_range(b, r),
        }
    }

    /// Number of elements within `r`.
    pub fn count_in_score_range(&self, r: &ScoreRange) -> usize {
        match &self.0 {
            Repr::Skip(z) => z.count_in_score_range(r),
            Repr::Packed(b) => match (
                packed::first_in_score_range(b, r),
                packed::last_in_score_range(b, r),
            ) {
                (Some(a), Some(b)) if b >= a => b - a + 1,
                _ => 0,
            },
        }
    }

    /// Zero-based rank of the first element of a lex range, found the way the set's
    /// encoding finds it in Redis (see zset_packed.rs).
    pub fn first_in_lex_range(&self, r: &LexRange) -> Option<usize> {
        match &self.0 {
            Repr::Skip(z) => z.first_in_lex_range(r),
            Repr::Packed(b) => packed::first_in_lex_range(b, r),
        }
    }

    /// Zero-based rank of the last element of a lex range (see `first_in_lex_range`).
    pub fn last_in_lex_range(&self, r: &LexRange) -> Option<usize> {
        match &self.0 {
            Repr::Skip(z) => z.last_in_lex_range(r),
            Repr::Packed(b) => packed::last_in_lex_range(b, r),
        }
    }

    /// Number of elements of a lex range, counted the way the encoding would count them.
    pub fn count_in_lex_range(&self, r: &LexRange) -> usize {
        match &self.0 {
            Repr::Skip(z) => z.count_in_lex_range(r),
            Repr::Packed(b) => packed::count_in_lex_range(b, r),
        }
    }

    /// Removes zero-based ranks `start..=end` and returns them in order.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> Vec<(Vec<u8>, f64)> {
        match &mut self.0 {
            Repr::Skip(z) => z.remove_rank_range(start, end),
            Repr::Packed(b) => {
                let len = packed::len(b);
                if start > end || start >= len {
                    return Vec::new();
                }
                packed::remove_ranks(b, start, end.min(len - 1))
            }
        }
    }

    /// The bytes this set holds, for used_memory.
    pub fn approx_size(&self) -> usize {
        match &self.0 {
            Repr::Packed(b) => super::packed::heap_size(b.len()),
            Repr::Skip(z) => z.len() * 48 + z.iter().map(|(m, _)| m.len()).sum::<usize>() + 64,
        }
    }
}

/// (member, score) pairs in order, from either end.
pub enum Iter<'a> {
    Packed(std::vec::IntoIter<(&'a [u8], f64)>),
    Skip(skip::Iter<'a>),
    /// The skiplist's descending iterator, held backwards so `.rev()` gives it back.
    SkipRev(std::iter::Rev<skip::Iter<'a>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Packed(it) => it.next(),
            Iter::Skip(it) => it.next().map(|(m, s)| (&m[..], s)),
            Iter::SkipRev(it) => it.next_back().map(|(m, s)| (&m[..], s)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Packed(it) => it.size_hint(),
            Iter::Skip(it) => it.size_hint(),
            Iter::SkipRev(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Packed(it) => it.next_back(),
            Iter::Skip(it) => it.next_back().map(|(m, s)| (&m[..], s)),
            Iter::SkipRev(it) => it.next().map(|(m, s)| (&m[..], s)),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::zset::LexBound;

    /// The packed form answers every query as the skiplist does (lex ranges over one score,
    /// where both scans agree), through random inserts, updates and removals.
    #[test]
    fn packed_and_skiplist_agree() {
        let l = Limits::unbounded();
        let (mut p, mut s) = (ZSet::new(), ZSet::new_unpacked());
        let mut x: u64 = 99;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = format!("m{}", x % 40).into_bytes();
            let score = [0.0, 1.0, 2.5, 300.0, -7.0, 1e10][(x >> 8) as usize % 6];
            if x.is_multiple_of(4) {
                assert_eq!(p.remove(&m), s.remove(&m));
            } else {
                assert_eq!(p.insert(&m, score, &l), s.insert(&m, score, &l));
            }
            assert!(p.is_listpack() && !s.is_listpack());
            let a: Vec<_> = p.iter().collect();
            assert_eq!(a, s.iter().collect::<Vec<_>>());
            assert_eq!(p.len(), s.len());
            for start in [0, 1, a.len().saturating_sub(1), a.len(), a.len() + 3] {
                assert_eq!(
                    p.rev_iter_from(start).collect::<Vec<_>>(),
                    s.rev_iter_from(start).collect::<Vec<_>>()
                );
                assert_eq!(p.get_by_rank(start), s.get_by_rank(start));
            }
            assert_eq!(p.rank(&m), s.rank(&m));
            let r = ScoreRange {
                min: 0.0,
                max: 300.0,
                minex: x.is_multiple_of(3),
                maxex: x.is_multiple_of(5),
            };
            assert_eq!(p.first_in_score_range(&r), s.first_in_score_range(&r));
            assert_eq!(p.last_in_score_range(&r), s.last_in_score_range(&r));
            assert_eq!(p.count_in_score_range(&r), s.count_in_score_range(&r));
        }
        let (mut p, mut s) = (ZSet::new(), ZSet::new_unpacked());
        for m in ["a", "c", "e", "g"] {
            p.insert(m.as_bytes(), 1.0, &l);
            s.insert(m.as_bytes(), 1.0, &l);
        }
        let r = LexRange {
            min: LexBound::Str(b"b".to_vec()),
            max: LexBound::Str(b"f".to_vec()),
            minex: false,
            maxex: true,
        };
        assert_eq!(p.first_in_lex_range(&r), s.first_in_lex_range(&r));
        assert_eq!(p.last_in_lex_range(&r), s.last_in_lex_range(&r));
        assert_eq!(p.count_in_lex_range(&r), 2);
        assert_eq!(p.remove_rank_range(1, 2), s.remove_rank_range(1, 2));
        assert_eq!(p.iter().collect::<Vec<_>>(), s.iter().collect::<Vec<_>>());
    }

    #[test]
    fn converts_past_the_limits_and_stays_converted() {
        let l = Limits {
            zset_max_listpack_entries: 2,
            zset_max_listpack_value: 3,
            ..Limits::default()
        };
        let mut z = ZSet::new();
        z.insert(b"a", 1.0, &l);
        z.insert(b"b", 2.0, &l);
        assert!(z.is_listpack());
        z.insert(b"a", 5.0, &l);
        assert!(z.is_listpack(), "an update adds no entry");
        z.insert(b"c", 3.0, &l);
        assert!(!z.is_listpack());
        z.remove(b"c");
        assert!(!z.is_listpack(), "a skiplist stays one");
        z.fit_encoding(&l);
        assert!(z.is_listpack(), "a computed or loaded set fits");
        z.insert(b"long", 1.0, &l);
        assert!(!z.is_listpack(), "a member past the value limit converts");
    }
}
