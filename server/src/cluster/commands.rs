//! CLUSTER and its subcommands, ASKING, READONLY and READWRITE, with a Redis 7.0.15 cluster
//! node's replies and error texts. On a server without cluster support each answers
//! "This instance has cluster support disabled", as Redis does.

use bytes::Bytes;

use super::describe;
use super::slot::{key_slot, SLOTS};
use super::topology::{lock, Topology};
use super::NodeState;
use crate::cmd::args;
use crate::cmd::table::flags::*;
use crate::cmd::table::{CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// This node's cluster state, or Redis's answer when cluster support is off.
fn node(e: &Engine) -> Result<&NodeState, Reply> {
    e.cluster
        .as_ref()
        .ok_or_else(|| Reply::err(errors::CLUSTER_DISABLED))
}

/// Locks the topology and finds this node in it; a node forgotten by the others (CLUSTER
/// FORGET elsewhere) has fallen out and answers as a node that knows no cluster.
fn with_topology<T>(
    e: &Engine,
    f: impl FnOnce(&mut Topology, usize) -> Result<T, Reply>,
) -> Result<T, Reply> {
    let n = node(e)?;
    let mut topo = lock(&n.shared);
    let me = topo
        .index_of(&n.me)
        .ok_or_else(|| Reply::err(errors::THIS_NODE_WAS_FORGOTTEN_BY_ITS))?;
    f(&mut topo, me)
}

/// Whether this node keeps its own view on a cluster bus (a `--cluster-enabled yes`
/// process) rather than sharing one with an in-process `Cluster`.
fn on_bus(e: &Engine) -> bool {
    e.cluster
        .as_ref()
        .is_some_and(|n| lock(&n.shared).bus.is_some())
}

fn bulk(s: impl AsRef<[u8]>) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_ref()))
}

/// Redis's getSlotOrReply.
pub(super) fn slot_arg(arg: &[u8]) -> Result<u16, Reply> {
    match crate::numfmt::parse_i64(arg) {
        Some(s) if (0..SLOTS as i64).contains(&s) => Ok(s as u16),
        _ => Err(Reply::err(errors::INVALID_OR_OUT_OF_RANGE_SLOT)),
    }
}

fn unknown_node(id: &[u8]) -> Reply {
    Reply::err(errors::unknown_node(id))
}

fn ok() -> CmdResult {
    Ok(Reply::ok())
}

/// Keys of database 0 in `slot`, sorted (Redis lists them in its slot index's order).
pub(crate) fn keys_in_slot(e: &mut Engine, slot: u16) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = e
        .db(0)
        .keys()
        .filter(|k| key_slot(k) == slot)
        .map(|k| k.to_vec())
        .collect();
    keys.sort();
    keys
}

fn slots(e: &mut Engine, _call: &mut Call) -> CmdResult {
    with_topology(e, |t, _| Ok(describe::slots(t)))
}

fn shards(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let offset = e.dirty as i64;
    with_topology(e, |t, _| Ok(describe::shards(t, |_| offset)))
}

fn nodes(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let text = with_topology(e, |t, me| Ok(describe::nodes(t, me, now)))?;
    Ok(Reply::Verbatim("txt", Bytes::from(text)))
}

fn info(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let text = with_topology(e, |t, me| Ok(describe::info(t, me)))?;
    Ok(Reply::Verbatim("txt", Bytes::from(text)))
}

fn myid(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(bulk(&node(e)?.me))
}

fn keyslot(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    Ok(Reply::Int(key_slot(call.arg(2)) as i64))
}

fn countkeysinslot(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let slot = args::int(call.arg(2))?;
    if !(0..SLOTS as i64).contains(&slot) {
        return Err(Reply::err(errors::INVALID_SLOT));
    }
    Ok(Reply::Int(keys_in_slot(e, slot as u16).len() as i64))
}

fn getkeysinslot(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let slot = args::int(call.arg(2))?;
    let max = args::int(call.arg(3))?;
    if !(0..SLOTS as i64).contains(&slot) || max < 0 {
        return Err(Reply::err(errors::INVALID_SLOT_OR_NUMBER_OF_KEYS));
    }
    let keys = keys_in_slot(e, slot as u16);
    Ok(Reply::Array(
        keys.into_iter().take(max as usize).map(bulk).collect(),
    ))
}

