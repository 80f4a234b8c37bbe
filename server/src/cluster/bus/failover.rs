//! Failover between processes, as Redis 7.0's cluster.c runs it: a replica whose primary
//! is marked `fail` (or that was sent CLUSTER FAILOVER) is elected in its place.
//!
//! - Election (clusterHandleSlaveFailover): the replica waits 500-1000 ms (so the FAIL
//!   spreads) plus one second per replica of its primary that is further on (its rank),
//!   then bumps the current epoch and asks every node for its vote (FAILOVER_AUTH_REQUEST).
//!   Primaries that own slots vote once per epoch (FAILOVER_AUTH_ACK), only for the replica
//!   of a failed primary (unless the request says FORCEACK), not twice for one primary within
//!   two node timeouts, and not when a slot it claims has an owner with a newer config
//!   epoch (clusterSendFailoverAuthIfNeeded). A majority of the slot-owning primaries
//!   elects it: it takes its primary's slots with the election's epoch as its config epoch
//!   and tells everyone in a PONG (clusterFailoverReplaceYourMaster). The election is
//!   looked at on every cron and again right after each vote it gets (`after_vote`).
//!   Replicas flagged `nofailover` never stand, and their siblings leave them out of
//!   their ranks. An election not won
//!   within two node timeouts (2 s at least) is tried again after twice that.
//! - Manual failover (CLUSTER FAILOVER): the replica sends MFSTART; its primary pauses
//!   writes and sends its replication offset with the PAUSED flag; once the replica has
//!   applied that much, the election runs at once, with FORCEACK. FORCE skips the primary
//!   (the election starts at once); TAKEOVER skips the election (the replica takes a new
//!   config epoch of its own and the slots). Either ends after 5 s (CLUSTER_MF_TIMEOUT).
//! - The old primary learns it lost its slots to a newer epoch (the PONG, or an UPDATE) and
//!   turns into a replica of the winner (`merge`'s slot update).
//!
//! Plain functions over a locked `Topology` and the time in ms, as in `merge`; what needs
//! the engine (the write pause, the replication offset, following the new primary) goes
//! through `report` and `super::reconcile`.

use super::merge::{self, Dest};
use super::msg::{self, Body, Header, Msg};
use crate::cluster::slot::SLOTS;
use crate::cluster::topology::Topology;

/// How long a manual failover may take (CLUSTER_MF_TIMEOUT).
pub const MF_TIMEOUT_MS: i64 = 5000;

/// The state of elections and manual failovers (Redis's failover_auth_* and mf_* fields).
#[derive(Clone, Debug, Default)]
pub struct Election {
    /// When this replica's election starts (or started), ms; 0 never.
    pub auth_time: i64,
    /// Votes received for `auth_epoch`.
    pub auth_count: usize,
    /// The vote was asked for.
    pub auth_sent: bool,
    /// This replica's rank among its primary's replicas (0: the furthest on).
    pub auth_rank: u64,
    /// The epoch this election runs at.
    pub auth_epoch: u64,
    /// When the manual failover under way ends (ms); 0: none.
    pub mf_end: i64,
    /// Replica side: the election may start (the primary's offset was reached, or FORCE).
    pub mf_can_start: bool,
    /// Replica side: the offset the paused primary announced.
    pub mf_primary_offset: Option<u64>,
    /// Primary side: the replica that asked (MFSTART).
    pub mf_replica: Option<String>,
    /// Primary side: the paused offset was sent to that replica.
    pub mf_pinged: bool,
    /// The last epoch this primary voted in.
    pub last_vote_epoch: u64,
}

/// What the engine tells the bus at each tick (`super::reconcile`).
#[derive(Clone, Debug, Default)]
pub struct EngineReport {
    /// master_repl_offset on a primary, the offset applied on a replica.
    pub repl_offset: u64,
    /// How long a replica's link to its primary has been down (ms), 0 while it is up.
    pub data_age_ms: i64,
    /// The manual failover (its `mf_end`) for which the engine paused writes; 0: none.
    pub paused_for: i64,
}

