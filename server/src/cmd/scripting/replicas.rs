//! min-replicas-to-write: writes refused with NOREPLICAS while fewer good replicas than that
//! are connected, as Redis 7.0's checkGoodReplicasStatus decides.
//!
//! What counts as a write is Redis's `is_write_command`: a command flagged write; an EVAL,
//! EVALSHA or FCALL whose script declares its flags (a `#!lua` line, every function) without
//! `no-writes`; an EXEC with such a command queued. A script without a shebang is judged at
//! its first write inside (`script_call`), unless it has already written.

use bytes::Bytes;

use super::declared_flags;
use crate::cmd::table::{flags, Command};
use crate::engine::{resolve, Engine};
use crate::lua::shebang;
use crate::session::ConnId;

/// Connected replicas that count as good: acknowledged within `max_lag` seconds.
fn good_replicas(e: &Engine, max_lag: u64) -> u64 {
    let now = e.now_ms;
    e.repl
        .replicas
        .iter()
        .filter(|r| (now - r.ack_ms) / 1000 <= max_lag as i64)
        .count() as u64
}

/// True when writes must be refused now: min-replicas-to-write and min-replicas-max-lag are
/// both set and fewer good replicas are connected.
pub(crate) fn replicas_short(e: &Engine) -> bool {
    let v = e.derived.get(&e.config);
    if v.min_replicas_to_write == 0 {
        return false;
    }
    let max_lag = v.min_replicas_max_lag;
    max_lag > 0 && good_replicas(e, max_lag) < v.min_replicas_to_write
}

/// Redis's `is_write_command` for `args` (resolved to `cmd`) sent by `conn`.
pub(crate) fn is_write(e: &Engine, conn: ConnId, cmd: &Command, args: &[Bytes]) -> bool {
    if cmd.name == "exec" {
        let Some(queue) = e
            .sessions
            .get(&conn)
            .and_then(|s| s.multi.as_ref())
            .map(|m| &m.queue)
        else {
            return false;
        };
        return queue
            .iter()
            .any(|q| resolve(q).is_ok_and(|(c, _)| writes(e, c, q)));
    }
    writes(e, cmd, args)
}

fn writes(e: &Engine, cmd: &Command, args: &[Bytes]) -> bool {
    if cmd.has(flags::WRITE) {
        return true;
    }
    matches!(declared_flags(e, cmd, args),
        Some(f) if f & shebang::EVAL_COMPAT == 0 && f & shebang::NO_WRITES == 0)
}
