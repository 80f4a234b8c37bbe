//! Engine-level tests for what the differential suite cannot show: blocking with a
//! controlled clock, MULTI and script contexts, notifications, and large (skiplist-encoded)
//! sets.

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;

use crate::clock::Clock;
use crate::config::Config;
use crate::engine::{Call, Engine};
use crate::notify;
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

fn call(args: &[&str], in_multi: bool, in_script: bool) -> Call {
    Call {
        conn: 1,
        db: 0,
        resp: 2,
        args: args
            .iter()
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect(),
        in_script,
        in_multi,
        reprocessing: false,
    }
}

#[test]
fn blocked_pop_is_served_by_a_later_zadd() {
    let mut e = Engine::new(Config::default());
    assert_eq!(e.execute(1, &["BZPOPMIN", "a", "b", "0"]), Reply::None);
    assert!(e.is_blocked(1));
    assert_eq!(
        e.execute(2, &["ZADD", "b", "2", "y", "1", "x"]),
        Reply::Int(2)
    );
    assert!(!e.is_blocked(1));
    assert_eq!(
        e.take_output(1),
        vec![Reply::Array(vec![bulk("b"), bulk("x"), Reply::Double(1.0)])]
    );
    assert_eq!(e.execute(2, &["ZCARD", "b"]), Reply::Int(1));
}

#[test]
fn blocked_bzmpop_gets_count_elements_and_the_key_is_deleted() {
    let mut e = Engine::new(Config::default());
    assert_eq!(
        e.execute(1, &["BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"]),
        Reply::None
    );
    e.execute(2, &["ZADD", "z", "1", "a", "2", "b"]);
    let pair = |m: &str, s: f64| Reply::Array(vec![bulk(m), Reply::Double(s)]);
    assert_eq!(
        e.take_output(1),
        vec![Reply::Array(vec![
            bulk("z"),
            Reply::Array(vec![pair("b", 2.0), pair("a", 1.0)])
        ])]
    );
    assert_eq!(e.execute(2, &["ZCARD", "z"]), Reply::Int(0));
}

