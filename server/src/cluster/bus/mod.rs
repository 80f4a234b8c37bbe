//! The cluster bus between redlab-server processes: what lets `redlab-server
//! --cluster-enabled yes` processes form a cluster the way real ones do (CLUSTER MEET,
//! ADDSLOTS, REPLICATE), each keeping its own view of the cluster and converging by
//! gossip.
//!
//! A node listens on its bus port (cluster-port, or port + 10000) and keeps one outbound
//! link to every node it knows, over which it sends PINGs (a MEET first, to a node met with
//! CLUSTER MEET) and reads PONGs; peers' links arrive on the listener, and each PING or MEET
//! there is answered with a PONG. Messages are Redis's `clusterMsg` (`msg`), merged into the
//! view as Redis merges them (`merge`).
//!
//! Failover (`failover`) runs on the same messages and cron: elections, votes, manual
//! failovers. What it needs of the engine (the replication offset, a write pause, following
//! a new primary or no longer following one) the engine reads and reports at each of its
//! ticks (`reconcile`), along with the bus settings CONFIG SET changed.
//!
//! Threads: the bus runs on a thread of its own (a current-thread runtime), not on the
//! engine's. The view is the same `Topology` behind a lock that an in-process cluster
//! shares, so the engine routes and answers CLUSTER NODES exactly as it does there, and a
//! long script never delays a pong (which would get the node marked failing).
//!
//! No peer can hang or crash a node: a message longer than `msg::MAX_LEN` or with a wrong
//! signature closes its link before anything is allocated for it, every write gives up
//! after the node timeout (a peer that never reads loses its link, not our thread), an
//! inbound link that stays silent for two node timeouts is closed, and each link is its own
//! task.

pub mod failover;
pub mod merge;
pub mod migration;
pub mod msg;
pub(crate) mod reconcile;

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, Notify};

use super::topology::{lock, Shared};
use merge::{Dest, Link};

/// Stops the bus when dropped (with the engine that owns it).
#[derive(Debug)]
pub struct Handle {
    _stop: oneshot::Sender<()>,
}

/// The time now in ms, as the bus's timers count it (wall clock, as Redis's mstime).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Starts the bus on its own thread, serving `listener` for the view in `shared`.
pub fn start(shared: Shared, listener: std::net::TcpListener) -> io::Result<Handle> {
    listener.set_nonblocking(true)?;
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("redlab-cluster-bus".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!("redlab: the cluster bus cannot start: {}", e);
                    return;
                }
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, run(shared, listener, rx));
        })?;
    Ok(Handle { _stop: tx })
}

/// Messages waiting for an outbound link (FAIL broadcasts), and the wake-up for its task.
#[derive(Default)]
struct Outbox {
    queue: RefCell<Vec<Vec<u8>>>,
    notify: Notify,
}

struct LinkSlot {
    outbox: Rc<Outbox>,
    task: tokio::task::JoinHandle<()>,
}

/// The bus thread's state: the view, and the outbound link of each node by its id.
struct Ctx {
    shared: Shared,
    links: RefCell<HashMap<String, LinkSlot>>,
}

/// The node timeout, and how often a link pings: a quarter of it, within [100 ms, 1 s].
fn timings(ctx: &Ctx) -> (Duration, Duration) {
    let timeout = lock(&ctx.shared)
        .bus
        .as_ref()
        .map_or(15_000, |b| b.node_timeout)
        .max(1) as u64;
    (
        Duration::from_millis(timeout),
        Duration::from_millis((timeout / 4).clamp(100, 1000)),
    )
}

async fn run(shared: Shared, listener: std::net::TcpListener, mut stop: oneshot::Receiver<()>) {
    let listener = match TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!("redlab: the cluster bus cannot listen: {}", e);
            return;
        }
    };
    let ctx = Rc::new(Ctx {
        shared,
        links: RefCell::new(HashMap::new()),
    });
    let mut cron = tokio::time::interval(Duration::from_millis(100));
    cron.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            // The handle dropped: the server stopped.
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::task::spawn_local(inbound(ctx.clone(), stream, peer.ip().to_string()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
            _ = cron.tick() => cron_tick(&ctx),
        }
    }
    for (_, slot) in ctx.links.borrow_mut().drain() {
        slot.task.abort();
    }
}

