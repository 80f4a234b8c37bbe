//! REDLAB.CLUSTER: the controls of `Cluster` (control.rs) over the wire, so a test in any
//! language can hold a slot migration open, finish it, fail a primary over with or without
//! losing writes, and mark a node failed:
//!
//! - `BEGIN slot node-id`: the slot's owner marks it MIGRATING to `node-id`, which marks it
//!   IMPORTING; clients get ASK for the slot's keys that have left the owner;
//! - `MOVEKEYS slot count`: up to `count` of the slot's keys move to the importing node, the
//!   window stays open (answers how many moved);
//! - `FINISH slot`: the remaining keys move and the importing node owns the slot; clients
//!   get MOVED from the old owner;
//! - `FAIL node-id` / `RECOVER node-id`: the node is flagged failed (partitioned from the
//!   others) and the cluster is down while it owns slots, then back;
//! - `FAILOVER [LOSING]`: this replica takes its primary's slots; with LOSING at once,
//!   dropping what its link held back (answers how many commands were lost), without it
//!   only once it has applied everything its primary wrote. The old primary follows it.
//!
//! Every node of an in-process cluster shares one topology, so any node answers BEGIN,
//! FAIL and RECOVER. MOVEKEYS and FINISH go to the slot's owner and FAILOVER to the replica:
//! a node's handler reaches the other nodes over their sockets, and must never wait on its
//! own thread. The keys a migration removes from the owner are not sent to the owner's
//! replicas as DEL.

use super::topology::lock;
use super::wire::{Conn, Resp};
use crate::cmd::table::CmdResult;
use crate::db::rdb;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn slot_arg(a: &[u8]) -> Result<u16, Reply> {
    match crate::cmd::args::int(a) {
        Ok(n) if (0..16384).contains(&n) => Ok(n as u16),
        _ => Err(Reply::err(errors::INVALID_OR_OUT_OF_RANGE_SLOT)),
    }
}

/// REDLAB.CLUSTER BEGIN | MOVEKEYS | FINISH | FAIL | RECOVER | FAILOVER (see the module).
pub(crate) fn redlab_cluster(e: &mut Engine, call: &mut Call) -> CmdResult {
    if e.cluster.is_none() {
        return Err(Reply::err(errors::CLUSTER_DISABLED));
    }
    let sub = call.arg(1).to_ascii_lowercase();
    match (sub.as_slice(), call.argc()) {
        (b"begin", 4) => {
            let slot = slot_arg(call.arg(2))?;
            let to = String::from_utf8_lossy(call.arg(3)).into_owned();
            begin(e, slot, &to)
        }
        (b"movekeys", 4) => {
            let slot = slot_arg(call.arg(2))?;
            let max = crate::cmd::args::int(call.arg(3))?.max(0) as usize;
            move_keys(e, slot, max).map(|n| Reply::Int(n as i64))
        }
        (b"finish", 3) => {
            let slot = slot_arg(call.arg(2))?;
            finish(e, slot)
        }
        (b"fail", 3) | (b"recover", 3) => {
            let failed = sub.as_slice() == b"fail";
            let id = String::from_utf8_lossy(call.arg(2)).into_owned();
            let shared = e.cluster.as_ref().map(|n| n.shared.clone());
            let Some(shared) = shared else {
                return Err(Reply::err(errors::CLUSTER_DISABLED));
            };
            let mut t = lock(&shared);
            let Some(i) = t.index_of(&id) else {
                return Err(Reply::err(errors::dont_know_node(&id)));
            };
            t.nodes_mut()[i].failed = failed;
            Ok(Reply::ok())
        }
        (b"failover", 2) => failover(e, false),
        (b"failover", 3) if call.arg(2).eq_ignore_ascii_case(b"losing") => failover(e, true),
        _ => Err(Reply::err(errors::SYNTAX)),
    }
}

