//! The cluster as its nodes see it: who the nodes are, which primary owns each hash slot,
//! which slots a node is migrating or importing.
//!
//! Real Redis Cluster nodes each keep their own copy of this and converge through the
//! cluster bus. The nodes redlab runs in one process share one copy behind a lock instead, so
//! a change (a slot assigned, a slot moved, a node failed) is seen by every node at once, at
//! a point the test chooses. What stays per node, as in Redis, is only what Redis keeps per
//! node and never gossips: the MIGRATING and IMPORTING marks of a slot.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::slot::SLOTS;

/// What every node of one cluster shares.
pub type Shared = Arc<SharedTopology>;

/// The topology behind its lock, and a count of the changes made to it.
///
/// Why the count: every command a node serves is routed against the topology, and the nodes
/// run on different threads. Locking one mutex per command made its cache line travel
/// between the cores at every command (a cost instruction counts do not show). A node keeps
/// a copy instead (`View`) and reads only this counter per command, which stays in every
/// core's cache until a change (rare: a test moving a slot, a failover, the bus's
/// bookkeeping) writes it.
#[derive(Debug, Default)]
pub struct SharedTopology {
    topo: Mutex<Topology>,
    generation: AtomicU64,
}

/// The locked topology. Taking it mutably counts a change, published when the guard is
/// dropped (before the lock is let go, so a reader that sees the new count and then takes
/// the lock sees the change).
pub struct Guard<'a> {
    topo: MutexGuard<'a, Topology>,
    generation: &'a AtomicU64,
    changed: bool,
}

impl Deref for Guard<'_> {
    type Target = Topology;
    fn deref(&self) -> &Topology {
        &self.topo
    }
}

impl DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut Topology {
        self.changed = true;
        &mut self.topo
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if self.changed {
            self.generation.fetch_add(1, Ordering::Release);
        }
    }
}

/// Locks the shared topology; a panic while it was held cannot leave it half-changed (every
/// change is a few assignments), so a poisoned lock is taken as it is.
pub fn lock(shared: &Shared) -> Guard<'_> {
    Guard {
        topo: shared.topo.lock().unwrap_or_else(|e| e.into_inner()),
        generation: &shared.generation,
        changed: false,
    }
}

/// One node's copy of the shared topology, taken again only after a change (see
/// `SharedTopology`).
#[derive(Debug, Default)]
pub struct View {
    /// The change count the copy was taken at; None before the first copy.
    generation: Option<u64>,
    copy: Topology,
}

impl View {
    /// Takes the copy again if `shared` changed since it was taken; `topology` then reads it.
    pub fn refresh(&mut self, shared: &Shared) {
        let now = shared.generation.load(Ordering::Acquire);
        if self.generation != Some(now) {
            let topo = lock(shared);
            // Read under the lock: changes are counted while it is held, so this count
            // matches the copy taken.
            let at = shared.generation.load(Ordering::Acquire);
            self.copy.clone_from(&topo);
            self.generation = Some(at);
        }
    }

    /// The copy as of the last `refresh`.
    pub fn topology(&self) -> &Topology {
        &self.copy
    }
}

/// One node of the cluster.
#[derive(Clone, Debug)]
pub struct Node {
    /// 40 hexadecimal characters, as CLUSTER MYID prints it.
    pub id: String,
    pub host: String,
    pub port: u16,
    /// The cluster bus port Redis would use (port + 10000), for CLUSTER NODES.
    pub cport: u16,
    /// The id of the primary this node replicates; None for a primary.
    pub replica_of: Option<String>,
    pub config_epoch: u64,
    /// Slot -> id of the node it is being migrated to (CLUSTER SETSLOT MIGRATING).
    pub migrating: BTreeMap<u16, String>,
    /// Slot -> id of the node it is being imported from (CLUSTER SETSLOT IMPORTING).
    pub importing: BTreeMap<u16, String>,
    /// Marked failed by the test (a partitioned or stopped node), or by the cluster bus
    /// once a majority of primaries reported it: other nodes flag it `fail`, and the
    /// cluster is down while a slot's primary is failed.
    pub failed: bool,
    /// What only the cluster bus between processes (`super::bus`) sets; all default for
    /// the nodes of an in-process `Cluster`.
    pub bus: BusNode,
}

