//! A redlab cluster in the test's process: every node answers as a Redis 7.0.15 cluster
//! node, redirects clients with Redis's exact texts, and lets the test move slots.

mod support;

use std::time::Duration;

use redlab::Cluster;
use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(10);

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, WAIT)
}

fn conn(cluster: &Cluster, node: usize) -> RawConn {
    RawConn::connect(cluster.server(node).addr())
}

#[test]
fn three_primaries_split_the_slots_as_redis_cli_does() {
    let cluster = Cluster::builder()
        .primaries(3)
        .replicas_per_primary(1)
        .start();
    assert_eq!(cluster.servers().len(), 6);
    let mut c = conn(&cluster, 0);
    let info = cmd(&mut c, &["CLUSTER", "INFO"]);
    assert!(info.contains("cluster_state:ok"), "{info}");
    assert!(info.contains("cluster_slots_assigned:16384"), "{info}");
    assert!(info.contains("cluster_known_nodes:6"), "{info}");
    assert!(info.contains("cluster_size:3"), "{info}");
    let p = |n: usize| cluster.server(n).port();
    let id = |n: usize| cluster.id(n).to_string();
    let slots = cmd(&mut c, &["CLUSTER", "SLOTS"]);
    let want = format!(
        "*3\\r\\n*4\\r\\n:0\\r\\n:5460\\r\\n*4\\r\\n$9\\r\\n127.0.0.1\\r\\n:{}\\r\\n$40\\r\\n{}\\r\\n*0\\r\\n*4\\r\\n$9\\r\\n127.0.0.1\\r\\n:{}\\r\\n$40\\r\\n{}\\r\\n*0\\r\\n",
        p(0),
        id(0),
        p(3),
        id(3)
    );
    assert!(slots.starts_with(&want), "{slots}");
    assert!(slots.contains(":5461\\r\\n:10922\\r\\n"), "{slots}");
    assert!(slots.contains(":10923\\r\\n:16383\\r\\n"), "{slots}");
    assert_eq!(
        cmd(&mut c, &["CLUSTER", "MYID"]),
        format!("${}\\r\\n{}\\r\\n", 40, id(0))
    );
    let nodes = cmd(&mut c, &["CLUSTER", "NODES"]);
    assert!(
        nodes.contains(&format!(
            "{} 127.0.0.1:{}@{} myself,master - 0 0 1 connected 0-5460\\n",
            id(0),
            p(0),
            p(0) as u32 + 10000
        )),
        "{nodes}"
    );
    assert!(
        nodes.contains(&format!("{} 127.0.0.1:{}@", id(3), p(3)))
            && nodes.contains(&format!(" slave {} 0 ", id(0))),
        "{nodes}"
    );
    // Each node sees itself as myself.
    let mut r = conn(&cluster, 4);
    assert!(cmd(&mut r, &["CLUSTER", "NODES"]).contains(&format!(
        "{} 127.0.0.1:{}@{} myself,slave {}",
        id(4),
        p(4),
        p(4) as u32 + 10000,
        id(1)
    )));
    assert!(cmd(&mut r, &["INFO", "cluster"]).contains("cluster_enabled:1"));
}

