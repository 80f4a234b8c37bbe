//! The engine's side of the bus, at each engine tick (every 10 ms): what the bus decided
//! that only the engine can carry out, and what the bus needs to know of the engine.
//!
//! The bus runs on its own thread and never touches the engine; the engine never waits
//! for the bus. They meet in the node's `Topology` (behind its lock), and this tick makes
//! the engine agree with it, as Redis's clusterCron makes replication agree with the
//! node's role:
//! - the role: a node the view calls a primary stops following (it was elected, or took
//!   over), a node the view calls the replica of another follows that node's address (it
//!   lost its slots to that node, or CLUSTER REPLICATE);
//! - the keys of the slots this primary lost to a newer claim without being demoted,
//!   deleted (Redis's delKeysInSlot for its dirty slots);
//! - the manual failover's write pause, on while this primary's manual failover runs;
//! - the report: the replication offset, how long a replica's link has been down, and for
//!   which manual failover writes are paused (the offset is then final);
//! - the settings the bus reads (cluster-node-timeout, the failover and replica migration
//!   ones), read again when CONFIG SET changed the configuration, so they act on the
//!   running bus.

use crate::cluster::topology::lock;
use crate::engine::Engine;

/// What the view says this node is.
enum Role {
    Primary,
    Replica(String, u16),
    Unknown,
}

/// One tick; nothing for a node without a bus (an in-process `Cluster`, or standalone).
pub(crate) fn tick(e: &mut Engine) {
    let Some(node) = e.cluster.as_ref().filter(|n| n.bus.is_some()) else {
        return;
    };
    let shared = node.shared.clone();
    let generation = e.config.generation;
    let settings = {
        let t = lock(&shared);
        let Some(b) = t.bus.as_ref() else { return };
        (b.config_generation != Some(generation)).then(|| read_settings(e))
    };
    let (role, pause_for, lost) = {
        let mut t = lock(&shared);
        if let Some(s) = settings {
            t.set_require_full_coverage(s.full_coverage);
            if let Some(b) = t.bus.as_mut() {
                b.config_generation = Some(generation);
                b.node_timeout = s.node_timeout;
                b.validity_factor = s.validity_factor;
                b.repl_ping_period_ms = s.repl_ping_period_ms;
                b.replica_no_failover = s.no_failover;
                b.allow_replica_migration = s.allow_replica_migration;
                b.migration_barrier = s.migration_barrier;
            }
        }
        let lost = lost_slots(&mut t);
        let me = t.bus.as_ref().map(|b| b.me.clone()).unwrap_or_default();
        let role = match t.node(&me) {
            Some(n) => match n.replica_of.as_deref().map(|p| t.node(p)) {
                None => Role::Primary,
                Some(Some(p)) => Role::Replica(p.host.clone(), p.port),
                Some(None) => Role::Unknown,
            },
            None => Role::Unknown,
        };
        let el = t.bus.as_ref().map(|b| &b.election);
        let pause_for = el
            .filter(|el| el.mf_end != 0 && el.mf_replica.is_some())
            .map_or(0, |el| el.mf_end);
        (role, pause_for, lost)
    };
    delete_keys_in(e, &lost);
    match role {
        Role::Primary if e.repl.following.is_some() => crate::repl::commands::promote(e),
        Role::Replica(host, port) => crate::repl::commands::follow_if_new(e, &host, port),
        _ => {}
    }
    // Pause first, then read the offset: no write can come after it.
    e.set_failover_pause(pause_for != 0);
    let offset = e.repl.master_offset().max(0) as u64;
    let data_age = match &e.repl.following {
        Some(f) if f.state != "connected" => (e.clock.now_ms() - f.down_since_ms).max(0),
        _ => 0,
    };
    let mut t = lock(&shared);
    if let Some(b) = t.bus.as_mut() {
        b.report.repl_offset = offset;
        b.report.data_age_ms = data_age;
        b.report.paused_for = pause_for;
    }
}

/// The configuration the bus acts on.
struct Settings {
    node_timeout: i64,
    validity_factor: i64,
    repl_ping_period_ms: i64,
    no_failover: bool,
    full_coverage: bool,
    allow_replica_migration: bool,
    migration_barrier: i64,
}

fn read_settings(e: &Engine) -> Settings {
    let get = |name: &str| e.config.get_by_name(name).unwrap_or_default();
    let int = |name: &str, default: i64| get(name).parse().unwrap_or(default);
    Settings {
        node_timeout: int("cluster-node-timeout", 15_000),
        validity_factor: int("cluster-replica-validity-factor", 10),
        repl_ping_period_ms: int("repl-ping-replica-period", 10).saturating_mul(1000),
        no_failover: get("cluster-replica-no-failover") == "yes",
        full_coverage: get("cluster-require-full-coverage") != "no",
        allow_replica_migration: get("cluster-allow-replica-migration") != "no",
        migration_barrier: int("cluster-migration-barrier", 1),
    }
}

/// The slots the bus found this primary lost without being demoted, less any it owns
/// again by now.
fn lost_slots(t: &mut crate::cluster::topology::Topology) -> Vec<u16> {
    let Some(b) = t.bus.as_mut() else {
        return Vec::new();
    };
    let mut lost = std::mem::take(&mut b.lost_slots);
    let me = b.me.clone();
    let i = t.index_of(&me);
    lost.retain(|&s| t.owner_index(s) != i || i.is_none());
    lost
}

/// Redis's delKeysInSlot for each of `slots`: every key of database 0 in them is deleted,
/// the deletion goes to the replicas (a DEL each) and breaks WATCHes, as when the primary
/// deletes them itself; Redis 7.0 sends no keyspace event for them.
fn delete_keys_in(e: &mut Engine, slots: &[u16]) {
    if slots.is_empty() {
        return;
    }
    let mut dirty = vec![false; crate::cluster::slot::SLOTS];
    for &s in slots {
        dirty[s as usize] = true;
    }
    let keys: Vec<Vec<u8>> = e
        .db(0)
        .keys()
        .filter(|k| dirty[crate::cluster::slot::key_slot(k) as usize])
        .map(|k| k.to_vec())
        .collect();
    for key in keys {
        if e.db(0).remove(&key).is_some() {
            e.repl_evicted(0, &key);
            e.touch_watched(0, &key);
            e.dirty += 1;
        }
    }
}