/// Every 100 ms: failure detection, failovers, what the engine queued, and one outbound
/// link per node with an address.
fn cron_tick(ctx: &Rc<Ctx>) {
    let now = now_ms();
    let (failed, wanted, sends) = {
        let mut t = lock(&ctx.shared);
        let failed = merge::cron(&mut t, now);
        let mut sends = failover::cron(&mut t, now, crate::rng::fresh_seed());
        if let Some(b) = t.bus.as_mut() {
            sends.append(&mut b.outbox);
        }
        let me = t.bus.as_ref().map(|b| b.me.clone()).unwrap_or_default();
        let wanted: Vec<String> = t
            .nodes()
            .iter()
            .filter(|n| n.id != me && !n.bus.noaddr)
            .map(|n| n.id.clone())
            .collect();
        (failed, wanted, sends)
    };
    for f in failed {
        broadcast_fail(ctx, &f);
    }
    for (dest, bytes) in sends {
        deliver(ctx, &dest, bytes);
    }
    let mut links = ctx.links.borrow_mut();
    links.retain(|id, slot| {
        let keep = wanted.contains(id);
        if !keep {
            slot.task.abort();
        }
        keep
    });
    for id in wanted {
        if let std::collections::hash_map::Entry::Vacant(slot) = links.entry(id) {
            let outbox = Rc::new(Outbox::default());
            let id = slot.key().clone();
            let task = tokio::task::spawn_local(outbound(ctx.clone(), id, outbox.clone()));
            slot.insert(LinkSlot { outbox, task });
        }
    }
}

/// Tells every linked node that `failed` failed.
fn broadcast_fail(ctx: &Ctx, failed: &str) {
    let Some(bytes) = merge::fail_message(&mut lock(&ctx.shared), failed) else {
        return;
    };
    deliver(ctx, &Dest::All, bytes);
}

/// Queues a message on our link to one node, or on every link (a node without a link now
/// misses it, as in Redis). Callers hold no lock on the view.
fn deliver(ctx: &Ctx, dest: &Dest, bytes: Vec<u8>) {
    let links = ctx.links.borrow();
    let push = |slot: &LinkSlot, bytes: Vec<u8>| {
        slot.outbox.queue.borrow_mut().push(bytes);
        slot.outbox.notify.notify_one();
    };
    match dest {
        Dest::Node(id) => {
            if let Some(slot) = links.get(id) {
                push(slot, bytes);
            }
        }
        Dest::All => {
            // As clusterBroadcastMessage: every linked node but those still in handshake.
            let handshakes: Vec<String> = lock(&ctx.shared)
                .nodes()
                .iter()
                .filter(|n| n.bus.handshake)
                .map(|n| n.id.clone())
                .collect();
            for (id, slot) in links.iter() {
                if !handshakes.contains(id) {
                    push(slot, bytes.clone());
                }
            }
        }
    }
}

/// Splits the bytes of a link into messages, refusing garbage as soon as its first 8 bytes
/// are in.
#[derive(Default)]
struct Framer {
    buf: BytesMut,
}

impl Framer {
    /// The next whole message, None until one is in, Err when the link must close.
    fn next(&mut self) -> Result<Option<Vec<u8>>, &'static str> {
        if self.buf.len() < msg::PREFIX_LEN {
            return Ok(None);
        }
        let len = msg::announced_len(&self.buf[..msg::PREFIX_LEN])?;
        if self.buf.len() < len {
            self.buf.reserve(len - self.buf.len());
            return Ok(None);
        }
        Ok(Some(self.buf.split_to(len).to_vec()))
    }
}