/// Redis's checkSlotAssignmentsOrReply over [start, end], marking `seen`.
fn check_assignment(
    t: &Topology,
    seen: &mut [bool],
    del: bool,
    start: u16,
    end: u16,
) -> Result<(), Reply> {
    for slot in start..=end {
        let owned = t.owner(slot).is_some();
        if del && !owned {
            return Err(Reply::err(errors::slot_unassigned(slot)));
        }
        if !del && owned {
            return Err(Reply::err(errors::slot_busy(slot)));
        }
        if seen[slot as usize] {
            return Err(Reply::err(errors::slot_repeated(slot)));
        }
        seen[slot as usize] = true;
    }
    Ok(())
}

/// ADDSLOTS / DELSLOTS (single slots) and their RANGE forms.
fn change_slots(e: &mut Engine, call: &mut Call, del: bool, range: bool) -> CmdResult {
    node(e)?;
    let argv = &call.args[2..];
    let mut pairs = Vec::new();
    if range {
        if argv.len() % 2 == 1 {
            let name = if del {
                "cluster|delslotsrange"
            } else {
                "cluster|addslotsrange"
            };
            return Err(Reply::err(errors::wrong_arity(name)));
        }
        for p in argv.chunks(2) {
            let (start, end) = (slot_arg(&p[0])?, slot_arg(&p[1])?);
            if start > end {
                return Err(Reply::err(errors::slot_range_reversed(start, end)));
            }
            pairs.push((start, end));
        }
    } else {
        for a in argv {
            slot_arg(a)?;
        }
        for a in argv {
            let s = slot_arg(a)?;
            pairs.push((s, s));
        }
    }
    with_topology(e, |t, me| {
        let mut seen = vec![false; SLOTS];
        for &(start, end) in &pairs {
            check_assignment(t, &mut seen, del, start, end)?;
        }
        for &(start, end) in &pairs {
            for slot in start..=end {
                t.set_owner(slot, (!del).then_some(me));
                if !del {
                    t.nodes_mut()[me].importing.remove(&slot);
                }
            }
        }
        ok()
    })
}

fn addslots(e: &mut Engine, call: &mut Call) -> CmdResult {
    change_slots(e, call, false, false)
}

fn delslots(e: &mut Engine, call: &mut Call) -> CmdResult {
    change_slots(e, call, true, false)
}

fn addslotsrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    change_slots(e, call, false, true)
}

fn delslotsrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    change_slots(e, call, true, true)
}

fn flushslots(e: &mut Engine, _call: &mut Call) -> CmdResult {
    node(e)?;
    if !e.dbs[0].is_empty() {
        return Err(Reply::err(errors::DB_MUST_BE_EMPTY_TO_PERFORM));
    }
    with_topology(e, |t, me| {
        for slot in 0..SLOTS as u16 {
            if t.owner_index(slot) == Some(me) {
                t.set_owner(slot, None);
            }
        }
        ok()
    })
}

