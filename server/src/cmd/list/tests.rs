//! What the differential suite cannot show: time (timeouts under a manual clock), the
//! engine's serving order inside one transaction, keyspace events, command stats, MULTI and
//! script contexts, and the wire shapes of RESP3.

use std::time::Duration;

use bytes::Bytes;

use crate::clock::Clock;
use crate::config::Config;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::notify;
use crate::reply::Reply;
use crate::session::ConnId;

const T0: i64 = 1_700_000_000_000;

fn engine() -> (Engine, Clock) {
    let clock = Clock::manual(T0);
    (Engine::with_clock(Config::default(), clock.clone()), clock)
}

fn run(e: &mut Engine, conn: ConnId, args: &[&str]) -> Reply {
    e.execute(conn, args)
}

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

fn pair(k: &str, v: &str) -> Reply {
    Reply::Array(vec![bulk(k), bulk(v)])
}

/// Runs a command's handler the way EXEC or a script would (no dispatcher, no
/// end-of-command serving), so several writes can land before blocked clients are served.
fn nested(e: &mut Engine, conn: ConnId, args: &[&str], in_multi: bool, in_script: bool) -> Reply {
    let args: Vec<Bytes> = args
        .iter()
        .map(|a| Bytes::copy_from_slice(a.as_bytes()))
        .collect();
    let cmd = crate::cmd::table::lookup(&args[0]).expect("known command");
    let mut call = Call {
        conn,
        db: 0,
        resp: 2,
        args,
        in_script,
        in_multi,
        reprocessing: false,
    };
    e.call(cmd, &mut call)
}

/// Subscribes `conn` to every keyevent notification of db 0 (pub/sub commands live in
/// another group, so this goes straight to the registry).
fn watch_events(e: &mut Engine, conn: ConnId) {
    e.notify_flags = notify::parse_flags("KEA").expect("flags");
    e.execute(conn, &["PING"]);
    e.pubsub
        .patterns
        .entry(b"__keyevent@0__:*".to_vec())
        .or_default()
        .insert(conn);
}

