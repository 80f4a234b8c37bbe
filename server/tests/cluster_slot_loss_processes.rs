//! A primary that loses slots to a newer claim, between `redlab-server --cluster-enabled
//! yes` processes and, the same steps, between real redis-server processes: another
//! primary takes the slots (CLUSTER SETSLOT ... NODE, then BUMPEPOCH for a newer config
//! epoch) and its pings carry the claim. As Redis 7.0's clusterUpdateSlotsConfigWith:
//! - a primary that keeps other slots stays a primary and deletes the keys of the slots
//!   it lost (nothing else would: no resynchronisation follows);
//! - a primary left without slots becomes a replica of the taker, unless
//!   cluster-allow-replica-migration is off (the taker has slots of its own, so this was
//!   resharding, not a failover): then it stays an empty primary, and its keys there go.
//!
//! Every wait polls until the nodes agree, under a hang guard; nothing asserts how long.

mod support;

use support::cluster::*;

/// How a node of either kind starts: redlab-server or redis-server, with these arguments.
type Start = fn(&[&str]) -> Option<Node>;

fn redlab(extra: &[&str]) -> Option<Node> {
    Some(redlab_node(extra))
}

fn real(extra: &[&str]) -> Option<Node> {
    real_node_with(NODE_TIMEOUT, extra)
}

/// Node 1 takes `slots` from their owner: SETSLOT NODE for each, then a config epoch
/// above every other (BUMPEPOCH), so its pings win the slots everywhere.
fn take(nodes: &mut [Node], slots: impl Iterator<Item = u16>) {
    let taker = myid(&mut nodes[1]);
    for slot in slots {
        let set = ["CLUSTER", "SETSLOT", &slot.to_string(), "NODE", &taker];
        assert_eq!(cmd(&mut nodes[1], &set), "+OK");
    }
    let bumped = cmd(&mut nodes[1], &["CLUSTER", "BUMPEPOCH"]);
    assert!(
        bumped.starts_with("+BUMPED") || bumped.starts_with("+STILL"),
        "{bumped}"
    );
}

/// The slot's redirect on node 0, once it knows node 1 owns the slot.
fn wait_moved_to_1(nodes: &mut [Node], key: &str, slot: u16) {
    let moved = format!("-MOVED {slot} 127.0.0.1:{}", nodes[1].port);
    until("node 0 sends the slot's clients to node 1", || {
        cmd(&mut nodes[0], &["GET", key]) == moved
    });
}

fn count_in(n: &mut Node, slot: u16) -> String {
    cmd(n, &["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()])
}

/// What node 0 shows after losing one slot of its third: still a primary, the lost
/// slot's keys gone, the keys of the slots it kept still there.
fn lose_one_slot(start: Start) -> Option<(String, String, String, String)> {
    let mut nodes = three_primaries(|| start(&[]))?;
    let key = key_in_slot_range(&mut nodes[0], THIRDS[0].0, THIRDS[0].1);
    let slot = keyslot(&mut nodes[0], &key);
    let kept = (0..)
        .map(|i| format!("kept:{i}"))
        .find(|k| {
            let s = keyslot(&mut nodes[0], k);
            s != slot && (THIRDS[0].0..=THIRDS[0].1).contains(&s)
        })
        .expect("a key");
    assert_eq!(cmd(&mut nodes[0], &["SET", &key, "lost"]), "+OK");
    assert_eq!(cmd(&mut nodes[0], &["SET", &kept, "kept"]), "+OK");
    assert_eq!(count_in(&mut nodes[0], slot), ":1");
    take(&mut nodes, std::iter::once(slot));
    wait_moved_to_1(&mut nodes, &key, slot);
    until("node 0 deletes the keys of the slot it lost", || {
        count_in(&mut nodes[0], slot) == ":0"
    });
    let me = myid(&mut nodes[0]);
    let flags = flags_of(&line_of(&mut nodes[0], &me)).join(",");
    Some((
        flags,
        cmd(&mut nodes[0], &["GET", &kept]),
        cmd(&mut nodes[0], &["DBSIZE"]),
        cmd(&mut nodes[0], &["ROLE"])
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_string(),
    ))
}

#[test]
fn a_primary_that_loses_a_slot_deletes_its_keys_and_keeps_the_rest() {
    let mine = lose_one_slot(redlab).expect("redlab nodes start");
    assert_eq!(
        mine,
        (
            "myself,master".to_string(),
            "kept".to_string(),
            ":1".to_string(),
            "master".to_string()
        )
    );
    if let Some(real) = lose_one_slot(real) {
        assert_eq!(mine, real);
    }
}

/// Node 0 owns ten slots, nodes 1 and 2 the rest; node 1 takes node 0's ten. What node
/// 0's own CLUSTER NODES line says then (flags, and whose replica), and how many keys it
/// has in the lost slot, once it has settled.
fn lose_every_slot(start: Start, allow: &str) -> Option<(String, bool, String)> {
    let extra = ["--cluster-allow-replica-migration", allow];
    let ranges: [(u16, u16); 3] = [(0, 9), (10, 8191), (8192, 16383)];
    let mut nodes = primaries(|| start(&extra), &ranges)?;
    let key = key_in_slot_range(&mut nodes[0], 0, 9);
    let slot = keyslot(&mut nodes[0], &key);
    assert_eq!(cmd(&mut nodes[0], &["SET", &key, "v"]), "+OK");
    let (me, taker) = (myid(&mut nodes[0]), myid(&mut nodes[1]));
    take(&mut nodes, 0..10);
    let follows = allow == "yes";
    until("node 0 settles as Redis decides", || {
        let line = line_of(&mut nodes[0], &me);
        let role_ok = if follows {
            replicates(&line, &taker)
                && cmd(&mut nodes[0], &["INFO", "replication"]).contains("master_link_status:up")
        } else {
            flags_of(&line) == ["myself", "master"]
        };
        role_ok && count_in(&mut nodes[0], slot) == ":0"
    });
    let line = line_of(&mut nodes[0], &me);
    Some((
        flags_of(&line).join(","),
        replicates(&line, &taker),
        count_in(&mut nodes[0], slot),
    ))
}

#[test]
fn a_primary_left_without_slots_follows_the_taker_when_replica_migration_is_allowed() {
    let mine = lose_every_slot(redlab, "yes").expect("redlab nodes start");
    assert_eq!(mine, ("myself,slave".to_string(), true, ":0".to_string()));
    if let Some(real) = lose_every_slot(real, "yes") {
        assert_eq!(mine, real);
    }
}

#[test]
fn without_replica_migration_a_primary_left_without_slots_stays_an_empty_primary() {
    let mine = lose_every_slot(redlab, "no").expect("redlab nodes start");
    assert_eq!(mine, ("myself,master".to_string(), false, ":0".to_string()));
    if let Some(real) = lose_every_slot(real, "no") {
        assert_eq!(mine, real);
    }
}
