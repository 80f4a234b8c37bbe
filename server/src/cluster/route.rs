//! Which node serves a command: Redis's getNodeByQuery, the decision behind every MOVED,
//! ASK, TRYAGAIN, CROSSSLOT and CLUSTERDOWN a cluster node answers.
//!
//! The keys come from the command table's key specs (`keyspec::find`), so whatever COMMAND
//! GETKEYS, WATCH and ACL see as keys is what routing sees. Shard channels (SPUBLISH,
//! SSUBSCRIBE, SUNSUBSCRIBE) count as keys here, as in Redis, though their specs say not_key.

use crate::errors;
use bytes::Bytes;

use super::slot::key_slot;
use super::topology::Topology;
use crate::cmd::table::keyspec::KeyRef;
use crate::cmd::table::{flags, keyspec, Command};
use crate::engine::Engine;
use crate::reply::Reply;
use crate::session::ConnId;

/// Why a node does not serve a command itself, with Redis's reply for each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// The slot belongs to the node at `addr`.
    Moved { slot: u16, addr: String },
    /// The slot is being migrated and the key is not here: ask the node at `addr`.
    Ask { slot: u16, addr: String },
    /// The keys hash to different slots.
    CrossSlot,
    /// Some keys are here and some are not while the slot moves.
    TryAgain,
    /// The cluster is down.
    Down,
    /// The cluster is down and this command writes (cluster-allow-reads-when-down).
    DownReadOnly,
    /// The slot has no owner.
    Unbound,
}

impl Redirect {
    /// The error text Redis sends, without the leading `-`.
    pub fn text(&self) -> String {
        match self {
            Redirect::Moved { slot, addr } => errors::moved(*slot, addr),
            Redirect::Ask { slot, addr } => errors::ask(*slot, addr),
            Redirect::CrossSlot => errors::CROSSSLOT.into(),
            Redirect::TryAgain => errors::TRYAGAIN.into(),
            Redirect::Down => errors::CLUSTERDOWN.into(),
            Redirect::DownReadOnly => errors::CLUSTERDOWN_READ_ONLY.into(),
            Redirect::Unbound => errors::CLUSTERDOWN_UNBOUND.into(),
        }
    }

    pub fn reply(&self) -> Reply {
        Reply::Error(self.text())
    }
}

/// What the connection brings to the decision.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnFlags {
    /// ASKING was sent (for this command, or the open transaction).
    pub asking: bool,
    /// READONLY: reads may be served by a replica of the slot's primary.
    pub readonly: bool,
    /// cluster-allow-reads-when-down: while the cluster is down, reads are still served
    /// and writes get the read-only CLUSTERDOWN (filled in by `decide` from the config).
    pub reads_when_down: bool,
}

/// The shard channels of a shard pub/sub command, which Redis routes like keys, into
/// `out` (cleared first); false for any other command.
fn shard_channels_into(cmd: &Command, args: &[Bytes], out: &mut Vec<KeyRef>) -> bool {
    let channels = match cmd.name {
        "spublish" => 1..2,
        "ssubscribe" | "sunsubscribe" => 1..args.len(),
        _ => return false,
    };
    out.clear();
    out.extend(channels.map(|pos| KeyRef { pos, flags: 0 }));
    true
}

fn is_shard_channel_command(cmd: &Command) -> bool {
    matches!(cmd.name, "spublish" | "ssubscribe" | "sunsubscribe")
}

/// The key positions the routing decision looks at, into `out` (cleared first); true when
/// they are shard channels.
pub fn routed_keys_into(cmd: &Command, args: &[Bytes], out: &mut Vec<KeyRef>) -> bool {
    if shard_channels_into(cmd, args, out) {
        return true;
    }
    keyspec::find_into(cmd, args, out);
    false
}

/// Whether the command can have keys at all; commands that cannot are never redirected.
pub fn may_have_keys(cmd: &Command) -> bool {
    keyspec::has_keys(cmd)
}

