//! The SCAN family's cursor, shared by SCAN, HSCAN, SSCAN and ZSCAN.
//!
//! As in Redis, a cursor names a bucket of a hash table and advances in reverse-binary
//! order (the bucket index is incremented from its highest bit down), so cursors stay below
//! the table size and an element present for the whole iteration is returned even when the
//! table grows or shrinks between calls. redlab keeps no real bucket array for this: each
//! element has a fixed 64-bit hash (`element_hash`), and a collection of n elements is
//! scanned as if it sat in a table of Redis's size for n (the next power of two, at least
//! 4), bucket = hash & (size - 1). Visiting the buckets in reverse-binary order is visiting
//! the elements by the reversed low bits of their hashes, so for any table size the buckets
//! already visited are exactly those below the cursor in that order: when the table grows a
//! bucket splits into buckets that all sort where it did, and when it shrinks a bucket
//! merges with others that all sort at or before the cursor, so an unvisited element can
//! never end up behind the cursor (a merged bucket may return an element twice, as Redis
//! may). Each call visits whole buckets until it has at least COUNT elements, or has visited
//! 10 x COUNT buckets, as Redis's SCAN does. Cursor 0 starts and ends an iteration.

use crate::errors;
use crate::reply::Reply;

/// The hash an element is bucketed by; the same every run.
#[cfg(test)]
pub fn element_hash(b: &[u8]) -> u64 {
    super::Db::key_hash(b)
}

/// Redis's table size for `n` elements: a dict grows to the next power of two once it is
/// full, and never below 4. Returned as its log2.
fn table_bits(n: usize) -> u32 {
    n.max(4).next_power_of_two().trailing_zeros()
}

/// A bucket index with its low `bits` bits reversed: the order SCAN visits buckets in.
fn reverse(x: u64, bits: u32) -> u64 {
    x.reverse_bits() >> (64 - bits)
}

/// One step: from `(hash, item)` pairs (the whole collection), the items of the buckets
/// visited from `cursor`, in visiting order, and the cursor to continue from (0 when the
/// iteration is complete).
pub fn step<T>(
    items: impl IntoIterator<Item = (u64, T)>,
    cursor: u64,
    count: usize,
) -> (Vec<T>, u64) {
    let items: Vec<(u64, T)> = items.into_iter().collect();
    let bits = table_bits(items.len());
    let last = (1u64 << bits) - 1;
    let start = reverse(cursor & last, bits);
    let mut due: Vec<(u64, u64, T)> = items
        .into_iter()
        .map(|(h, t)| (reverse(h & last, bits), h, t))
        .filter(|(pos, _, _)| *pos >= start)
        .collect();
    let count = count.max(1);
    // Redis stops once it has `count` elements, or after 10 x count buckets, empty or not.
    let budget = (count as u64).saturating_mul(10).saturating_add(1);
    let mut end = start.saturating_add(budget - 1).min(last);
    if due.len() >= count {
        due.select_nth_unstable_by_key(count - 1, |(pos, _, _)| *pos);
        end = end.min(due[count - 1].0);
    }
    let mut taken: Vec<(u64, u64, T)> = due.into_iter().filter(|(pos, _, _)| *pos <= end).collect();
    taken.sort_by_key(|(pos, h, _)| (*pos, *h));
    let next = if end == last {
        0
    } else {
        reverse(end + 1, bits)
    };
    (taken.into_iter().map(|(_, _, t)| t).collect(), next)
}

/// Parses a cursor as Redis does (`strtoul` base 10 over a C string): an optional sign,
/// digits, nothing else up to the first NUL byte (so "\0abc" is 0); a negative number wraps;
/// leading space or overflow is "ERR invalid cursor". SCAN, SSCAN, HSCAN and ZSCAN share it.
pub fn parse_cursor(arg: &[u8]) -> Result<u64, Reply> {
    let err = || Reply::err(errors::INVALID_CURSOR);
    let arg = errors::c_prefix(arg);
    let (neg, digits) = match arg.first() {
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        _ => (false, arg),
    };
    if digits.is_empty() {
        // strtoul consumed nothing: with nothing else left over it reads as 0.
        return if arg.is_empty() { Ok(0) } else { Err(err()) };
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return Err(err());
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((c - b'0') as u64))
            .ok_or_else(err)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// The cursor as the profile's server reads it: Redis with `parse_cursor`; Valkey 8 with
/// `string2ull`, which refuses an empty or negative cursor that Redis reads as 0 or wraps.
pub fn parse_cursor_in(profile: crate::compat::Profile, arg: &[u8]) -> Result<u64, Reply> {
    match profile.family() {
        crate::compat::Family::Redis => parse_cursor(arg),
        crate::compat::Family::Valkey => parse_cursor_valkey(arg),
    }
}

/// Valkey's `string2ull` over a C string: a strict integer (`string2ll`) that must not be
/// negative, else `strtoull`'s reading (leading white space, a sign, digits to the end, a
/// negative number wrapping), with overflow or anything left over refused.
fn parse_cursor_valkey(arg: &[u8]) -> Result<u64, Reply> {
    let err = || Reply::err(errors::INVALID_CURSOR);
    let s = errors::c_prefix(arg);
    if let Some(v) = crate::numfmt::parse_i64(s) {
        return u64::try_from(v).map_err(|_| err());
    }
    let s = &s[s
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t'..=b'\r'))
        .count()..];
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(err());
    }
    let v = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse::<u64>().ok())
        .ok_or_else(err)?;
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// What is being scanned: the options each scan takes differ (TYPE only for SCAN, NOVALUES
/// only for HSCAN), and so do the errors for the ones it does not take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scanned {
    Keys,
    Hash,
    Set,
    ZSet,
}

