//! Random-member replies against the client's output limit: stopped and closed where Redis
//! closes the client, answered as before everywhere else.

use std::time::Duration;

use super::too_many_picks;
use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;
use crate::session::{ConnId, NetMeters};

/// The admin connection: it sets the data and the limits.
const ADMIN: ConnId = 1;

/// Every form of the three commands with a count, `{n}` standing for the count.
const FORMS: [&str; 5] = [
    "HRANDFIELD h {n}",
    "HRANDFIELD h {n} WITHVALUES",
    "SRANDMEMBER s {n}",
    "ZRANDMEMBER z {n}",
    "ZRANDMEMBER z {n} WITHSCORES",
];

fn args(form: &str, n: i64) -> Vec<String> {
    form.replace("{n}", &n.to_string())
        .split(' ')
        .map(str::to_string)
        .collect()
}

fn engine_with_data(config: Config) -> Engine {
    with_data(Engine::new(config))
}

fn with_data(mut e: Engine) -> Engine {
    for cmd in [
        &["HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3"][..],
        &["SADD", "s", "a", "b", "c", "12"],
        &["ZADD", "z", "1", "a", "2.5", "b", "-3", "c"],
    ] {
        assert!(!e.execute(ADMIN, cmd).is_error());
    }
    e
}

fn set_limit(e: &mut Engine, value: &str) {
    let r = e.execute(
        ADMIN,
        &["CONFIG", "SET", "client-output-buffer-limit", value],
    );
    assert_eq!(r, Reply::ok());
}

/// A new connection `conn` speaking `resp`.
fn connect(e: &mut Engine, conn: ConnId, resp: u8) {
    let r = e.execute(conn, &["HELLO", &resp.to_string()]);
    assert!(!r.is_error(), "{r:?}");
}

#[test]
fn a_huge_negative_count_closes_a_client_at_its_hard_limit_and_sends_nothing() {
    let mut e = engine_with_data(Config::default());
    set_limit(&mut e, "normal 1000000 0 0");
    let mut conn = 10;
    for form in FORMS {
        for resp in [2, 3] {
            conn += 1;
            connect(&mut e, conn, resp);
            let r = e.execute(conn, &args(form, -999_999_999));
            assert_eq!(r, Reply::None, "{form} RESP{resp}: no reply at all");
            assert!(e.must_close_now(conn), "{form} RESP{resp}: closed");
            assert!(e.take_output(conn).is_empty());
            // The others are served as before, a small count included.
            assert_eq!(e.execute(ADMIN, &["PING"]), Reply::Status("PONG".into()));
            match e.execute(ADMIN, &args(form, -3)) {
                Reply::Raw(b) => assert!(b.starts_with(b"*"), "{form}"),
                other => panic!("{form}: {other:?}"),
            }
            assert!(!e.must_close_now(ADMIN));
        }
    }
}

#[test]
fn under_a_limit_a_count_that_fits_answers_exactly_as_without_one() {
    // Same seed, same commands: the picks and their encoding must not depend on the limit.
    let seeded = || Config {
        seed: Some(7),
        ..Config::default()
    };
    let mut limited = engine_with_data(seeded());
    let mut free = engine_with_data(seeded());
    set_limit(&mut limited, "normal 1000000 0 0");
    for resp in [2, 3] {
        connect(&mut limited, 2, resp);
        connect(&mut free, 2, resp);
        for form in FORMS {
            for n in [-1, -7, -500, 2] {
                let ours = limited.execute(2, &args(form, n));
                let plain = free.execute(2, &args(form, n));
                assert!(matches!(plain, Reply::Array(_)), "{plain:?}");
                if n < 0 {
                    assert!(matches!(ours, Reply::Raw(_)), "{form} {n}: streamed");
                }
                assert_eq!(
                    ours.to_bytes(resp),
                    plain.to_bytes(resp),
                    "{form} {n} RESP{resp}"
                );
                assert!(!limited.must_close_now(2));
            }
        }
    }
    // The generator moved on alike in both.
    assert_eq!(
        limited.execute(2, &["SRANDMEMBER", "s"]),
        free.execute(2, &["SRANDMEMBER", "s"])
    );
}

#[test]
fn where_no_limit_can_stop_the_reply_a_huge_count_is_refused_as_before() {
    let mut e = engine_with_data(Config::default());
    // No limit for normal clients (the default).
    for form in FORMS {
        assert_eq!(e.execute(2, &args(form, -999_999_999)), too_many_picks());
    }
    set_limit(&mut e, "normal 1000000 0 0");
    // A transaction's replies are built whole before they are the client's output.
    e.execute(2, &["MULTI"]);
    e.execute(2, &args(FORMS[0], -999_999_999));
    assert_eq!(
        e.execute(2, &["EXEC"]),
        Reply::Array(vec![too_many_picks()])
    );
    assert!(!e.must_close_now(2));
    // A script's redis.call answers the script, not the client.
    let r = e.execute(
        2,
        &[
            "EVAL",
            "return redis.pcall('srandmember', KEYS[1], '-999999999')",
            "1",
            "s",
        ],
    );
    assert_eq!(r, too_many_picks());
    assert!(!e.must_close_now(2));
    // A reply that is not sent (CLIENT REPLY OFF) fills no output.
    e.execute(2, &["CLIENT", "REPLY", "OFF"]);
    e.execute(2, &args(FORMS[3], -999_999_999));
    assert!(!e.must_close_now(2));
    e.execute(2, &["CLIENT", "REPLY", "ON"]);
    assert_eq!(e.execute(2, &["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn a_soft_limit_stops_the_reply_only_once_its_time_is_up() {
    let clock = crate::Clock::manual(1_000_000);
    let mut e = with_data(Engine::with_clock(Config::default(), clock.clone()));
    set_limit(&mut e, "normal 0 1000 2");
    // Not over it yet: the soft limit cannot close the client during this one command
    // (the clock does not move in it), so the reply is built whole and refused when huge.
    assert_eq!(
        e.execute(2, &args(FORMS[1], -999_999_999)),
        too_many_picks()
    );
    assert!(!e.must_close_now(2));
    // Over it from now on (what the shell holds for it, unread, past its 16 KiB reply
    // buffer), and still 3 s later.
    NetMeters::set(&e.sessions[&2].net.unsent, 16 * 1024 + 5_000);
    assert!(!e.enforce_output_limits(2));
    clock.advance(Duration::from_secs(3));
    assert_eq!(e.execute(2, &args(FORMS[1], -999_999_999)), Reply::None);
    assert!(e.must_close_now(2));
}
