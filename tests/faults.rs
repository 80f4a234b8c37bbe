//! Each fault as a client sees it, through redis-rs and raw RESP: the clock, error replies,
//! dropped connections before and after a command ran, delays, torn replies, a stalled
//! server, a lost script cache and lost writes.

mod support;

use std::time::Duration;

use redis::Commands;
use redlab::{Clock, Fault, Server};
use support::resp::RawConn;

fn con(server: &Server) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

fn manual_server() -> Server {
    Server::builder()
        .clock(Clock::manual(1_700_000_000_000))
        .start()
}

#[test]
fn advancing_the_clock_expires_keys_everywhere_at_once() {
    let server = manual_server();
    let mut c = con(&server);
    let _: () = redis::cmd("SET")
        .arg("lease")
        .arg("a")
        .arg("PX")
        .arg(30_000)
        .query(&mut c)
        .unwrap();
    let _: () = c.set("other", "stays").unwrap();
    server.clock().advance(Duration::from_millis(29_999));
    let still: Option<String> = c.get("lease").unwrap();
    assert_eq!(
        still.as_deref(),
        Some("a"),
        "one millisecond before its deadline the key lives"
    );
    server.clock().advance(Duration::from_millis(1));
    // As in Redis (`now > when`), the key lives through its deadline's own millisecond.
    let pttl: i64 = redis::cmd("PTTL").arg("lease").query(&mut c).unwrap();
    assert_eq!(pttl, 0, "at its deadline the key still lives, with PTTL 0");
    server.clock().advance(Duration::from_millis(1));
    let size: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(size, 1, "DBSIZE no longer counts the expired key");
    let (_, keys): (u64, Vec<String>) = redis::cmd("SCAN")
        .arg(0)
        .arg("COUNT")
        .arg(100)
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, vec!["other".to_string()], "SCAN no longer returns it");
    let exists: i64 = c.exists("lease").unwrap();
    assert_eq!(exists, 0);
    let gone: Option<String> = c.get("lease").unwrap();
    assert_eq!(gone, None);
}

#[test]
fn time_and_time_inside_a_script_read_the_manual_clock() {
    let server = manual_server();
    let mut c = con(&server);
    let (secs, micros): (i64, i64) = redis::cmd("TIME").query(&mut c).unwrap();
    assert_eq!((secs, micros), (1_700_000_000, 0));
    server.clock().advance(Duration::from_millis(2_500));
    let in_script: Vec<i64> = redis::cmd("EVAL")
        .arg("local t = redis.call('TIME') return {tonumber(t[1]), tonumber(t[2])}")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(in_script, vec![1_700_000_002, 500_000]);
}

#[test]
fn clock_over_the_wire() {
    let server = manual_server();
    let mut c = con(&server);
    let now: i64 = redis::cmd("REDLAB.CLOCK").arg("GET").query(&mut c).unwrap();
    assert_eq!(now, 1_700_000_000_000);
    let _: () = redis::cmd("REDLAB.CLOCK")
        .arg("ADVANCE")
        .arg(1500)
        .query(&mut c)
        .unwrap();
    let now: i64 = redis::cmd("REDLAB.CLOCK").arg("GET").query(&mut c).unwrap();
    assert_eq!(now, 1_700_000_001_500);
    assert_eq!(
        server.clock().now_ms(),
        1_700_000_001_500,
        "the wire and Rust see one clock"
    );
}

#[test]
fn an_injected_error_replaces_the_command_which_does_not_run() {
    let server = Server::start();
    server.faults().add(
        Fault::on_command("SET")
            .reply_error("READONLY You can't write against a read only replica.")
            .times(1),
    );
    let mut c = con(&server);
    let err = c.set::<_, _, ()>("k", "v").unwrap_err();
    assert_eq!(err.code(), Some("READONLY"));
    let v: Option<String> = c.get("k").unwrap();
    assert_eq!(v, None, "the refused SET did not run");
    let _: () = c.set("k", "v").unwrap();
    let v: Option<String> = c.get("k").unwrap();
    assert_eq!(v.as_deref(), Some("v"), "times(1): the second SET runs");
    assert_eq!(server.faults().log().len(), 1);
    assert_eq!(server.faults().log()[0].command, "SET k v");
}

#[test]
fn close_before_the_command_runs_loses_the_write() {
    let server = Server::start();
    server
        .faults()
        .add(Fault::on_key("acct:*").close_before().times(1));
    let mut c = con(&server);
    assert!(
        c.set::<_, _, ()>("acct:1", "100").is_err(),
        "the client sees a dropped connection"
    );
    let mut c = con(&server);
    let v: Option<String> = c.get("acct:1").unwrap();
    assert_eq!(v, None);
}

#[test]
fn close_after_the_command_ran_keeps_the_write_the_client_never_saw() {
    let server = Server::start();
    server
        .faults()
        .add(Fault::on_command("SET").close_after().times(1));
    let mut c = con(&server);
    assert!(
        c.set::<_, _, ()>("lock", "token-a").is_err(),
        "the client cannot know the write happened"
    );
    let mut c = con(&server);
    let v: Option<String> = c.get("lock").unwrap();
    assert_eq!(v.as_deref(), Some("token-a"), "the write happened");
}

#[test]
fn a_delayed_reply_still_arrives_intact() {
    let server = Server::start();
    server
        .faults()
        .add(Fault::on_any().delay(Duration::from_millis(20)));
    let mut c = con(&server);
    let _: () = c.set("k", "v").unwrap();
    let v: String = c.get("k").unwrap();
    assert_eq!(v, "v");
    assert!(server.faults().log().len() >= 2);
}