fn me(t: &Topology) -> Option<usize> {
    t.index_of(&t.bus.as_ref()?.me)
}

fn election(t: &mut Topology) -> Option<&mut Election> {
    t.bus.as_mut().map(|b| &mut b.election)
}

fn node_timeout(t: &Topology) -> i64 {
    t.bus.as_ref().map_or(15_000, |b| b.node_timeout.max(1))
}

/// Whether this node paused writes for the manual failover under way (the engine said so):
/// then its messages carry the PAUSED flag, and their offset is final.
pub fn paused(t: &Topology) -> bool {
    t.bus.as_ref().is_some_and(|b| {
        b.election.mf_end != 0
            && b.election.mf_replica.is_some()
            && b.report.paused_for == b.election.mf_end
    })
}

/// Redis's resetManualFailover (a primary's pause ends with it, see `super::reconcile`).
pub fn reset_manual(t: &mut Topology) {
    if let Some(e) = election(t) {
        e.mf_end = 0;
        e.mf_can_start = false;
        e.mf_primary_offset = None;
        e.mf_replica = None;
        e.mf_pinged = false;
    }
}

/// On every message of a known sender `s`: the offset it announces, and, for a replica in a
/// manual failover, its paused primary's final offset.
pub fn note_offset(t: &mut Topology, s: usize, h: &Header) {
    t.nodes_mut()[s].bus.repl_offset = h.offset;
    let Some(i) = me(t) else { return };
    let from_my_primary = t.nodes()[i].replica_of.as_deref() == Some(t.nodes()[s].id.as_str());
    if let Some(e) = election(t) {
        if e.mf_end != 0
            && from_my_primary
            && h.mflags & msg::MF_PAUSED != 0
            && e.mf_primary_offset.is_none()
        {
            e.mf_primary_offset = Some(h.offset);
        }
    }
}

/// A bare-header message of type `typ` with message flags `mflags`.
fn bare(t: &mut Topology, typ: u16, mflags: u8) -> Option<Vec<u8>> {
    let mut header = merge::header(t, typ)?;
    header.mflags |= mflags;
    Some(msg::encode(&Msg {
        header,
        body: Body::Other,
    }))
}

/// FAILOVER_AUTH_REQUEST from node `s`: this node's vote (an ACK to send it), or None.
pub fn auth_request(t: &mut Topology, s: usize, h: &Header, now: i64) -> Option<Vec<u8>> {
    let i = me(t)?;
    if !t.nodes()[i].is_primary() || t.owned_by(i) == 0 {
        return None;
    }
    // Our current epoch took the request's already (`merge::process`): lower is stale.
    if h.current_epoch < t.current_epoch {
        return None;
    }
    if t.bus.as_ref()?.election.last_vote_epoch == t.current_epoch {
        return None;
    }
    let primary = t.index_of(t.nodes()[s].replica_of.as_deref()?)?;
    let force = h.mflags & msg::MF_FORCEACK != 0;
    if !t.nodes()[primary].failed && !force {
        return None;
    }
    if now - t.nodes()[primary].bus.voted_time < node_timeout(t).saturating_mul(2) {
        return None;
    }
    // Every slot it claims must not be owned, here, at a newer config epoch.
    let stale = (0..SLOTS as u16).any(|slot| {
        msg::has_slot(&h.slots, slot)
            && t.owner_index(slot)
                .is_some_and(|o| t.nodes()[o].config_epoch > h.config_epoch)
    });
    if stale {
        return None;
    }
    let epoch = t.current_epoch;
    election(t)?.last_vote_epoch = epoch;
    t.nodes_mut()[primary].bus.voted_time = now;
    bare(t, msg::AUTH_ACK, 0)
}