/// A node as the cluster bus sees it: Redis's flags beyond master/slave/fail, and the
/// times and failure reports its failure detection runs on.
#[derive(Clone, Debug, Default)]
pub struct BusNode {
    /// `fail?`: this node got no pong within cluster-node-timeout.
    pub pfail: bool,
    /// `handshake`: met (or learnt by gossip) but not yet answered; its id is a
    /// placeholder until its first pong names it.
    pub handshake: bool,
    /// `noaddr`: its address is unknown.
    pub noaddr: bool,
    /// The first message of the link to it is a MEET, not a PING (CLUSTER MEET).
    pub meet: bool,
    /// When the unanswered ping was sent (ms), 0 when none is pending.
    pub ping_sent: i64,
    /// When its last pong arrived (ms).
    pub pong_received: i64,
    /// Whether this node's outbound bus link is up (CLUSTER NODES' link state).
    pub link: bool,
    /// When it was marked `fail` (ms).
    pub fail_time: i64,
    /// When it was added (ms), for the handshake timeout.
    pub created: i64,
    /// Which primaries reported it failing, and when (ms).
    pub fail_reports: Vec<(String, i64)>,
    /// The replication offset its last message announced (a replica's rank in an
    /// election counts the replicas of its primary that are further on).
    pub repl_offset: u64,
    /// When this node (as a primary) last voted for one of its replicas (ms): a primary
    /// votes for the replicas of one failed primary once per two node timeouts.
    pub voted_time: i64,
    /// `nofailover`, as its last PING, PONG or MEET announced (Redis copies the flag from
    /// every such message: the sender's setting may change at any time).
    pub nofailover: bool,
    /// Redis's MIGRATE_TO: a primary that had a replica (or took over from one that had
    /// them), to which a replica may migrate once it has none (`super::bus::migration`).
    pub migrate_to: bool,
    /// Since when (ms) this primary has been orphaned, 0 when it is not.
    pub orphaned_since: i64,
}

/// What a topology kept by a cluster bus (one process, one node) adds to it.
#[derive(Clone, Debug, Default)]
pub struct BusState {
    /// This process's node id (it changes with CLUSTER RESET HARD).
    pub me: String,
    /// cluster-node-timeout, in ms.
    pub node_timeout: i64,
    /// Messages sent and received, by type (CLUSTER INFO's cluster_stats_messages_*).
    pub sent: [u64; super::bus::msg::TYPES],
    pub received: [u64; super::bus::msg::TYPES],
    /// Ids forgotten with CLUSTER FORGET, and until when gossip may not add them back.
    pub forgotten: Vec<(String, i64)>,
    /// cluster-replica-validity-factor: a replica whose data is older than this many node
    /// timeouts (plus the replication ping period) does not stand for election; 0: always.
    pub validity_factor: i64,
    /// repl-ping-replica-period, in ms (part of that bound).
    pub repl_ping_period_ms: i64,
    /// cluster-replica-no-failover: this replica never starts an automatic failover.
    pub replica_no_failover: bool,
    /// cluster-allow-replica-migration: a primary left without slots follows the node
    /// that took them even when that node owns other slots too; and a replica may move
    /// to an orphaned primary.
    pub allow_replica_migration: bool,
    /// cluster-migration-barrier: a replica moves to an orphaned primary only when its
    /// own primary keeps more working replicas than this.
    pub migration_barrier: i64,
    /// Slots this primary lost to a newer claim without being demoted (Redis's dirty
    /// slots): the engine deletes their keys at its next tick (`super::bus::reconcile`).
    pub lost_slots: Vec<u16>,
    /// The configuration generation the settings above were read at (the engine reads them
    /// again when CONFIG SET changes it, so they act on the running bus).
    pub config_generation: Option<u64>,
    /// Elections and manual failovers (`super::bus::failover`).
    pub election: super::bus::failover::Election,
    /// What the engine told the bus at its last tick.
    pub report: super::bus::failover::EngineReport,
    /// Messages the engine thread wants sent (a CLUSTER FAILOVER's MFSTART, the PONGs of a
    /// TAKEOVER), taken by the bus's next cron.
    pub outbox: Vec<(super::bus::merge::Dest, Vec<u8>)>,
}

