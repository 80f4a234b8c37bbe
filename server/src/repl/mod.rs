//! Replication, as Redis 7.0.15 presents it.
//!
//! - `backlog`: the bounded window of the stream, with its offsets.
//! - `rewrite`: what a write becomes on the stream (absolute deadlines, the pop of what was
//!   taken, the value a float increment produced...).
//! - this file: the stream itself. `Engine::call` reports each command that changed the
//!   dataset (`after_call`); the ops of one execution unit (a command, a transaction, a
//!   script) are held until it ends and sent together (`flush`), wrapped in MULTI/EXEC when
//!   there is more than one, each preceded by SELECT when its database differs from the last
//!   one the stream selected. A key a command's lookup expires is a DEL of that unit, in
//!   the order it happened; keys the active expiry removes (or SCAN and RANDOMKEY on their
//!   walk) go out as DELs of their own.
//! - `primary`: SYNC, PSYNC and REPLCONF on the primary side; WAIT.
//! - `link`: the replica side, a task of the network shell that connects to the primary,
//!   loads its RDB and applies its stream through the same engine path.
//! - `commands`: REPLICAOF/SLAVEOF, ROLE, INFO replication.
//!
//! Nothing of this costs anything until a replica attaches: the backlog, like Redis's, is
//! created by the first SYNC/PSYNC, and `feeding` is one field test.

pub(crate) mod backlog;
pub(crate) mod commands;
pub(crate) mod failover;
pub(crate) mod faults;
pub(crate) mod link;
pub(crate) mod primary;
mod rewrite;

use bytes::{Bytes, BytesMut};

use crate::cmd::table::Command;
use crate::engine::{Call, Engine};
use crate::reply::Reply;
use crate::session::ConnId;

/// A replica attached to this server (it ran SYNC or PSYNC).
#[derive(Debug, Clone)]
pub(crate) struct Replica {
    pub(crate) conn: ConnId,
    /// The offset it last acknowledged (REPLCONF ACK).
    pub(crate) ack: i64,
    /// REPLCONF listening-port (0 when it did not say).
    pub(crate) port: u16,
    /// Its address as the server sees it.
    pub(crate) ip: String,
    /// When it last acknowledged, in engine ms.
    pub(crate) ack_ms: i64,
}

/// The replica side: which primary this server follows, and how far it got.
#[derive(Debug, Clone)]
pub(crate) struct Following {
    pub(crate) host: String,
    pub(crate) port: u16,
    /// "connect", "connecting", "sync" or "connected" (ROLE's words).
    pub(crate) state: &'static str,
    /// The session the primary's stream runs on, once linked.
    pub(crate) conn: Option<ConnId>,
    /// Bumped by each REPLICAOF: a link task of an older generation stops.
    pub(crate) generation: u64,
    /// When the link went down, in engine ms (INFO master_link_down_since_seconds).
    pub(crate) down_since_ms: i64,
    /// When the last byte came from the primary, in engine ms.
    pub(crate) last_io_ms: i64,
}

