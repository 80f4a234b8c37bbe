//! Per-connection state: selected db, protocol, name, transaction, subscriptions, output.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use foldhash::fast::FixedState;
use indexmap::IndexSet;

use crate::reply::Reply;

/// Identifies a connection to the engine; also its CLIENT ID.
pub type ConnId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    Skip,
    /// Set by SKIP; becomes `On` after the next command.
    SkipNext,
}

/// A queued MULTI transaction.
#[derive(Debug, Default)]
pub struct MultiState {
    pub queue: Vec<Vec<Bytes>>,
    /// A queued command was refused (unknown, wrong arity, ...): EXEC answers EXECABORT.
    pub aborted: bool,
    /// Under `rename-command`, the name the client typed for each queued command, by its
    /// position in `queue` (empty without renames): EXEC's MONITOR and SLOWLOG lines show
    /// it, as Redis's do.
    pub typed: Vec<(usize, Bytes)>,
}

/// A command waiting for data (BLPOP and friends).
#[derive(Debug)]
pub struct Blocked {
    pub db: usize,
    pub keys: Vec<Vec<u8>>,
    /// Absolute deadline in Unix ms; None waits forever.
    pub deadline: Option<i64>,
    /// The command, run again when one of its keys is ready.
    pub args: Vec<Bytes>,
    /// What the client gets on timeout (a null array or a null bulk string).
    pub timeout_reply: Reply,
    /// Held back by CLIENT PAUSE (no keys): the command runs again when the pause ends.
    pub postponed: bool,
    /// How long the call that blocked ran, in microseconds: Redis adds it to the call that
    /// serves the client (or to nothing, on a timeout) in INFO commandstats and
    /// latency-tracking (`updateStatsOnUnblock`).
    pub first_us: u64,
    /// Under `rename-command`, the name the client typed (`args` names the table's
    /// command): the SLOWLOG entry of the call that serves it shows it, as Redis's does.
    pub typed: Option<Bytes>,
}

impl Blocked {
    /// Puts back the name the client typed (`rename-command`) once the command is resolved:
    /// what SLOWLOG shows of it from here on.
    pub fn show_as_typed(&mut self) {
        if let Some(t) = self.typed.take() {
            self.args[0] = t;
        }
    }
}

#[derive(Debug)]
pub struct Session {
    pub id: ConnId,
    pub db: usize,
    pub resp: u8,
    pub name: Option<Vec<u8>>,
    pub lib_name: Option<Vec<u8>>,
    pub lib_ver: Option<Vec<u8>>,
    pub authenticated: bool,
    /// The ACL user the connection runs as (`default` until AUTH names another).
    pub user: String,
    /// The user may run anything: the dispatcher skips the permission check.
    pub acl_free: bool,
    pub addr: String,
    pub laddr: String,
    pub created_ms: i64,
    pub last_interaction_ms: i64,
    pub last_command: std::borrow::Cow<'static, str>,
    pub multi: Option<MultiState>,
    /// (db, key) pairs under WATCH.
    pub watched: Vec<(usize, Vec<u8>)>,
    /// A watched key was modified: the next EXEC fails.
    pub watch_dirty: bool,
    /// Watched keys that were already past their deadline (still stored) when WATCHed: as in
    /// Redis 7.0, their removal by expiry is no change, and EXEC does not count them expired.
    pub watched_expired: Vec<(usize, Vec<u8>)>,
    pub channels: IndexSet<Vec<u8>, FixedState>,
    pub patterns: IndexSet<Vec<u8>, FixedState>,
    /// Shard channels (SSUBSCRIBE); counted apart from the others, as Redis does.
    pub shard_channels: IndexSet<Vec<u8>, FixedState>,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    pub no_touch: bool,
    pub monitor: bool,
    /// A replica of this server feeds from this connection (REPLCONF / PSYNC / SYNC):
    /// CLIENT LIST shows flag S and TYPE replica matches it.
    pub replica: bool,
    /// CLIENT TRACKING mode (client-side caching).
    pub tracking: crate::engine::tracking::ClientTracking,
    pub blocked: Option<Blocked>,
    /// Replies produced outside this connection's own request: pub/sub messages, MONITOR
    /// lines, the late reply of a blocked command. The shell drains it.
    pub outbox: VecDeque<Reply>,
    /// Estimated bytes of `outbox` once encoded.
    pub outbox_bytes: u64,
    /// The reply buffer Redis would have given this client (`client_reply`).
    pub reply_buf: crate::client_reply::ReplyBuf,
    /// Written by the network shell: what it holds for this connection (see `NetMeters`).
    pub net: Arc<NetMeters>,
    /// Commands this client ran, counted as Valkey's `tot-cmds` is: each one that ran (EXEC's
    /// commands and a script's `redis.call`s included), not one refused before it ran.
    pub commands_run: u64,
    /// MULTI or WATCH ran on this connection once: Valkey 8 keeps the transaction state from
    /// then on, and CLIENT LIST shows `multi=0` rather than -1 outside a transaction.
    pub had_multi_state: bool,
    /// When the output first went over the class's soft limit (engine ms).
    pub obuf_soft_since: Option<i64>,
    /// The connection must be closed after its pending output is written (QUIT, CLIENT KILL).
    pub close_requested: bool,
    /// The connection must be closed at once, its pending output dropped
    /// (client-output-buffer-limit reached).
    pub close_now: bool,
    /// Set by a fault: hold this connection's replies back this long (see faults.rs).
    pub fault_delay: Option<std::time::Duration>,
    /// Set by a fault: send only this many bytes of the last reply, then close.
    pub fault_truncate: Option<usize>,
}

