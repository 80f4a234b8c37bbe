//! CLUSTER FAILOVER and automatic failover between `redlab-server --cluster-enabled yes`
//! processes, over Redis's cluster bus: three primaries and a replica of the first, formed
//! over the wire; then a manual failover, a killed primary replaced by its replica, a
//! TAKEOVER without a majority, the refusals redis-server gives, and a real redis-server
//! replica elected by redlab primaries. Every wait polls all nodes until they agree, under
//! a hang guard; nothing asserts how long it took.

mod support;

use support::cluster::*;

/// The three primaries and, last, the replica of the first (synchronised with it).
fn with_replica(timeout: &str, replica_extra: &[&str]) -> Vec<Node> {
    let mut nodes = three_primaries(|| Some(redlab_node_with_timeout(timeout, &[])))
        .expect("redlab nodes start");
    nodes.push(redlab_node_with_timeout(timeout, replica_extra));
    join_as_replica(&mut nodes);
    nodes
}

/// Node 3 (primary without slots) meets node 0, replicates it, and is synchronised.
fn join_as_replica(nodes: &mut [Node]) {
    join_replicas(nodes, &[0]);
}

/// The nodes from 3 on (primaries without slots) meet node 0; once all agree, node 3 + k
/// replicates node `primaries[k]`, and each is synchronised.
fn join_replicas(nodes: &mut [Node], primaries: &[usize]) {
    let (p, c) = (nodes[0].port.to_string(), nodes[0].cport.to_string());
    for n in nodes.iter_mut().skip(3) {
        assert_eq!(cmd(n, &["CLUSTER", "MEET", "127.0.0.1", &p, &c]), "+OK");
    }
    settle(nodes);
    for (k, &p) in (3..).zip(primaries) {
        let primary = myid(&mut nodes[p]);
        let replica = myid(&mut nodes[k]);
        assert_eq!(
            cmd(&mut nodes[k], &["CLUSTER", "REPLICATE", &primary]),
            "+OK"
        );
        for n in nodes.iter_mut() {
            until("every node lists the replica", || {
                replicates(&line_of(n, &replica), &primary)
            });
        }
        until("the replica's link is up", || {
            cmd(&mut nodes[k], &["INFO", "replication"]).contains("master_link_status:up")
        });
    }
}

/// Whether `n` sees `new` as the primary of the first third, and `old` as its replica
/// (`old` None: the old primary is gone, whatever `n` thinks of it).
fn sees_failed_over(n: &mut Node, new: &str, old: Option<&str>) -> bool {
    let (a, b) = THIRDS[0];
    let promoted = line_of(n, new);
    let promoted_ok = flags_of(&promoted).iter().any(|f| f == "master")
        && promoted.ends_with(&format!(" {a}-{b}"))
        && promoted.contains(" - ");
    let demoted_ok = old.is_none_or(|o| replicates(&line_of(n, o), new));
    promoted_ok && demoted_ok
}

/// The config epoch in a CLUSTER NODES line.
fn epoch_of(line: &str) -> u64 {
    line.split(' ')
        .nth(6)
        .and_then(|e| e.parse().ok())
        .expect("an epoch")
}

