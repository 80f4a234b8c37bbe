//! Hash field expiration under a manual clock. No Redis 7.4/8.x runs here: the expected
//! replies are the published command reference's (see DIFFERENCES.md).

use std::time::Duration;

use crate::compat::Profile;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;
use crate::test_support::{engine_as, events, listen, put_list, run, T0};

fn ints(v: &[i64]) -> Reply {
    Reply::Array(v.iter().map(|n| Reply::Int(*n)).collect())
}

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

fn setup() -> (Engine, crate::Clock) {
    let (mut e, clock) = engine_as(Profile::Redis80);
    run(&mut e, &["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    (e, clock)
}

#[test]
fn hexpire_sets_and_fields_expire_on_the_clock() {
    let (mut e, clock) = setup();
    assert_eq!(
        run(&mut e, &["HEXPIRE", "h", "10", "FIELDS", "2", "a", "zz"]),
        ints(&[1, -2])
    );
    assert_eq!(
        run(&mut e, &["HTTL", "h", "FIELDS", "3", "a", "b", "zz"]),
        ints(&[10, -1, -2])
    );
    assert_eq!(
        run(&mut e, &["HPTTL", "h", "FIELDS", "1", "a"]),
        ints(&[10_000])
    );
    assert_eq!(
        run(&mut e, &["HPEXPIRETIME", "h", "FIELDS", "1", "a"]),
        ints(&[T0 + 10_000])
    );
    assert_eq!(
        run(&mut e, &["HEXPIRETIME", "h", "FIELDS", "1", "a"]),
        ints(&[(T0 + 10_000) / 1000])
    );
    clock.advance(Duration::from_millis(9_999));
    assert_eq!(run(&mut e, &["HGET", "h", "a"]), bulk("1"));
    assert_eq!(run(&mut e, &["HTTL", "h", "FIELDS", "1", "a"]), ints(&[1]));
    clock.advance(Duration::from_millis(1));
    assert_eq!(run(&mut e, &["HGET", "h", "a"]), Reply::Nil);
    assert_eq!(run(&mut e, &["HLEN", "h"]), Reply::Int(2));
    assert_eq!(run(&mut e, &["HTTL", "h", "FIELDS", "1", "a"]), ints(&[-2]));
}

#[test]
fn conditions_and_past_deadlines() {
    let (mut e, _) = setup();
    let ex = |e: &mut Engine, args: &[&str]| run(e, args);
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "100", "XX", "FIELDS", "1", "a"]),
        ints(&[0])
    );
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "200", "NX", "FIELDS", "1", "a"]),
        ints(&[0])
    );
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "50", "GT", "FIELDS", "1", "a"]),
        ints(&[0])
    );
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "150", "GT", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "50", "LT", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    // GT on a field without a deadline (infinite) is never met; LT always is.
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "50", "GT", "FIELDS", "1", "b"]),
        ints(&[0])
    );
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "50", "LT", "FIELDS", "1", "b"]),
        ints(&[1])
    );
    // A deadline already past deletes the field.
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "0", "FIELDS", "1", "c"]),
        ints(&[2])
    );
    assert_eq!(
        ex(&mut e, &["HPEXPIREAT", "h", "1", "FIELDS", "1", "b"]),
        ints(&[2])
    );
    assert_eq!(ex(&mut e, &["HKEYS", "h"]), Reply::Array(vec![bulk("a")]));
    assert_eq!(
        ex(&mut e, &["HPERSIST", "h", "FIELDS", "2", "a", "x"]),
        ints(&[1, -2])
    );
    assert_eq!(
        ex(&mut e, &["HPERSIST", "h", "FIELDS", "1", "a"]),
        ints(&[-1])
    );
    // The last field deleted deletes the key.
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "0", "FIELDS", "1", "a"]),
        ints(&[2])
    );
    assert_eq!(ex(&mut e, &["EXISTS", "h"]), Reply::Int(0));
    assert_eq!(
        ex(&mut e, &["HEXPIRE", "h", "10", "FIELDS", "2", "a", "b"]),
        ints(&[-2, -2])
    );
}

