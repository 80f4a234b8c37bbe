//! A cluster of separate `redlab-server --cluster-enabled yes` processes, formed the way a
//! real one is: CLUSTER MEET, CLUSTER ADDSLOTSRANGE, CLUSTER REPLICATE, nothing else, all
//! over the wire. The nodes converge over their cluster bus; each test polls every node
//! until they agree (with a hang guard, never a bound on how fast), then checks what a user
//! relies on: the same view everywhere, redirects that name the right process, a redis-rs
//! ClusterClient across all slots, replicas that sync, FORGET, and a killed node marked
//! failing. One test forms a real redis-server cluster the same way and compares shapes.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::cluster::*;

#[test]
fn three_processes_agree_and_redirect_to_each_other() {
    let mut nodes = redlab_three();
    let ids: Vec<String> = nodes.iter_mut().map(myid).collect();
    for (i, n) in nodes.iter_mut().enumerate() {
        let info = cmd(n, &["CLUSTER", "INFO"]);
        for field in [
            "cluster_state:ok",
            "cluster_known_nodes:3",
            "cluster_size:3",
        ] {
            assert!(info.contains(field), "node {i}: {info}");
        }
        assert!(
            info.contains("cluster_slots_assigned:16384"),
            "node {i}: {info}"
        );
        let text = cmd(n, &["CLUSTER", "NODES"]);
        for (j, id) in ids.iter().enumerate() {
            let line = text
                .lines()
                .find(|l| l.starts_with(id.as_str()))
                .unwrap_or_else(|| panic!("node {i} does not list node {j}: {text}"));
            let (a, b) = THIRDS[j];
            assert!(line.ends_with(&format!(" {a}-{b}")), "{line}");
            assert_eq!(line.contains("myself"), i == j, "{line}");
            let flags = line.split(' ').nth(2).unwrap_or_default();
            assert!(flags.split(',').any(|f| f == "master"), "{line}");
        }
    }
    // Every process names the right owner for every third.
    let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
    for (i, n) in nodes.iter_mut().enumerate() {
        for (j, (a, _)) in THIRDS.iter().enumerate() {
            let key = key_in_slot_range(n, *a, THIRDS[j].1);
            let reply = cmd(n, &["SET", &key, "v"]);
            if i == j {
                assert_eq!(reply, "+OK");
            } else {
                let slot = keyslot(n, &key);
                assert_eq!(reply, format!("-MOVED {slot} 127.0.0.1:{}", ports[j]));
            }
        }
        assert_eq!(
            cmd(n, &["MSET", "a", "1", "b", "2"]),
            "-CROSSSLOT Keys in request don't hash to the same slot"
        );
    }
    // CLUSTER SHARDS agrees too (the replication offsets aside).
    let shards: Vec<String> = nodes
        .iter_mut()
        .map(|n| mask_offsets(&cmd(n, &["CLUSTER", "SHARDS"])))
        .collect();
    assert!(shards
        .iter()
        .all(|s| sorted_words(s) == sorted_words(&shards[0])));
}

fn mask_offsets(s: &str) -> String {
    let mut words: Vec<String> = s.split(' ').map(String::from).collect();
    for i in 1..words.len() {
        if words[i - 1] == "replication-offset" {
            words[i] = "*".into();
        }
    }
    words.join(" ")
}

fn sorted_words(s: &str) -> Vec<String> {
    let mut w: Vec<String> = s.split(' ').map(String::from).collect();
    w.sort();
    w
}

#[test]
fn a_redis_rs_cluster_client_reaches_every_slot_across_processes() {
    let mut nodes = redlab_three();
    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("redis://127.0.0.1:{}/", n.port))
        .collect();
    let client = redis::cluster::ClusterClient::new(urls).expect("a cluster client");
    let mut c = client.get_connection().expect("a cluster connection");
    for i in 0..600 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut c)
            .expect("SET");
    }
    for i in 0..600 {
        let v: i64 = redis::cmd("GET")
            .arg(format!("k{i}"))
            .query(&mut c)
            .expect("GET");
        assert_eq!(v, i);
    }
    // The keys live in the three processes, each holding the keys of its own slots.
    let mut total = 0;
    for (j, n) in nodes.iter_mut().enumerate() {
        let size: usize = cmd(n, &["DBSIZE"]).trim_start_matches(':').parse().unwrap();
        assert!(size > 0, "node {j} holds no key");
        total += size;
    }
    assert_eq!(total, 600);
}

