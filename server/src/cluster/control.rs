//! `Cluster`: a Redis Cluster of redlab servers in the test's process, and the controls a
//! test needs: move a slot with its MIGRATING/IMPORTING window held open, fail a node, fail
//! a primary over, read any node's keys.
//!
//! Threads: every node is an ordinary `Server`, so each has its own engine on its own server
//! thread (a current-thread tokio runtime; see `net::workers`, which parks finished server
//! threads and hands them the next server, so a suite that starts clusters test after test
//! reuses the same threads). Nodes never share an engine or a lock on the command path
//! except the topology's, held for the few microseconds a routing decision takes. Six nodes
//! are six threads, mostly asleep in epoll; the machine's cores are shared by whichever
//! nodes have work.

use std::io;

use super::slot::{key_slot, SLOTS};
use super::topology::{lock, Shared, Topology};
use super::wire::{Conn, Resp};
use crate::net::server::{Server, ServerBuilder};

/// Options for a cluster; `Cluster::builder()` starts here.
#[derive(Clone, Debug)]
pub struct ClusterBuilder {
    primaries: usize,
    replicas_per_primary: usize,
    server: ServerBuilder,
    /// Node i listens on base_port + i; None: free ports.
    base_port: Option<u16>,
}

impl Default for ClusterBuilder {
    fn default() -> Self {
        ClusterBuilder {
            primaries: 3,
            replicas_per_primary: 0,
            server: ServerBuilder::new(),
            base_port: None,
        }
    }
}

impl ClusterBuilder {
    /// How many primaries share the 16384 slots (3 unless told; at least 1).
    pub fn primaries(mut self, n: usize) -> Self {
        self.primaries = n.max(1);
        self
    }

    pub fn replicas_per_primary(mut self, n: usize) -> Self {
        self.replicas_per_primary = n;
        self
    }

    /// The options every node is started with (clock, password, seed ...); each node still
    /// gets its own free port on 127.0.0.1.
    pub fn server(mut self, builder: ServerBuilder) -> Self {
        self.server = builder;
        self
    }

    /// Node i listens on `port + i` instead of a free port (for `redlab-cluster --port`).
    pub fn base_port(mut self, port: u16) -> Self {
        self.base_port = Some(port);
        self
    }

    /// Starts the nodes; panics when a node cannot start (see `try_start`).
    pub fn start(self) -> Cluster {
        self.try_start()
            .expect("redlab: could not start the cluster")
    }

    /// Starts the primaries, then their replicas, and hands out the slots in even ranges in
    /// the order redis-cli --cluster create does (node i of n gets the i-th sixteenth... of
    /// 16384, rounded the same way), with config epochs 1..=n for the primaries.
    pub fn try_start(self) -> io::Result<Cluster> {
        let shared = Topology::new_shared();
        let total = self.primaries * (1 + self.replicas_per_primary);
        let mut servers = Vec::with_capacity(total);
        for i in 0..total {
            let port = match self.base_port {
                Some(base) => base
                    .checked_add(i as u16)
                    .ok_or_else(|| io::Error::other("redlab: the cluster's ports pass 65535"))?,
                None => 0,
            };
            let server = self
                .server
                .clone()
                .bind("127.0.0.1")
                .port(port)
                .cluster(shared.clone())
                .try_start()?;
            servers.push(server);
        }
        {
            let mut t = lock(&shared);
            let per = SLOTS as f64 / self.primaries as f64;
            let (mut first, mut cursor) = (0usize, 0f64);
            for p in 0..self.primaries {
                let mut last = (cursor + per - 1.0).round() as usize;
                if last >= SLOTS || p == self.primaries - 1 {
                    last = SLOTS - 1;
                }
                last = last.max(first);
                for slot in first..=last {
                    t.set_owner(slot as u16, Some(p));
                }
                first = last + 1;
                cursor += per;
                t.nodes_mut()[p].config_epoch = p as u64 + 1;
            }
            t.current_epoch = self.primaries as u64;
            for r in 0..self.primaries * self.replicas_per_primary {
                t.make_replica(self.primaries + r, r % self.primaries);
            }
        }
        let cluster = Cluster {
            shared,
            servers,
            primaries: self.primaries,
        };
        // Each replica is a real replica of its primary (REDLAB.REPL FOLLOW: a replication
        // link over TCP, as REPLICAOF makes, which cluster mode refuses).
        for r in 0..self.primaries * self.replicas_per_primary {
            cluster.follow(self.primaries + r, r % self.primaries)?;
        }
        Ok(cluster)
    }
}