/// The (event, key) pairs delivered to a `watch_events` subscriber since the last call.
fn events(e: &mut Engine, conn: ConnId) -> Vec<(String, String)> {
    e.take_output(conn)
        .into_iter()
        .filter_map(|r| match r {
            Reply::Push(items) => match (&items[2], &items[3]) {
                (Reply::Bulk(ch), Reply::Bulk(key)) => {
                    let ch = String::from_utf8_lossy(ch).to_string();
                    let event = ch.rsplit(':').next().unwrap_or_default().to_string();
                    Some((event, String::from_utf8_lossy(key).to_string()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn ev(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn blocked_client_gets_null_after_its_timeout_passes() {
    let (mut e, clock) = engine();
    assert_eq!(run(&mut e, 1, &["BLPOP", "q", "1.5"]), Reply::None);
    assert!(e.is_blocked(1));

    // Exactly at the deadline Redis still waits: a deadline passes when now is after it.
    clock.advance(Duration::from_millis(1500));
    e.tick();
    assert!(e.is_blocked(1));
    assert!(e.take_wakeups().is_empty());

    clock.advance(Duration::from_millis(1));
    e.tick();
    assert!(!e.is_blocked(1));
    assert_eq!(e.take_wakeups(), vec![1]);
    let out = e.take_output(1);
    assert_eq!(out, vec![Reply::NilArray]);
    assert_eq!(&out[0].to_bytes(2)[..], b"*-1\r\n");
    assert_eq!(&out[0].to_bytes(3)[..], b"_\r\n");

    // The connection works normally afterwards and a later push is not delivered to it.
    assert_eq!(run(&mut e, 2, &["RPUSH", "q", "v"]), Reply::Int(1));
    assert!(e.take_output(1).is_empty());
    assert_eq!(run(&mut e, 1, &["LLEN", "q"]), Reply::Int(1));
}

#[test]
fn every_blocking_command_times_out_with_a_null_array() {
    let (mut e, clock) = engine();
    let cmds: [&[&str]; 5] = [
        &["BLPOP", "k", "0.01"],
        &["BRPOP", "k", "0.01"],
        &["BLMOVE", "k", "d", "LEFT", "LEFT", "0.01"],
        &["BRPOPLPUSH", "k", "d", "0.01"],
        &["BLMPOP", "0.01", "1", "k", "LEFT"],
    ];
    for (i, cmd) in cmds.iter().enumerate() {
        let conn = 10 + i as ConnId;
        assert_eq!(run(&mut e, conn, cmd), Reply::None, "{cmd:?}");
    }
    clock.advance(Duration::from_millis(11));
    e.tick();
    for (i, cmd) in cmds.iter().enumerate() {
        assert_eq!(
            e.take_output(10 + i as ConnId),
            vec![Reply::NilArray],
            "{cmd:?}"
        );
    }
}

#[test]
fn timeout_zero_waits_forever() {
    let (mut e, clock) = engine();
    run(&mut e, 1, &["BRPOP", "q", "0"]);
    clock.advance(Duration::from_secs(365 * 24 * 3600));
    e.tick();
    assert!(e.is_blocked(1));
    run(&mut e, 2, &["LPUSH", "q", "late"]);
    assert_eq!(e.take_output(1), vec![pair("q", "late")]);
}

#[test]
fn push_wakes_the_blocked_client_after_the_pusher_got_its_reply() {
    let (mut e, _) = engine();
    assert_eq!(run(&mut e, 1, &["BLPOP", "jobs", "0"]), Reply::None);
    // The pusher's reply counts the element the waiter is about to take.
    assert_eq!(run(&mut e, 2, &["LPUSH", "jobs", "j1"]), Reply::Int(1));
    assert!(e.take_wakeups().contains(&1));
    assert_eq!(e.take_output(1), vec![pair("jobs", "j1")]);
    assert!(!e.is_blocked(1));
    assert_eq!(run(&mut e, 2, &["LLEN", "jobs"]), Reply::Int(0));
}

#[test]
fn waiters_are_served_first_come_first_served() {
    let (mut e, _) = engine();
    for conn in [1, 2, 3] {
        run(&mut e, conn, &["BLPOP", "q", "0"]);
    }
    run(&mut e, 9, &["RPUSH", "q", "a", "b"]);
    assert_eq!(e.take_output(1), vec![pair("q", "a")]);
    assert_eq!(e.take_output(2), vec![pair("q", "b")]);
    assert!(e.take_output(3).is_empty());
    assert!(e.is_blocked(3));
    run(&mut e, 9, &["RPUSH", "q", "c"]);
    assert_eq!(e.take_output(3), vec![pair("q", "c")]);
}

#[test]
fn served_from_the_key_that_became_ready_not_the_first_key_named() {
    // Redis 7.0: MULTI; RPUSH k2 ..; RPUSH k1 ..; EXEC serves BLPOP k1 k2 from k2.
    let (mut e, _) = engine();
    run(&mut e, 1, &["BLPOP", "k1", "k2", "0"]);
    nested(&mut e, 2, &["RPUSH", "k2", "x2"], true, false);
    nested(&mut e, 2, &["RPUSH", "k1", "x1"], true, false);
    assert!(
        e.take_output(1).is_empty(),
        "served only after the transaction"
    );
    e.tick();
    assert_eq!(e.take_output(1), vec![pair("k2", "x2")]);
    assert_eq!(
        run(&mut e, 2, &["LRANGE", "k1", "0", "-1"]),
        Reply::Array(vec![bulk("x1")])
    );
}

#[test]
fn a_key_that_changed_type_before_serving_keeps_its_waiters_blocked() {
    let (mut e, _) = engine();
    run(&mut e, 1, &["BLPOP", "k", "0"]);
    nested(&mut e, 2, &["LPUSH", "k", "x"], true, false);
    e.db(0)
        .set(b"k", Value::Str(b"now a string".to_vec().into()));
    e.tick();
    assert!(e.is_blocked(1));
    e.db(0).remove(b"k");
    run(&mut e, 2, &["LPUSH", "k", "y"]);
    assert_eq!(e.take_output(1), vec![pair("k", "y")]);
}

#[test]
fn blocking_commands_in_multi_or_script_answer_at_once() {
    let (mut e, _) = engine();
    for (in_multi, in_script) in [(true, false), (false, true)] {
        assert_eq!(
            nested(&mut e, 1, &["BLPOP", "none", "0"], in_multi, in_script),
            Reply::NilArray
        );
        assert_eq!(
            nested(&mut e, 1, &["BRPOP", "none", "0"], in_multi, in_script),
            Reply::NilArray
        );
        assert_eq!(
            nested(
                &mut e,
                1,
                &["BLMPOP", "0", "1", "none", "LEFT"],
                in_multi,
                in_script
            ),
            Reply::NilArray
        );
        // BLMOVE/BRPOPLPUSH answer like LMOVE on a missing source: a null bulk string.
        assert_eq!(
            nested(
                &mut e,
                1,
                &["BLMOVE", "none", "d", "LEFT", "LEFT", "0"],
                in_multi,
                in_script
            ),
            Reply::Nil
        );
        assert_eq!(
            nested(
                &mut e,
                1,
                &["BRPOPLPUSH", "none", "d", "0"],
                in_multi,
                in_script
            ),
            Reply::Nil
        );
        assert!(!e.is_blocked(1));
    }
    // With data they behave as the non-blocking forms.
    run(&mut e, 2, &["RPUSH", "has", "a", "b"]);
    assert_eq!(
        nested(&mut e, 1, &["BRPOP", "has", "0"], true, false),
        pair("has", "b")
    );
    // Argument errors still come first.
    assert!(nested(&mut e, 1, &["BLPOP", "none", "-1"], true, false).is_error());
}

#[test]
fn blmove_serving_chains_to_the_next_waiter() {
    let (mut e, _) = engine();
    run(&mut e, 1, &["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"]);
    run(&mut e, 2, &["BLPOP", "b", "0"]);
    run(&mut e, 3, &["RPUSH", "a", "v"]);
    assert_eq!(e.take_output(1), vec![bulk("v")]);
    assert_eq!(e.take_output(2), vec![pair("b", "v")]);
    assert_eq!(run(&mut e, 3, &["LLEN", "a"]), Reply::Int(0));
    assert_eq!(run(&mut e, 3, &["LLEN", "b"]), Reply::Int(0));
}

#[test]
fn served_blmove_into_a_wrong_type_gets_wrongtype_and_the_element_stays() {
    let (mut e, _) = engine();
    run(&mut e, 1, &["BLMOVE", "src", "dst", "LEFT", "LEFT", "0"]);
    run(&mut e, 1, &["PING"]);
    run(&mut e, 2, &["SET", "dst", "str"]);
    run(&mut e, 2, &["RPUSH", "src", "v"]);
    let out = e.take_output(1);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_error());
    assert!(!e.is_blocked(1));
    assert_eq!(
        run(&mut e, 2, &["LRANGE", "src", "0", "-1"]),
        Reply::Array(vec![bulk("v")])
    );
}

#[test]
fn keyspace_events_follow_redis() {
    let (mut e, _) = engine();
    watch_events(&mut e, 50);
    run(&mut e, 1, &["RPUSH", "l", "a", "b", "c"]);
    run(&mut e, 1, &["LPUSH", "l", "z"]);
    run(&mut e, 1, &["LSET", "l", "0", "y"]);
    run(&mut e, 1, &["LINSERT", "l", "BEFORE", "a", "x"]);
    run(&mut e, 1, &["LREM", "l", "0", "x"]);
    run(&mut e, 1, &["LREM", "l", "0", "nothing"]);
    run(&mut e, 1, &["LTRIM", "l", "0", "-1"]);
    assert_eq!(
        events(&mut e, 50),
        ev(&[
            ("rpush", "l"),
            ("lpush", "l"),
            ("lset", "l"),
            ("linsert", "l"),
            ("lrem", "l"),
            ("ltrim", "l")
        ])
    );

    // LMOVE: push on the destination, then pop on the source, then del of the emptied source.
    run(&mut e, 1, &["RPUSH", "one", "v"]);
    run(&mut e, 1, &["LMOVE", "one", "two", "LEFT", "RIGHT"]);
    assert_eq!(
        events(&mut e, 50),
        ev(&[
            ("rpush", "one"),
            ("rpush", "two"),
            ("lpop", "one"),
            ("del", "one")
        ])
    );

    run(&mut e, 1, &["RPOP", "two", "5"]);
    run(&mut e, 1, &["LPOP", "l"]);
    run(&mut e, 1, &["LTRIM", "l", "5", "1"]);
    assert_eq!(
        events(&mut e, 50),
        ev(&[
            ("rpop", "two"),
            ("del", "two"),
            ("lpop", "l"),
            ("ltrim", "l"),
            ("del", "l")
        ])
    );

    // Nothing changes, nothing is sent.
    run(&mut e, 1, &["LPOP", "missing"]);
    run(&mut e, 1, &["LPUSHX", "missing", "a"]);
    run(&mut e, 1, &["LINSERT", "missing", "BEFORE", "a", "b"]);
    assert!(events(&mut e, 50).is_empty());
}

#[test]
fn keyspace_events_of_served_blocked_clients() {
    let (mut e, _) = engine();
    watch_events(&mut e, 50);
    run(&mut e, 1, &["BLMOVE", "s", "d", "RIGHT", "LEFT", "0"]);
    run(&mut e, 2, &["BLPOP", "d", "0"]);
    run(&mut e, 3, &["RPUSH", "s", "v1"]);
    assert_eq!(
        events(&mut e, 50),
        ev(&[
            ("rpush", "s"),
            ("lpush", "d"),
            ("rpop", "s"),
            ("del", "s"),
            ("lpop", "d"),
            ("del", "d")
        ])
    );
}

#[test]
fn a_blocked_command_is_counted_once_when_it_completes() {
    let (mut e, clock) = engine();
    run(&mut e, 1, &["BLPOP", "k", "0"]);
    assert!(e.stats.command("blpop").is_none());
    assert_eq!(e.stats.blocked_clients, 1);
    run(&mut e, 2, &["RPUSH", "k", "v"]);
    assert_eq!(e.stats.command("blpop").map(|c| c.calls), Some(1));
    assert_eq!(e.stats.blocked_clients, 0);
    run(&mut e, 1, &["BRPOP", "k", "1"]);
    clock.advance(Duration::from_secs(2));
    e.tick();
    assert_eq!(e.stats.command("brpop").map(|c| c.calls), Some(1));
}

#[test]
fn disconnecting_a_blocked_client_leaves_pushed_data_alone() {
    let (mut e, _) = engine();
    run(&mut e, 1, &["BLPOP", "k", "0"]);
    e.disconnect(1);
    run(&mut e, 2, &["RPUSH", "k", "v"]);
    assert_eq!(run(&mut e, 2, &["LLEN", "k"]), Reply::Int(1));
    assert!(e.blocking_keys.is_empty());
}

#[test]
fn blmpop_served_with_count_in_pop_order() {
    let (mut e, _) = engine();
    run(
        &mut e,
        1,
        &["BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "2"],
    );
    run(&mut e, 2, &["RPUSH", "b", "x", "y", "z"]);
    let expected = Reply::Array(vec![bulk("b"), Reply::Array(vec![bulk("z"), bulk("y")])]);
    assert_eq!(e.take_output(1), vec![expected]);
}

#[test]
fn resp3_null_shapes() {
    let (mut e, _) = engine();
    let r = run(&mut e, 1, &["LPOP", "missing", "2"]);
    assert_eq!(
        (&r.to_bytes(2)[..], &r.to_bytes(3)[..]),
        (&b"*-1\r\n"[..], &b"_\r\n"[..])
    );
    let r = run(&mut e, 1, &["LPOP", "missing"]);
    assert_eq!(
        (&r.to_bytes(2)[..], &r.to_bytes(3)[..]),
        (&b"$-1\r\n"[..], &b"_\r\n"[..])
    );
    let r = run(&mut e, 1, &["LMPOP", "1", "missing", "LEFT"]);
    assert_eq!(&r.to_bytes(2)[..], b"*-1\r\n");
    let r = run(&mut e, 1, &["LPOS", "missing", "a"]);
    assert_eq!(&r.to_bytes(2)[..], b"$-1\r\n");
}

#[test]
fn timeout_parsing_follows_redis() {
    use crate::cmd::args::timeout_deadline;
    let now = 1_000;
    assert_eq!(timeout_deadline(b"0", now), Ok(None));
    // Rounded up to whole milliseconds before the sign check: a tiny wait, or -0 (forever).
    assert_eq!(timeout_deadline(b"0.0001", now), Ok(Some(1_001)));
    assert_eq!(timeout_deadline(b"-0.0001", now), Ok(None));
    assert_eq!(timeout_deadline(b"1.5", now), Ok(Some(2_500)));
    assert_eq!(timeout_deadline(b"0x10", now), Ok(Some(17_000)));
    assert_eq!(timeout_deadline(b"+.5", now), Ok(Some(1_500)));
    let negative = Err(Reply::err(crate::errors::TIMEOUT_NEGATIVE));
    let not_float = Err(Reply::err(crate::errors::TIMEOUT_NOT_FLOAT));
    for arg in ["-1", "inf", "-inf", "infinity", "1e20", "1e400"] {
        assert_eq!(timeout_deadline(arg.as_bytes(), now), negative, "{arg}");
    }
    for arg in [
        "", "abc", "nan", " 1", "1 ", "1e5000", "1e-5000", "0x", "1e",
    ] {
        assert_eq!(timeout_deadline(arg.as_bytes(), now), not_float, "{arg:?}");
    }
    // Past the end of time: Redis's wrapped deadline never fires.
    assert_eq!(
        timeout_deadline(b"9000000000000000", i64::MAX - 10),
        Ok(None)
    );
}

#[test]
fn counts_never_allocate_what_the_user_asks_for() {
    let (mut e, _) = engine();
    run(&mut e, 1, &["RPUSH", "l", "a"]);
    let max = i64::MAX.to_string();
    assert_eq!(
        run(&mut e, 1, &["LPOP", "l", &max]),
        Reply::Array(vec![bulk("a")])
    );
    run(&mut e, 1, &["RPUSH", "l", "a"]);
    assert_eq!(
        run(&mut e, 1, &["LMPOP", "1", "l", "LEFT", "COUNT", &max]),
        Reply::Array(vec![bulk("l"), Reply::Array(vec![bulk("a")])])
    );
    assert_eq!(
        run(&mut e, 1, &["LRANGE", "l", &format!("-{max}"), &max]),
        Reply::Array(vec![])
    );
}
