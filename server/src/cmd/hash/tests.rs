//! What the conformance cases cannot show: keyspace events, random replies, scanning big
//! hashes page by page, expiry.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::errors;
use crate::notify;
use crate::reply::Reply;
use crate::session::ConnId;

const C: ConnId = 1;

pub(crate) fn run(e: &mut Engine, args: &[&str]) -> Reply {
    e.execute(C, args)
}

pub(crate) fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

pub(crate) fn strings(r: &Reply) -> Vec<String> {
    match r {
        Reply::Array(v) | Reply::Set(v) => v
            .iter()
            .map(|x| match x {
                Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("not a bulk: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

/// Turns keyspace events on and listens to every keyevent channel of db 0 on a second
/// connection; `events` reads what arrived.
pub(crate) fn listen(e: &mut Engine) -> ConnId {
    e.notify_flags = notify::parse_flags("KEA").expect("flags");
    let sub = e.connect();
    e.pubsub
        .patterns
        .entry(b"__keyevent@0__:*".to_vec())
        .or_default()
        .insert(sub);
    sub
}

/// (event, key) pairs received since the last call.
pub(crate) fn events(e: &mut Engine, sub: ConnId) -> Vec<(String, String)> {
    e.take_output(sub)
        .into_iter()
        .map(|m| match m {
            Reply::Push(v) => match (&v[2], &v[3]) {
                (Reply::Bulk(ch), Reply::Bulk(key)) => {
                    let ch = String::from_utf8_lossy(ch);
                    let event = ch.rsplit(':').next().unwrap_or_default().to_string();
                    (event, String::from_utf8_lossy(key).into_owned())
                }
                _ => panic!("bad message"),
            },
            other => panic!("not a push: {other:?}"),
        })
        .collect()
}

pub(crate) fn ev(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn writes_send_redis_event_names() {
    let mut e = Engine::new(Config::default());
    let sub = listen(&mut e);
    run(&mut e, &["HSET", "h", "a", "1", "b", "2"]);
    // HSET notifies even when nothing changed.
    run(&mut e, &["HSET", "h", "a", "1"]);
    run(&mut e, &["HMSET", "h", "c", "3"]);
    assert_eq!(
        events(&mut e, sub),
        ev(&[("hset", "h"), ("hset", "h"), ("hset", "h")])
    );

    assert_eq!(run(&mut e, &["HSETNX", "h", "a", "9"]), Reply::Int(0));
    assert_eq!(events(&mut e, sub), ev(&[]));
    run(&mut e, &["HSETNX", "h", "n", "5"]);
    run(&mut e, &["HINCRBY", "h", "n", "1"]);
    run(&mut e, &["HINCRBYFLOAT", "h", "n", "0.5"]);
    assert_eq!(
        events(&mut e, sub),
        ev(&[("hset", "h"), ("hincrby", "h"), ("hincrbyfloat", "h")])
    );

    assert_eq!(run(&mut e, &["HDEL", "h", "zz"]), Reply::Int(0));
    assert_eq!(events(&mut e, sub), ev(&[]));
    run(&mut e, &["HDEL", "h", "a", "b"]);
    run(&mut e, &["HDEL", "h", "c", "n"]);
    assert_eq!(
        events(&mut e, sub),
        ev(&[("hdel", "h"), ("hdel", "h"), ("del", "h")])
    );
}

#[test]
fn failed_increments_change_nothing() {
    let mut e = Engine::new(Config::default());
    let sub = listen(&mut e);
    let dirty = e.dirty;
    assert_eq!(
        run(&mut e, &["HINCRBY", "h", "f", "x"]),
        Reply::err(errors::NOT_INTEGER)
    );
    assert_eq!(
        run(&mut e, &["HINCRBYFLOAT", "h", "f", "inf"]),
        Reply::err(errors::INCR_IS_NAN_OR_INF)
    );
    assert!(!e.db(0).contains(b"h"));
    run(&mut e, &["HSET", "h", "big", "9223372036854775807"]);
    events(&mut e, sub);
    let dirty_after_set = e.dirty;
    assert_eq!(
        run(&mut e, &["HINCRBY", "h", "big", "1"]),
        Reply::err(errors::OVERFLOW)
    );
    assert_eq!(
        run(&mut e, &["HGET", "h", "big"]),
        bulk("9223372036854775807")
    );
    assert_eq!(events(&mut e, sub), ev(&[]));
    assert_eq!(e.dirty, dirty_after_set);
    assert!(dirty_after_set > dirty);
}

#[test]
fn hrandfield_counts_and_membership() {
    let mut e = Engine::new(Config::default());
    let fields: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    for f in &fields {
        run(&mut e, &["HSET", "h", f, &format!("v-{f}")]);
    }
    let all: HashSet<String> = fields.iter().cloned().collect();

    let one = run(&mut e, &["HRANDFIELD", "h"]);
    let Reply::Bulk(b) = one else {
        panic!("{one:?}")
    };
    assert!(all.contains(&String::from_utf8_lossy(&b).into_owned()));

    // Positive count: distinct fields, in the hash's order.
    let got = strings(&run(&mut e, &["HRANDFIELD", "h", "7"]));
    assert_eq!(got.len(), 7);
    assert_eq!(got.iter().collect::<HashSet<_>>().len(), 7);
    assert!(got.iter().all(|f| all.contains(f)));
    let positions: Vec<usize> = got
        .iter()
        .map(|f| fields.iter().position(|x| x == f).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));

    // Negative count: exactly |count| picks, repeats allowed, every field reachable.
    let got = strings(&run(&mut e, &["HRANDFIELD", "h", "-2000"]));
    assert_eq!(got.len(), 2000);
    assert_eq!(got.iter().cloned().collect::<HashSet<_>>(), all);

    // WITHVALUES pairs each field with its own value, flat in RESP2.
    let got = strings(&run(&mut e, &["HRANDFIELD", "h", "-50", "WITHVALUES"]));
    assert_eq!(got.len(), 100);
    for pair in got.chunks(2) {
        assert_eq!(pair[1], format!("v-{}", pair[0]));
    }
}

#[test]
fn hrandfield_withvalues_nests_pairs_in_resp3() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    e.sessions.get_mut(&C).unwrap().resp = 3;
    let Reply::Array(items) = run(&mut e, &["HRANDFIELD", "h", "-4", "WITHVALUES"]) else {
        panic!()
    };
    assert_eq!(items.len(), 4);
    for item in items {
        let Reply::Array(pair) = item else {
            panic!("not a pair")
        };
        assert_eq!(pair.len(), 2);
    }
}

#[test]
fn huge_negative_counts_are_refused_not_allocated() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["HSET", "h", "a", "1"]);
    assert_eq!(
        run(
            &mut e,
            &["HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"]
        ),
        Reply::err(errors::VALUE_OUT_OF_RANGE)
    );
    // Within Redis's range, but Redis would stream 2^62 pairs: refused here.
    assert_eq!(
        run(
            &mut e,
            &["HRANDFIELD", "h", "-4611686018427387903", "WITHVALUES"]
        ),
        crate::cmd::random_picks::too_many_picks()
    );
    assert_eq!(
        run(&mut e, &["HRANDFIELD", "h", "-9223372036854775807"]),
        crate::cmd::random_picks::too_many_picks()
    );
    // A huge positive count is just "the whole hash".
    assert_eq!(
        strings(&run(&mut e, &["HRANDFIELD", "h", "9223372036854775807"])),
        vec!["a"]
    );
}

/// Scans with COUNT until the cursor comes back to 0; returns field -> value and the number
/// of calls.
fn full_hscan(
    e: &mut Engine,
    key: &str,
    count: usize,
    mut between: impl FnMut(&mut Engine),
) -> (HashMap<String, String>, usize) {
    let mut cursor = "0".to_string();
    let mut seen = HashMap::new();
    let mut calls = 0;
    loop {
        let r = run(e, &["HSCAN", key, &cursor, "COUNT", &count.to_string()]);
        let Reply::Array(parts) = r else {
            panic!("{r:?}")
        };
        let Reply::Bulk(next) = &parts[0] else {
            panic!()
        };
        let items = strings(&parts[1]);
        // Whole buckets, as Redis: a page may pass COUNT by a bucket's few elements.
        assert!(items.len() <= 2 * (count + 8), "{}", items.len());
        for pair in items.chunks(2) {
            seen.insert(pair[0].clone(), pair[1].clone());
        }
        calls += 1;
        cursor = String::from_utf8_lossy(next).into_owned();
        if cursor == "0" {
            return (seen, calls);
        }
        between(e);
    }
}

#[test]
fn hscan_pages_through_a_big_hash() {
    let mut e = Engine::new(Config::default());
    // A hashtable (past the limit), so HSCAN pages.
    run(
        &mut e,
        &["CONFIG", "SET", "hash-max-listpack-entries", "128"],
    );
    for i in 0..500 {
        run(&mut e, &["HSET", "h", &format!("f{i}"), &format!("{i}")]);
    }
    let (seen, calls) = full_hscan(&mut e, "h", 10, |_| {});
    assert_eq!(seen.len(), 500);
    assert!(seen.iter().all(|(f, v)| f[1..] == *v));
    assert!(calls >= 500 / (10 + 8), "{calls}");
}

#[test]
fn hscan_returns_fields_present_throughout_despite_changes() {
    let mut e = Engine::new(Config::default());
    // A hashtable (past the limit), so HSCAN pages.
    run(
        &mut e,
        &["CONFIG", "SET", "hash-max-listpack-entries", "128"],
    );
    for i in 0..300 {
        run(&mut e, &["HSET", "h", &format!("f{i}"), "x"]);
    }
    let mut next_new = 0;
    let mut next_del = 1;
    let (seen, _) = full_hscan(&mut e, "h", 7, |e| {
        // Delete odd fields and add new ones between pages.
        run(e, &["HDEL", "h", &format!("f{next_del}")]);
        run(e, &["HSET", "h", &format!("new{next_new}"), "y"]);
        next_del += 2;
        next_new += 1;
    });
    for i in (0..300).step_by(2) {
        assert!(seen.contains_key(&format!("f{i}")), "f{i} missed");
    }
}

#[test]
fn small_hashes_scan_in_one_page_in_order() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["HSET", "h", "z", "1", "y", "2", "x", "3"]);
    let r = run(&mut e, &["HSCAN", "h", "12345", "COUNT", "1"]);
    assert_eq!(
        r,
        Reply::Array(vec![
            bulk("0"),
            Reply::bulk_array(["z", "1", "y", "2", "x", "3"])
        ])
    );
}