/// The options after the cursor: MATCH pattern, COUNT n (default 10), TYPE t for SCAN and
/// NOVALUES for HSCAN.
#[derive(Debug, Default)]
pub struct ScanOptions {
    pub count: usize,
    /// None when absent or `*` (everything matches).
    pub pattern: Option<Vec<u8>>,
    pub type_name: Option<Vec<u8>>,
    /// HSCAN NOVALUES: fields only.
    pub novalues: bool,
    /// ZSCAN NOSCORES (Valkey 8.0): members only.
    pub noscores: bool,
}

impl ScanOptions {
    pub fn matches(&self, item: &[u8]) -> bool {
        self.pattern
            .as_deref()
            .is_none_or(|p| crate::glob::matches(p, item, false))
    }
}

/// Parses `rest` (what follows the cursor) with Redis's errors, for one of the four scans.
/// `known` is asked when NOVALUES or NOSCORES (lower case) stands where an option goes:
/// whether the server's version has it (NOVALUES: Redis 7.4, Valkey 8.0; NOSCORES: Valkey
/// 8.0). A version without it answers a syntax error, one with it refuses it outside HSCAN
/// (ZSCAN).
pub fn parse_options(
    rest: &[bytes::Bytes],
    scanned: Scanned,
    known: impl Fn(&str) -> bool,
) -> Result<ScanOptions, Reply> {
    let mut o = ScanOptions {
        count: 10,
        ..ScanOptions::default()
    };
    let mut i = 0;
    while i < rest.len() {
        let more = rest.len() - i >= 2;
        let a = &rest[i];
        if a.eq_ignore_ascii_case(b"count") && more {
            let n = crate::numfmt::parse_i64(&rest[i + 1])
                .ok_or_else(|| Reply::err(errors::NOT_INTEGER))?;
            if n < 1 {
                return Err(Reply::err(errors::SYNTAX));
            }
            o.count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if a.eq_ignore_ascii_case(b"match") && more {
            let p = &rest[i + 1];
            // "*" matches everything: skip the matcher, as Redis does.
            o.pattern = if &p[..] == b"*" {
                None
            } else {
                Some(p.to_vec())
            };
        } else if a.eq_ignore_ascii_case(b"type") && scanned == Scanned::Keys && more {
            o.type_name = Some(rest[i + 1].to_vec());
        } else if a.eq_ignore_ascii_case(b"novalues") && known("novalues") {
            if scanned != Scanned::Hash {
                return Err(Reply::err(errors::NOVALUES_ONLY_HSCAN));
            }
            o.novalues = true;
            i += 1;
            continue;
        } else if a.eq_ignore_ascii_case(b"noscores") && known("noscores") {
            if scanned != Scanned::ZSet {
                return Err(Reply::err(errors::NOSCORES_ONLY_ZSCAN));
            }
            o.noscores = true;
            i += 1;
            continue;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 2;
    }
    Ok(o)
}

/// The SCAN reply: the next cursor as a bulk string, then the elements.
pub fn reply(next: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::bulk(next.to_string()), Reply::Array(items)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn scan_all(keys: &[u64], count: usize) -> Vec<u64> {
        let mut cursor = 0;
        let mut seen = Vec::new();
        loop {
            let (got, next) = step(keys.iter().map(|&h| (h, h)), cursor, count);
            seen.extend(got);
            if next == 0 {
                return seen;
            }
            cursor = next;
        }
    }

    #[test]
    fn returns_every_element_once() {
        let keys: Vec<u64> = (0..1000u64)
            .map(|i| element_hash(format!("k{i}").as_bytes()))
            .collect();
        for count in [1, 3, 10, 999, 5000] {
            let seen = scan_all(&keys, count);
            assert_eq!(seen.len(), keys.len(), "count {count}");
            assert_eq!(seen.iter().collect::<HashSet<_>>().len(), keys.len());
        }
    }

    #[test]
    fn cursors_are_reverse_binary_bucket_indices_below_the_table_size() {
        // 100 elements: a table of 128 buckets, visited 0, 64, 32, 96, 16, ...
        let keys: Vec<u64> = (0..100u64)
            .map(|i| element_hash(format!("key:{i}").as_bytes()))
            .collect();
        let mut cursor = 0;
        let mut cursors = Vec::new();
        loop {
            let (_, next) = step(keys.iter().map(|&h| (h, h)), cursor, 1);
            if next == 0 {
                break;
            }
            assert!(next < 128, "{next}");
            cursors.push(next);
            cursor = next;
        }
        let order: Vec<u64> = cursors.iter().map(|&c| reverse(c, 7)).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
        // With COUNT 1 a bucket at a time: the first steps are Redis's first buckets.
        let (_, first) = step(keys.iter().map(|&h| (h, h)), 0, 1);
        assert!([64, 32, 96].contains(&first) || first == 0, "{first}");
    }

    #[test]
    fn a_bucket_comes_whole() {
        // Three elements in bucket 0 of a 4-bucket table, then one in bucket 1 (visited last).
        let keys = [0u64, 4, 8, 1];
        let (got, next) = step(keys.iter().map(|&h| (h, h)), 0, 1);
        assert_eq!(got, vec![0, 4, 8]);
        assert_eq!(next, 2);
        assert_eq!(scan_all(&keys, 1).len(), 4);
    }

    #[test]
    fn empty_buckets_count_against_ten_times_count() {
        // 1024 buckets, elements only in the last one visited (index 1023).
        let keys: Vec<u64> = (0..600u64).map(|i| 1023 + (i << 10)).collect();
        let (got, next) = step(keys.iter().map(|&h| (h, h)), 0, 1);
        assert!(got.is_empty());
        assert_eq!(
            reverse(next, 10),
            11,
            "visited 11 buckets, continues at the 12th"
        );
        assert_eq!(scan_all(&keys, 1).len(), 600);
    }

    /// Elements present throughout are all returned whatever happens between calls: the
    /// collection grows past several table sizes, or shrinks to a few elements.
    #[test]
    fn survives_growth_and_shrinking_between_steps() {
        for (grow, count) in [(true, 1), (true, 7), (false, 1), (false, 5)] {
            let stable: Vec<u64> = (0..50u64)
                .map(|i| element_hash(format!("s{i}").as_bytes()))
                .collect();
            let mut extra: Vec<u64> = if grow {
                Vec::new()
            } else {
                (0..2000u64)
                    .map(|i| element_hash(format!("x{i}").as_bytes()))
                    .collect()
            };
            let mut cursor = 0;
            let mut seen = HashSet::new();
            let mut round = 0u64;
            loop {
                let all: Vec<u64> = stable.iter().chain(&extra).copied().collect();
                let (got, next) = step(all.iter().map(|&h| (h, h)), cursor, count);
                seen.extend(got);
                if grow && round < 30 {
                    extra.extend((0..40).map(|j| element_hash(format!("g{round}:{j}").as_bytes())));
                } else if !grow {
                    extra.truncate(extra.len().saturating_sub(150));
                }
                round += 1;
                if next == 0 {
                    break;
                }
                cursor = next;
            }
            let missing: Vec<&u64> = stable.iter().filter(|h| !seen.contains(h)).collect();
            assert!(
                missing.is_empty(),
                "grow={grow} count={count}: {} missed",
                missing.len()
            );
        }
    }

    #[test]
    fn cursor_parsing_follows_strtoul() {
        assert_eq!(parse_cursor(b"0").unwrap(), 0);
        assert_eq!(parse_cursor(b"").unwrap(), 0);
        assert_eq!(parse_cursor(b"+12").unwrap(), 12);
        assert_eq!(parse_cursor(b"-1").unwrap(), u64::MAX);
        assert_eq!(parse_cursor(b"18446744073709551615").unwrap(), u64::MAX);
        assert!(parse_cursor(b"18446744073709551616").is_err());
        assert!(parse_cursor(b" 1").is_err());
        assert!(parse_cursor(b"1x").is_err());
        assert!(parse_cursor(b"-").is_err());
        assert_eq!(parse_cursor(b"\0\xff\r\n").unwrap(), 0);
        assert_eq!(parse_cursor(b"12\0x").unwrap(), 12);
    }

    #[test]
    fn valkey_cursors_parse_like_string2ull() {
        let valkey = |a: &[u8]| parse_cursor_in(crate::compat::Profile::Valkey81, a);
        assert!(valkey(b"").is_err());
        assert!(valkey(b"-1").is_err());
        assert!(valkey(b"-").is_err());
        assert!(valkey(b"1 ").is_err());
        assert!(valkey(b"18446744073709551616").is_err());
        assert_eq!(valkey(b" 1").unwrap(), 1);
        assert_eq!(valkey(b"+5").unwrap(), 5);
        assert_eq!(valkey(b"007").unwrap(), 7);
        assert_eq!(valkey(b"-0").unwrap(), 0);
        assert_eq!(valkey(b"-18446744073709551615").unwrap(), 1);
        assert_eq!(valkey(b"18446744073709551615").unwrap(), u64::MAX);
    }
}
