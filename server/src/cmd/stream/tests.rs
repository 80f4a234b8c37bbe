//! Engine-level checks of what the conformance cases cannot show: IDs and idle times on a
//! manual clock, and blocking reads served by a later XADD.

use std::time::Duration;

use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn engine() -> (Engine, Clock) {
    let clock = Clock::manual(1_000_000);
    (Engine::with_clock(Config::default(), clock.clone()), clock)
}

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

#[test]
fn auto_ids_follow_the_manual_clock() {
    let (mut e, clock) = engine();
    let c = e.connect();
    assert_eq!(
        e.execute(c, &["XADD", "s", "*", "f", "v"]),
        bulk("1000000-0")
    );
    assert_eq!(
        e.execute(c, &["XADD", "s", "*", "f", "v"]),
        bulk("1000000-1")
    );
    clock.advance(Duration::from_millis(5));
    assert_eq!(
        e.execute(c, &["XADD", "s", "*", "f", "v"]),
        bulk("1000005-0")
    );
    assert_eq!(
        e.execute(c, &["XADD", "s", "1000005-*", "f", "v"]),
        bulk("1000005-1")
    );
}

#[test]
fn pending_entries_become_claimable_when_time_moves() {
    let (mut e, clock) = engine();
    let c = e.connect();
    e.execute(c, &["XADD", "s", "1-1", "f", "v"]);
    e.execute(c, &["XGROUP", "CREATE", "s", "g", "0"]);
    e.execute(
        c,
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
    );
    let early = e.execute(c, &["XAUTOCLAIM", "s", "g", "bob", "1000", "0", "JUSTID"]);
    assert_eq!(
        early,
        Reply::Array(vec![
            bulk("0-0"),
            Reply::Array(vec![]),
            Reply::Array(vec![])
        ])
    );
    clock.advance(Duration::from_millis(1000));
    let later = e.execute(c, &["XAUTOCLAIM", "s", "g", "bob", "1000", "0", "JUSTID"]);
    assert_eq!(
        later,
        Reply::Array(vec![
            bulk("0-0"),
            Reply::Array(vec![bulk("1-1")]),
            Reply::Array(vec![])
        ])
    );
    let pending = e.execute(c, &["XPENDING", "s", "g", "-", "+", "10"]);
    assert_eq!(
        pending,
        Reply::Array(vec![Reply::Array(vec![
            bulk("1-1"),
            bulk("bob"),
            Reply::Int(0),
            Reply::Int(1)
        ])])
    );
}

#[test]
fn blocked_xread_is_served_by_xadd_and_times_out_on_the_clock() {
    let (mut e, clock) = engine();
    let reader = e.connect();
    let writer = e.connect();
    assert_eq!(
        e.execute(reader, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]),
        Reply::None
    );
    e.execute(writer, &["XADD", "s", "5-0", "a", "b"]);
    let out = e.take_output(reader);
    assert_eq!(
        out,
        vec![Reply::Array(vec![Reply::Array(vec![
            bulk("s"),
            Reply::Array(vec![Reply::Array(vec![
                bulk("5-0"),
                Reply::Array(vec![bulk("a"), bulk("b")])
            ])])
        ])])]
    );
    assert_eq!(
        e.execute(reader, &["XREAD", "BLOCK", "100", "STREAMS", "s", "$"]),
        Reply::None
    );
    clock.advance(Duration::from_millis(101));
    e.tick();
    assert_eq!(e.take_output(reader), vec![Reply::NilArray]);
}

#[test]
fn blocked_xreadgroup_gets_an_error_when_its_key_goes() {
    let (mut e, _clock) = engine();
    let reader = e.connect();
    let writer = e.connect();
    e.execute(writer, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    assert_eq!(
        e.execute(
            reader,
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">"
            ]
        ),
        Reply::None
    );
    e.execute(writer, &["DEL", "s"]);
    assert_eq!(
        e.take_output(reader),
        vec![Reply::err("UNBLOCKED the stream key no longer exists")]
    );
}
