//! The replication commands: SYNC, PSYNC, REPLCONF (`primary`), REPLICAOF/SLAVEOF, ROLE, and
//! the fields of INFO replication.

use super::Following;
use crate::cmd::table::flags::*;
use crate::cmd::table::{CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;
use crate::session::ConnId;

pub static COMMANDS: &[Command] = &[
    Command::new(
        "sync",
        1,
        ADMIN | NOSCRIPT | NO_MULTI,
        "server",
        super::primary::sync,
    ),
    Command::new(
        "psync",
        -3,
        ADMIN | NOSCRIPT | NO_MULTI,
        "server",
        super::primary::psync,
    ),
    Command::new(
        "replconf",
        -1,
        ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY,
        "server",
        super::primary::replconf,
    ),
    Command::new(
        "replicaof",
        3,
        ADMIN | NOSCRIPT | STALE,
        "server",
        replicaof,
    ),
    Command::new("slaveof", 3, ADMIN | NOSCRIPT | STALE, "server", replicaof),
    Command::new(
        "redlab.repl",
        -2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "redlab",
        super::faults::redlab_repl,
    ),
];

/// REPLICAOF host port | NO ONE.
fn replicaof(e: &mut Engine, call: &mut Call) -> CmdResult {
    if e.cluster.is_some() {
        return Err(Reply::err(errors::REPLICAOF_IN_CLUSTER));
    }
    if call.arg(1).eq_ignore_ascii_case(b"no") && call.arg(2).eq_ignore_ascii_case(b"one") {
        promote(e);
        return Ok(Reply::ok());
    }
    let port = crate::cmd::args::int(call.arg(2))?;
    if !(0..=65535).contains(&port) {
        return Err(Reply::err(errors::INVALID_MASTER_PORT));
    }
    let host = String::from_utf8_lossy(call.arg(1)).into_owned();
    if let Some(f) = &e.repl.following {
        if f.host.eq_ignore_ascii_case(&host) && f.port == port as u16 {
            return Ok(Reply::Status(
                "OK Already connected to specified master".into(),
            ));
        }
    }
    follow(e, &host, port as u16);
    Ok(Reply::ok())
}

/// `follow`, unless this server already follows `host:port` (a cluster node told again who
/// its primary is keeps its link and its data).
pub(crate) fn follow_if_new(e: &mut Engine, host: &str, port: u16) {
    let same = e
        .repl
        .following
        .as_ref()
        .is_some_and(|f| f.host == host && f.port == port);
    if !same {
        follow(e, host, port);
    }
}

/// Starts following `host:port`: replicas of this server are dropped (they must resync),
/// and the network shell starts a link task.
pub(crate) fn follow(e: &mut Engine, host: &str, port: u16) {
    drop_link(e);
    disconnect_replicas(e);
    e.repl.faults.held.clear();
    e.repl.generations += 1;
    let generation = e.repl.generations;
    let now = e.now_ms;
    e.repl.following = Some(Following {
        host: host.to_string(),
        port,
        state: "connect",
        conn: None,
        generation,
        down_since_ms: now,
        last_io_ms: now,
    });
    e.repl.link_wanted = Some(generation);
    follow_oom_score(e);
}

/// A replica's OOM score class differs from a primary's (`crate::oom_score`).
fn follow_oom_score(e: &Engine) {
    if let Err(line) = crate::oom_score::apply(&e.config, e.repl.following.is_some()) {
        tracing::warn!("{}", line);
    }
}

/// REPLICAOF NO ONE: this server becomes a primary with a new history; the old one stays
/// reachable for PSYNC as replid2, up to the offset reached.
pub(crate) fn promote(e: &mut Engine) {
    if e.repl.following.is_none() {
        return;
    }
    drop_link(e);
    e.repl.following = None;
    let offset = e.repl.master_offset();
    e.repl.replid2 = std::mem::replace(&mut e.repl.replid, super::new_replid());
    e.repl.second_offset = offset + 1;
    disconnect_replicas(e);
    follow_oom_score(e);
}

fn drop_link(e: &mut Engine) {
    if let Some(conn) = e.repl.following.as_ref().and_then(|f| f.conn) {
        e.disconnect(conn);
    }
}

/// Closes the connections of this server's replicas, as Redis does when its history changes.
fn disconnect_replicas(e: &mut Engine) {
    let conns: Vec<_> = e.repl.replicas.iter().map(|r| r.conn).collect();
    for c in conns {
        if let Some(s) = e.sessions.get_mut(&c) {
            s.close_requested = true;
        }
        e.wakeups.push(c);
    }
    e.repl.replicas.clear();
}

/// ROLE.
pub(crate) fn role(e: &mut Engine) -> Reply {
    match &e.repl.following {
        Some(f) => Reply::Array(vec![
            Reply::bulk("slave"),
            Reply::bulk(f.host.clone()),
            Reply::Int(i64::from(f.port)),
            Reply::bulk(f.state),
            Reply::Int(if f.state == "connected" {
                e.repl.master_offset()
            } else {
                -1
            }),
        ]),
        None => Reply::Array(vec![
            Reply::bulk("master"),
            Reply::Int(e.repl.master_offset()),
            Reply::Array(
                e.repl
                    .replicas
                    .iter()
                    .map(|r| {
                        Reply::Array(vec![
                            Reply::bulk(r.ip.clone()),
                            Reply::bulk(r.port.to_string()),
                            Reply::bulk(r.ack.to_string()),
                        ])
                    })
                    .collect(),
            ),
        ]),
    }
}

/// The fields of INFO replication, in Redis's order.
pub(crate) fn info_fields(e: &Engine) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut f = |k: &str, v: String| out.push((k.to_string(), v));
    let now = e.clock.now_ms();
    match &e.repl.following {
        Some(m) => {
            let up = m.state == "connected";
            f("role", "slave".into());
            f("master_host", m.host.clone());
            f("master_port", m.port.to_string());
            f("master_link_status", if up { "up" } else { "down" }.into());
            f(
                "master_last_io_seconds_ago",
                if up {
                    ((now - m.last_io_ms) / 1000).max(0).to_string()
                } else {
                    "-1".into()
                },
            );
            f(
                "master_sync_in_progress",
                u8::from(m.state == "sync").to_string(),
            );
            f("slave_read_repl_offset", e.repl.master_offset().to_string());
            f("slave_repl_offset", e.repl.master_offset().to_string());
            if !up {
                f(
                    "master_link_down_since_seconds",
                    ((now - m.down_since_ms) / 1000).max(0).to_string(),
                );
            }
            f("slave_priority", "100".into());
            f("slave_read_only", read_only_flag(e).to_string());
            f("replica_announced", "1".into());
        }
        None => f("role", "master".into()),
    }
    f("connected_slaves", e.repl.replicas.len().to_string());
    for (i, r) in e.repl.replicas.iter().enumerate() {
        let lag = ((now - r.ack_ms) / 1000).max(0);
        f(
            &format!("slave{i}"),
            format!(
                "ip={},port={},state=online,offset={},lag={}",
                r.ip, r.port, r.ack, lag
            ),
        );
    }
    f(
        "master_failover_state",
        super::failover::state_name(e).into(),
    );
    f("master_replid", e.repl.replid.clone());
    f("master_replid2", e.repl.replid2.clone());
    f("master_repl_offset", e.repl.master_offset().to_string());
    f("second_repl_offset", e.repl.second_offset.to_string());
    let b = e.repl.backlog.as_ref();
    f("repl_backlog_active", u8::from(b.is_some()).to_string());
    f(
        "repl_backlog_size",
        e.config
            .get_by_name("repl-backlog-size")
            .unwrap_or_default(),
    );
    f(
        "repl_backlog_first_byte_offset",
        b.map_or(0, |b| b.first_offset()).to_string(),
    );
    f(
        "repl_backlog_histlen",
        b.map_or(0, |b| b.histlen()).to_string(),
    );
    out
}

