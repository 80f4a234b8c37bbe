//! Output held for a client, and the limits on it (client-output-buffer-limit).
//!
//! Output for a connection waits in two places: the engine's outbox (pub/sub messages,
//! MONITOR lines, late replies, not yet encoded) and the shell's write buffer (encoded, not
//! yet taken by the socket; the shell reports its size through `NetMeters`). Their sum is
//! what Redis calls the client's output buffer. It is checked each time output is added, as
//! Redis does: over the class's hard limit, or over its soft limit for longer than allowed,
//! the client is closed at once and what it had pending is dropped.

use std::sync::Arc;

use crate::config::{ClientClass, OutputLimit};
use crate::engine::{Call, Engine};
use crate::reply::Reply;
use crate::session::{encoded_size, ConnId, NetMeters, ReplyMode};

/// A reply produced piece by piece (Redis 7.0's random-member loops), checked against its
/// client's output limits as it grows, as Redis checks its limits each time it adds a block
/// to a client's output. Once over, the producer stops (Redis breaks out of those loops once
/// the client is marked to close), so a reply too big for the limit is never built whole.
#[derive(Debug)]
pub(crate) struct OutputWatch {
    limit: OutputLimit,
    /// What the client held before this reply.
    held: u64,
    /// A copy of the client's soft-limit timer, kept by `exceeded` as the reply grows.
    soft_since: Option<i64>,
    now_ms: i64,
}

impl OutputWatch {
    /// Whether the client, holding `produced` bytes more, is to be closed now.
    pub(crate) fn over(&mut self, produced: usize) -> bool {
        self.limit.exceeded(
            self.held + produced as u64,
            &mut self.soft_since,
            self.now_ms,
        )
    }

    /// The output the client would hold with `produced` bytes more.
    pub(crate) fn held_with(&self, produced: usize) -> u64 {
        self.held + produced as u64
    }
}