/// FAILOVER_AUTH_ACK from node `s`: a vote, when it comes from a primary that owns slots
/// and is of this election's epoch. true when it counted (the election may be won now:
/// see `after_vote`).
pub fn auth_ack(t: &mut Topology, s: usize, h: &Header) -> bool {
    let counts = t.nodes()[s].is_primary() && t.owned_by(s) > 0;
    match election(t) {
        Some(e) if counts && h.current_epoch >= e.auth_epoch => {
            e.auth_count += 1;
            true
        }
        _ => false,
    }
}

/// Right after a counted vote, the election runs once more (Redis's clusterBeforeSleep
/// with CLUSTER_TODO_HANDLE_FAILOVER), so a replica that has its majority takes over at
/// once rather than at the next cron. Returns what to send.
pub fn after_vote(t: &mut Topology, now: i64, random: u64) -> Vec<(Dest, Vec<u8>)> {
    let mut out = Vec::new();
    if let Some(i) = me(t).filter(|&i| !t.nodes()[i].is_primary()) {
        elect(t, i, now, random, &mut out);
    }
    out
}

/// MFSTART from node `s`: one of our replicas asks for a manual failover; the engine
/// pauses writes at its next tick, and `cron` then sends the replica our offset.
pub fn mfstart(t: &mut Topology, s: usize, now: i64) {
    let Some(i) = me(t) else { return };
    if t.nodes()[s].replica_of.as_deref() != Some(t.nodes()[i].id.as_str()) {
        return;
    }
    reset_manual(t);
    let id = t.nodes()[s].id.clone();
    if let Some(e) = election(t) {
        e.mf_end = now + MF_TIMEOUT_MS;
        e.mf_replica = Some(id);
    }
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER] on this node. Err is the reply's text; Ok(true) when
/// this node is a primary now (TAKEOVER), for the engine to stop replicating.
pub fn manual(
    t: &mut Topology,
    force: bool,
    takeover: bool,
    now: i64,
) -> Result<bool, &'static str> {
    let i = me(t).ok_or(crate::errors::THIS_NODE_WAS_FORGOTTEN_BY_ITS)?;
    let Some(primary_id) = t.nodes()[i].replica_of.clone() else {
        return Err(crate::errors::YOU_SHOULD_SEND_CLUSTER_FAILOVER_TO);
    };
    let Some(primary) = t.index_of(&primary_id) else {
        return Err(crate::errors::MY_MASTER_IS_UNKNOWN);
    };
    let p = &t.nodes()[primary];
    if !force && (p.failed || !p.bus.link) {
        return Err(crate::errors::MASTER_IS_DOWN_USE_FORCE);
    }
    reset_manual(t);
    if let Some(e) = election(t) {
        e.mf_end = now + MF_TIMEOUT_MS;
    }
    if takeover {
        // Redis's clusterBumpConfigEpochWithoutConsensus: a config epoch above every one
        // known. (A replica's config epoch here mirrors its primary's, so it always bumps.)
        let highest = t
            .nodes()
            .iter()
            .map(|n| n.config_epoch)
            .fold(t.current_epoch, u64::max);
        t.current_epoch = highest + 1;
        t.nodes_mut()[i].config_epoch = t.current_epoch;
        replace_primary(t, i);
        if let Some(pong) = merge::gossip_message(t, msg::PONG, None) {
            queue(t, Dest::All, pong);
        }
        return Ok(true);
    }
    if force {
        if let Some(e) = election(t) {
            e.mf_can_start = true;
        }
    } else if let Some(m) = bare(t, msg::MFSTART, 0) {
        queue(t, Dest::Node(primary_id), m);
    }
    Ok(false)
}

fn queue(t: &mut Topology, dest: Dest, bytes: Vec<u8>) {
    if let Some(b) = t.bus.as_mut() {
        b.outbox.push((dest, bytes));
    }
}