#[test]
fn an_expired_hash_is_gone_and_comes_back_without_ttl() {
    let clock = Clock::manual(1_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    run(&mut e, &["HSET", "h", "a", "1"]);
    let now = clock.now_ms();
    e.db(0).set_expire(b"h", Some(now + 1000));
    clock.advance(Duration::from_millis(999));
    assert_eq!(run(&mut e, &["HGET", "h", "a"]), bulk("1"));
    // Past the deadline's own millisecond (Redis's `now > when`).
    clock.advance(Duration::from_millis(2));
    assert_eq!(run(&mut e, &["HGET", "h", "a"]), Reply::Nil);
    assert_eq!(run(&mut e, &["HLEN", "h"]), Reply::Int(0));
    assert_eq!(run(&mut e, &["HINCRBY", "h", "a", "5"]), Reply::Int(5));
    assert_eq!(e.db(0).get(b"h").unwrap().expire_at(), None);
}

#[test]
fn updating_a_field_keeps_its_place_and_deleting_keeps_the_rest_in_order() {
    let mut e = Engine::new(Config::default());
    run(
        &mut e,
        &["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"],
    );
    run(&mut e, &["HINCRBY", "h", "a", "1"]);
    run(&mut e, &["HDEL", "h", "b"]);
    run(&mut e, &["HSET", "h", "b", "9"]);
    assert_eq!(
        strings(&run(&mut e, &["HKEYS", "h"])),
        vec!["a", "c", "d", "b"]
    );
    assert_eq!(
        strings(&run(&mut e, &["HVALS", "h"])),
        vec!["2", "3", "4", "9"]
    );
}
