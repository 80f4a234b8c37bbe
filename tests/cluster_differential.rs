//! The same command lines sent to a redlab cluster and to a real Redis 7.0.15 cluster that
//! the test builds from redis-server processes (three primaries, CLUSTER ADDSLOTSRANGE,
//! CLUSTER MEET): every reply must match once node ids, ports and the numbers only a
//! cluster bus produces (epochs, ping times, offsets) are replaced by placeholders.

mod support;

use std::time::Duration;

use redlab::Cluster;
use redlab_client::RealRedis;
use support::resp::{elements, show, RawConn};

const WAIT: Duration = Duration::from_secs(10);
const RANGES: [(u16, u16); 3] = [(0, 5460), (5461, 10922), (10923, 16383)];

/// How a reply is compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Byte for byte, after ids and ports.
    Exact,
    /// CLUSTER NODES: lines sorted, ping/pong times and epochs blanked.
    Nodes,
    /// CLUSTER INFO: the fields about slots and nodes.
    Info,
    /// CLUSTER SHARDS: shards sorted, replication offsets blanked.
    Shards,
}

use Mode::*;

/// One node of either cluster as the comparison sees it.
struct Node {
    conn: RawConn,
    id: String,
    port: u16,
}

fn send(c: &mut RawConn, args: &[String]) -> Vec<u8> {
    c.send(
        &args
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect::<Vec<_>>(),
    );
    c.read_frame(WAIT).expect("a reply")
}

fn text(c: &mut RawConn, args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    String::from_utf8_lossy(&send(c, &args)).into_owned()
}

/// Replaces ids by <idN>, and whole digit runs equal to a port or bus port by <pN>/<bN>.
fn normalize(s: &str, nodes: &[Node]) -> String {
    let mut s = s.to_string();
    for (i, n) in nodes.iter().enumerate() {
        s = s.replace(&n.id, &format!("<id{i}>"));
    }
    let mut out = String::new();
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        if digits.is_empty() {
            return;
        }
        let mut word = digits.clone();
        for (i, n) in nodes.iter().enumerate() {
            if *digits == n.port.to_string() {
                word = format!("<p{i}>");
            } else if *digits == (n.port as u32 + 10000).to_string() {
                word = format!("<b{i}>");
            }
        }
        out.push_str(&word);
        digits.clear();
    };
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            flush(&mut digits, &mut out);
            out.push(ch);
        }
    }
    flush(&mut digits, &mut out);
    out
}

/// The bulk string (or verbatim text) inside a frame.
fn payload(frame: &[u8]) -> String {
    let s = String::from_utf8_lossy(frame).into_owned();
    let body = s.split_once("\r\n").map_or("", |(_, b)| b);
    let body = body.strip_suffix("\r\n").unwrap_or(body);
    body.strip_prefix("txt:").unwrap_or(body).to_string()
}

fn compare_form(frame: &[u8], mode: Mode, nodes: &[Node]) -> String {
    match mode {
        Exact => normalize(&show(frame), nodes),
        Nodes => {
            let mut lines: Vec<String> = payload(frame)
                .lines()
                .map(|l| {
                    let mut f: Vec<String> = l.split(' ').map(String::from).collect();
                    for i in 4..7 {
                        if i < f.len() {
                            f[i] = "*".into();
                        }
                    }
                    normalize(&f.join(" "), nodes)
                })
                .collect();
            lines.sort();
            lines.join("\n")
        }
        Info => {
            let keep = [
                "cluster_state",
                "cluster_slots_assigned",
                "cluster_slots_ok",
                "cluster_slots_pfail",
                "cluster_slots_fail",
                "cluster_known_nodes",
                "cluster_size",
                "total_cluster_links_buffer_limit_exceeded",
            ];
            payload(frame)
                .lines()
                .filter(|l| keep.iter().any(|k| l.starts_with(&format!("{k}:"))))
                .collect::<Vec<_>>()
                .join("\n")
        }
        Shards => {
            let (head, items) = elements(frame).expect("an array");
            let mut shards: Vec<String> = items
                .iter()
                .map(|i| {
                    let s = normalize(&show(i), nodes);
                    // The offset follows its name: blank the number.
                    let mut out = String::new();
                    let mut rest = s.as_str();
                    while let Some(at) = rest.find("replication-offset\\r\\n:") {
                        let cut = at + "replication-offset\\r\\n:".len();
                        out.push_str(&rest[..cut]);
                        rest = &rest[cut..];
                        let skip = rest.find('\\').unwrap_or(rest.len());
                        out.push('*');
                        rest = &rest[skip..];
                    }
                    out.push_str(rest);
                    out
                })
                .collect();
            shards.sort();
            format!("{}{}", show(&head), shards.join(""))
        }
    }
}