/// Redis's clusterFailoverReplaceYourMaster for node `i` (this node): it is a primary, and
/// owns every slot its primary owned.
fn replace_primary(t: &mut Topology, i: usize) {
    let Some(old) = t.nodes()[i]
        .replica_of
        .as_deref()
        .and_then(|p| t.index_of(p))
    else {
        return;
    };
    t.nodes_mut()[i].replica_of = None;
    for slot in 0..SLOTS as u16 {
        if t.owner_index(slot) == Some(old) {
            t.set_owner(slot, Some(i));
        }
    }
    reset_manual(t);
    t.touch();
}

/// Redis's clusterGetSlaveRank: how many other replicas of our primary, of those that may
/// fail over (not `nofailover`), announced a larger offset than ours.
fn rank(t: &Topology, i: usize) -> u64 {
    let Some(primary) = t.nodes()[i].replica_of.as_deref() else {
        return 0;
    };
    let mine = t.bus.as_ref().map_or(0, |b| b.report.repl_offset);
    t.nodes()
        .iter()
        .enumerate()
        .filter(|(j, n)| {
            *j != i
                && n.replica_of.as_deref() == Some(primary)
                && !t.no_failover(*j)
                && n.bus.repl_offset > mine
        })
        .count() as u64
}

/// The failovers' part of the bus cron (every 100 ms): manual failovers time out, a paused
/// primary sends its offset, a replica runs its election, then perhaps migrates
/// (`super::migration`). Returns what to send.
pub fn cron(t: &mut Topology, now: i64, random: u64) -> Vec<(Dest, Vec<u8>)> {
    let mut out = Vec::new();
    let Some(i) = me(t) else { return out };
    let mf_end = t.bus.as_ref().map_or(0, |b| b.election.mf_end);
    if mf_end != 0 && mf_end < now {
        reset_manual(t);
    }
    if t.nodes()[i].is_primary() {
        let pending = t
            .bus
            .as_ref()
            .and_then(|b| b.election.mf_replica.clone())
            .filter(|_| paused(t) && !t.bus.as_ref().is_some_and(|b| b.election.mf_pinged));
        if let Some(r) = pending {
            if let Some(e) = election(t) {
                e.mf_pinged = true;
            }
            if let Some(ping) = merge::gossip_message(t, msg::PING, Some(&r)) {
                out.push((Dest::Node(r), ping));
            }
        }
        return out;
    }
    // clusterHandleManualFailover: the paused primary's offset is reached.
    let mine = t.bus.as_ref().map_or(0, |b| b.report.repl_offset);
    if let Some(e) = election(t) {
        if e.mf_end != 0 && !e.mf_can_start && e.mf_primary_offset == Some(mine) {
            e.mf_can_start = true;
        }
    }
    elect(t, i, now, random, &mut out);
    // Still a replica: perhaps one that an orphaned primary needs more.
    if !t.nodes()[i].is_primary() {
        super::migration::cron(t, i, now);
    }
    out
}

