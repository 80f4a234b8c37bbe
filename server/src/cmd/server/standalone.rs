//! WAIT's arguments (the count of acknowledging replicas is `crate::repl::primary::wait`'s),
//! and WAITAOF (Redis 7.2).
//! FAILOVER lives with replication (`crate::repl::failover`); READONLY / READWRITE / ASKING
//! with the cluster (`crate::cluster::commands`).

use super::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// WAIT numreplicas timeout: no replica ever acknowledges, so 0 at once when none is asked
/// for, else 0 once the timeout (on the engine's clock; 0 is forever) has passed, blocked
/// meanwhile as Redis is. In MULTI it answers at once.
pub(super) fn wait(e: &mut Engine, call: &mut Call) -> CmdResult {
    if let Some(refused) = crate::repl::primary::wait_refused_on_replica(e) {
        return Err(refused);
    }
    let wanted = args::int(call.arg(1))?;
    let timeout = millis_timeout(e, call.arg(2))?;
    // Redis keeps the count in an int (`bpop.numreplicas`): a count that truncates to zero
    // or below, like 2^63-1, is satisfied by no replica at all and answers at once.
    if wanted as i32 <= 0 {
        return Ok(Reply::Int(0));
    }
    let deadline = (timeout > 0).then(|| e.now_ms.saturating_add(timeout));
    Ok(crate::repl::primary::wait(e, call, wanted, deadline))
}

/// A timeout in milliseconds (WAIT, WAITAOF), 0 for forever. From Redis 7.2 (and in Valkey)
/// one that overflows once the current time is added is "timeout is out of range"
/// (redis/redis#11338); Redis 7.0 lets the deadline wrap.
fn millis_timeout(e: &Engine, arg: &[u8]) -> Result<i64, Reply> {
    match args::int(arg) {
        Err(_) => Err(Reply::err(errors::PAUSE_TIMEOUT_NOT_INTEGER)),
        Ok(t) if t < 0 => Err(Reply::err(errors::TIMEOUT_NEGATIVE)),
        Ok(t)
            if t > 0
                && t > i64::MAX - e.now_ms
                && e.profile()
                    .has(crate::compat::since::TIMEOUT_OVERFLOW_REFUSED) =>
        {
            Err(Reply::err(errors::TIMEOUT_OUT_OF_RANGE))
        }
        Ok(t) => Ok(t),
    }
}

/// WAITAOF numlocal numreplicas timeout (Redis 7.2, Valkey 7.2): how many of the local AOF
/// and the replicas' AOFs have fsynced this client's writes. redlab writes no AOF, and its
/// replicas none either: with `appendonly no` (the default) a numlocal of 1 is refused as
/// Redis refuses it; with `appendonly yes` the local count is 1 at once (as SAVE, the write
/// is taken as done). No replica ever acknowledges an fsync (a Redis replica without AOF
/// does not), so a numreplicas above 0 blocks until the timeout (0: forever) and answers
/// `[local, 0]`; in MULTI or a script it answers at once.
pub(super) fn waitaof(e: &mut Engine, call: &mut Call) -> CmdResult {
    let numlocal = args::int(call.arg(1))?;
    if !(0..=1).contains(&numlocal) {
        return Err(Reply::err(errors::WAITAOF_NUMLOCAL_RANGE));
    }
    let numreplicas = match args::int(call.arg(2)) {
        Ok(n) if n >= 0 => n,
        _ => return Err(Reply::err(errors::MUST_BE_POSITIVE)),
    };
    let timeout = millis_timeout(e, call.arg(3))?;
    if e.repl.is_replica() {
        return Err(Reply::err(errors::WAITAOF_ON_REPLICA));
    }
    let aof = e
        .config
        .get_by_name("appendonly")
        .is_some_and(|v| v == "yes");
    if numlocal == 1 && !aof {
        return Err(Reply::err(errors::WAITAOF_WITHOUT_AOF));
    }
    let acked = Reply::Array(vec![Reply::Int(i64::from(aof)), Reply::Int(0)]);
    if numreplicas == 0 {
        return Ok(acked);
    }
    let deadline = (timeout > 0).then(|| e.now_ms.saturating_add(timeout));
    Ok(e.block(call, Vec::new(), deadline, acked))
}