#[test]
fn a_node_is_learnt_through_another_node_s_gossip() {
    let mut nodes: Vec<Node> = (0..3).map(|_| redlab_node(&[])).collect();
    for (n, (a, b)) in nodes.iter_mut().zip(THIRDS) {
        cmd(
            n,
            &["CLUSTER", "ADDSLOTSRANGE", &a.to_string(), &b.to_string()],
        );
    }
    // A meets B, C meets B: nobody tells A about C but B.
    let (bp, bc) = (nodes[1].port.to_string(), nodes[1].cport.to_string());
    assert_eq!(
        cmd(&mut nodes[0], &["CLUSTER", "MEET", "127.0.0.1", &bp, &bc]),
        "+OK"
    );
    assert_eq!(
        cmd(&mut nodes[2], &["CLUSTER", "MEET", "127.0.0.1", &bp, &bc]),
        "+OK"
    );
    settle(&mut nodes);
    let c_id = myid(&mut nodes[2]);
    assert!(cmd(&mut nodes[0], &["CLUSTER", "NODES"]).contains(&c_id));
}

#[test]
fn a_replica_in_another_process_follows_its_primary() {
    let mut nodes: Vec<Node> = (0..2).map(|_| redlab_node(&[])).collect();
    assert_eq!(
        cmd(&mut nodes[0], &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
        "+OK"
    );
    let (pp, pc) = (nodes[0].port.to_string(), nodes[0].cport.to_string());
    assert_eq!(
        cmd(&mut nodes[1], &["CLUSTER", "MEET", "127.0.0.1", &pp, &pc]),
        "+OK"
    );
    settle(&mut nodes);
    let primary = myid(&mut nodes[0]);
    let replica = myid(&mut nodes[1]);
    assert_eq!(
        cmd(&mut nodes[1], &["CLUSTER", "REPLICATE", &primary]),
        "+OK"
    );
    // The primary learns the new role over the bus.
    until("the primary lists the replica", || {
        cmd(&mut nodes[0], &["CLUSTER", "NODES"])
            .lines()
            .any(|l| l.starts_with(&replica) && l.contains(&format!("slave {primary}")))
    });
    assert!(cmd(&mut nodes[0], &["CLUSTER", "SLOTS"]).contains(&replica));
    assert_eq!(cmd(&mut nodes[0], &["SET", "foo", "bar"]), "+OK");
    // The replica redirects writes and, after READONLY, serves reads of synced data.
    let slot = keyslot(&mut nodes[1], "foo");
    assert_eq!(
        cmd(&mut nodes[1], &["GET", "foo"]),
        format!("-MOVED {slot} 127.0.0.1:{pp}")
    );
    assert_eq!(cmd(&mut nodes[1], &["READONLY"]), "+OK");
    until("the replica has the primary's write", || {
        cmd(&mut nodes[1], &["GET", "foo"]) == "bar"
    });
    assert!(cmd(&mut nodes[1], &["ROLE"]).starts_with("slave 127.0.0.1"));
}

#[test]
fn a_killed_process_is_marked_failing_and_forget_removes_it() {
    let mut nodes = redlab_three();
    let dead = myid(&mut nodes[2]);
    nodes[2].kill();
    for n in nodes.iter_mut().take(2) {
        until(
            "the killed node is marked fail and the cluster down",
            || {
                let line = cmd(n, &["CLUSTER", "NODES"])
                    .lines()
                    .find(|l| l.starts_with(&dead))
                    .map(String::from)
                    .unwrap_or_default();
                let info = cmd(n, &["CLUSTER", "INFO"]);
                line.contains("master,fail ")
                    && line.contains(" disconnected ")
                    && info.contains("cluster_state:fail")
                    && info.contains("cluster_slots_fail:5461")
            },
        );
    }
    assert_eq!(
        cmd(&mut nodes[0], &["SET", "x", "1"]),
        "-CLUSTERDOWN The cluster is down"
    );
    // FORGET on both survivors: it stays forgotten while they keep gossiping.
    for n in nodes.iter_mut().take(2) {
        assert_eq!(cmd(n, &["CLUSTER", "FORGET", &dead]), "+OK");
    }
    let pings = |n: &mut Node| bus_stat(n, "ping_received");
    let before = pings(&mut nodes[0]);
    until("a few more pings arrive", || {
        pings(&mut nodes[0]) >= before + 5
    });
    for n in nodes.iter_mut().take(2) {
        let info = cmd(n, &["CLUSTER", "INFO"]);
        assert!(info.contains("cluster_known_nodes:2"), "{info}");
        assert!(!cmd(n, &["CLUSTER", "NODES"]).contains(&dead));
    }
    assert_eq!(
        cmd(&mut nodes[0], &["CLUSTER", "FORGET", &dead]),
        format!("-ERR Unknown node {dead}")
    );
}

#[test]
fn without_full_coverage_the_rest_of_the_cluster_keeps_serving() {
    let mut nodes =
        three_primaries(|| Some(redlab_node(&["--cluster-require-full-coverage", "no"])))
            .expect("nodes");
    let dead = myid(&mut nodes[2]);
    nodes[2].kill();
    until("the killed node is marked fail", || {
        cmd(&mut nodes[0], &["CLUSTER", "NODES"])
            .lines()
            .any(|l| l.starts_with(&dead) && l.contains("master,fail "))
    });
    assert!(cmd(&mut nodes[0], &["CLUSTER", "INFO"]).contains("cluster_state:ok"));
    let key = key_in_slot_range(&mut nodes[0], THIRDS[0].0, THIRDS[0].1);
    assert_eq!(cmd(&mut nodes[0], &["SET", &key, "1"]), "+OK");
    // The dead node's slots still belong to it: clients are sent there, as Redis does.
    let lost = key_in_slot_range(&mut nodes[0], THIRDS[2].0, THIRDS[2].1);
    let slot = keyslot(&mut nodes[0], &lost);
    assert_eq!(
        cmd(&mut nodes[0], &["SET", &lost, "1"]),
        format!("-MOVED {slot} 127.0.0.1:{}", nodes[2].port)
    );
}

/// A PING from a node nobody knows, as Redis lays it out: header only, no gossip.
fn stranger_ping() -> Vec<u8> {
    let mut m = vec![0u8; 2256];
    m[0..4].copy_from_slice(b"RCmb");
    m[4..8].copy_from_slice(&2256u32.to_be_bytes());
    m[8..10].copy_from_slice(&1u16.to_be_bytes());
    m[10..12].copy_from_slice(&7000u16.to_be_bytes());
    m[40..80].copy_from_slice("f".repeat(40).as_bytes());
    m
}

/// Whether the peer closed the connection (a read returns end of file or a reset).
fn closed_by_peer(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return true,
            Ok(_) => continue,
        }
    }
}