/// CLUSTER SETSLOT slot MIGRATING|IMPORTING|NODE id, or STABLE.
fn setslot(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    if !with_topology(e, |t, me| Ok(t.nodes()[me].is_primary()))? {
        return Err(Reply::err(errors::PLEASE_USE_SETSLOT_ONLY_WITH_MASTERS));
    }
    let slot = slot_arg(call.arg(2))?;
    let action = args::lower(call.arg(3));
    let argc = call.argc();
    let target = call.args.get(4).cloned().unwrap_or_default();
    let target_str = String::from_utf8_lossy(&target).into_owned();
    let keys_here = keys_in_slot(e, slot).len();
    with_topology(e, |t, me| match (action.as_str(), argc) {
        ("migrating", 5) => {
            if t.owner_index(slot) != Some(me) {
                return Err(Reply::err(errors::not_slot_owner(slot)));
            }
            let n = t
                .node(&target_str)
                .ok_or_else(|| Reply::err(errors::dont_know_node(&target_str)))?;
            if !n.is_primary() {
                return Err(Reply::err(errors::TARGET_NODE_IS_NOT_A_MASTER));
            }
            t.nodes_mut()[me].migrating.insert(slot, target_str.clone());
            ok()
        }
        ("importing", 5) => {
            if t.owner_index(slot) == Some(me) {
                return Err(Reply::err(errors::already_slot_owner(slot)));
            }
            let n = t
                .node(&target_str)
                .ok_or_else(|| Reply::err(errors::dont_know_node(&target_str)))?;
            if !n.is_primary() {
                return Err(Reply::err(errors::TARGET_NODE_IS_NOT_A_MASTER));
            }
            t.nodes_mut()[me].importing.insert(slot, target_str.clone());
            ok()
        }
        ("stable", 4) => {
            let mine = &mut t.nodes_mut()[me];
            mine.migrating.remove(&slot);
            mine.importing.remove(&slot);
            ok()
        }
        ("node", 5) => {
            let Some(n) = t.index_of(&target_str) else {
                return Err(unknown_node(&target));
            };
            if !t.nodes()[n].is_primary() {
                return Err(Reply::err(errors::TARGET_NODE_IS_NOT_A_MASTER));
            }
            if t.owner_index(slot) == Some(me) && n != me && keys_here != 0 {
                return Err(Reply::err(errors::slot_still_has_keys(slot)));
            }
            if keys_here == 0 {
                t.nodes_mut()[me].migrating.remove(&slot);
            }
            t.set_owner(slot, Some(n));
            if n == me && t.nodes_mut()[me].importing.remove(&slot).is_some() {
                let _ = t.bump_epoch_without_consensus(me);
            }
            ok()
        }
        _ => Err(Reply::err(errors::INVALID_CLUSTER_SETSLOT_ACTION_OR_NUMBER)),
    })
}

fn replicate(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let id = call.arg(2).to_vec();
    let id_str = String::from_utf8_lossy(&id).into_owned();
    let has_keys = !e.dbs[0].is_empty();
    let bus = on_bus(e);
    let primary = with_topology(e, |t, me| {
        let Some(p) = t.index_of(&id_str) else {
            return Err(unknown_node(&id));
        };
        if p == me {
            return Err(Reply::err(errors::CAN_T_REPLICATE_MYSELF));
        }
        if !t.nodes()[p].is_primary() {
            return Err(Reply::err(errors::I_CAN_ONLY_REPLICATE_A_MASTER));
        }
        if t.nodes()[me].is_primary() && (t.owned_by(me) != 0 || has_keys) {
            return Err(Reply::err(errors::TO_SET_A_MASTER_THE_NODE));
        }
        t.make_replica(me, p);
        Ok((t.nodes()[p].host.clone(), t.nodes()[p].port))
    })?;
    // On a bus the primary is another process: replicate it over a replication link, as
    // Redis's clusterSetMaster does (an in-process `Cluster` links its replicas itself).
    if bus {
        let (host, port) = primary;
        crate::repl::commands::follow_if_new(e, &host, port);
    }
    ok()
}

fn failover(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let mut opt = String::new();
    if call.argc() == 3 {
        opt = args::lower(call.arg(2));
        if opt != "force" && opt != "takeover" {
            return Err(Reply::err(errors::SYNTAX));
        }
    } else if call.argc() > 3 {
        return Err(Reply::err(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(call.arg(1))
        )));
    }
    if on_bus(e) {
        // An election among processes (`bus::failover`); TAKEOVER makes this node a
        // primary at once, so it stops replicating now.
        let (force, takeover) = (opt == "force" || opt == "takeover", opt == "takeover");
        let now = super::bus::now_ms();
        let promoted = with_topology(e, |t, _| {
            super::bus::failover::manual(t, force, takeover, now).map_err(Reply::err)
        })?;
        if promoted {
            crate::repl::commands::promote(e);
        }
        return ok();
    }
    with_topology(e, |t, me| {
        if t.nodes()[me].is_primary() {
            return Err(Reply::err(errors::YOU_SHOULD_SEND_CLUSTER_FAILOVER_TO));
        }
        t.promote(me);
        ok()
    })
}