/// Starts a real three-primary cluster; None when redis-server is not installed (outside
/// CI, where a missing redis-server is a failure).
fn real_cluster() -> Option<(Vec<RealRedis>, Vec<Node>)> {
    let mut servers = Vec::new();
    for _ in 0..3 {
        match RealRedis::start_with(&["--cluster-enabled", "yes"]) {
            Ok(r) => servers.push(r),
            Err(e) => {
                if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                    panic!("cluster_differential: {e} and CI=true");
                }
                eprintln!("\n!!!! cluster_differential: SKIPPED, {e} !!!!\n");
                return None;
            }
        }
    }
    let mut nodes: Vec<Node> = servers
        .iter()
        .map(|r| {
            let mut conn = RawConn::connect(r.addr());
            let id = payload(&send(&mut conn, &["CLUSTER".into(), "MYID".into()]));
            Node {
                conn,
                id,
                port: r.port(),
            }
        })
        .collect();
    for (n, (start, end)) in nodes.iter_mut().zip(RANGES) {
        let reply = text(
            &mut n.conn,
            &[
                "CLUSTER",
                "ADDSLOTSRANGE",
                &start.to_string(),
                &end.to_string(),
            ],
        );
        assert_eq!(reply, "+OK\r\n");
    }
    let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
    for p in &ports[1..] {
        let reply = text(
            &mut nodes[0].conn,
            &["CLUSTER", "MEET", "127.0.0.1", &p.to_string()],
        );
        assert_eq!(reply, "+OK\r\n");
    }
    // Wait for every node to know every other and to see the cluster up.
    settle(&mut nodes);
    Some((servers, nodes))
}

fn redlab_cluster() -> (Cluster, Vec<Node>) {
    let cluster = Cluster::builder().primaries(3).start();
    let nodes = (0..3)
        .map(|i| Node {
            conn: RawConn::connect(cluster.server(i).addr()),
            id: cluster.id(i).to_string(),
            port: cluster.server(i).port(),
        })
        .collect();
    (cluster, nodes)
}

