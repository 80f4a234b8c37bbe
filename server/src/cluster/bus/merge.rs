//! How a node folds what the bus tells it into its own view, following Redis 7.0's
//! clusterProcessPacket, clusterProcessGossipSection, clusterUpdateSlotsConfigWith and
//! clusterCron: the handshake that gives a met node its real id, epochs that only grow,
//! slots that go to the claim with the higher config epoch, nodes learnt from a third
//! node's gossip, and failure detection (`fail?` after cluster-node-timeout without a
//! pong, `fail` once a majority of primaries agree).
//!
//! Everything here is a plain function over a locked `Topology` and the time in ms, so it
//! runs the same under test as on the bus thread; sockets are `super`'s business.

use std::net::IpAddr;

use super::failover;
use super::msg::{self, Body, Gossip, Header, Msg};
use crate::cluster::slot::SLOTS;
use crate::cluster::topology::{BusNode, Topology};

/// Which link a message arrived on.
#[derive(Clone, Copy, Debug)]
pub enum Link<'a> {
    /// A connection a peer opened to our bus port.
    Inbound,
    /// The connection we opened to the node that had this id when the message arrived.
    Outbound(&'a str),
}

/// What the link must do after a message.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Answer with a PONG (the message was a PING or a MEET).
    pub pong: bool,
    /// Close this link.
    pub close: bool,
    /// The outbound link's node has this id now (its handshake completed).
    pub renamed: Option<String>,
    /// Nodes this node just marked `fail`: every other node must hear it (a FAIL message).
    pub failed: Vec<String>,
    /// The sender claims slots that this node gives to a node with a higher epoch: send the
    /// sender an UPDATE about that node.
    pub update: Option<String>,
    /// Messages for other links (a vote for the sender goes on our own link to it).
    pub sends: Vec<(Dest, Vec<u8>)>,
    /// A vote was counted: run the election now, not at the next cron, as Redis's
    /// CLUSTER_TODO_HANDLE_FAILOVER does (the majority may be in).
    pub failover_now: bool,
}

/// Where a message goes: to one node over our link to it, or to every node we link to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    Node(String),
    All,
}

/// How long a forgotten node stays out of the view (Redis's CLUSTER_BLACKLIST_TTL).
pub const FORGET_TTL_MS: i64 = 60_000;

/// A failure report counts this many node timeouts (CLUSTER_FAIL_REPORT_VALIDITY_MULT).
const REPORT_VALIDITY: i64 = 2;

/// A primary with slots stays `fail` at least this many node timeouts after a pong
/// (CLUSTER_FAIL_UNDO_TIME_MULT).
const FAIL_UNDO: i64 = 2;

fn me(t: &Topology) -> String {
    t.bus.as_ref().map(|b| b.me.clone()).unwrap_or_default()
}

fn node_timeout(t: &Topology) -> i64 {
    t.bus.as_ref().map_or(15_000, |b| b.node_timeout.max(1))
}

/// A node's flags as Redis puts them on the wire.
pub fn flags_of(t: &Topology, idx: usize) -> u16 {
    let n = &t.nodes()[idx];
    let mut f = 0;
    if n.id == me(t) {
        f |= msg::F_MYSELF;
    }
    if !n.bus.handshake {
        f |= if n.is_primary() {
            msg::F_MASTER
        } else {
            msg::F_SLAVE
        };
    }
    if n.bus.pfail {
        f |= msg::F_PFAIL;
    }
    if n.failed {
        f |= msg::F_FAIL;
    }
    if n.bus.handshake {
        f |= msg::F_HANDSHAKE;
    }
    if n.bus.noaddr {
        f |= msg::F_NOADDR;
    }
    if t.no_failover(idx) {
        f |= msg::F_NOFAILOVER;
    }
    f
}

/// The slot bitmap of node `idx`.
fn bitmap_of(t: &Topology, idx: usize) -> Vec<u8> {
    let mut b = vec![0u8; msg::SLOTS_LEN];
    for (start, end) in t.ranges_of(idx) {
        for s in start..=end {
            msg::set_slot(&mut b, s);
        }
    }
    b
}

