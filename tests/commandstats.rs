//! INFO commandstats beside redis-server 7.0.15: the same rows and fields, the same counts,
//! and each call's real duration in `usec` (where a user looks for the command that made
//! their script slow). Durations are only bounded from below (a DEBUG SLEEP lasts at least
//! what it asks), never from above.

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(30);

/// The tests here share one server pair and reset its statistics: they take turns.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// One `cmdstat_<name>:k=v,...` row: the command's name and its fields in printed order.
type Row = Vec<(String, String)>;

fn rows(info: &str) -> BTreeMap<String, Row> {
    info.lines()
        .filter_map(|l| l.trim_end().strip_prefix("cmdstat_"))
        .map(|l| {
            let (name, fields) = l.split_once(':').expect("cmdstat line has a ':'");
            let fields = fields
                .split(',')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').expect("k=v");
                    (k.to_string(), v.to_string())
                })
                .collect();
            (name.to_string(), fields)
        })
        .collect()
}

fn field<'a>(row: &'a Row, name: &str) -> &'a str {
    row.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in {row:?}"))
}

/// The bulk string reply of a `show`n frame (`$N\r\n...\r\n`), with its line breaks back.
fn bulk_text(shown: &str) -> String {
    let body = shown.split_once("\\r\\n").expect("a bulk reply").1;
    body.replace("\\r\\n", "\n")
}

/// Polls INFO clients until one client is blocked; returns how many INFO calls it took.
fn wait_blocked(c: &mut RawConn) -> u64 {
    let mut polls = 0;
    loop {
        polls += 1;
        let info = bulk_text(&c.call(&["INFO", "clients"], WAIT));
        if info.contains("blocked_clients:1\n") {
            return polls;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs the same commands on one server and returns its INFO commandstats rows.
fn exercise(addr: SocketAddr) -> BTreeMap<String, Row> {
    let mut c = RawConn::connect(addr);
    let mut waiter = RawConn::connect(addr);
    c.call(&["FLUSHALL"], WAIT);
    c.call(&["CONFIG", "RESETSTAT"], WAIT);
    c.call(&["SET", "k", "v"], WAIT);
    c.call(&["GET", "k"], WAIT);
    c.call(&["GET", "nokey"], WAIT);
    // A failed call and a rejected one (wrong arity).
    c.call(&["INCR", "k"], WAIT);
    c.call(&["GET"], WAIT);
    c.call(&["DEBUG", "SLEEP", "0.02"], WAIT);
    // A command served after it blocked counts once, when it is served.
    waiter.send_strs(&["BLPOP", "q", "0"]);
    wait_blocked(&mut c);
    c.call(&["RPUSH", "q", "x"], WAIT);
    waiter.read_frame(WAIT).expect("BLPOP is served");
    // Inside a transaction and inside a script, each command counts too.
    c.call(&["MULTI"], WAIT);
    c.call(&["INCRBY", "n", "2"], WAIT);
    c.call(&["EXEC"], WAIT);
    c.call(
        &["EVAL", "return redis.call('GET', KEYS[1])", "1", "k"],
        WAIT,
    );
    rows(&bulk_text(&c.call(&["INFO", "commandstats"], WAIT)))
}

#[test]
fn commandstats_rows_match_redis_and_carry_real_durations() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(pair) = support::server_pair("commandstats") else {
        return;
    };
    let redis = exercise(pair.redis);
    let redlab = exercise(pair.redlab);
    assert_eq!(
        redis.keys().collect::<Vec<_>>(),
        redlab.keys().collect::<Vec<_>>(),
        "the same commands have rows"
    );
    for (name, theirs) in &redis {
        let ours = &redlab[name];
        let keys = |r: &Row| r.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        assert_eq!(keys(theirs), keys(ours), "{name}: the fields, in order");
        // INFO polled the blocked count as often as each server needed.
        if name != "info" {
            for f in ["calls", "rejected_calls", "failed_calls"] {
                assert_eq!(field(theirs, f), field(ours, f), "{name}: {f}");
            }
        }
        // usec_per_call is usec / calls as Redis computes it (single precision, 2 decimals),
        // checked on Redis's own figures too.
        for (who, row) in [("redis", theirs), ("redlab", ours)] {
            let calls: u64 = field(row, "calls").parse().unwrap();
            let usec: u64 = field(row, "usec").parse().unwrap();
            let expected = if calls == 0 {
                "0.00".to_string()
            } else {
                format!("{:.2}", usec as f32 / calls as f32)
            };
            assert_eq!(
                field(row, "usec_per_call"),
                expected,
                "{who} {name}: {row:?}"
            );
        }
    }
    // DEBUG SLEEP 0.02 ran at least 20 ms on both.
    for (who, rows) in [("redis", &redis), ("redlab", &redlab)] {
        let usec: u64 = field(&rows["debug"], "usec").parse().unwrap();
        assert!(
            usec >= 20_000,
            "{who}: DEBUG SLEEP 0.02 counted {usec} usec"
        );
    }
}

/// INFO stats' total_commands_processed after a sequence of calls, refusals, a transaction,
/// a script and a served BLPOP, less the INFO polls that waited for the BLPOP to block.
fn commands_processed(addr: SocketAddr) -> u64 {
    let mut c = RawConn::connect(addr);
    let mut waiter = RawConn::connect(addr);
    let mut limited = RawConn::connect(addr);
    c.call(&["FLUSHALL"], WAIT);
    c.call(
        &["ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+get"],
        WAIT,
    );
    c.call(&["CONFIG", "RESETSTAT"], WAIT);
    c.call(&["SET", "k", "v"], WAIT);
    // Refused before they run: unknown, wrong arity, NOPERM (command and key).
    c.call(&["NOSUCHCOMMAND"], WAIT);
    c.call(&["GET"], WAIT);
    limited.call(&["AUTH", "app", "pw"], WAIT);
    limited.call(&["SET", "app:x", "1"], WAIT);
    limited.call(&["GET", "other"], WAIT);
    limited.call(&["GET", "app:x"], WAIT);
    // A transaction: MULTI, EXEC and each queued command run; queuing is not a call.
    c.call(&["MULTI"], WAIT);
    c.call(&["INCR", "n"], WAIT);
    c.call(&["GET", "n"], WAIT);
    c.call(&["EXEC"], WAIT);
    // A transaction a refused command aborted: only MULTI and EXEC.
    c.call(&["MULTI"], WAIT);
    c.call(&["GET"], WAIT);
    c.call(&["EXEC"], WAIT);
    // A script and each command it calls; a failed call still ran.
    c.call(
        &[
            "EVAL",
            "redis.call('SET', KEYS[1], 'x') return redis.pcall('INCR', KEYS[1])",
            "1",
            "k",
        ],
        WAIT,
    );
    // A BLPOP counts when it blocks, not again when it is served.
    waiter.send_strs(&["BLPOP", "q", "0"]);
    let polls = wait_blocked(&mut c);
    c.call(&["RPUSH", "q", "x"], WAIT);
    waiter.read_frame(WAIT).expect("BLPOP is served");
    let stats = bulk_text(&c.call(&["INFO", "stats"], WAIT));
    let total: u64 = stats
        .lines()
        .find_map(|l| l.trim_end().strip_prefix("total_commands_processed:"))
        .expect("total_commands_processed in INFO stats")
        .parse()
        .expect("a number");
    total - polls
}

#[test]
fn total_commands_processed_counts_calls_not_refusals() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(pair) = support::server_pair("total_commands_processed") else {
        return;
    };
    let redis = commands_processed(pair.redis);
    assert_eq!(commands_processed(pair.redlab), redis);
}