/// Replication state of one engine.
#[derive(Debug)]
pub(crate) struct Repl {
    /// Created by the first replica that attaches; None costs nothing.
    pub(crate) backlog: Option<backlog::Backlog>,
    /// master_repl_offset while there is no backlog.
    pub(crate) offset: i64,
    pub(crate) replid: String,
    pub(crate) replid2: String,
    pub(crate) second_offset: i64,
    /// The database the stream selected last; None sends SELECT before the next op.
    stream_db: Option<usize>,
    /// The ops of the execution unit running now: each op's database and where its encoding
    /// ends in `pending_bytes`. Encoded as reported: holding them as argument lists cloned
    /// every argument (a clone of a fresh `Bytes` allocates to share it) and allocated two
    /// vectors, per replicated write.
    pending: Vec<(usize, usize)>,
    /// The encodings of `pending`'s ops, back to back (SELECT and MULTI/EXEC are put around
    /// them when the unit is flushed).
    pending_bytes: BytesMut,
    /// What the running handler asked to send instead of itself (`Engine::replicate_as`).
    own: Option<Vec<(usize, Vec<Bytes>)>>,
    /// Per database: how many keys of its `expired_log` went out as DEL already.
    expired_sent: Vec<usize>,
    pub(crate) replicas: Vec<Replica>,
    /// What connections said in REPLCONF before they synchronised: (port, capa psync2).
    pub(crate) announced: Vec<(ConnId, u16, bool)>,
    pub(crate) following: Option<Following>,
    /// The next REPLICAOF generation.
    pub(crate) generations: u64,
    /// A link task must be started for this generation (taken by the network shell).
    pub(crate) link_wanted: Option<u64>,
    /// The primary asked for an acknowledgement (REPLCONF GETACK).
    pub(crate) ack_requested: bool,
    /// Clients blocked in WAIT: (conn, offset they wait for, replicas they want).
    pub(crate) waiters: Vec<(ConnId, i64, i64)>,
    /// Lag and partition of this replica's link, and what the lag holds back.
    pub(crate) faults: faults::LinkFaults,
    /// The configuration `commands::refusal` reads, as of a config generation:
    /// (generation, replica-read-only, replica-serve-stale-data).
    pub(crate) policy: (Option<u64>, bool, bool),
    /// A FAILOVER under way on this primary.
    pub(crate) failover: Option<failover::Failover>,
    /// Where each execution unit is encoded: split off as the unit's bytes, its room is
    /// used again by the next unit once the replicas' output let go of the last one (a
    /// fresh buffer per unit was an allocation, and a promotion to shared when each replica
    /// took its copy, on every replicated write).
    encode_room: BytesMut,
}

impl Default for Repl {
    fn default() -> Repl {
        Repl {
            backlog: None,
            offset: 0,
            replid: new_replid(),
            replid2: "0".repeat(40),
            second_offset: -1,
            stream_db: None,
            pending: Vec::new(),
            pending_bytes: BytesMut::new(),
            own: None,
            expired_sent: Vec::new(),
            replicas: Vec::new(),
            announced: Vec::new(),
            following: None,
            generations: 0,
            link_wanted: None,
            ack_requested: false,
            waiters: Vec::new(),
            faults: Default::default(),
            policy: (None, true, true),
            failover: None,
            encode_room: BytesMut::new(),
        }
    }
}

/// A fresh 40-hex-digit replication id. Every engine makes one: a fresh seed spread over
/// 160 bits by SplitMix64 and written as hex directly. (Through SHA1 of two seeds and a
/// `char` iterator it was 3,500 instructions of `Engine::new`, a tenth of it, in a profile
/// of `cargo bench --bench per_test` row (a); uniqueness needs only the seed, which mixes a
/// process-wide counter with the standard library's random keys.)
pub(crate) fn new_replid() -> String {
    let mut state = crate::rng::fresh_seed();
    let mut hex = Vec::with_capacity(40);
    while hex.len() < 40 {
        // SplitMix64's step.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        for i in 0..16 {
            if hex.len() == 40 {
                break;
            }
            hex.push(b"0123456789abcdef"[(z >> (i * 4)) as usize & 15]);
        }
    }
    String::from_utf8(hex).expect("hex digits")
}

impl Repl {
    /// Whether this server writes a replication stream of its own: a replica attached once,
    /// and this server does not follow a primary (a replica passes its primary's stream on
    /// as it came).
    pub(crate) fn feeding(&self) -> bool {
        self.backlog.is_some() && self.following.is_none()
    }

    /// INFO master_repl_offset.
    pub(crate) fn master_offset(&self) -> i64 {
        self.backlog.as_ref().map_or(self.offset, |b| b.end())
    }

    /// Whether `conn` is the link this replica's primary writes on.
    pub(crate) fn is_primary_link(&self, conn: ConnId) -> bool {
        self.following.as_ref().and_then(|f| f.conn) == Some(conn)
    }

    pub(crate) fn is_replica(&self) -> bool {
        self.following.is_some()
    }
}