/// A running cluster. Node `i` is `server(i)`: the primaries first, then the replicas
/// (replica j follows primary j % primaries). Dropping it stops every node.
pub struct Cluster {
    shared: Shared,
    servers: Vec<Server>,
    primaries: usize,
}

impl Cluster {
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// Every node's server, primaries first.
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }

    pub fn server(&self, node: usize) -> &Server {
        &self.servers[node]
    }

    /// How many nodes were started as primaries.
    pub fn primaries(&self) -> usize {
        self.primaries
    }

    /// `redis://127.0.0.1:<port>/` of every node, for a cluster client's seed list.
    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.url()).collect()
    }

    /// The topology every node shares, for anything the methods here do not cover.
    pub fn topology(&self) -> &Shared {
        &self.shared
    }

    /// The node id of node `node`.
    pub fn id(&self, node: usize) -> &str {
        self.servers[node].cluster_id().expect("a cluster node")
    }

    fn node_of_id(&self, id: &str) -> Option<usize> {
        (0..self.servers.len()).find(|&i| self.id(i) == id)
    }

    fn topo_index(t: &Topology, id: &str) -> io::Result<usize> {
        t.index_of(id)
            .ok_or_else(|| io::Error::other(format!("redlab: node {id} has left the cluster")))
    }

    /// The node that owns `slot` now, if any.
    pub fn owner_of(&self, slot: u16) -> Option<usize> {
        let t = lock(&self.shared);
        let id = t.owner(slot)?.id.clone();
        drop(t);
        self.node_of_id(&id)
    }

    /// The node that owns `key`'s slot now.
    pub fn node_for_key(&self, key: &[u8]) -> Option<usize> {
        self.owner_of(key_slot(key))
    }

    /// Opens the migration of `slot` to node `to`: its owner marks it MIGRATING and `to`
    /// marks it IMPORTING, as CLUSTER SETSLOT does. Until `finish_migration`, clients get ASK
    /// for the slot's keys that are not on the owner any more.
    pub fn begin_migration(&self, slot: u16, to: usize) -> io::Result<()> {
        let from = self
            .owner_of(slot)
            .ok_or_else(|| io::Error::other(format!("redlab: slot {slot} has no owner")))?;
        if from == to {
            return Err(io::Error::other(format!(
                "redlab: node {to} already owns slot {slot}"
            )));
        }
        let (from_id, to_id) = (self.id(from).to_string(), self.id(to).to_string());
        let mut t = lock(&self.shared);
        let fi = Self::topo_index(&t, &from_id)?;
        let ti = Self::topo_index(&t, &to_id)?;
        if !t.nodes()[ti].is_primary() {
            return Err(io::Error::other("redlab: the target node is a replica"));
        }
        t.nodes_mut()[fi].migrating.insert(slot, to_id.clone());
        t.nodes_mut()[ti].importing.insert(slot, from_id);
        Ok(())
    }

    /// The (source, target) of the open migration of `slot`.
    fn migration(&self, slot: u16) -> io::Result<(usize, usize)> {
        let t = lock(&self.shared);
        let from = t
            .owner(slot)
            .ok_or_else(|| io::Error::other(format!("redlab: slot {slot} has no owner")))?;
        let to = from.migrating.get(&slot).cloned().ok_or_else(|| {
            io::Error::other(format!("redlab: slot {slot} is not being migrated"))
        })?;
        let from = from.id.clone();
        drop(t);
        let f = self.node_of_id(&from);
        let to = self.node_of_id(&to);
        f.zip(to)
            .ok_or_else(|| io::Error::other("redlab: a node of the migration has left"))
    }

    /// Moves up to `max` of the slot's keys from its owner to the importing node (DUMP,
    /// RESTORE after ASKING, DEL: what MIGRATE does), leaving the window open. Returns how
    /// many keys moved.
    pub fn migrate_keys(&self, slot: u16, max: usize) -> io::Result<usize> {
        let (from, to) = self.migration(slot)?;
        let mut src = Conn::connect(self.servers[from].addr())?;
        let mut dst = Conn::connect(self.servers[to].addr())?;
        self.auth(&mut src)?;
        self.auth(&mut dst)?;
        let slot_arg = slot.to_string();
        let count = max.min(u32::MAX as usize).to_string();
        let keys = match src.ok(&[
            b"CLUSTER",
            b"GETKEYSINSLOT",
            slot_arg.as_bytes(),
            count.as_bytes(),
        ])? {
            Resp::Array(Some(items)) => items,
            other => return Err(io::Error::other(format!("redlab: {other:?}"))),
        };
        let mut moved = 0;
        for k in keys {
            let Resp::Bulk(Some(key)) = k else { continue };
            let Resp::Bulk(Some(payload)) = src.ok(&[b"DUMP", &key])? else {
                continue;
            };
            let ttl = match src.ok(&[b"PTTL", &key])? {
                Resp::Int(t) if t > 0 => t,
                _ => 0,
            };
            dst.ok(&[b"ASKING"])?;
            dst.ok(&[
                b"RESTORE",
                &key,
                ttl.to_string().as_bytes(),
                &payload,
                b"REPLACE",
            ])?;
            src.ok(&[b"DEL", &key])?;
            moved += 1;
        }
        Ok(moved)
    }

    /// Moves the slot's remaining keys and closes the window: the importing node owns the
    /// slot, both marks are cleared, and clients now get MOVED from the old owner.
    pub fn finish_migration(&self, slot: u16) -> io::Result<()> {
        let (from, to) = self.migration(slot)?;
        while self.migrate_keys(slot, 1000)? > 0 {}
        let (from_id, to_id) = (self.id(from).to_string(), self.id(to).to_string());
        let mut t = lock(&self.shared);
        let fi = Self::topo_index(&t, &from_id)?;
        let ti = Self::topo_index(&t, &to_id)?;
        t.set_owner(slot, Some(ti));
        t.nodes_mut()[fi].migrating.remove(&slot);
        t.nodes_mut()[ti].importing.remove(&slot);
        t.current_epoch += 1;
        let epoch = t.current_epoch;
        t.nodes_mut()[ti].config_epoch = epoch;
        Ok(())
    }

    /// Moves `slot` and its keys to node `to` in one step.
    pub fn move_slot(&self, slot: u16, to: usize) -> io::Result<()> {
        self.begin_migration(slot, to)?;
        self.finish_migration(slot)
    }

    /// Marks node `node` failed (as the other nodes would after cluster-node-timeout): it is
    /// flagged `fail`, and while it owns slots the cluster answers CLUSTERDOWN.
    pub fn fail(&self, node: usize) {
        self.set_failed(node, true);
    }

    /// Undoes `fail`.
    pub fn recover(&self, node: usize) {
        self.set_failed(node, false);
    }

    fn set_failed(&self, node: usize, failed: bool) {
        let id = self.id(node).to_string();
        if let Some(n) = lock(&self.shared).node_mut(&id) {
            n.failed = failed;
        }
    }

    /// Promotes replica `node` in place of its primary, as a manual CLUSTER FAILOVER does:
    /// the replica first applies every write its primary made (any lag set on its link is
    /// lifted), then takes the slots, and the old primary becomes its replica (a full
    /// resynchronisation from the new primary).
    pub fn failover(&self, node: usize) -> io::Result<()> {
        self.send(node, &[b"REDLAB.REPL", b"LAG", b"OFF"])?;
        self.send(node, &[b"REDLAB.REPL", b"PARTITION", b"OFF"])?;
        let primary = self.primary_of(node)?;
        self.catch_up(node, primary)?;
        self.take_over(node, primary).map(|_| ())
    }

    /// Promotes replica `node` at once, as CLUSTER FAILOVER TAKEOVER after its primary died:
    /// whatever the replica had received but not applied (its link's lag, see
    /// `REDLAB.REPL LAG`) and whatever never reached it (a partitioned link) is lost. Returns
    /// how many received commands were dropped.
    pub fn failover_losing_writes(&self, node: usize) -> io::Result<usize> {
        let primary = self.primary_of(node)?;
        self.take_over(node, primary)
    }

    /// Makes node `replica` follow node `primary`'s replication stream.
    fn follow(&self, replica: usize, primary: usize) -> io::Result<()> {
        let port = self.servers[primary].port().to_string();
        self.send(
            replica,
            &[b"REDLAB.REPL", b"FOLLOW", b"127.0.0.1", port.as_bytes()],
        )
        .map(|_| ())
    }

    /// The node replica `node` follows.
    fn primary_of(&self, node: usize) -> io::Result<usize> {
        let id = self.id(node).to_string();
        let t = lock(&self.shared);
        let of = t
            .node(&id)
            .and_then(|n| n.replica_of.clone())
            .ok_or_else(|| io::Error::other(format!("redlab: node {node} is not a replica")))?;
        drop(t);
        self.node_of_id(&of)
            .ok_or_else(|| io::Error::other("redlab: the primary has left the cluster"))
    }

    /// Waits (up to `wire`'s timeout) until the replica applied all its primary wrote.
    fn catch_up(&self, node: usize, primary: usize) -> io::Result<()> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let target = self.offset(primary)?.0;
            let (at, up) = self.offset(node)?;
            if up && at >= target {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                return Err(io::Error::other(format!(
                    "redlab: node {node} did not catch up with its primary"
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// master_repl_offset of node `node`, and whether its link to a primary is up
    /// (INFO replication).
    fn offset(&self, node: usize) -> io::Result<(i64, bool)> {
        match self.send(node, &[b"INFO", b"replication"])? {
            Resp::Bulk(Some(text)) => {
                let text = String::from_utf8_lossy(&text);
                let offset = text
                    .lines()
                    .find_map(|l| l.strip_prefix("master_repl_offset:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                Ok((offset, text.contains("master_link_status:up")))
            }
            other => Err(io::Error::other(format!("redlab: {other:?}"))),
        }
    }

    fn take_over(&self, node: usize, primary: usize) -> io::Result<usize> {
        {
            let id = self.id(node).to_string();
            let mut t = lock(&self.shared);
            let i = Self::topo_index(&t, &id)?;
            t.promote(i)
                .ok_or_else(|| io::Error::other(format!("redlab: node {node} is not a replica")))?;
        }
        let lost = match self.send(node, &[b"REDLAB.REPL", b"PROMOTE"])? {
            Resp::Int(n) => n.max(0) as usize,
            _ => 0,
        };
        self.follow(primary, node)?;
        Ok(lost)
    }

    /// One command on a fresh connection to node `node`.
    fn send(&self, node: usize, args: &[&[u8]]) -> io::Result<Resp> {
        let mut c = Conn::connect(self.servers[node].addr())?;
        self.auth(&mut c)?;
        c.ok(args)
    }

    /// Every key of node `node` (KEYS * on its database 0).
    pub fn keys(&self, node: usize) -> io::Result<Vec<Vec<u8>>> {
        let mut c = Conn::connect(self.servers[node].addr())?;
        self.auth(&mut c)?;
        match c.ok(&[b"KEYS", b"*"])? {
            Resp::Array(Some(items)) => Ok(items
                .into_iter()
                .filter_map(|r| match r {
                    Resp::Bulk(Some(k)) => Some(k),
                    _ => None,
                })
                .collect()),
            other => Err(io::Error::other(format!("redlab: {other:?}"))),
        }
    }

    fn auth(&self, c: &mut Conn) -> io::Result<()> {
        if let Some(pw) = self.servers[0].password() {
            c.ok(&[b"AUTH", pw.as_bytes()])?;
        }
        Ok(())
    }
}
