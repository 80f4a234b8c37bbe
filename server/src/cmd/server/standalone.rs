//! Commands about replicas and the cluster, as a standalone server without replicas answers
//! them: WAIT (no replica ever acknowledges) and FAILOVER (there is no replica to fail over
//! to). READONLY / READWRITE / ASKING live with the cluster (`crate::cluster::commands`).

use super::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// WAIT numreplicas timeout: no replica ever acknowledges, so 0 at once when none is asked
/// for, else 0 once the timeout (on the engine's clock; 0 is forever) has passed, blocked
/// meanwhile as Redis is. In MULTI it answers at once.
pub(super) fn wait(e: &mut Engine, call: &mut Call) -> CmdResult {
    let wanted = args::int(call.arg(1))?;
    let timeout = match args::int(call.arg(2)) {
        Err(_) => return Err(Reply::err(crate::errors::PAUSE_TIMEOUT_NOT_INTEGER)),
        Ok(t) if t < 0 => return Err(Reply::err(errors::TIMEOUT_NEGATIVE)),
        Ok(t) => t,
    };
    // Redis keeps the count in an int (`bpop.numreplicas`): a count that truncates to zero
    // or below, like 2^63-1, is satisfied by no replica at all and answers at once.
    if wanted as i32 <= 0 {
        return Ok(Reply::Int(0));
    }
    let deadline = (timeout > 0).then(|| e.now_ms.saturating_add(timeout));
    Ok(crate::repl::primary::wait(e, call, wanted, deadline))
}

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: the arguments are checked as Redis
/// checks them, then it fails for want of replicas.
pub(super) fn failover(_e: &mut Engine, call: &mut Call) -> CmdResult {
    let (mut to, mut force, mut abort, mut timeout) = (false, false, false, None);
    let mut i = 1;
    while i < call.argc() {
        let a = call.arg(i);
        let more = call.argc() - i - 1;
        if args::is(a, "to") && more >= 2 && !to {
            args::int(call.arg(i + 2))?;
            to = true;
            i += 3;
        } else if args::is(a, "timeout") && more >= 1 && timeout.is_none() {
            timeout = Some(args::int(call.arg(i + 1))?);
            i += 2;
        } else if args::is(a, "force") && !force {
            force = true;
            i += 1;
        } else if args::is(a, "abort") && !abort {
            abort = true;
            i += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    if abort {
        if to || force || timeout.is_some() {
            return Err(Reply::err(errors::SYNTAX));
        }
        return Err(Reply::err(crate::errors::NO_FAILOVER_IN_PROGRESS));
    }
    if timeout.is_some_and(|t| t <= 0) {
        return Err(Reply::err(
            crate::errors::FAILOVER_TIMEOUT_MUST_BE_GREATER_THAN,
        ));
    }
    Err(Reply::err(
        crate::errors::FAILOVER_REQUIRES_CONNECTED_REPLICAS,
    ))
}
