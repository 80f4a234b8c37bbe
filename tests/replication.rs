//! Replication: the stream a primary sends (byte for byte against a real redis-server
//! 7.0.15), ROLE / INFO replication / READONLY / WAIT beside a real primary+replica pair, a
//! redlab replica of a real redis-server and of redlab, the link's faults, and a cluster
//! failover that keeps (or loses) the data.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use redlab::{Cluster, Server};
use redlab_client::RealRedis;
use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(10);

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, WAIT)
}

/// Waits (up to 10 s) until `cond` holds; false when it never did.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// A raw SYNC, as Redis's TCL harness attaches: returns the socket once the RDB payload has
/// been read.
fn attach(addr: SocketAddr) -> (TcpStream, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(b"SYNC\r\n").unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let (len, at) = loop {
        while buf.first() == Some(&b'\n') {
            buf.remove(0);
        }
        if let Some(end) = buf.windows(2).position(|w| w == b"\r\n") {
            assert_eq!(buf[0], b'$', "{}", support::resp::show(&buf));
            let n: usize = std::str::from_utf8(&buf[1..end]).unwrap().parse().unwrap();
            break (n, end + 2);
        }
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "closed before the payload");
        buf.extend_from_slice(&chunk[..n]);
    };
    while buf.len() < at + len {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "closed in the payload");
        buf.extend_from_slice(&chunk[..n]);
    }
    let rdb = buf[at..at + len].to_vec();
    let mut rest = buf[at + len..].to_vec();
    skip_pings(&mut rest);
    assert!(rest.is_empty(), "stream bytes before any write");
    (s, rdb)
}

/// The frame redis-server sends its replicas as a keep-alive (in lower case).
const PING_FRAME: &[u8] = b"*1\r\n$4\r\nping\r\n";

/// Drops the keep-alive PINGs at the front of a stream. redis-server sends one to its
/// replicas every repl-ping-replica-period (10 s), counted from its start, so a test that
/// starts late on a loaded machine can see one right after the payload: it is no write and
/// says nothing about the stream a test compares.
fn skip_pings(buf: &mut Vec<u8>) {
    while buf.len() >= PING_FRAME.len() && buf[..PING_FRAME.len()].eq_ignore_ascii_case(PING_FRAME)
    {
        buf.drain(..PING_FRAME.len());
    }
}

/// Reads the stream until it ends with `marker`.
fn read_until(s: &mut TcpStream, marker: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 65536];
    while !out.ends_with(marker) {
        let n = s.read(&mut chunk).expect("the stream stalled");
        assert!(n > 0, "the stream closed: {}", support::resp::show(&out));
        out.extend_from_slice(&chunk[..n]);
        skip_pings(&mut out);
    }
    out
}

/// Commands whose stream is deterministic (no clock, no randomness): each is sent on one
/// connection, and the replication stream of both servers must be the same bytes.
const SCRIPT: &[&[&str]] = &[
    &["SET", "a", "1"],
    &["GET", "a"],
    &["INCRBYFLOAT", "f", "1.5"],
    &["HINCRBYFLOAT", "h", "x", "2.5"],
    &["MULTI"],
    &["SET", "m", "1"],
    &["INCR", "m"],
    &["GET", "m"],
    &["EXEC"],
    &["MULTI"],
    &["SET", "m1", "1"],
    &["EXEC"],
    &["MULTI"],
    &["GET", "m"],
    &["EXEC"],
    &[
        "EVAL",
        "redis.call('set','e','1'); redis.call('incr','e')",
        "0",
    ],
    &["EVAL", "redis.call('set','e1','1')", "0"],
    &["EVAL", "return redis.call('get','e')", "0"],
    &["RPUSH", "l", "a", "b", "c", "d"],
    &["BLPOP", "l", "0"],
    &["BRPOP", "l", "0"],
    &["LMPOP", "1", "l", "LEFT", "COUNT", "1"],
    &["BLMOVE", "l", "l2", "LEFT", "RIGHT", "0"],
    &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
    &["BZPOPMIN", "z", "0"],
    &["ZMPOP", "1", "z", "MAX", "COUNT", "1"],
    &["SET", "g", "v", "GET"],
    &["GETDEL", "g"],
    &["GETDEL", "nosuch"],
    &["DEL", "nosuch"],
    &["PUBLISH", "ch", "hi"],
    &["SET", "x", "1"],
    &["EXPIRE", "x", "-1"],
    &["PERSIST", "a"],
    &["SELECT", "3"],
    &["SET", "in3", "v"],
    &["XADD", "st", "1-1", "a", "1"],
    &["XADD", "st", "MAXLEN", "~", "1", "2-1", "a", "2"],
    &["XTRIM", "st", "MAXLEN", "=", "1"],
    &["SADD", "s", "a"],
    &["SPOP", "s"],
    &["FLUSHDB"],
    &["SELECT", "0"],
    &["SET", "end", "end"],
];

