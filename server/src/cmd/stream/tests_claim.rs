//! XREADGROUP ... CLAIM (Redis 8.4), as its published reference describes it: idle pending
//! entries claimed first (longest idle first), then new ones up to COUNT, each entry with
//! its idle time and earlier delivery count; ignored for a history ID; NOACK not applied to
//! claimed entries; absent before 8.4 (a syntax error, recorded in the profile's report).

use std::time::Duration;

use crate::clock::Clock;
use crate::compat::Profile;
use crate::engine::Engine;
use crate::reply::Reply;
use crate::test_support::engine_as;

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

/// An entry as CLAIM sends it: `[id, [f, v], idle, count]`.
fn entry(id: &str, v: &str, idle: i64, count: i64) -> Reply {
    Reply::Array(vec![
        bulk(id),
        Reply::Array(vec![bulk("f"), bulk(v)]),
        bulk(&idle.to_string()),
        bulk(&count.to_string()),
    ])
}

fn plain(id: &str, v: &str) -> Reply {
    Reply::Array(vec![bulk(id), Reply::Array(vec![bulk("f"), bulk(v)])])
}

/// The reply for one stream `s`.
fn one_stream(entries: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::Array(vec![bulk("s"), Reply::Array(entries)])])
}

/// Redis 8.4: stream `s` with 1-0..3-0, group `g` at 0; `c1` reads 1-0 at t0 and 2-0 at
/// t0+100; the clock then stands at t0+300.
fn setup() -> (Engine, Clock) {
    let (mut e, clock) = engine_as(Profile::Redis84);
    for (id, v) in [("1-0", "a"), ("2-0", "b"), ("3-0", "c")] {
        e.execute(1, &["XADD", "s", id, "f", v]);
    }
    e.execute(1, &["XGROUP", "CREATE", "s", "g", "0"]);
    let read1 = [
        "XREADGROUP",
        "GROUP",
        "g",
        "c1",
        "COUNT",
        "1",
        "STREAMS",
        "s",
        ">",
    ];
    e.execute(1, &read1);
    clock.advance(Duration::from_millis(100));
    e.execute(1, &read1);
    clock.advance(Duration::from_millis(200));
    (e, clock)
}

fn xreadgroup(e: &mut Engine, consumer: &str, opts: &[&str], id: &str) -> Reply {
    let mut line = vec!["XREADGROUP", "GROUP", "g", consumer];
    line.extend_from_slice(opts);
    line.extend_from_slice(&["STREAMS", "s", id]);
    e.execute(1, &line)
}

#[test]
fn claims_idle_entries_longest_idle_first_then_new_ones() {
    let (mut e, _clock) = setup();
    // 1-0 idle 300 ms, 2-0 idle 200 ms, both delivered once; 3-0 is new.
    assert_eq!(
        xreadgroup(&mut e, "c2", &["CLAIM", "150"], ">"),
        one_stream(vec![
            entry("1-0", "a", 300, 1),
            entry("2-0", "b", 200, 1),
            entry("3-0", "c", 0, 0),
        ])
    );
    // Both claimed entries are c2's now, delivered twice, at this time.
    assert_eq!(
        e.execute(1, &["XPENDING", "s", "g", "-", "+", "10"]),
        Reply::Array(
            [("1-0", 2), ("2-0", 2), ("3-0", 1)]
                .iter()
                .map(|(id, n)| Reply::Array(vec![
                    bulk(id),
                    bulk("c2"),
                    Reply::Int(0),
                    Reply::Int(*n)
                ]))
                .collect()
        )
    );
}

#[test]
fn only_entries_idle_long_enough_are_claimed_and_count_bounds_both() {
    let (mut e, _clock) = setup();
    assert_eq!(
        xreadgroup(&mut e, "c2", &["COUNT", "1", "CLAIM", "250"], ">"),
        one_stream(vec![entry("1-0", "a", 300, 1)])
    );
    // 2-0 (200 ms) is not idle enough: only the new entry comes.
    assert_eq!(
        xreadgroup(&mut e, "c2", &["CLAIM", "250"], ">"),
        one_stream(vec![entry("3-0", "c", 0, 0)])
    );
    // Nothing idle enough and nothing new: the null reply, as without CLAIM.
    assert_eq!(
        xreadgroup(&mut e, "c2", &["CLAIM", "250"], ">"),
        Reply::NilArray
    );
}

#[test]
fn noack_does_not_apply_to_claimed_entries() {
    let (mut e, _clock) = setup();
    assert_eq!(
        xreadgroup(&mut e, "c2", &["NOACK", "CLAIM", "0"], ">"),
        one_stream(vec![
            entry("1-0", "a", 300, 1),
            entry("2-0", "b", 200, 1),
            entry("3-0", "c", 0, 0),
        ])
    );
    // The claimed two stay pending (for c2); the new one was not added.
    assert_eq!(
        e.execute(1, &["XPENDING", "s", "g"]),
        Reply::Array(vec![
            Reply::Int(2),
            bulk("1-0"),
            bulk("2-0"),
            Reply::Array(vec![Reply::Array(vec![bulk("c2"), bulk("2")])]),
        ])
    );
}

#[test]
fn a_history_id_ignores_claim() {
    let (mut e, _clock) = setup();
    assert_eq!(
        xreadgroup(&mut e, "c1", &["CLAIM", "0"], "0"),
        one_stream(vec![plain("1-0", "a"), plain("2-0", "b")])
    );
}