/// This node's header for a message of type `typ`. A replica announces its primary's slots
/// and config epoch, as Redis's clusterBuildMessageHdr does.
pub fn header(t: &mut Topology, typ: u16) -> Option<Header> {
    let me_id = me(t);
    let i = t.index_of(&me_id)?;
    let primary = match &t.nodes()[i].replica_of {
        Some(p) => t.index_of(p).unwrap_or(i),
        None => i,
    };
    let state = u8::from(!t.is_ok());
    let offset = t.bus.as_ref().map_or(0, |b| b.report.repl_offset);
    let mflags = if failover::paused(t) {
        msg::MF_PAUSED
    } else {
        0
    };
    let n = &t.nodes()[i];
    Some(Header {
        typ,
        port: n.port,
        cport: n.cport,
        current_epoch: t.current_epoch,
        config_epoch: t.nodes()[primary].config_epoch,
        offset,
        sender: me_id,
        slots: bitmap_of(t, primary),
        replica_of: n.replica_of.clone(),
        myip: String::new(),
        flags: flags_of(t, i),
        state,
        mflags,
    })
}

/// A PING, PONG or MEET for the node `to` (its own entry is left out of the gossip, as is
/// ours): every node whose address is known and that is linked or owns slots.
pub fn gossip_message(t: &mut Topology, typ: u16, to: Option<&str>) -> Option<Vec<u8>> {
    let me_id = me(t);
    let entries: Vec<Gossip> = (0..t.nodes().len())
        .filter(|&i| {
            let n = &t.nodes()[i];
            n.id != me_id
                && Some(n.id.as_str()) != to
                && !n.bus.handshake
                && !n.bus.noaddr
                && (n.bus.link || t.owned_by(i) > 0 || !n.is_primary())
        })
        .map(|i| {
            let n = &t.nodes()[i];
            Gossip {
                name: n.id.clone(),
                ping_sent: (n.bus.ping_sent / 1000) as u32,
                pong_received: (n.bus.pong_received / 1000) as u32,
                ip: n.host.clone(),
                port: n.port,
                cport: n.cport,
                flags: flags_of(t, i),
            }
        })
        .collect();
    let header = header(t, typ)?;
    Some(msg::encode(&Msg {
        header,
        body: Body::Gossip(entries),
    }))
}

/// A FAIL message about node `failed`.
pub fn fail_message(t: &mut Topology, failed: &str) -> Option<Vec<u8>> {
    let header = header(t, msg::FAIL)?;
    Some(msg::encode(&Msg {
        header,
        body: Body::Fail(failed.to_string()),
    }))
}

/// An UPDATE telling the receiver which slots node `about` owns, at its epoch.
pub fn update_message(t: &mut Topology, about: &str) -> Option<Vec<u8>> {
    let i = t.index_of(about)?;
    let (config_epoch, slots) = (t.nodes()[i].config_epoch, bitmap_of(t, i));
    let header = header(t, msg::UPDATE)?;
    Some(msg::encode(&Msg {
        header,
        body: Body::Update {
            config_epoch,
            name: about.to_string(),
            slots,
        },
    }))
}

/// Redis's clusterStartHandshake: a node at this address, with a placeholder id, flagged
/// `handshake` until it answers. false when the address is invalid; true (and nothing
/// added) when a handshake with it is already under way.
pub fn start_handshake(t: &mut Topology, ip: &str, port: u16, cport: u16, now: i64) -> bool {
    let Ok(addr) = ip.parse::<IpAddr>() else {
        return false;
    };
    if port == 0 || cport == 0 {
        return false;
    }
    let ip = addr.to_string();
    let pending = t
        .nodes()
        .iter()
        .any(|n| n.bus.handshake && n.host == ip && n.port == port && n.cport == cport);
    if pending {
        return true;
    }
    let id = t.add_node(Topology::fresh_id(), &ip, port);
    if let Some(n) = t.node_mut(&id) {
        n.cport = cport;
        n.bus = BusNode {
            handshake: true,
            meet: true,
            created: now,
            ..BusNode::default()
        };
    }
    true
}