fn run_script(addr: SocketAddr) -> Vec<u8> {
    let (mut stream, _) = attach(addr);
    let mut c = RawConn::connect(addr);
    for args in SCRIPT {
        cmd(&mut c, args);
    }
    read_until(&mut stream, b"$3\r\nend\r\n$3\r\nend\r\n")
}

#[test]
fn the_stream_is_real_redis_stream_byte_for_byte() {
    let Some(real) = RealRedis::start_or_skip("the_stream_is_real_redis_stream") else {
        return;
    };
    let lab = Server::builder().seed(7).start();
    let theirs = run_script(real.addr());
    let ours = run_script(lab.addr());
    assert_eq!(
        support::resp::show(&ours),
        support::resp::show(&theirs),
        "redlab's stream, then Redis's"
    );
}

#[test]
fn relative_deadlines_travel_as_absolute_ones() {
    let lab = Server::start();
    lab.clock().freeze();
    let now = lab.clock().now_ms();
    let (mut stream, _) = attach(lab.addr());
    let mut c = RawConn::connect(lab.addr());
    cmd(&mut c, &["SET", "a", "1", "EX", "100"]);
    cmd(&mut c, &["SETEX", "b", "10", "x"]);
    cmd(&mut c, &["EXPIRE", "a", "50"]);
    cmd(&mut c, &["GETEX", "b", "PX", "5"]);
    cmd(&mut c, &["SET", "end", "end"]);
    let got = support::resp::show(&read_until(&mut stream, b"$3\r\nend\r\n$3\r\nend\r\n"));
    for (what, at) in [
        (
            "SET\\r\\n$1\\r\\na\\r\\n$1\\r\\n1\\r\\n$4\\r\\nPXAT",
            now + 100_000,
        ),
        (
            "SET\\r\\n$1\\r\\nb\\r\\n$1\\r\\nx\\r\\n$4\\r\\nPXAT",
            now + 10_000,
        ),
        ("PEXPIREAT\\r\\n$1\\r\\na", now + 50_000),
        ("PEXPIREAT\\r\\n$1\\r\\nb", now + 5),
    ] {
        let want = format!("{what}\\r\\n${}\\r\\n{at}\\r\\n", at.to_string().len());
        assert!(got.contains(&want), "{want} in {got}");
    }
    // A key that expires goes out as DEL.
    lab.clock().advance(Duration::from_secs(1));
    cmd(&mut c, &["GET", "b"]);
    cmd(&mut c, &["SET", "end", "end"]);
    let got = support::resp::show(&read_until(&mut stream, b"$3\r\nend\r\n$3\r\nend\r\n"));
    assert!(
        got.starts_with("*2\\r\\n$3\\r\\nDEL\\r\\n$1\\r\\nb\\r\\n"),
        "{got}"
    );
}

/// INFO replication's field names, in order.
fn info_fields(c: &mut RawConn) -> Vec<String> {
    let text = cmd(c, &["INFO", "replication"]);
    text.split("\\r\\n")
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .filter(|k| !k.starts_with('$'))
        .collect()
}

