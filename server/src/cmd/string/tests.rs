//! What the differential suite cannot show: TTLs under a manual clock, WRONGTYPE against
//! other value types, keyspace notification names, and Redis 8.4's compare-and-set family
//! (which the reference Redis 7.0 lacks).

use std::time::Duration;

use crate::compat::Profile;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;
use crate::test_support::{engine, engine_as, events, listen, put_list, run, T0};

fn ttl(e: &mut Engine, key: &str) -> Option<i64> {
    e.db(0).peek(key.as_bytes()).and_then(|en| en.expire_at())
}

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

fn ev(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn set_expiry_options_set_absolute_deadlines() {
    let (mut e, clock) = engine();
    assert_eq!(run(&mut e, &["SET", "a", "v", "EX", "10"]), Reply::ok());
    assert_eq!(ttl(&mut e, "a"), Some(T0 + 10_000));
    run(&mut e, &["SET", "b", "v", "PX", "1500"]);
    assert_eq!(ttl(&mut e, "b"), Some(T0 + 1500));
    run(
        &mut e,
        &["SET", "c", "v", "EXAT", &((T0 / 1000) + 5).to_string()],
    );
    assert_eq!(ttl(&mut e, "c"), Some((T0 / 1000 + 5) * 1000));
    run(&mut e, &["SET", "d", "v", "PXAT", &(T0 + 77).to_string()]);
    assert_eq!(ttl(&mut e, "d"), Some(T0 + 77));
    run(&mut e, &["SETEX", "e", "3", "v"]);
    assert_eq!(ttl(&mut e, "e"), Some(T0 + 3000));
    run(&mut e, &["PSETEX", "f", "30", "v"]);
    assert_eq!(ttl(&mut e, "f"), Some(T0 + 30));

    clock.advance(Duration::from_millis(1499));
    assert_eq!(run(&mut e, &["GET", "b"]), bulk("v"));
    // At its deadline's own millisecond the key still lives, as in Redis; one later it is gone.
    clock.advance(Duration::from_millis(1));
    assert_eq!(run(&mut e, &["GET", "b"]), bulk("v"));
    clock.advance(Duration::from_millis(1));
    assert_eq!(run(&mut e, &["GET", "b"]), Reply::Nil);
    assert_eq!(run(&mut e, &["GET", "a"]), bulk("v"));
}

#[test]
fn plain_set_and_getset_clear_the_ttl_keepttl_keeps_it() {
    let (mut e, _) = engine();
    run(&mut e, &["SET", "k", "v", "EX", "10"]);
    run(&mut e, &["SET", "k", "w", "KEEPTTL"]);
    assert_eq!(ttl(&mut e, "k"), Some(T0 + 10_000));
    run(&mut e, &["SET", "k", "x"]);
    assert_eq!(ttl(&mut e, "k"), None);
    run(&mut e, &["SET", "k", "v", "EX", "10"]);
    assert_eq!(run(&mut e, &["GETSET", "k", "y"]), bulk("v"));
    assert_eq!(ttl(&mut e, "k"), None);
    run(&mut e, &["SET", "k", "v", "EX", "10"]);
    run(&mut e, &["MSET", "k", "z"]);
    assert_eq!(ttl(&mut e, "k"), None);
}

#[test]
fn in_place_writes_keep_the_ttl() {
    let (mut e, _) = engine();
    for (setup, cmd) in [
        (vec!["SET", "k", "5", "EX", "10"], vec!["INCR", "k"]),
        (vec!["SET", "k", "5", "EX", "10"], vec!["DECRBY", "k", "2"]),
        (
            vec!["SET", "k", "5", "EX", "10"],
            vec!["INCRBYFLOAT", "k", "0.5"],
        ),
        (vec!["SET", "k", "5", "EX", "10"], vec!["APPEND", "k", "x"]),
        (
            vec!["SET", "k", "5", "EX", "10"],
            vec!["SETRANGE", "k", "3", "x"],
        ),
        (
            vec!["SET", "k", "5", "EX", "10"],
            vec!["SETBIT", "k", "100", "1"],
        ),
        (
            vec!["SET", "k", "5", "EX", "10"],
            vec!["BITFIELD", "k", "SET", "u8", "0", "1"],
        ),
    ] {
        run(&mut e, &setup);
        assert!(!run(&mut e, &cmd).is_error(), "{cmd:?}");
        assert_eq!(ttl(&mut e, "k"), Some(T0 + 10_000), "{cmd:?}");
    }
}

#[test]
fn getex_sets_changes_and_removes_the_ttl() {
    let (mut e, clock) = engine();
    run(&mut e, &["SET", "k", "v"]);
    assert_eq!(run(&mut e, &["GETEX", "k", "PX", "500"]), bulk("v"));
    assert_eq!(ttl(&mut e, "k"), Some(T0 + 500));
    assert_eq!(run(&mut e, &["GETEX", "k"]), bulk("v"));
    assert_eq!(ttl(&mut e, "k"), Some(T0 + 500));
    assert_eq!(
        run(
            &mut e,
            &["GETEX", "k", "EXAT", &((T0 / 1000) + 9).to_string()]
        ),
        bulk("v")
    );
    assert_eq!(ttl(&mut e, "k"), Some((T0 / 1000 + 9) * 1000));
    assert_eq!(run(&mut e, &["GETEX", "k", "PERSIST"]), bulk("v"));
    assert_eq!(ttl(&mut e, "k"), None);
    clock.advance(Duration::from_secs(3600));
    assert_eq!(run(&mut e, &["GET", "k"]), bulk("v"));
    // A deadline already passed deletes the key but still answers with the value.
    assert_eq!(run(&mut e, &["GETEX", "k", "PXAT", "1"]), bulk("v"));
    assert!(!e.db(0).contains(b"k"));
}

#[test]
fn relative_expire_overflowing_now_is_invalid() {
    let (mut e, _) = engine();
    let near_max = (i64::MAX - T0 + 1).to_string();
    assert_eq!(
        run(&mut e, &["SET", "k", "v", "PX", &near_max]),
        Reply::err(errors::invalid_expire("set"))
    );
    assert_eq!(
        run(&mut e, &["PSETEX", "k", &near_max, "v"]),
        Reply::err(errors::invalid_expire("psetex"))
    );
    assert_eq!(run(&mut e, &["SET", "k", "v"]), Reply::ok());
    assert_eq!(
        run(&mut e, &["GETEX", "k", "PX", &near_max]),
        Reply::err(errors::invalid_expire("getex"))
    );
}

#[test]
fn wrongtype_for_every_command_that_reads_a_string() {
    let (mut e, _) = engine_as(Profile::Redis84);
    put_list(&mut e, "l");
    let wrong = Reply::err(errors::WRONGTYPE);
    for cmd in [
        vec!["GET", "l"],
        vec!["GETSET", "l", "v"],
        vec!["GETDEL", "l"],
        vec!["GETEX", "l"],
        vec!["GETEX", "l", "EX", "0"],
        vec!["SET", "l", "v", "GET"],
        vec!["SET", "l", "v", "NX", "GET"],
        vec!["APPEND", "l", "x"],
        vec!["STRLEN", "l"],
        vec!["SETRANGE", "l", "0", "x"],
        vec!["SETRANGE", "l", "0", ""],
        vec!["GETRANGE", "l", "0", "1"],
        vec!["SUBSTR", "l", "0", "1"],
        vec!["INCR", "l"],
        vec!["DECR", "l"],
        vec!["INCRBY", "l", "1"],
        vec!["DECRBY", "l", "1"],
        vec!["INCRBYFLOAT", "l", "1"],
        vec!["DIGEST", "l"],
        vec!["DELEX", "l", "IFEQ", "x"],
        vec!["SET", "l", "v", "IFEQ", "x"],
    ] {
        assert_eq!(run(&mut e, &cmd), wrong, "{cmd:?}");
    }
    assert_eq!(
        run(&mut e, &["LCS", "l", "missing"]),
        Reply::err(errors::LCS_NOT_STRINGS)
    );
    // Argument errors that Redis checks first still win.
    assert_eq!(
        run(&mut e, &["INCRBY", "l", "x"]),
        Reply::err(errors::NOT_INTEGER)
    );
    assert_eq!(
        run(&mut e, &["DECRBY", "l", "-9223372036854775808"]),
        Reply::err(errors::DECREMENT_OVERFLOW)
    );
    assert_eq!(
        run(&mut e, &["SET", "l", "v", "EX", "0", "GET"]),
        Reply::err(errors::invalid_expire("set"))
    );
    assert_eq!(
        run(&mut e, &["SETRANGE", "l", "-1", "x"]),
        Reply::err(errors::OFFSET_OUT_OF_RANGE)
    );
    // MGET answers nil for other types, and the list is untouched by all of the above.
    assert_eq!(run(&mut e, &["MGET", "l"]), Reply::Array(vec![Reply::Nil]));
    assert_eq!(
        e.db(0).get(b"l").map(|en| en.value.type_name()),
        Some("list")
    );
    // Plain SET, MSET and SETNX-style checks treat any type as "exists" and SET replaces it.
    assert_eq!(run(&mut e, &["SETNX", "l", "v"]), Reply::Int(0));
    assert_eq!(run(&mut e, &["MSETNX", "l", "v"]), Reply::Int(0));
    assert_eq!(run(&mut e, &["SET", "l", "v", "XX"]), Reply::ok());
    assert_eq!(run(&mut e, &["GET", "l"]), bulk("v"));
}

#[test]
fn keyspace_events_use_redis_names() {
    let (mut e, _) = engine();
    listen(&mut e);
    run(&mut e, &["SET", "a", "1"]);
    run(&mut e, &["SET", "b", "1", "EX", "100"]);
    run(&mut e, &["SET", "a", "2", "NX"]);
    assert_eq!(
        events(&mut e),
        ev(&[("set", "a"), ("set", "b"), ("expire", "b")])
    );
    run(&mut e, &["INCR", "a"]);
    run(&mut e, &["DECRBY", "a", "3"]);
    run(&mut e, &["INCRBYFLOAT", "a", "1.5"]);
    run(&mut e, &["APPEND", "a", "x"]);
    run(&mut e, &["SETRANGE", "a", "0", "y"]);
    run(&mut e, &["SETRANGE", "a", "0", ""]);
    assert_eq!(
        events(&mut e),
        ev(&[
            ("incrby", "a"),
            ("incrby", "a"),
            ("incrbyfloat", "a"),
            ("append", "a"),
            ("setrange", "a")
        ])
    );
    run(&mut e, &["GETEX", "a", "EX", "100"]);
    run(&mut e, &["GETEX", "a", "PERSIST"]);
    run(&mut e, &["GETEX", "a", "PERSIST"]);
    run(&mut e, &["GETEX", "a"]);
    run(&mut e, &["GETEX", "a", "PXAT", "1"]);
    assert_eq!(
        events(&mut e),
        ev(&[("expire", "a"), ("persist", "a"), ("del", "a")])
    );
    run(&mut e, &["GETSET", "c", "1"]);
    run(&mut e, &["GETDEL", "c"]);
    run(&mut e, &["GETDEL", "c"]);
    run(&mut e, &["MSET", "d", "1", "e", "2"]);
    run(&mut e, &["MSETNX", "f", "1", "d", "2"]);
    run(&mut e, &["SETNX", "g", "1"]);
    run(&mut e, &["SETEX", "h", "10", "v"]);
    run(&mut e, &["PSETEX", "i", "10", "v"]);
    assert_eq!(
        events(&mut e),
        ev(&[
            ("set", "c"),
            ("del", "c"),
            ("set", "d"),
            ("set", "e"),
            ("set", "g"),
            ("set", "h"),
            ("expire", "h"),
            ("set", "i"),
            ("expire", "i"),
        ])
    );
}

#[test]
fn counters_do_not_change_the_value_on_error() {
    let (mut e, _) = engine();
    run(&mut e, &["SET", "k", "9223372036854775807"]);
    assert_eq!(run(&mut e, &["INCR", "k"]), Reply::err(errors::OVERFLOW));
    assert_eq!(run(&mut e, &["GET", "k"]), bulk("9223372036854775807"));
    run(&mut e, &["SET", "f", "1e4932"]);
    assert_eq!(
        run(&mut e, &["INCRBYFLOAT", "f", "1e4932"]),
        Reply::err(errors::NAN_OR_INF)
    );
    assert_eq!(run(&mut e, &["GET", "f"]), bulk("1e4932"));
    assert_eq!(
        run(&mut e, &["INCRBYFLOAT", "missing", "x"]),
        Reply::err(errors::NOT_FLOAT)
    );
    assert!(!e.db(0).contains(b"missing"));
}

#[test]
fn setrange_and_append_respect_proto_max_bulk_len_without_allocating() {
    let (mut e, _) = engine();
    e.config_mut().proto_max_bulk_len = 16;
    assert_eq!(
        run(&mut e, &["SETRANGE", "k", "16", "x"]),
        Reply::err(errors::STRING_TOO_LONG)
    );
    assert_eq!(run(&mut e, &["SETRANGE", "k", "15", "x"]), Reply::Int(16));
    assert_eq!(
        run(&mut e, &["APPEND", "k", "y"]),
        Reply::err(errors::STRING_TOO_LONG)
    );
    assert_eq!(
        run(&mut e, &["SETRANGE", "k", "9223372036854775807", "x"]),
        Reply::err(errors::STRING_TOO_LONG)
    );
    // LCS refuses a table larger than proto-max-bulk-len (here (3+1)*(3+1)*4 = 64 bytes).
    run(&mut e, &["SET", "a", "abc"]);
    assert_eq!(
        run(&mut e, &["LCS", "a", "a"]),
        Reply::err(errors::LCS_TOO_MUCH_MEMORY)
    );
}

// ---- Redis 8.4 compare-and-set family ----------------------------------------------------
//
// Facts checked, from the Redis 8.4 documentation of SET, DELEX and DIGEST:
// - DIGEST returns the XXH3 64-bit hash of the value as a hex string; for "Hello world" the
//   documented example is "b6acb9d84a38ff74"; a missing key gives nil, another type an error.
// - SET IFEQ v sets only if the current value equals v, and never creates a missing key;
//   IFNE sets if it differs, and creates a missing key; IFDEQ/IFDNE do the same against the
//   digest. A failed condition answers nil; with GET the old value is returned regardless.
// - DELEX without a condition deletes like DEL; with IFEQ/IFNE/IFDEQ/IFDNE it deletes only
//   when the condition holds, requires a string, and answers 1 when deleted, else 0.
// Not documented, chosen here: a digest argument compares case-insensitively, and IF* options
// cannot be combined with NX, XX or another IF* option (syntax error).

#[test]
fn digest_is_xxh3_hex() {
    let (mut e, _) = engine_as(Profile::Redis84);
    run(&mut e, &["SET", "key1", "Hello world"]);
    assert_eq!(run(&mut e, &["DIGEST", "key1"]), bulk("b6acb9d84a38ff74"));
    assert_eq!(run(&mut e, &["DIGEST", "missing"]), Reply::Nil);
    run(&mut e, &["SET", "empty", ""]);
    let Reply::Bulk(d) = run(&mut e, &["DIGEST", "empty"]) else {
        panic!()
    };
    assert_eq!(d.len(), 16);
}

#[test]
fn set_ifeq_and_ifne() {
    let (mut e, _) = engine_as(Profile::Redis84);
    assert_eq!(run(&mut e, &["SET", "k", "v1", "IFEQ", "v0"]), Reply::Nil);
    assert!(!e.db(0).contains(b"k"), "IFEQ never creates a key");
    assert_eq!(run(&mut e, &["SET", "k", "v1", "IFNE", "v0"]), Reply::ok());
    assert_eq!(run(&mut e, &["SET", "k", "v2", "IFEQ", "nope"]), Reply::Nil);
    assert_eq!(run(&mut e, &["SET", "k", "v2", "IFEQ", "v1"]), Reply::ok());
    assert_eq!(run(&mut e, &["SET", "k", "v3", "IFNE", "v2"]), Reply::Nil);
    assert_eq!(
        run(&mut e, &["SET", "k", "v3", "ifne", "other", "GET"]),
        bulk("v2")
    );
    assert_eq!(
        run(&mut e, &["SET", "k", "v4", "IFEQ", "nope", "GET"]),
        bulk("v3")
    );
    assert_eq!(run(&mut e, &["GET", "k"]), bulk("v3"));
    assert_eq!(
        run(&mut e, &["SET", "k", "v4", "IFEQ", "v3", "PX", "100"]),
        Reply::ok()
    );
    assert_eq!(ttl(&mut e, "k"), Some(T0 + 100));
    for bad in [
        vec!["SET", "k", "v", "IFEQ"],
        vec!["SET", "k", "v", "IFEQ", "a", "NX"],
        vec!["SET", "k", "v", "XX", "IFNE", "a"],
        vec!["SET", "k", "v", "IFEQ", "a", "IFNE", "b"],
        vec!["GETEX", "k", "IFEQ", "a"],
    ] {
        assert_eq!(run(&mut e, &bad), Reply::err(errors::SYNTAX), "{bad:?}");
    }
}

#[test]
fn set_ifdeq_and_ifdne() {
    let (mut e, _) = engine_as(Profile::Redis84);
    run(&mut e, &["SET", "k", "Hello world"]);
    assert_eq!(
        run(&mut e, &["SET", "k", "x", "IFDEQ", "0000000000000000"]),
        Reply::Nil
    );
    assert_eq!(
        run(&mut e, &["SET", "k", "x", "IFDNE", "b6acb9d84a38ff74"]),
        Reply::Nil
    );
    assert_eq!(
        run(&mut e, &["SET", "k", "x", "IFDEQ", "B6ACB9D84A38FF74"]),
        Reply::ok()
    );
    assert_eq!(
        run(&mut e, &["SET", "k", "y", "IFDNE", "b6acb9d84a38ff74"]),
        Reply::ok()
    );
    assert_eq!(
        run(&mut e, &["SET", "new", "y", "IFDEQ", "b6acb9d84a38ff74"]),
        Reply::Nil
    );
    assert_eq!(
        run(&mut e, &["SET", "new", "y", "IFDNE", "b6acb9d84a38ff74"]),
        Reply::ok()
    );
}

#[test]
fn delex_conditions() {
    let (mut e, _) = engine_as(Profile::Redis84);
    listen(&mut e);
    assert_eq!(run(&mut e, &["DELEX", "k"]), Reply::Int(0));
    run(&mut e, &["SET", "k", "token"]);
    assert_eq!(run(&mut e, &["DELEX", "k", "IFEQ", "other"]), Reply::Int(0));
    assert_eq!(run(&mut e, &["DELEX", "k", "IFNE", "token"]), Reply::Int(0));
    assert_eq!(run(&mut e, &["DELEX", "k", "IFEQ", "token"]), Reply::Int(1));
    assert!(!e.db(0).contains(b"k"));
    assert_eq!(
        run(&mut e, &["DELEX", "k", "IFNE", "x"]),
        Reply::Int(0),
        "a missing key is never deleted"
    );
    run(&mut e, &["SET", "k", "Hello world"]);
    assert_eq!(
        run(&mut e, &["DELEX", "k", "IFDNE", "b6acb9d84a38ff74"]),
        Reply::Int(0)
    );
    assert_eq!(
        run(&mut e, &["DELEX", "k", "IFDEQ", "b6acb9d84a38ff74"]),
        Reply::Int(1)
    );
    run(&mut e, &["SET", "k", "a"]);
    assert_eq!(run(&mut e, &["DELEX", "k", "IFNE", "b"]), Reply::Int(1));
    // Without a condition any type goes, as with DEL.
    put_list(&mut e, "l");
    assert_eq!(run(&mut e, &["DELEX", "l"]), Reply::Int(1));
    assert_eq!(
        run(&mut e, &["DELEX", "k", "IFEQ"]),
        Reply::err(errors::SYNTAX)
    );
    assert_eq!(
        run(&mut e, &["DELEX", "k", "FOO", "x"]),
        Reply::err(errors::SYNTAX)
    );
    let dels: Vec<_> = events(&mut e)
        .into_iter()
        .filter(|(ev, _)| ev == "del")
        .collect();
    assert_eq!(
        dels,
        ev(&[("del", "k"), ("del", "k"), ("del", "k"), ("del", "l")])
    );
}

#[test]
fn writes_break_watch() {
    let (mut e, _) = engine();
    run(&mut e, &["SET", "k", "1"]);
    e.watched_keys
        .entry((0, b"k".to_vec()))
        .or_default()
        .push(7);
    e.execute(7, &["PING"]);
    run(&mut e, &["INCR", "k"]);
    assert!(e.sessions[&7].watch_dirty);
}