#[test]
fn blocked_pop_times_out_on_the_engine_clock() {
    let clock = Clock::manual(1_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    assert_eq!(e.execute(1, &["BZPOPMAX", "z", "1.5"]), Reply::None);
    clock.advance(Duration::from_millis(1400));
    e.tick();
    assert!(e.is_blocked(1));
    clock.advance(Duration::from_millis(200));
    e.tick();
    assert!(!e.is_blocked(1));
    assert_eq!(e.take_output(1), vec![Reply::NilArray]);
}

#[test]
fn blocking_pops_do_not_block_in_multi_or_scripts() {
    let mut e = Engine::new(Config::default());
    for (m, s) in [(true, false), (false, true)] {
        let mut c = call(&["BZPOPMIN", "z", "0"], m, s);
        assert_eq!(super::pop::bzpopmin(&mut e, &mut c), Ok(Reply::NilArray));
        let mut c = call(&["BZMPOP", "0", "1", "z", "MIN"], m, s);
        assert_eq!(super::pop::bzmpop(&mut e, &mut c), Ok(Reply::NilArray));
    }
    assert!(!e.is_blocked(1));
    e.execute(2, &["ZADD", "z", "1", "a"]);
    let mut c = call(&["BZPOPMIN", "z", "0"], true, false);
    assert_eq!(
        super::pop::bzpopmin(&mut e, &mut c),
        Ok(Reply::Array(vec![bulk("z"), bulk("a"), Reply::Double(1.0)]))
    );
}

/// Subscribes connection 9 to every keyspace/keyevent channel and returns the events of
/// what ran since.
fn events(e: &mut Engine) -> Vec<String> {
    e.take_output(9)
        .into_iter()
        .filter_map(|r| match r {
            Reply::Push(items) => match (&items[2], &items[3]) {
                (Reply::Bulk(ch), Reply::Bulk(msg)) if ch.starts_with(b"__keyevent") => {
                    Some(format!(
                        "{}:{}",
                        String::from_utf8_lossy(
                            &ch[ch.iter().rposition(|&c| c == b':').map_or(0, |p| p + 1)..]
                        ),
                        String::from_utf8_lossy(msg)
                    ))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn listen(e: &mut Engine) {
    e.notify_flags = notify::parse_flags("KEA").unwrap();
    e.execute(9, &["PING"]);
    e.pubsub
        .patterns
        .insert(b"*".to_vec(), [9u64].into_iter().collect());
}

#[test]
fn notifications_use_redis_event_names() {
    let mut e = Engine::new(Config::default());
    listen(&mut e);
    e.execute(1, &["ZADD", "z", "1", "a", "2", "b", "3", "c"]);
    e.execute(1, &["ZADD", "z", "1", "a"]);
    e.execute(1, &["ZINCRBY", "z", "1", "a"]);
    e.execute(1, &["ZREM", "z", "nope"]);
    e.execute(1, &["ZREM", "z", "a"]);
    e.execute(1, &["ZPOPMAX", "z"]);
    e.execute(1, &["ZREMRANGEBYSCORE", "z", "-inf", "+inf"]);
    assert_eq!(
        events(&mut e),
        vec![
            "zadd:z",
            "zincr:z",
            "zrem:z",
            "zpopmax:z",
            "zremrangebyscore:z",
            "del:z"
        ]
    );
    e.execute(1, &["ZADD", "a", "1", "x"]);
    e.execute(1, &["ZUNIONSTORE", "d", "1", "a"]);
    e.execute(1, &["ZINTERSTORE", "d", "2", "a", "missing"]);
    e.execute(1, &["ZRANGESTORE", "d", "a", "0", "-1"]);
    e.execute(1, &["ZPOPMIN", "a"]);
    assert_eq!(
        events(&mut e),
        vec![
            "zadd:a",
            "zunionstore:d",
            "del:d",
            "zrangestore:d",
            "zpopmin:a",
            "del:a"
        ]
    );
}

#[test]
fn large_sets_rank_and_range_like_small_ones() {
    let mut e = Engine::new(Config::default());
    let n = 1000;
    for i in 0..n {
        let (s, m) = ((i % 37).to_string(), format!("m{i:04}"));
        e.execute(1, &["ZADD", "z", &s, &m]);
    }
    let all = match e.execute(1, &["ZRANGE", "z", "0", "-1", "WITHSCORES"]) {
        Reply::Array(v) => v,
        other => panic!("{other:?}"),
    };
    assert_eq!(all.len(), 2 * n);
    let mut prev: Option<(f64, Bytes)> = None;
    for (rank, pair) in all.chunks(2).enumerate() {
        let (Reply::Bulk(m), Reply::Double(s)) = (&pair[0], &pair[1]) else {
            panic!()
        };
        if let Some((ps, pm)) = &prev {
            assert!((*ps, pm) < (*s, m));
        }
        let m_str = String::from_utf8_lossy(m).into_owned();
        assert_eq!(
            e.execute(1, &["ZRANK", "z", &m_str]),
            Reply::Int(rank as i64)
        );
        prev = Some((*s, m.clone()));
    }
    assert_eq!(
        e.execute(1, &["ZCOUNT", "z", "(3", "5"]),
        Reply::Int(27 * 2)
    );
    assert_eq!(
        e.execute(1, &["ZREMRANGEBYRANK", "z", "0", "99"]),
        Reply::Int(100)
    );
    assert_eq!(e.execute(1, &["ZCARD", "z"]), Reply::Int(900));
}

#[test]
fn zscan_of_a_large_set_returns_every_member_once_modified_or_not() {
    let mut e = Engine::new(Config::default());
    for i in 0..500 {
        e.execute(1, &["ZADD", "z", &i.to_string(), &format!("m{i}")]);
    }
    let mut seen = HashSet::new();
    let mut cursor = "0".to_string();
    let mut rounds = 0;
    loop {
        let Reply::Array(parts) = e.execute(1, &["ZSCAN", "z", &cursor, "COUNT", "20"]) else {
            panic!()
        };
        let (Reply::Bulk(c), Reply::Array(items)) = (&parts[0], &parts[1]) else {
            panic!()
        };
        for pair in items.chunks(2) {
            let Reply::Bulk(m) = &pair[0] else { panic!() };
            seen.insert(m.clone());
        }
        // Churn during the scan must not hide members present throughout.
        e.execute(1, &["ZADD", "z", "1", &format!("new{rounds}")]);
        rounds += 1;
        cursor = String::from_utf8_lossy(c).into_owned();
        if cursor == "0" {
            break;
        }
        assert!(rounds < 1000);
    }
    for i in 0..500 {
        assert!(seen.contains(format!("m{i}").as_bytes()));
    }
}

#[test]
fn lex_queries_on_a_large_set() {
    let mut e = Engine::new(Config::default());
    for i in 0..300 {
        e.execute(1, &["ZADD", "z", "0", &format!("k{i:03}")]);
    }
    assert_eq!(
        e.execute(1, &["ZLEXCOUNT", "z", "[k100", "(k200"]),
        Reply::Int(100)
    );
    assert_eq!(
        e.execute(1, &["ZRANGEBYLEX", "z", "(k100", "+", "LIMIT", "0", "2"]),
        Reply::Array(vec![bulk("k101"), bulk("k102")])
    );
    assert_eq!(
        e.execute(1, &["ZREVRANGEBYLEX", "z", "[k005", "-"]),
        Reply::Array((0..=5).rev().map(|i| bulk(&format!("k{i:03}"))).collect())
    );
    assert_eq!(
        e.execute(1, &["ZREMRANGEBYLEX", "z", "-", "(k150"]),
        Reply::Int(150)
    );
    assert_eq!(e.execute(1, &["ZRANK", "z", "k150"]), Reply::Int(0));
}
