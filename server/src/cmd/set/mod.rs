//! The set commands.
//!
//! Reply order: Redis 7.0 keeps a set of only integers (up to set-max-intset-entries, 512)
//! as an intset, sorted ascending, and every reply that walks it (SMEMBERS, SSCAN, SINTER,
//! the whole-set SPOP/SRANDMEMBER) comes out in that order. `reply_order` applies the same
//! rule, so those replies match Redis byte for byte; other sets are hash tables in Redis,
//! whose order nobody can rely on.

mod algebra;
mod random;
#[cfg(test)]
mod tests;

use super::hash::scan;
use super::table::{flags::*, Command};
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::db::{Entry, SetValue, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

pub(crate) use super::hash::delete_if_empty;

/// The set at `key`, created empty if missing (the caller adds to it at once).
fn set_or_create<'a>(e: &'a mut Engine, db: usize, key: &[u8]) -> Result<&'a mut SetValue, Reply> {
    let d = e.db(db);
    if !d.contains(key) {
        d.set(key, Value::Set(Box::default()));
    }
    match d.get_mut(key) {
        Some(Entry {
            value: Value::Set(s),
            ..
        }) => Ok(s),
        _ => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// set-max-intset-entries.
pub(crate) fn max_intset(e: &Engine) -> usize {
    e.config
        .extra
        .get("set-max-intset-entries")
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

/// Puts members in the order Redis replies with them: ascending by value when they are all
/// integers and few enough to be an intset, else as given.
pub(crate) fn reply_order(members: &mut Vec<&[u8]>, max_intset: usize) {
    if members.len() > max_intset {
        return;
    }
    let mut numbered = Vec::with_capacity(members.len());
    for m in members.iter() {
        match numfmt::parse_i64(m) {
            Some(n) => numbered.push((n, *m)),
            None => return,
        }
    }
    numbered.sort_unstable_by_key(|(n, _)| *n);
    members.clear();
    members.extend(numbered.into_iter().map(|(_, m)| m));
}

/// Whether Redis 7.0 would hold these members as an intset.
fn is_intset(s: &SetValue, max_intset: usize) -> bool {
    s.len() <= max_intset && s.iter().all(|m| numfmt::parse_i64(m).is_some())
}

/// The members of `s` as a RESP3 set reply, in Redis's order.
pub(crate) fn members_reply<'a>(
    members: impl Iterator<Item = &'a [u8]>,
    max_intset: usize,
) -> Reply {
    let mut v: Vec<&[u8]> = members.collect();
    reply_order(&mut v, max_intset);
    Reply::Set(v.into_iter().map(Reply::bulk).collect())
}

fn sadd(e: &mut Engine, call: &mut Call) -> Reply {
    let s = match set_or_create(e, call.db, call.arg(1)) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let mut added = 0;
    for m in &call.args[2..] {
        if !s.contains(&m[..]) {
            s.insert(m.to_vec());
            added += 1;
        }
    }
    if added > 0 {
        e.modified(call.db, call.arg(1), notify::SET, "sadd");
    }
    Reply::Int(added)
}

fn srem(e: &mut Engine, call: &mut Call) -> Reply {
    let s = match lookup_mut::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => return r,
        Ok(None) => return Reply::Int(0),
        Ok(Some(s)) => s,
    };
    let mut removed = 0;
    for m in &call.args[2..] {
        if s.swap_remove(&m[..]) {
            removed += 1;
            if s.is_empty() {
                break;
            }
        }
    }
    if removed > 0 {
        e.modified(call.db, call.arg(1), notify::SET, "srem");
        delete_if_empty(e, call.db, call.arg(1));
    }
    Reply::Int(removed)
}

fn smembers(e: &mut Engine, call: &mut Call) -> Reply {
    let max = max_intset(e);
    match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => r,
        Ok(None) => Reply::Set(Vec::new()),
        Ok(Some(s)) => members_reply(s.iter().map(|m| &m[..]), max),
    }
}

fn sismember(e: &mut Engine, call: &mut Call) -> Reply {
    match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => r,
        Ok(s) => Reply::Int(s.is_some_and(|s| s.contains(call.arg(2))) as i64),
    }
}

fn smismember(e: &mut Engine, call: &mut Call) -> Reply {
    match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => r,
        Ok(s) => Reply::Array(
            call.args[2..]
                .iter()
                .map(|m| Reply::Int(s.is_some_and(|s| s.contains(&m[..])) as i64))
                .collect(),
        ),
    }
}

