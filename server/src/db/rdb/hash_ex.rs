//! Hashes with field deadlines in DUMP/RESTORE payloads (Redis 7.4's hash field expiration,
//! RDB version 12), written and read as Redis 7.4's rdb.c does, from its source: no 7.4
//! server runs here to compare bytes with.
//!
//! * `RDB_TYPE_HASH_LISTPACK_EX` (25), a small hash: the earliest deadline as an 8-byte
//!   little-endian millisecond time, then one listpack of `field, value, deadline` triples,
//!   the deadline an integer, 0 for a field without one. Redis keeps that listpack ordered
//!   (listpackExAddNew): fields with a deadline first, earliest first, then the others.
//! * `RDB_TYPE_HASH_METADATA` (24), a hashtable: the earliest deadline (8 bytes), the field
//!   count, then per field its deadline as a length (0: none, else deadline - earliest + 1),
//!   the field and the value.
//!
//! A hash with no deadline is written as before (types 16 and 4).

use super::reader::Reader;
use super::{listpack, write_len, write_string};
use crate::db::encoding::Limits;
use crate::db::hash_ttl::Deadlines;
use crate::db::{HashValue, Value};

pub const HASH_METADATA: u8 = 24;
pub const HASH_LISTPACK_EX: u8 = 25;

/// Writes type byte and body of a hash with at least one deadline; `packed`: the hash is a
/// listpack under the server's limits.
pub fn write(out: &mut Vec<u8>, h: &HashValue, deadlines: &Deadlines, packed: bool) {
    let earliest = deadlines.values().copied().min().unwrap_or(0);
    let at = |f: &[u8]| deadlines.get(f).copied();
    if packed {
        out.push(HASH_LISTPACK_EX);
        out.extend_from_slice(&earliest.to_le_bytes());
        let mut timed: Vec<(&[u8], &[u8], i64)> = Vec::new();
        let mut plain: Vec<(&[u8], &[u8])> = Vec::new();
        for (f, v) in h.iter() {
            match at(f) {
                Some(t) => timed.push((f, v, t)),
                None => plain.push((f, v)),
            }
        }
        timed.sort_by_key(|&(_, _, t)| t);
        let mut w = listpack::Writer::new();
        for (f, v, t) in timed {
            w.push(f);
            w.push(v);
            w.push(t.to_string().as_bytes());
        }
        for (f, v) in plain {
            w.push(f);
            w.push(v);
            w.push(b"0");
        }
        write_string(out, &w.finish());
        return;
    }
    out.push(HASH_METADATA);
    out.extend_from_slice(&earliest.to_le_bytes());
    write_len(out, h.len() as u64);
    for (f, v) in h.iter() {
        let rel = at(f).map_or(0, |t| (t - earliest) as u64 + 1);
        write_len(out, rel);
        write_string(out, f);
        write_string(out, v);
    }
}