#[test]
fn a_manual_failover_makes_the_replica_the_primary_everywhere() {
    let mut nodes = with_replica(NODE_TIMEOUT, &[]);
    let (old, new) = (myid(&mut nodes[0]), myid(&mut nodes[3]));
    let key = key_in_slot_range(&mut nodes[0], THIRDS[0].0, THIRDS[0].1);
    let slot = keyslot(&mut nodes[0], &key);
    assert_eq!(cmd(&mut nodes[0], &["SET", &key, "before"]), "+OK");
    assert_eq!(cmd(&mut nodes[3], &["CLUSTER", "FAILOVER"]), "+OK");
    for n in nodes.iter_mut() {
        until("every node sees the replica promoted", || {
            sees_failed_over(n, &new, Some(&old))
        });
    }
    // The election's request went to the three other nodes: each link counts it, where
    // it was sent as where it was received (Redis counts a broadcast once per link).
    let sent = bus_stat(&mut nodes[3], "auth-req_sent");
    let received: u64 = nodes[..3]
        .iter_mut()
        .map(|n| bus_stat(n, "auth-req_received"))
        .sum();
    assert!(sent >= 3, "{sent}");
    assert_eq!(sent, received);
    // Its config epoch is new: above every other primary's.
    let promoted = epoch_of(&line_of(&mut nodes[1], &new));
    for id in [&old, &myid(&mut nodes[1]), &myid(&mut nodes[2])] {
        let line = line_of(&mut nodes[1], id);
        assert!(epoch_of(&line) <= promoted, "{line}");
    }
    // Clients are sent to the new primary, which kept the write (a manual failover waits
    // until the replica has everything the paused primary had).
    let to_new = format!("-MOVED {slot} 127.0.0.1:{}", nodes[3].port);
    for i in [1, 2] {
        until("the other primaries redirect to the new one", || {
            cmd(&mut nodes[i], &["GET", &key]) == to_new
        });
    }
    assert_eq!(cmd(&mut nodes[3], &["GET", &key]), "before");
    assert_eq!(cmd(&mut nodes[3], &["SET", &key, "after"]), "+OK");
    // The old primary now replicates the new one, and redirects writes to it.
    let port = nodes[3].port;
    until("the old primary follows the new one", || {
        let info = cmd(&mut nodes[0], &["INFO", "replication"]);
        info.contains("role:slave")
            && info.contains(&format!("master_port:{port}"))
            && info.contains("master_link_status:up")
    });
    assert_eq!(cmd(&mut nodes[0], &["SET", &key, "x"]), to_new);
    assert_eq!(cmd(&mut nodes[0], &["READONLY"]), "+OK");
    until("the old primary has the new primary's write", || {
        cmd(&mut nodes[0], &["GET", &key]) == "after"
    });
}

#[test]
fn a_killed_primary_is_replaced_by_its_replica_once_config_set_shortens_the_timeout() {
    // An hour: no failure would be noticed within the guard at this timeout.
    let mut nodes = with_replica("3600000", &[]);
    for n in nodes.iter_mut() {
        assert_eq!(
            cmd(n, &["CONFIG", "SET", "cluster-node-timeout", "500"]),
            "+OK"
        );
        assert_eq!(
            cmd(n, &["CONFIG", "GET", "cluster-node-timeout"]),
            "cluster-node-timeout 500"
        );
    }
    let (old, new) = (myid(&mut nodes[0]), myid(&mut nodes[3]));
    nodes[0].kill();
    for n in nodes.iter_mut().skip(1) {
        until("the survivors elect the replica", || {
            sees_failed_over(n, &new, None)
                && line_of(n, &old).contains("master,fail ")
                && cmd(n, &["CLUSTER", "INFO"]).contains("cluster_state:ok")
        });
    }
    let key = key_in_slot_range(&mut nodes[1], THIRDS[0].0, THIRDS[0].1);
    let slot = keyslot(&mut nodes[1], &key);
    assert_eq!(
        cmd(&mut nodes[1], &["SET", &key, "1"]),
        format!("-MOVED {slot} 127.0.0.1:{}", nodes[3].port)
    );
    assert_eq!(cmd(&mut nodes[3], &["SET", &key, "1"]), "+OK");
    assert!(cmd(&mut nodes[3], &["ROLE"]).starts_with("master"));
}

