//! One client connection: read, parse, execute on the engine, write.
//!
//! The task never holds the engine or its own state across an `.await`: it borrows them
//! for one read batch and runs every complete request in the batch; the replies are written
//! in one go (so a pipeline costs one write) by the flusher, after the other connections
//! ready in the same turn ran too (see `flush.rs`). Output produced for this connection by others
//! (pub/sub messages, a blocked command's late reply, CLIENT KILL) arrives through its
//! `notify` (`wake::LocalNotify`).

use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use super::io::{ConnIo, ConnState, NetConfig, Registry};
use super::parser::Parsed;
use super::server::Shared;
use crate::reply::Reply;
use crate::session::{ConnId, NetMeters};

/// Output below this is never over a client-output-buffer-limit for Redis (it sits in the
/// client's 16 KiB static reply buffer, which the limit does not count), so the check after
/// each reply is skipped until this much waits.
const UNCOUNTED_OUTPUT: usize = 16 * 1024;

pub(crate) async fn serve(shared: Rc<Shared>, io_id: u64, io: Rc<ConnIo>) {
    refresh_net_config(&shared.engine.borrow(), &shared.registry);
    let refused = shared.registry.config.borrow().refuses(&io.stream);
    if refused {
        {
            let mut st = io.state.borrow_mut();
            if !st.closing {
                // (Refused during a busy script, it already got the error.)
                Reply::err(crate::errors::PROTECTED_MODE_DENIED).encode(2, &mut st.wbuf);
            }
        }
        let _ = io.flush().await;
        shared.registry.remove(io_id);
        return;
    }
    let addr = io.stream.peer_text();
    let laddr = io.stream.local_text();
    let reserved = io.state.borrow().conn_id;
    let conn = match reserved {
        Some(id) => shared
            .engine
            .borrow_mut()
            .connect_with_id(id, &addr, &laddr),
        None => shared.engine.borrow_mut().connect_from(&addr, &laddr),
    };
    io.state.borrow_mut().conn_id = Some(conn);
    shared.attach(conn, io.clone());
    if let Some(meters) = shared.engine.borrow().net_meters(conn) {
        io.state.borrow_mut().meters = meters;
    }
    loop {
        if dropped(&shared.engine.borrow(), conn) {
            break;
        }
        // Output the socket did not take is written out as the socket drains, one step at
        // a time. Meanwhile the client's requests still run, as in Redis, whose output
        // buffer grows while a client does not read: client-output-buffer-limit and
        // maxmemory-clients are what bound it (a client that writes a long pipeline before
        // reading any reply would otherwise never finish).
        let mut write_blocked = false;
        if io.state.borrow().write_pending {
            let mut st = io.state.borrow_mut();
            match io.write_now(&mut st) {
                Err(_) => break,
                Ok(_) if st.wbuf.is_empty() => {
                    st.write_pending = false;
                    super::io::shrink(&mut st);
                }
                Ok(blocked) => write_blocked = blocked,
            }
        }
        let (close, delay, write_pending, woken) = {
            let mut st = io.state.borrow_mut();
            if !st.closing && !io.read_available(&mut st) {
                st.closing = true;
            }
            let (close, delay, woken) = handle_batch(&shared, conn, &mut st);
            let close = close || st.closing;
            if !close && delay.is_none() && !st.write_pending && !st.wbuf.is_empty() && !st.queued {
                st.queued = true;
                shared.flusher.queue(&io);
            }
            (close, delay, st.write_pending, woken)
        };
        // After this client's own reply is queued: the flusher writes it first, then what
        // its commands produced for others (a replica's stream, a subscriber's message).
        for c in woken {
            if !shared.feed_replica(c) {
                shared.wake(c);
            }
        }
        if let Some(d) = delay {
            // An injected network delay: the whole batch's replies travel together, so a
            // pipeline pays it once, as on a real network. tokio's timer has millisecond
            // granularity (1.5 ms would become 2-3 ms), so the wait runs on the blocking pool,
            // which sleeps to the microsecond while this thread serves everyone else.
            let _ = tokio::task::spawn_blocking(move || std::thread::sleep(d)).await;
        }
        if close && dropped(&shared.engine.borrow(), conn) {
            break;
        }
        if close || delay.is_some() {
            let failed = io.flush().await.is_err();
            if failed || close {
                break;
            }
        }
        if write_pending && !write_blocked {
            // A write step done with more to write: the others get their turn first.
            tokio::task::yield_now().await;
            continue;
        }
        if write_pending {
            // New output for this client (a publish) wakes it too, as it may put it over
            // its limit.
            tokio::select! {
                r = io.stream.writable() => if r.is_err() { break },
                r = io.stream.readable() => if r.is_err() { break },
                _ = io.notify.notified() => {}
            }
            continue;
        }
        // The socket or a notification, whichever comes first. A `select!` over
        // `readable()` linked a waiter into the socket's list and unlinked it again on every
        // request; the reader slot and the notification's waker stay where they are.
        let woke = std::future::poll_fn(|cx| match io.stream.poll_read_ready(cx) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => io.notify.poll_notified(cx).map(Ok),
        })
        .await;
        if woke.is_err() {
            break;
        }
    }
    shared.engine.borrow_mut().disconnect(conn);
    shared.detach(conn);
    shared.registry.remove(io_id);
}

/// Whether the connection is to close at once, what it had pending dropped: over its output
/// limit, evicted by maxmemory-clients, or closed by another client (CLIENT KILL, ACL
/// DELUSER), as Redis frees such a client without writing its output (a client that does
/// not read would otherwise hold its output, and its task, for good).
fn dropped(engine: &crate::Engine, conn: ConnId) -> bool {
    engine.must_close_now(conn) || !engine.is_connected(conn)
}

