//! A small sorted set packed in one buffer: Redis's listpack encoding for sorted sets.
//!
//! Entries are in (score, member) order, each a member item (`packed`) followed by its score
//! in 1 to 9 bytes: integral scores take 1 byte up to 249, 3 bytes as an i16, 5 as an i32,
//! and anything else 9 (a tag and the f64). Ten members with small integer scores then cost
//! about their own bytes, as in Redis's listpack (issue 17). Every query scans, as Redis's
//! listpack code does; `ZSet` (zset_value.rs) keeps these sets within
//! zset-max-listpack-entries.
//!
//! Like a listpack, the form stores an integral score as an integer, so -0 reads back as 0.

use super::packed::{self, Items};
use super::zset::{LexRange, ScoreRange};

const TAG_I16: u8 = 0xfb;
const TAG_I32: u8 = 0xfc;
const TAG_F64: u8 = 0xfd;
/// Tags below this are the score itself.
const SMALL_MAX: u8 = 0xfa;

fn push_score(out: &mut Vec<u8>, s: f64) {
    let int = s.is_finite() && s == s.trunc() && s.abs() < 2147483648.0;
    if int && (0.0..f64::from(SMALL_MAX)).contains(&s) {
        out.push(s as u8);
    } else if int && s.abs() < 32768.0 {
        out.push(TAG_I16);
        out.extend_from_slice(&(s as i16).to_le_bytes());
    } else if int {
        out.push(TAG_I32);
        out.extend_from_slice(&(s as i32).to_le_bytes());
    } else {
        out.push(TAG_F64);
        out.extend_from_slice(&s.to_le_bytes());
    }
}

fn read_score(b: &[u8], pos: usize) -> (f64, usize) {
    let tag = b[pos];
    let p = pos + 1;
    match tag {
        TAG_I16 => (f64::from(i16::from_le_bytes([b[p], b[p + 1]])), p + 2),
        TAG_I32 => (
            f64::from(i32::from_le_bytes(b[p..p + 4].try_into().expect("4 bytes"))),
            p + 4,
        ),
        TAG_F64 => (
            f64::from_le_bytes(b[p..p + 8].try_into().expect("8 bytes")),
            p + 8,
        ),
        small => (f64::from(small), p),
    }
}

/// One entry of a packed set: where it starts and ends, its member and score.
#[derive(Clone, Copy)]
pub struct Slot<'a> {
    pub start: usize,
    pub end: usize,
    pub member: &'a [u8],
    pub score: f64,
}

/// The entries in order.
pub fn slots(b: &[u8]) -> impl Iterator<Item = Slot<'_>> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= b.len() {
            return None;
        }
        let start = pos;
        let mut items = Items::new(&b[pos..]);
        let member = items.next()?;
        let (score, end) = read_score(b, pos + items.pos());
        pos = end;
        Some(Slot {
            start,
            end,
            member,
            score,
        })
    })
}

pub fn len(b: &[u8]) -> usize {
    slots(b).count()
}

/// The entry of `member` and its rank.
pub fn find<'a>(b: &'a [u8], member: &[u8]) -> Option<(usize, Slot<'a>)> {
    slots(b).enumerate().find(|(_, s)| s.member == member)
}

/// Inserts a member that is not there, at its place in (score, member) order.
pub fn insert(b: &mut Box<[u8]>, member: &[u8], score: f64) {
    let at = slots(b)
        .find(|s| s.score > score || (s.score == score && s.member > member))
        .map_or(b.len(), |s| s.start);
    let mut entry = Vec::with_capacity(packed::item_size(member.len()) + 9);
    packed::push_item(&mut entry, member);
    push_score(&mut entry, score);
    packed::splice(b, at..at, &entry);
}

/// Removes ranks `start..=end` (already clamped to the set); returns them in order.
pub fn remove_ranks(b: &mut Box<[u8]>, start: usize, end: usize) -> Vec<(Vec<u8>, f64)> {
    let chosen: Vec<Slot> = slots(b).skip(start).take(end + 1 - start).collect();
    let (Some(first), Some(last)) = (chosen.first(), chosen.last()) else {
        return Vec::new();
    };
    let range = first.start..last.end;
    let out = chosen
        .iter()
        .map(|s| (s.member.to_vec(), s.score))
        .collect();
    packed::splice(b, range, &[]);
    out
}

/// The first and the last entry.
fn ends(b: &[u8]) -> Option<(Slot<'_>, Slot<'_>)> {
    let mut all = slots(b);
    let first = all.next()?;
    Some((first, all.last().unwrap_or(first)))
}

/// Whether a score range can hold anything here (Redis's `zzlIsInRange`).
fn score_overlaps(b: &[u8], r: &ScoreRange) -> bool {
    !r.is_empty() && ends(b).is_some_and(|(f, l)| r.gte_min(l.score) && r.lte_max(f.score))
}