fn reset(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let hard = match call.args.get(2).map(|a| args::lower(a)) {
        None => false,
        Some(s) if s == "soft" => false,
        Some(s) if s == "hard" => true,
        Some(_) => return Err(Reply::err(errors::SYNTAX)),
    };
    let primary = with_topology(e, |t, me| Ok(t.nodes()[me].is_primary()))?;
    if primary && !e.dbs[0].is_empty() {
        return Err(Reply::err(errors::CLUSTER_RESET_CAN_T_BE_CALLED));
    }
    if on_bus(e) {
        return reset_on_bus(e, hard);
    }
    let node = e.cluster.as_mut().expect("checked above");
    let (host, port, old_id) = {
        let mut t = lock(&node.shared);
        let me = t.index_of(&node.me);
        let (host, port) = me
            .map(|i| (t.nodes()[i].host.clone(), t.nodes()[i].port))
            .unwrap_or_else(|| ("127.0.0.1".into(), e.config.port));
        if let Some(i) = me {
            t.remove(i);
        }
        (host, port, node.me.clone())
    };
    let shared = Topology::new_shared();
    let id = if hard { Topology::fresh_id() } else { old_id };
    lock(&shared).add_node(id.clone(), &host, port);
    node.shared = shared;
    node.me = id;
    ok()
}

/// CLUSTER RESET of a node on a bus: it forgets every other node (its own view is
/// emptied in place, the bus keeps serving it), stops replicating, and with HARD takes a
/// new id and epochs 0.
fn reset_on_bus(e: &mut Engine, hard: bool) -> CmdResult {
    crate::repl::commands::promote(e);
    let node = e.cluster.as_mut().expect("checked by the caller");
    let mut t = lock(&node.shared);
    let mut bus = t.bus.take().unwrap_or_default();
    let (host, port, cport, epochs) = match t.node(&node.me) {
        Some(n) => (
            n.host.clone(),
            n.port,
            n.cport,
            (t.current_epoch, n.config_epoch),
        ),
        None => (
            "127.0.0.1".into(),
            e.config.port,
            e.config.port.wrapping_add(10000),
            (0, 0),
        ),
    };
    let id = if hard {
        Topology::fresh_id()
    } else {
        node.me.clone()
    };
    *t = Topology::default();
    t.add_node(id.clone(), &host, port);
    let (current, mine) = if hard { (0, 0) } else { epochs };
    t.current_epoch = current;
    if let Some(n) = t.node_mut(&id) {
        n.cport = cport;
        n.config_epoch = mine;
    }
    bus.me = id.clone();
    bus.forgotten.clear();
    // Redis's clusterReset: no manual failover or election goes on; a hard reset also
    // forgets the last vote (its epochs start again from 0).
    let last_vote = if hard {
        0
    } else {
        bus.election.last_vote_epoch
    };
    bus.election = Default::default();
    bus.election.last_vote_epoch = last_vote;
    bus.outbox.clear();
    t.bus = Some(bus);
    let full = e
        .config
        .get_by_name("cluster-require-full-coverage")
        .is_none_or(|v| v != "no");
    t.set_require_full_coverage(full);
    drop(t);
    node.me = id;
    ok()
}

/// CLUSTER MEET ip port [cport] on a bus: Redis's checks and texts, then a handshake the
/// bus carries out (the reply does not wait for it, as in Redis).
fn meet_on_bus(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 5 {
        return Err(Reply::err(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(call.arg(1))
        )));
    }
    let port = args::int(call.arg(3)).map_err(|_| Reply::err(errors::meet_port(call.arg(3))))?;
    let cport = match call.args.get(4) {
        Some(a) => args::int(a).map_err(|_| Reply::err(errors::meet_bus_port(a)))?,
        None => port.saturating_add(10000),
    };
    let host = String::from_utf8_lossy(call.arg(2)).into_owned();
    let valid = (1..=65535).contains(&port) && (1..=65535).contains(&cport);
    let now = super::bus::now_ms();
    let started = valid
        && with_topology(e, |t, _| {
            Ok(super::bus::merge::start_handshake(
                t,
                &host,
                port as u16,
                cport as u16,
                now,
            ))
        })?;
    if started {
        ok()
    } else {
        Err(Reply::err(errors::meet_address(
            &host,
            &String::from_utf8_lossy(call.arg(3)),
        )))
    }
}

fn meet(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    if on_bus(e) {
        return meet_on_bus(e, call);
    }
    let host = String::from_utf8_lossy(call.arg(2)).into_owned();
    let port = args::int(call.arg(3));
    let port = match port {
        Ok(p) if (0..=65535).contains(&p) => p as u16,
        _ => return Err(Reply::err(errors::meet_port(call.arg(3)))),
    };
    with_topology(e, |t, _| {
        let known = t.nodes().iter().any(|n| n.port == port && n.host == host);
        if known {
            ok()
        } else {
            Err(Reply::err(errors::meet_unknown(&host, port)))
        }
    })
}