impl Engine {
    /// Queues `reply` in `conn`'s outbox, then enforces the output limits. A client being
    /// closed for its output gets nothing more.
    pub(crate) fn queue_output(&mut self, conn: ConnId, reply: Reply) -> bool {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return false;
        };
        if s.close_now {
            return false;
        }
        s.outbox_bytes += encoded_size(&reply);
        s.outbox.push_back(reply);
        // Output that still fits the client's reply buffer counts for nothing, and with no
        // soft-limit timer running the check below would change nothing: skipped. A replica
        // gets every replicated write through here, and the check was ~350 instructions.
        if s.output_bytes() == 0 && s.obuf_soft_since.is_none() {
            return true;
        }
        self.enforce_output_limits(conn);
        true
    }

    /// Encodes everything waiting in `conn`'s outbox onto `out` in the client's protocol,
    /// with one look-up of its session (`pop_output` looks it up per reply); returns false
    /// when it is gone.
    pub(crate) fn encode_output(&mut self, conn: ConnId, out: &mut bytes::BytesMut) -> bool {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return false;
        };
        while let Some(r) = s.outbox.pop_front() {
            r.encode(s.resp, out);
        }
        s.outbox_bytes = 0;
        true
    }

    /// Checks `conn`'s output against its class's client-output-buffer-limit, as Redis does
    /// each time output is added to a client: over the hard limit, or over the soft limit
    /// for longer than allowed, it is marked to close at once and what it had pending is
    /// dropped. Returns whether it is to close (or gone). The shell calls it after the
    /// replies it encodes (a client that does not read keeps running its requests, as in
    /// Redis, so its output grows until a limit or client eviction stops it).
    pub(crate) fn enforce_output_limits(&mut self, conn: ConnId) -> bool {
        let now = self.clock.now_ms();
        let Some(limit) = self.output_limit(conn) else {
            return true;
        };
        let Some(s) = self.sessions.get_mut(&conn) else {
            return true;
        };
        if s.close_now {
            return true;
        }
        let used = s.output_bytes();
        self.buffer_peaks.record(now, 0, used);
        let s = self.sessions.get_mut(&conn).expect("checked above");
        if limit.exceeded(used, &mut s.obuf_soft_since, now) {
            self.close_for_output(conn, used);
        }
        self.must_close_now(conn)
    }

    /// The client-output-buffer-limit of `conn`'s class; None when it is gone.
    fn output_limit(&self, conn: ConnId) -> Option<OutputLimit> {
        let class = if self.is_replica_conn(conn) {
            ClientClass::Replica
        } else {
            self.sessions.get(&conn)?.client_class()
        };
        Some(self.config.client_output_buffer_limit.get(class))
    }

    /// Closes `conn` for its output, as Redis's closeClientOnOutputBufferLimitReached does:
    /// logged, marked to close at once, and what it had pending dropped (none of it is sent).
    /// `used` is the output it would hold.
    pub(crate) fn close_for_output(&mut self, conn: ConnId, used: u64) {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return;
        };
        tracing::warn!(
            "redlab: client {} closed for overcoming of output buffer limits ({} bytes held)",
            conn,
            used
        );
        s.close_now = true;
        s.outbox.clear();
        s.outbox_bytes = 0;
    }

    /// A watch over the reply `call` is producing, when its client's output limits can stop
    /// that reply before it ends; None when nothing can (the reply is then built whole).
    /// Only a command the client sent itself is watched, whose reply is going to be sent
    /// (CLIENT REPLY ON): a script's and a transaction's commands answer into a reply that
    /// is not the client's output until it is complete. And only a class with a hard limit,
    /// or a soft limit whose time is already up: the clock does not move during a command,
    /// so a soft limit reached in it only starts its timer, as in Redis.
    pub(crate) fn output_watch(&self, call: &Call) -> Option<OutputWatch> {
        if call.in_script || call.in_multi {
            return None;
        }
        let limit = self.output_limit(call.conn)?;
        let s = self.sessions.get(&call.conn)?;
        if s.close_now || s.reply_mode != ReplyMode::On {
            return None;
        }
        let now_ms = self.clock.now_ms();
        let soft_due = limit.soft > 0 && limit.soft_time_up(s.obuf_soft_since, now_ms);
        if limit.hard == 0 && !soft_due {
            return None;
        }
        Some(OutputWatch {
            limit,
            held: s.output_bytes(),
            soft_since: s.obuf_soft_since,
            now_ms,
        })
    }

    /// Redis's clientsCron checks the limits too: a client that stays over its soft limit
    /// while nothing new is sent to it is closed once its time is up, not at its next
    /// output (which may never come). Only clients already over the soft limit are looked at.
    pub(crate) fn enforce_soft_limits_idle(&mut self) {
        let over: Vec<ConnId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.obuf_soft_since.is_some() && !s.close_now)
            .map(|(id, _)| *id)
            .collect();
        for conn in over {
            if self.enforce_output_limits(conn) {
                // The shell of an idle connection learns it must close when woken.
                self.wakeups.push(conn);
            }
        }
    }

    /// The next reply waiting in `conn`'s outbox, for the shell to encode.
    pub fn pop_output(&mut self, conn: ConnId) -> Option<Reply> {
        let s = self.sessions.get_mut(&conn)?;
        let r = s.outbox.pop_front()?;
        s.outbox_bytes = s.outbox_bytes.saturating_sub(encoded_size(&r));
        Some(r)
    }

    /// Whether output for `conn` waits in the engine.
    pub fn has_output(&self, conn: ConnId) -> bool {
        self.sessions
            .get(&conn)
            .is_some_and(|s| !s.outbox.is_empty())
    }

    /// The client went over its output limit: close it now, without writing what it holds.
    pub fn must_close_now(&self, conn: ConnId) -> bool {
        self.sessions.get(&conn).is_some_and(|s| s.close_now)
    }

    /// Where the shell reports what it holds for `conn`.
    pub(crate) fn net_meters(&self, conn: ConnId) -> Option<Arc<NetMeters>> {
        self.sessions.get(&conn).map(|s| s.net.clone())
    }

    /// The shell's sizes for `conn` right now (query buffer, output it holds), for INFO's
    /// recent maximums; the output limits are checked when output is added. The time is the
    /// engine's "now" of its last command or tick (at most a tick old), not a clock read:
    /// the peaks are kept per second, and the shell reports twice per batch of requests.
    pub(crate) fn note_buffers(&mut self, conn: ConnId, qbuf: usize) {
        let out = self.sessions.get(&conn).map_or(0, |s| s.output_bytes());
        self.buffer_peaks.record(self.now_ms, qbuf as u64, out);
    }

    /// What the network shell needs of a connection between two of its requests, read in
    /// one look-up of its session rather than one per question. With `take_faults`, the
    /// delay and truncation a fault left for the last reply are taken (they apply once).
    pub(crate) fn net_status(&mut self, conn: ConnId, take_faults: bool) -> NetStatus {
        let Some(s) = self.sessions.get_mut(&conn) else {
            // Gone: the shell closes it.
            return NetStatus {
                resp: 2,
                close: true,
                ..NetStatus::default()
            };
        };
        let (fault_delay, fault_truncate) = if take_faults {
            (s.fault_delay.take(), s.fault_truncate.take())
        } else {
            (None, None)
        };
        NetStatus {
            resp: s.resp,
            authenticated: s.authenticated,
            blocked: s.blocked.is_some(),
            close: s.close_requested,
            close_now: s.close_now,
            has_output: !s.outbox.is_empty(),
            fault_delay,
            fault_truncate,
        }
    }
}

/// A connection's state as the network shell reads it after each request (`net_status`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NetStatus {
    /// The protocol its replies are encoded in.
    pub resp: u8,
    /// Whether the parser applies the limits for authenticated clients.
    pub authenticated: bool,
    /// Waiting in a blocking command: its next requests wait too.
    pub blocked: bool,
    /// Close once its output is written (QUIT, CLIENT KILL, a fault).
    pub close: bool,
    /// Close at once, dropping its output (over its output limit).
    pub close_now: bool,
    /// Output others produced for it waits in the engine's outbox.
    pub has_output: bool,
    /// A Delay fault: the batch's replies are held this long.
    pub fault_delay: Option<std::time::Duration>,
    /// A Truncate fault: only this many bytes of the last reply are sent.
    pub fault_truncate: Option<usize>,
}