/// What a link does with one message: merge it, then the replies to send on this link.
struct Handled {
    outcome: merge::Outcome,
    replies: Vec<Vec<u8>>,
}

fn handle(ctx: &Ctx, link: Link, peer_ip: &str, frame: &[u8]) -> Handled {
    let Ok(m) = msg::decode(frame) else {
        return Handled {
            outcome: merge::Outcome {
                close: true,
                ..Default::default()
            },
            replies: Vec::new(),
        };
    };
    let mut t = lock(&ctx.shared);
    let now = now_ms();
    let mut outcome = merge::process(&mut t, link, peer_ip, &m, now);
    if outcome.failover_now {
        let sends = failover::after_vote(&mut t, now, crate::rng::fresh_seed());
        outcome.sends.extend(sends);
    }
    let mut replies = Vec::new();
    if outcome.pong && !outcome.close {
        let to = m.header.sender.clone();
        replies.extend(merge::gossip_message(&mut t, msg::PONG, Some(&to)));
    }
    if let Some(about) = &outcome.update {
        replies.extend(merge::update_message(&mut t, about));
    }
    drop(t);
    for (dest, bytes) in std::mem::take(&mut outcome.sends) {
        deliver(ctx, &dest, bytes);
    }
    Handled { outcome, replies }
}

/// Writes one message, giving up after `wait` (a peer that does not read). It counts in
/// CLUSTER INFO's cluster_stats_messages_*_sent as it goes out, once per link, as Redis's
/// clusterSendMessage counts (a broadcast counts once for each node it reaches).
async fn send(
    ctx: &Ctx,
    w: &mut tokio::net::tcp::OwnedWriteHalf,
    bytes: &[u8],
    wait: Duration,
) -> bool {
    if let Some(typ) = msg::type_of(bytes) {
        if let Some(b) = lock(&ctx.shared).bus.as_mut() {
            if let Some(c) = b.sent.get_mut(typ as usize) {
                *c += 1;
            }
        }
    }
    matches!(
        tokio::time::timeout(wait, w.write_all(bytes)).await,
        Ok(Ok(()))
    )
}

/// A link a peer opened: answer its PINGs and MEETs with PONGs.
async fn inbound(ctx: Rc<Ctx>, stream: TcpStream, peer_ip: String) {
    let (mut rd, mut wr) = stream.into_split();
    let mut framer = Framer::default();
    loop {
        let (timeout, _) = timings(&ctx);
        let idle = timeout.max(Duration::from_secs(5)).saturating_mul(2);
        match tokio::time::timeout(idle, rd.read_buf(&mut framer.buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return,
        }
        loop {
            let frame = match framer.next() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(_) => return,
            };
            let handled = handle(&ctx, Link::Inbound, &peer_ip, &frame);
            for f in &handled.outcome.failed {
                broadcast_fail(&ctx, f);
            }
            if handled.outcome.close {
                return;
            }
            for r in handled.replies {
                if !send(&ctx, &mut wr, &r, timeout).await {
                    return;
                }
            }
        }
    }
}

/// Our link to node `id`: connect, MEET or PING, then a PING every interval and a PONG
/// read back for each. When it ends (the peer went away, or stopped answering), the cron
/// opens a new one.
async fn outbound(ctx: Rc<Ctx>, id: String, outbox: Rc<Outbox>) {
    let mut id = id;
    link_session(&ctx, &mut id, &outbox).await;
    {
        let mut t = lock(&ctx.shared);
        if let Some(n) = t.node_mut(&id) {
            n.bus.link = false;
        }
    }
    let mut links = ctx.links.borrow_mut();
    if links
        .get(&id)
        .is_some_and(|slot| Rc::ptr_eq(&slot.outbox, &outbox))
    {
        links.remove(&id);
    }
}