fn forgotten(t: &Topology, id: &str) -> bool {
    t.bus
        .as_ref()
        .is_some_and(|b| b.forgotten.iter().any(|(f, _)| f == id))
}

/// Applies one message, as Redis's clusterProcessPacket does for the types redlab acts on.
pub fn process(t: &mut Topology, link: Link, peer_ip: &str, m: &Msg, now: i64) -> Outcome {
    let mut out = Outcome::default();
    let h = &m.header;
    if let Some(b) = t.bus.as_mut() {
        if let Some(c) = b.received.get_mut(h.typ as usize) {
            *c += 1;
        }
    }
    let me_id = me(t);
    let known = |t: &Topology| {
        t.index_of(&h.sender)
            .filter(|&i| !t.nodes()[i].bus.handshake && h.sender != me_id)
    };
    let mut sender = known(&*t);
    if let Some(s) = sender {
        t.current_epoch = t.current_epoch.max(h.current_epoch);
        let n = &mut t.nodes_mut()[s];
        n.config_epoch = n.config_epoch.max(h.config_epoch);
        failover::note_offset(t, s, h);
    }
    let ping_like = matches!(h.typ, msg::PING | msg::PONG | msg::MEET);
    if matches!(h.typ, msg::PING | msg::MEET) {
        out.pong = true;
        if sender.is_none() && h.typ == msg::MEET && msg::valid_name(&h.sender) {
            let ip = if h.myip.is_empty() {
                peer_ip
            } else {
                h.myip.as_str()
            };
            start_handshake(t, ip, h.port, h.cport, now);
            if let Body::Gossip(g) = &m.body {
                gossip(t, None, g, now, &mut out);
            }
        }
    }
    if ping_like {
        if let Link::Outbound(id) = link {
            let Some(i) = t.index_of(id) else {
                out.close = true;
                return out;
            };
            if t.nodes()[i].bus.handshake {
                if sender.is_some() || !msg::valid_name(&h.sender) || h.sender == me_id {
                    // We know this node already (or it is us): drop the placeholder.
                    t.remove(i);
                    out.close = true;
                    return out;
                }
                let n = &mut t.nodes_mut()[i];
                n.id = h.sender.clone();
                n.bus.handshake = false;
                n.bus.meet = false;
                out.renamed = Some(h.sender.clone());
                sender = known(&*t);
            } else if t.nodes()[i].id != h.sender {
                // The address answers with another id: its old node has no address now.
                let n = &mut t.nodes_mut()[i];
                n.bus.noaddr = true;
                n.bus.link = false;
                out.close = true;
                return out;
            }
            if h.typ == msg::PONG {
                let timeout = node_timeout(t);
                let slots = t.owned_by(i);
                let n = &mut t.nodes_mut()[i];
                n.bus.pong_received = now;
                n.bus.ping_sent = 0;
                if n.bus.pfail {
                    n.bus.pfail = false;
                } else if n.failed
                    && (!n.is_primary()
                        || slots == 0
                        || now - n.bus.fail_time > FAIL_UNDO.saturating_mul(timeout))
                {
                    n.failed = false;
                }
            }
        }
    }
    let Some(s) = sender else {
        return out;
    };
    match &m.body {
        Body::Gossip(entries) if ping_like => {
            // The sender's setting may have changed since: its latest word stands.
            t.nodes_mut()[s].bus.nofailover = h.flags & msg::F_NOFAILOVER != 0;
            role(t, s, h);
            let claims_primary = h.replica_of.is_none();
            let primary = t.nodes()[s]
                .replica_of
                .as_deref()
                .and_then(|p| t.index_of(p))
                .unwrap_or(s);
            let dirty = bitmap_of(t, primary) != h.slots;
            if claims_primary && dirty {
                update_slots(t, s, h.config_epoch, &h.slots);
            }
            if dirty {
                out.update = stale_claim(t, s, h.config_epoch, &h.slots);
            }
            epoch_collision(t, s, &me_id);
            gossip(t, Some(s), entries, now, &mut out);
        }
        Body::Fail(name) => {
            if let Some(f) = t.index_of(name) {
                let n = &mut t.nodes_mut()[f];
                if !n.failed && n.id != me_id {
                    n.failed = true;
                    n.bus.fail_time = now;
                    n.bus.pfail = false;
                }
            }
        }
        Body::Update {
            config_epoch,
            name,
            slots,
        } => {
            if let Some(n) = t.index_of(name).filter(|_| *name != me_id) {
                if t.nodes()[n].config_epoch < *config_epoch {
                    // A replica that owns slots at a newer epoch was promoted.
                    let node = &mut t.nodes_mut()[n];
                    if node.replica_of.take().is_some() {
                        node.bus.migrate_to = true;
                    }
                    node.config_epoch = *config_epoch;
                    update_slots(t, n, *config_epoch, slots);
                }
            }
        }
        Body::Other => match h.typ {
            msg::AUTH_REQUEST => {
                if let Some(ack) = failover::auth_request(t, s, h, now) {
                    out.sends.push((Dest::Node(h.sender.clone()), ack));
                }
            }
            msg::AUTH_ACK => out.failover_now = failover::auth_ack(t, s, h),
            msg::MFSTART => failover::mfstart(t, s, now),
            _ => {}
        },
        _ => {}
    }
    t.touch();
    out
}