#[test]
fn garbage_on_the_bus_neither_hangs_nor_crashes_a_node() {
    let mut nodes: Vec<Node> = (0..2).map(|_| redlab_node(&[])).collect();
    let bus = ("127.0.0.1", nodes[0].cport);
    // A wrong signature, and a length past any message: the link is closed.
    for bytes in [b"GET / HTTP/1.1\r\n\r\n".to_vec(), {
        let mut m = b"RCmb".to_vec();
        m.extend_from_slice(&u32::MAX.to_be_bytes());
        m
    }] {
        let mut s = TcpStream::connect(bus).unwrap();
        s.write_all(&bytes).unwrap();
        assert!(closed_by_peer(&mut s));
    }
    // A stranger's PING is answered with a PONG (the type at offset 12 is 1).
    let mut s = TcpStream::connect(bus).unwrap();
    s.write_all(&stranger_ping()).unwrap();
    let mut pong = vec![0u8; 2256];
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.read_exact(&mut pong[..16]).unwrap();
    assert_eq!(&pong[0..4], b"RCmb");
    assert_eq!(u16::from_be_bytes([pong[12], pong[13]]), 1);
    // Half a message, then silence; and a peer that sends PINGs but never reads its PONGs.
    let mut half = TcpStream::connect(bus).unwrap();
    half.write_all(&stranger_ping()[..1000]).unwrap();
    let mut deaf = TcpStream::connect(bus).unwrap();
    deaf.set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    for _ in 0..4000 {
        if deaf.write_all(&stranger_ping()).is_err() {
            break;
        }
    }
    // The node still forms a cluster over its bus.
    assert_eq!(
        cmd(&mut nodes[0], &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
        "+OK"
    );
    let (p, c) = (nodes[0].port.to_string(), nodes[0].cport.to_string());
    assert_eq!(
        cmd(&mut nodes[1], &["CLUSTER", "MEET", "127.0.0.1", &p, &c]),
        "+OK"
    );
    settle(&mut nodes);
    drop((half, deaf));
}

#[test]
fn meet_refuses_what_redis_refuses() {
    let mut n = redlab_node(&[]);
    for (args, want) in [
        (
            vec!["CLUSTER", "MEET", "localhost", "7000"],
            "-ERR Invalid node address specified: localhost:7000",
        ),
        (
            vec!["CLUSTER", "MEET", "127.0.0.1", "x"],
            "-ERR Invalid TCP base port specified: x",
        ),
        (
            vec!["CLUSTER", "MEET", "127.0.0.1", "70000"],
            "-ERR Invalid node address specified: 127.0.0.1:70000",
        ),
        (
            vec!["CLUSTER", "MEET", "127.0.0.1", "7000", "x"],
            "-ERR Invalid TCP bus port specified: x",
        ),
        (
            vec!["CLUSTER", "MEET", "127.0.0.1", "7000", "0"],
            "-ERR Invalid node address specified: 127.0.0.1:7000",
        ),
        (
            vec!["CLUSTER", "MEET", "127.0.0.1", "1", "2", "3"],
            "-ERR unknown subcommand or wrong number of arguments for 'MEET'. Try CLUSTER HELP.",
        ),
    ] {
        assert_eq!(cmd(&mut n, &args), want, "{args:?}");
    }
}

/// Replaces node ids by <idN> and whole numbers equal to a port or bus port by <pN>/<bN>.
fn normalize(s: &str, nodes: &[(String, u16, u16)]) -> String {
    let mut s = s.to_string();
    for (i, (id, _, _)) in nodes.iter().enumerate() {
        s = s.replace(id, &format!("<id{i}>"));
    }
    let mut out = String::new();
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        let mut word = digits.clone();
        for (i, (_, port, cport)) in nodes.iter().enumerate() {
            if *digits == port.to_string() {
                word = format!("<p{i}>");
            } else if *digits == cport.to_string() {
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

/// What one cluster looks like with ids, ports, times, epochs and offsets masked:
/// CLUSTER NODES (lines sorted), SLOTS, SHARDS (words sorted) and INFO's slot and node
/// fields, from every node.
fn shape(nodes: &mut [Node]) -> Vec<String> {
    let keys: Vec<(String, u16, u16)> = nodes
        .iter_mut()
        .map(|n| (myid(n), n.port, n.cport))
        .collect();
    let mut out = Vec::new();
    for n in nodes.iter_mut() {
        let mut lines: Vec<String> = cmd(n, &["CLUSTER", "NODES"])
            .lines()
            .map(|l| {
                let mut f: Vec<String> = l.split(' ').map(String::from).collect();
                for w in f.iter_mut().take(7).skip(4) {
                    *w = "*".into();
                }
                normalize(&f.join(" "), &keys)
            })
            .collect();
        lines.sort();
        out.push(lines.join("\n"));
        out.push(normalize(&cmd(n, &["CLUSTER", "SLOTS"]), &keys));
        let shards = normalize(&mask_offsets(&cmd(n, &["CLUSTER", "SHARDS"])), &keys);
        out.push(sorted_words(&shards).join(" "));
        let keep = [
            "cluster_state",
            "cluster_slots_assigned",
            "cluster_slots_ok",
            "cluster_slots_pfail",
            "cluster_slots_fail",
            "cluster_known_nodes",
            "cluster_size",
        ];
        let info = cmd(n, &["CLUSTER", "INFO"]);
        out.push(
            info.lines()
                .filter(|l| keep.iter().any(|k| l.starts_with(&format!("{k}:"))))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    out
}

#[test]
fn the_shape_matches_a_real_cluster_formed_the_same_way() {
    let Some(mut real) = three_primaries(real_node) else {
        return;
    };
    let mut mine = redlab_three();
    // A snapshot can catch a node between two gossip rounds (a pong late on a loaded
    // machine shows as fail?): settle and look again, a bounded number of times.
    let mut last = (Vec::new(), Vec::new());
    for _ in 0..20 {
        settle(&mut real);
        settle(&mut mine);
        last = (shape(&mut real), shape(&mut mine));
        if last.0 == last.1 {
            return;
        }
    }
    for (want, got) in last.0.iter().zip(&last.1) {
        assert_eq!(got, want);
    }
}

#[test]
fn a_redlab_node_joins_real_redis_nodes_over_their_bus() {
    let (Some(a), Some(b)) = (real_node(), real_node()) else {
        return;
    };
    let mut nodes = vec![a, b, redlab_node(&[])];
    for (n, (a, b)) in nodes.iter_mut().zip(THIRDS) {
        let reply = cmd(
            n,
            &["CLUSTER", "ADDSLOTSRANGE", &a.to_string(), &b.to_string()],
        );
        assert_eq!(reply, "+OK");
    }
    // The redlab node meets both real ones; they learn it, and each other, from the bus.
    let real: Vec<(u16, u16)> = nodes[..2].iter().map(|n| (n.port, n.cport)).collect();
    for (port, cport) in real {
        let reply = cmd(
            &mut nodes[2],
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &port.to_string(),
                &cport.to_string(),
            ],
        );
        assert_eq!(reply, "+OK");
    }
    settle(&mut nodes);
    let key = key_in_slot_range(&mut nodes[0], THIRDS[2].0, THIRDS[2].1);
    let slot = keyslot(&mut nodes[0], &key);
    assert_eq!(
        cmd(&mut nodes[0], &["SET", &key, "1"]),
        format!("-MOVED {slot} 127.0.0.1:{}", nodes[2].port)
    );
    assert_eq!(cmd(&mut nodes[2], &["SET", &key, "1"]), "+OK");
}

#[test]
fn a_slot_moves_between_processes_with_ask_then_moved() {
    let mut nodes = redlab_three();
    let (id0, id1) = (myid(&mut nodes[0]), myid(&mut nodes[1]));
    let key = key_in_slot_range(&mut nodes[0], THIRDS[0].0, THIRDS[0].1);
    let slot = keyslot(&mut nodes[0], &key).to_string();
    assert_eq!(
        cmd(
            &mut nodes[1],
            &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &id0]
        ),
        "+OK"
    );
    assert_eq!(
        cmd(
            &mut nodes[0],
            &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &id1]
        ),
        "+OK"
    );
    // The key is not on the source: the client is asked to try the target.
    let target = format!("127.0.0.1:{}", nodes[1].port);
    assert_eq!(
        cmd(&mut nodes[0], &["GET", &key]),
        format!("-ASK {slot} {target}")
    );
    assert_eq!(cmd(&mut nodes[1], &["ASKING"]), "+OK");
    assert_eq!(cmd(&mut nodes[1], &["SET", &key, "moved"]), "+OK");
    assert_eq!(
        cmd(&mut nodes[1], &["CLUSTER", "SETSLOT", &slot, "NODE", &id1]),
        "+OK"
    );
    assert_eq!(
        cmd(&mut nodes[0], &["CLUSTER", "SETSLOT", &slot, "NODE", &id1]),
        "+OK"
    );
    // The target's new config epoch carries the slot to the third process by gossip.
    until("the third node sends the key to the new owner", || {
        cmd(&mut nodes[2], &["GET", &key]) == format!("-MOVED {slot} {target}")
    });
    assert_eq!(
        cmd(&mut nodes[0], &["GET", &key]),
        format!("-MOVED {slot} {target}")
    );
    assert_eq!(cmd(&mut nodes[1], &["GET", &key]), "moved");
}

#[test]
fn cluster_help_is_redis_server_s_text() {
    let Some(mut real) = real_node() else {
        return;
    };
    let mut mine = redlab_node(&[]);
    let want = cmd(&mut real, &["CLUSTER", "HELP"]);
    assert!(
        want.contains(
            "+COUNT-FAILURE-REPORTS <node-id> +    Return number of failure reports for <node-id>."
        ),
        "{want}"
    );
    assert_eq!(cmd(&mut mine, &["CLUSTER", "HELP"]), want);
}
