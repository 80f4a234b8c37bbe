//! TIME inside scripts, as Redis 7.0 gives it: the clock's current time to the microsecond,
//! moving while a script runs, while key expiry inside the script stays at its start. A
//! script that waits in a loop for TIME to move on must return, under the system clock and
//! under a manual clock that a test thread advances while the server thread runs the script.

use std::thread;
use std::time::{Duration, Instant};

use redlab::{Clock, Server};
use redlab_client::RealRedis;

/// Waits until TIME has moved on by ARGV[1] microseconds; returns the first and the last TIME
/// as microseconds, then what KEYS[1] holds at that point (GET and EXISTS). The iteration cap
/// keeps a broken TIME from hanging the test: it returns an error instead.
const WAIT_FOR_TIME: &str = r#"
local function now()
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000000 + tonumber(t[2]), t
end
local first, raw = now()
local last = first
local n = 0
while last - first < tonumber(ARGV[1]) do
    n = n + 1
    if n > 50000000 then
        return redis.error_reply('TIME never moved on: ' .. raw[1] .. ' ' .. raw[2])
    end
    last = now()
end
return {string.format('%.0f', first), string.format('%.0f', last), redis.call('GET', KEYS[1]) or false, redis.call('EXISTS', KEYS[1])}
"#;

/// What WAIT_FOR_TIME answered: (first µs, last µs, the key's value, EXISTS).
type Waited = (i64, i64, Option<String>, i64);

fn con(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

fn wait_for_time(c: &mut redis::Connection, micros: i64, key: &str) -> Waited {
    let (first, last, value, exists): (String, String, Option<String>, i64) = redis::cmd("EVAL")
        .arg(WAIT_FOR_TIME)
        .arg(1)
        .arg(key)
        .arg(micros)
        .query(c)
        .expect("the script returns");
    (first.parse().unwrap(), last.parse().unwrap(), value, exists)
}

/// Runs WAIT_FOR_TIME on its own connection while this thread advances `clock` by `step_us`
/// every millisecond, until the script answers (or 30 s pass, after which the script's own
/// cap ends it with an error).
fn wait_while_advancing(
    server: &Server,
    clock: &Clock,
    micros: i64,
    key: &str,
    step_us: u64,
) -> Waited {
    let url = server.url();
    let key = key.to_string();
    let script = thread::spawn(move || wait_for_time(&mut con(&url), micros, &key));
    let bound = Instant::now() + Duration::from_secs(30);
    while !script.is_finished() && Instant::now() < bound {
        clock.advance(Duration::from_micros(step_us));
        thread::sleep(Duration::from_millis(1));
    }
    script.join().expect("the script's client thread")
}

#[test]
fn a_script_waiting_for_time_to_advance_returns_under_the_system_clock() {
    let server = Server::start();
    let mut c = con(&server.url());
    let (first, last, _, _) = wait_for_time(&mut c, 100_000, "none");
    assert!(last - first >= 100_000, "TIME moved by {} µs", last - first);
    // Not rounded to the millisecond: over a loop of many TIME calls some end in other digits.
    let stamps: Vec<i64> = (0..50)
        .map(|_| {
            let (s, us): (String, String) = redis::cmd("EVAL")
                .arg("return redis.call('TIME')")
                .arg(0)
                .query(&mut c)
                .unwrap();
            assert!(
                us.len() <= 6 && us.bytes().all(|b| b.is_ascii_digit()),
                "{s} {us}"
            );
            us.parse::<i64>().unwrap()
        })
        .collect();
    assert!(
        stamps.iter().any(|us| us % 1000 != 0),
        "every TIME was a whole millisecond: {stamps:?}"
    );

    // The same script on Redis 7.0 returns the same way.
    if let Some(redis) = RealRedis::start_or_skip("script_time::system_clock") {
        let (first, last, _, _) = wait_for_time(&mut con(&redis.url()), 100_000, "none");
        assert!(last - first >= 100_000);
    }
}

#[test]
fn a_script_waiting_for_time_returns_once_another_thread_advances_the_manual_clock() {
    let start_us = 1_700_000_000_000_001;
    let server = Server::builder().clock(Clock::manual_us(start_us)).start();
    let clock = server.clock().clone();
    let (first, last, _, _) = wait_while_advancing(&server, &clock, 100_000, "none", 1_234);
    assert!(last - first >= 100_000, "TIME moved by {} µs", last - first);
    // Every TIME the script saw is the manual clock's own value, to the microsecond.
    assert_eq!((first - start_us) % 1_234, 0, "first TIME {first}");
    assert_eq!((last - start_us) % 1_234, 0, "last TIME {last}");
    assert!(last <= clock.now_us());
}

#[test]
fn a_manual_clock_stands_still_inside_a_script_until_the_test_moves_it() {
    let server = Server::builder()
        .clock(Clock::manual_us(1_700_000_000_000_007))
        .start();
    let mut c = con(&server.url());
    let times: Vec<String> = redis::cmd("EVAL")
        .arg("local a = redis.call('TIME') for i = 1, 100000 do end local b = redis.call('TIME') return {a[1], a[2], b[1], b[2]}")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        times,
        ["1700000000", "7", "1700000000", "7"],
        "microseconds as Redis prints them, no padding"
    );
}

#[test]
fn a_key_does_not_expire_while_a_script_waits_even_as_time_moves() {
    let server = Server::builder()
        .clock(Clock::manual(1_700_000_000_000))
        .start();
    let clock = server.clock().clone();
    let mut c = con(&server.url());
    let _: () = redis::cmd("SET")
        .arg("lease")
        .arg("held")
        .arg("PX")
        .arg(50)
        .query(&mut c)
        .unwrap();
    let (first, last, value, exists) =
        wait_while_advancing(&server, &clock, 100_000, "lease", 1_000);
    assert!(last - first >= 100_000);
    assert_eq!(
        (value.as_deref(), exists),
        (Some("held"), 1),
        "expiry inside the script is judged at its start"
    );
    let after: Option<String> = redis::cmd("GET").arg("lease").query(&mut c).unwrap();
    assert_eq!(
        after, None,
        "once the script is over, the key's deadline has passed"
    );
}

#[test]
fn the_clock_set_in_microseconds_over_the_wire_is_what_time_shows() {
    let server = Server::builder().clock(Clock::manual(0)).start();
    let mut c = con(&server.url());
    let _: () = redis::cmd("REDLAB.CLOCK")
        .arg("SET")
        .arg("1700000000123456")
        .arg("US")
        .query(&mut c)
        .unwrap();
    let outside: (String, String) = redis::cmd("TIME").query(&mut c).unwrap();
    let inside: (String, String) = redis::cmd("EVAL")
        .arg("return redis.call('TIME')")
        .arg(0)
        .query(&mut c)
        .unwrap();
    let in_multi: Vec<(String, String)> = redis::pipe()
        .atomic()
        .cmd("TIME")
        .cmd("TIME")
        .query(&mut c)
        .unwrap();
    let expected = ("1700000000".to_string(), "123456".to_string());
    assert_eq!(outside, expected);
    assert_eq!(inside, expected);
    assert_eq!(in_multi, vec![expected.clone(), expected]);
    let _: () = redis::cmd("REDLAB.CLOCK")
        .arg("ADVANCE")
        .arg(5)
        .arg("US")
        .query(&mut c)
        .unwrap();
    let us: i64 = redis::cmd("REDLAB.CLOCK")
        .arg("GET")
        .arg("US")
        .query(&mut c)
        .unwrap();
    assert_eq!(us, 1_700_000_000_123_461);
}