/// The sender's role, as its header says: a primary, or the replica of a known primary
/// (a primary that turns replica gives its slots up).
fn role(t: &mut Topology, s: usize, h: &Header) {
    match &h.replica_of {
        None => {
            // A replica that turned primary took over from a primary with replicas.
            let n = &mut t.nodes_mut()[s];
            if n.replica_of.take().is_some() {
                n.bus.migrate_to = true;
            }
        }
        Some(p) => {
            if t.nodes()[s].is_primary() {
                for slot in 0..SLOTS as u16 {
                    if t.owner_index(slot) == Some(s) {
                        t.set_owner(slot, None);
                    }
                }
                let n = &mut t.nodes_mut()[s];
                n.migrating.clear();
                n.importing.clear();
            }
            if t.index_of(p).is_some() && *p != t.nodes()[s].id {
                t.nodes_mut()[s].replica_of = Some(p.clone());
            }
        }
    }
}

/// Redis's clusterUpdateSlotsConfigWith: each slot `s` claims goes to it when it has no
/// owner or its owner's config epoch is lower; a slot this node is importing stays as it is.
/// Then, as Redis decides it:
/// - our primary (this node, or the one it replicates) lost its last slot to `s`: it was
///   failed over, and this node turns into a replica of `s` (clusterSetMaster) — unless
///   cluster-allow-replica-migration is off and `s` claims slots that were not ours (it
///   took ours by resharding, not by a failover): then this primary stays, empty;
/// - this node's primary is itself a replica now: this node follows that one's primary
///   (no chains of replicas);
/// - else the slots this primary lost are dirty: the engine deletes their keys
///   (`super::reconcile`), since nothing else will (a demoted node resynchronises).
fn update_slots(t: &mut Topology, s: usize, epoch: u64, slots: &[u8]) {
    let me_id = me(t);
    let Some(i) = t.index_of(&me_id) else { return };
    if s == i {
        return;
    }
    let ours = t.nodes()[i]
        .replica_of
        .as_deref()
        .and_then(|p| t.index_of(p))
        .unwrap_or(i);
    let importing: Vec<u16> = t.nodes()[i].importing.keys().copied().collect();
    let (mut sender_slots, mut migrated_ours) = (0usize, 0usize);
    let mut dirty = Vec::new();
    for slot in 0..SLOTS as u16 {
        if !msg::has_slot(slots, slot) {
            continue;
        }
        sender_slots += 1;
        if importing.contains(&slot) {
            continue;
        }
        match t.owner_index(slot) {
            Some(o) if o == s => {}
            Some(o) if t.nodes()[o].config_epoch >= epoch => {}
            owner => {
                if owner == Some(i) {
                    dirty.push(slot);
                }
                if owner == Some(ours) {
                    migrated_ours += 1;
                }
                t.set_owner(slot, Some(s));
            }
        }
    }
    let allow = t.bus.as_ref().is_some_and(|b| b.allow_replica_migration);
    let grand = t.nodes()[ours]
        .replica_of
        .as_deref()
        .filter(|_| ours != i)
        .and_then(|g| t.index_of(g))
        .filter(|&g| g != i);
    if migrated_ours > 0 && t.owned_by(ours) == 0 && (allow || sender_slots == migrated_ours) {
        let (id, epoch) = (t.nodes()[s].id.clone(), t.nodes()[s].config_epoch);
        set_primary(t, i, id, epoch);
    } else if let Some(g) = grand {
        let (id, epoch) = (t.nodes()[g].id.clone(), t.nodes()[g].config_epoch);
        set_primary(t, i, id, epoch);
    } else if !dirty.is_empty() {
        if let Some(b) = t.bus.as_mut() {
            b.lost_slots.extend(dirty);
        }
    }
}