impl Node {
    pub fn is_primary(&self) -> bool {
        self.replica_of.is_none()
    }

    /// `host:port`, as MOVED and ASK name a node.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// Every node and the owner of every slot.
#[derive(Clone, Debug)]
pub struct Topology {
    nodes: Vec<Node>,
    /// Index into `nodes` of each slot's owner; `UNASSIGNED` for none.
    owners: Vec<u16>,
    pub current_epoch: u64,
    /// cluster-require-full-coverage: the cluster is down while a slot has no owner.
    require_full_coverage: bool,
    /// `is_ok`, remembered until the next change: every routed command asks, and the answer
    /// walks all 16384 slots.
    ok_cache: std::cell::Cell<Option<bool>>,
    /// Some when this topology is one process's own view, kept by the cluster bus.
    pub bus: Option<BusState>,
}

const UNASSIGNED: u16 = u16::MAX;

impl Default for Topology {
    fn default() -> Self {
        Topology {
            nodes: Vec::new(),
            owners: vec![UNASSIGNED; SLOTS],
            current_epoch: 0,
            require_full_coverage: true,
            ok_cache: std::cell::Cell::new(None),
            bus: None,
        }
    }
}

impl Topology {
    pub fn new_shared() -> Shared {
        Arc::new(SharedTopology::default())
    }

    /// Adds a node (a primary owning nothing) and returns its id.
    pub fn add_node(&mut self, id: String, host: &str, port: u16) -> String {
        self.ok_cache.set(None);
        self.nodes.push(Node {
            id: id.clone(),
            host: host.to_string(),
            port,
            cport: port.wrapping_add(10000),
            replica_of: None,
            config_epoch: 0,
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
            failed: false,
            bus: BusNode::default(),
        });
        id
    }

    /// cluster-require-full-coverage.
    pub fn set_require_full_coverage(&mut self, on: bool) {
        self.ok_cache.set(None);
        self.require_full_coverage = on;
    }

    /// Forgets the cached cluster state (after a change made through `nodes()` that
    /// bypassed the setters, such as the bus's own bookkeeping).
    pub fn touch(&mut self) {
        self.ok_cache.set(None);
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn nodes_mut(&mut self) -> &mut [Node] {
        self.ok_cache.set(None);
        &mut self.nodes
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn node_mut(&mut self, id: &str) -> Option<&mut Node> {
        self.ok_cache.set(None);
        self.nodes.iter_mut().find(|n| n.id == id)
    }

    /// The node that owns `slot`.
    pub fn owner(&self, slot: u16) -> Option<&Node> {
        match self.owners[slot as usize] {
            UNASSIGNED => None,
            i => self.nodes.get(i as usize),
        }
    }

    pub fn owner_index(&self, slot: u16) -> Option<usize> {
        match self.owners[slot as usize] {
            UNASSIGNED => None,
            i => Some(i as usize),
        }
    }

    /// Gives `slot` to node `idx`, or takes it from everyone (None).
    pub fn set_owner(&mut self, slot: u16, idx: Option<usize>) {
        self.ok_cache.set(None);
        self.owners[slot as usize] = idx.map_or(UNASSIGNED, |i| i as u16);
    }

    /// The slots node `idx` owns, as inclusive ranges in slot order.
    pub fn ranges_of(&self, idx: usize) -> Vec<(u16, u16)> {
        let mut out: Vec<(u16, u16)> = Vec::new();
        for (slot, &owner) in self.owners.iter().enumerate() {
            if owner as usize != idx {
                continue;
            }
            let slot = slot as u16;
            match out.last_mut() {
                Some((_, end)) if *end + 1 == slot => *end = slot,
                _ => out.push((slot, slot)),
            }
        }
        out
    }

    /// Every maximal run of slots with one owner, in slot order: (start, end, owner index).
    pub fn runs(&self) -> Vec<(u16, u16, usize)> {
        let mut out: Vec<(u16, u16, usize)> = Vec::new();
        for (slot, &owner) in self.owners.iter().enumerate() {
            if owner == UNASSIGNED {
                continue;
            }
            let slot = slot as u16;
            match out.last_mut() {
                Some((_, end, o)) if *end + 1 == slot && *o == owner as usize => *end = slot,
                _ => out.push((slot, slot, owner as usize)),
            }
        }
        out
    }

    /// How many slots have an owner.
    pub fn assigned(&self) -> usize {
        self.owners.iter().filter(|&&o| o != UNASSIGNED).count()
    }

    /// How many slots node `idx` owns.
    pub fn owned_by(&self, idx: usize) -> usize {
        self.owners.iter().filter(|&&o| o as usize == idx).count()
    }

    /// Whether node `idx` is flagged `nofailover`: this process's own node when
    /// cluster-replica-no-failover is on (whatever its role, as Redis flags it), another
    /// node as it last announced.
    pub fn no_failover(&self, idx: usize) -> bool {
        match &self.bus {
            Some(b) if b.me == self.nodes[idx].id => b.replica_no_failover,
            _ => self.nodes[idx].bus.nofailover,
        }
    }

    /// The indexes of the replicas of node `idx`.
    pub fn replicas_of(&self, idx: usize) -> Vec<usize> {
        let id = &self.nodes[idx].id;
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].replica_of.as_deref() == Some(id))
            .collect()
    }