fn forget(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let id = call.arg(2).to_vec();
    let id_str = String::from_utf8_lossy(&id).into_owned();
    with_topology(e, |t, me| {
        let Some(n) = t.index_of(&id_str) else {
            return Err(unknown_node(&id));
        };
        if n == me {
            return Err(Reply::err(errors::I_TRIED_HARD_BUT_I_CAN));
        }
        if t.nodes()[me].replica_of.as_deref() == Some(id_str.as_str()) {
            return Err(Reply::err(errors::CAN_T_FORGET_MY_MASTER));
        }
        // On a bus, gossip would bring it straight back: it stays out for a minute.
        if let Some(b) = t.bus.as_mut() {
            let until = super::bus::now_ms() + super::bus::merge::FORGET_TTL_MS;
            b.forgotten.retain(|(f, _)| *f != id_str);
            b.forgotten.push((id_str.clone(), until));
        }
        t.remove(n);
        ok()
    })
}

fn count_failure_reports(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let id = call.arg(2).to_vec();
    with_topology(e, |t, _| {
        let Some(n) = t.node(&String::from_utf8_lossy(&id)) else {
            return Err(unknown_node(&id));
        };
        // Reports older than twice the node timeout no longer count, as in Redis.
        let valid = t.bus.as_ref().map_or(0, |b| {
            let now = super::bus::now_ms();
            n.bus
                .fail_reports
                .iter()
                .filter(|(_, at)| now - at <= b.node_timeout.saturating_mul(2))
                .count()
        });
        Ok(Reply::Int(valid as i64))
    })
}

fn replicas(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let id = call.arg(2).to_vec();
    let now = e.now_ms;
    with_topology(e, |t, me| {
        let Some(n) = t.index_of(&String::from_utf8_lossy(&id)) else {
            return Err(unknown_node(&id));
        };
        if !t.nodes()[n].is_primary() {
            return Err(Reply::err(errors::THE_SPECIFIED_NODE_IS_NOT_A));
        }
        let all = describe::nodes(t, me, now);
        let lines = t
            .replicas_of(n)
            .into_iter()
            .filter_map(|r| {
                let rid = &t.nodes()[r].id;
                all.lines().find(|l| l.starts_with(rid.as_str()))
            })
            .map(|l| bulk(format!("{l}\n")))
            .collect();
        Ok(Reply::Array(lines))
    })
}

fn links(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let started = e.started_ms;
    with_topology(e, |t, me| {
        let s = |k: &str| bulk(k);
        let mut out = Vec::new();
        for (i, n) in t.nodes().iter().enumerate() {
            let linked = if t.bus.is_some() {
                n.bus.link
            } else {
                !n.failed
            };
            if i == me || !linked {
                continue;
            }
            for (dir, events) in [("to", "rw"), ("from", "r")] {
                out.push(Reply::Map(vec![
                    (s("direction"), bulk(dir)),
                    (s("node"), bulk(&n.id)),
                    (s("create-time"), Reply::Int(started)),
                    (s("events"), bulk(events)),
                    (s("send-buffer-allocated"), Reply::Int(0)),
                    (s("send-buffer-used"), Reply::Int(0)),
                ]));
            }
        }
        Ok(Reply::Array(out))
    })
}

fn saveconfig(e: &mut Engine, _call: &mut Call) -> CmdResult {
    node(e)?;
    ok()
}

fn bumpepoch(e: &mut Engine, _call: &mut Call) -> CmdResult {
    with_topology(e, |t, me| {
        Ok(Reply::Status(match t.bump_epoch_without_consensus(me) {
            Ok(epoch) => format!("BUMPED {epoch}"),
            Err(mine) => format!("STILL {mine}"),
        }))
    })
}