fn read_only_flag(e: &Engine) -> u8 {
    u8::from(e.config.get_by_name("replica-read-only").as_deref() != Some("no"))
}

/// What a replica refuses before running a command (EXEC is judged by the commands it
/// queued): a write while replica-read-only (READONLY), and, while its link is down with
/// replica-serve-stale-data no, any command not flagged stale (MASTERDOWN). The
/// configuration is read only when its generation changed. A primary's min-replicas-to-write
/// is judged by `cmd::scripting::replicas_short`, which also knows which scripts write.
pub(crate) fn refusal(
    e: &mut Engine,
    conn: ConnId,
    cmd: &Command,
    args: &[bytes::Bytes],
) -> Option<Reply> {
    let refused = refusal_now(e, conn, cmd, args)?;
    // A node on a cluster bus may have been elected since the engine's last tick, and the
    // other nodes already send its clients here: the view decides before a write is
    // refused, as in Redis, where the winner turns primary in the step that wins.
    // (`reconcile::tick` does nothing for a node without a bus.)
    if e.cluster.is_some() {
        crate::cluster::bus::reconcile::tick(e);
        return refusal_now(e, conn, cmd, args);
    }
    Some(refused)
}

fn refusal_now(
    e: &mut Engine,
    conn: ConnId,
    cmd: &Command,
    args: &[bytes::Bytes],
) -> Option<Reply> {
    if !e.repl.is_replica() || e.repl.is_primary_link(conn) {
        return None;
    }
    let (read_only, serve_stale) = policy(e);
    // A script that declares it writes (a shebang or a function without no-writes) counts
    // as a write, as Redis's is_write_command has it.
    let write = crate::cmd::scripting::is_write(e, conn, cmd, args);
    let denystale = if cmd.name == "exec" {
        queued_denystale(e, conn)
    } else {
        !cmd.has(STALE)
    };
    let down = e
        .repl
        .following
        .as_ref()
        .is_some_and(|f| f.state != "connected");
    if down && !serve_stale && denystale {
        return Some(Reply::err(errors::MASTERDOWN));
    }
    if write && read_only {
        return Some(Reply::err(errors::READONLY_REPLICA));
    }
    None
}

/// (replica-read-only, replica-serve-stale-data), read again only when the configuration's
/// generation changed.
fn policy(e: &mut Engine) -> (bool, bool) {
    let generation = e.config.generation;
    if e.repl.policy.0 != Some(generation) {
        let yes = |name: &str| e.config.get_by_name(name).as_deref() != Some("no");
        e.repl.policy = (
            Some(generation),
            yes("replica-read-only"),
            yes("replica-serve-stale-data"),
        );
    }
    (e.repl.policy.1, e.repl.policy.2)
}

/// A write command a script runs through redis.call on a read-only replica: refused with
/// READONLY, as Redis's scriptVerifyWriteCommandAllow refuses it (the script itself was let
/// run because, without declared flags, it was not known to write).
pub(crate) fn script_write_refused(e: &mut Engine, conn: ConnId) -> bool {
    e.repl.is_replica() && !e.repl.is_primary_link(conn) && policy(e).0
}

/// Whether the transaction `conn` queued holds a command not flagged stale.
fn queued_denystale(e: &Engine, conn: ConnId) -> bool {
    let Some(m) = e.sessions.get(&conn).and_then(|s| s.multi.as_ref()) else {
        return false;
    };
    m.queue
        .iter()
        .any(|args| crate::cmd::table::resolve(args).is_ok_and(|(c, _)| !c.has(STALE)))
}