fn scard(e: &mut Engine, call: &mut Call) -> Reply {
    match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => r,
        Ok(s) => Reply::Int(s.map_or(0, |s| s.len() as i64)),
    }
}

/// SMOVE source destination member. A missing source answers 0 before the destination's
/// type is checked, as in Redis; moving within one key only tells whether the member is
/// there. Events: "srem" (and "del" if the source emptied), then "sadd" if the member was
/// new to the destination.
fn smove(e: &mut Engine, call: &mut Call) -> Reply {
    let (src, dst, member) = (call.arg(1), call.arg(2), call.arg(3));
    let src_exists = match lookup::<SetValue>(e, call.db, src) {
        Err(r) => return r,
        Ok(s) => s.is_some(),
    };
    if !src_exists {
        return Reply::Int(0);
    }
    if let Err(r) = lookup::<SetValue>(e, call.db, dst) {
        return r;
    }
    if src == dst {
        let has = matches!(lookup::<SetValue>(e, call.db, src), Ok(Some(s)) if s.contains(member));
        return Reply::Int(has as i64);
    }
    let removed = match lookup_mut::<SetValue>(e, call.db, src) {
        Ok(Some(s)) => s.swap_remove(member),
        _ => false,
    };
    if !removed {
        return Reply::Int(0);
    }
    e.modified(call.db, src, notify::SET, "srem");
    delete_if_empty(e, call.db, src);
    let added = match set_or_create(e, call.db, dst) {
        Ok(s) => s.insert(member.to_vec()),
        Err(r) => return r,
    };
    if added {
        e.modified(call.db, dst, notify::SET, "sadd");
    }
    Reply::Int(1)
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]: an intset answers in one page, in
/// ascending order, with cursor 0.
fn sscan(e: &mut Engine, call: &mut Call) -> Reply {
    let cursor = match scan::parse_cursor(call.arg(2)) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let max = max_intset(e);
    let s = match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => return r,
        Ok(None) => return scan::reply(0, Vec::new()),
        Ok(Some(s)) => s,
    };
    let opts = match scan::parse_options(&call.args[3..]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let (next, mut found): (u64, Vec<&[u8]>) = if is_intset(s, max) {
        (0, s.iter().map(|m| &m[..]).collect())
    } else {
        scan::page(s.iter().map(|m| (&m[..], &m[..])), cursor, opts.count)
    };
    if next == 0 {
        reply_order(&mut found, max);
    }
    let items = found
        .into_iter()
        .filter(|m| opts.matches(m))
        .map(Reply::bulk)
        .collect();
    scan::reply(next, items)
}

pub static COMMANDS: &[Command] = &[
    Command::legacy("sadd", -3, WRITE | DENYOOM | FAST, "set", sadd).keys(1, 1, 1),
    Command::legacy("srem", -3, WRITE | FAST, "set", srem).keys(1, 1, 1),
    Command::legacy("smembers", 2, READONLY, "set", smembers).keys(1, 1, 1),
    Command::legacy("sismember", 3, READONLY | FAST, "set", sismember).keys(1, 1, 1),
    Command::legacy("smismember", -3, READONLY | FAST, "set", smismember).keys(1, 1, 1),
    Command::legacy("scard", 2, READONLY | FAST, "set", scard).keys(1, 1, 1),
    Command::legacy("spop", -2, WRITE | FAST, "set", random::spop).keys(1, 1, 1),
    Command::legacy("srandmember", -2, READONLY, "set", random::srandmember).keys(1, 1, 1),
    Command::legacy("smove", 4, WRITE | FAST, "set", smove).keys(1, 2, 1),
    Command::legacy("sinter", -2, READONLY, "set", algebra::sinter).keys(1, -1, 1),
    Command::legacy("sintercard", -3, READONLY, "set", algebra::sintercard),
    Command::legacy(
        "sinterstore",
        -3,
        WRITE | DENYOOM,
        "set",
        algebra::sinterstore,
    )
    .keys(1, -1, 1),
    Command::legacy("sunion", -2, READONLY, "set", algebra::sunion).keys(1, -1, 1),
    Command::legacy(
        "sunionstore",
        -3,
        WRITE | DENYOOM,
        "set",
        algebra::sunionstore,
    )
    .keys(1, -1, 1),
    Command::legacy("sdiff", -2, READONLY, "set", algebra::sdiff).keys(1, -1, 1),
    Command::legacy(
        "sdiffstore",
        -3,
        WRITE | DENYOOM,
        "set",
        algebra::sdiffstore,
    )
    .keys(1, -1, 1),
    Command::legacy("sscan", -3, READONLY, "set", sscan).keys(1, 1, 1),
];
