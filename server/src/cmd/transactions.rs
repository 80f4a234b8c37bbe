//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! The dispatcher queues commands while a connection is in MULTI and flags the transaction
//! when it refuses one (unknown command, wrong arity, ...); EXEC then answers EXECABORT.
//! WATCH is optimistic locking: any write to a watched key by anyone (the `modified` hook,
//! FLUSHDB/FLUSHALL on an existing key) makes the next EXEC answer a null array. A watched key
//! that merely expires does not, as in Redis 7.0.

use super::table::{flags::*, Command};
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;
use crate::session::{ConnId, MultiState};

fn multi(e: &mut Engine, call: &mut Call) -> CmdResult {
    let Some(s) = e.sessions.get_mut(&call.conn) else {
        return Ok(Reply::None);
    };
    if s.multi.is_some() {
        // Refused, but the open transaction stays intact (Redis does not flag it).
        return Err(Reply::err(errors::MULTI_NESTED));
    }
    s.multi = Some(MultiState::default());
    s.had_multi_state = true;
    Ok(Reply::ok())
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

fn discard(e: &mut Engine, call: &mut Call) -> CmdResult {
    if e.sessions.get(&call.conn).is_none_or(|s| s.multi.is_none()) {
        return Err(Reply::err(errors::DISCARD_WITHOUT_MULTI));
    }
    discard_transaction(e, call.conn);
    Ok(Reply::ok())
}

fn exec(e: &mut Engine, call: &mut Call) -> CmdResult {
    let conn = call.conn;
    // A watched key past its deadline counts as changed even if expiry has not removed it.
    if e.sessions.get(&conn).is_some_and(|s| s.multi.is_some()) && e.watched_key_expired(conn) {
        if let Some(s) = e.sessions.get_mut(&conn) {
            s.watch_dirty = true;
        }
    }
    let Some(s) = e.sessions.get_mut(&conn) else {
        return Ok(Reply::None);
    };
    let Some(state) = s.multi.take() else {
        return Err(Reply::err(errors::EXEC_WITHOUT_MULTI));
    };
    let dirty = s.watch_dirty;
    e.unwatch_all(conn);
    if state.aborted {
        return Err(Reply::err(errors::EXECABORT));
    }
    if dirty {
        return Ok(Reply::NilArray);
    }
    // The whole transaction sees one "now", as in Redis; a script inside it must not thaw it.
    let was_frozen = e.time_frozen;
    e.time_frozen = true;
    let mut replies = Vec::with_capacity(state.queue.len());
    let mut typed = state.typed.into_iter().peekable();
    for (i, args) in state.queue.into_iter().enumerate() {
        let shown = typed.next_if(|(at, _)| *at == i).map(|(_, name)| name);
        // SELECT and HELLO inside the transaction affect the commands after them.
        let Some((db, resp)) = e.sessions.get(&conn).map(|s| (s.db, s.resp)) else {
            break;
        };
        let mut nested = Call {
            conn,
            db,
            resp,
            args,
            in_script: false,
            in_multi: true,
            reprocessing: false,
        };
        replies.push(e.run_queued(&mut nested, shown));
    }
    e.time_frozen = was_frozen;
    if !was_frozen {
        e.frozen_time_us = None;
    }
    Ok(Reply::Array(replies))
}

fn watch(e: &mut Engine, call: &mut Call) -> CmdResult {
    let conn = call.conn;
    let Some(s) = e.sessions.get_mut(&conn) else {
        return Ok(Reply::None);
    };
    if s.multi.is_some() {
        return Err(Reply::err(errors::WATCH_IN_MULTI));
    }
    s.had_multi_state = true;
    // Already doomed: watching more changes nothing.
    if s.watch_dirty {
        return Ok(Reply::ok());
    }
    for key in &call.args[1..] {
        let slot = (call.db, key.to_vec());
        if e.sessions[&conn].watched.contains(&slot) {
            continue;
        }
        // Already past its deadline but not yet removed: Redis 7.0 remembers it, so that its
        // removal by expiry later is no change.
        let stale = e.db(call.db).is_stale(key);
        let s = e.sessions.get_mut(&conn).expect("session exists");
        if stale {
            s.watched_expired.push(slot.clone());
        }
        s.watched.push(slot.clone());
        e.watched_keys.entry(slot).or_default().push(conn);
    }
    Ok(Reply::ok())
}

fn unwatch(e: &mut Engine, call: &mut Call) -> CmdResult {
    e.unwatch_all(call.conn);
    Ok(Reply::ok())
}

pub static COMMANDS: &[Command] = &[
    Command::new(
        "multi",
        1,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        "transactions",
        multi,
    ),
    Command::new(
        "exec",
        1,
        NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG,
        "transactions",
        exec,
    ),
    Command::new(
        "discard",
        1,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        "transactions",
        discard,
    ),
    Command::new(
        "watch",
        -2,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        "transactions",
        watch,
    )
    .keys(1, -1, 1),
    Command::new(
        "unwatch",
        1,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        "transactions",
        unwatch,
    ),
];

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::clock::Clock;
    use crate::config::Config;
    use crate::db::Value;
    use crate::engine::Engine;
    use crate::errors;
    use crate::reply::Reply;

    fn run(e: &mut Engine, conn: u64, line: &str) -> Reply {
        let args: Vec<&str> = line.split(' ').collect();
        e.execute(conn, &args)
    }

    fn manual() -> (Engine, Clock) {
        let clock = Clock::manual(1_700_000_000_000);
        (Engine::with_clock(Config::default(), clock.clone()), clock)
    }

    #[test]
    fn optimistic_lock_lets_exactly_one_writer_win() {
        let mut e = Engine::new(Config::default());
        let (a, b) = (e.connect(), e.connect());
        run(&mut e, a, "SET counter 0");
        for c in [a, b] {
            run(&mut e, c, "WATCH counter");
            run(&mut e, c, "MULTI");
            assert_eq!(run(&mut e, c, "SET counter 1"), Reply::status("QUEUED"));
        }
        assert_eq!(run(&mut e, a, "EXEC"), Reply::Array(vec![Reply::ok()]));
        assert_eq!(run(&mut e, b, "EXEC"), Reply::NilArray);
        assert!(e.watched_keys.is_empty(), "EXEC forgets the watches");
    }

    #[test]
    fn a_watched_key_that_expires_fails_exec() {
        let (mut e, clock) = manual();
        let c = e.connect();
        let deadline = e.clock.now_ms() + 1000;
        e.db(0)
            .set_with_expire(b"lease", Value::Str(b"x".to_vec().into()), Some(deadline));
        run(&mut e, c, "WATCH lease");
        clock.advance(Duration::from_secs(2));
        e.tick();
        run(&mut e, c, "MULTI");
        run(&mut e, c, "GET lease");
        assert_eq!(run(&mut e, c, "EXEC"), Reply::NilArray);
    }

    #[test]
    fn a_watched_key_expiring_unseen_fails_exec_but_one_watched_expired_does_not() {
        let (mut e, clock) = manual();
        e.active_expire = false;
        let c = e.connect();
        let deadline = e.clock.now_ms() + 1000;
        e.db(0)
            .set_with_expire(b"a", Value::Str(b"x".to_vec().into()), Some(deadline));
        e.db(0)
            .set_with_expire(b"b", Value::Str(b"x".to_vec().into()), Some(deadline));
        run(&mut e, c, "WATCH a");
        clock.advance(Duration::from_secs(2));
        run(&mut e, c, "MULTI");
        assert_eq!(run(&mut e, c, "EXEC"), Reply::NilArray, "a expired, unread");
        run(&mut e, c, "WATCH b");
        run(&mut e, c, "GET b");
        run(&mut e, c, "MULTI");
        assert_eq!(
            run(&mut e, c, "EXEC"),
            Reply::Array(vec![]),
            "b was already expired when watched: its removal changes nothing"
        );
    }

    #[test]
    fn flush_breaks_watches_only_on_existing_keys() {
        let mut e = Engine::new(Config::default());
        let (a, b) = (e.connect(), e.connect());
        run(&mut e, a, "SET present 1");
        run(&mut e, a, "WATCH present");
        run(&mut e, b, "WATCH absent");
        e.touch_all_watched(None);
        for c in [a, b] {
            run(&mut e, c, "MULTI");
        }
        assert_eq!(run(&mut e, a, "EXEC"), Reply::NilArray);
        assert_eq!(run(&mut e, b, "EXEC"), Reply::Array(vec![]));
    }

    #[test]
    fn swapdb_breaks_watches_on_keys_present_on_either_side() {
        let mut e = Engine::new(Config::default());
        let (a, b) = (e.connect(), e.connect());
        run(&mut e, b, "SELECT 1");
        run(&mut e, b, "SET only-in-1 v");
        run(&mut e, a, "WATCH only-in-1");
        e.touch_watched_swapdb(0, 1);
        run(&mut e, a, "MULTI");
        assert_eq!(run(&mut e, a, "EXEC"), Reply::NilArray);
    }

    #[test]
    fn exec_freezes_time_and_restores_it() {
        let (mut e, _clock) = manual();
        let c = e.connect();
        run(&mut e, c, "MULTI");
        run(&mut e, c, "PING");
        assert!(matches!(run(&mut e, c, "EXEC"), Reply::Array(_)));
        assert!(!e.time_frozen);
    }

    #[test]
    fn queued_errors_abort_and_runtime_errors_do_not() {
        let mut e = Engine::new(Config::default());
        let c = e.connect();
        run(&mut e, c, "MULTI");
        run(&mut e, c, "SET k v");
        assert!(run(&mut e, c, "NOSUCH").is_error());
        assert_eq!(run(&mut e, c, "EXEC"), Reply::err(errors::EXECABORT));
        assert_eq!(run(&mut e, c, "GET k"), Reply::Nil);
        run(&mut e, c, "MULTI");
        run(&mut e, c, "SET k v");
        run(&mut e, c, "SELECT 999");
        run(&mut e, c, "GET k");
        assert_eq!(
            run(&mut e, c, "EXEC"),
            Reply::Array(vec![
                Reply::ok(),
                Reply::err(errors::DB_INDEX),
                Reply::bulk("v")
            ])
        );
    }

    #[test]
    fn refused_exec_discards_the_transaction_and_watches() {
        let mut e = Engine::new(Config::default());
        let c = e.connect();
        run(&mut e, c, "WATCH k");
        run(&mut e, c, "MULTI");
        assert_eq!(
            run(&mut e, c, "EXEC x"),
            Reply::err("EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command")
        );
        assert!(e.watched_keys.is_empty());
        assert_eq!(
            run(&mut e, c, "EXEC"),
            Reply::err(errors::EXEC_WITHOUT_MULTI)
        );
    }
}
