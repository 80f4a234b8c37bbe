//! What the busy-script loop answers is counted in INFO as Redis counts it: a refused request
//! (BUSY, NOPERM, an unknown command, EXECABORT) is an error reply in errorstats and
//! total_error_replies, and a rejected call of the command it names in commandstats; a
//! command the loop runs itself (AUTH, a nested MULTI, SCRIPT KILL) is a call, a failed one
//! when it answered an error. The same sequence runs against a real redis-server; the
//! counters must be equal.

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use redlab_client::RealRedis;
use support::resp::RawConn;

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.send_strs(args);
    let frame = c.read_frame(Duration::from_secs(30)).expect("a reply");
    String::from_utf8_lossy(&frame).trim_end().to_string()
}

/// Pings until the script is busy: the one -BUSY this takes is left out of the counters
/// compared (the PINGs before it may be answered PONG or wait, by the machine's speed).
fn wait_busy(probe: &mut RawConn) {
    let start = Instant::now();
    while !cmd(probe, &["PING"]).starts_with("-BUSY") {
        assert!(start.elapsed() < Duration::from_secs(30), "never busy");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The value of `field` in an INFO section's text.
fn field(info: &str, field: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.strip_prefix("count=").unwrap_or(v).parse().ok())
        .unwrap_or(0)
}

/// The replies of the sequence, then the counters: errorstats and total_error_replies
/// without the probe's -BUSY pings, and commandstats without PING and without timings.
fn scenario(addr: SocketAddr) -> Vec<String> {
    let mut setup = RawConn::connect(addr);
    for line in [
        &["CONFIG", "SET", "busy-reply-threshold", "100"][..],
        &["ACL", "SETUSER", "lim", "on", ">pw", "~*", "+@all", "-set"],
        &["CONFIG", "RESETSTAT"],
    ] {
        assert_eq!(cmd(&mut setup, line), "+OK");
    }
    let mut runner = RawConn::connect(addr);
    runner.send_strs(&["EVAL", "while true do end", "0"]);
    wait_busy(&mut setup);
    let mut c = RawConn::connect(addr);
    let mut seen = Vec::new();
    for line in [
        &["GET", "k"][..],
        &["NOSUCH", "x"],
        &["CLIENT", "NOSUCH"],
        &["MULTI"],
        &["GET", "k"],
        &["EXEC"],
        &["AUTH", "lim", "wrong"],
        &["AUTH", "lim", "pw"],
        &["SET", "k", "v"],
        &["GET", "k"],
        &["MULTI"],
        &["MULTI"],
        &["DISCARD"],
        &["SCRIPT", "KILL"],
    ] {
        seen.push(cmd(&mut c, line));
    }
    runner
        .read_frame(Duration::from_secs(30))
        .expect("the EVAL caller's reply");
    // A command on `c` after the script: what it answered is known to the engine by then.
    seen.push(cmd(&mut c, &["PING"]));
    let errors = cmd(&mut setup, &["INFO", "errorstats"]);
    let mut shown = Vec::new();
    for line in errors.lines().filter(|l| l.starts_with("errorstat_")) {
        let (name, _) = line.split_once(':').expect("name:count");
        let mut n = field(&errors, name);
        if name == "errorstat_BUSY" {
            n -= 1;
        }
        shown.push(format!("{name}={n}"));
    }
    seen.push(shown.join(" "));
    let stats = cmd(&mut setup, &["INFO", "stats"]);
    seen.push(format!(
        "total_error_replies={}",
        field(&stats, "total_error_replies") - 1
    ));
    let commands = cmd(&mut setup, &["INFO", "commandstats"]);
    let mut rows: Vec<String> = commands
        .lines()
        .filter(|l| l.starts_with("cmdstat_") && !l.starts_with("cmdstat_ping:"))
        .map(|l| {
            l.split(',')
                .filter(|kv| !kv.starts_with("usec"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    rows.sort();
    seen.extend(rows);
    seen
}

#[test]
fn refusals_and_answers_of_the_busy_loop_are_counted() {
    let server = redlab::Server::start();
    let ours = scenario(server.addr());
    assert_eq!(
        ours[0],
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert_eq!(
        ours[8],
        "-NOPERM this user has no permissions to run the 'set' command"
    );
    let errors = &ours[15];
    for counted in [
        "errorstat_BUSY=3",
        "errorstat_NOPERM=1",
        "errorstat_EXECABORT=1",
        "errorstat_WRONGPASS=1",
    ] {
        assert!(errors.contains(counted), "{counted} in {errors}");
    }
    let rows = &ours[17..];
    for row in [
        "cmdstat_get:calls=0,rejected_calls=3,failed_calls=0",
        "cmdstat_set:calls=0,rejected_calls=1,failed_calls=0",
        "cmdstat_exec:calls=0,rejected_calls=1,failed_calls=0",
        "cmdstat_auth:calls=2,rejected_calls=0,failed_calls=1",
    ] {
        assert!(rows.iter().any(|r| r == row), "{row} in {rows:?}");
    }
    if let Some(real) = RealRedis::start_or_skip("busy_loop_counters") {
        assert_eq!(scenario(real.addr()), ours, "real Redis counts the same");
    }
}