fn role_head(c: &mut RawConn) -> String {
    let r = cmd(c, &["ROLE"]);
    r.split("\\r\\n").take(3).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_primary_and_replica_pair_answers_as_redis() {
    let Some(real) = RealRedis::start_with(&["--repl-diskless-sync-delay", "0"]).ok() else {
        eprintln!("skipped: no redis-server");
        return;
    };
    let real_port = real.port().to_string();
    let Ok(real_replica) = RealRedis::start_with(&["--replicaof", "127.0.0.1", &real_port]) else {
        return;
    };
    let lab = Server::start();
    let lab_replica = Server::start();
    let mut lr = RawConn::connect(lab_replica.addr());
    assert_eq!(
        cmd(
            &mut lr,
            &["REPLICAOF", "127.0.0.1", &lab.port().to_string()]
        ),
        "+OK\\r\\n"
    );
    let mut rr = RawConn::connect(real_replica.addr());
    let (mut rp, mut lp) = (RawConn::connect(real.addr()), RawConn::connect(lab.addr()));
    for c in [&mut rr, &mut lr] {
        assert!(eventually(|| cmd(c, &["ROLE"]).contains("connected")));
    }
    assert_eq!(
        cmd(&mut lp, &["SET", "k", "v"]),
        cmd(&mut rp, &["SET", "k", "v"])
    );
    // Both replicas have applied the write before they are read: WAIT returns once the
    // replica acknowledged it.
    assert_eq!(cmd(&mut lp, &["WAIT", "1", "5000"]), ":1\\r\\n");
    assert_eq!(cmd(&mut rp, &["WAIT", "1", "5000"]), ":1\\r\\n");
    // The same texts and shapes on both.
    for args in [
        &["SET", "k", "v"][..],
        &["REPLCONF", "foo", "bar"],
        &["REPLCONF", "foo"],
        &["REPLCONF", "listening-port", "1"],
        &["WAIT", "1", "0"],
        &["EVAL", "return 1", "0"],
        &["GET", "k"],
        // A script's write on a read-only replica: refused inside (no declared flags) or
        // before it runs (a shebang without no-writes).
        &["EVAL", "return redis.call('set','x','1')", "0"],
        &["EVAL", "return redis.pcall('set','x','1')", "0"],
        &["EVAL", "#!lua\nreturn redis.call('set','x','1')", "0"],
        &["EVAL_RO", "return redis.call('set','x','1')", "0"],
        &["FAILOVER"],
        &["FAILOVER", "ABORT"],
    ] {
        assert_eq!(cmd(&mut lr, args), cmd(&mut rr, args), "replica: {args:?}");
    }
    // FAILOVER's checks on a primary with a replica.
    for args in [
        &["FAILOVER", "TO", "127.0.0.1", "1"][..],
        &["FAILOVER", "TO", "127.0.0.1", "1", "FORCE"],
        &["FAILOVER", "FORCE", "TIMEOUT", "10"],
        &["FAILOVER", "ABORT"],
        &["FAILOVER", "TIMEOUT", "0"],
    ] {
        assert_eq!(cmd(&mut lp, args), cmd(&mut rp, args), "primary: {args:?}");
    }
    assert_eq!(cmd(&mut lp, &["WAIT", "1", "5000"]), ":1\\r\\n");
    assert_eq!(cmd(&mut rp, &["WAIT", "1", "5000"]), ":1\\r\\n");
    assert_eq!(cmd(&mut lp, &["WAIT", "2", "100"]), ":1\\r\\n");
    assert_eq!(info_fields(&mut lp), info_fields(&mut rp), "primary's INFO");
    assert_eq!(info_fields(&mut lr), info_fields(&mut rr), "replica's INFO");
    assert_eq!(
        role_head(&mut lp).split(' ').next(),
        role_head(&mut rp).split(' ').next()
    );
    let (ours, theirs) = (cmd(&mut lr, &["ROLE"]), cmd(&mut rr, &["ROLE"]));
    assert_eq!(
        ours.replace(&lab.port().to_string(), "P").split(":").next(),
        theirs.replace(&real_port, "P").split(":").next(),
        "{ours} / {theirs}"
    );
    assert!(eventually(
        || cmd(&mut lr, &["GET", "k"]) == "$1\\r\\nv\\r\\n"
    ));
    // REPLICAOF NO ONE: a primary again, writable.
    for c in [&mut lr, &mut rr] {
        assert_eq!(cmd(c, &["REPLICAOF", "NO", "ONE"]), "+OK\\r\\n");
        assert_eq!(cmd(c, &["SET", "k", "w"]), "+OK\\r\\n");
        assert!(cmd(c, &["ROLE"]).starts_with("*3\\r\\n$6\\r\\nmaster"));
    }
}

/// A dataset of every type, written on `addr`.
fn fill(addr: SocketAddr) {
    let mut c = RawConn::connect(addr);
    for args in [
        &["SET", "s", "hello"][..],
        &["SET", "n", "12345"],
        &["SET", "big", &"x".repeat(300)],
        &["SET", "ttl", "v", "PX", "500000"],
        &["RPUSH", "l", "a", "b", "1", "2"],
        &["HSET", "h", "f", "v", "g", "w"],
        &["SADD", "si", "1", "2", "3"],
        &["SADD", "ss", "a", "b"],
        &["ZADD", "z", "1", "a", "2.5", "b"],
        &["XADD", "st", "1-1", "f", "v"],
        &["XGROUP", "CREATE", "st", "g", "0"],
        &["SELECT", "2"],
        &["SET", "other", "db"],
    ] {
        let r = cmd(&mut c, args);
        assert!(!r.starts_with('-'), "{args:?}: {r}");
    }
    for i in 0..200 {
        cmd(&mut c, &["SADD", "bigset", &i.to_string()]);
        cmd(
            &mut c,
            &["HSET", "bighash", &i.to_string(), &"v".repeat(80)],
        );
    }
}

fn digest(addr: SocketAddr) -> String {
    cmd(&mut RawConn::connect(addr), &["DEBUG", "DIGEST"])
}

#[test]
fn a_redlab_replica_of_real_redis_holds_its_data() {
    let Ok(real) = RealRedis::start_with(&[
        "--repl-diskless-sync-delay",
        "0",
        "--enable-debug-command",
        "yes",
    ]) else {
        eprintln!("skipped: no redis-server");
        return;
    };
    fill(real.addr());
    let lab = Server::start();
    let mut c = RawConn::connect(lab.addr());
    cmd(
        &mut c,
        &["REPLICAOF", "127.0.0.1", &real.port().to_string()],
    );
    assert!(eventually(|| cmd(&mut c, &["ROLE"]).contains("connected")));
    assert!(eventually(|| digest(lab.addr()) == digest(real.addr())));
    // Then the stream.
    let mut r = RawConn::connect(real.addr());
    cmd(&mut r, &["LPUSH", "l", "new"]);
    cmd(&mut r, &["INCRBYFLOAT", "n", "0.5"]);
    assert!(eventually(|| digest(lab.addr()) == digest(real.addr())));
    assert_eq!(
        cmd(&mut c, &["SET", "x", "1"]),
        "-READONLY You can't write against a read only replica.\\r\\n"
    );
}

#[test]
fn a_real_redis_replica_of_redlab_holds_its_data() {
    let lab = Server::start();
    fill(lab.addr());
    let port = lab.port().to_string();
    let Ok(real) = RealRedis::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--enable-debug-command",
        "yes",
    ]) else {
        eprintln!("skipped: no redis-server");
        return;
    };
    assert!(eventually(|| digest(lab.addr()) == digest(real.addr())));
    let mut c = RawConn::connect(lab.addr());
    cmd(
        &mut c,
        &["EVAL", "redis.call('incr','n'); redis.call('del','s')", "0"],
    );
    assert!(eventually(|| digest(lab.addr()) == digest(real.addr())));
}