/// The ACL user a new connection runs as.
pub const DEFAULT_USER: &str = "default";
/// The peer and local address of a connection opened without a socket (`Engine::connect`).
pub const NO_SOCKET_ADDR: &str = "127.0.0.1:0";

/// The strings and meters a session owns, for `Session::renew` to reuse.
struct Parts {
    user: String,
    addr: String,
    laddr: String,
    net: Arc<NetMeters>,
}

impl Session {
    pub fn new(id: ConnId, now_ms: i64, authenticated: bool) -> Session {
        let parts = Parts {
            user: DEFAULT_USER.into(),
            addr: NO_SOCKET_ADDR.into(),
            laddr: NO_SOCKET_ADDR.into(),
            net: Arc::default(),
        };
        Session::from_parts(id, now_ms, authenticated, parts)
    }

    /// What `new` gives, built in the allocations of a closed session: its user and address
    /// strings, and its meters when nothing else holds them (the network shell of a live
    /// connection does). The explorer closes and opens its connections at every schedule.
    pub fn renew(old: Session, id: ConnId, now_ms: i64, authenticated: bool) -> Session {
        let Session {
            mut user,
            mut addr,
            mut laddr,
            mut net,
            ..
        } = old;
        for (s, value) in [
            (&mut user, DEFAULT_USER),
            (&mut addr, NO_SOCKET_ADDR),
            (&mut laddr, NO_SOCKET_ADDR),
        ] {
            s.clear();
            s.push_str(value);
        }
        match Arc::get_mut(&mut net) {
            Some(meters) => *meters = NetMeters::default(),
            None => net = Arc::default(),
        }
        let parts = Parts {
            user,
            addr,
            laddr,
            net,
        };
        Session::from_parts(id, now_ms, authenticated, parts)
    }

    fn from_parts(id: ConnId, now_ms: i64, authenticated: bool, parts: Parts) -> Session {
        let Parts {
            user,
            addr,
            laddr,
            net,
        } = parts;
        Session {
            id,
            db: 0,
            resp: 2,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated,
            user,
            acl_free: true,
            addr,
            laddr,
            created_ms: now_ms,
            last_interaction_ms: now_ms,
            last_command: "NULL".into(),
            multi: None,
            watched: Vec::new(),
            watch_dirty: false,
            watched_expired: Vec::new(),
            channels: IndexSet::default(),
            patterns: IndexSet::default(),
            shard_channels: IndexSet::default(),
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            monitor: false,
            replica: false,
            tracking: Default::default(),
            blocked: None,
            outbox: VecDeque::new(),
            outbox_bytes: 0,
            reply_buf: crate::client_reply::ReplyBuf::new(now_ms),
            net,
            commands_run: 0,
            had_multi_state: false,
            obuf_soft_since: None,
            close_requested: false,
            close_now: false,
            fault_delay: None,
            fault_truncate: None,
        }
    }

    /// Subscribed to any channel, pattern or shard channel (RESP2 restricts the commands then).
    pub fn in_pubsub(&self) -> bool {
        !self.channels.is_empty() || !self.patterns.is_empty() || !self.shard_channels.is_empty()
    }
}

/// What the network shell holds for one connection, written by the shell as it reads and
/// writes (atomics, so the engine stays `Send`; one thread uses them, so relaxed ordering).
/// The engine reads them for client-output-buffer-limit and CLIENT LIST.
#[derive(Debug, Default)]
pub struct NetMeters {
    /// Encoded replies not yet written to the socket.
    pub unsent: AtomicU64,
    /// The most `unsent` held since the engine last reset it (the reply buffer's peak).
    pub reply_peak: AtomicU64,
    /// Bytes of the query buffer not yet run (`qbuf`).
    pub qbuf: AtomicU64,
    /// Room left in the query buffer's allocation (`qbuf-free`).
    pub qbuf_free: AtomicU64,
    /// Bytes read from the socket so far (Valkey's `tot-net-in`).
    pub bytes_in: AtomicU64,
    /// Bytes written to the socket so far (Valkey's `tot-net-out`).
    pub bytes_out: AtomicU64,
    /// The query buffer as Redis 7 would have sized it (CLIENT LIST's qbuf-free).
    pub query: crate::client_query::QueryBufModel,
}

