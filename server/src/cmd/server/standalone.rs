//! WAIT's arguments (the count of acknowledging replicas is `crate::repl::primary::wait`'s).
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