#[test]
fn a_redlab_replica_of_redlab_lags_partitions_and_loses_writes_when_promoted() {
    let primary = Server::start();
    let replica = Server::start();
    fill(primary.addr());
    let mut p = RawConn::connect(primary.addr());
    let mut r = RawConn::connect(replica.addr());
    cmd(
        &mut r,
        &["REPLICAOF", "127.0.0.1", &primary.port().to_string()],
    );
    assert!(eventually(
        || digest(primary.addr()) == digest(replica.addr())
    ));
    // Lag: two commands held back.
    assert_eq!(
        cmd(&mut r, &["REDLAB.REPL", "LAG", "COMMANDS", "2"]),
        "+OK\\r\\n"
    );
    for k in ["k1", "k2", "k3"] {
        cmd(&mut p, &["SET", k, "v"]);
    }
    assert!(eventually(|| cmd(&mut r, &["EXISTS", "k1"]) == ":1\\r\\n"));
    assert!(eventually(
        || cmd(&mut r, &["REDLAB.REPL", "HELD"]) == ":2\\r\\n"
    ));
    assert_eq!(cmd(&mut r, &["EXISTS", "k3"]), ":0\\r\\n");
    // A partition, then the link heals and catches up (PSYNC continues from the backlog).
    cmd(&mut r, &["REDLAB.REPL", "LAG", "OFF"]);
    cmd(&mut r, &["REDLAB.REPL", "PARTITION", "ON"]);
    cmd(&mut p, &["SET", "k4", "v"]);
    assert!(eventually(|| !cmd(&mut r, &["ROLE"]).contains("connected")));
    cmd(&mut r, &["REDLAB.REPL", "PARTITION", "OFF"]);
    assert!(eventually(
        || digest(primary.addr()) == digest(replica.addr())
    ));
    // A promotion while writes are held loses them.
    cmd(&mut r, &["REDLAB.REPL", "LAG", "COMMANDS", "10"]);
    cmd(&mut p, &["SET", "lost", "v"]);
    assert!(eventually(
        || cmd(&mut r, &["REDLAB.REPL", "HELD"]) == ":1\\r\\n"
    ));
    assert_eq!(cmd(&mut r, &["REDLAB.REPL", "PROMOTE"]), ":1\\r\\n");
    assert_eq!(cmd(&mut r, &["EXISTS", "lost"]), ":0\\r\\n");
    assert_eq!(cmd(&mut r, &["SET", "mine", "1"]), "+OK\\r\\n");
}

#[test]
fn a_cluster_failover_promotes_a_replica_with_the_data() {
    let cluster = Cluster::builder()
        .primaries(3)
        .replicas_per_primary(1)
        .start();
    // Node 3 replicates node 0, which holds slot 3300 ("b").
    let mut p = RawConn::connect(cluster.server(0).addr());
    assert_eq!(cmd(&mut p, &["SET", "b", "kept"]), "+OK\\r\\n");
    cluster.failover(3).unwrap();
    let mut n = RawConn::connect(cluster.server(3).addr());
    assert_eq!(cmd(&mut n, &["GET", "b"]), "$4\\r\\nkept\\r\\n");
    // The old primary follows the new one and gets its writes.
    assert_eq!(cmd(&mut n, &["SET", "b", "new"]), "+OK\\r\\n");
    let mut old = RawConn::connect(cluster.server(0).addr());
    cmd(&mut old, &["READONLY"]);
    assert!(eventually(
        || cmd(&mut old, &["GET", "b"]) == "$3\\r\\nnew\\r\\n"
    ));
}

