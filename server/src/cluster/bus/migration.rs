//! Replica migration, as Redis 7.0's clusterCron and clusterHandleSlaveMigration run it: a
//! primary that serves slots and used to have replicas (or took over from one that had
//! them) but has no working replica left is orphaned; one replica of the primary with the
//! most working replicas — the one with the smallest id among them — moves to it, once it
//! has been orphaned for five seconds (CLUSTER_SLAVE_MIGRATION_DELAY), so the orphan's own
//! replicas have time to announce a failover first.
//!
//! Only with cluster-allow-replica-migration on, only while the cluster is ok, only when at
//! least one primary has two working replicas, and only when the replica's own primary
//! keeps more working replicas than cluster-migration-barrier.
//!
//! "Used to have replicas" is Redis's MIGRATE_TO flag (`BusNode::migrate_to`): set on a
//! primary whenever it is seen with a replica, and on a replica that turns primary.

use super::merge;
use crate::cluster::topology::Topology;

/// How long a primary must stay orphaned before a replica moves to it (ms).
pub const MIGRATION_DELAY_MS: i64 = 5000;

/// Replicas of primary `p` not flagged `fail` (clusterCountNonFailingSlaves).
fn working_replicas(t: &Topology, p: usize) -> usize {
    t.replicas_of(p)
        .into_iter()
        .filter(|&r| !t.nodes()[r].failed)
        .count()
}

/// Replicas of primary `p` neither `fail` nor `fail?` (the barrier's count).
fn healthy_replicas(t: &Topology, p: usize) -> usize {
    t.replicas_of(p)
        .into_iter()
        .filter(|&r| !t.nodes()[r].failed && !t.nodes()[r].bus.pfail)
        .count()
}

/// The migration's part of the bus cron, on node `i` (this node). true when this node
/// just moved to an orphaned primary (its engine follows it at its next tick).
pub fn cron(t: &mut Topology, i: usize, now: i64) -> bool {
    // MIGRATE_TO: every primary seen with a replica used to have one.
    for p in 0..t.nodes().len() {
        if t.nodes()[p].is_primary() && !t.replicas_of(p).is_empty() {
            t.nodes_mut()[p].bus.migrate_to = true;
        }
    }
    let Some(b) = t.bus.as_ref() else {
        return false;
    };
    let (allow, barrier) = (b.allow_replica_migration, b.migration_barrier);
    let Some(mine) = t.nodes()[i]
        .replica_of
        .as_deref()
        .and_then(|p| t.index_of(p))
    else {
        return false;
    };
    // clusterCron's survey of the other live primaries.
    let (mut orphaned, mut max_replicas, mut these) = (0, 0, 0);
    for p in 0..t.nodes().len() {
        let n = &t.nodes()[p];
        if p == i || n.bus.handshake || n.bus.noaddr || !n.is_primary() || n.failed {
            continue;
        }
        let ok = working_replicas(t, p);
        if ok == 0 && t.owned_by(p) > 0 && n.bus.migrate_to {
            orphaned += 1;
        }
        max_replicas = max_replicas.max(ok);
        if p == mine {
            these = ok;
        }
    }
    if orphaned == 0 || max_replicas < 2 || these != max_replicas || !allow {
        return false;
    }
    migrate(t, i, mine, max_replicas, barrier, now)
}

/// clusterHandleSlaveMigration.
fn migrate(
    t: &mut Topology,
    i: usize,
    mine: usize,
    max_replicas: usize,
    barrier: i64,
    now: i64,
) -> bool {
    if !t.is_ok() || healthy_replicas(t, mine) as i64 <= barrier {
        return false;
    }
    let mut target = None;
    let mut candidate = t.nodes()[i].id.clone();
    for p in 0..t.nodes().len() {
        let n = &t.nodes()[p];
        let ok = if n.is_primary() {
            working_replicas(t, p)
        } else {
            0
        };
        let is_orphaned = n.is_primary() && !n.failed && n.bus.migrate_to && ok == 0;
        if is_orphaned {
            if target.is_none() && t.owned_by(p) > 0 {
                target = Some(p);
            }
            if t.nodes()[p].bus.orphaned_since == 0 {
                t.nodes_mut()[p].bus.orphaned_since = now;
            }
        } else {
            t.nodes_mut()[p].bus.orphaned_since = 0;
        }
        if ok == max_replicas {
            for r in t.replicas_of(p) {
                if t.nodes()[r].id < candidate {
                    candidate = t.nodes()[r].id.clone();
                }
            }
        }
    }
    let Some(target) = target else {
        return false;
    };
    if candidate != t.nodes()[i].id
        || now - t.nodes()[target].bus.orphaned_since <= MIGRATION_DELAY_MS
    {
        return false;
    }
    let (id, epoch) = (t.nodes()[target].id.clone(), t.nodes()[target].config_epoch);
    merge::set_primary(t, i, id, epoch);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::slot::SLOTS;
    use crate::cluster::topology::BusState;

    /// Primaries a, b, c owning thirds; d and e replicate a, f replicates b; this node is
    /// d (the smaller id of a's two replicas) with these settings.
    fn view(allow: bool, barrier: i64) -> Topology {
        let ids = ["a", "b", "c", "d", "e", "f"].map(|c| c.repeat(40));
        let mut t = Topology::default();
        for (k, id) in ids.iter().enumerate() {
            t.add_node(id.clone(), "127.0.0.1", 7000 + k as u16);
        }
        for s in 0..SLOTS as u16 {
            t.set_owner(s, Some(s as usize * 3 / SLOTS));
        }
        t.make_replica(3, 0);
        t.make_replica(4, 0);
        t.make_replica(5, 1);
        t.bus = Some(BusState {
            me: ids[3].clone(),
            node_timeout: 1000,
            allow_replica_migration: allow,
            migration_barrier: barrier,
            ..BusState::default()
        });
        t
    }

    #[test]
    fn the_smallest_replica_of_the_best_served_primary_moves_to_an_orphan_after_the_delay() {
        let mut t = view(true, 1);
        assert!(!cron(&mut t, 3, 1_000), "nobody is orphaned");
        t.nodes_mut()[5].failed = true;
        assert!(!cron(&mut t, 3, 2_000), "orphaned just now");
        assert!(!cron(&mut t, 3, 2_000 + MIGRATION_DELAY_MS));
        assert!(cron(&mut t, 3, 2_001 + MIGRATION_DELAY_MS));
        assert_eq!(t.nodes()[3].replica_of.as_deref(), Some(&*"b".repeat(40)));
        // e, the other replica of a, is not the candidate: it stays.
        let mut e = view(true, 1);
        e.bus.as_mut().unwrap().me = "e".repeat(40);
        e.nodes_mut()[5].failed = true;
        assert!(!cron(&mut e, 4, 0));
        assert!(!cron(&mut e, 4, 10 * MIGRATION_DELAY_MS));
    }

    #[test]
    fn no_migration_when_not_allowed_or_below_the_barrier() {
        for (allow, barrier) in [(false, 1), (true, 2)] {
            let mut t = view(allow, barrier);
            t.nodes_mut()[5].failed = true;
            assert!(!cron(&mut t, 3, 0));
            assert!(!cron(&mut t, 3, 10 * MIGRATION_DELAY_MS));
            assert!(t.nodes()[3].replica_of.as_deref() == Some(&*"a".repeat(40)));
        }
    }
}