/// Whether a lex range can hold anything here, judged on the first and last entries only
/// (Redis's `zzlIsInLexRange`; with mixed scores that decides the answer).
fn lex_overlaps(b: &[u8], r: &LexRange) -> bool {
    !r.is_empty() && ends(b).is_some_and(|(f, l)| r.gte_min(l.member) && r.lte_max(f.member))
}

/// Rank of the first entry within a score range.
pub fn first_in_score_range(b: &[u8], r: &ScoreRange) -> Option<usize> {
    if !score_overlaps(b, r) {
        return None;
    }
    first_within(b, |s| r.gte_min(s.score), |s| r.lte_max(s.score))
}

/// Rank of the last entry within a score range.
pub fn last_in_score_range(b: &[u8], r: &ScoreRange) -> Option<usize> {
    if !score_overlaps(b, r) {
        return None;
    }
    last_within(b, |s| r.gte_min(s.score), |s| r.lte_max(s.score))
}

/// Rank of the first entry of a lex range, scanning from the head as Redis's listpack code
/// does (with members of different scores the order is not lexicographic, and the scan's
/// answer is the one Redis gives).
pub fn first_in_lex_range(b: &[u8], r: &LexRange) -> Option<usize> {
    if !lex_overlaps(b, r) {
        return None;
    }
    first_within(b, |s| r.gte_min(s.member), |s| r.lte_max(s.member))
}

/// Rank of the last entry of a lex range, scanning from the tail.
pub fn last_in_lex_range(b: &[u8], r: &LexRange) -> Option<usize> {
    if !lex_overlaps(b, r) {
        return None;
    }
    last_within(b, |s| r.gte_min(s.member), |s| r.lte_max(s.member))
}

/// The first entry from the head that passes the range's minimum, if it is also within the
/// maximum: the scan Redis's listpack code does for both kinds of range.
fn first_within(
    b: &[u8],
    min_ok: impl Fn(&Slot) -> bool,
    max_ok: impl Fn(&Slot) -> bool,
) -> Option<usize> {
    let (i, s) = slots(b).enumerate().find(|(_, s)| min_ok(s))?;
    max_ok(&s).then_some(i)
}

/// The first entry from the tail within the range's maximum, if it also passes the minimum.
fn last_within(
    b: &[u8],
    min_ok: impl Fn(&Slot) -> bool,
    max_ok: impl Fn(&Slot) -> bool,
) -> Option<usize> {
    let all: Vec<Slot> = slots(b).collect();
    let (i, s) = all.iter().enumerate().rev().find(|(_, s)| max_ok(s))?;
    min_ok(s).then_some(i)
}

/// Entries of a lex range, counted forward from the first while they stay within it.
pub fn count_in_lex_range(b: &[u8], r: &LexRange) -> usize {
    match first_in_lex_range(b, r) {
        Some(first) => slots(b)
            .skip(first)
            .take_while(|s| r.lte_max(s.member))
            .count(),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_round_trip_in_every_width() {
        let mut b: Box<[u8]> = Box::default();
        let scores = [
            0.0,
            249.0,
            250.0,
            -1.0,
            40000.0,
            -3e9,
            1.5,
            f64::INFINITY,
            -0.0,
        ];
        for (i, s) in scores.iter().enumerate() {
            insert(&mut b, format!("m{i}").as_bytes(), *s);
        }
        let mut got: Vec<(String, f64)> = slots(&b)
            .map(|s| (String::from_utf8(s.member.to_vec()).unwrap(), s.score))
            .collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, s) in scores.iter().enumerate() {
            assert_eq!(got[i].1, *s, "score {s}");
        }
        let zero = slots(&b).find(|s| s.member == b"m8").unwrap();
        assert!(zero.score.is_sign_positive(), "-0 is stored as 0");
        let ordered: Vec<f64> = slots(&b).map(|s| s.score).collect();
        assert!(ordered.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn equal_scores_order_by_member_and_ranks_remove() {
        let mut b: Box<[u8]> = Box::default();
        for m in ["c", "a", "b", "d"] {
            insert(&mut b, m.as_bytes(), 1.0);
        }
        let members: Vec<&[u8]> = slots(&b).map(|s| s.member).collect();
        assert_eq!(members, vec![&b"a"[..], b"b", b"c", b"d"]);
        let gone = remove_ranks(&mut b, 1, 2);
        assert_eq!(gone, vec![(b"b".to_vec(), 1.0), (b"c".to_vec(), 1.0)]);
        assert_eq!(len(&b), 2);
        assert_eq!(find(&b, b"d").map(|(i, _)| i), Some(1));
    }
}