/// Commands Redis propagates whenever they succeed, whether or not the dataset changed.
fn always_propagated(args: &[Bytes]) -> bool {
    let name = &args[0];
    let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
    if is("publish") || is("spublish") || is("flushall") || is("flushdb") {
        return true;
    }
    is("function")
        && args.get(1).is_some_and(|s| {
            ["load", "delete", "flush", "restore"]
                .iter()
                .any(|n| s.eq_ignore_ascii_case(n.as_bytes()))
        })
}

/// Commands whose effects are the commands they ran: never propagated themselves.
fn runs_others(cmd: &Command) -> bool {
    matches!(
        cmd.name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" | "exec"
    )
}

/// SCAN and RANDOMKEY: the keys they expire on their walk go out as DELs of their own, never
/// wrapped in MULTI/EXEC (Redis 7.0.15 propagates them so, unlike a lookup's).
fn walks_keyspace(cmd: &Command) -> bool {
    matches!(cmd.name, "scan" | "randomkey")
}

/// One op in the stream's encoding (an array of bulk strings). Every write on a primary
/// with replicas comes through here, so the room is reserved once and the lengths are
/// written with itoa: the formatter and the buffer's regrowth were a tenth of a primary's
/// instructions per SET (callgrind, cluster_start's throughput loop).
fn encode_op<A: AsRef<[u8]>>(out: &mut BytesMut, op: &[A]) {
    use bytes::BufMut;
    // Each header is at most 1 + 20 digits + CRLF; each argument has its own CRLF.
    let room = 23 * (op.len() + 1) + op.iter().map(|a| a.as_ref().len() + 2).sum::<usize>();
    out.reserve(room);
    let mut digits = itoa::Buffer::new();
    out.put_u8(b'*');
    out.put_slice(digits.format(op.len()).as_bytes());
    out.put_slice(b"\r\n");
    for a in op {
        let a = a.as_ref();
        out.put_u8(b'$');
        out.put_slice(digits.format(a.len()).as_bytes());
        out.put_slice(b"\r\n");
        out.put_slice(a);
        out.put_slice(b"\r\n");
    }
}

/// The largest unit whose buffer `Repl::encode_room` (or `Repl::pending_bytes`) keeps for
/// the next.
const ENCODE_ROOM_KEPT: usize = 64 * 1024;

impl Engine {
    /// After a handler ran (`Engine::call`): what it changed goes into the unit's ops.
    pub(crate) fn repl_after_call(
        &mut self,
        cmd: &'static Command,
        call: &Call,
        reply: &Reply,
        dirty_before: u64,
    ) {
        if !walks_keyspace(cmd) {
            // Keys the command expired as it looked them up belong to its unit, before
            // what it wrote (and inside MULTI/EXEC with it), as in Redis 7.0.15.
            self.repl_take_expired();
        }
        if let Some(ops) = self.repl.own.take() {
            for (db, op) in &ops {
                self.repl_push_op(*db, op);
            }
            if call.reprocessing {
                self.repl_flush();
            }
            return;
        }
        if runs_others(cmd) || reply.is_error() && self.dirty == dirty_before {
            return;
        }
        if self.dirty == dirty_before && !always_propagated(&call.args) {
            return;
        }
        match rewrite::rewrite(self, call.db, &call.args, reply) {
            None => self.repl_push_op(call.db, &call.args),
            Some(ops) => {
                for op in &ops {
                    self.repl_push_op(call.db, op);
                }
            }
        }
        if call.reprocessing {
            // A blocked client served after another's command: a unit of its own.
            self.repl_flush();
        }
    }

    /// One op of the running unit, encoded now (see `Repl::pending`).
    fn repl_push_op<A: AsRef<[u8]>>(&mut self, db: usize, op: &[A]) {
        encode_op(&mut self.repl.pending_bytes, op);
        let end = self.repl.pending_bytes.len();
        self.repl.pending.push((db, end));
    }