#[test]
fn takeover_promotes_the_replica_without_a_majority() {
    let mut nodes = with_replica(NODE_TIMEOUT, &[]);
    let (old, new) = (myid(&mut nodes[0]), myid(&mut nodes[3]));
    // Two of the three primaries die: no election could be won now.
    nodes[1].kill();
    nodes[2].kill();
    assert_eq!(
        cmd(&mut nodes[3], &["CLUSTER", "FAILOVER", "TAKEOVER"]),
        "+OK"
    );
    let mut epochs = Vec::new();
    for i in [0, 3] {
        until("the live nodes see the takeover", || {
            sees_failed_over(&mut nodes[i], &new, Some(&old))
        });
        epochs.push(epoch_of(&line_of(&mut nodes[i], &new)));
    }
    // A config epoch above every other node's, in both views.
    for i in [0, 3] {
        let text = cmd(&mut nodes[i], &["CLUSTER", "NODES"]);
        let top = epochs[0];
        for line in text.lines().filter(|l| !l.starts_with(&new)) {
            let flags = line.split(' ').nth(2).unwrap_or_default();
            if flags.split(',').any(|f| f == "master") {
                assert!(epoch_of(line) < top, "{text}");
            }
        }
    }
    assert_eq!(epochs[0], epochs[1]);
    let port = nodes[3].port;
    until("the old primary follows the new one", || {
        let info = cmd(&mut nodes[0], &["INFO", "replication"]);
        info.contains("role:slave") && info.contains(&format!("master_port:{port}"))
    });
}

#[test]
fn force_fails_over_a_dead_primary_that_no_failover_leaves_alone() {
    let mut nodes = with_replica(NODE_TIMEOUT, &["--cluster-replica-no-failover", "yes"]);
    let (old, new) = (myid(&mut nodes[0]), myid(&mut nodes[3]));
    // Every node shows the replica's setting, as its pings announce it.
    for (k, n) in nodes.iter_mut().enumerate() {
        let want: &[&str] = if k == 3 {
            &["myself", "slave", "nofailover"]
        } else {
            &["slave", "nofailover"]
        };
        until("every node flags the replica nofailover", || {
            flags_of(&line_of(n, &new)) == want
        });
    }
    nodes[0].kill();
    until("the replica sees its primary fail", || {
        line_of(&mut nodes[3], &old).contains("master,fail ")
    });
    // Without FORCE a replica refuses, as Redis does, when its primary is down.
    assert_eq!(
        cmd(&mut nodes[3], &["CLUSTER", "FAILOVER"]),
        "-ERR Master is down or failed, please use CLUSTER FAILOVER FORCE"
    );
    assert!(line_of(&mut nodes[3], &new).contains("slave"));
    assert_eq!(cmd(&mut nodes[3], &["CLUSTER", "FAILOVER", "FORCE"]), "+OK");
    for n in nodes.iter_mut().skip(1) {
        until("the survivors see the forced failover", || {
            sees_failed_over(n, &new, None)
        });
    }
}

#[test]
fn cluster_failover_refusals_match_redis_server() {
    let mut mine = redlab_node(&[]);
    let Some(mut real) = real_node() else {
        return;
    };
    for args in [
        vec!["CLUSTER", "FAILOVER"],
        vec!["CLUSTER", "FAILOVER", "FORCE"],
        vec!["CLUSTER", "FAILOVER", "takeover"],
        vec!["CLUSTER", "FAILOVER", "nonsense"],
        vec!["CLUSTER", "FAILOVER", "FORCE", "TAKEOVER"],
        vec!["cluster", "failover", "a", "b", "c"],
    ] {
        let want = cmd(&mut real, &args);
        assert!(want.starts_with('-'), "{args:?}: {want}");
        assert_eq!(cmd(&mut mine, &args), want, "{args:?}");
    }
}

