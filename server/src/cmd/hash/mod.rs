//! The hash commands.
//!
//! Field order: a `HashValue` keeps insertion order and closes the gap on a deletion, which
//! is exactly the order of Redis's listpack encoding (db/hash.rs). Bigger hashes are hash
//! tables in Redis, whose order no client can rely on.

pub(crate) mod field_ttl;
pub(crate) mod random;
pub(crate) mod scan;
#[cfg(test)]
pub(crate) mod tests;
mod write;

use super::table::{flags::*, Command};
use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::{Entry, HashValue, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// The hash at `key`, created empty if missing (the caller adds to it at once).
pub(crate) fn hash_or_create<'a>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
) -> Result<&'a mut HashValue, Reply> {
    let d = e.db(db);
    if !d.contains(key) {
        d.set(key, Value::Hash(HashValue::default()));
    }
    match d.get_mut(key) {
        Some(Entry {
            value: Value::Hash(h),
            ..
        }) => Ok(h),
        _ => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// Deletes `key` if its collection became empty, with the "del" event Redis sends then.
pub(crate) fn delete_if_empty(e: &mut Engine, db: usize, key: &[u8]) {
    if e.db(db).remove_if_empty(key) {
        notify::keyspace_event(e, notify::GENERIC, "del", db, key);
    }
}

fn hget(e: &mut Engine, call: &mut Call) -> CmdResult {
    let h = lookup::<HashValue>(e, call.db, call.arg(1))?;
    Ok(Reply::opt_bulk(h.and_then(|h| h.get(call.arg(2)))))
}

fn hmget(e: &mut Engine, call: &mut Call) -> CmdResult {
    let h = lookup::<HashValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Array(
        call.args[2..]
            .iter()
            .map(|f| Reply::opt_bulk(h.and_then(|h| h.get(&f[..]))))
            .collect(),
    ))
}

fn hlen(e: &mut Engine, call: &mut Call) -> CmdResult {
    let h = lookup::<HashValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(h.map_or(0, |h| h.len() as i64)))
}

fn hstrlen(e: &mut Engine, call: &mut Call) -> CmdResult {
    let h = lookup::<HashValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(
        h.and_then(|h| h.get(call.arg(2)))
            .map_or(0, |v| v.len() as i64),
    ))
}

fn hexists(e: &mut Engine, call: &mut Call) -> CmdResult {
    let h = lookup::<HashValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(
        h.is_some_and(|h| h.contains_key(call.arg(2))) as i64
    ))
}

fn hkeys(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match lookup::<HashValue>(e, call.db, call.arg(1))? {
        None => Reply::Array(Vec::new()),
        Some(h) => Reply::bulk_array(h.keys()),
    })
}

fn hvals(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match lookup::<HashValue>(e, call.db, call.arg(1))? {
        None => Reply::Array(Vec::new()),
        Some(h) => Reply::bulk_array(h.values()),
    })
}

/// A map in RESP3, a flat field/value array in RESP2.
fn hgetall(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match lookup::<HashValue>(e, call.db, call.arg(1))? {
        None => Reply::Map(Vec::new()),
        Some(h) => Reply::Map(
            h.iter()
                .map(|(k, v)| (Reply::bulk(k), Reply::bulk(v)))
                .collect(),
        ),
    })
}

/// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]. As in Redis, the cursor is
/// checked before the key, and the options only once the key is known to be a hash.
fn hscan(e: &mut Engine, call: &mut Call) -> CmdResult {
    let cursor = scan::parse_cursor_in(e.profile(), call.arg(2))?;
    // Parsed before the lookup (so the profile's report sees NOVALUES even on a missing key),
    // but as in Redis its errors come only once the key is known to be a hash.
    let opts = crate::cmd::args::scan_options(e, &call.args[3..], scan::Scanned::Hash);
    let h = match lookup::<HashValue>(e, call.db, call.arg(1))? {
        None => return Ok(scan::reply(0, Vec::new())),
        Some(h) => h,
    };
    let opts = opts?;
    let push = |out: &mut Vec<Reply>, k: &[u8], v: &[u8]| {
        out.push(Reply::bulk(k));
        if !opts.novalues {
            out.push(Reply::bulk(v));
        }
    };
    let mut items = Vec::new();
    // A listpack answers in one page, as Redis's does.
    if h.is_listpack() {
        for (k, v) in h.iter().filter(|(k, _)| opts.matches(k)) {
            push(&mut items, k, v);
        }
        return Ok(scan::reply(0, items));
    }
    let (next, found) = scan::page(h.iter().map(|(k, v)| (k, (k, v))), cursor, opts.count);
    for (k, v) in found.into_iter().filter(|(k, _)| opts.matches(k)) {
        push(&mut items, k, v);
    }
    Ok(scan::reply(next, items))
}

pub static COMMANDS: &[Command] = &[
    Command::new("hset", -4, WRITE | DENYOOM | FAST, "hash", write::hset).keys(1, 1, 1),
    Command::new("hsetnx", 4, WRITE | DENYOOM | FAST, "hash", write::hsetnx).keys(1, 1, 1),
    Command::new("hmset", -4, WRITE | DENYOOM | FAST, "hash", write::hmset).keys(1, 1, 1),
    Command::new("hget", 3, READONLY | FAST, "hash", hget).keys(1, 1, 1),
    Command::new("hmget", -3, READONLY | FAST, "hash", hmget).keys(1, 1, 1),
    Command::new("hdel", -3, WRITE | FAST, "hash", write::hdel).keys(1, 1, 1),
    Command::new("hlen", 2, READONLY | FAST, "hash", hlen).keys(1, 1, 1),
    Command::new("hstrlen", 3, READONLY | FAST, "hash", hstrlen).keys(1, 1, 1),
    Command::new("hexists", 3, READONLY | FAST, "hash", hexists).keys(1, 1, 1),
    Command::new("hkeys", 2, READONLY, "hash", hkeys).keys(1, 1, 1),
    Command::new("hvals", 2, READONLY, "hash", hvals).keys(1, 1, 1),
    Command::new("hgetall", 2, READONLY, "hash", hgetall).keys(1, 1, 1),
    Command::new("hincrby", 4, WRITE | DENYOOM | FAST, "hash", write::hincrby).keys(1, 1, 1),
    Command::new(
        "hincrbyfloat",
        4,
        WRITE | DENYOOM | FAST,
        "hash",
        write::hincrbyfloat,
    )
    .keys(1, 1, 1),
    Command::new("hscan", -3, READONLY, "hash", hscan).keys(1, 1, 1),
    Command::new("hrandfield", -2, READONLY, "hash", random::hrandfield).keys(1, 1, 1),
];