#[test]
fn argument_errors() {
    let (mut e, _) = setup();
    put_list(&mut e, "l");
    let err = |s: &str| Reply::err(s);
    for (args, want) in [
        (
            vec!["HEXPIRE", "l", "10", "FIELDS", "1", "a"],
            err(errors::WRONGTYPE),
        ),
        (
            vec!["HEXPIRE", "h", "x", "FIELDS", "1", "a"],
            err(errors::NOT_INTEGER),
        ),
        (
            vec!["HEXPIRE", "h", "-1", "FIELDS", "1", "a"],
            err(errors::HFE_NEGATIVE_TIME),
        ),
        (
            vec!["HEXPIRE", "h", "281474976710656", "FIELDS", "1", "a"],
            Reply::err(errors::invalid_expire("hexpire")),
        ),
        (
            vec!["HEXPIRE", "h", "10", "FIELD", "1", "a"],
            err(errors::HFE_FIELDS_MISSING),
        ),
        (
            vec!["HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1"],
            err(errors::HFE_FIELDS_MISSING),
        ),
        (
            vec!["HEXPIRE", "h", "10", "FIELDS", "0", "a"],
            err(errors::HFE_NUMFIELDS),
        ),
        (
            vec!["HEXPIRE", "h", "10", "FIELDS", "2", "a"],
            err(errors::HFE_NUMFIELDS_MISMATCH),
        ),
        (
            vec!["HTTL", "h", "FIELDS", "1", "a", "b"],
            err(errors::HFE_NUMFIELDS_MISMATCH),
        ),
        (
            vec!["HGETDEL", "h", "FIELDS", "0", "a"],
            err(errors::HGETDEL_NUMFIELDS),
        ),
        (
            vec!["HGETEX", "h", "EX", "1", "PERSIST", "FIELDS", "1", "a"],
            err(errors::HGETEX_ONE_OF),
        ),
        (
            vec!["HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"],
            err(errors::HSETEX_ONE_COND),
        ),
        (
            vec!["HSETEX", "h", "FIELDS", "2", "a", "1"],
            Reply::err(errors::wrong_arity("hsetex")),
        ),
    ] {
        assert_eq!(run(&mut e, &args), want, "{args:?}");
    }
}