/// Decides for `commands` (one command, or the queued commands of an EXEC) on this node.
/// Ok(Some(slot)) when served here and keys were named; Ok(None) when no key was named.
///
/// Every command a cluster node serves comes through here, so the common path allocates
/// nothing and takes no lock: it reads the node's own copy of the topology (refreshed after
/// a change, `topology::View`), the engine's fields are borrowed apart, this node's index
/// comes from a hint, and the key positions go into a list the node keeps.
pub fn decide(
    e: &mut Engine,
    commands: &[(&'static Command, &[Bytes])],
    mut conn: ConnFlags,
) -> Result<Option<u16>, Redirect> {
    let now = e.now_ms;
    let Engine {
        cluster,
        config,
        dbs,
        ..
    } = e;
    let Some(node) = cluster.as_mut() else {
        return Ok(None);
    };
    let mut keys = std::mem::take(&mut node.key_scratch);
    node.view.refresh(&node.shared);
    let topo = node.view.topology();
    // Read only when it matters: the cluster is down.
    conn.reads_when_down = !topo.is_ok()
        && config
            .get_by_name("cluster-allow-reads-when-down")
            .is_some_and(|v| v == "yes");
    let decided = match node.my_index(topo) {
        // Forgotten by the cluster (CLUSTER RESET elsewhere): serve as a lone node would.
        None => Ok(None),
        Some(me) => {
            let db = &mut dbs[0];
            db.now = now;
            let db = &*db;
            decide_in(topo, me, commands, conn, &mut keys, |key| {
                db.get_shared(key).is_some()
            })
        }
    };
    node.key_scratch = keys;
    decided
}

/// `decide` with the topology locked and the key lookup given.
/// `keys` is room for each command's key positions (its contents on entry do not matter).
pub fn decide_in(
    topo: &Topology,
    me: usize,
    commands: &[(&'static Command, &[Bytes])],
    conn: ConnFlags,
    keys: &mut Vec<KeyRef>,
    exists: impl Fn(&[u8]) -> bool,
) -> Result<Option<u16>, Redirect> {
    let myself = &topo.nodes()[me];
    let mut first: Option<(&[u8], u16, Option<usize>)> = None;
    let (mut migrating, mut importing, mut multiple_keys) = (false, false, false);
    let (mut missing, mut existing) = (0usize, 0usize);
    let mut shard_pubsub = false;
    let mut any_write = false;
    let mut migrate_cmd = false;
    let mut asking_cmd = false;
    for &(cmd, args) in commands {
        any_write |= cmd.has(flags::WRITE);
        migrate_cmd |= cmd.name == "migrate";
        asking_cmd |= cmd.name == "restore-asking";
        let channels = routed_keys_into(cmd, args, keys);
        shard_pubsub |= channels;
        for k in keys.iter() {
            let Some(key) = args.get(k.pos) else { continue };
            let key: &[u8] = key;
            let slot = key_slot(key);
            match first {
                None => {
                    let owner = topo.owner_index(slot);
                    let Some(owner) = owner else {
                        return Err(Redirect::Unbound);
                    };
                    migrating = owner == me && myself.migrating.contains_key(&slot);
                    importing = myself.importing.contains_key(&slot);
                    first = Some((key, slot, Some(owner)));
                }
                Some((k, s, _)) => {
                    if k != key {
                        if s != slot {
                            return Err(Redirect::CrossSlot);
                        }
                        multiple_keys = true;
                    }
                }
            }
            if (migrating || importing) && !channels && !exists(key) {
                missing += 1;
            } else {
                existing += 1;
            }
        }
    }
    let Some((_, slot, Some(owner))) = first else {
        return Ok(None);
    };
    if !topo.is_ok() && !shard_pubsub {
        // cluster-allow-reads-when-down is off by default: everything is refused. With it
        // on, a write (any write of a transaction) gets the read-only refusal and a read
        // goes on to the usual checks.
        if !conn.reads_when_down {
            return Err(Redirect::Down);
        }
        if any_write {
            return Err(Redirect::DownReadOnly);
        }
    }
    if (migrating || importing) && migrate_cmd {
        return Ok(Some(slot));
    }
    if migrating && missing > 0 {
        if existing > 0 {
            return Err(Redirect::TryAgain);
        }
        let to = &myself.migrating[&slot];
        return match topo.node(to) {
            Some(n) => Err(Redirect::Ask {
                slot,
                addr: n.addr(),
            }),
            None => Err(Redirect::Unbound),
        };
    }
    if importing && (conn.asking || asking_cmd) {
        if multiple_keys && missing > 0 {
            return Err(Redirect::TryAgain);
        }
        return Ok(Some(slot));
    }
    let owner_node = &topo.nodes()[owner];
    // A replica serves its primary's slots to READONLY connections (and shard pub/sub).
    if (conn.readonly || shard_pubsub)
        && !any_write
        && myself.replica_of.as_deref() == Some(owner_node.id.as_str())
    {
        return Ok(Some(slot));
    }
    if owner != me {
        return Err(Redirect::Moved {
            slot,
            addr: owner_node.addr(),
        });
    }
    Ok(Some(slot))
}

/// The dispatcher's check for a command about to run on connection `conn`: Ok(slot) or the
/// redirect to answer. EXEC is checked over its queued commands.
pub fn check_command(
    e: &mut Engine,
    conn: ConnId,
    cmd: &'static Command,
    args: &[Bytes],
) -> Result<Option<u16>, Redirect> {
    let Some(node) = e.cluster.as_ref() else {
        return Ok(None);
    };
    let flags = node.conn_flags(conn);
    if cmd.name == "exec" {
        let queued: Vec<Vec<Bytes>> = match e.sessions.get(&conn).and_then(|s| s.multi.as_ref()) {
            Some(m) => m.queue.clone(),
            None => return Ok(None),
        };
        let resolved: Vec<(&'static Command, &[Bytes])> = queued
            .iter()
            .filter_map(|a| crate::cmd::table::resolve(a).ok().map(|(c, _)| (c, &a[..])))
            .collect();
        return decide(e, &resolved, flags);
    }
    if !is_shard_channel_command(cmd) && !may_have_keys(cmd) {
        return Ok(None);
    }
    decide(e, &[(cmd, args)], flags)
}
