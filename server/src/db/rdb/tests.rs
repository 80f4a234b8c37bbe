//! Payloads captured from a real redis-server 7.0.15 with DUMP: redlab must write the same
//! bytes and read them back.

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn s(v: &str) -> Value {
    Value::Str(v.as_bytes().into())
}

fn list(items: &[&str]) -> Value {
    Value::List(Box::new(
        items.iter().map(|i| i.as_bytes().to_vec()).collect(),
    ))
}

fn hash(pairs: &[(&str, &str)]) -> Value {
    let mut h = crate::db::HashValue::new_table();
    for (k, v) in pairs {
        h.set(k.as_bytes(), v.as_bytes(), &Limits::unbounded());
    }
    h.fit(&Limits::default());
    Value::Hash(h)
}

fn set(items: &[&str]) -> Value {
    let mut s = crate::db::SetValue::new_table();
    for i in items {
        s.insert(i.as_bytes(), &Limits::unbounded());
    }
    s.fit(&Limits::default());
    Value::Set(s)
}

fn zset(items: &[(f64, &str)]) -> Value {
    let mut z = ZSet::new_unpacked();
    for (score, m) in items {
        z.push(m.as_bytes(), *score);
    }
    z.fit_encoding(&Limits::default());
    Value::ZSet(z)
}

fn check(v: &Value, expected_hex: &str) {
    let l = Limits::default();
    let got = dump(v, &l);
    assert_eq!(got, hex(expected_hex), "dump of {v:?}");
    let mut back = restore(&got).expect("restores");
    back.fit_loaded(&l);
    assert_eq!(dump(&back, &l), got, "round trip of {v:?}");
}

#[test]
fn strings_match_redis() {
    check(&s("hello"), "000568656c6c6f0a006372df766534200a");
    check(&s("12345"), "00c139300a009d94ea2793fc08b9");
    check(&s("-100"), "00c09c0a00ff77a3b766addee4");
    check(
        &s("9999999999"),
        "000a393939393939393939390a00d26ac299df53efd2",
    );
    check(
        &s(&"a".repeat(50)),
        "00c30932016161e025000161610a0009ac48b9ab15fbc9",
    );
    check(
        &s("the quick brown fox jumps over the lazy dog the quick brown fox"),
        "00c3343f1f74686520717569636b2062726f776e20666f78206a756d7073206f7665722074201e076c617a7920646f67600ce0042b016f780a001a034b8f0a94984e",
    );
    check(
        &s("abcdefghijklmnopqrstuvwxyz0123456789"),
        "00246162636465666768696a6b6c6d6e6f707172737475767778797a303132333435363738390a00c3d18e5aec8d8f0d",
    );
}

#[test]
fn small_collections_match_redis() {
    check(
        &list(&["a", "b", "c", "1", "2", "300", "-5"]),
        "1201021a1a000000070081610281620281630201010201c12c02dffb02ff0a00e116030401208e17",
    );
    check(
        &hash(&[("f1", "v1"), ("f2", "2"), ("name", "hello world")]),
        "10282800000006008266310382763103826632030201846e616d65058b68656c6c6f20776f726c640cff0a003ef304d6d646f9ac",
    );
    check(
        &set(&["3", "1", "2", "-7"]),
        "0b100200000004000000f9ff0100020003000a003bfa4a3923b1fa84",
    );
    check(
        &set(&["1", "70000"]),
        "0b10040000000200000001000000701101000a002735436efd6656c4",
    );
    check(
        &zset(&[(1.0, "a"), (2.5, "b"), (-3.0, "c"), (1e20, "d")]),
        "1124240000000800816302dffd02816102010181620283322e35048164028531652b323006ff0a00fa2fa3233c43ef1d",
    );
    check(&set(&["a"]), "020101610a006296e97e44d21a6d");
}

#[test]
fn larger_values_match_redis() {
    let fixtures: std::collections::HashMap<&str, &str> = include_str!("testdata/big.hex")
        .lines()
        .filter_map(|l| l.split_once(' '))
        .collect();
    let items: Vec<String> = (1..=600)
        .map(|i| format!("element-number-{i}-padding"))
        .collect();
    let refs: Vec<&str> = items.iter().map(|s| s.as_str()).collect();
    check(&list(&refs), fixtures["biglist"]);
    let members: Vec<(f64, String)> = (1..=130)
        .map(|i| (i as f64 + 0.5, format!("member{i}")))
        .collect();
    let members: Vec<(f64, &str)> = members.iter().map(|(s, m)| (*s, m.as_str())).collect();
    check(&zset(&members), fixtures["zbig"]);
    check(&s(include_str!("testdata/sbig.txt")), fixtures["sbig"]);
}

#[test]
fn bad_payloads_are_refused() {
    let good = dump(&s("hello"), &Limits::default());
    let mut bad_crc = good.clone();
    let n = bad_crc.len();
    bad_crc[n - 1] ^= 1;
    assert_eq!(
        restore(&bad_crc).err(),
        Some(RestoreError::VersionOrChecksum)
    );
    assert_eq!(
        restore(b"short").err(),
        Some(RestoreError::VersionOrChecksum)
    );
    let mut future = good[..good.len() - 10].to_vec();
    future.extend_from_slice(&11u16.to_le_bytes());
    let crc = crc64::crc64(0, &future);
    future.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(
        restore(&future).err(),
        Some(RestoreError::VersionOrChecksum)
    );
    // A valid footer around a truncated body.
    let mut body = vec![types::STRING, 0x20, b'a'];
    body.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(0, &body);
    body.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(restore(&body).err(), Some(RestoreError::BadFormat));
}

#[test]
fn reads_redis6_ziplist_payloads() {
    // DUMP of `RPUSH l a 1` and `HSET h f v` on Redis 6.2 (RDB 9, ziplist nodes).
    let mut body = vec![types::LIST_QUICKLIST, 1];
    let zl: Vec<u8> = {
        let mut z = vec![0u8; 10];
        z.extend_from_slice(&[0x00, 0x01, b'a', 0x03, 0xf2, 0xff]);
        let n = z.len() as u32;
        z[0..4].copy_from_slice(&n.to_le_bytes());
        z[8..10].copy_from_slice(&2u16.to_le_bytes());
        z
    };
    body.push(zl.len() as u8);
    body.extend_from_slice(&zl);
    body.extend_from_slice(&9u16.to_le_bytes());
    let crc = crc64::crc64(0, &body);
    body.extend_from_slice(&crc.to_le_bytes());
    match restore(&body).unwrap() {
        Value::List(l) => assert_eq!(*l, vec![b"a".to_vec(), b"1".to_vec()]),
        other => panic!("{other:?}"),
    }
}