/// Reads the body of type `t` (24 or 25): the hash and its fields' deadlines.
pub fn read(r: &mut Reader, t: u8) -> Option<(Value, Deadlines)> {
    let earliest = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
    let mut h = HashValue::new_table();
    let mut deadlines = Deadlines::new();
    let mut add = |f: Vec<u8>, v: Vec<u8>, at: Option<i64>| -> Option<()> {
        if !h.set(&f, &v, &Limits::default()) {
            return None;
        }
        if let Some(at) = at {
            deadlines.insert(f, at);
        }
        Some(())
    };
    if t == HASH_LISTPACK_EX {
        let items = listpack::parse(&r.string()?)?;
        if !items.len().is_multiple_of(3) {
            return None;
        }
        let mut it = items.into_iter();
        while let (Some(f), Some(v), Some(at)) = (it.next(), it.next(), it.next()) {
            let at: i64 = std::str::from_utf8(&at).ok()?.parse().ok()?;
            if at < 0 {
                return None;
            }
            add(f, v, (at != 0).then_some(at))?;
        }
    } else {
        let n = r.len()?;
        for _ in 0..n {
            let rel = r.u64_len()?;
            let f = r.string()?;
            let v = r.string()?;
            let at = match rel {
                0 => None,
                rel => Some(earliest.checked_add(i64::try_from(rel - 1).ok()?)?),
            };
            add(f, v, at)?;
        }
    }
    Some((Value::Hash(h), deadlines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Profile;
    use crate::reply::Reply;
    use crate::test_support::{engine_as, run, T0};

    fn hash(pairs: &[(&str, &str)]) -> HashValue {
        let mut h = HashValue::new_table();
        for (f, v) in pairs {
            h.set(f.as_bytes(), v.as_bytes(), &Limits::default());
        }
        h
    }

    #[test]
    fn listpack_ex_puts_timed_fields_first_earliest_first() {
        let h = hash(&[("a", "1"), ("b", "x"), ("c", "3")]);
        let d = Deadlines::from([(b"c".to_vec(), 5_000), (b"b".to_vec(), 7_000)]);
        let mut out = Vec::new();
        write(&mut out, &h, &d, true);
        assert_eq!(out[0], HASH_LISTPACK_EX);
        assert_eq!(out[1..9], 5_000i64.to_le_bytes());
        let mut r = Reader::new(&out[9..]);
        let items = listpack::parse(&r.string().unwrap()).unwrap();
        let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
        assert_eq!(
            items,
            [
                &b"c"[..],
                b"3",
                b"5000",
                b"b",
                b"x",
                b"7000",
                b"a",
                b"1",
                b"0"
            ]
        );
        let (v, back) = read(&mut Reader::new(&out[1..]), out[0]).unwrap();
        assert_eq!(back, d);
        assert!(matches!(v, Value::Hash(h) if h.len() == 3));
    }

    #[test]
    fn metadata_counts_deadlines_from_the_earliest_plus_one() {
        let h = hash(&[("a", "1"), ("b", "2")]);
        let d = Deadlines::from([(b"b".to_vec(), 9_000)]);
        let mut out = Vec::new();
        write(&mut out, &h, &d, false);
        assert_eq!(out[0], HASH_METADATA);
        assert_eq!(out[1..9], 9_000i64.to_le_bytes());
        // Two fields; `a` without a deadline (0), `b` at earliest + 1 - 1.
        assert_eq!(out[9], 2);
        let rest = &out[10..];
        let a = rest.windows(3).position(|w| w == [0, 1, b'a']);
        let b = rest.windows(3).position(|w| w == [1, 1, b'b']);
        assert!(a.is_some() && b.is_some(), "{out:?}");
        let (_, back) = read(&mut Reader::new(&out[1..]), out[0]).unwrap();
        assert_eq!(back, d);
        // A truncated body or a negative listpack deadline is refused.
        assert!(read(&mut Reader::new(&out[1..out.len() - 1]), out[0]).is_none());
    }

    #[test]
    fn dump_and_restore_carry_field_deadlines_under_74() {
        for p in [Profile::Redis74, Profile::Redis80, Profile::Redis84] {
            let (mut e, _clock) = engine_as(p);
            run(&mut e, &["HSET", "h", "a", "1", "b", "2"]);
            let at = (T0 + 60_000).to_string();
            run(&mut e, &["HPEXPIREAT", "h", &at, "FIELDS", "1", "b"]);
            let Reply::Bulk(payload) = run(&mut e, &["DUMP", "h"]) else {
                panic!("DUMP")
            };
            assert_eq!(payload[0], HASH_LISTPACK_EX, "{p}");
            assert_eq!(payload[payload.len() - 10..payload.len() - 8], [12, 0]);
            let line: [&[u8]; 4] = [b"RESTORE", b"h2", b"0", &payload];
            assert_eq!(e.execute(1, &line), Reply::ok(), "{p}");
            assert_eq!(
                run(&mut e, &["HPEXPIRETIME", "h2", "FIELDS", "2", "a", "b"]),
                Reply::Array(vec![Reply::Int(-1), Reply::Int(T0 + 60_000)]),
                "{p}"
            );
            assert_eq!(run(&mut e, &["HGET", "h2", "b"]), Reply::bulk("2"));
        }
    }
}
