//! The cluster described the way Redis 7.0.15 describes it: CLUSTER NODES lines, the CLUSTER
//! SLOTS and CLUSTER SHARDS replies, CLUSTER INFO's fields.

use bytes::Bytes;

use super::bus::msg::TYPE_NAMES;
use super::slot::SLOTS;
use super::topology::{Node, Topology};
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

/// One CLUSTER NODES line (with its newline) for node `idx`, seen from node `me`.
fn node_line(topo: &Topology, idx: usize, me: usize, now_ms: i64) -> String {
    let n = &topo.nodes()[idx];
    let on_bus = topo.bus.is_some();
    // Redis's representClusterNodeFlags, in its order.
    let mut flags = Vec::new();
    if idx == me {
        flags.push("myself");
    }
    if !n.bus.handshake {
        flags.push(if n.is_primary() { "master" } else { "slave" });
    }
    if n.bus.pfail {
        flags.push("fail?");
    }
    if n.failed && idx != me {
        flags.push("fail");
    }
    if n.bus.handshake {
        flags.push("handshake");
    }
    if n.bus.noaddr {
        flags.push("noaddr");
    }
    if topo.no_failover(idx) {
        flags.push("nofailover");
    }
    if flags.is_empty() {
        flags.push("noflags");
    }
    let primary = n.replica_of.as_deref().unwrap_or("-");
    // Myself is never pinged. On a bus the times are the bus's; in one process the others
    // answered the last ping "now".
    let (ping, pong) = match (idx == me, on_bus) {
        (true, _) => (0, 0),
        (false, true) => (n.bus.ping_sent, n.bus.pong_received),
        (false, false) => (0, now_ms),
    };
    let up = match (idx == me, on_bus) {
        (true, _) => true,
        (false, true) => n.bus.link,
        (false, false) => !n.failed,
    };
    let link = if up { "connected" } else { "disconnected" };
    let mut line = format!(
        "{} {}:{}@{} {} {} {} {} {} {}",
        n.id,
        n.host,
        n.port,
        n.cport,
        flags.join(","),
        primary,
        ping,
        pong,
        n.config_epoch,
        link
    );
    for (start, end) in topo.ranges_of(idx) {
        if start == end {
            line.push_str(&format!(" {start}"));
        } else {
            line.push_str(&format!(" {start}-{end}"));
        }
    }
    if idx == me {
        for (slot, to) in &n.migrating {
            line.push_str(&format!(" [{slot}->-{to}]"));
        }
        for (slot, from) in &n.importing {
            line.push_str(&format!(" [{slot}-<-{from}]"));
        }
    }
    line.push('\n');
    line
}

/// CLUSTER NODES: myself first, then the others in the order they joined.
pub fn nodes(topo: &Topology, me: usize, now_ms: i64) -> String {
    let mut out = node_line(topo, me, me, now_ms);
    for idx in (0..topo.nodes().len()).filter(|&i| i != me) {
        out.push_str(&node_line(topo, idx, me, now_ms));
    }
    out
}

/// The node entry of CLUSTER SLOTS: ip, port, id, and a (empty) map of extra endpoints.
fn slots_node(n: &Node) -> Reply {
    Reply::Array(vec![
        bulk(&n.host),
        Reply::Int(n.port as i64),
        bulk(&n.id),
        Reply::Map(Vec::new()),
    ])
}

/// CLUSTER SLOTS: one entry per run of slots with one owner, in slot order, the owner
/// first and then its replicas that have not failed.
pub fn slots(topo: &Topology) -> Reply {
    let mut out = Vec::new();
    for (start, end, owner) in topo.runs() {
        let mut entry = vec![
            Reply::Int(start as i64),
            Reply::Int(end as i64),
            slots_node(&topo.nodes()[owner]),
        ];
        for r in topo.replicas_of(owner) {
            if !topo.nodes()[r].failed {
                entry.push(slots_node(&topo.nodes()[r]));
            }
        }
        out.push(Reply::Array(entry));
    }
    Reply::Array(out)
}

fn shard_node(n: &Node, offset: i64) -> Reply {
    let s = |k: &str| bulk(k);
    let health = if n.failed { "fail" } else { "online" };
    Reply::Map(vec![
        (s("id"), bulk(&n.id)),
        (s("port"), Reply::Int(n.port as i64)),
        (s("ip"), bulk(&n.host)),
        (s("endpoint"), bulk(&n.host)),
        (
            s("role"),
            bulk(if n.is_primary() { "master" } else { "replica" }),
        ),
        (s("replication-offset"), Reply::Int(offset)),
        (s("health"), bulk(health)),
    ])
}

/// CLUSTER SHARDS: one entry per primary (with its replicas), its slots as start/end pairs.
pub fn shards(topo: &Topology, offsets: impl Fn(&Node) -> i64) -> Reply {
    let mut out = Vec::new();
    for (idx, n) in topo.nodes().iter().enumerate() {
        if !n.is_primary() {
            continue;
        }
        let mut slots = Vec::new();
        for (start, end) in topo.ranges_of(idx) {
            slots.push(Reply::Int(start as i64));
            slots.push(Reply::Int(end as i64));
        }
        let mut members = vec![shard_node(n, offsets(n))];
        for r in topo.replicas_of(idx) {
            let r = &topo.nodes()[r];
            members.push(shard_node(r, offsets(r)));
        }
        out.push(Reply::Map(vec![
            (bulk("slots"), Reply::Array(slots)),
            (bulk("nodes"), Reply::Array(members)),
        ]));
    }
    Reply::Array(out)
}

/// CLUSTER INFO's text. In one process no bus messages are exchanged, so the message
/// counters are 0; on a bus each type with messages gets its own line, as in Redis.
pub fn info(topo: &Topology, me: usize) -> String {
    let failed_slots = (0..SLOTS as u16)
        .filter(|&s| topo.owner(s).is_some_and(|n| n.failed))
        .count();
    let pfail_slots = (0..SLOTS as u16)
        .filter(|&s| topo.owner(s).is_some_and(|n| n.bus.pfail))
        .count();
    let assigned = topo.assigned();
    let state = if topo.is_ok() { "ok" } else { "fail" };
    let mut out = String::new();
    let mut f = |k: &str, v: String| {
        out.push_str(k);
        out.push(':');
        out.push_str(&v);
        out.push_str("\r\n");
    };
    f("cluster_state", state.into());
    f("cluster_slots_assigned", assigned.to_string());
    f(
        "cluster_slots_ok",
        (assigned - failed_slots - pfail_slots).to_string(),
    );
    f("cluster_slots_pfail", pfail_slots.to_string());
    f("cluster_slots_fail", failed_slots.to_string());
    f("cluster_known_nodes", topo.nodes().len().to_string());
    f("cluster_size", topo.size().to_string());
    f("cluster_current_epoch", topo.current_epoch.to_string());
    f(
        "cluster_my_epoch",
        topo.nodes()[me].config_epoch.to_string(),
    );
    let (sent, received) = match &topo.bus {
        Some(b) => (b.sent, b.received),
        None => Default::default(),
    };
    for (dir, counts) in [("sent", sent), ("received", received)] {
        for (name, n) in TYPE_NAMES.iter().zip(counts) {
            if n != 0 {
                f(
                    &format!("cluster_stats_messages_{name}_{dir}"),
                    n.to_string(),
                );
            }
        }
        f(
            &format!("cluster_stats_messages_{dir}"),
            counts.iter().sum::<u64>().to_string(),
        );
    }
    f("total_cluster_links_buffer_limit_exceeded", "0".into());
    out
}