#[test]
fn a_truncated_reply_sends_the_first_bytes_then_closes() {
    let server = Server::start();
    server
        .faults()
        .add(Fault::on_command("GET").truncate_reply(4).times(1));
    let mut raw = RawConn::connect(server.addr());
    raw.send(&[b"SET".to_vec(), b"k".to_vec(), b"hello".to_vec()]);
    assert_eq!(
        raw.read_frame(Duration::from_secs(5)).as_deref(),
        Some(&b"+OK\r\n"[..])
    );
    raw.send(&[b"GET".to_vec(), b"k".to_vec()]);
    assert_eq!(
        raw.read_frame(Duration::from_secs(2)),
        None,
        "no complete frame, then EOF"
    );
    let mut c = con(&server);
    let err = redis::cmd("GET").arg("k").query::<String>(&mut c);
    assert_eq!(err.unwrap(), "hello", "other connections are unaffected");
}

#[test]
fn a_stalled_server_lets_a_lease_run_out() {
    let server = manual_server();
    let mut holder = con(&server);
    let ok: Option<String> = redis::cmd("SET")
        .arg("lock")
        .arg("holder")
        .arg("NX")
        .arg("PX")
        .arg(1000)
        .query(&mut holder)
        .unwrap();
    assert_eq!(ok.as_deref(), Some("OK"));
    // The next command (the holder's renewal) finds the server stalled for 1.2 s: the
    // lease expires before the renewal runs, so the renewal finds no lock to extend.
    server.faults().add(
        Fault::on_command("PEXPIRE")
            .stall(Duration::from_millis(1200))
            .times(1),
    );
    let renewed: i64 = redis::cmd("PEXPIRE")
        .arg("lock")
        .arg(1000)
        .query(&mut holder)
        .unwrap();
    assert_eq!(renewed, 0, "the lease ran out during the stall");
    let mut rival = con(&server);
    let took: Option<String> = redis::cmd("SET")
        .arg("lock")
        .arg("rival")
        .arg("NX")
        .arg("PX")
        .arg(1000)
        .query(&mut rival)
        .unwrap();
    assert_eq!(
        took.as_deref(),
        Some("OK"),
        "another client takes the free lock"
    );
}

#[test]
fn noscript_after_a_cache_flush_makes_redis_rs_reload_the_script() {
    let server = Server::start();
    let mut c = con(&server);
    let script = redis::Script::new("return redis.call('INCR', KEYS[1])");
    let n: i64 = script.key("counter").invoke(&mut c).unwrap();
    assert_eq!(n, 1);
    server
        .faults()
        .add(Fault::on_command("EVALSHA").flush_scripts().times(1));
    let n: i64 = script.key("counter").invoke(&mut c).unwrap();
    assert_eq!(
        n, 2,
        "EVALSHA got NOSCRIPT, redis-rs loaded the script and retried"
    );
    let fired = server.faults().log();
    assert_eq!(fired.len(), 1);
}

#[test]
fn a_rollback_loses_exactly_the_writes_after_the_mark() {
    let server = Server::start();
    let mut c = con(&server);
    let _: () = c.set("a", "1").unwrap();
    server.mark().expect("mark");
    let _: () = c.set("b", "2").unwrap();
    let _: () = c.set("a", "3").unwrap();
    server
        .faults()
        .add(Fault::on_command("GET").rollback().times(1));
    let a: Option<String> = c.get("a").unwrap();
    let b: Option<String> = c.get("b").unwrap();
    assert_eq!((a.as_deref(), b), (Some("1"), None));
}

#[test]
fn faults_over_the_wire() {
    let server = Server::start();
    let mut c = con(&server);
    let id: i64 = redis::cmd("REDLAB.FAULT")
        .arg(&[
            "ADD",
            "COMMAND",
            "GET",
            "KEY",
            "k*",
            "TIMES",
            "1",
            "ERROR",
            "TRYAGAIN Multiple keys request during rehashing of slot",
        ])
        .query(&mut c)
        .unwrap();
    let list: Vec<String> = redis::cmd("REDLAB.FAULT")
        .arg("LIST")
        .query(&mut c)
        .unwrap();
    assert_eq!(list.len(), 1);
    assert!(
        list[0].starts_with(&format!("id={id} fired=0 command=get key=k*")),
        "{}",
        list[0]
    );
    let err = c.get::<_, String>("k1").unwrap_err();
    assert_eq!(err.code(), Some("TRYAGAIN"));
    let removed: i64 = redis::cmd("REDLAB.FAULT")
        .arg("DEL")
        .arg(id)
        .query(&mut c)
        .unwrap();
    assert_eq!(removed, 1);
    let log: Vec<String> = redis::cmd("REDLAB.FAULT").arg("LOG").query(&mut c).unwrap();
    assert_eq!(log.len(), 1);
    assert!(log[0].contains("command=GET k1"), "{}", log[0]);
}

/// A mark works on a server with a password (the control connection authenticates) and says
/// why when the server refuses it, instead of failing silently.
#[test]
fn mark_authenticates_and_reports_a_refusal() {
    let server = Server::builder().requirepass("s3cret").start();
    let client = redis::Client::open(format!("redis://:s3cret@{}/", server.addr())).unwrap();
    let mut c = client.get_connection().unwrap();
    let _: () = c.set("a", "1").unwrap();
    server.mark().expect("mark with the builder's password");
    let _: () = c.set("a", "2").unwrap();
    server
        .faults()
        .add(Fault::on_command("GET").rollback().times(1));
    let a: String = c.get("a").unwrap();
    assert_eq!(
        a, "1",
        "the mark taken under requirepass is the one rolled back to"
    );

    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("changed")
        .query(&mut c)
        .unwrap();
    let err = server.mark().expect_err("the old password no longer works");
    assert!(err.contains("WRONGPASS"), "{err}");
}