#[test]
fn a_cluster_failover_can_lose_the_writes_its_replica_had_not_applied() {
    let cluster = Cluster::builder()
        .primaries(3)
        .replicas_per_primary(1)
        .start();
    let mut p = RawConn::connect(cluster.server(0).addr());
    let mut r = RawConn::connect(cluster.server(3).addr());
    cmd(&mut p, &["SET", "b", "1"]);
    cmd(&mut r, &["READONLY"]);
    assert!(eventually(
        || cmd(&mut r, &["GET", "b"]) == "$1\\r\\n1\\r\\n"
    ));
    // A write through the stream (not the first file), so the stream has selected its
    // database and the next write is one command.
    cmd(&mut p, &["SET", "{b}x", "1"]);
    assert!(eventually(
        || cmd(&mut r, &["GET", "{b}x"]) == "$1\\r\\n1\\r\\n"
    ));
    cmd(&mut r, &["REDLAB.REPL", "LAG", "COMMANDS", "100"]);
    cmd(&mut p, &["SET", "b", "2"]);
    assert!(eventually(
        || cmd(&mut r, &["REDLAB.REPL", "HELD"]) == ":1\\r\\n"
    ));
    assert_eq!(cluster.failover_losing_writes(3).unwrap(), 1);
    assert_eq!(cmd(&mut r, &["GET", "b"]), "$1\\r\\n1\\r\\n");
}

/// The stream as a list of commands, each argument as text; bare newlines and PINGs (the
/// primary's keep-alives) left out.
fn ops(stream: &[u8]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < stream.len() {
        if stream[pos] == b'\n' {
            pos += 1;
            continue;
        }
        let n = support::resp::frame_len(&stream[pos..]).expect("a whole frame");
        let (_, items) = support::resp::elements(&stream[pos..pos + n]).expect("an array");
        let op: Vec<String> = items
            .iter()
            .map(|b| {
                let start = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
                String::from_utf8_lossy(&b[start..b.len() - 2]).into_owned()
            })
            .collect();
        if !op[0].eq_ignore_ascii_case("ping") {
            out.push(op);
        }
        pos += n;
    }
    out
}

/// A list of ops as text, to compare with `ops`' reading of a stream.
fn owned(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter()
        .map(|op| op.iter().map(|a| a.to_string()).collect())
        .collect()
}

