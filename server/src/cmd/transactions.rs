//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! The dispatcher queues commands while a connection is in MULTI and flags the transaction
//! when it refuses one (unknown command, wrong arity, ...); EXEC then answers EXECABORT.
//! WATCH is optimistic locking: any write to a watched key by anyone (the `modified` hook,
//! FLUSHDB/FLUSHALL on an existing key) makes the next EXEC answer a null array. A watched key
//! that merely expires does not, as in Redis 7.0.

use super::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;
use crate::session::{ConnId, MultiState};

fn multi(e: &mut Engine, call: &mut Call) -> Reply {
    let Some(s) = e.sessions.get_mut(&call.conn) else {
        return Reply::None;
    };
    if s.multi.is_some() {
        // Refused, but the open transaction stays intact (Redis does not flag it).
        return Reply::err(errors::MULTI_NESTED);
    }
    s.multi = Some(MultiState::default());
    Reply::ok()
}

/// Ends the transaction and drops every WATCH: what DISCARD, EXEC and a refused EXEC do.
pub(crate) fn discard_transaction(e: &mut Engine, conn: ConnId) {
    if let Some(s) = e.sessions.get_mut(&conn) {
        s.multi = None;
    }
    e.unwatch_all(conn);
}

/// The dispatcher refused EXEC itself (wrong arity, NOAUTH, RESP2 pub/sub context): Redis
/// discards the transaction and replies EXECABORT with the reason.
pub(crate) fn exec_abort(e: &mut Engine, conn: ConnId, reason: &str) -> Reply {
    discard_transaction(e, conn);
    Reply::err(errors::execabort_because(reason))
}

fn discard(e: &mut Engine, call: &mut Call) -> Reply {
    if !e.sessions.get(&call.conn).is_some_and(|s| s.multi.is_some()) {
        return Reply::err(errors::DISCARD_WITHOUT_MULTI);
    }
    discard_transaction(e, call.conn);
    Reply::ok()
}

fn exec(e: &mut Engine, call: &mut Call) -> Reply {
    let conn = call.conn;
    let Some(s) = e.sessions.get_mut(&conn) else {
        return Reply::None;
    };
    let Some(state) = s.multi.take() else {
        return Reply::err(errors::EXEC_WITHOUT_MULTI);
    };
    let dirty = s.watch_dirty;
    e.unwatch_all(conn);
    if state.aborted {
        return Reply::err(errors::EXECABORT);
    }
    if dirty {
        return Reply::NilArray;
    }
    // The whole transaction sees one "now", as in Redis; a script inside it must not thaw it.
    let was_frozen = e.time_frozen;
    e.time_frozen = true;
    let mut replies = Vec::with_capacity(state.queue.len());
    for args in state.queue {
        // SELECT and HELLO inside the transaction affect the commands after them.
        let Some((db, resp)) = e.sessions.get(&conn).map(|s| (s.db, s.resp)) else {
            break;
        };
        let mut nested = Call { conn, db, resp, args, in_script: false, in_multi: true, reprocessing: false };
        replies.push(e.run_nested(&mut nested));
    }
    e.time_frozen = was_frozen;
    Reply::Array(replies)
}

fn watch(e: &mut Engine, call: &mut Call) -> Reply {
    let conn = call.conn;
    let Some(s) = e.sessions.get_mut(&conn) else {
        return Reply::None;
    };
    if s.multi.is_some() {
        return Reply::err(errors::WATCH_IN_MULTI);
    }
    // Already doomed: watching more changes nothing.
    if s.watch_dirty {
        return Reply::ok();
    }
    for key in &call.args[1..] {
        let slot = (call.db, key.to_vec());
        if s.watched.contains(&slot) {
            continue;
        }
        s.watched.push(slot.clone());
        e.watched_keys.entry(slot).or_default().push(conn);
    }
    Reply::ok()
}

fn unwatch(e: &mut Engine, call: &mut Call) -> Reply {
    e.unwatch_all(call.conn);
    Reply::ok()
}

pub static COMMANDS: &[Command] = &[
    Command::new("multi", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, "transactions", multi),
    Command::new("exec", 1, NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG, "transactions", exec),
    Command::new("discard", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, "transactions", discard),
    Command::new("watch", -2, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, "transactions", watch).keys(1, -1, 1),
    Command::new("unwatch", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, "transactions", unwatch),
];