/// Copies what the busy-script loop needs out of the configuration, when it changed.
pub(crate) fn refresh_net_config(engine: &crate::Engine, registry: &Registry) {
    let config = engine.config();
    if registry.config.borrow().generation != config.generation {
        *registry.config.borrow_mut() = NetConfig::of(config);
    }
}

/// Whether a client's unprocessed input passed client-query-buffer-limit: Redis closes it
/// without a reply.
pub(crate) fn over_query_limit(st: &ConnState, config: &NetConfig) -> bool {
    (st.rbuf.len() + st.parser.held_bytes()) as u64 > config.query_buffer_limit
}

/// What `handle_batch` tells its caller: close once the output is written, how long an
/// injected delay holds the replies, and the other connections that got output.
type BatchEnd = (bool, Option<Duration>, Vec<ConnId>);

/// Runs every complete request in the read buffer; returns whether the connection must
/// close once its output is written, how long an injected delay holds the replies, and the
/// other connections that got output meanwhile (to wake once this one's reply is queued).
fn handle_batch(shared: &Shared, conn: ConnId, st: &mut ConnState) -> BatchEnd {
    let mut engine = shared.engine.borrow_mut();
    let mut close = false;
    let mut delay: Option<Duration> = None;
    super::busy_poll::arm(engine.config().busy_poll_us);
    engine.begin_batch();
    let resp = engine.resp(conn);
    drain_output(&mut engine, conn, resp, st);
    for op in std::mem::take(&mut st.catch_up) {
        super::busy::catch_up(&mut engine, conn, op);
    }
    if over_query_limit(st, &shared.registry.config.borrow()) {
        tracing::warn!(
            "redlab: closing client {} that reached max query buffer length",
            conn
        );
        st.rbuf.clear();
        engine.end_batch();
        let woken = engine.take_wakeups();
        return (true, None, woken);
    }
    engine.note_buffers(conn, st.qbuf());
    let mut batch = std::mem::take(&mut st.query_batch);
    batch.begin(NetMeters::get(&st.meters.qbuf), st.qbuf() as u64);
    // Refreshed after each command: one look-up of the session per request.
    let mut status = engine.net_status(conn, false);
    loop {
        if status.blocked || status.close || status.close_now {
            break;
        }
        let from_buffer = st.deferred.is_empty();
        let parsed = match st.deferred.pop_front() {
            // Admitted during a busy script, run now that it is over.
            Some(args) => Ok(Parsed::Command(args)),
            None => {
                let e = &mut *engine;
                let max_bulk = e.config().proto_max_bulk_len;
                st.parser.next_pooled(
                    &mut st.rbuf,
                    max_bulk,
                    status.authenticated,
                    &mut e.arg_buffer,
                )
            }
        };
        match parsed {
            Ok(Parsed::Command(args)) => {
                if from_buffer {
                    batch.command_done(st.qbuf() as u64, args.last().map(|a| a.len() as u64));
                }
                refresh_net_config(&engine, &shared.registry);
                let reply = engine.execute_args(conn, args);
                status = engine.net_status(conn, true);
                if status.has_output {
                    drain_output(&mut engine, conn, status.resp, st);
                }
                if let Some(d) = status.fault_delay {
                    delay = Some(delay.map_or(d, |x| x.max(d)));
                }
                match status.fault_truncate {
                    Some(n) => {
                        let mut full = bytes::BytesMut::new();
                        reply.encode(status.resp, &mut full);
                        st.wbuf.extend_from_slice(&full[..n.min(full.len())]);
                    }
                    None => reply.encode(status.resp, &mut st.wbuf),
                }
                if st.wbuf.len() > UNCOUNTED_OUTPUT {
                    st.meters.set_unsent(st.wbuf.len());
                    status.close_now = engine.enforce_output_limits(conn);
                }
            }
            Ok(Parsed::Empty) => {}
            Ok(Parsed::Incomplete) => break,
            Err(e) => {
                Reply::Error(e.0).encode(status.resp, &mut st.wbuf);
                close = true;
                break;
            }
        }
    }
    // BCAST invalidations of the batch, this client's own included.
    engine.end_batch();
    if engine.has_output(conn) {
        let resp = engine.resp(conn);
        drain_output(&mut engine, conn, resp, st);
    }
    if let Some(view) = engine.conn_view(conn) {
        st.view = view;
        engine.copy_conn_user(conn, &mut st.user);
    }
    engine.note_buffers(conn, st.qbuf());
    batch.pending_big_arg = st.parser.pending_bulk().map(|l| l as u64);
    st.meters.query.after_batch(&batch);
    st.query_batch = batch;
    st.report();
    // Redis checks the clients' memory after each read too (beforeNextClient): a client
    // whose half-read request takes it over maxmemory-clients goes before it completes.
    if engine.config().maxmemory_clients != "0" {
        engine.evict_clients(Some(conn));
    }
    if st.wbuf.len() > UNCOUNTED_OUTPUT {
        engine.enforce_output_limits(conn);
    }
    // Over its output limit: closed before what it holds is written (none of it is sent).
    close |= engine.should_close(conn) || engine.must_close_now(conn);
    if engine.shutdown_requested() {
        shared.shutdown.notify_one();
    }
    let mut woken = engine.take_wakeups();
    woken.retain(|&c| c != conn);
    (close, delay, woken)
}

/// Encodes the output others produced for this connection (pub/sub, MONITOR, late replies)
/// in protocol `resp`, all of it: a reply written after it must follow it.
fn drain_output(engine: &mut crate::Engine, conn: ConnId, resp: u8, st: &mut ConnState) {
    while let Some(r) = engine.pop_output(conn) {
        r.encode(resp, &mut st.wbuf);
    }
}