    /// Whether the cluster serves: every slot has a live owner (with full coverage required),
    /// and no owner of a slot has failed.
    pub fn is_ok(&self) -> bool {
        if let Some(ok) = self.ok_cache.get() {
            return ok;
        }
        let ok = self.compute_ok();
        self.ok_cache.set(Some(ok));
        ok
    }

    fn compute_ok(&self) -> bool {
        if self.bus.is_some() {
            return self.compute_ok_on_bus();
        }
        let mut any = false;
        for &o in &self.owners {
            if o == UNASSIGNED {
                if self.require_full_coverage {
                    return false;
                }
                continue;
            }
            any = true;
            if self.nodes[o as usize].failed {
                return false;
            }
        }
        any || !self.require_full_coverage
    }

    /// Redis's clusterUpdateState for a node with its own view: with full coverage required,
    /// every slot needs an owner that has not failed; and the node must reach a majority of
    /// the primaries that own slots (none owning any is a minority too).
    fn compute_ok_on_bus(&self) -> bool {
        let covered = !self.require_full_coverage
            || self
                .owners
                .iter()
                .all(|&o| o != UNASSIGNED && !self.nodes[o as usize].failed);
        covered && self.reaches_majority()
    }

    /// Redis's minority check: a majority of the primaries that own slots has not failed
    /// (or not been suspected, `fail?`) in this node's view.
    fn reaches_majority(&self) -> bool {
        let size = self.size();
        let reachable = (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                !n.failed && !n.bus.pfail && self.owners.iter().any(|&o| o as usize == i)
            })
            .count();
        reachable > size / 2
    }

    /// How many primaries own at least one slot (CLUSTER INFO cluster_size).
    pub fn size(&self) -> usize {
        (0..self.nodes.len())
            .filter(|&i| self.owners.iter().any(|&o| o as usize == i))
            .count()
    }

    /// Forgets node `idx`: its slots lose their owner, and indexes above it shift down.
    pub fn remove(&mut self, idx: usize) {
        self.ok_cache.set(None);
        let gone = self.nodes.remove(idx).id;
        for o in self.owners.iter_mut() {
            if *o == UNASSIGNED {
                continue;
            }
            match (*o as usize).cmp(&idx) {
                std::cmp::Ordering::Equal => *o = UNASSIGNED,
                std::cmp::Ordering::Greater => *o -= 1,
                std::cmp::Ordering::Less => {}
            }
        }
        for n in &mut self.nodes {
            if n.replica_of.as_deref() == Some(gone.as_str()) {
                n.replica_of = None;
            }
            n.migrating.retain(|_, to| *to != gone);
            n.importing.retain(|_, from| *from != gone);
        }
    }

    /// Makes node `idx` a replica of `primary`: it gives up its slots, as CLUSTER REPLICATE
    /// requires of a node that owns none.
    pub fn make_replica(&mut self, idx: usize, primary: usize) {
        self.ok_cache.set(None);
        let id = self.nodes[primary].id.clone();
        let epoch = self.nodes[primary].config_epoch;
        let node = &mut self.nodes[idx];
        node.replica_of = Some(id);
        node.config_epoch = epoch;
    }