/// Redis's clusterSetMaster for this node (`i`): a replica of `primary` from now on (the
/// engine follows it at its next tick).
pub(super) fn set_primary(t: &mut Topology, i: usize, primary: String, epoch: u64) {
    let n = &mut t.nodes_mut()[i];
    if n.is_primary() {
        n.migrating.clear();
        n.importing.clear();
    }
    n.replica_of = Some(primary);
    n.config_epoch = epoch;
    failover::reset_manual(t);
}

/// A slot the sender claims that this node gives to another node with a higher epoch: the
/// node the sender should hear about in an UPDATE.
fn stale_claim(t: &Topology, s: usize, epoch: u64, slots: &[u8]) -> Option<String> {
    (0..SLOTS as u16)
        .filter(|&slot| msg::has_slot(slots, slot))
        .find_map(|slot| match t.owner_index(slot) {
            Some(o) if o != s && t.nodes()[o].config_epoch > epoch => Some(t.nodes()[o].id.clone()),
            _ => None,
        })
}

/// Redis's clusterHandleConfigEpochCollision: two primaries with one config epoch; the one
/// with the smaller id takes a new epoch, so every primary ends with its own.
fn epoch_collision(t: &mut Topology, s: usize, me_id: &str) {
    let Some(i) = t.index_of(me_id) else { return };
    let (sender, mine) = (&t.nodes()[s], &t.nodes()[i]);
    if sender.config_epoch != mine.config_epoch
        || !sender.is_primary()
        || !mine.is_primary()
        || sender.id.as_str() <= me_id
    {
        return;
    }
    t.current_epoch += 1;
    let epoch = t.current_epoch;
    t.nodes_mut()[i].config_epoch = epoch;
}

/// Redis's clusterProcessGossipSection: failure reports from primaries about nodes we know,
/// and every node we do not know added (unless it was forgotten a moment ago).
fn gossip(
    t: &mut Topology,
    sender: Option<usize>,
    entries: &[Gossip],
    now: i64,
    out: &mut Outcome,
) {
    let me_id = me(t);
    let reporter = sender
        .filter(|&s| t.nodes()[s].is_primary())
        .map(|s| t.nodes()[s].id.clone());
    for g in entries {
        match t.index_of(&g.name) {
            Some(n) => {
                if let Some(r) = &reporter {
                    if g.name != me_id {
                        let failing = g.flags & (msg::F_PFAIL | msg::F_FAIL) != 0;
                        let node = &mut t.nodes_mut()[n];
                        node.bus.fail_reports.retain(|(who, _)| who != r);
                        if failing {
                            node.bus.fail_reports.push((r.clone(), now));
                        }
                        if failing && mark_failing(t, n, now) {
                            out.failed.push(g.name.clone());
                        }
                    }
                }
            }
            None => {
                // Redis 7.0 trusts a node it knows about the nodes it gossips: the new node
                // is added under its real id and flags, no handshake (only a known sender
                // is trusted, or a stranger could join us to another cluster).
                if sender.is_some()
                    && g.flags & msg::F_NOADDR == 0
                    && msg::valid_name(&g.name)
                    && g.name != me_id
                    && !forgotten(t, &g.name)
                    && g.ip.parse::<IpAddr>().is_ok()
                {
                    let id = t.add_node(g.name.clone(), &g.ip, g.port);
                    if let Some(n) = t.node_mut(&id) {
                        n.cport = g.cport;
                        n.failed = g.flags & msg::F_FAIL != 0;
                        n.bus = BusNode {
                            pfail: g.flags & msg::F_PFAIL != 0,
                            nofailover: g.flags & msg::F_NOFAILOVER != 0,
                            fail_time: now,
                            created: now,
                            ..BusNode::default()
                        };
                    }
                }
            }
        }
    }
}

