//! The primary side: SYNC and PSYNC (a full copy as an RDB file then the stream, or the part
//! of the backlog a returning replica missed), REPLCONF, and WAIT's count of acknowledged
//! replicas.

use bytes::{BufMut, Bytes, BytesMut};

use super::backlog::Backlog;
use super::Replica;
use crate::cmd::table::CmdResult;
use crate::db::rdb::file::{write_file, FileMeta};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;
use crate::session::ConnId;

/// The RDB file of everything this engine holds, for a replica starting at `offset`.
pub(crate) fn snapshot(e: &Engine, offset: i64) -> Vec<u8> {
    let limits = e.encoding_limits();
    let libs = e.scripting.libs.libs.values().map(|lib| &lib.code[..]);
    let meta = FileMeta {
        redis_version: &e.config.redis_version,
        ctime_s: e.clock.now_ms() / 1000,
        used_mem: e.used_memory(),
        repl_stream_db: 0,
        repl_id: &e.repl.replid,
        repl_offset: offset,
        policy: &e.config.maxmemory_policy,
        lfu: e.config.lfu(),
        now_ms: e.now_ms,
    };
    write_file(&e.dbs, libs, &meta, &limits)
}

fn backlog_size(e: &Engine) -> usize {
    e.config
        .get_by_name("repl-backlog-size")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1 << 20)
}

/// Makes `conn` a replica fed from now on; creates the backlog on first use.
fn attach(e: &mut Engine, conn: ConnId, ack: i64) {
    if e.repl.backlog.is_none() {
        let size = backlog_size(e);
        e.repl.backlog = Some(Backlog::new(size, e.repl.offset));
    }
    let (port, ip) = {
        let port = e
            .repl
            .announced
            .iter()
            .find(|a| a.0 == conn)
            .map_or(0, |a| a.1);
        let addr = e.sessions.get(&conn).map(|s| s.addr.clone());
        let ip = addr
            .and_then(|a| a.rsplit_once(':').map(|(h, _)| h.to_string()))
            .unwrap_or_else(|| "127.0.0.1".into());
        (port, ip)
    };
    e.repl.replicas.retain(|r| r.conn != conn);
    if let Some(s) = e.sessions.get_mut(&conn) {
        s.replica = true;
    }
    let now = e.now_ms;
    e.repl.replicas.push(Replica {
        conn,
        ack,
        port,
        ip,
        ack_ms: now,
    });
}

/// The full synchronisation's payload: `$len\r\n` and the file, with no trailing CRLF.
fn rdb_payload(e: &mut Engine) -> Reply {
    let offset = e.repl.master_offset();
    let file = snapshot(e, offset);
    let mut out = BytesMut::with_capacity(file.len() + 16);
    out.put_slice(format!("${}\r\n", file.len()).as_bytes());
    out.put_slice(&file);
    // Whatever comes next starts with SELECT, as after Redis's full resync.
    e.repl.stream_db = None;
    Reply::Raw(out.freeze())
}

fn check_can_serve(e: &Engine, conn: ConnId) -> CmdResult {
    if e.repl.replicas.iter().any(|r| r.conn == conn) {
        // Already a replica: Redis ignores the request.
        return Err(Reply::None);
    }
    if let Some(f) = &e.repl.following {
        if f.state != "connected" {
            return Err(Reply::err(errors::NOMASTERLINK_CANT_SYNC));
        }
    }
    Ok(Reply::None)
}

/// SYNC: the old protocol: the payload at once, then the stream.
pub(crate) fn sync(e: &mut Engine, call: &mut Call) -> CmdResult {
    check_can_serve(e, call.conn)?;
    let payload = rdb_payload(e);
    let offset = e.repl.master_offset();
    attach(e, call.conn, offset);
    Ok(payload)
}

/// PSYNC replid offset: +CONTINUE and what the replica missed, when the backlog still
/// holds it and the history is ours; otherwise +FULLRESYNC replid offset and the payload.
pub(crate) fn psync(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 3 && call.arg(3).eq_ignore_ascii_case(b"failover") {
        // A primary handing over (FAILOVER): this replica takes over first.
        let replid = call.arg(1).to_vec();
        super::failover::target_side(e, &replid)?;
    }
    check_can_serve(e, call.conn)?;
    let asked_id = call.arg(1).to_vec();
    let asked_offset = std::str::from_utf8(call.arg(2))
        .ok()
        .and_then(|s| s.parse::<i64>().ok());
    let psync2 = e
        .repl
        .announced
        .iter()
        .find(|a| a.0 == call.conn)
        .is_some_and(|a| a.2);
    if let (Some(offset), Some(b)) = (asked_offset, e.repl.backlog.as_ref()) {
        let ours = asked_id == e.repl.replid.as_bytes()
            || (asked_id == e.repl.replid2.as_bytes() && offset <= e.repl.second_offset);
        if ours {
            if let Some(missed) = b.since(offset) {
                let head = if psync2 {
                    format!("CONTINUE {}", e.repl.replid)
                } else {
                    "CONTINUE".to_string()
                };
                let end = b.end();
                attach(e, call.conn, end);
                // The stream the replica continues is already positioned on a database it
                // knows nothing of only if it selected one: the missed bytes carry SELECT.
                return Ok(Reply::Multi(vec![
                    Reply::Status(head),
                    Reply::Raw(Bytes::from(missed)),
                ]));
            }
        }
    }
    let payload = rdb_payload(e);
    let offset = e.repl.master_offset();
    attach(e, call.conn, offset);
    Ok(Reply::Multi(vec![
        Reply::Status(format!("FULLRESYNC {} {}", e.repl.replid, offset)),
        payload,
    ]))
}

