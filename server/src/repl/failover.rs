//! FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | FAILOVER ABORT: a primary hands its role
//! to one of its replicas without losing a write, as Redis 7.0.15 does it.
//!
//! 1. The command checks its arguments and the server's state, pauses writes (Redis's
//!    PAUSE_DURING_FAILOVER, apart from CLIENT PAUSE) and answers OK at once. INFO
//!    replication's `master_failover_state` is `waiting-for-sync`.
//! 2. On each tick (`update`), once the target (the one named, or else the first replica
//!    whose acknowledged offset is the primary's) has acknowledged everything, the state is
//!    `failover-in-progress` and this server follows the target. Past TIMEOUT the failover is
//!    abandoned, or with FORCE goes ahead anyway.
//! 3. The link's handshake then sends `PSYNC <replid> <offset> FAILOVER`: the target, whose
//!    history is ours, promotes itself and serves the PSYNC (`target_side`). Once the old
//!    primary is synchronised, the failover is over and writes are let through (they now
//!    get READONLY); a target that refuses the PSYNC aborts it and the old primary is a
//!    primary again.

use super::commands::{follow, promote};
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Writes are paused; waiting for the target to acknowledge the whole stream.
    WaitForSync,
    /// Following the target; waiting for the PSYNC that promotes it to succeed.
    InProgress,
}

/// A failover under way on this primary.
#[derive(Debug, Clone)]
pub(crate) struct Failover {
    pub(crate) stage: Stage,
    /// The replica to hand over to: the one named by TO, or the one found caught up.
    target: Option<(String, u16)>,
    /// TIMEOUT's end, engine ms.
    deadline_ms: Option<i64>,
    force: bool,
}

/// INFO replication's master_failover_state.
pub(crate) fn state_name(e: &Engine) -> &'static str {
    match e.repl.failover.as_ref().map(|f| f.stage) {
        None => "no-failover",
        Some(Stage::WaitForSync) => "waiting-for-sync",
        Some(Stage::InProgress) => "failover-in-progress",
    }
}

/// The attached replica announced as `host:port`, and whether it is online (every replica
/// redlab has attached is: it got its payload with the reply to SYNC/PSYNC).
fn find_replica<'a>(e: &'a Engine, host: &str, port: u16) -> Option<&'a super::Replica> {
    e.repl
        .replicas
        .iter()
        .find(|r| r.ip.eq_ignore_ascii_case(host) && r.port == port)
}

/// The FAILOVER command.
pub(crate) fn failover(e: &mut Engine, call: &mut Call) -> CmdResult {
    if e.cluster.is_some() {
        return Err(Reply::err(errors::FAILOVER_IN_CLUSTER));
    }
    if call.argc() == 2 && args::is(call.arg(1), "abort") {
        if e.repl.failover.is_none() {
            return Err(Reply::err(errors::NO_FAILOVER_IN_PROGRESS));
        }
        abort(e);
        return Ok(Reply::ok());
    }
    let (mut timeout, mut force, mut to) = (0i64, false, None::<(String, i64)>);
    let mut j = 1;
    while j < call.argc() {
        let a = call.arg(j);
        if args::is(a, "timeout") && j + 1 < call.argc() && timeout == 0 {
            timeout = args::int(call.arg(j + 1))?;
            if timeout <= 0 {
                return Err(Reply::err(errors::FAILOVER_TIMEOUT_MUST_BE_GREATER_THAN));
            }
            j += 2;
        } else if args::is(a, "to") && j + 2 < call.argc() && to.is_none() {
            let port = args::int(call.arg(j + 2))?;
            to = Some((String::from_utf8_lossy(call.arg(j + 1)).into_owned(), port));
            j += 3;
        } else if args::is(a, "force") && !force {
            force = true;
            j += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    if e.repl.failover.is_some() {
        return Err(Reply::err(errors::FAILOVER_ALREADY_IN_PROGRESS));
    }
    if e.repl.is_replica() {
        return Err(Reply::err(errors::FAILOVER_ON_REPLICA));
    }
    if e.repl.replicas.is_empty() {
        return Err(Reply::err(errors::FAILOVER_REQUIRES_CONNECTED_REPLICAS));
    }
    if force && (timeout == 0 || to.is_none()) {
        return Err(Reply::err(errors::FAILOVER_FORCE_NEEDS_TIMEOUT_AND_TARGET));
    }
    let target = match to {
        Some((host, port)) => {
            let port = u16::try_from(port).ok();
            if port.and_then(|p| find_replica(e, &host, p)).is_none() {
                return Err(Reply::err(errors::FAILOVER_TARGET_NOT_A_REPLICA));
            }
            port.map(|p| (host, p))
        }
        None => None,
    };
    let now = e.clock.now_ms();
    e.repl.failover = Some(Failover {
        stage: Stage::WaitForSync,
        target,
        deadline_ms: (timeout > 0).then(|| now.saturating_add(timeout)),
        force,
    });
    e.set_failover_pause(true);
    Ok(Reply::ok())
}

/// Moves a failover on (Redis's updateFailoverStatus): called on every tick, never from a
/// command, since following the target closes the replicas' connections.
pub(crate) fn update(e: &mut Engine) {
    let Some(f) = e.repl.failover.clone() else {
        return;
    };
    if f.stage != Stage::WaitForSync {
        return;
    }
    let now = e.clock.now_ms();
    if f.deadline_ms.is_some_and(|d| d <= now) {
        match f.target {
            Some((host, port)) if f.force => begin(e, host, port),
            _ => abort(e),
        }
        return;
    }
    let offset = e.repl.master_offset();
    let caught_up = match &f.target {
        Some((host, port)) => find_replica(e, host, *port)
            .filter(|r| r.ack == offset)
            .map(|_| (host.clone(), *port)),
        None => e
            .repl
            .replicas
            .iter()
            .find(|r| r.ack == offset)
            .map(|r| (r.ip.clone(), r.port)),
    };
    if let Some((host, port)) = caught_up {
        begin(e, host, port);
    }
}

/// The target caught up (or FORCE's timeout passed): this server follows it, asking it in
/// the PSYNC to take over.
fn begin(e: &mut Engine, host: String, port: u16) {
    if let Some(f) = e.repl.failover.as_mut() {
        f.stage = Stage::InProgress;
        f.target = Some((host.clone(), port));
    }
    follow(e, &host, port);
}

/// Whether the link's PSYNC must carry FAILOVER.
pub(crate) fn psync_hands_over(e: &Engine) -> bool {
    e.repl
        .failover
        .as_ref()
        .is_some_and(|f| f.stage == Stage::InProgress)
}

/// The link's PSYNC was answered: the failover is over, done (`accepted`) or abandoned.
pub(crate) fn psync_answered(e: &mut Engine, accepted: bool) {
    if !psync_hands_over(e) {
        return;
    }
    if accepted {
        clear(e);
    } else {
        abort(e);
    }
}

/// Gives up: a server already following the target becomes a primary again.
fn abort(e: &mut Engine) {
    if psync_hands_over(e) {
        promote(e);
    }
    clear(e);
}

fn clear(e: &mut Engine) {
    e.repl.failover = None;
    e.set_failover_pause(false);
}

/// The target's side of `PSYNC replid offset FAILOVER`: a replica whose primary's history
/// is `replid` takes over as a primary before serving the PSYNC.
pub(crate) fn target_side(e: &mut Engine, replid: &[u8]) -> Result<(), Reply> {
    if replid != e.repl.replid.as_bytes() {
        return Err(Reply::err(errors::PSYNC_FAILOVER_REPLID));
    }
    promote(e);
    Ok(())
}