fn begin(e: &mut Engine, slot: u16, to: &str) -> CmdResult {
    let Some(node) = e.cluster.as_ref() else {
        return Err(Reply::err(errors::CLUSTER_DISABLED));
    };
    let mut t = lock(&node.shared);
    let from = t
        .owner_index(slot)
        .ok_or_else(|| Reply::err(errors::REDLAB_CLUSTER_SLOT_HAS_NO_OWNER))?;
    let ti = t
        .index_of(to)
        .ok_or_else(|| Reply::err(errors::dont_know_node(to)))?;
    if ti == from {
        return Err(Reply::err(errors::already_slot_owner(slot)));
    }
    if !t.nodes()[ti].is_primary() {
        return Err(Reply::err(errors::TARGET_NODE_IS_NOT_A_MASTER));
    }
    let from_id = t.nodes()[from].id.clone();
    t.nodes_mut()[from].migrating.insert(slot, to.to_string());
    t.nodes_mut()[ti].importing.insert(slot, from_id);
    Ok(Reply::ok())
}

/// The open migration of `slot` out of this node: the importing node's address.
fn target_of(e: &Engine, slot: u16) -> Result<(String, u16), Reply> {
    let Some(node) = e.cluster.as_ref() else {
        return Err(Reply::err(errors::CLUSTER_DISABLED));
    };
    let t = lock(&node.shared);
    let owner = t
        .owner(slot)
        .ok_or_else(|| Reply::err(errors::REDLAB_CLUSTER_SLOT_HAS_NO_OWNER))?;
    if owner.id != node.me {
        return Err(Reply::err(errors::REDLAB_CLUSTER_SEND_TO_OWNER));
    }
    let to = owner
        .migrating
        .get(&slot)
        .ok_or_else(|| Reply::err(errors::REDLAB_CLUSTER_NOT_MIGRATING))?;
    let n = t
        .node(to)
        .ok_or_else(|| Reply::err(errors::dont_know_node(to)))?;
    Ok((n.host.clone(), n.port))
}

/// A connection to another node, authenticated as this one expects its clients to be.
fn peer(e: &Engine, host: &str, port: u16) -> Result<Conn, Reply> {
    let fail = |err: std::io::Error| Reply::err(errors::redlab_cluster_peer(&err.to_string()));
    let addr = format!("{host}:{port}")
        .parse()
        .map_err(|_| Reply::err(errors::redlab_cluster_peer(host)))?;
    let mut c = Conn::connect(addr).map_err(fail)?;
    if let Some(pw) = e
        .config
        .get_by_name("requirepass")
        .filter(|p| !p.is_empty())
    {
        c.ok(&[b"AUTH", pw.as_bytes()]).map_err(fail)?;
    }
    Ok(c)
}

/// Moves up to `max` of the slot's keys (in key order) to the importing node: DUMP here,
/// RESTORE-ASKING there, then DEL here, as MIGRATE does.
fn move_keys(e: &mut Engine, slot: u16, max: usize) -> Result<usize, Reply> {
    let (host, port) = target_of(e, slot)?;
    let mut keys = super::commands::keys_in_slot(e, slot);
    keys.truncate(max);
    if keys.is_empty() {
        return Ok(0);
    }
    let mut c = peer(e, &host, port)?;
    let limits = e.encoding_limits();
    let now = e.now_ms;
    let mut moved = 0;
    for key in keys {
        let Some((payload, ttl)) = e.db(0).get(&key).map(|en| {
            let ttl = en.expire_at().map_or(0, |t| (t - now).max(1));
            (rdb::dump(&en.value, &limits), ttl)
        }) else {
            continue;
        };
        let ttl = ttl.to_string();
        let args: [&[u8]; 5] = [
            b"RESTORE-ASKING",
            &key,
            ttl.as_bytes(),
            &payload,
            b"REPLACE",
        ];
        match c.call(&args) {
            Ok(Resp::Error(text)) => return Err(Reply::err(errors::redlab_cluster_peer(&text))),
            Err(err) => return Err(Reply::err(errors::redlab_cluster_peer(&err.to_string()))),
            Ok(_) => {}
        }
        if e.db(0).remove(&key).is_some() {
            e.modified(0, &key, crate::notify::GENERIC, "del");
        }
        moved += 1;
    }
    Ok(moved)
}