    /// A handler's own account of what it changed, sent instead of the command itself (what
    /// Redis's `alsoPropagate` with the command's own propagation prevented does). An empty
    /// list sends nothing even though the dataset changed. Call it only while `feeding`.
    pub(crate) fn replicate_as(&mut self, db: usize, ops: Vec<Vec<Bytes>>) {
        self.repl
            .own
            .get_or_insert_with(Vec::new)
            .extend(ops.into_iter().map(|op| (db, op)));
    }

    /// Ends an execution unit: its ops go to the backlog and the replicas, in MULTI/EXEC
    /// when there are several. Keys expiry removed meanwhile go first, as DEL.
    pub(crate) fn repl_flush(&mut self) {
        if !self.repl.feeding() {
            return;
        }
        self.repl_send_expired();
        if self.repl.pending.is_empty() {
            return;
        }
        // Taken and given back emptied: the unit's lists keep their room for the next one.
        let mut ops = std::mem::take(&mut self.repl.pending);
        let mut encoded = std::mem::take(&mut self.repl.pending_bytes);
        let unit = if ops.len() == 1 && self.repl.stream_db == Some(ops[0].0) {
            // One op on the database the stream is on (most units): its encoding is the
            // unit as it stands.
            encoded.split().freeze()
        } else {
            let wrap = ops.len() > 1;
            let mut out = std::mem::take(&mut self.repl.encode_room);
            if wrap {
                self.select_into(ops[0].0, &mut out);
                encode_op(&mut out, &[b"MULTI"]);
            }
            let mut start = 0;
            for &(db, end) in &ops {
                self.select_into(db, &mut out);
                out.extend_from_slice(&encoded[start..end]);
                start = end;
            }
            if wrap {
                encode_op(&mut out, &[b"EXEC"]);
            }
            let unit = out.split().freeze();
            if unit.len() <= ENCODE_ROOM_KEPT {
                self.repl.encode_room = out;
            }
            unit
        };
        ops.clear();
        encoded.clear();
        if self.repl.pending.is_empty() {
            self.repl.pending = ops;
            // (A big unit's buffer is let go with it, not kept for good.)
            if unit.len() <= ENCODE_ROOM_KEPT && encoded.capacity() <= ENCODE_ROOM_KEPT {
                self.repl.pending_bytes = encoded;
            }
        }
        self.repl_feed(unit);
    }

    /// SELECT db, when the stream is on another database.
    fn select_into(&mut self, db: usize, out: &mut BytesMut) {
        if self.repl.stream_db != Some(db) {
            let n = Bytes::from(db.to_string());
            encode_op(out, &[Bytes::from_static(b"SELECT"), n]);
            self.repl.stream_db = Some(db);
        }
    }

    /// Keys expiry removed since the last look become DEL ops of the running unit.
    /// Only the databases `maybe_expiring` names can have removed keys waiting (a key is
    /// logged as expired only in a database that had deadlines, and its bit is cleared only
    /// after the log was drained): this runs around every command, and looking at all
    /// sixteen databases each time was a tenth of a cluster primary's replication cost.
    fn repl_take_expired(&mut self) {
        if !self.may_have_expired_keys() {
            return;
        }
        for idx in self.maybe_expiring_dbs() {
            let sent = self.repl.expired_sent.get(idx).copied().unwrap_or(0);
            let log_len = self.dbs[idx].expired_log.len();
            if log_len <= sent {
                continue;
            }
            for key in &self.dbs[idx].expired_log[sent..] {
                encode_op(&mut self.repl.pending_bytes, &[&b"DEL"[..], key]);
                let end = self.repl.pending_bytes.len();
                self.repl.pending.push((idx, end));
            }
            if self.repl.expired_sent.len() <= idx {
                self.repl.expired_sent.resize(idx + 1, 0);
            }
            self.repl.expired_sent[idx] = log_len;
        }
    }

