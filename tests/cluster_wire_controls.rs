//! REDLAB.CLUSTER: the `Cluster` controls over the wire (issue 19, point 4), driven here
//! with a raw RESP client as a test in another language would: a slot migration held open
//! (ASK), finished (MOVED), a node marked failed (CLUSTERDOWN), and failovers with and
//! without losing the writes the replica had not applied.

mod support;

use std::time::{Duration, Instant};

use redlab::Cluster;
use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(10);
/// A hang guard for polling a replication link on a loaded machine, not a time bound.
const GUARD: Duration = Duration::from_secs(120);

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, WAIT)
}

/// Polls `args` on `c` until its reply satisfies `ok`.
fn until(c: &mut RawConn, args: &[&str], ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + GUARD;
    loop {
        let r = cmd(c, args);
        if ok(&r) {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "{args:?} never gave what was awaited: {r}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_migration_held_open_over_the_wire_then_finished() {
    let cluster = Cluster::builder().primaries(2).start();
    let slot = 12182; // {foo}
    let owner = cluster.owner_of(slot).expect("an owner");
    let other = 1 - owner;
    let (port_other, id_other) = (cluster.server(other).port(), cluster.id(other).to_string());
    let mut o = RawConn::connect(cluster.server(owner).addr());
    let mut t = RawConn::connect(cluster.server(other).addr());
    assert_eq!(cmd(&mut o, &["SET", "{foo}a", "1"]), "+OK\\r\\n");
    assert_eq!(cmd(&mut o, &["SET", "{foo}b", "2"]), "+OK\\r\\n");
    // Any node opens the window: the nodes share one topology.
    assert_eq!(
        cmd(&mut t, &["REDLAB.CLUSTER", "BEGIN", "12182", &id_other]),
        "+OK\\r\\n"
    );
    assert_eq!(cmd(&mut o, &["GET", "{foo}a"]), "$1\\r\\n1\\r\\n");
    assert_eq!(
        cmd(&mut o, &["REDLAB.CLUSTER", "MOVEKEYS", "12182", "1"]),
        ":1\\r\\n"
    );
    let ask = format!("-ASK 12182 127.0.0.1:{port_other}\\r\\n");
    assert_eq!(cmd(&mut o, &["GET", "{foo}a"]), ask);
    assert_eq!(
        cmd(&mut o, &["GET", "{foo}b"]),
        "$1\\r\\n2\\r\\n",
        "not moved yet"
    );
    assert_eq!(cmd(&mut t, &["ASKING"]), "+OK\\r\\n");
    assert_eq!(cmd(&mut t, &["GET", "{foo}a"]), "$1\\r\\n1\\r\\n");
    assert!(
        cmd(&mut t, &["REDLAB.CLUSTER", "FINISH", "12182"])
            .starts_with("-ERR REDLAB.CLUSTER MOVEKEYS and FINISH go to"),
        "only the owner moves keys"
    );
    assert_eq!(
        cmd(&mut o, &["REDLAB.CLUSTER", "FINISH", "12182"]),
        "+OK\\r\\n"
    );
    assert_eq!(
        cmd(&mut o, &["GET", "{foo}b"]),
        format!("-MOVED 12182 127.0.0.1:{port_other}\\r\\n")
    );
    assert_eq!(cmd(&mut t, &["GET", "{foo}b"]), "$1\\r\\n2\\r\\n");
    assert_eq!(cluster.owner_of(slot), Some(other), "the Rust view agrees");
    // A node marked failed takes the cluster down while it owns slots.
    assert_eq!(
        cmd(&mut o, &["REDLAB.CLUSTER", "FAIL", &id_other]),
        "+OK\\r\\n"
    );
    assert!(cmd(&mut o, &["CLUSTER", "INFO"]).contains("cluster_state:fail"));
    assert_eq!(
        cmd(&mut t, &["GET", "{foo}b"]),
        "-CLUSTERDOWN The cluster is down\\r\\n"
    );
    assert_eq!(
        cmd(&mut o, &["REDLAB.CLUSTER", "RECOVER", &id_other]),
        "+OK\\r\\n"
    );
    assert_eq!(cmd(&mut t, &["GET", "{foo}b"]), "$1\\r\\n2\\r\\n");
    assert_eq!(
        cmd(&mut o, &["REDLAB.CLUSTER", "BEGIN", "99999", &id_other]),
        "-ERR Invalid or out of range slot\\r\\n"
    );
    assert_eq!(
        cmd(&mut o, &["REDLAB.CLUSTER", "NOPE"]),
        "-ERR syntax error\\r\\n"
    );
}

#[test]
fn failovers_over_the_wire_lose_the_held_writes_only_when_asked() {
    let cluster = Cluster::builder()
        .primaries(2)
        .replicas_per_primary(1)
        .start();
    let (p, r) = (0, 2);
    let mut pc = RawConn::connect(cluster.server(p).addr());
    let mut rc = RawConn::connect(cluster.server(r).addr());
    let key = "{a}k"; // slot 15495 is node 1's: use a key of node 0
    let key = if cluster.node_for_key(key.as_bytes()) == Some(p) {
        key
    } else {
        "{b}k"
    };
    assert_eq!(cluster.node_for_key(key.as_bytes()), Some(p));
    until(&mut rc, &["INFO", "replication"], |s| {
        s.contains("master_link_status:up")
    });
    // The replica's link holds the next writes back; the failover that loses them.
    assert_eq!(
        cmd(&mut rc, &["REDLAB.REPL", "LAG", "COMMANDS", "100"]),
        "+OK\\r\\n"
    );
    assert_eq!(cmd(&mut pc, &["SET", key, "lost"]), "+OK\\r\\n");
    until(&mut rc, &["REDLAB.REPL", "HELD"], |s| s != ":0\\r\\n");
    assert!(
        cmd(&mut rc, &["REDLAB.CLUSTER", "FAILOVER"])
            .starts_with("-ERR REDLAB.CLUSTER FAILOVER: this replica has not applied"),
        "a failover that keeps the writes waits for them"
    );
    assert_eq!(
        cmd(&mut pc, &["REDLAB.CLUSTER", "FAILOVER"]),
        "-ERR REDLAB.CLUSTER FAILOVER goes to a replica\\r\\n"
    );
    let lost = cmd(&mut rc, &["REDLAB.CLUSTER", "FAILOVER", "LOSING"]);
    assert_ne!(lost, ":0\\r\\n", "{lost}");
    assert!(lost.starts_with(':'), "{lost}");
    assert_eq!(
        cmd(&mut rc, &["GET", key]),
        "$-1\\r\\n",
        "the write was lost"
    );
    assert_eq!(
        cmd(&mut rc, &["SET", key, "kept"]),
        "+OK\\r\\n",
        "the replica is the primary"
    );
    // The old primary follows the new one; failing back keeps every write.
    until(&mut pc, &["INFO", "replication"], |s| {
        s.contains("master_link_status:up")
    });
    let done = until(&mut pc, &["REDLAB.CLUSTER", "FAILOVER"], |s| {
        s.starts_with(':')
    });
    assert_eq!(done, ":0\\r\\n");
    assert_eq!(cmd(&mut pc, &["GET", key]), "$4\\r\\nkept\\r\\n");
    assert_eq!(cluster.node_for_key(key.as_bytes()), Some(p));
}
