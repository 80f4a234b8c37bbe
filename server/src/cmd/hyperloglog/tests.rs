//! What the conformance cases cannot show: corrupt values never panic, and the sparse and
//! dense paths agree on long random runs.

use super::sketch;
use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn run(e: &mut Engine, args: &[&[u8]]) -> Reply {
    e.execute(1, args)
}

#[test]
fn one_element_gives_redis_bytes() {
    // Bytes taken from redis-server 7.0.15 after `PFADD k a`.
    let mut e = Engine::new(Config::default());
    assert_eq!(run(&mut e, &[b"pfadd", b"k", b"a"]), Reply::Int(1));
    let mut want = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
    want.extend_from_slice(&[0x71, 0xa6, 0x84, 0x4e, 0x57]);
    assert_eq!(run(&mut e, &[b"get", b"k"]), Reply::bulk(want));
}

#[test]
fn corrupt_sparse_bodies_answer_errors_not_panics() {
    let mut e = Engine::new(Config::default());
    let mut seed = 7u64;
    for n in 0..2000 {
        let mut v = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
        for _ in 0..(n % 40) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.push((seed >> 56) as u8);
        }
        run(&mut e, &[b"set", b"k", &v]);
        for cmd in [
            &[&b"pfadd"[..], b"k", b"x", b"y", b"z"][..],
            &[b"pfcount", b"k"],
            &[b"pfcount", b"k", b"other"],
            &[b"pfmerge", b"d", b"k"],
            &[b"pfdebug", b"getreg", b"k"],
            &[b"pfdebug", b"decode", b"k"],
        ] {
            let r = run(&mut e, cmd);
            if let Reply::Error(text) = &r {
                assert!(text.starts_with("INVALIDOBJ"), "{text}");
            }
        }
        run(&mut e, &[b"del", b"k", b"d"]);
    }
}

#[test]
fn sparse_and_dense_agree_through_promotion() {
    let mut sparse = sketch::new_sparse();
    let mut dense = sketch::new_sparse();
    sketch::to_dense(&mut dense).unwrap();
    for n in 0..50_000u32 {
        let elem = format!("elem:{n}");
        assert_eq!(
            sketch::add(&mut sparse, elem.as_bytes(), 3000),
            sketch::add(&mut dense, elem.as_bytes(), 3000)
        );
    }
    assert_eq!(sparse[4], sketch::DENSE);
    assert_eq!(sparse[sketch::HDR..], dense[sketch::HDR..]);
}

#[test]
fn selftest_passes() {
    assert!(super::selftest::run().is_ok());
}

#[test]
fn pfadd_changes_a_dense_value_in_place_and_keeps_the_cache_when_nothing_changed() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &[b"pfadd", b"k", b"a"]);
    assert_eq!(run(&mut e, &[b"pfdebug", b"todense", b"k"]), Reply::Int(1));
    assert_eq!(run(&mut e, &[b"pfcount", b"k"]), Reply::Int(1));
    let get = |e: &mut Engine| match run(e, &[b"get", b"k"]) {
        Reply::Bulk(v) => v.to_vec(),
        other => panic!("GET answered {other:?}"),
    };
    // A known element changes no register: the cached count stays valid (top bit clear).
    assert_eq!(run(&mut e, &[b"pfadd", b"k", b"a"]), Reply::Int(0));
    let v = get(&mut e);
    assert_eq!(
        (v.len(), v[4], v[15] & 0x80),
        (sketch::DENSE_LEN, sketch::DENSE, 0)
    );
    assert_eq!(run(&mut e, &[b"pfadd", b"k", b"b", b"c"]), Reply::Int(1));
    let v = get(&mut e);
    assert_eq!(v[15] & 0x80, 0x80, "the cache is marked stale");
    assert_eq!(run(&mut e, &[b"pfcount", b"k"]), Reply::Int(3));
    // The same elements through the sparse form, then turned dense, give the same registers.
    let mut other = sketch::new_sparse();
    for x in [&b"a"[..], b"b", b"c"] {
        sketch::add(&mut other, x, 3000);
    }
    sketch::to_dense(&mut other).unwrap();
    assert_eq!(v[sketch::HDR..], other[sketch::HDR..]);
    // Not a HyperLogLog: Redis's two errors.
    run(&mut e, &[b"set", b"s", b"abc"]);
    assert_eq!(
        run(&mut e, &[b"pfadd", b"s", b"x"]),
        Reply::err(crate::errors::HLL_WRONGTYPE)
    );
    run(&mut e, &[b"rpush", b"l", b"x"]);
    assert_eq!(
        run(&mut e, &[b"pfadd", b"l", b"x"]),
        Reply::err(crate::errors::WRONGTYPE)
    );
}
