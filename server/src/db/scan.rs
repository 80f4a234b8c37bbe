//! The SCAN family's cursor, shared by SCAN, HSCAN, SSCAN and ZSCAN.
//!
//! Redis's cursor walks hash-table buckets in reverse-binary order so that rehashing never
//! skips an element. redlab gets the same guarantee more simply: every element has a fixed
//! 64-bit hash (`element_hash`), a step returns the elements with the smallest hashes at or
//! above the cursor, and the next cursor is one past the last hash returned. An element
//! present for the whole iteration is returned exactly once, whatever is added or removed
//! in between; elements sharing a hash are always returned together; the same data scanned
//! twice gives the same steps. Cursor 0 starts and ends an iteration, as in Redis.

use crate::cmd::args;
use crate::errors;
use crate::reply::Reply;

/// The hash an element is ordered by; the same every run.
pub fn element_hash(b: &[u8]) -> u64 {
    super::Db::key_hash(b)
}

/// One step: from `(hash, item)` pairs, the items with hash >= `cursor`, at least `count`
/// of them (fewer only at the end), in hash order, and the cursor to continue from (0 when
/// the iteration is complete).
pub fn step<T>(items: impl IntoIterator<Item = (u64, T)>, cursor: u64, count: usize) -> (Vec<T>, u64) {
    let mut due: Vec<(u64, T)> = items.into_iter().filter(|(h, _)| *h >= cursor).collect();
    let count = count.max(1);
    if due.len() <= count {
        due.sort_unstable_by_key(|(h, _)| *h);
        return (due.into_iter().map(|(_, t)| t).collect(), 0);
    }
    due.select_nth_unstable_by_key(count - 1, |(h, _)| *h);
    let last = due[count - 1].0;
    // Elements sharing the boundary hash must come now: the next cursor starts past it.
    let (mut taken, rest): (Vec<_>, Vec<_>) = due.into_iter().partition(|(h, _)| *h <= last);
    taken.sort_unstable_by_key(|(h, _)| *h);
    let next = if rest.is_empty() { 0 } else { last.wrapping_add(1) };
    (taken.into_iter().map(|(_, t)| t).collect(), next)
}

/// Parses a cursor as Redis does (`strtoul` base 10): an optional sign, digits, nothing
/// else; a negative number wraps; leading space or overflow is "ERR invalid cursor".
pub fn parse_cursor(arg: &[u8]) -> Result<u64, Reply> {
    let err = || Reply::err(errors::INVALID_CURSOR);
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
        v = v.checked_mul(10).and_then(|v| v.checked_add((c - b'0') as u64)).ok_or_else(err)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// The options after the cursor: MATCH pattern, COUNT n (default 10), and TYPE t for SCAN.
#[derive(Debug, Default)]
pub struct ScanOptions {
    pub count: usize,
    /// None when absent or `*` (everything matches).
    pub pattern: Option<Vec<u8>>,
    pub type_name: Option<Vec<u8>>,
}

impl ScanOptions {
    pub fn matches(&self, item: &[u8]) -> bool {
        self.pattern.as_deref().is_none_or(|p| crate::glob::matches(p, item, false))
    }
}

/// Parses `args` (what follows the cursor) with Redis's errors; `allow_type` only for SCAN.
pub fn parse_options(rest: &[bytes::Bytes], allow_type: bool) -> Result<ScanOptions, Reply> {
    let mut o = ScanOptions { count: 10, pattern: None, type_name: None };
    let mut i = 0;
    while i < rest.len() {
        let more = rest.len() - i >= 2;
        let a = &rest[i];
        if args::is(a, "count") && more {
            let n = args::int(&rest[i + 1])?;
            if n < 1 {
                return Err(Reply::err(errors::SYNTAX));
            }
            o.count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if args::is(a, "match") && more {
            let p = &rest[i + 1];
            o.pattern = if &p[..] == b"*" { None } else { Some(p.to_vec()) };
        } else if args::is(a, "type") && allow_type && more {
            o.type_name = Some(rest[i + 1].to_vec());
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
        let keys: Vec<u64> = (0..1000u64).map(|i| element_hash(format!("k{i}").as_bytes())).collect();
        for count in [1, 3, 10, 999, 5000] {
            let seen = scan_all(&keys, count);
            assert_eq!(seen.len(), keys.len(), "count {count}");
            assert_eq!(seen.iter().collect::<HashSet<_>>().len(), keys.len());
        }
    }

    #[test]
    fn equal_hashes_come_together() {
        let keys = [5, 5, 5, 7, 9];
        let (got, next) = step(keys.iter().map(|&h| (h, h)), 0, 2);
        assert_eq!(got, vec![5, 5, 5]);
        assert_eq!(next, 6);
        assert_eq!(scan_all(&keys, 1).len(), 5);
    }

    #[test]
    fn survives_changes_between_steps() {
        let mut keys: Vec<u64> = (0..200u64).map(|i| element_hash(&i.to_le_bytes())).collect();
        let stable: HashSet<u64> = keys[..100].iter().copied().collect();
        let mut cursor = 0;
        let mut seen = HashSet::new();
        let mut round = 0u64;
        loop {
            let (got, next) = step(keys.iter().map(|&h| (h, h)), cursor, 7);
            seen.extend(got);
            // Churn: remove an unstable key, add a new one.
            if keys.len() > 100 {
                keys.pop();
            }
            keys.push(element_hash(&(10_000 + round).to_le_bytes()));
            round += 1;
            if next == 0 {
                break;
            }
            cursor = next;
        }
        assert!(stable.is_subset(&seen));
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
    }
}