impl NetMeters {
    pub fn set(field: &AtomicU64, v: usize) {
        field.store(v as u64, Ordering::Relaxed);
    }

    pub fn get(field: &AtomicU64) -> u64 {
        field.load(Ordering::Relaxed)
    }

    /// Records the output held for the socket, and the peak the reply buffer's cron reads.
    pub fn set_unsent(&self, n: usize) {
        let n = n as u64;
        self.unsent.store(n, Ordering::Relaxed);
        // One thread writes the meters: a plain compare is enough (no atomic max).
        if n > self.reply_peak.load(Ordering::Relaxed) {
            self.reply_peak.store(n, Ordering::Relaxed);
        }
    }

    /// Adds `n` to a running total (`bytes_in`, `bytes_out`).
    pub fn add(field: &AtomicU64, n: usize) {
        field.fetch_add(n as u64, Ordering::Relaxed);
    }
}

impl Session {
    /// Output held for this client, as client-output-buffer-limit and CLIENT LIST's omem count
    /// it: what overflows the reply buffer (Redis's reply list; `client_reply`).
    pub fn output_bytes(&self) -> u64 {
        crate::client_reply::output(self).memory
    }

    /// All output waiting for this client: produced for it and not yet encoded, and encoded
    /// and not yet written.
    pub fn pending_output(&self) -> u64 {
        self.outbox_bytes + NetMeters::get(&self.net.unsent)
    }

    /// The class whose output limits apply (MONITOR clients are normal ones, as in Redis).
    pub fn client_class(&self) -> crate::config::ClientClass {
        if self.in_pubsub() {
            crate::config::ClientClass::PubSub
        } else {
            crate::config::ClientClass::Normal
        }
    }
}

/// About the size of `r` once encoded (exact for the strings, a few bytes per header),
/// without encoding it.
pub fn encoded_size(r: &Reply) -> u64 {
    const HEADER: u64 = 8;
    let items = |v: &[Reply]| v.iter().map(encoded_size).sum::<u64>();
    HEADER
        + match r {
            Reply::Status(s) | Reply::Error(s) | Reply::BigNumber(s) => s.len() as u64,
            Reply::ErrorBytes(b) => b.len() as u64,
            Reply::Bulk(b) | Reply::Verbatim(_, b) => b.len() as u64 + 4,
            Reply::Raw(b) => b.len() as u64,
            Reply::Int(_) | Reply::Double(_) => 20,
            Reply::Nil | Reply::NilArray | Reply::Bool(_) | Reply::None => 0,
            Reply::Array(v) | Reply::Set(v) | Reply::Push(v) | Reply::Multi(v) => items(v),
            Reply::Map(kv) => kv
                .iter()
                .map(|(k, v)| encoded_size(k) + encoded_size(v))
                .sum(),
            Reply::Attribute(kv, inner) => {
                kv.iter()
                    .map(|(k, v)| encoded_size(k) + encoded_size(v))
                    .sum::<u64>()
                    + encoded_size(inner)
            }
        }
}

/// The largest query and output buffers of any client over the last few seconds, as INFO's
/// client_recent_max_input_buffer and client_recent_max_output_buffer report them (Redis keeps
/// one peak per second for the last 8 seconds).
#[derive(Debug, Default)]
pub struct BufferPeaks {
    /// (second on the engine clock, max input, max output) per slot, slot = second % 8.
    slots: [(i64, u64, u64); 8],
}

impl BufferPeaks {
    pub fn record(&mut self, now_ms: i64, input: u64, output: u64) {
        let sec = now_ms.div_euclid(1000);
        let slot = &mut self.slots[sec.rem_euclid(8) as usize];
        if slot.0 != sec {
            *slot = (sec, 0, 0);
        }
        slot.1 = slot.1.max(input);
        slot.2 = slot.2.max(output);
    }

    pub fn recent(&self, now_ms: i64) -> (u64, u64) {
        let sec = now_ms.div_euclid(1000);
        self.slots
            .iter()
            .filter(|s| s.0 > sec - 8 && s.0 <= sec)
            .fold((0, 0), |(i, o), s| (i.max(s.1), o.max(s.2)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_last_eight_seconds() {
        let mut p = BufferPeaks::default();
        p.record(1_000, 10, 500);
        p.record(2_500, 30, 5);
        assert_eq!(p.recent(3_000), (30, 500));
        assert_eq!(p.recent(9_999), (30, 5), "the first second has gone");
        assert_eq!(p.recent(20_000), (0, 0));
    }

    #[test]
    fn sizes_cover_the_payload() {
        let msg = Reply::Push(vec![
            Reply::bulk("message"),
            Reply::bulk("ch"),
            Reply::Bulk(Bytes::from(vec![0u8; 1000])),
        ]);
        let mut buf = bytes::BytesMut::new();
        msg.encode(2, &mut buf);
        let est = encoded_size(&msg);
        assert!(
            est >= buf.len() as u64 && est < buf.len() as u64 + 64,
            "{est} vs {}",
            buf.len()
        );
    }
}
