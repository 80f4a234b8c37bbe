//! Redis Cluster, emulated: hash slots, the nodes that own them, the redirects a client must
//! follow, and the CLUSTER command as a Redis 7.0.15 cluster node answers it.
//!
//! Two ways to be a node. A `redlab-server --cluster-enabled yes` process keeps its own
//! view and converges with other processes over a cluster bus (`bus`), as a Redis node
//! does. A redlab cluster started in one process (`Cluster::builder()`) is a set of
//! ordinary redlab servers (each its own `Engine` on its own
//! server thread, see `net::workers`) that share one `Topology` behind a lock instead of
//! talking over a cluster bus. Every node therefore has the same view at every moment, and a
//! test changes that view (moves a slot, fails a node) in one step. The per-node state Redis
//! does not gossip (MIGRATING / IMPORTING marks, a connection's ASKING and READONLY flags)
//! stays per node.
//!
//! The engine asks this module one question per command, beside admission: may this node
//! serve these keys (`route::check_command`)? Scripts ask it again for every `redis.call`
//! (`script_check`), as Redis's scriptVerifyClusterState does.

pub mod bus;
pub mod commands;
pub mod control;
mod describe;
mod migrate;
pub mod route;
pub mod slot;
mod slot_stats;
pub mod topology;
pub mod wire;
pub(crate) mod wire_control;

use crate::errors;
use std::collections::HashSet;

use bytes::Bytes;

use crate::cmd::table::Command;
use crate::engine::Engine;
use crate::session::ConnId;
pub use control::{Cluster, ClusterBuilder};
pub use route::Redirect;
pub use topology::{Shared, Topology};

/// One node's membership of a cluster: the shared topology, which node it is, and the
/// per-connection flags cluster mode adds.
#[derive(Debug)]
pub struct NodeState {
    pub shared: Shared,
    /// This node's id in `shared`.
    pub me: String,
    /// Connections that sent ASKING (cleared after their next command, or their EXEC).
    asking: HashSet<ConnId>,
    /// Connections in READONLY mode.
    readonly: HashSet<ConnId>,
    /// The cluster bus of a node that is its own process; dropping it stops the bus.
    bus: Option<bus::Handle>,
    /// Where `me` was in the topology's node list at the last look (checked against the
    /// id before use): every routed command needs this node's index, and finding it compared
    /// 40-character ids node by node.
    me_hint: std::cell::Cell<usize>,
    /// The routing check's list of key positions, kept between commands so that routing a
    /// command allocates nothing.
    key_scratch: Vec<crate::cmd::table::keyspec::KeyRef>,
    /// This node's copy of `shared`, which routing reads instead of taking the lock shared
    /// by every node (`topology::SharedTopology` says why).
    pub(crate) view: topology::View,
}

/// What a server is handed to join a cluster (`ServerBuilder::cluster`).
#[derive(Clone, Debug)]
pub struct Membership {
    pub shared: Shared,
    pub me: String,
}

impl NodeState {
    pub fn new(m: Membership) -> NodeState {
        NodeState {
            shared: m.shared,
            me: m.me,
            asking: HashSet::new(),
            readonly: HashSet::new(),
            bus: None,
            me_hint: std::cell::Cell::new(0),
            key_scratch: Vec::new(),
            view: topology::View::default(),
        }
    }

    /// Makes this node's view its own, kept by a cluster bus that serves `listener` (the
    /// network shell binds it: cluster-port, or port + 10000). From now on CLUSTER MEET
    /// reaches other processes.
    pub(crate) fn start_bus(
        &mut self,
        listener: std::net::TcpListener,
        config: &crate::config::Config,
    ) -> std::io::Result<()> {
        let cport = listener.local_addr()?.port();
        let param = |name: &str| config.get_by_name(name).unwrap_or_default();
        {
            let mut t = topology::lock(&self.shared);
            t.bus = Some(topology::BusState {
                me: self.me.clone(),
                node_timeout: param("cluster-node-timeout").parse().unwrap_or(15_000),
                allow_replica_migration: param("cluster-allow-replica-migration") != "no",
                ..Default::default()
            });
            t.set_require_full_coverage(param("cluster-require-full-coverage") != "no");
            if let Some(n) = t.node_mut(&self.me) {
                n.cport = cport;
            }
        }
        self.bus = Some(bus::start(self.shared.clone(), listener)?);
        Ok(())
    }