#[cfg(test)]
mod tests {
    use crate::session::NetMeters;
    use crate::{Config, Engine, Reply};

    fn publish(e: &mut Engine, payload: usize) {
        let r = e.execute(1, &[&b"PUBLISH"[..], b"ch", &vec![b'x'; payload]]);
        assert!(matches!(r, Reply::Int(_)), "{r:?}");
    }

    #[test]
    fn a_subscriber_over_the_hard_limit_is_closed_and_gets_nothing_more() {
        let mut e = Engine::new(Config::default());
        e.execute(
            2,
            &[
                "CONFIG",
                "SET",
                "client-output-buffer-limit",
                "pubsub 100kb 0 0",
            ],
        );
        e.execute(2, &["SUBSCRIBE", "ch"]);
        let _ = e.take_output(2);
        for _ in 0..9 {
            publish(&mut e, 10_000);
        }
        assert!(!e.must_close_now(2));
        // What the shell still holds counts too.
        NetMeters::set(&e.sessions[&2].net.unsent, 20_000);
        publish(&mut e, 10_000);
        assert!(e.must_close_now(2));
        assert!(e.take_output(2).is_empty(), "pending output is dropped");
        publish(&mut e, 10);
        assert!(e.take_output(2).is_empty());
    }

    #[test]
    fn soft_limit_closes_after_its_seconds_on_the_engine_clock() {
        let (clock, mut e) = subscriber_over_soft_limit(5);
        clock.advance(std::time::Duration::from_secs(5));
        publish(&mut e, 10);
        assert!(!e.must_close_now(2), "5 s over the soft limit is allowed");
        clock.advance(std::time::Duration::from_secs(1));
        publish(&mut e, 10);
        assert!(e.must_close_now(2));
    }

    /// Client 2 subscribed under a 10 kB soft limit of `seconds`, sent 20 kB more than its
    /// 16 KiB reply buffer holds, and has not read it.
    fn subscriber_over_soft_limit(seconds: u64) -> (crate::Clock, Engine) {
        let clock = crate::Clock::manual(1_000_000);
        let mut e = Engine::with_clock(Config::default(), clock.clone());
        let limit = format!("pubsub 0 10kb {seconds}");
        e.execute(2, &["CONFIG", "SET", "client-output-buffer-limit", &limit]);
        e.execute(2, &["SUBSCRIBE", "ch"]);
        publish(&mut e, 16 * 1024 + 20_000);
        (clock, e)
    }

    #[test]
    fn soft_limit_closes_an_idle_client_from_the_tick() {
        let (clock, mut e) = subscriber_over_soft_limit(3);
        e.take_wakeups();
        clock.advance(std::time::Duration::from_secs(3));
        e.tick();
        assert!(!e.must_close_now(2), "3 s over the soft limit is allowed");
        clock.advance(std::time::Duration::from_secs(1));
        e.tick();
        assert!(e.must_close_now(2), "closed with no new output");
        assert!(
            e.take_wakeups().contains(&2),
            "its shell is woken to close it"
        );
    }

    #[test]
    fn a_client_back_under_its_soft_limit_is_kept_by_the_tick() {
        let (clock, mut e) = subscriber_over_soft_limit(3);
        // The client read its messages.
        e.take_output(2);
        clock.advance(std::time::Duration::from_secs(10));
        e.tick();
        assert!(!e.must_close_now(2));
    }

    #[test]
    fn a_normal_client_over_its_limit_is_closed_when_its_output_is_checked() {
        let mut e = Engine::new(Config::default());
        e.execute(
            1,
            &[
                "CONFIG",
                "SET",
                "client-output-buffer-limit",
                "normal 1mb 0 0",
            ],
        );
        e.execute(2, &["PING"]);
        // The replies the shell encoded and the socket did not take.
        NetMeters::set(&e.sessions[&2].net.unsent, 512 * 1024);
        assert!(!e.enforce_output_limits(2));
        NetMeters::set(&e.sessions[&2].net.unsent, 2 << 20);
        assert!(e.enforce_output_limits(2));
        assert!(e.must_close_now(2));
        // Its memory is no longer counted (it is gone for Redis).
        assert!(e.clients_memory().normal < 1 << 20);
    }

    #[test]
    fn normal_clients_have_no_limit_by_default() {
        let mut e = Engine::new(Config::default());
        e.execute(2, &["MONITOR"]);
        for _ in 0..100 {
            e.execute(1, &[&b"SET"[..], b"k", &vec![b'x'; 100_000]]);
        }
        assert!(!e.must_close_now(2));
        assert!(e.pop_output(2).is_some());
    }
}
