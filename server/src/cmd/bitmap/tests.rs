//! What the differential suite cannot show: WRONGTYPE against other types, notifications
//! (sent only when bits change, as Redis 7.0.15), and offset limits under a small
//! proto-max-bulk-len.

use crate::config::Config;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;
use crate::test_support::{events, listen, put_list, run};

/// The listener's events as "event key" lines.
fn event_lines(e: &mut Engine) -> Vec<String> {
    events(e)
        .into_iter()
        .map(|(ev, key)| format!("{} {}", ev, key))
        .collect()
}

#[test]
fn wrongtype_for_bitmap_commands() {
    let mut e = Engine::new(Config::default());
    put_list(&mut e, "l");
    let wrong = Reply::err(errors::WRONGTYPE);
    for cmd in [
        vec!["SETBIT", "l", "1", "1"],
        vec!["GETBIT", "l", "1"],
        vec!["BITCOUNT", "l"],
        vec!["BITCOUNT", "l", "x"],
        vec!["BITPOS", "l", "1"],
        vec!["BITOP", "AND", "d", "l"],
        vec!["BITOP", "OR", "d", "missing", "l"],
        vec!["BITFIELD", "l", "GET", "u8", "0"],
        vec!["BITFIELD", "l"],
        vec!["BITFIELD", "l", "SET", "u8", "0", "1"],
        vec!["BITFIELD_RO", "l", "GET", "u8", "0"],
    ] {
        assert_eq!(run(&mut e, &cmd), wrong, "{cmd:?}");
    }
    // Argument errors Redis checks before the lookup still win.
    assert_eq!(
        run(&mut e, &["SETBIT", "l", "-1", "1"]),
        Reply::err(errors::BIT_OFFSET)
    );
    assert_eq!(
        run(&mut e, &["BITPOS", "l", "2"]),
        Reply::err(errors::BITPOS_BIT)
    );
    assert_eq!(
        run(&mut e, &["BITFIELD", "l", "GET", "u64", "0"]),
        Reply::err(errors::BITFIELD_TYPE)
    );
    assert_eq!(
        run(&mut e, &["BITFIELD_RO", "l", "SET", "u8", "0", "1"]),
        Reply::err(errors::BITFIELD_RO_GET_ONLY)
    );
    // BITOP's destination may hold any type: it is replaced.
    run(&mut e, &["SET", "s", "\u{7f}"]);
    assert_eq!(run(&mut e, &["BITOP", "NOT", "l", "s"]), Reply::Int(1));
    assert_eq!(run(&mut e, &["GET", "l"]), Reply::bulk([0x80u8]));
}

#[test]
fn notifications_only_when_bits_change() {
    let mut e = Engine::new(Config::default());
    listen(&mut e);
    run(&mut e, &["SETBIT", "k", "1", "1"]);
    run(&mut e, &["SETBIT", "k", "1", "1"]);
    run(&mut e, &["SETBIT", "k", "100", "0"]);
    run(&mut e, &["SETBIT", "k", "100", "0"]);
    assert_eq!(event_lines(&mut e), ["setbit k", "setbit k"]);
    run(&mut e, &["BITFIELD", "b", "SET", "u8", "0", "1"]);
    run(&mut e, &["BITFIELD", "b", "SET", "u8", "0", "1"]);
    run(&mut e, &["BITFIELD", "b", "GET", "u8", "0"]);
    run(&mut e, &["BITFIELD", "b", "INCRBY", "u8", "0", "1"]);
    assert_eq!(event_lines(&mut e), ["setbit b", "setbit b"]);
    // A FAIL overflow writes nothing and says nothing, yet the key is created as Redis does.
    run(
        &mut e,
        &[
            "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10",
        ],
    );
    assert_eq!(event_lines(&mut e), Vec::<String>::new());
    assert_eq!(run(&mut e, &["GET", "f"]), Reply::bulk([0u8]));
    run(&mut e, &["BITOP", "OR", "d", "k"]);
    run(&mut e, &["BITOP", "OR", "d", "missing"]);
    run(&mut e, &["BITOP", "OR", "d", "missing"]);
    assert_eq!(event_lines(&mut e), ["set d", "del d"]);
}

#[test]
fn offsets_past_proto_max_bulk_len_are_refused_without_allocating() {
    let mut e = Engine::new(Config::default());
    e.config_mut().proto_max_bulk_len = 4;
    let err = Reply::err(errors::BIT_OFFSET);
    assert_eq!(run(&mut e, &["SETBIT", "k", "32", "1"]), err);
    assert_eq!(run(&mut e, &["SETBIT", "k", "31", "1"]), Reply::Int(0));
    assert_eq!(run(&mut e, &["GETBIT", "k", "32"]), err);
    assert_eq!(run(&mut e, &["BITFIELD", "k", "GET", "u8", "#4"]), err);
    assert_eq!(
        run(&mut e, &["BITFIELD", "k", "SET", "u8", "#3", "255"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    assert_eq!(
        run(
            &mut e,
            &["BITFIELD", "k", "SET", "i64", "#9223372036854775807", "1"]
        ),
        err
    );
    assert!(!e.db(0).contains(b"missing"));
    assert_eq!(run(&mut e, &["STRLEN", "k"]), Reply::Int(4));
    // Redis lets the last field run past the limit by up to its width: the string grows.
    assert_eq!(
        run(&mut e, &["BITFIELD", "k", "SET", "u8", "31", "255"]),
        Reply::Array(vec![Reply::Int(1 << 7)])
    );
    assert_eq!(run(&mut e, &["STRLEN", "k"]), Reply::Int(5));
}

#[test]
fn bitfield_checks_every_operation_before_running_any() {
    let mut e = Engine::new(Config::default());
    let r = run(
        &mut e,
        &["BITFIELD", "k", "SET", "u8", "0", "255", "GET", "u64", "0"],
    );
    assert_eq!(r, Reply::err(errors::BITFIELD_TYPE));
    assert!(!e.db(0).contains(b"k"));
}