    /// The lone node of `--cluster-enabled yes`, or None for a standalone server.
    pub fn if_enabled(config: &crate::config::Config) -> Option<NodeState> {
        let on = config
            .get_by_name("cluster-enabled")
            .is_some_and(|v| v == "yes");
        let host = match config.bind.split_whitespace().next() {
            Some(h) if h != "*" && h != "0.0.0.0" && !h.starts_with('-') => h.to_string(),
            _ => "127.0.0.1".to_string(),
        };
        on.then(|| NodeState::lone(&host, config.port))
    }

    /// A node alone in its own cluster, owning no slot (`--cluster-enabled yes`).
    pub fn lone(host: &str, port: u16) -> NodeState {
        let shared = Topology::new_shared();
        let me = topology::lock(&shared).add_node(Topology::fresh_id(), host, port);
        NodeState::new(Membership { shared, me })
    }

    /// This node's index in `topo`, None when the cluster forgot it (CLUSTER RESET
    /// elsewhere).
    pub(crate) fn my_index(&self, topo: &Topology) -> Option<usize> {
        let hint = self.me_hint.get();
        if topo.nodes().get(hint).is_some_and(|n| n.id == self.me) {
            return Some(hint);
        }
        let found = topo.index_of(&self.me)?;
        self.me_hint.set(found);
        Some(found)
    }

    pub fn conn_flags(&self, conn: ConnId) -> route::ConnFlags {
        // Asked before every routed command; most nodes have no ASKING or READONLY
        // connection, and an empty set answers without hashing the id.
        route::ConnFlags {
            asking: !self.asking.is_empty() && self.asking.contains(&conn),
            readonly: !self.readonly.is_empty() && self.readonly.contains(&conn),
            reads_when_down: false,
        }
    }

    pub(crate) fn set_asking(&mut self, conn: ConnId) {
        self.asking.insert(conn);
    }

    pub(crate) fn set_readonly(&mut self, conn: ConnId, on: bool) {
        if on {
            self.readonly.insert(conn);
        } else {
            self.readonly.remove(&conn);
        }
    }

    /// Forgets a closed connection's flags.
    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.asking.remove(&conn);
        self.readonly.remove(&conn);
    }
}

/// The dispatcher's hook, after admission: Err(redirect) when this node must not serve the
/// command.
pub(crate) fn admit(
    e: &mut Engine,
    conn: ConnId,
    cmd: &'static Command,
    args: &[Bytes],
) -> Result<(), Redirect> {
    route::check_command(e, conn, cmd, args).map(|_| ())
}

/// After every top-level command: ASKING lasts one command, or the whole transaction it was
/// sent in (Redis's resetClient).
pub(crate) fn after_command(e: &mut Engine, conn: ConnId, was_asking: bool) {
    if e.cluster.as_ref().is_some_and(|n| n.asking.is_empty()) {
        // Nobody sent ASKING: nothing to clear (the common case, checked before the
        // session look-up).
        return;
    }
    let in_multi = e.sessions.get(&conn).is_some_and(|s| s.multi.is_some());
    if let Some(node) = e.cluster.as_mut() {
        if !in_multi && !was_asking {
            node.asking.remove(&conn);
        }
    }
}

/// Redis's scriptVerifyClusterState for one `redis.call`: the keys must be served by this
/// node. Redis 7.0 lets a script reach undeclared keys of any slot this node serves (the
/// one-slot rule for them, and the `allow-cross-slot-keys` flag that lifts it, act from 7.2).
/// Err is the text the script's error carries.
pub(crate) fn script_check(
    e: &mut Engine,
    conn: ConnId,
    cmd: &'static Command,
    args: &[Bytes],
) -> Result<(), String> {
    let Some(node) = e.cluster.as_ref() else {
        return Ok(());
    };
    let flags = node.conn_flags(conn);
    match route::decide(e, &[(cmd, args)], flags) {
        Ok(_) => Ok(()),
        Err(Redirect::DownReadOnly) => Err(errors::SCRIPT_CLUSTER_DOWN_READONLY.into()),
        Err(Redirect::Down) => Err(errors::SCRIPT_CLUSTER_DOWN.into()),
        Err(_) => Err(errors::SCRIPT_NON_LOCAL_KEY.into()),
    }
}