    /// Keys expiry removed since the last look, as DEL, before anything else.
    /// Looks only at the databases `maybe_expiring` names, as `repl_take_expired` does.
    fn repl_send_expired(&mut self) {
        if !self.may_have_expired_keys() {
            return;
        }
        let mut out = BytesMut::new();
        for idx in self.maybe_expiring_dbs() {
            let sent = self.repl.expired_sent.get(idx).copied().unwrap_or(0);
            let log_len = self.dbs[idx].expired_log.len();
            if log_len <= sent {
                continue;
            }
            let keys: Vec<Vec<u8>> = self.dbs[idx].expired_log[sent..].to_vec();
            for key in keys {
                self.select_into(idx, &mut out);
                encode_op(&mut out, &[Bytes::from_static(b"DEL"), Bytes::from(key)]);
            }
            if self.repl.expired_sent.len() <= idx {
                self.repl.expired_sent.resize(idx + 1, 0);
            }
            self.repl.expired_sent[idx] = log_len;
        }
        if !out.is_empty() {
            self.repl_feed(out.freeze());
        }
    }

    /// Whether any database may have removed keys waiting to go out: false when
    /// `maybe_expiring` is empty and names them all (no database touched since the last
    /// look had deadlines), so the walk over its databases is skipped.
    fn may_have_expired_keys(&self) -> bool {
        self.maybe_expiring != 0 || self.dbs.len() > 64
    }

    /// A key the server deleted by itself (evicted for maxmemory, or in a slot a cluster
    /// primary lost): replicas delete it too (Redis propagates a DEL).
    pub(crate) fn repl_evicted(&mut self, db: usize, key: &[u8]) {
        if !self.repl.feeding() {
            return;
        }
        let mut out = BytesMut::new();
        self.select_into(db, &mut out);
        encode_op(
            &mut out,
            &[Bytes::from_static(b"DEL"), Bytes::copy_from_slice(key)],
        );
        self.repl_feed(out.freeze());
    }

    /// Expiry is about to forget database `idx`'s removed keys: they go out first.
    pub(crate) fn repl_before_expired_drain(&mut self, idx: usize) {
        if self.repl.feeding() {
            self.repl_send_expired();
        }
        if let Some(n) = self.repl.expired_sent.get_mut(idx) {
            *n = 0;
        }
    }

    /// Appends bytes to the stream: the backlog and every attached replica.
    pub(crate) fn repl_feed(&mut self, bytes: Bytes) {
        match self.repl.backlog.as_mut() {
            Some(b) => b.feed(&bytes),
            None => return,
        }
        if let [only] = &self.repl.replicas[..] {
            // One replica (a cluster's shard): its copy is the bytes themselves.
            let conn = only.conn;
            self.push_to(conn, Reply::Raw(bytes));
            return;
        }
        let conns: Vec<ConnId> = self.repl.replicas.iter().map(|r| r.conn).collect();
        for conn in conns {
            self.push_to(conn, Reply::Raw(bytes.clone()));
        }
    }

    /// A connection closed: it is no longer a replica, nor the primary's link.
    pub(crate) fn repl_forget(&mut self, conn: ConnId) {
        self.repl.replicas.retain(|r| r.conn != conn);
        self.repl.announced.retain(|a| a.0 != conn);
        self.repl.waiters.retain(|w| w.0 != conn);
        if let Some(f) = self.repl.following.as_mut() {
            if f.conn == Some(conn) {
                f.conn = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};

    #[test]
    fn an_op_is_encoded_as_the_array_of_bulk_strings_a_client_sends() {
        let long = Bytes::from(vec![b'x'; 1234]);
        let op = [Bytes::from_static(b"SET"), Bytes::new(), long.clone()];
        let mut out = BytesMut::from(&b"before"[..]);
        super::encode_op(&mut out, &op);
        let mut expected = b"before*3\r\n$3\r\nSET\r\n$0\r\n\r\n$1234\r\n".to_vec();
        expected.extend_from_slice(&long);
        expected.extend_from_slice(b"\r\n");
        assert_eq!(&out[..], &expected[..]);
    }

    #[test]
    fn a_replication_id_is_40_lower_case_hex_digits_and_fresh_each_time() {
        let (a, b) = (super::new_replid(), super::new_replid());
        for id in [&a, &b] {
            assert_eq!(id.len(), 40, "{id}");
            assert!(
                id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
                "{id}"
            );
        }
        assert_ne!(a, b);
    }
}