fn set_config_epoch(e: &mut Engine, call: &mut Call) -> CmdResult {
    node(e)?;
    let epoch = args::int(call.arg(2))?;
    with_topology(e, |t, me| {
        if epoch < 0 {
            return Err(Reply::err(errors::config_epoch_invalid(epoch)));
        }
        if t.nodes().len() > 1 {
            return Err(Reply::err(errors::THE_USER_CAN_ASSIGN_A_CONFIG));
        }
        if t.nodes()[me].config_epoch != 0 {
            return Err(Reply::err(errors::NODE_CONFIG_EPOCH_IS_ALREADY_NON));
        }
        t.nodes_mut()[me].config_epoch = epoch as u64;
        t.current_epoch = t.current_epoch.max(epoch as u64);
        ok()
    })
}

/// Redis 7.0.15's text, line for line (cluster_processes.rs compares it with redis-server).
fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    node(e)?;
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "CLUSTER",
        &[
            "ADDSLOTS <slot> [<slot> ...]",
            "    Assign slots to current node.",
            "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
            "    Assign slots which are between <start-slot> and <end-slot> to current node.",
            "BUMPEPOCH",
            "    Advance the cluster config epoch.",
            "COUNT-FAILURE-REPORTS <node-id>",
            "    Return number of failure reports for <node-id>.",
            "COUNTKEYSINSLOT <slot>",
            "    Return the number of keys in <slot>.",
            "DELSLOTS <slot> [<slot> ...]",
            "    Delete slots information from current node.",
            "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
            "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
            "FAILOVER [FORCE|TAKEOVER]",
            "    Promote current replica node to being a master.",
            "FORGET <node-id>",
            "    Remove a node from the cluster.",
            "GETKEYSINSLOT <slot> <count>",
            "    Return key names stored by current node in a slot.",
            "FLUSHSLOTS",
            "    Delete current node own slots information.",
            "INFO",
            "    Return information about the cluster.",
            "KEYSLOT <key>",
            "    Return the hash slot for <key>.",
            "MEET <ip> <port> [<bus-port>]",
            "    Connect nodes into a working cluster.",
            "MYID",
            "    Return the node id.",
            "NODES",
            "    Return cluster configuration seen by node. Output format:",
            "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
            "REPLICATE <node-id>",
            "    Configure current node as replica to <node-id>.",
            "RESET [HARD|SOFT]",
            "    Reset current node (default: soft).",
            "SET-CONFIG-EPOCH <epoch>",
            "    Set config epoch of current node.",
            "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
            "    Set slot state.",
            "REPLICAS <node-id>",
            "    Return <node-id> replicas.",
            "SAVECONFIG",
            "    Force saving cluster configuration on disk.",
            "SLOTS",
            "    Return information about slots range mappings. Each range is made of:",
            "    start, end, master and replicas IP addresses, ports and ids",
            "SHARDS",
            "    Return information about slot range mappings and the nodes associated with them.",
            "LINKS",
            "    Return information about all network links between this node and its peers.",
            "    Output format is an array where each array element is a map containing attributes of a link",
        ],
    ))
}

pub(crate) fn asking(e: &mut Engine, call: &mut Call) -> CmdResult {
    let conn = call.conn;
    e.cluster
        .as_mut()
        .ok_or_else(|| Reply::err(errors::CLUSTER_DISABLED))?
        .set_asking(conn);
    ok()
}

/// Valkey 8 answers READONLY and READWRITE with OK on a standalone server (they change
/// nothing there); Redis 7.0 says cluster support is disabled.
fn standalone_read_flags_ok(e: &Engine) -> bool {
    e.profile().family() == crate::compat::Family::Valkey && e.profile().level() >= 80
}

pub(crate) fn readonly(e: &mut Engine, call: &mut Call) -> CmdResult {
    let conn = call.conn;
    if e.cluster.is_none() && standalone_read_flags_ok(e) {
        return ok();
    }
    e.cluster
        .as_mut()
        .ok_or_else(|| Reply::err(errors::CLUSTER_DISABLED))?
        .set_readonly(conn, true);
    ok()
}

pub(crate) fn readwrite(e: &mut Engine, call: &mut Call) -> CmdResult {
    let conn = call.conn;
    if e.cluster.is_none() && standalone_read_flags_ok(e) {
        return ok();
    }
    e.cluster
        .as_mut()
        .ok_or_else(|| Reply::err(errors::CLUSTER_DISABLED))?
        .set_readonly(conn, false);
    ok()
}