/// The cases: (node, command line with {idN} for node N's id, how to compare).
fn cases() -> Vec<(usize, &'static str, Mode)> {
    vec![
        (0, "CLUSTER SLOTS", Exact),
        (1, "CLUSTER SLOTS", Exact),
        (0, "CLUSTER NODES", Nodes),
        (2, "CLUSTER NODES", Nodes),
        (0, "CLUSTER INFO", Info),
        (0, "CLUSTER SHARDS", Shards),
        (0, "CLUSTER KEYSLOT foo", Exact),
        (0, "CLUSTER KEYSLOT {user1}:a", Exact),
        (0, "CLUSTER KEYSLOT a{}b", Exact),
        (0, "CLUSTER KEYSLOT {}a{b}", Exact),
        (0, "CLUSTER KEYSLOT", Exact),
        (0, "CLUSTER KEYSLOT a b", Exact),
        (0, "CLUSTER NOSUCH", Exact),
        (0, "CLUSTER", Exact),
        (0, "GET foo", Exact),
        (1, "GET foo", Exact),
        (2, "GET foo", Exact),
        (2, "SET foo bar", Exact),
        (2, "GET foo", Exact),
        (0, "SET {user1}:a 1", Exact),
        (0, "MSET a 1 b 2", Exact),
        (2, "MSET {a}x 1 {a}y 2", Exact),
        (2, "MGET {a}x {a}y a", Exact),
        (2, "DEL {a}x foo", Exact),
        (0, "RENAME a b", Exact),
        (2, "SUNIONSTORE {a}d {a}x {a}y", Exact),
        (2, "SUNIONSTORE {a}d {a}x {b}y", Exact),
        (0, "EXISTS foo", Exact),
        (0, "TYPE foo", Exact),
        (0, "DBSIZE", Exact),
        (0, "PING", Exact),
        (0, "PUBLISH foo x", Exact),
        (0, "SPUBLISH foo x", Exact),
        (2, "SPUBLISH foo x", Exact),
        (0, "XREAD STREAMS a b 0 0", Exact),
        (0, "SELECT 1", Exact),
        (0, "SELECT 0", Exact),
        (0, "SELECT 99", Exact),
        (0, "SELECT x", Exact),
        (2, "CLUSTER COUNTKEYSINSLOT 15495", Exact),
        (2, "CLUSTER COUNTKEYSINSLOT 16384", Exact),
        (2, "CLUSTER COUNTKEYSINSLOT -1", Exact),
        (2, "CLUSTER COUNTKEYSINSLOT abc", Exact),
        (2, "CLUSTER GETKEYSINSLOT 12182 10", Exact),
        (2, "CLUSTER GETKEYSINSLOT 1 -1", Exact),
        (2, "CLUSTER GETKEYSINSLOT 99999 1", Exact),
        (2, "CLUSTER GETKEYSINSLOT x 1", Exact),
        (0, "ASKING", Exact),
        (0, "READONLY", Exact),
        (0, "READWRITE", Exact),
        (0, "EVAL \"return 1\" 2 a b", Exact),
        (0, "EVAL \"return 1\" 1 foo", Exact),
        (2, "EVAL \"return 1\" 1 foo", Exact),
        (0, "EVAL \"return redis.call('get','foo')\" 0", Exact),
        (2, "EVAL \"return redis.call('get','foo')\" 0", Exact),
        (2, "EVAL \"return redis.call('get',KEYS[1])\" 1 foo", Exact),
        (2, "EVAL \"return redis.pcall('get','{user1}')\" 0", Exact),
        (2, "EVAL \"redis.call('get','a') return redis.call('get','foo')\" 0", Exact),
        (2, "EVAL \"return redis.call('get','foo')\" 1 a", Exact),
        (0, "EVAL \"#!lua flags=no-cluster\nreturn 1\" 0", Exact),
        (0, "EVAL \"#!lua flags=no-writes\nreturn redis.call('get','{user1}')\" 0", Exact),
        (0, "EVAL \"#!lua\nreturn redis.call('set','{user1}', 1)\" 0", Exact),
        (0, "FUNCTION LOAD \"#!lua name=lib\nredis.register_function('f', function(k) return redis.call('get', k[1]) end)\"", Exact),
        (0, "FCALL f 1 foo", Exact),
        (0, "FCALL f 1 {user1}", Exact),
        (0, "FCALL f 0", Exact),
        (0, "MULTI", Exact),
        (0, "GET foo", Exact),
        (0, "EXEC", Exact),
        (2, "MULTI", Exact),
        (2, "GET foo", Exact),
        (2, "SET a 1", Exact),
        (2, "EXEC", Exact),
        (0, "CLUSTER SETSLOT 99999 STABLE", Exact),
        (0, "CLUSTER SETSLOT 1 FOO", Exact),
        (0, "CLUSTER SETSLOT 1 NODE abc", Exact),
        (0, "CLUSTER SETSLOT 1 MIGRATING abc", Exact),
        (0, "CLUSTER SETSLOT 1 IMPORTING abc", Exact),
        (0, "CLUSTER SETSLOT 12182 MIGRATING {id2}", Exact),
        (0, "CLUSTER SETSLOT 12182 IMPORTING abc", Exact),
        (0, "CLUSTER ADDSLOTS 1", Exact),
        (0, "CLUSTER ADDSLOTS 16384", Exact),
        (0, "CLUSTER ADDSLOTSRANGE 5 1", Exact),
        (0, "CLUSTER ADDSLOTSRANGE 1 2 3", Exact),
        (0, "CLUSTER REPLICATE abc", Exact),
        (0, "CLUSTER REPLICATE {id0}", Exact),
        (0, "CLUSTER FORGET {id0}", Exact),
        (0, "CLUSTER FORGET abc", Exact),
        (0, "CLUSTER COUNT-FAILURE-REPORTS abc", Exact),
        (0, "CLUSTER COUNT-FAILURE-REPORTS {id1}", Exact),
        (0, "CLUSTER FAILOVER", Exact),
        (0, "CLUSTER FAILOVER NOW", Exact),
        (2, "CLUSTER RESET", Exact),
        (0, "CLUSTER REPLICAS {id0}", Exact),
        (0, "CLUSTER REPLICAS abc", Exact),
        (0, "CLUSTER MYID x", Exact),
        // A migration of foo's slot (12182) from node 2 to node 0, held open.
        (2, "SET {foo}a 1", Exact),
        (0, "CLUSTER SETSLOT 12182 IMPORTING {id2}", Exact),
        (2, "CLUSTER SETSLOT 12182 MIGRATING {id0}", Exact),
        (2, "CLUSTER NODES", Nodes),
        (0, "CLUSTER NODES", Nodes),
        (2, "GET {foo}a", Exact),
        (2, "GET {foo}b", Exact),
        (2, "MGET {foo}a {foo}b", Exact),
        (2, "MGET {foo}b {foo}c", Exact),
        (2, "SET {foo}b 1", Exact),
        (0, "GET {foo}b", Exact),
        (0, "ASKING", Exact),
        (0, "GET {foo}b", Exact),
        (0, "GET {foo}b", Exact),
        (0, "ASKING", Exact),
        (0, "SET {foo}b 2", Exact),
        (0, "ASKING", Exact),
        (0, "MGET {foo}b {foo}c", Exact),
        (0, "ASKING", Exact),
        (0, "MGET {foo}b {foo}b", Exact),
        (2, "EVAL \"return redis.call('get',KEYS[1])\" 1 {foo}zz", Exact),
        (2, "EVAL \"return redis.call('get','{foo}a')\" 0", Exact),
        (2, "EVAL \"return redis.call('get','{foo}zz')\" 0", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} {foo}a 0 5000 COPY", Exact),
        (0, "ASKING", Exact),
        (0, "GET {foo}a", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} {foo}a 0 5000", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} {foo}a 0 5000 REPLACE", Exact),
        (2, "SET {foo}a 1", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} {foo}nokey 0 5000", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} x 0 5000 KEYS {foo}a", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} {foo}a 0 5000 BOGUS", Exact),
        (2, "MIGRATE 127.0.0.1 {port0} {foo}a 0 x", Exact),
        (2, "CLUSTER SETSLOT 12182 NODE {id0}", Exact),
        (2, "DEL {foo}a", Exact),
        (2, "CLUSTER SETSLOT 12182 NODE {id0}", Exact),
        (2, "DEL foo", Exact),
        (2, "CLUSTER COUNTKEYSINSLOT 12182", Exact),
        (0, "CLUSTER SETSLOT 12182 NODE {id0}", Exact),
        (2, "CLUSTER SETSLOT 12182 NODE {id0}", Exact),
        (2, "GET {foo}b", Exact),
        (0, "GET {foo}b", Exact),
        (1, "SETTLE", Exact),
        (1, "CLUSTER SLOTS", Exact),
        (1, "GET {foo}b", Exact),
        (0, "CLUSTER NODES", Nodes),
        (0, "CLUSTER SHARDS", Shards),
        (0, "CLUSTER INFO", Info),
    ]
}