/// REPLCONF option value ...: what a replica tells its primary (listening-port, capa,
/// ack), and GETACK from a primary.
pub(crate) fn replconf(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc().is_multiple_of(2) {
        return Err(Reply::err(errors::SYNTAX));
    }
    let conn = call.conn;
    let mut i = 1;
    while i + 1 < call.argc() {
        let opt = call.arg(i).to_ascii_lowercase();
        let val = call.arg(i + 1).to_vec();
        match opt.as_slice() {
            b"listening-port" => {
                let port = std::str::from_utf8(&val)
                    .ok()
                    .and_then(|s| s.parse::<u16>().ok())
                    .ok_or_else(|| Reply::err(errors::NOT_INTEGER))?;
                announce(e, conn, |a| a.1 = port);
            }
            b"capa" => {
                if val.eq_ignore_ascii_case(b"psync2") {
                    announce(e, conn, |a| a.2 = true);
                }
            }
            b"ip-address" | b"rdb-only" | b"rdb-filter-only" => {}
            b"ack" => {
                let offset = std::str::from_utf8(&val)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok());
                if let Some(offset) = offset {
                    acknowledged(e, conn, offset);
                }
                // An acknowledgement is never answered.
                return Ok(Reply::None);
            }
            b"getack" => {
                if e.repl.is_primary_link(conn) {
                    e.repl.ack_requested = true;
                }
                return Ok(Reply::None);
            }
            _ => {
                return Err(Reply::err(errors::unrecognized_replconf_option(
                    &String::from_utf8_lossy(call.arg(i)),
                )))
            }
        }
        i += 2;
    }
    Ok(Reply::ok())
}

fn announce(e: &mut Engine, conn: ConnId, set: impl FnOnce(&mut (ConnId, u16, bool))) {
    let pos = match e.repl.announced.iter().position(|a| a.0 == conn) {
        Some(p) => p,
        None => {
            e.repl.announced.push((conn, 0, false));
            e.repl.announced.len() - 1
        }
    };
    set(&mut e.repl.announced[pos]);
}

/// A replica acknowledged `offset`: WAIT clients it satisfies are answered.
fn acknowledged(e: &mut Engine, conn: ConnId, offset: i64) {
    let now = e.now_ms;
    if let Some(r) = e.repl.replicas.iter_mut().find(|r| r.conn == conn) {
        r.ack = r.ack.max(offset);
        r.ack_ms = now;
    }
    check_waiters(e);
}

/// How many replicas acknowledged `offset` or later.
pub(crate) fn acked(e: &Engine, offset: i64) -> i64 {
    e.repl.replicas.iter().filter(|r| r.ack >= offset).count() as i64
}

/// Answers the WAIT clients that have their count now; updates the others' timeout reply.
pub(crate) fn check_waiters(e: &mut Engine) {
    let waiters = std::mem::take(&mut e.repl.waiters);
    let mut kept = Vec::with_capacity(waiters.len());
    for (conn, offset, wanted) in waiters {
        let n = acked(e, offset);
        if n >= wanted {
            if e.unblock(conn).is_some() {
                e.push_to(conn, Reply::Int(n));
            }
        } else {
            if let Some(b) = e.sessions.get_mut(&conn).and_then(|s| s.blocked.as_mut()) {
                b.timeout_reply = Reply::Int(n);
            }
            if e.is_blocked(conn) {
                kept.push((conn, offset, wanted));
            }
        }
    }
    e.repl.waiters = kept;
}

/// WAIT's refusal on a replica, in the profile's words (Valkey 8 dropped "since Redis 4.0").
/// Every version checks it first, before WAIT's arguments (redis-server 7.0.15 and
/// valkey-server 8.1 refuse `WAIT abc 0` on a replica so).
pub(crate) fn wait_refused_on_replica(e: &Engine) -> Option<Reply> {
    if !e.repl.is_replica() {
        return None;
    }
    let valkey8 =
        e.profile().family() == crate::compat::Family::Valkey && e.profile().level() >= 80;
    Some(Reply::err(if valkey8 {
        errors::WAIT_ON_REPLICA_VALKEY
    } else {
        errors::WAIT_ON_REPLICA
    }))
}

/// WAIT numreplicas timeout on a primary, its arguments checked: the replicas that
/// acknowledged this client's writes, at once or when enough have, or at the timeout.
pub(crate) fn wait(e: &mut Engine, call: &Call, wanted: i64, deadline: Option<i64>) -> Reply {
    let offset = e.repl.master_offset();
    let n = acked(e, offset);
    if n >= wanted || call.in_multi || call.in_script {
        return Reply::Int(n);
    }
    let reply = e.block(call, Vec::new(), deadline, Reply::Int(n));
    if e.is_blocked(call.conn) {
        e.repl.waiters.push((call.conn, offset, wanted));
        // Ask the replicas to acknowledge now rather than at their next second.
        if !e.repl.replicas.is_empty() {
            let mut out = BytesMut::new();
            super::encode_op(
                &mut out,
                &[
                    Bytes::from_static(b"REPLCONF"),
                    Bytes::from_static(b"GETACK"),
                    Bytes::from_static(b"*"),
                ],
            );
            e.repl_feed(out.freeze());
        }
    }
    reply
}
