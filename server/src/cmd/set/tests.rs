//! What the conformance cases cannot show: keyspace events, random replies, scanning big
//! sets page by page, TTLs of STORE destinations.

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;

use super::reply_order;
use crate::clock::Clock;
use crate::cmd::hash::tests::{bulk, ev, events, listen, run, strings};
use crate::cmd::table;
use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn members(e: &mut Engine, key: &str) -> HashSet<String> {
    strings(&run(e, &["SMEMBERS", key])).into_iter().collect()
}

fn set_of(items: &[&str]) -> HashSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn writes_send_redis_event_names() {
    let mut e = Engine::new(Config::default());
    let sub = listen(&mut e);
    run(&mut e, &["SADD", "s", "a", "b"]);
    run(&mut e, &["SADD", "s", "a"]);
    run(&mut e, &["SREM", "s", "zz"]);
    run(&mut e, &["SREM", "s", "a"]);
    run(&mut e, &["SPOP", "s"]);
    assert_eq!(
        events(&mut e, sub),
        ev(&[("sadd", "s"), ("srem", "s"), ("spop", "s"), ("del", "s")])
    );

    run(&mut e, &["SADD", "s", "1", "2", "3"]);
    run(&mut e, &["SPOP", "s", "0"]);
    run(&mut e, &["SPOP", "s", "2"]);
    run(&mut e, &["SPOP", "s", "5"]);
    assert_eq!(
        events(&mut e, sub),
        ev(&[("sadd", "s"), ("spop", "s"), ("spop", "s"), ("del", "s")])
    );
}

#[test]
fn smove_events() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["SADD", "s", "1", "2"]);
    run(&mut e, &["SADD", "t", "2"]);
    let sub = listen(&mut e);
    run(&mut e, &["SMOVE", "s", "t", "1"]);
    // The member is already in the destination: no "sadd".
    run(&mut e, &["SMOVE", "s", "t", "2"]);
    run(&mut e, &["SMOVE", "t", "t", "2"]);
    run(&mut e, &["SMOVE", "t", "s", "zz"]);
    assert_eq!(
        events(&mut e, sub),
        ev(&[("srem", "s"), ("sadd", "t"), ("srem", "s"), ("del", "s")])
    );
    assert_eq!(members(&mut e, "t"), set_of(&["1", "2"]));
}

#[test]
fn store_events_and_deletes() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["SADD", "a", "1", "2"]);
    run(&mut e, &["SADD", "b", "2", "3"]);
    let sub = listen(&mut e);
    run(&mut e, &["SINTERSTORE", "d", "a", "b"]);
    run(&mut e, &["SUNIONSTORE", "d", "a", "b"]);
    run(&mut e, &["SDIFFSTORE", "d", "a", "b"]);
    // An empty result deletes an existing destination...
    assert_eq!(
        run(&mut e, &["SINTERSTORE", "d", "a", "nokey"]),
        Reply::Int(0)
    );
    // ...and says nothing when there was none.
    assert_eq!(run(&mut e, &["SUNIONSTORE", "e", "nokey"]), Reply::Int(0));
    assert_eq!(
        events(&mut e, sub),
        ev(&[
            ("sinterstore", "d"),
            ("sunionstore", "d"),
            ("sdiffstore", "d"),
            ("del", "d")
        ])
    );
    assert!(!e.db(0).contains(b"d"));
    assert!(!e.db(0).contains(b"e"));
}