/// Redis's markNodeAsFailingIfNeeded: a `fail?` node becomes `fail` once the primaries
/// reporting it (this node included, when a primary) reach a majority of the cluster's
/// size. true when it just did.
fn mark_failing(t: &mut Topology, n: usize, now: i64) -> bool {
    let timeout = node_timeout(t);
    let me_id = me(t);
    let size = t.size();
    let i_am_primary = t.node(&me_id).is_some_and(|m| m.is_primary());
    let node = &mut t.nodes_mut()[n];
    if !node.bus.pfail || node.failed {
        return false;
    }
    node.bus
        .fail_reports
        .retain(|(_, at)| now - at <= REPORT_VALIDITY.saturating_mul(timeout));
    let failures = node.bus.fail_reports.len() + usize::from(i_am_primary);
    if failures < size / 2 + 1 {
        return false;
    }
    node.failed = true;
    node.bus.pfail = false;
    node.bus.fail_time = now;
    t.touch();
    true
}

/// Redis's clusterCron, for the view: forgotten ids expire, handshakes that got no answer
/// within the node timeout are dropped, a node whose ping went unanswered for the node
/// timeout is `fail?`, and `fail?` nodes are checked for a majority. Returns the nodes just
/// marked `fail`.
pub fn cron(t: &mut Topology, now: i64) -> Vec<String> {
    let timeout = node_timeout(t);
    let me_id = me(t);
    if let Some(b) = t.bus.as_mut() {
        b.forgotten.retain(|(_, until)| *until > now);
    }
    let stale: Vec<usize> = (0..t.nodes().len())
        .filter(|&i| {
            let n = &t.nodes()[i].bus;
            n.handshake && now - n.created > timeout.max(1000)
        })
        .collect();
    for i in stale.into_iter().rev() {
        t.remove(i);
    }
    let mut failed = Vec::new();
    for i in 0..t.nodes().len() {
        let n = &t.nodes()[i];
        if n.id == me_id || n.bus.handshake || n.bus.noaddr {
            continue;
        }
        if n.bus.ping_sent != 0 && now - n.bus.ping_sent > timeout && !n.bus.pfail && !n.failed {
            t.nodes_mut()[i].bus.pfail = true;
        }
        if t.nodes()[i].bus.pfail && mark_failing(t, i, now) {
            failed.push(t.nodes()[i].id.clone());
        }
    }
    t.touch();
    failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::topology::BusState;

    fn view(port: u16) -> Topology {
        let mut t = Topology::default();
        let me = t.add_node(Topology::fresh_id(), "127.0.0.1", port);
        t.bus = Some(BusState {
            me,
            node_timeout: 1000,
            ..BusState::default()
        });
        t
    }

    fn decode(b: Option<Vec<u8>>) -> Msg {
        msg::decode(&b.expect("a message")).expect("valid")
    }

    /// Runs the handshake A -> B: A met B, A's link sends MEET, B answers PONG.
    fn meet(a: &mut Topology, b: &mut Topology, b_port: u16) {
        assert!(start_handshake(a, "127.0.0.1", b_port, b_port + 10000, 1));
        let placeholder = a.nodes().last().unwrap().id.clone();
        let m = decode(gossip_message(a, msg::MEET, Some(&placeholder)));
        let o = process(b, Link::Inbound, "127.0.0.1", &m, 2);
        assert!(o.pong);
        let pong = decode(gossip_message(b, msg::PONG, None));
        let o = process(a, Link::Outbound(&placeholder), "127.0.0.1", &pong, 3);
        assert_eq!(o.renamed.as_deref(), Some(me(b).as_str()));
    }

    #[test]
    fn meet_renames_the_placeholder_and_gossip_spreads_nodes() {
        let (mut a, mut b, mut c) = (view(7000), view(7001), view(7002));
        meet(&mut a, &mut b, 7001);
        assert_eq!(a.nodes().len(), 2);
        assert!(a.node(&me(&b)).is_some_and(|n| !n.bus.handshake));
        // B knows A only as a handshake until its own link gets A's pong.
        assert!(b.nodes().iter().any(|n| n.bus.handshake && n.port == 7000));
        meet(&mut b, &mut c, 7002);
        let c_id = me(&c);
        b.node_mut(&c_id).unwrap().bus.link = true;
        // B's PING to A carries C: A adds C under its own id.
        let ping = decode(gossip_message(&mut b, msg::PING, Some(&me(&a))));
        process(&mut a, Link::Inbound, "127.0.0.1", &ping, 4);
        assert!(a
            .node(&c_id)
            .is_some_and(|n| n.port == 7002 && !n.bus.handshake));
        // A node forgotten a moment ago is not added back.
        let mut d = view(7003);
        d.bus.as_mut().unwrap().forgotten.push((c_id.clone(), 100));
        d.add_node(me(&b), "127.0.0.1", 7001);
        process(&mut d, Link::Inbound, "127.0.0.1", &ping, 4);
        assert!(d.node(&c_id).is_none());
    }

    #[test]
    fn the_higher_config_epoch_wins_a_slot() {
        let (mut a, mut b) = (view(7000), view(7001));
        meet(&mut a, &mut b, 7001);
        let b_id = me(&b);
        a.set_owner(5, Some(0));
        b.set_owner(5, Some(0));
        b.nodes_mut()[0].config_epoch = 3;
        let ping = decode(gossip_message(&mut b, msg::PING, None));
        process(&mut a, Link::Inbound, "127.0.0.1", &ping, 4);
        assert_eq!(a.owner(5).map(|n| n.id.clone()), Some(b_id));
        assert_eq!(a.node(&me(&b)).map(|n| n.config_epoch), Some(3));
    }

    #[test]
    fn an_unanswered_node_is_pfail_then_fail_with_a_majority() {
        let mut a = view(7000);
        let b = a.add_node("b".repeat(40), "127.0.0.1", 7001);
        for s in 0..100 {
            a.set_owner(s, Some(0));
        }
        for s in 100..200 {
            a.set_owner(s, Some(1));
        }
        a.set_require_full_coverage(false);
        a.node_mut(&b).unwrap().bus.ping_sent = 10;
        assert!(cron(&mut a, 500).is_empty());
        assert!(a.is_ok());
        // Two primaries own slots: A alone is not a majority of 2 ... (needs 2).
        let failed = cron(&mut a, 2000);
        assert!(a.node(&b).unwrap().bus.pfail);
        assert!(failed.is_empty());
        assert!(!a.is_ok(), "a minority view says the cluster is down");
    }

    /// Node a owns 0..=9 at config epoch 1, b owns 10..=19 at epoch 2, in both views;
    /// returns their ids.
    fn two_primaries(a: &mut Topology, b: &mut Topology) -> (String, String) {
        meet(a, b, 7001);
        let (a_id, b_id) = (me(a), me(b));
        b.add_node(a_id.clone(), "127.0.0.1", 7000);
        for t in [a, b] {
            let (ai, bi) = (t.index_of(&a_id).unwrap(), t.index_of(&b_id).unwrap());
            for s in 0..10 {
                t.set_owner(s, Some(ai));
                t.set_owner(s + 10, Some(bi));
            }
            t.nodes_mut()[ai].config_epoch = 1;
            t.nodes_mut()[bi].config_epoch = 2;
        }
        (a_id, b_id)
    }

    /// b claims `slots` (and keeps its own) in a PING to a.
    fn b_takes(a: &mut Topology, b: &mut Topology, b_id: &str, slots: std::ops::Range<u16>) {
        let bi = b.index_of(b_id).unwrap();
        for s in slots {
            b.set_owner(s, Some(bi));
        }
        let ping = decode(gossip_message(b, msg::PING, None));
        process(a, Link::Inbound, "127.0.0.1", &ping, 10);
    }

    #[test]
    fn a_primary_that_loses_a_slot_keeps_the_rest_and_its_keys_there_are_dropped() {
        let (mut a, mut b) = (view(7000), view(7001));
        let (a_id, b_id) = two_primaries(&mut a, &mut b);
        b_takes(&mut a, &mut b, &b_id, 3..4);
        assert_eq!(a.owner(3).map(|n| n.id.clone()), Some(b_id));
        assert!(a.node(&a_id).unwrap().is_primary());
        assert_eq!(a.owned_by(a.index_of(&a_id).unwrap()), 9);
        assert_eq!(a.bus.as_ref().unwrap().lost_slots, vec![3]);
    }

    #[test]
    fn a_primary_left_without_slots_follows_the_taker_only_when_migration_is_allowed() {
        for allow in [true, false] {
            let (mut a, mut b) = (view(7000), view(7001));
            let (a_id, b_id) = two_primaries(&mut a, &mut b);
            a.bus.as_mut().unwrap().allow_replica_migration = allow;
            // b owns slots of its own: this is resharding, not a failover of a.
            b_takes(&mut a, &mut b, &b_id, 0..10);
            let mine = a.node(&a_id).unwrap();
            if allow {
                assert_eq!(mine.replica_of.as_deref(), Some(b_id.as_str()));
                assert!(a.bus.as_ref().unwrap().lost_slots.is_empty());
            } else {
                assert!(mine.is_primary());
                let lost = &a.bus.as_ref().unwrap().lost_slots;
                assert_eq!(*lost, (0..10).collect::<Vec<u16>>());
            }
        }
        // A taker with only our slots replaced us (a failover): followed even when not
        // allowed.
        let (mut a, mut b) = (view(7000), view(7001));
        let (a_id, b_id) = two_primaries(&mut a, &mut b);
        a.bus.as_mut().unwrap().allow_replica_migration = false;
        for s in 10..20 {
            b.set_owner(s, None);
        }
        b_takes(&mut a, &mut b, &b_id, 0..10);
        let mine = a.node(&a_id).unwrap();
        assert_eq!(mine.replica_of.as_deref(), Some(b_id.as_str()));
    }

    #[test]
    fn nofailover_is_announced_and_each_ping_s_word_stands() {
        let (mut a, mut b) = (view(7000), view(7001));
        meet(&mut a, &mut b, 7001);
        let bi = a.index_of(&me(&b)).unwrap();
        for on in [true, false, true] {
            b.bus.as_mut().unwrap().replica_no_failover = on;
            let ping = decode(gossip_message(&mut b, msg::PING, None));
            assert_eq!(ping.header.flags & msg::F_NOFAILOVER != 0, on);
            process(&mut a, Link::Inbound, "127.0.0.1", &ping, 5);
            assert_eq!(a.no_failover(bi), on);
            assert_eq!(flags_of(&a, bi) & msg::F_NOFAILOVER != 0, on);
        }
        // This node's own flag is its setting.
        let ai = a.index_of(&me(&a)).unwrap();
        assert!(!a.no_failover(ai));
        a.bus.as_mut().unwrap().replica_no_failover = true;
        assert!(a.no_failover(ai));
    }
}