/// Splits a case line into arguments: words, or double-quoted strings.
fn split(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').expect("closing quote");
            out.push(r[..end].to_string());
            rest = r[end + 1..].trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = rest[end..].trim_start();
        }
    }
    out
}

/// How long a real cluster may take to spread a change over its bus before the test gives
/// up: a hang guard for a loaded machine, not a bound on the cluster's speed.
const SETTLE_GUARD: Duration = Duration::from_secs(180);

/// One node's view, as far as settling goes: whether it says the cluster is ok, knows every
/// node with no handshake pending and every link connected, and how it describes the slots.
fn view(n: &mut Node, count: usize) -> (bool, String) {
    let info = text(&mut n.conn, &["CLUSTER", "INFO"]);
    let nodes_text = text(&mut n.conn, &["CLUSTER", "NODES"]);
    let formed = info.contains("cluster_state:ok")
        && info.contains(&format!("cluster_known_nodes:{count}"))
        && !nodes_text.contains("handshake")
        && !nodes_text.contains("fail")
        // The link state is CLUSTER NODES' eighth field ("disconnected" contains
        // "connected", so a substring count would pass a broken link).
        && nodes_text
            .lines()
            .filter(|l| l.split(' ').nth(7) == Some("connected"))
            .count()
            == count;
    (formed, text(&mut n.conn, &["CLUSTER", "SLOTS"]))
}