#[test]
fn store_replaces_the_destination_ttl() {
    let clock = Clock::manual(5_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    run(&mut e, &["SADD", "a", "x"]);
    run(&mut e, &["SADD", "d", "old"]);
    let now = clock.now_ms();
    e.db(0).set_expire(b"d", Some(now + 100));
    run(&mut e, &["SUNIONSTORE", "d", "a"]);
    clock.advance(Duration::from_millis(500));
    assert_eq!(members(&mut e, "d"), set_of(&["x"]));
}

#[test]
fn an_expired_source_counts_as_missing() {
    let clock = Clock::manual(5_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    run(&mut e, &["SADD", "a", "1", "2"]);
    run(&mut e, &["SADD", "b", "2"]);
    let now = clock.now_ms();
    e.db(0).set_expire(b"b", Some(now + 10));
    assert_eq!(strings(&run(&mut e, &["SINTER", "a", "b"])), vec!["2"]);
    clock.advance(Duration::from_millis(11));
    assert_eq!(
        strings(&run(&mut e, &["SINTER", "a", "b"])),
        Vec::<String>::new()
    );
    assert_eq!(strings(&run(&mut e, &["SDIFF", "a", "b"])), vec!["1", "2"]);
    assert_eq!(run(&mut e, &["SINTERCARD", "2", "a", "b"]), Reply::Int(0));
}

#[test]
fn spop_with_count_removes_what_it_returns() {
    let mut e = Engine::new(Config::default());
    let all: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
    let mut args = vec!["SADD", "s"];
    args.extend(all.iter().map(|s| s.as_str()));
    run(&mut e, &args);
    let popped = strings(&run(&mut e, &["SPOP", "s", "20"]));
    assert_eq!(popped.len(), 20);
    let popped: HashSet<String> = popped.into_iter().collect();
    assert_eq!(popped.len(), 20, "distinct");
    let left = members(&mut e, "s");
    assert_eq!(left.len(), 30);
    assert!(popped.is_disjoint(&left));
    assert_eq!(
        popped.union(&left).cloned().collect::<HashSet<_>>(),
        all.into_iter().collect()
    );
}

#[test]
fn spop_reaches_every_member() {
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let mut e = Engine::new(Config::default());
        run(&mut e, &["SADD", "s", "a", "b", "c"]);
        let Reply::Bulk(m) = run(&mut e, &["SPOP", "s"]) else {
            panic!()
        };
        seen.insert(m);
        assert_eq!(run(&mut e, &["SCARD", "s"]), Reply::Int(2));
    }
    assert_eq!(seen.len(), 3);
}

#[test]
fn srandmember_counts_and_membership() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["SADD", "s", "a", "b", "c", "d", "e"]);
    let all = set_of(&["a", "b", "c", "d", "e"]);
    let got = strings(&run(&mut e, &["SRANDMEMBER", "s", "3"]));
    assert_eq!(got.len(), 3);
    assert_eq!(got.iter().collect::<HashSet<_>>().len(), 3);
    assert!(got.iter().all(|m| all.contains(m)));

    let got = strings(&run(&mut e, &["SRANDMEMBER", "s", "-1000"]));
    assert_eq!(got.len(), 1000);
    assert_eq!(got.into_iter().collect::<HashSet<_>>(), all);
    // Nothing was removed.
    assert_eq!(run(&mut e, &["SCARD", "s"]), Reply::Int(5));
    assert_eq!(
        run(&mut e, &["SRANDMEMBER", "s", "-9223372036854775807"]),
        crate::cmd::random_picks::too_many_picks()
    );
}

#[test]
fn sscan_pages_through_a_big_set() {
    let mut e = Engine::new(Config::default());
    for i in 0..400 {
        run(&mut e, &["SADD", "s", &format!("m{i}")]);
    }
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    loop {
        let Reply::Array(parts) = run(&mut e, &["SSCAN", "s", &cursor, "COUNT", "15"]) else {
            panic!()
        };
        let Reply::Bulk(next) = &parts[0] else {
            panic!()
        };
        let page = strings(&parts[1]);
        // Whole buckets, as Redis: a page may pass COUNT by a bucket's few elements.
        assert!(page.len() <= 15 + 8, "{}", page.len());
        seen.extend(page);
        cursor = String::from_utf8_lossy(next).into_owned();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 400, "each member exactly once");
    assert_eq!(seen.into_iter().collect::<HashSet<_>>().len(), 400);
}

#[test]
fn integer_sets_reply_ascending_up_to_the_intset_limit() {
    let mut v: Vec<&[u8]> = vec![b"10", b"-3", b"2"];
    reply_order(&mut v, 512);
    assert_eq!(v, vec![&b"-3"[..], b"2", b"10"]);
    let mut mixed: Vec<&[u8]> = vec![b"10", b"a", b"2"];
    reply_order(&mut mixed, 512);
    assert_eq!(mixed, vec![&b"10"[..], b"a", b"2"]);
    let mut big: Vec<&[u8]> = vec![b"3", b"1", b"2"];
    reply_order(&mut big, 2);
    assert_eq!(big, vec![&b"3"[..], b"1", b"2"]);
}

#[test]
fn sintercard_keys_come_from_its_key_spec() {
    let cmd = table::lookup(b"SINTERCARD").expect("sintercard");
    let args: Vec<Bytes> = ["SINTERCARD", "2", "a", "b", "LIMIT", "1"]
        .iter()
        .map(|s| Bytes::from(*s))
        .collect();
    assert_eq!(cmd.key_positions(&args), vec![2, 3]);
    let bad: Vec<Bytes> = ["SINTERCARD", "9", "a"]
        .iter()
        .map(|s| Bytes::from(*s))
        .collect();
    // A count past the arguments fits no key spec, and SINTERCARD has no other key finder
    // in Redis: no keys (COMMAND GETKEYS answers "Invalid arguments").
    assert!(cmd.key_positions(&bad).is_empty());
    let smove = table::lookup(b"smove").expect("smove");
    let args: Vec<Bytes> = ["SMOVE", "a", "b", "m"]
        .iter()
        .map(|s| Bytes::from(*s))
        .collect();
    assert_eq!(smove.key_positions(&args), vec![1, 2]);
}

#[test]
fn smembers_is_a_resp3_set_and_a_resp2_array() {
    let mut e = Engine::new(Config::default());
    run(&mut e, &["SADD", "s", "2", "1"]);
    let r = run(&mut e, &["SMEMBERS", "s"]);
    assert_eq!(&r.to_bytes(3)[..], b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    assert_eq!(&r.to_bytes(2)[..], b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    assert_eq!(run(&mut e, &["SISMEMBER", "s", "1"]), Reply::Int(1));
    assert_eq!(
        run(&mut e, &["SRANDMEMBER", "s", "5"]),
        Reply::Array(vec![bulk("1"), bulk("2")])
    );
}