async fn link_session(ctx: &Rc<Ctx>, id: &mut String, outbox: &Rc<Outbox>) {
    let (mut timeout, mut interval) = timings(ctx);
    let addr = {
        let t = lock(&ctx.shared);
        match t.node(id.as_str()) {
            Some(n) => format!("{}:{}", n.host, n.cport),
            None => return,
        }
    };
    let connected = tokio::time::timeout(timeout, TcpStream::connect(&addr)).await;
    let Ok(Ok(stream)) = connected else {
        // Unreachable: the ping counts as sent, so the node turns `fail?` after the timeout.
        {
            let mut t = lock(&ctx.shared);
            if let Some(n) = t.node_mut(id.as_str()) {
                if n.bus.ping_sent == 0 {
                    n.bus.ping_sent = now_ms();
                }
            }
        }
        tokio::time::sleep(interval).await;
        return;
    };
    let _ = stream.set_nodelay(true);
    let peer_ip = stream
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let (mut rd, mut wr) = stream.into_split();
    let linked_at = now_ms();
    let Some(first) = ping(ctx, id.as_str(), true) else {
        return;
    };
    if !send(ctx, &mut wr, &first, timeout).await {
        return;
    }
    let mut framer = Framer::default();
    let mut tick = tokio::time::interval(interval);
    tick.tick().await;
    loop {
        tokio::select! {
            read = rd.read_buf(&mut framer.buf) => {
                match read {
                    Ok(n) if n > 0 => {}
                    _ => return,
                }
                loop {
                    let frame = match framer.next() {
                        Ok(Some(f)) => f,
                        Ok(None) => break,
                        Err(_) => return,
                    };
                    let handled = handle(ctx, Link::Outbound(id.as_str()), &peer_ip, &frame);
                    if let Some(new) = &handled.outcome.renamed {
                        let mut links = ctx.links.borrow_mut();
                        if let Some(slot) = links.remove(id.as_str()) {
                            links.insert(new.clone(), slot);
                        }
                        *id = new.clone();
                    }
                    for f in &handled.outcome.failed {
                        broadcast_fail(ctx, f);
                    }
                    if handled.outcome.close {
                        return;
                    }
                    for r in handled.replies {
                        if !send(ctx, &mut wr, &r, timeout).await {
                            return;
                        }
                    }
                }
            }
            _ = outbox.notify.notified() => {
                let queued = std::mem::take(&mut *outbox.queue.borrow_mut());
                for m in queued {
                    if !send(ctx, &mut wr, &m, timeout).await {
                        return;
                    }
                }
            }
            _ = tick.tick() => {
                // CONFIG SET may have changed the node timeout: the pings follow it.
                let (t2, i2) = timings(ctx);
                timeout = t2;
                if i2 != interval {
                    interval = i2;
                    tick = tokio::time::interval(interval);
                    tick.tick().await;
                }
                // A ping pending for half the timeout on a link that old: reconnect, as
                // Redis does, in case the link rather than the node is the problem.
                let now = now_ms();
                let pending = lock(&ctx.shared).node(id.as_str()).map_or(0, |n| n.bus.ping_sent);
                let half = timeout.as_millis() as i64 / 2;
                if pending != 0 && now - pending > half && now - linked_at > half {
                    return;
                }
                let Some(p) = ping(ctx, id.as_str(), false) else { return };
                if !send(ctx, &mut wr, &p, timeout).await {
                    return;
                }
            }
        }
    }
}

/// The next message on the link to `id`: a MEET as the first message of a link to a node
/// met but not yet answered (so a link lost mid-handshake meets again), else a PING; the
/// ping counts as sent from now if none is pending.
fn ping(ctx: &Ctx, id: &str, first: bool) -> Option<Vec<u8>> {
    let mut t = lock(&ctx.shared);
    let n = t.node_mut(id)?;
    n.bus.link = true;
    let typ = if first && n.bus.meet {
        msg::MEET
    } else {
        msg::PING
    };
    if n.bus.ping_sent == 0 {
        n.bus.ping_sent = now_ms();
    }
    merge::gossip_message(&mut t, typ, Some(id))
}
