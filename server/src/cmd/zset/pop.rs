//! ZPOPMIN, ZPOPMAX, ZMPOP and their blocking forms BZPOPMIN, BZPOPMAX, BZMPOP.
//!
//! The reply shapes differ per command and protocol, exactly as in Redis:
//! ZPOPMIN flat `[m, s, ...]` (RESP3 with COUNT: `[[m, s], ...]`), BZPOPMIN `[key, m, s]`,
//! ZMPOP/BZMPOP `[key, [[m, s], ...]]`.
//!
//! A blocked client is served by running its command again once a key gets data
//! (`Engine::signal_ready`); on that re-run a key of another type is skipped rather than
//! answered with WRONGTYPE, since Redis 7.0 only serves a waiter from a sorted set.

use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use crate::db::ZSet;
use bytes::Bytes;

use super::{args, delete_if_empty};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// How a pop answers.
#[derive(Clone, Copy)]
struct Shape {
    /// The key leads the reply (blocking pops, ZMPOP).
    emit_key: bool,
    /// Each member is a `[member, score]` pair.
    nested: bool,
    /// Nothing to pop: null array (ZMPOP) instead of an empty array.
    nil_when_empty: bool,
}

pub fn zpopmin(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(zpop_min_max(e, call, false))
}

pub fn zpopmax(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(zpop_min_max(e, call, true))
}

fn zpop_min_max(e: &mut Engine, call: &mut Call, max: bool) -> Reply {
    if call.argc() > 3 {
        return Reply::err(errors::SYNTAX);
    }
    let mut count: i64 = -1;
    if call.argc() == 3 {
        count = match args::int(call.arg(2)) {
            Ok(n) if n >= 0 => n,
            _ => return Reply::err(errors::MUST_BE_POSITIVE),
        };
    }
    let shape = Shape {
        emit_key: false,
        nested: call.resp > 2 && count != -1,
        nil_when_empty: false,
    };
    let keys = vec![call.args[1].clone()];
    generic_pop(e, call, &keys, max, count, shape)
}

/// Pops from the first existing key of `keys` (Redis's `genericZpopCommand`).
fn generic_pop(
    e: &mut Engine,
    call: &Call,
    keys: &[Bytes],
    max: bool,
    count: i64,
    shape: Shape,
) -> Reply {
    let db = call.db;
    let mut found = None;
    for k in keys {
        match lookup::<ZSet>(e, db, k) {
            Err(r) => return r,
            Ok(None) => continue,
            Ok(Some(_)) => {
                found = Some(k.clone());
                break;
            }
        }
    }
    let Some(key) = found else {
        return if shape.nil_when_empty {
            Reply::NilArray
        } else {
            Reply::Array(Vec::new())
        };
    };
    if count == 0 {
        return Reply::Array(Vec::new());
    }
    let count = if count < 0 { 1 } else { count as usize };
    let Ok(Some(z)) = lookup_mut::<ZSet>(e, db, &key) else {
        return Reply::err(errors::WRONGTYPE);
    };
    let n = count.min(z.len());
    let popped: Vec<(Vec<u8>, f64)> = if max {
        let len = z.len();
        let mut v = z.remove_rank_range(len - n, len - 1);
        v.reverse();
        v
    } else {
        z.remove_rank_range(0, n - 1)
    };
    if !popped.is_empty() {
        e.modified(
            db,
            &key,
            notify::ZSET,
            if max { "zpopmax" } else { "zpopmin" },
        );
        delete_if_empty(e, db, &key);
    }
    let mut items = Vec::with_capacity(popped.len() * 2 + 1);
    for (m, s) in popped {
        if shape.nested {
            items.push(Reply::Array(vec![Reply::bulk(m), Reply::Double(s)]));
        } else {
            items.push(Reply::bulk(m));
            items.push(Reply::Double(s));
        }
    }
    match (shape.emit_key, shape.nested) {
        (true, true) => Reply::Array(vec![Reply::Bulk(key), Reply::Array(items)]),
        (true, false) => {
            items.insert(0, Reply::Bulk(key));
            Reply::Array(items)
        }
        _ => Reply::Array(items),
    }
}

/// Pops from the first non-empty key, or blocks on all of them.
fn blocking_pop(
    e: &mut Engine,
    call: &Call,
    keys: &[Bytes],
    max: bool,
    timeout_idx: usize,
    count: i64,
    shape: Shape,
) -> Reply {
    let deadline = match crate::cmd::args::block_timeout(e, call.arg(timeout_idx)) {
        Ok(d) => d,
        Err(r) => return r,
    };
    for k in keys {
        match lookup::<ZSet>(e, call.db, k) {
            Ok(None) => continue,
            Err(r) => {
                if call.reprocessing {
                    continue;
                }
                return r;
            }
            Ok(Some(z)) if z.is_empty() => continue,
            Ok(Some(_)) => return generic_pop(e, call, std::slice::from_ref(k), max, count, shape),
        }
    }
    let keys = keys.iter().map(|k| k.to_vec()).collect();
    e.block(call, keys, deadline, Reply::NilArray)
}

pub fn bzpopmin(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(bzpop(e, call, false))
}

pub fn bzpopmax(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(bzpop(e, call, true))
}

fn bzpop(e: &mut Engine, call: &mut Call, max: bool) -> Reply {
    let keys: Vec<Bytes> = call.args[1..call.argc() - 1].to_vec();
    let shape = Shape {
        emit_key: true,
        nested: false,
        nil_when_empty: false,
    };
    blocking_pop(e, call, &keys, max, call.argc() - 1, -1, shape)
}

pub fn zmpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(mpop(e, call, 1, false))
}

pub fn bzmpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(mpop(e, call, 2, true))
}

/// ZMPOP and BZMPOP: `[timeout] numkeys key... MIN|MAX [COUNT n]`.
fn mpop(e: &mut Engine, call: &mut Call, numkeys_idx: usize, blocking: bool) -> Reply {
    let numkeys = match args::int(call.arg(numkeys_idx)) {
        Ok(n) if n >= 1 => n as u64,
        _ => return Reply::err(errors::NUMKEYS_NOT_POSITIVE),
    };
    let where_idx = (numkeys_idx as u64)
        .saturating_add(numkeys)
        .saturating_add(1);
    if where_idx >= call.argc() as u64 {
        return Reply::err(errors::SYNTAX);
    }
    let where_idx = where_idx as usize;
    let max = match call.arg(where_idx) {
        a if args::is(a, "min") => false,
        a if args::is(a, "max") => true,
        _ => return Reply::err(errors::SYNTAX),
    };
    let mut count: i64 = -1;
    let mut j = where_idx + 1;
    while j < call.argc() {
        let more = call.argc() - 1 - j;
        if count == -1 && args::is(call.arg(j), "count") && more > 0 {
            j += 1;
            count = match args::int(call.arg(j)) {
                Ok(n) if n >= 1 => n,
                _ => return Reply::err(errors::COUNT_NOT_POSITIVE),
            };
        } else {
            return Reply::err(errors::SYNTAX);
        }
        j += 1;
    }
    if count == -1 {
        count = 1;
    }
    let keys: Vec<Bytes> = call.args[numkeys_idx + 1..where_idx].to_vec();
    let shape = Shape {
        emit_key: true,
        nested: true,
        nil_when_empty: true,
    };
    if blocking {
        blocking_pop(e, call, &keys, max, 1, count, shape)
    } else {
        generic_pop(e, call, &keys, max, count, shape)
    }
}