/// Redis's clusterHandleSlaveFailover, for replica `i`.
fn elect(t: &mut Topology, i: usize, now: i64, random: u64, out: &mut Vec<(Dest, Vec<u8>)>) {
    let Some(b) = t.bus.as_ref() else { return };
    let e = &b.election;
    let timeout = b.node_timeout.max(1);
    let manual = e.mf_end != 0 && e.mf_can_start;
    let auth_age = now - e.auth_time;
    let auth_timeout = timeout.saturating_mul(2).max(2000);
    let auth_retry = auth_timeout.saturating_mul(2);
    let Some(primary) = t.nodes()[i]
        .replica_of
        .as_deref()
        .and_then(|p| t.index_of(p))
    else {
        return;
    };
    // Only for a failed primary (or by hand), not with cluster-replica-no-failover (unless
    // by hand), and only for a primary that serves slots.
    if (!manual && (!t.nodes()[primary].failed || b.replica_no_failover))
        || t.owned_by(primary) == 0
    {
        return;
    }
    // The time the link to the primary has been down, less the node timeout it takes to be
    // marked failing anyway; too old a copy does not stand (unless by hand).
    let mut data_age = b.report.data_age_ms;
    if data_age > timeout {
        data_age -= timeout;
    }
    let limit = b
        .repl_ping_period_ms
        .saturating_add(timeout.saturating_mul(b.validity_factor));
    if b.validity_factor != 0 && data_age > limit && !manual {
        return;
    }
    let (mf_end, auth_sent, auth_rank) = (e.mf_end, e.auth_sent, e.auth_rank);
    if auth_age > auth_retry {
        let rank = rank(t, i);
        let Some(e) = election(t) else { return };
        e.auth_time = now + 500 + (random % 500) as i64 + rank as i64 * 1000;
        e.auth_count = 0;
        e.auth_sent = false;
        e.auth_rank = rank;
        if mf_end != 0 {
            e.auth_time = now;
            e.auth_rank = 0;
        }
        // The other replicas of our primary learn our offset, for their ranks.
        let siblings: Vec<String> = t
            .replicas_of(primary)
            .into_iter()
            .filter(|&r| r != i)
            .map(|r| t.nodes()[r].id.clone())
            .collect();
        for s in siblings {
            if let Some(pong) = merge::gossip_message(t, msg::PONG, Some(&s)) {
                out.push((Dest::Node(s), pong));
            }
        }
        return;
    }
    if !auth_sent && mf_end == 0 {
        let new_rank = rank(t, i);
        if let Some(e) = election(t) {
            if new_rank > auth_rank {
                e.auth_time += (new_rank - auth_rank) as i64 * 1000;
                e.auth_rank = new_rank;
            }
        }
    }
    let Some(e) = t.bus.as_ref().map(|b| &b.election) else {
        return;
    };
    if now < e.auth_time || auth_age > auth_timeout {
        return;
    }
    if !e.auth_sent {
        t.current_epoch += 1;
        let epoch = t.current_epoch;
        if let Some(e) = election(t) {
            e.auth_epoch = epoch;
            e.auth_sent = true;
        }
        let flags = if mf_end != 0 { msg::MF_FORCEACK } else { 0 };
        if let Some(m) = bare(t, msg::AUTH_REQUEST, flags) {
            out.push((Dest::All, m));
        }
        return;
    }
    let needed = t.size() / 2 + 1;
    if e.auth_count >= needed {
        let epoch = e.auth_epoch;
        let n = &mut t.nodes_mut()[i];
        n.config_epoch = n.config_epoch.max(epoch);
        replace_primary(t, i);
        if let Some(pong) = merge::gossip_message(t, msg::PONG, None) {
            out.push((Dest::All, pong));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::bus::merge::{process, Link};
    use crate::cluster::topology::BusState;

    /// Node `me` of a cluster of three primaries (a, b, c owning thirds) and r, a's
    /// replica; everyone knows everyone.
    fn view(me: usize) -> Topology {
        let ids = ["a", "b", "c", "r"].map(|c| c.repeat(40));
        let mut t = Topology::default();
        for (k, id) in ids.iter().enumerate() {
            t.add_node(id.clone(), "127.0.0.1", 7000 + k as u16);
        }
        for s in 0..SLOTS as u16 {
            t.set_owner(s, Some(s as usize * 3 / SLOTS));
        }
        for k in 0..3 {
            t.nodes_mut()[k].config_epoch = k as u64 + 1;
        }
        t.current_epoch = 3;
        t.make_replica(3, 0);
        for n in t.nodes_mut() {
            n.bus.link = true;
        }
        t.bus = Some(BusState {
            me: ids[me].clone(),
            node_timeout: 1000,
            ..BusState::default()
        });
        t
    }

    fn deliver(to: &mut Topology, bytes: &[u8], now: i64) -> merge::Outcome {
        let m = msg::decode(bytes).expect("valid");
        process(to, Link::Inbound, "127.0.0.1", &m, now)
    }

    #[test]
    fn a_replica_of_a_failed_primary_is_elected_by_the_majority() {
        let (mut b, mut c, mut r) = (view(1), view(2), view(3));
        for t in [&mut b, &mut c, &mut r] {
            t.nodes_mut()[0].failed = true;
        }
        // The first cron schedules the election 500-1000 ms on; none asks before.
        assert!(cron(&mut r, 10_000, 7).is_empty());
        assert!(cron(&mut r, 10_400, 7).is_empty());
        let sent = cron(&mut r, 11_100, 7);
        let [(Dest::All, request)] = &sent[..] else {
            panic!("one request to all: {sent:?}")
        };
        assert_eq!(r.current_epoch, 4);
        let mut acks = Vec::new();
        for voter in [&mut b, &mut c] {
            let out = deliver(voter, request, 11_200);
            let [(Dest::Node(to), ack)] = &out.sends[..] else {
                panic!("a vote: {:?}", out.sends)
            };
            assert_eq!(to, &"r".repeat(40));
            // One vote per epoch: the same request again gets none.
            assert!(deliver(voter, request, 11_201).sends.is_empty());
            acks.push(ack.clone());
        }
        deliver(&mut r, &acks[0], 11_300);
        assert!(cron(&mut r, 11_350, 7).is_empty(), "one vote of two needed");
        deliver(&mut r, &acks[1], 11_400);
        let sent = cron(&mut r, 11_450, 7);
        assert!(matches!(&sent[..], [(Dest::All, _)]), "{sent:?}");
        assert!(r.nodes()[3].is_primary());
        assert_eq!(r.owner(0).map(|n| n.id.clone()), Some("r".repeat(40)));
        assert_eq!(r.nodes()[3].config_epoch, 4);
        // The winner's PONG moves the slots in a voter's view.
        deliver(&mut b, &sent[0].1, 11_500);
        assert_eq!(b.owner(0).map(|n| n.id.clone()), Some("r".repeat(40)));
        assert!(b.nodes()[3].is_primary());
    }

    #[test]
    fn primaries_refuse_a_vote_for_a_live_primary_s_replica() {
        let (mut b, mut r) = (view(1), view(3));
        let request = bare(&mut r, msg::AUTH_REQUEST, 0).unwrap();
        assert!(deliver(&mut b, &request, 10_000).sends.is_empty());
        // With FORCEACK (a manual failover) the same request is granted.
        let forced = bare(&mut r, msg::AUTH_REQUEST, msg::MF_FORCEACK).unwrap();
        assert_eq!(deliver(&mut b, &forced, 10_001).sends.len(), 1);
    }

    #[test]
    fn manual_failover_waits_for_the_paused_primary_s_offset() {
        const T: i64 = 100_000;
        let (mut a, mut r) = (view(0), view(3));
        r.bus.as_mut().unwrap().report.repl_offset = 90;
        assert_eq!(manual(&mut r, false, false, T), Ok(false));
        let (dest, mfstart) = r.bus.as_mut().unwrap().outbox.pop().unwrap();
        assert!(matches!(dest, Dest::Node(ref p) if *p == "a".repeat(40)));
        deliver(&mut a, &mfstart, T + 10);
        // Not paused yet (the engine has not said so): nothing is sent.
        assert!(cron(&mut a, T + 20, 0).is_empty());
        let mf_end = a.bus.as_ref().unwrap().election.mf_end;
        let report = &mut a.bus.as_mut().unwrap().report;
        report.paused_for = mf_end;
        report.repl_offset = 100;
        let sent = cron(&mut a, T + 30, 0);
        let [(Dest::Node(to), ping)] = &sent[..] else {
            panic!("{sent:?}")
        };
        assert_eq!(to, &"r".repeat(40));
        deliver(&mut r, ping, T + 40);
        // Behind the primary: no election yet.
        cron(&mut r, T + 50, 0);
        assert!(!r.bus.as_ref().unwrap().election.mf_can_start);
        r.bus.as_mut().unwrap().report.repl_offset = 100;
        cron(&mut r, T + 60, 0);
        let sent = cron(&mut r, T + 70, 0);
        let [(Dest::All, request)] = &sent[..] else {
            panic!("{sent:?}")
        };
        let m = msg::decode(request).unwrap();
        assert_eq!(m.header.typ, msg::AUTH_REQUEST);
        assert_eq!(m.header.mflags & msg::MF_FORCEACK, msg::MF_FORCEACK);
    }

    #[test]
    fn failover_refusals_and_takeover() {
        let mut a = view(0);
        assert_eq!(
            manual(&mut a, false, false, 1),
            Err(crate::errors::YOU_SHOULD_SEND_CLUSTER_FAILOVER_TO)
        );
        let mut r = view(3);
        r.nodes_mut()[0].failed = true;
        assert_eq!(
            manual(&mut r, false, false, 1),
            Err(crate::errors::MASTER_IS_DOWN_USE_FORCE)
        );
        assert_eq!(manual(&mut r, true, true, 1), Ok(true));
        assert!(r.nodes()[3].is_primary());
        assert_eq!(r.nodes()[3].config_epoch, 4);
        assert_eq!(r.owned_by(3), SLOTS / 3 + 1);
        // The old primary hears the PONG and turns into the new primary's replica.
        let (_, pong) = r.bus.as_mut().unwrap().outbox.pop().unwrap();
        let mut old = view(0);
        deliver(&mut old, &pong, 2);
        assert_eq!(old.nodes()[0].replica_of.as_deref(), Some(&*"r".repeat(40)));
        assert_eq!(old.owned_by(0), 0);
    }

    #[test]
    fn the_election_runs_as_soon_as_the_deciding_vote_arrives() {
        let (mut b, mut c, mut r) = (view(1), view(2), view(3));
        for t in [&mut b, &mut c, &mut r] {
            t.nodes_mut()[0].failed = true;
        }
        cron(&mut r, 10_000, 7);
        let sent = cron(&mut r, 11_100, 7);
        let [(Dest::All, request)] = &sent[..] else {
            panic!("{sent:?}")
        };
        let acks: Vec<Vec<u8>> = [&mut b, &mut c]
            .into_iter()
            .map(|voter| deliver(voter, request, 11_200).sends.remove(0).1)
            .collect();
        let first = deliver(&mut r, &acks[0], 11_300);
        assert!(first.failover_now);
        assert!(after_vote(&mut r, 11_300, 7).is_empty(), "one vote of two");
        let second = deliver(&mut r, &acks[1], 11_301);
        assert!(second.failover_now);
        // No cron in between: the vote that makes the majority promotes at once.
        let sent = after_vote(&mut r, 11_301, 7);
        assert!(matches!(&sent[..], [(Dest::All, _)]), "{sent:?}");
        assert!(r.nodes()[3].is_primary());
        // A vote from a node that is no slot-owning primary (r, in c's view) does not
        // count, and runs nothing.
        let ack = bare(&mut r, msg::AUTH_ACK, 0).unwrap();
        assert!(!deliver(&mut c, &ack, 11_400).failover_now);
    }

    #[test]
    fn a_nofailover_sibling_does_not_count_in_the_rank() {
        let mut r = view(3);
        let s = r.add_node("d".repeat(40), "127.0.0.1", 7004);
        r.make_replica(4, 0);
        r.nodes_mut()[4].bus.repl_offset = 500;
        assert_eq!(s, "d".repeat(40));
        assert_eq!(rank(&r, 3), 1);
        r.nodes_mut()[4].bus.nofailover = true;
        assert_eq!(rank(&r, 3), 0);
    }
}