#[test]
fn deadlines_follow_the_field_and_the_key() {
    let (mut e, clock) = setup();
    run(
        &mut e,
        &["HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "c"],
    );
    // HSET writes a field again: its deadline goes; HINCRBY keeps it.
    run(&mut e, &["HSET", "h", "a", "9"]);
    run(&mut e, &["HINCRBY", "h", "b", "1"]);
    assert_eq!(
        run(&mut e, &["HTTL", "h", "FIELDS", "2", "a", "b"]),
        ints(&[-1, 100])
    );
    // A deleted field comes back without one.
    run(&mut e, &["HDEL", "h", "c"]);
    run(&mut e, &["HSET", "h", "c", "1"]);
    assert_eq!(run(&mut e, &["HTTL", "h", "FIELDS", "1", "c"]), ints(&[-1]));
    // RENAME carries the deadlines, DEL drops them.
    run(&mut e, &["RENAME", "h", "h2"]);
    assert_eq!(
        run(&mut e, &["HTTL", "h2", "FIELDS", "1", "b"]),
        ints(&[100])
    );
    run(&mut e, &["DEL", "h2"]);
    run(&mut e, &["HSET", "h2", "b", "1"]);
    assert_eq!(
        run(&mut e, &["HTTL", "h2", "FIELDS", "1", "b"]),
        ints(&[-1])
    );
    // MOVE and FLUSHDB.
    run(&mut e, &["HEXPIRE", "h2", "100", "FIELDS", "1", "b"]);
    assert_eq!(run(&mut e, &["MOVE", "h2", "1"]), Reply::Int(1));
    run(&mut e, &["SELECT", "1"]);
    assert_eq!(
        run(&mut e, &["HTTL", "h2", "FIELDS", "1", "b"]),
        ints(&[100])
    );
    run(&mut e, &["FLUSHDB"]);
    run(&mut e, &["HSET", "h2", "b", "1"]);
    assert_eq!(
        run(&mut e, &["HTTL", "h2", "FIELDS", "1", "b"]),
        ints(&[-1])
    );
    assert!(e.hash_ttl.is_empty());
    // A hash whose own TTL ran out takes its field deadlines with it.
    run(&mut e, &["HSET", "k", "f", "1"]);
    run(&mut e, &["HEXPIRE", "k", "100", "FIELDS", "1", "f"]);
    run(&mut e, &["PEXPIRE", "k", "1"]);
    // A key expires once the clock is past its deadline.
    clock.advance(Duration::from_millis(2));
    assert_eq!(run(&mut e, &["EXISTS", "k"]), Reply::Int(0));
    run(&mut e, &["HINCRBY", "k", "f", "1"]);
    assert_eq!(run(&mut e, &["HTTL", "k", "FIELDS", "1", "f"]), ints(&[-1]));
}

#[test]
fn keyspace_events() {
    let (mut e, clock) = setup();
    listen(&mut e);
    run(&mut e, &["HEXPIRE", "h", "1", "FIELDS", "2", "a", "b"]);
    run(&mut e, &["HPERSIST", "h", "FIELDS", "1", "b"]);
    run(&mut e, &["HEXPIRE", "h", "0", "FIELDS", "1", "c"]);
    clock.advance(Duration::from_secs(1));
    e.tick();
    let got = events(&mut e);
    let names: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        names,
        vec![
            ("hexpire", "h"),
            ("hpersist", "h"),
            ("hdel", "h"),
            ("hexpired", "h"),
        ]
    );
    run(&mut e, &["HEXPIRE", "h", "1", "FIELDS", "1", "b"]);
    events(&mut e);
    clock.advance(Duration::from_secs(1));
    e.tick();
    let got = events(&mut e);
    assert_eq!(
        got,
        vec![
            ("hexpired".to_string(), "h".to_string()),
            ("del".to_string(), "h".to_string())
        ]
    );
}

#[test]
fn hgetdel_hgetex_hsetex() {
    let (mut e, clock) = setup();
    assert_eq!(
        run(&mut e, &["HGETDEL", "h", "FIELDS", "2", "a", "zz"]),
        Reply::Array(vec![bulk("1"), Reply::Nil])
    );
    assert_eq!(run(&mut e, &["HEXISTS", "h", "a"]), Reply::Int(0));
    assert_eq!(
        run(
            &mut e,
            &["HGETEX", "h", "PX", "500", "FIELDS", "2", "b", "zz"]
        ),
        Reply::Array(vec![bulk("2"), Reply::Nil])
    );
    assert_eq!(
        run(&mut e, &["HPTTL", "h", "FIELDS", "1", "b"]),
        ints(&[500])
    );
    assert_eq!(
        run(&mut e, &["HGETEX", "h", "PERSIST", "FIELDS", "1", "b"]),
        Reply::Array(vec![bulk("2")])
    );
    assert_eq!(
        run(&mut e, &["HPTTL", "h", "FIELDS", "1", "b"]),
        ints(&[-1])
    );
    // FNX: none of the fields may exist; FXX: all must.
    assert_eq!(
        run(
            &mut e,
            &["HSETEX", "h", "FNX", "FIELDS", "2", "b", "x", "n", "y"]
        ),
        Reply::Int(0)
    );
    assert_eq!(
        run(
            &mut e,
            &["HSETEX", "h", "FXX", "EX", "5", "FIELDS", "1", "b", "x"]
        ),
        Reply::Int(1)
    );
    assert_eq!(run(&mut e, &["HTTL", "h", "FIELDS", "1", "b"]), ints(&[5]));
    assert_eq!(
        run(&mut e, &["HSETEX", "h", "KEEPTTL", "FIELDS", "1", "b", "z"]),
        Reply::Int(1)
    );
    assert_eq!(run(&mut e, &["HTTL", "h", "FIELDS", "1", "b"]), ints(&[5]));
    assert_eq!(
        run(&mut e, &["HSETEX", "h", "FIELDS", "1", "b", "w"]),
        Reply::Int(1)
    );
    assert_eq!(run(&mut e, &["HTTL", "h", "FIELDS", "1", "b"]), ints(&[-1]));
    assert_eq!(
        run(
            &mut e,
            &["HSETEX", "new", "PX", "10", "FIELDS", "1", "f", "v"]
        ),
        Reply::Int(1)
    );
    clock.advance(Duration::from_millis(10));
    assert_eq!(run(&mut e, &["EXISTS", "new"]), Reply::Int(0));
    assert_eq!(
        run(&mut e, &["HGETDEL", "h", "FIELDS", "2", "b", "c"]),
        Reply::Array(vec![bulk("w"), bulk("3")])
    );
    assert_eq!(run(&mut e, &["EXISTS", "h"]), Reply::Int(0));
}