#[test]
fn claim_errors() {
    let (mut e, _clock) = setup();
    assert_eq!(
        xreadgroup(&mut e, "c2", &["CLAIM", "x"], ">"),
        Reply::err("ERR Invalid min-idle-time argument for XREADGROUP")
    );
    assert_eq!(
        e.execute(1, &["XREAD", "CLAIM", "10", "STREAMS", "s", "0"]),
        Reply::err(
            "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."
        )
    );
    // Too short a line is the arity error before any option is read.
    assert_eq!(
        e.execute(1, &["XREADGROUP", "GROUP", "g", "c2", "CLAIM"]),
        Reply::err("ERR wrong number of arguments for 'xreadgroup' command")
    );
}

#[test]
fn before_84_claim_is_a_syntax_error_and_is_reported() {
    for p in [Profile::Redis82, Profile::Valkey81, Profile::Redis70] {
        let (mut e, _clock) = engine_as(p);
        e.execute(1, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        assert_eq!(
            xreadgroup(&mut e, "c", &["CLAIM", "10"], ">"),
            Reply::err("ERR syntax error"),
            "{p}"
        );
        let report = e.execute(1, &["REDLAB.COMPAT", "REPORT"]);
        let Reply::Array(rows) = report else {
            panic!("{report:?}")
        };
        assert!(
            rows.iter().any(|r| matches!(r, Reply::Array(v)
                if v.first() == Some(&bulk("xreadgroup CLAIM")))),
            "{p}: {rows:?}"
        );
    }
}

#[test]
fn a_blocked_claiming_reader_woken_by_xadd_gets_idle_entries_first() {
    let (mut e, clock) = setup();
    let reader = e.connect();
    // Drain 3-0 so the reader blocks.
    xreadgroup(&mut e, "c1", &[], ">");
    let line = [
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "BLOCK",
        "0",
        "CLAIM",
        "1000",
        "STREAMS",
        "s",
        ">",
    ];
    assert_eq!(e.execute(reader, &line), Reply::None);
    clock.advance(Duration::from_millis(800));
    e.execute(1, &["XADD", "s", "4-0", "f", "d"]);
    // 1-0 is now 1100 ms idle; 2-0 1000 ms; 3-0 800 ms.
    assert_eq!(
        e.take_output(reader),
        vec![one_stream(vec![
            entry("1-0", "a", 1100, 1),
            entry("2-0", "b", 1000, 1),
            entry("4-0", "d", 0, 0),
        ])]
    );
}

/// A reader blocked with CLAIM and BLOCK `block` ms, after `c1` drained 3-0 (so only the
/// pending 1-0 (t0), 2-0 (t0+100) and 3-0 (t0+300) can serve it); the clock is at t0+300.
fn blocked_claiming_reader(block: &str) -> (Engine, Clock, crate::session::ConnId) {
    let (mut e, clock) = setup();
    let reader = e.connect();
    xreadgroup(&mut e, "c1", &[], ">");
    let line = [
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "BLOCK",
        block,
        "CLAIM",
        "1000",
        "STREAMS",
        "s",
        ">",
    ];
    assert_eq!(e.execute(reader, &line), Reply::None);
    (e, clock, reader)
}

#[test]
fn a_blocked_claiming_reader_is_served_once_an_entry_is_idle_enough() {
    let (mut e, clock, reader) = blocked_claiming_reader("0");
    // 1-0 is 999 ms idle: nothing to claim yet.
    clock.advance(Duration::from_millis(699));
    e.tick();
    assert_eq!(e.take_output(reader), Vec::<Reply>::new());
    // 1-0 reaches 1000 ms on the clock alone, with no XADD: it is claimed, and only it.
    clock.advance(Duration::from_millis(1));
    e.tick();
    assert_eq!(
        e.take_output(reader),
        vec![one_stream(vec![entry("1-0", "a", 1000, 1)])]
    );
    // It is now c2's, delivered again at this moment.
    let pending = e.execute(1, &["XPENDING", "s", "g", "-", "+", "10", "c2"]);
    let Reply::Array(rows) = pending else {
        panic!("XPENDING answers an array: {pending:?}")
    };
    assert_eq!(rows.len(), 1);
}

#[test]
fn a_claiming_reader_whose_block_ends_first_gets_the_timeout_reply() {
    // BLOCK 500: the deadline (t0+800) passes before 1-0 is 1000 ms idle (t0+1000).
    let (mut e, clock, reader) = blocked_claiming_reader("500");
    clock.advance(Duration::from_millis(501));
    e.tick();
    assert_eq!(e.take_output(reader), vec![Reply::NilArray]);
    clock.advance(Duration::from_millis(500));
    e.tick();
    assert_eq!(e.take_output(reader), Vec::<Reply>::new());
}

/// The tokens of XREADGROUP's arguments in COMMAND DOCS under `p`.
fn doc_tokens(p: Profile) -> Vec<Reply> {
    let (mut e, _clock) = engine_as(p);
    let get = |m: &Reply, key: &str| match m {
        Reply::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| *k == bulk(key))
            .map(|(_, v)| v.clone()),
        other => panic!("{other:?}"),
    };
    let docs = e.execute(1, &["COMMAND", "DOCS", "xreadgroup"]);
    let entry = get(&docs, "xreadgroup").expect("entry");
    let Some(Reply::Array(args)) = get(&entry, "arguments") else {
        panic!("{entry:?}")
    };
    args.iter().filter_map(|a| get(a, "token")).collect()
}

#[test]
fn command_docs_list_claim_from_84() {
    let with = ["GROUP", "COUNT", "BLOCK", "CLAIM", "NOACK", "STREAMS"].map(bulk);
    assert_eq!(doc_tokens(Profile::Redis84), with.to_vec());
    let without = ["GROUP", "COUNT", "BLOCK", "NOACK", "STREAMS"].map(bulk);
    assert_eq!(doc_tokens(Profile::Redis82), without.to_vec());
    assert_eq!(doc_tokens(Profile::Redis70), without.to_vec());
}