    /// Redis's clusterBumpConfigEpochWithoutConsensus: node `idx` takes a new config epoch
    /// unless its own already equals the highest epoch it knows (the current epoch
    /// included), so a slot it took by hand (SETSLOT NODE after an import, BUMPEPOCH) wins
    /// over every older claim the bus still carries. Ok with the new epoch, Err with the
    /// unchanged one.
    pub fn bump_epoch_without_consensus(&mut self, idx: usize) -> Result<u64, u64> {
        let mine = self.nodes[idx].config_epoch;
        let highest = self
            .nodes
            .iter()
            .map(|n| n.config_epoch)
            .fold(self.current_epoch, u64::max);
        if mine != 0 && mine == highest {
            return Err(mine);
        }
        self.current_epoch = highest + 1;
        self.nodes[idx].config_epoch = self.current_epoch;
        Ok(self.current_epoch)
    }

    /// Promotes replica `idx` in place of its primary: it takes the primary's slots and a new
    /// epoch, and the old primary and its other replicas follow it.
    pub fn promote(&mut self, idx: usize) -> Option<()> {
        self.ok_cache.set(None);
        let old_id = self.nodes[idx].replica_of.clone()?;
        let old = self.index_of(&old_id)?;
        for o in self.owners.iter_mut() {
            if *o as usize == old {
                *o = idx as u16;
            }
        }
        self.current_epoch += 1;
        let new_id = self.nodes[idx].id.clone();
        self.nodes[idx].replica_of = None;
        self.nodes[idx].config_epoch = self.current_epoch;
        for n in &mut self.nodes {
            if n.id == old_id || n.replica_of.as_deref() == Some(old_id.as_str()) {
                n.replica_of = Some(new_id.clone());
                n.config_epoch = self.current_epoch;
            }
        }
        Some(())
    }

    /// A fresh node id: 40 hexadecimal characters.
    pub fn fresh_id() -> String {
        let mut rng = crate::rng::EngineRng::new(crate::rng::fresh_seed());
        (0..40)
            .map(|_| char::from_digit((rng.next_u64() % 16) as u32, 16).expect("a hex digit"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's copy follows every change made through the lock, and a lock taken only to
    /// read is no change (the copy is not taken again for it).
    #[test]
    fn a_view_follows_changes_and_only_changes() {
        let shared = Topology::new_shared();
        let mut view = View::default();
        view.refresh(&shared);
        assert!(view.topology().nodes().is_empty());
        lock(&shared).add_node("a".repeat(40), "127.0.0.1", 7000);
        view.refresh(&shared);
        assert_eq!(view.topology().nodes().len(), 1);
        let before = shared.generation.load(Ordering::Acquire);
        assert_eq!(lock(&shared).nodes().len(), 1);
        assert_eq!(shared.generation.load(Ordering::Acquire), before);
        lock(&shared).set_owner(5, Some(0));
        assert_eq!(
            view.topology().owner_index(5),
            None,
            "a copy until refreshed"
        );
        view.refresh(&shared);
        assert_eq!(view.topology().owner_index(5), Some(0));
    }

    #[test]
    fn ranges_runs_and_state() {
        let mut t = Topology::default();
        t.add_node("a".repeat(40), "127.0.0.1", 7000);
        t.add_node("b".repeat(40), "127.0.0.1", 7001);
        assert!(!t.is_ok());
        for s in 0..8192 {
            t.set_owner(s, Some(0));
        }
        for s in 8192..16384 {
            t.set_owner(s, Some(1));
        }
        t.set_owner(100, Some(1));
        assert!(t.is_ok());
        assert_eq!(t.ranges_of(1), vec![(100, 100), (8192, 16383)]);
        assert_eq!(t.runs().len(), 4);
        assert_eq!(t.size(), 2);
        t.remove(0);
        assert_eq!(t.assigned(), 8193);
        assert_eq!(t.owner(100).map(|n| n.port), Some(7001));
        assert!(!t.is_ok());
    }
}