/// Waits until every node says cluster_state:ok, knows every other node, and describes
/// the slots as every other node does: a real cluster spreads a change over its bus (a
/// redlab cluster has one topology, so the wait ends at once). Polls with no assertion on
/// how long it takes; only past `SETTLE_GUARD` does it give up, naming what never settled.
fn settle(nodes: &mut [Node]) -> String {
    let count = nodes.len();
    let deadline = std::time::Instant::now() + SETTLE_GUARD;
    loop {
        let views: Vec<(bool, String)> = nodes.iter_mut().map(|n| view(n, count)).collect();
        if views.iter().all(|v| v.0 && v.1 == views[0].1) {
            return "settled".into();
        }
        if std::time::Instant::now() > deadline {
            let formed: Vec<bool> = views.iter().map(|v| v.0).collect();
            return format!("never settled (formed per node: {formed:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run(nodes: &mut [Node], node: usize, line: &str, mode: Mode) -> String {
    if line == "SETTLE" {
        return settle(nodes);
    }
    let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
    let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
    let args: Vec<String> = split(line)
        .into_iter()
        .map(|a| {
            let mut a = a;
            for (i, id) in ids.iter().enumerate() {
                a = a.replace(&format!("{{id{i}}}"), id);
                a = a.replace(&format!("{{port{i}}}"), &ports[i].to_string());
            }
            a
        })
        .collect();
    let frame = send(&mut nodes[node].conn, &args);
    compare_form(&frame, mode, nodes)
}

#[test]
fn replies_match_a_real_redis_cluster() {
    let Some((_real, mut real)) = real_cluster() else {
        return;
    };
    let (_cluster, mut mine) = redlab_cluster();
    let mut failures = Vec::new();
    let cases = cases();
    for (i, (node, line, mode)) in cases.iter().enumerate() {
        let want = run(&mut real, *node, line, *mode);
        let got = run(&mut mine, *node, line, *mode);
        if want != got {
            failures.push(format!(
                "case {i}: node {node}: {line}\n  redis:  {want}\n  redlab: {got}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("cluster_differential: {} cases match", cases.len());
}
