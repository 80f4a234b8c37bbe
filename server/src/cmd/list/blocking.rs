//! BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP.
//!
//! First run: like the non-blocking command when a key has data; otherwise the client
//! blocks in `Engine::block` (inside MULTI or a script it gets the timeout reply at once).
//! When a push makes one of its keys ready, the engine runs the handler again with
//! `call.reprocessing` set and the ready key in `Engine::serving_key`; as in Redis 7.0, the
//! client is then served from that key only, even if an earlier key of its command also
//! got data in the same transaction.
//!
//! Replies on timeout are a null array for all five commands (Redis's
//! `replyToBlockedClientTimedOut`); when blocking is not allowed (MULTI, scripts) BLMOVE
//! and BRPOPLPUSH answer a null bulk string instead, as their non-blocking forms do.

use crate::cmd::lookup::lookup_mut;
use crate::cmd::table::CmdResult;
use crate::db::ListValue;
use bytes::Bytes;

use super::moves::{move_element, mpop_first, parse_mpop, popped_with_key};
use super::{delete_if_empty, pop_end, pop_many, End};
use crate::cmd::args;
use crate::engine::{Call, Engine};
use crate::notify;
use crate::reply::Reply;

/// The ready key this call is being served from, when the engine re-runs a blocked command.
fn serving_key(e: &Engine, call: &Call) -> Option<Vec<u8>> {
    if call.reprocessing {
        e.serving_key.clone()
    } else {
        None
    }
}

/// Whether `key` holds a non-empty list right now.
fn has_data(e: &mut Engine, db: usize, key: &[u8]) -> bool {
    matches!(lookup_mut::<ListValue>(e, db, key), Ok(Some(list)) if !list.is_empty())
}

pub(super) fn blpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(bpop(e, call, End::Left))
}

pub(super) fn brpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(bpop(e, call, End::Right))
}

fn bpop(e: &mut Engine, call: &mut Call, end: End) -> Reply {
    if let Some(key) = serving_key(e, call) {
        return serve_pop(e, call.db, &key, end);
    }
    let timeout_idx = call.argc() - 1;
    let deadline = match args::block_timeout(e, call.arg(timeout_idx)) {
        Ok(d) => d,
        Err(err) => return err,
    };
    let keys = &call.args[1..timeout_idx];
    for key in keys {
        let value = match lookup_mut::<ListValue>(e, call.db, key) {
            Err(err) => return err,
            Ok(None) => continue,
            Ok(Some(list)) => match pop_end(list, end) {
                Some(v) => v,
                None => continue,
            },
        };
        super::changed(e, call.db, key, end.pop_event(), 1);
        delete_if_empty(e, call.db, key);
        return Reply::Array(vec![
            Reply::Bulk(key.clone()),
            Reply::Bulk(Bytes::from(value)),
        ]);
    }
    let keys = keys.iter().map(|k| k.to_vec()).collect();
    e.block(call, keys, deadline, Reply::NilArray)
}

/// Serves a blocked BLPOP/BRPOP from its ready key. Redis sends the pop event (and `del`
/// when the list empties) but counts no change: the push that woke the client did.
fn serve_pop(e: &mut Engine, db: usize, key: &[u8], end: End) -> Reply {
    let value = match lookup_mut::<ListValue>(e, db, key) {
        Ok(Some(list)) => match pop_end(list, end) {
            Some(v) => v,
            None => return Reply::None,
        },
        _ => return Reply::None,
    };
    notify::keyspace_event(e, notify::LIST, end.pop_event(), db, key);
    delete_if_empty(e, db, key);
    Reply::Array(vec![Reply::bulk(key), Reply::Bulk(Bytes::from(value))])
}

pub(super) fn blmove(e: &mut Engine, call: &mut Call) -> CmdResult {
    let from = End::parse(call.arg(3))?;
    let to = End::parse(call.arg(4))?;
    Ok(bmove(e, call, from, to, 5))
}

pub(super) fn brpoplpush(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(bmove(e, call, End::Right, End::Left, 3))
}

fn bmove(e: &mut Engine, call: &mut Call, from: End, to: End, timeout_idx: usize) -> Reply {
    let (src, dst) = (call.args[1].clone(), call.args[2].clone());
    if serving_key(e, call).is_some() {
        if !has_data(e, call.db, &src) {
            return Reply::None;
        }
        // A destination of another type unblocks the client with WRONGTYPE, element kept.
        return move_element(e, call.db, &src, &dst, from, to, 0);
    }
    let deadline = match args::block_timeout(e, call.arg(timeout_idx)) {
        Ok(d) => d,
        Err(err) => return err,
    };
    let ready = match lookup_mut::<ListValue>(e, call.db, &src) {
        Err(err) => return err,
        Ok(list) => list.is_some_and(|l| !l.is_empty()),
    };
    if ready {
        move_element(e, call.db, &src, &dst, from, to, 1)
    } else if call.in_multi || call.in_script {
        Reply::Nil
    } else {
        e.block(call, vec![src.to_vec()], deadline, Reply::NilArray)
    }
}

pub(super) fn blmpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    let parsed = parse_mpop(call, 2)?;
    if let Some(key) = serving_key(e, call) {
        let items = match lookup_mut::<ListValue>(e, call.db, &key) {
            Ok(Some(list)) if !list.is_empty() => pop_many(list, parsed.end, parsed.count),
            _ => return Ok(Reply::None),
        };
        return Ok(popped_with_key(e, call.db, &key, parsed.end, items));
    }
    let deadline = args::block_timeout(e, call.arg(1))?;
    let keys = &call.args[parsed.keys.clone()];
    if let Some(reply) = mpop_first(e, call.db, keys, parsed.end, parsed.count) {
        return Ok(reply);
    }
    let keys = keys.iter().map(|k| k.to_vec()).collect();
    Ok(e.block(call, keys, deadline, Reply::NilArray))
}