/// Empties `addr`, turns active expiry off and stores `keys` with a 1 ms deadline that has
/// passed on return, so only a command that meets them can expire them. Returns the
/// connection that did it; the caller turns active expiry back on.
fn keys_past_deadline(addr: SocketAddr, keys: &[&str]) -> RawConn {
    let mut c = RawConn::connect(addr);
    cmd(&mut c, &["FLUSHALL"]);
    cmd(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    for k in keys {
        cmd(&mut c, &["SET", k, "v", "PX", "1"]);
    }
    // A lower bound only: the keys are past their deadline by then.
    std::thread::sleep(Duration::from_millis(20));
    c
}

/// Runs `script` on one connection to `addr` with a SYNC attached, and returns the stream
/// it produced (up to a closing `SET end end`). A clock reading (the two servers' clocks
/// differ) is replaced by `<t>` when it follows a word of `after` or is an argument of a
/// command named in `after` (TIME in XCLAIM, PEXPIREAT).
fn stream_of(addr: SocketAddr, script: &[&[&str]], after: &[&str]) -> Vec<Vec<String>> {
    let (mut stream, _) = attach(addr);
    let mut c = RawConn::connect(addr);
    for args in script {
        cmd(&mut c, args);
    }
    cmd(&mut c, &["SET", "end", "end"]);
    let mut got = ops(&read_until(&mut stream, b"$3\r\nend\r\n$3\r\nend\r\n"));
    for op in &mut got {
        for i in 1..op.len() {
            let clock = op[i].parse::<i64>().is_ok_and(|t| t > 1_000_000_000_000);
            let named =
                |w: &&str| op[i - 1].eq_ignore_ascii_case(w) || op[0].eq_ignore_ascii_case(w);
            if clock && after.iter().any(named) {
                op[i] = "<t>".into();
            }
        }
    }
    got
}

/// XREADGROUP, XCLAIM and XAUTOCLAIM as Redis 7.0.15 writes them on the stream: an
/// idempotent XCLAIM per delivery or claim (the pending entry's state after the command),
/// XGROUP SETID for a NOACK read or a LASTID no XCLAIM carries, XGROUP CREATECONSUMER for a
/// consumer only a NOACK read created; in MULTI/EXEC when a command sends several.
#[rustfmt::skip]
const GROUP_SCRIPT: &[&[&str]] = &[
    &["XADD", "s", "1-1", "a", "1"],
    &["XADD", "s", "2-1", "b", "2"],
    &["XADD", "s", "3-1", "c", "3"],
    &["XADD", "t", "1-1", "a", "1"],
    &["XGROUP", "CREATE", "s", "g", "0"],
    &["XGROUP", "CREATE", "t", "g", "0"],
    &["XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">"],
    &["XREADGROUP", "GROUP", "g", "c2", "NOACK", "STREAMS", "s", ">"],
    &["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"],
    &["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0"],
    &["XREADGROUP", "GROUP", "g", "c3", "NOACK", "STREAMS", "s", "0"],
    &["XREADGROUP", "GROUP", "g", "c4", "STREAMS", "s", "t", ">", ">"],
    &["XCLAIM", "s", "g", "c5", "0", "1-1", "2-1"],
    &["XCLAIM", "s", "g", "c6", "0", "1-1", "JUSTID"],
    &["XCLAIM", "s", "g", "c6", "0", "1-1", "RETRYCOUNT", "7", "TIME", "12345"],
    &["XCLAIM", "s", "g", "c6", "0", "1-1", "IDLE", "500"],
    &["XCLAIM", "s", "g", "c7", "100000000", "1-1"],
    &["XCLAIM", "s", "g", "c7", "100000000", "1-1", "LASTID", "5-5"],
    &["XCLAIM", "s", "g", "c7", "0", "1-1", "LASTID", "6-6"],
    &["XCLAIM", "s", "g", "c7", "0", "3-1", "FORCE", "JUSTID"],
    &["XCLAIM", "s", "g", "c7", "0", "9-9", "FORCE"],
    &["XDEL", "s", "2-1"],
    &["XAUTOCLAIM", "s", "g", "c8", "0", "0", "COUNT", "10"],
    &["XAUTOCLAIM", "s", "g", "c9", "0", "0", "JUSTID"],
    &["XAUTOCLAIM", "s", "g", "c9", "100000000", "0"],
    &["MULTI"],
    &["XADD", "s", "7-1", "d", "4"],
    &["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">"],
    &["XADD", "s", "8-1", "e", "5"],
    &["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"],
    &["EXEC"],
    &["XGROUP", "SETID", "s", "g", "2-0"],
    &["XGROUP", "SETID", "s", "g", "3-0", "ENTRIESREAD", "2"],
    &["XACK", "s", "g", "1-1"],
];

#[test]
fn consumer_group_reads_and_claims_travel_as_redis_writes_them() {
    let Some(real) = RealRedis::start_or_skip("consumer_group_reads_and_claims") else {
        return;
    };
    let lab = Server::start();
    let theirs = stream_of(real.addr(), GROUP_SCRIPT, &["TIME"]);
    let ours = stream_of(lab.addr(), GROUP_SCRIPT, &["TIME"]);
    assert!(
        ours.iter().any(|op| op[0] == "XCLAIM"),
        "the script claims: {ours:?}"
    );
    assert_eq!(ours, theirs, "redlab's stream, then Redis's");
}

/// With active expiry off, SCAN and RANDOMKEY expire the keys they meet: each goes out as a
/// DEL of its own, not wrapped in MULTI/EXEC. A blocked client whose key expired while the
/// transaction that filled it ran (DEBUG SLEEP) is not served: the key goes out as DEL
/// after the transaction.
#[test]
fn keys_expired_on_the_way_travel_as_plain_dels() {
    let Some(real) = RealRedis::start_or_skip("keys_expired_on_the_way") else {
        return;
    };
    let lab = Server::start();
    for (name, addr) in [("redis", real.addr()), ("redlab", lab.addr())] {
        for walk in ["SCAN", "RANDOMKEY"] {
            let mut c = keys_past_deadline(addr, &["foo1", "foo2"]);
            let walk_args: &[&str] = if walk == "SCAN" {
                &["SCAN", "0"]
            } else {
                &["RANDOMKEY"]
            };
            let mut got = stream_of(addr, &[walk_args], &[]);
            cmd(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
            got[1..3].sort();
            let want = owned(&[
                &["SELECT", "0"][..],
                &["DEL", "foo1"],
                &["DEL", "foo2"],
                &["SET", "end", "end"],
            ]);
            assert_eq!(got, want, "{name}, {walk}");
        }
        // A key a command's lookup expires belongs to that command's unit: wrapped in
        // MULTI/EXEC with the rest of a transaction or script, or with another such key.
        let mut c = keys_past_deadline(addr, &["e1", "e2", "e3", "e4", "e5", "e6"]);
        let got = stream_of(
            addr,
            &[
                &["MULTI"],
                &["GET", "e1"],
                &["SET", "x", "1"],
                &["EXEC"],
                &[
                    "EVAL",
                    "redis.call('get','e2'); redis.call('set','y','1')",
                    "0",
                ],
                &["EXISTS", "e3", "e4"],
                &["GET", "e5"],
                &["SET", "e6", "new"],
            ],
            &[],
        );
        cmd(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
        let want = owned(&[
            &["SELECT", "0"][..],
            &["MULTI"],
            &["DEL", "e1"],
            &["SET", "x", "1"],
            &["EXEC"],
            &["MULTI"],
            &["DEL", "e2"],
            &["set", "y", "1"],
            &["EXEC"],
            &["MULTI"],
            &["DEL", "e3"],
            &["DEL", "e4"],
            &["EXEC"],
            &["DEL", "e5"],
            &["MULTI"],
            &["DEL", "e6"],
            &["SET", "e6", "new"],
            &["EXEC"],
            &["SET", "end", "end"],
        ]);
        assert_eq!(got, want, "{name}, lookups that expire keys");
        // The blocked client and the transaction.
        let mut c = keys_past_deadline(addr, &[]);
        let mut b = RawConn::connect(addr);
        let id = cmd(&mut b, &["CLIENT", "ID"]);
        let id = id
            .trim_start_matches(':')
            .trim_end_matches("\\r\\n")
            .to_string();
        b.send_strs(&["BRPOP", "k", "0"]);
        assert!(eventually(
            || cmd(&mut c, &["INFO", "clients"]).contains("blocked_clients:1")
        ));
        let got = stream_of(
            addr,
            &[
                &["MULTI"],
                &["RPUSH", "k", "hello"],
                &["PEXPIRE", "k", "100"],
                &["DEBUG", "SLEEP", "0.2"],
                &["EXEC"],
            ],
            &["PEXPIREAT"],
        );
        assert_eq!(
            cmd(&mut c, &["CLIENT", "UNBLOCK", &id]),
            ":1\\r\\n",
            "{name}"
        );
        cmd(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
        let want = owned(&[
            &["SELECT", "0"][..],
            &["MULTI"],
            &["RPUSH", "k", "hello"],
            &["PEXPIREAT", "k", "<t>"],
            &["EXEC"],
            &["DEL", "k"],
            &["SET", "end", "end"],
        ]);
        assert_eq!(got, want, "{name}, a blocked client and an expired key");
    }
}

/// ROLE's first word on `addr`.
fn role_of(addr: SocketAddr) -> String {
    let r = cmd(&mut RawConn::connect(addr), &["ROLE"]);
    r.split("\\r\\n").nth(2).unwrap_or_default().to_string()
}

fn failover_state(addr: SocketAddr) -> String {
    let info = cmd(&mut RawConn::connect(addr), &["INFO", "replication"]);
    info.split("\\r\\n")
        .find_map(|l| l.strip_prefix("master_failover_state:"))
        .unwrap_or_default()
        .to_string()
}

/// FAILOVER hands the primary's role to a caught-up replica without losing a write: the
/// old primary follows the new one. Checked with redlab on both sides, and with a real
/// redis-server on either side, so each half of the handshake (PSYNC ... FAILOVER) meets
/// Redis's own.
#[test]
fn failover_hands_the_primary_role_to_a_replica() {
    enum Node {
        Lab(Server),
        Real(RealRedis),
    }
    impl Node {
        fn addr(&self) -> SocketAddr {
            match self {
                Node::Lab(s) => s.addr(),
                Node::Real(r) => r.addr(),
            }
        }
    }
    let real = || {
        RealRedis::start_with(&["--repl-diskless-sync-delay", "0"])
            .ok()
            .map(Node::Real)
    };
    let lab = || Some(Node::Lab(Server::start()));
    for (what, primary, replica) in [
        ("redlab to redlab", lab(), lab()),
        ("redlab to redis", lab(), real()),
        ("redis to redlab", real(), lab()),
    ] {
        let (Some(primary), Some(replica)) = (primary, replica) else {
            eprintln!("skipped {what}: no redis-server");
            continue;
        };
        let (pa, ra) = (primary.addr(), replica.addr());
        let mut p = RawConn::connect(pa);
        let mut r = RawConn::connect(ra);
        cmd(&mut r, &["REPLICAOF", "127.0.0.1", &pa.port().to_string()]);
        assert!(eventually(|| cmd(&mut r, &["ROLE"]).contains("connected")));
        cmd(&mut p, &["SET", "before", "1"]);
        assert_eq!(cmd(&mut p, &["WAIT", "1", "5000"]), ":1\\r\\n", "{what}");
        assert_eq!(failover_state(pa), "no-failover", "{what}");
        let to = [
            "FAILOVER",
            "TO",
            "127.0.0.1",
            &ra.port().to_string(),
            "TIMEOUT",
            "10000",
        ];
        assert_eq!(cmd(&mut p, &to), "+OK\\r\\n", "{what}");
        assert!(
            eventually(|| role_of(pa) == "slave" && role_of(ra) == "master"),
            "{what}: roles {} and {}",
            role_of(pa),
            role_of(ra)
        );
        assert!(eventually(|| failover_state(pa) == "no-failover"), "{what}");
        // The new primary takes writes; the old one follows it and refuses them.
        assert_eq!(cmd(&mut r, &["GET", "before"]), "$1\\r\\n1\\r\\n", "{what}");
        assert_eq!(cmd(&mut r, &["SET", "after", "2"]), "+OK\\r\\n", "{what}");
        let mut old = RawConn::connect(pa);
        assert!(
            eventually(|| cmd(&mut old, &["GET", "after"]) == "$1\\r\\n2\\r\\n"),
            "{what}"
        );
        assert_eq!(
            cmd(&mut old, &["SET", "x", "1"]),
            "-READONLY You can't write against a read only replica.\\r\\n",
            "{what}"
        );
        assert_eq!(
            cmd(&mut old, &["FAILOVER"]),
            "-ERR FAILOVER is not valid when server is a replica.\\r\\n",
            "{what}"
        );
    }
}

/// A replica that never catches up (its link holds what it gets): FAILOVER waits with writes paused, ABORT and TIMEOUT
/// give up (the primary stays one), and FORCE goes ahead at the timeout, losing the write
/// the target never got.
#[test]
fn failover_waits_aborts_times_out_and_forces() {
    let primary = Server::start();
    let replica = Server::start();
    let (pa, ra) = (primary.addr(), replica.addr());
    let mut p = RawConn::connect(pa);
    let mut r = RawConn::connect(ra);
    cmd(&mut r, &["REPLICAOF", "127.0.0.1", &pa.port().to_string()]);
    assert!(eventually(|| cmd(&mut r, &["ROLE"]).contains("connected")));
    cmd(&mut p, &["SET", "kept", "1"]);
    assert_eq!(cmd(&mut p, &["WAIT", "1", "5000"]), ":1\\r\\n");
    // The replica stays attached but applies (and acknowledges) nothing more.
    cmd(&mut r, &["REDLAB.REPL", "LAG", "COMMANDS", "1000"]);
    cmd(&mut p, &["SET", "lost", "1"]);

    assert_eq!(cmd(&mut p, &["FAILOVER"]), "+OK\\r\\n");
    assert_eq!(failover_state(pa), "waiting-for-sync");
    assert_eq!(
        cmd(&mut p, &["FAILOVER"]),
        "-ERR FAILOVER already in progress.\\r\\n"
    );
    // Writes wait for the failover's end; reads go on.
    let mut w = RawConn::connect(pa);
    w.send_strs(&["SET", "paused", "1"]);
    assert!(eventually(
        || cmd(&mut p, &["INFO", "clients"]).contains("blocked_clients:1")
    ));
    assert_eq!(cmd(&mut p, &["GET", "kept"]), "$1\\r\\n1\\r\\n");
    assert_eq!(cmd(&mut p, &["FAILOVER", "ABORT"]), "+OK\\r\\n");
    assert_eq!(failover_state(pa), "no-failover");
    assert_eq!(
        w.read_frame(WAIT).map(|f| support::resp::show(&f)),
        Some("+OK\\r\\n".to_string())
    );

    // A timeout without FORCE gives up.
    assert_eq!(cmd(&mut p, &["FAILOVER", "TIMEOUT", "50"]), "+OK\\r\\n");
    assert!(eventually(|| failover_state(pa) == "no-failover"));
    assert_eq!(role_of(pa), "master");

    // With FORCE the failover goes ahead at the timeout; the target never got "lost".
    let to = [
        "FAILOVER",
        "TO",
        "127.0.0.1",
        &ra.port().to_string(),
        "TIMEOUT",
        "50",
        "FORCE",
    ];
    assert_eq!(cmd(&mut p, &to), "+OK\\r\\n");
    assert!(eventually(
        || role_of(pa) == "slave" && role_of(ra) == "master"
    ));
    assert_eq!(cmd(&mut r, &["GET", "kept"]), "$1\\r\\n1\\r\\n");
    assert_eq!(cmd(&mut r, &["EXISTS", "lost"]), ":0\\r\\n");
    let mut old = RawConn::connect(pa);
    assert!(eventually(
        || cmd(&mut old, &["EXISTS", "lost"]) == ":0\\r\\n"
    ));
}

/// A replica attached with SYNC, as CLIENT LIST and CLIENT KILL see it: flag S, TYPE replica
/// (and slave) match it, and once killed its memory leaves mem_clients_slaves.
fn replica_as_a_client(addr: SocketAddr) -> Vec<String> {
    let (_replica, _) = attach(addr);
    let mut c = RawConn::connect(addr);
    let listed = cmd(&mut c, &["CLIENT", "LIST", "TYPE", "replica"]);
    let flags = listed
        .split(' ')
        .filter(|kv| kv.starts_with("flags="))
        .collect::<Vec<_>>()
        .join(" ");
    let normal = cmd(&mut c, &["CLIENT", "LIST", "TYPE", "normal"]);
    let killed = cmd(&mut c, &["CLIENT", "KILL", "TYPE", "slave"]);
    assert!(eventually(
        || cmd(&mut c, &["INFO", "memory"]).contains("mem_clients_slaves:0\\r\\n")
    ));
    let after = cmd(&mut c, &["CLIENT", "LIST", "TYPE", "replica"]);
    vec![
        flags,
        normal.matches("flags=").count().to_string(),
        killed,
        after,
    ]
}

#[test]
fn a_replica_is_a_client_of_type_replica() {
    let server = Server::start();
    let ours = replica_as_a_client(server.addr());
    assert_eq!(ours, ["flags=S", "1", ":1\\r\\n", "$0\\r\\n\\r\\n"]);
    if let Some(real) = RealRedis::start_or_skip("replica_as_a_client") {
        assert_eq!(replica_as_a_client(real.addr()), ours);
    }
}