#[test]
fn only_in_the_profiles_that_have_them() {
    for (p, has_74, has_80) in [
        (Profile::Redis72, false, false),
        (Profile::Redis74, true, false),
        (Profile::Redis80, true, true),
        (Profile::Valkey81, false, false),
    ] {
        let (mut e, _) = engine_as(p);
        let r = run(&mut e, &["HTTL", "h", "FIELDS", "1", "a"]);
        assert_eq!(!r.is_error(), has_74, "{p} HTTL: {r:?}");
        let r = run(&mut e, &["HGETDEL", "h", "FIELDS", "1", "a"]);
        assert_eq!(!r.is_error(), has_80, "{p} HGETDEL: {r:?}");
    }
}

/// Redis 7.4's limits and texts for the FIELDS count and the deadline: HEXPIRE and its kin
/// say "Parameter `numFields` should be greater than 0", HTTL, HPTTL, HEXPIRETIME,
/// HPEXPIRETIME and HPERSIST "Number of fields must be a positive integer"; the latest deadline
/// is 2^46 - 1 ms (HFE_MAX_ABS_TIME_MSEC), in both units, absolute or relative.
#[test]
fn field_counts_and_the_deadline_ceiling() {
    let (mut e, _) = setup();
    for cmd in ["HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"] {
        for n in ["0", "-1", "x"] {
            assert_eq!(
                run(&mut e, &[cmd, "h", "100", "FIELDS", n, "a"]),
                Reply::err(errors::HFE_NUMFIELDS),
                "{cmd} {n}"
            );
        }
    }
    for cmd in ["HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"] {
        for n in ["0", "x"] {
            assert_eq!(
                run(&mut e, &[cmd, "h", "FIELDS", n, "a"]),
                Reply::err("ERR Number of fields must be a positive integer"),
                "{cmd} {n}"
            );
        }
        assert_eq!(
            run(&mut e, &[cmd, "h", "FIELDS", "2", "a"]),
            Reply::err(errors::HFE_NUMFIELDS_MISMATCH),
            "{cmd}"
        );
    }
    let ceiling = (1i64 << 46) - 1;
    let line = |cmd: &'static str, v: String| -> Vec<String> {
        [cmd, "h", v.as_str(), "FIELDS", "1", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let mut go = |l: Vec<String>| {
        let l: Vec<&str> = l.iter().map(String::as_str).collect();
        run(&mut e, &l)
    };
    assert_eq!(go(line("HPEXPIREAT", ceiling.to_string())), ints(&[1]));
    assert_eq!(
        go(line("HPEXPIREAT", (ceiling + 1).to_string())),
        Reply::err(errors::invalid_expire("hpexpireat"))
    );
    assert_eq!(
        go(line("HEXPIREAT", (ceiling / 1000).to_string())),
        ints(&[1])
    );
    assert_eq!(
        go(line("HEXPIREAT", (ceiling / 1000 + 1).to_string())),
        Reply::err(errors::invalid_expire("hexpireat"))
    );
    // Relative: the clock's now (T0) counts against the ceiling.
    let room = ceiling - T0;
    assert_eq!(go(line("HPEXPIRE", room.to_string())), ints(&[1]));
    assert_eq!(
        go(line("HPEXPIRE", (room + 1).to_string())),
        Reply::err(errors::invalid_expire("hpexpire"))
    );
    assert_eq!(
        go(line("HEXPIRE", "1000000000000".to_string())),
        Reply::err(errors::invalid_expire("hexpire"))
    );
}

/// Events of HEXPIRE and its kin as Redis 7.4's hashTypeSetExDone sends them: one per call,
/// `hdel` when a past deadline deleted fields, else `hexpire`; `hdel` then `del` when that
/// emptied the hash. (One call has one deadline, so it either deletes or sets.)
#[test]
fn hexpire_events_for_past_deadlines() {
    let (mut e, _clock) = setup();
    listen(&mut e);
    let past = (T0 / 1000 - 10).to_string();
    let future = (T0 / 1000 + 100).to_string();
    assert_eq!(
        run(&mut e, &["HEXPIREAT", "h", &past, "FIELDS", "1", "a"]),
        ints(&[2])
    );
    assert_eq!(
        run(&mut e, &["HEXPIREAT", "h", &future, "FIELDS", "1", "b"]),
        ints(&[1])
    );
    // b has a later deadline, so LT with a past time deletes it; zz does not exist.
    assert_eq!(
        run(
            &mut e,
            &["HEXPIREAT", "h", &past, "LT", "FIELDS", "2", "b", "zz"]
        ),
        ints(&[2, -2])
    );
    // A condition not met never deletes: c has no deadline, so XX fails.
    assert_eq!(
        run(&mut e, &["HEXPIREAT", "h", &past, "XX", "FIELDS", "1", "c"]),
        ints(&[0])
    );
    let got = events(&mut e);
    let names: Vec<&str> = got.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(names, vec!["hdel", "hexpire", "hdel"]);
    assert_eq!(
        run(
            &mut e,
            &["HPEXPIREAT", "h", &T0.to_string(), "FIELDS", "1", "c"]
        ),
        ints(&[2]),
        "a deadline equal to now is past"
    );
    let got = events(&mut e);
    let names: Vec<&str> = got.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(names, vec!["hdel", "del"]);
    assert_eq!(run(&mut e, &["EXISTS", "h"]), Reply::Int(0));
}

/// COPY carries the field deadlines, to another database too, and the copy's are its own;
/// DUMP + RESTORE brings them back.
#[test]
fn copy_and_restore_carry_field_deadlines() {
    let (mut e, _clock) = setup();
    let at = (T0 + 60_000).to_string();
    run(&mut e, &["HPEXPIREAT", "h", &at, "FIELDS", "1", "a"]);
    let deadlines =
        |e: &mut Engine, key: &str| run(e, &["HPEXPIRETIME", key, "FIELDS", "2", "a", "b"]);
    let want = Reply::Array(vec![Reply::Int(T0 + 60_000), Reply::Int(-1)]);
    assert_eq!(run(&mut e, &["COPY", "h", "cp"]), Reply::Int(1));
    assert_eq!(deadlines(&mut e, "cp"), want);
    assert_eq!(
        run(&mut e, &["HPERSIST", "cp", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        deadlines(&mut e, "h"),
        want,
        "the source keeps its deadline"
    );
    assert_eq!(run(&mut e, &["COPY", "h", "h", "DB", "1"]), Reply::Int(1));
    run(&mut e, &["SELECT", "1"]);
    assert_eq!(deadlines(&mut e, "h"), want);
    run(&mut e, &["SELECT", "0"]);
    let Reply::Bulk(payload) = run(&mut e, &["DUMP", "h"]) else {
        panic!("DUMP")
    };
    let line = vec!["RESTORE".into(), "r".into(), "0".into(), payload];
    assert_eq!(e.execute_args(1, line), Reply::ok());
    assert_eq!(deadlines(&mut e, "r"), want);
}