/// The handler of CLUSTER without a subcommand, which the arity check refuses first.
fn container(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    Err(Reply::err(errors::wrong_arity("cluster")))
}

const SUBCOMMANDS: &[Command] = &[
    Command::new("addslots", -3, ADMIN | STALE, "cluster", addslots),
    Command::new("addslotsrange", -4, ADMIN | STALE, "cluster", addslotsrange),
    Command::new("bumpepoch", 2, ADMIN | STALE, "cluster", bumpepoch),
    Command::new(
        "count-failure-reports",
        3,
        ADMIN | STALE,
        "cluster",
        count_failure_reports,
    ),
    Command::new("countkeysinslot", 3, STALE, "cluster", countkeysinslot),
    Command::new("delslots", -3, ADMIN | STALE, "cluster", delslots),
    Command::new("delslotsrange", -4, ADMIN | STALE, "cluster", delslotsrange),
    Command::new("failover", -2, ADMIN | STALE, "cluster", failover),
    Command::new("flushslots", 2, ADMIN | STALE, "cluster", flushslots),
    Command::new("forget", 3, ADMIN | STALE, "cluster", forget),
    Command::new("getkeysinslot", 4, STALE, "cluster", getkeysinslot),
    Command::new("help", 2, LOADING | STALE, "cluster", help),
    Command::new("info", 2, STALE, "cluster", info),
    Command::new("keyslot", 3, STALE, "cluster", keyslot),
    Command::new("links", 2, STALE, "cluster", links),
    Command::new("meet", -4, ADMIN | STALE, "cluster", meet),
    Command::new("myid", 2, STALE, "cluster", myid),
    Command::new("nodes", 2, STALE, "cluster", nodes),
    Command::new("replicas", 3, ADMIN | STALE, "cluster", replicas),
    Command::new("replicate", 3, ADMIN | STALE, "cluster", replicate),
    Command::new("reset", -2, ADMIN | NOSCRIPT | STALE, "cluster", reset),
    Command::new("saveconfig", 2, ADMIN | STALE, "cluster", saveconfig),
    Command::new(
        "set-config-epoch",
        3,
        ADMIN | STALE,
        "cluster",
        set_config_epoch,
    ),
    Command::new("setslot", -4, ADMIN | STALE, "cluster", setslot),
    Command::new("shards", 2, STALE, "cluster", shards),
    Command::new("slaves", 3, ADMIN | STALE, "cluster", replicas),
    Command::new(
        "slot-stats",
        -4,
        LOADING | STALE,
        "cluster",
        super::slot_stats::slot_stats,
    ),
    Command::new("slots", 2, STALE, "cluster", slots),
];

/// MIGRATE's keys as Redis's migrateGetKeys finds them: the key at 3, or every argument after
/// KEYS. The options before KEYS are walked with their values skipped (AUTH's password,
/// AUTH2's user and password), so a password spelled `keys` is not taken for the keyword; a
/// non-empty key at 3 together with KEYS names no key at all.
fn migrate_keys(args: &[Bytes]) -> Vec<usize> {
    let mut first = 3;
    let mut i = 6;
    while i < args.len() {
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"keys") {
            if !args[3].is_empty() {
                return Vec::new();
            }
            first = i + 1;
            break;
        }
        if a.eq_ignore_ascii_case(b"auth") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"auth2") {
            i += 2;
        }
        i += 1;
    }
    if first == 3 {
        return if args.len() > 3 { vec![3] } else { Vec::new() };
    }
    (first..args.len()).collect()
}

/// CLUSTER, ASKING, READONLY, READWRITE, MIGRATE and RESTORE-ASKING.
pub const COMMANDS: &[Command] = &[
    Command::new("migrate", -6, WRITE, "generic", super::migrate::migrate)
        .movable_keys(migrate_keys),
    Command::new(
        "restore-asking",
        -4,
        WRITE | DENYOOM,
        "server",
        super::migrate::restore_asking,
    )
    .keys(1, 1, 1),
    Command::new("cluster", -2, 0, "cluster", container).subcommands(SUBCOMMANDS),
    Command::new("asking", 1, FAST, "cluster", asking),
    Command::new("readonly", 1, FAST | LOADING | STALE, "cluster", readonly),
    Command::new("readwrite", 1, FAST | LOADING | STALE, "cluster", readwrite),
];