fn finish(e: &mut Engine, slot: u16) -> CmdResult {
    target_of(e, slot)?;
    while move_keys(e, slot, 1000)? > 0 {}
    let Some(node) = e.cluster.as_ref() else {
        return Err(Reply::err(errors::CLUSTER_DISABLED));
    };
    let mut t = lock(&node.shared);
    let fi = t
        .index_of(&node.me)
        .ok_or_else(|| Reply::err(errors::THIS_NODE_WAS_FORGOTTEN_BY_ITS))?;
    let to = t.nodes_mut()[fi]
        .migrating
        .remove(&slot)
        .ok_or_else(|| Reply::err(errors::REDLAB_CLUSTER_NOT_MIGRATING))?;
    let ti = t
        .index_of(&to)
        .ok_or_else(|| Reply::err(errors::dont_know_node(&to)))?;
    t.set_owner(slot, Some(ti));
    t.nodes_mut()[ti].importing.remove(&slot);
    t.current_epoch += 1;
    let epoch = t.current_epoch;
    t.nodes_mut()[ti].config_epoch = epoch;
    Ok(Reply::ok())
}

/// master_repl_offset in an INFO replication text.
fn offset_in(text: &[u8]) -> i64 {
    String::from_utf8_lossy(text)
        .lines()
        .find_map(|l| l.strip_prefix("master_repl_offset:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn failover(e: &mut Engine, losing: bool) -> CmdResult {
    let Some(node) = e.cluster.as_ref() else {
        return Err(Reply::err(errors::CLUSTER_DISABLED));
    };
    let shared = node.shared.clone();
    let me_id = node.me.clone();
    let (primary, me) = {
        let t = lock(&shared);
        let me = t
            .index_of(&me_id)
            .ok_or_else(|| Reply::err(errors::THIS_NODE_WAS_FORGOTTEN_BY_ITS))?;
        let of = t.nodes()[me]
            .replica_of
            .clone()
            .ok_or_else(|| Reply::err(errors::REDLAB_CLUSTER_NOT_A_REPLICA))?;
        let p = t
            .node(&of)
            .ok_or_else(|| Reply::err(errors::dont_know_node(&of)))?;
        ((p.host.clone(), p.port), t.nodes()[me].clone())
    };
    let mut old = peer(e, &primary.0, primary.1)?;
    if !losing {
        let theirs = match old.call(&[b"INFO", b"replication"]) {
            Ok(Resp::Bulk(Some(text))) => offset_in(&text),
            Ok(other) => {
                return Err(Reply::err(errors::redlab_cluster_peer(&format!(
                    "{other:?}"
                ))))
            }
            Err(err) => return Err(Reply::err(errors::redlab_cluster_peer(&err.to_string()))),
        };
        let linked = e
            .repl
            .following
            .as_ref()
            .is_some_and(|f| f.state == "connected");
        if !linked || !e.repl.faults.held.is_empty() || e.repl.master_offset() < theirs {
            return Err(Reply::err(errors::REDLAB_CLUSTER_BEHIND));
        }
    }
    {
        let mut t = lock(&shared);
        let i = t
            .index_of(&me.id)
            .ok_or_else(|| Reply::err(errors::THIS_NODE_WAS_FORGOTTEN_BY_ITS))?;
        t.promote(i)
            .ok_or_else(|| Reply::err(errors::REDLAB_CLUSTER_NOT_A_REPLICA))?;
    }
    let lost = e.promote_replica();
    let port = me.port.to_string();
    let follow: [&[u8]; 4] = [
        b"REDLAB.REPL",
        b"FOLLOW",
        me.host.as_bytes(),
        port.as_bytes(),
    ];
    match old.call(&follow) {
        Ok(Resp::Error(text)) => return Err(Reply::err(errors::redlab_cluster_peer(&text))),
        Err(err) => return Err(Reply::err(errors::redlab_cluster_peer(&err.to_string()))),
        Ok(_) => {}
    }
    Ok(Reply::Int(lost as i64))
}
