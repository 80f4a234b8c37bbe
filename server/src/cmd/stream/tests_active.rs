//! A consumer's active time (Redis 7.2, `since::CONSUMER_ACTIVE_TIME`): XINFO CONSUMERS'
//! `inactive` and XINFO STREAM FULL's `active-time`, moved by deliveries and claims only
//! (what valkey-server 8.1 shows), absent under redis-7.0.

use std::time::Duration;

use crate::compat::Profile;
use crate::engine::Engine;
use crate::reply::Reply;
use crate::test_support::{engine_as, map_field, run};

/// `name`'s entry in XINFO CONSUMERS s g.
fn consumer(e: &mut Engine, name: &str) -> Reply {
    let Reply::Array(all) = run(e, &["XINFO", "CONSUMERS", "s", "g"]) else {
        panic!("XINFO CONSUMERS is an array");
    };
    all.into_iter()
        .find(|c| map_field(c, "name") == Some(&Reply::bulk(name)))
        .unwrap_or_else(|| panic!("no consumer {name}"))
}

fn inactive(e: &mut Engine, name: &str) -> Option<Reply> {
    map_field(&consumer(e, name), "inactive").cloned()
}

#[test]
fn deliveries_and_claims_move_it_reads_of_nothing_and_noack_do_not() {
    let (mut e, clock) = engine_as(Profile::Redis72);
    run(&mut e, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    run(&mut e, &["XGROUP", "CREATECONSUMER", "s", "g", "never"]);
    run(&mut e, &["XADD", "s", "1-0", "f", "v"]);
    run(&mut e, &["XADD", "s", "2-0", "f", "v"]);
    run(
        &mut e,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "reader",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">",
        ],
    );
    run(
        &mut e,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "noack",
            "NOACK",
            "STREAMS",
            "s",
            ">",
        ],
    );
    clock.advance(Duration::from_millis(500));
    // A read of its own (empty) history and of nothing new: seen, not active.
    run(
        &mut e,
        &["XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", "0"],
    );
    run(
        &mut e,
        &["XREADGROUP", "GROUP", "g", "idler", "STREAMS", "s", ">"],
    );
    assert_eq!(inactive(&mut e, "never"), Some(Reply::Int(-1)));
    assert_eq!(inactive(&mut e, "noack"), Some(Reply::Int(-1)));
    assert_eq!(inactive(&mut e, "idler"), Some(Reply::Int(-1)));
    assert_eq!(inactive(&mut e, "reader"), Some(Reply::Int(500)));
    assert_eq!(
        map_field(&consumer(&mut e, "reader"), "idle"),
        Some(&Reply::Int(0))
    );
    run(
        &mut e,
        &["XCLAIM", "s", "g", "claimer", "0", "1-0", "JUSTID"],
    );
    run(&mut e, &["XAUTOCLAIM", "s", "g", "nothing", "1000000", "0"]);
    clock.advance(Duration::from_millis(20));
    assert_eq!(inactive(&mut e, "claimer"), Some(Reply::Int(20)));
    assert_eq!(inactive(&mut e, "nothing"), Some(Reply::Int(-1)));
    run(&mut e, &["XAUTOCLAIM", "s", "g", "auto", "0", "0"]);
    assert_eq!(inactive(&mut e, "auto"), Some(Reply::Int(0)));
}

#[test]
fn redis_70_shows_neither_field() {
    let (mut e, _) = engine_as(Profile::Redis70);
    run(&mut e, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    run(&mut e, &["XADD", "s", "1-0", "f", "v"]);
    run(
        &mut e,
        &["XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">"],
    );
    assert_eq!(inactive(&mut e, "reader"), None);
    let full = run(&mut e, &["XINFO", "STREAM", "s", "FULL"]);
    assert!(!format!("{full:?}").contains("active-time"), "{full:?}");
}

#[test]
fn stream_full_shows_active_time_and_a_reload_keeps_seen_time_as_it() {
    let (mut e, clock) = engine_as(Profile::Valkey81);
    run(&mut e, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    run(&mut e, &["XGROUP", "CREATECONSUMER", "s", "g", "never"]);
    run(&mut e, &["XADD", "s", "1-0", "f", "v"]);
    run(
        &mut e,
        &["XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">"],
    );
    let read_at = e.now_ms;
    clock.advance(Duration::from_millis(70));
    run(
        &mut e,
        &["XREADGROUP", "GROUP", "g", "never", "STREAMS", "s", ">"],
    );
    let full = format!("{:?}", run(&mut e, &["XINFO", "STREAM", "s", "FULL"]));
    assert!(full.contains("active-time"), "{full}");
    assert_eq!(inactive(&mut e, "never"), Some(Reply::Int(-1)));
    assert_eq!(inactive(&mut e, "reader"), Some(Reply::Int(70)));
    // redlab's RDB is 7.0's, which has no active time: as Redis 7.2 loading one, a loaded
    // consumer's active time is its seen time.
    assert_eq!(run(&mut e, &["DEBUG", "RELOAD"]), Reply::ok());
    assert_eq!(inactive(&mut e, "never"), Some(Reply::Int(0)));
    assert_eq!(
        inactive(&mut e, "reader"),
        Some(Reply::Int(e.now_ms - read_at))
    );
}