#[test]
fn a_real_redis_replica_is_elected_by_redlab_primaries() {
    let Some(real) = real_node() else {
        return;
    };
    let mut nodes = redlab_three();
    nodes.push(real);
    join_as_replica(&mut nodes);
    let (old, new) = (myid(&mut nodes[0]), myid(&mut nodes[3]));
    let key = key_in_slot_range(&mut nodes[0], THIRDS[0].0, THIRDS[0].1);
    assert_eq!(cmd(&mut nodes[0], &["SET", &key, "kept"]), "+OK");
    assert_eq!(cmd(&mut nodes[3], &["CLUSTER", "FAILOVER"]), "+OK");
    for n in nodes.iter_mut() {
        until("every node sees the real replica promoted", || {
            sees_failed_over(n, &new, Some(&old))
        });
    }
    assert_eq!(cmd(&mut nodes[3], &["GET", &key]), "kept");
    // The redlab old primary replicates the real node now.
    let port = nodes[3].port;
    until("the old primary follows the real node", || {
        let info = cmd(&mut nodes[0], &["INFO", "replication"]);
        info.contains(&format!("master_port:{port}")) && info.contains("master_link_status:up")
    });
}

#[test]
fn nofailover_shows_in_cluster_nodes_as_redis_server_shows_it() {
    let flag = ["--cluster-replica-no-failover", "yes"];
    let Some(mut real) = real_node_with(NODE_TIMEOUT, &flag) else {
        return;
    };
    let mut mine = redlab_node(&flag);
    // A lone node flags itself, primary or not, and drops the flag with the setting.
    for setting in ["yes", "no"] {
        let set = ["CONFIG", "SET", "cluster-replica-no-failover", setting];
        assert_eq!(cmd(&mut real, &set), "+OK");
        assert_eq!(cmd(&mut mine, &set), "+OK");
        let real_id = myid(&mut real);
        let want = flags_of(&line_of(&mut real, &real_id));
        assert_eq!(want.contains(&"nofailover".to_string()), setting == "yes");
        let my_id = myid(&mut mine);
        until("the redlab node flags itself as redis-server does", || {
            flags_of(&line_of(&mut mine, &my_id)) == want
        });
    }
    // A real replica's flag, on the wire (512), reaches redlab primaries, and so does the
    // flag's removal by CONFIG SET.
    assert_eq!(
        cmd(
            &mut real,
            &["CONFIG", "SET", "cluster-replica-no-failover", "yes"]
        ),
        "+OK"
    );
    let mut nodes = redlab_three();
    nodes.push(real);
    join_as_replica(&mut nodes);
    let replica = myid(&mut nodes[3]);
    for setting in ["yes", "no"] {
        let set = ["CONFIG", "SET", "cluster-replica-no-failover", setting];
        assert_eq!(cmd(&mut nodes[3], &set), "+OK");
        let want: &[&str] = if setting == "yes" {
            &["slave", "nofailover"]
        } else {
            &["slave"]
        };
        for n in nodes.iter_mut().take(3) {
            until(
                "the redlab primaries show the real replica's setting",
                || flags_of(&line_of(n, &replica)) == want,
            );
        }
    }
}

#[test]
fn a_replica_migrates_to_a_primary_left_without_replicas() {
    // Three primaries; nodes 3 and 4 replicate node 0, node 5 replicates node 1.
    let mut nodes = redlab_three();
    for _ in 0..3 {
        nodes.push(redlab_node(&[]));
    }
    join_replicas(&mut nodes, &[0, 0, 1]);
    let (first, second) = (myid(&mut nodes[0]), myid(&mut nodes[1]));
    // Node 1's only replica dies: node 1 is orphaned, and the replica of node 0 with the
    // smaller id moves to it (node 0 keeps one, the migration barrier).
    nodes[5].kill();
    let mut ids: Vec<(String, usize)> = [3, 4].map(|k| (myid(&mut nodes[k]), k)).into();
    ids.sort();
    let (mover, stayer) = (ids[0].clone(), ids[1].clone());
    let port = nodes[1].port;
    until("the replica with the smaller id follows node 1", || {
        let n = &mut nodes[mover.1];
        replicates(&line_of(n, &mover.0), &second)
            && cmd(n, &["INFO", "replication"]).contains(&format!("master_port:{port}"))
    });
    until("node 1 lists its new replica", || {
        replicates(&line_of(&mut nodes[1], &mover.0), &second)
    });
    assert!(replicates(
        &line_of(&mut nodes[stayer.1], &stayer.0),
        &first
    ));
}