#[test]
fn keys_are_redirected_with_redis_texts() {
    let cluster = Cluster::builder().primaries(3).start();
    let p = |n: usize| cluster.server(n).port();
    let mut c = conn(&cluster, 0);
    // foo hashes to 12182 (node 2), a to 15495 (node 2), {user1}:a to 8106 (node 1).
    assert_eq!(cmd(&mut c, &["CLUSTER", "KEYSLOT", "foo"]), ":12182\\r\\n");
    assert_eq!(
        cmd(&mut c, &["CLUSTER", "KEYSLOT", "{user1}:a"]),
        ":8106\\r\\n"
    );
    assert_eq!(
        cmd(&mut c, &["GET", "foo"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(2))
    );
    assert_eq!(
        cmd(&mut c, &["MSET", "a", "1", "b", "2"]),
        "-CROSSSLOT Keys in request don't hash to the same slot\\r\\n"
    );
    assert_eq!(
        cmd(&mut c, &["SELECT", "1"]),
        "-ERR SELECT is not allowed in cluster mode\\r\\n"
    );
    assert_eq!(cmd(&mut c, &["SELECT", "0"]), "+OK\\r\\n");
    let mut c2 = conn(&cluster, 2);
    assert_eq!(
        cmd(&mut c2, &["MSET", "{a}x", "1", "{a}y", "2"]),
        "+OK\\r\\n"
    );
    assert_eq!(
        cmd(&mut c2, &["CLUSTER", "COUNTKEYSINSLOT", "15495"]),
        ":2\\r\\n"
    );
    assert_eq!(
        cmd(&mut c2, &["CLUSTER", "GETKEYSINSLOT", "15495", "1"]),
        "*1\\r\\n$4\\r\\n{a}x\\r\\n"
    );
    // A transaction: a queued command for another node flags it, EXEC aborts.
    assert_eq!(cmd(&mut c, &["MULTI"]), "+OK\\r\\n");
    assert_eq!(
        cmd(&mut c, &["GET", "foo"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(2))
    );
    assert!(cmd(&mut c, &["EXEC"]).starts_with("-EXECABORT"));
    // Scripts: declared keys route the EVAL, undeclared ones are checked per call.
    assert_eq!(
        cmd(&mut c, &["EVAL", "return 1", "2", "a", "b"]),
        "-CROSSSLOT Keys in request don't hash to the same slot\\r\\n"
    );
    assert_eq!(
        cmd(&mut c, &["EVAL", "return 1", "1", "a"]),
        format!("-MOVED 15495 127.0.0.1:{}\\r\\n", p(2))
    );
    let e = cmd(&mut c, &["EVAL", "return redis.call('get','foo')", "0"]);
    assert!(
        e.starts_with("-ERR Script attempted to access a non local key in a cluster node script: "),
        "{e}"
    );
    // Shard channels route like keys.
    assert_eq!(
        cmd(&mut c, &["SPUBLISH", "foo", "x"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(2))
    );
    // Cluster down: a failed primary stops the whole cluster.
    cluster.fail(1);
    assert_eq!(
        cmd(&mut c, &["GET", "b"]),
        "-CLUSTERDOWN The cluster is down\\r\\n"
    );
    assert!(cmd(&mut c, &["CLUSTER", "INFO"]).contains("cluster_state:fail"));
    cluster.recover(1);
    assert_eq!(cmd(&mut c, &["GET", "b"]), "$-1\\r\\n");
}

#[test]
fn a_slot_migration_held_open_answers_ask_and_tryagain() {
    let cluster = Cluster::builder().primaries(3).start();
    let p = |n: usize| cluster.server(n).port();
    let mut src = conn(&cluster, 2);
    let mut dst = conn(&cluster, 0);
    assert_eq!(cmd(&mut src, &["SET", "{foo}a", "1"]), "+OK\\r\\n");
    assert_eq!(cmd(&mut src, &["SET", "{foo}b", "2"]), "+OK\\r\\n");
    cluster.begin_migration(12182, 0).unwrap();
    let nodes = cmd(&mut src, &["CLUSTER", "NODES"]);
    assert!(
        nodes.contains(&format!("[12182->-{}]", cluster.id(0))),
        "{nodes}"
    );
    assert!(cmd(&mut dst, &["CLUSTER", "NODES"]).contains(&format!("[12182-<-{}]", cluster.id(2))));
    // Keys still on the source are served there; missing ones are asked for elsewhere.
    assert_eq!(cmd(&mut src, &["GET", "{foo}a"]), "$1\\r\\n1\\r\\n");
    assert_eq!(
        cmd(&mut src, &["GET", "foo"]),
        format!("-ASK 12182 127.0.0.1:{}\\r\\n", p(0))
    );
    assert_eq!(
        cmd(&mut src, &["MGET", "{foo}a", "{foo}zz"]),
        "-TRYAGAIN Multiple keys request during rehashing of slot\\r\\n"
    );
    // The importing node redirects unless the client asks.
    assert_eq!(
        cmd(&mut dst, &["GET", "foo"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(2))
    );
    assert_eq!(cmd(&mut dst, &["ASKING"]), "+OK\\r\\n");
    assert_eq!(cmd(&mut dst, &["GET", "foo"]), "$-1\\r\\n");
    assert_eq!(
        cmd(&mut dst, &["GET", "foo"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(2)),
        "ASKING lasts one command"
    );
    assert_eq!(cluster.migrate_keys(12182, 1).unwrap(), 1);
    assert_eq!(cluster.keys(0).unwrap(), vec![b"{foo}a".to_vec()]);
    assert_eq!(
        cmd(&mut src, &["GET", "{foo}a"]),
        format!("-ASK 12182 127.0.0.1:{}\\r\\n", p(0))
    );
    cluster.finish_migration(12182).unwrap();
    assert_eq!(cluster.owner_of(12182), Some(0));
    assert_eq!(
        cmd(&mut src, &["GET", "{foo}b"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(0))
    );
    assert_eq!(cmd(&mut dst, &["GET", "{foo}b"]), "$1\\r\\n2\\r\\n");
    assert!(!cmd(&mut src, &["CLUSTER", "NODES"]).contains("->-"));
}

#[test]
fn setslot_over_the_wire_moves_a_slot_as_redis_cli_does() {
    let cluster = Cluster::builder().primaries(2).start();
    let (id0, id1) = (cluster.id(0).to_string(), cluster.id(1).to_string());
    let mut n0 = conn(&cluster, 0);
    let mut n1 = conn(&cluster, 1);
    assert_eq!(cmd(&mut n1, &["SET", "x", "v"]), "+OK\\r\\n");
    let slot = "16287";
    assert_eq!(
        cmd(&mut n0, &["CLUSTER", "KEYSLOT", "x"]),
        format!(":{slot}\\r\\n")
    );
    // x is on node 1 (slots 8192-16383): move its slot to node 0.
    assert_eq!(
        cmd(&mut n0, &["CLUSTER", "SETSLOT", slot, "IMPORTING", &id1]),
        "+OK\\r\\n"
    );
    assert_eq!(
        cmd(&mut n1, &["CLUSTER", "SETSLOT", slot, "MIGRATING", &id0]),
        "+OK\\r\\n"
    );
    assert_eq!(
        cmd(&mut n1, &["CLUSTER", "SETSLOT", slot, "NODE", &id0]),
        format!("-ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot.\\r\\n")
    );
    assert_eq!(cmd(&mut n1, &["DEL", "x"]), ":1\\r\\n");
    assert_eq!(
        cmd(&mut n0, &["CLUSTER", "SETSLOT", slot, "NODE", &id0]),
        "+OK\\r\\n"
    );
    assert_eq!(
        cmd(&mut n1, &["CLUSTER", "SETSLOT", slot, "NODE", &id0]),
        "+OK\\r\\n"
    );
    assert_eq!(cmd(&mut n0, &["SET", "x", "w"]), "+OK\\r\\n");
    assert!(cmd(&mut n1, &["GET", "x"]).starts_with("-MOVED 16287 "));
    assert_eq!(
        cmd(&mut n0, &["CLUSTER", "SETSLOT", "99999", "STABLE"]),
        "-ERR Invalid or out of range slot\\r\\n"
    );
    assert_eq!(
        cmd(&mut n0, &["CLUSTER", "SETSLOT", "1", "IMPORTING", "abc"]),
        "-ERR I'm already the owner of hash slot 1\\r\\n"
    );
}

#[test]
fn standalone_servers_say_cluster_support_is_disabled() {
    let server = redlab::Server::start();
    let mut c = RawConn::connect(server.addr());
    for args in [
        &["CLUSTER", "INFO"][..],
        &["ASKING"],
        &["READONLY"],
        &["READWRITE"],
    ] {
        assert_eq!(
            cmd(&mut c, args),
            "-ERR This instance has cluster support disabled\\r\\n"
        );
    }
    assert_eq!(cmd(&mut c, &["SELECT", "1"]), "+OK\\r\\n");
}

#[test]
fn redis_rs_cluster_client_follows_moved_and_ask() {
    use redis::cluster::ClusterClient;
    use redis::Commands;
    let cluster = Cluster::builder().primaries(3).start();
    let client = ClusterClient::new(cluster.urls()).unwrap();
    let mut con = client.get_connection().unwrap();
    for i in 0..50 {
        let _: () = con.set(format!("k{i}"), i).unwrap();
    }
    for n in 0..3 {
        assert!(!cluster.keys(n).unwrap().is_empty(), "node {n} got keys");
    }
    // Open a migration of foo's slot, move half its keys, and read and write through it.
    let slot = 12182;
    let from = cluster.owner_of(slot).unwrap();
    let to = (from + 1) % 3;
    for k in ["{foo}1", "{foo}2", "{foo}3", "{foo}4"] {
        let _: () = con.set(k, k).unwrap();
    }
    cluster.begin_migration(slot, to).unwrap();
    assert_eq!(cluster.migrate_keys(slot, 2).unwrap(), 2);
    for k in ["{foo}1", "{foo}2", "{foo}3", "{foo}4"] {
        let v: String = con.get(k).unwrap();
        assert_eq!(v, k, "read through ASK or from the source");
    }
    // A new key in the slot lands on the target (the source answers ASK for it).
    let _: () = con.set("{foo}new", "n").unwrap();
    assert!(cluster.keys(to).unwrap().contains(&b"{foo}new".to_vec()));
    cluster.finish_migration(slot).unwrap();
    // The old owner answers MOVED now; the client refreshes its map and carries on.
    for k in ["{foo}1", "{foo}2", "{foo}3", "{foo}4", "{foo}new"] {
        let v: Option<String> = con.get(k).unwrap();
        assert!(v.is_some(), "{k}");
    }
    for i in 0..50 {
        let v: i64 = con.get(format!("k{i}")).unwrap();
        assert_eq!(v, i);
    }
    assert_eq!(
        cluster
            .keys(from)
            .unwrap()
            .iter()
            .filter(|k| k.starts_with(b"{foo}"))
            .count(),
        0
    );
}

#[test]
fn replicas_serve_reads_only_to_readonly_connections() {
    let cluster = Cluster::builder()
        .primaries(3)
        .replicas_per_primary(1)
        .start();
    let p = |n: usize| cluster.server(n).port();
    // Node 3 replicates node 0 (slots 0-5460); b hashes to 3300.
    let mut r = conn(&cluster, 3);
    assert_eq!(
        cmd(&mut r, &["GET", "b"]),
        format!("-MOVED 3300 127.0.0.1:{}\\r\\n", p(0))
    );
    assert_eq!(cmd(&mut r, &["READONLY"]), "+OK\\r\\n");
    assert_eq!(cmd(&mut r, &["GET", "b"]), "$-1\\r\\n");
    assert_eq!(
        cmd(&mut r, &["SET", "b", "1"]),
        format!("-MOVED 3300 127.0.0.1:{}\\r\\n", p(0))
    );
    assert_eq!(
        cmd(&mut r, &["GET", "foo"]),
        format!("-MOVED 12182 127.0.0.1:{}\\r\\n", p(2)),
        "only the primary's own slots"
    );
    assert_eq!(cmd(&mut r, &["READWRITE"]), "+OK\\r\\n");
    assert!(cmd(&mut r, &["GET", "b"]).starts_with("-MOVED"));
    // A failover from Rust: the replica takes the slots, the old primary follows it.
    cluster.failover(3).unwrap();
    assert_eq!(cmd(&mut r, &["GET", "b"]), "$-1\\r\\n");
    let mut old = conn(&cluster, 0);
    assert_eq!(
        cmd(&mut old, &["GET", "b"]),
        format!("-MOVED 3300 127.0.0.1:{}\\r\\n", p(3))
    );
    let nodes = cmd(&mut old, &["CLUSTER", "NODES"]);
    assert!(
        nodes.contains(&format!("myself,slave {}", cluster.id(3))),
        "{nodes}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_cluster_client_follows_ask_during_a_held_migration() {
    use redis::AsyncCommands;
    let cluster = Cluster::builder().primaries(3).start();
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let mut con = client.get_async_connection().await.unwrap();
    for k in ["{t}1", "{t}2", "{t}3"] {
        let _: () = con.set(k, k).await.unwrap();
    }
    let slot = 15891; // {t}
    let from = cluster.owner_of(slot).unwrap();
    let to = (from + 2) % 3;
    cluster.begin_migration(slot, to).unwrap();
    assert_eq!(cluster.migrate_keys(slot, 2).unwrap(), 2);
    for k in ["{t}1", "{t}2", "{t}3"] {
        let v: String = con.get(k).await.unwrap();
        assert_eq!(v, k);
    }
    let _: () = con.set("{t}4", "4").await.unwrap();
    assert!(cluster.keys(to).unwrap().contains(&b"{t}4".to_vec()));
    cluster.finish_migration(slot).unwrap();
    for k in ["{t}1", "{t}2", "{t}3", "{t}4"] {
        let v: Option<String> = con.get(k).await.unwrap();
        assert!(v.is_some(), "{k}");
    }
    assert!(
        cluster.keys(from).unwrap().is_empty()
            || cluster
                .keys(from)
                .unwrap()
                .iter()
                .all(|k| !k.starts_with(b"{t}"))
    );
}
