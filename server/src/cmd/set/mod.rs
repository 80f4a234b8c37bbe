//! The set commands.
//!
//! Reply order: Redis keeps a set of only integers (up to set-max-intset-entries, 512) as an
//! intset, sorted ascending, and every reply that walks it (SMEMBERS, SSCAN, SINTER, the
//! whole-set SPOP/SRANDMEMBER) comes out in that order; a Redis 7.2+ listpack set replies in
//! its own order. `stored_order` and `reply_order` apply the same rules, so those replies
//! match Redis byte for byte; other sets are hash tables in Redis, whose order nobody can
//! rely on.

mod algebra;
mod random;
#[cfg(test)]
mod tests;

use super::hash::scan;
use super::table::{flags::*, Command};
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use crate::db::encoding::{Encoding, Limits};
use crate::db::{Entry, SetValue, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

pub(crate) use super::hash::delete_if_empty;

/// The set at `key`, created for `first` and `hint` members on the way if missing, as
/// Redis's `setTypeCreate` (the caller adds to it at once).
fn set_or_create<'a>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
    (first, hint): (&[u8], usize),
    l: &Limits,
) -> Result<&'a mut SetValue, Reply> {
    let d = e.db(db);
    if !d.contains(key) {
        d.set(key, Value::Set(SetValue::create(first, hint, l)));
    }
    match d.get_mut(key) {
        Some(Entry {
            value: Value::Set(s),
            ..
        }) => Ok(s),
        _ => Err(Reply::err(errors::WRONGTYPE)),
    }
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

/// The members of a stored set in the order Redis replies with them: an intset sorted, a
/// listpack as it stands, a hash table as `reply_order` puts it.
pub(crate) fn stored_order<'a>(s: &'a SetValue, l: &Limits) -> Vec<&'a [u8]> {
    let mut v: Vec<&[u8]> = s.iter().collect();
    match s.encoding(l) {
        Encoding::Intset => reply_order(&mut v, usize::MAX),
        Encoding::Listpack => {}
        _ => reply_order(&mut v, l.set_max_intset_entries),
    }
    v
}

/// Members as a RESP3 set reply.
pub(crate) fn set_reply(members: Vec<&[u8]>) -> Reply {
    Reply::Set(members.into_iter().map(Reply::bulk).collect())
}

fn sadd(e: &mut Engine, call: &mut Call) -> CmdResult {
    let l = e.encoding_limits();
    let first = (call.arg(2), call.argc() - 2);
    let s = set_or_create(e, call.db, call.arg(1), first, &l)?;
    let mut added = 0;
    for m in &call.args[2..] {
        if s.insert(m, &l) {
            added += 1;
        }
    }
    if added > 0 {
        e.modified(call.db, call.arg(1), notify::SET, "sadd");
    }
    Ok(Reply::Int(added))
}

fn srem(e: &mut Engine, call: &mut Call) -> CmdResult {
    let l = e.encoding_limits();
    let s = match lookup_mut::<SetValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Int(0)),
        Some(s) => s,
    };
    let mut removed = 0;
    for m in &call.args[2..] {
        if s.remove(m, &l) {
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
    Ok(Reply::Int(removed))
}

fn smembers(e: &mut Engine, call: &mut Call) -> CmdResult {
    let l = e.encoding_limits();
    Ok(match lookup::<SetValue>(e, call.db, call.arg(1))? {
        None => Reply::Set(Vec::new()),
        Some(s) => set_reply(stored_order(s, &l)),
    })
}

fn sismember(e: &mut Engine, call: &mut Call) -> CmdResult {
    let s = lookup::<SetValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(s.is_some_and(|s| s.contains(call.arg(2))) as i64))
}

fn smismember(e: &mut Engine, call: &mut Call) -> CmdResult {
    let s = lookup::<SetValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Array(
        call.args[2..]
            .iter()
            .map(|m| Reply::Int(s.is_some_and(|s| s.contains(&m[..])) as i64))
            .collect(),
    ))
}

fn scard(e: &mut Engine, call: &mut Call) -> CmdResult {
    let s = lookup::<SetValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(s.map_or(0, |s| s.len() as i64)))
}

/// SMOVE source destination member. A missing source answers 0 before the destination's
/// type is checked, as in Redis; moving within one key only tells whether the member is
/// there. Events: "srem" (and "del" if the source emptied), then "sadd" if the member was
/// new to the destination.
fn smove(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (src, dst, member) = (call.arg(1), call.arg(2), call.arg(3));
    let src_exists = lookup::<SetValue>(e, call.db, src)?.is_some();
    if !src_exists {
        return Ok(Reply::Int(0));
    }
    lookup::<SetValue>(e, call.db, dst)?;
    if src == dst {
        let has = matches!(lookup::<SetValue>(e, call.db, src), Ok(Some(s)) if s.contains(member));
        return Ok(Reply::Int(has as i64));
    }
    let l = e.encoding_limits();
    let removed = match lookup_mut::<SetValue>(e, call.db, src) {
        Ok(Some(s)) => s.remove(member, &l),
        _ => false,
    };
    if !removed {
        return Ok(Reply::Int(0));
    }
    e.modified(call.db, src, notify::SET, "srem");
    delete_if_empty(e, call.db, src);
    let s = set_or_create(e, call.db, dst, (member, 1), &l)?;
    let added = s.insert(member, &l);
    if added {
        e.modified(call.db, dst, notify::SET, "sadd");
    }
    Ok(Reply::Int(1))
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]: an intset (or a 7.2+ listpack) answers
/// whole in one page, whatever the cursor, with cursor 0.
fn sscan(e: &mut Engine, call: &mut Call) -> CmdResult {
    let cursor = scan::parse_cursor_in(e.profile(), call.arg(2))?;
    // Option errors come after the key's (as HSCAN's).
    let opts = crate::cmd::args::scan_options(e, &call.args[3..], scan::Scanned::Set);
    let l = e.encoding_limits();
    let s = match lookup::<SetValue>(e, call.db, call.arg(1))? {
        None => return Ok(scan::reply(0, Vec::new())),
        Some(s) => s,
    };
    let opts = opts?;
    let (next, found): (u64, Vec<&[u8]>) = if s.encoding(&l) == Encoding::Hashtable {
        let (next, mut found) = scan::page(s.iter().map(|m| (m, m)), cursor, opts.count);
        if next == 0 {
            reply_order(&mut found, l.set_max_intset_entries);
        }
        (next, found)
    } else {
        (0, stored_order(s, &l))
    };
    let items = found
        .into_iter()
        .filter(|m| opts.matches(m))
        .map(Reply::bulk)
        .collect();
    Ok(scan::reply(next, items))
}

pub static COMMANDS: &[Command] = &[
    Command::new("sadd", -3, WRITE | DENYOOM | FAST, "set", sadd).keys(1, 1, 1),
    Command::new("srem", -3, WRITE | FAST, "set", srem).keys(1, 1, 1),
    Command::new("smembers", 2, READONLY, "set", smembers).keys(1, 1, 1),
    Command::new("sismember", 3, READONLY | FAST, "set", sismember).keys(1, 1, 1),
    Command::new("smismember", -3, READONLY | FAST, "set", smismember).keys(1, 1, 1),
    Command::new("scard", 2, READONLY | FAST, "set", scard).keys(1, 1, 1),
    Command::new("spop", -2, WRITE | FAST, "set", random::spop).keys(1, 1, 1),
    Command::new("srandmember", -2, READONLY, "set", random::srandmember).keys(1, 1, 1),
    Command::new("smove", 4, WRITE | FAST, "set", smove).keys(1, 2, 1),
    Command::new("sinter", -2, READONLY, "set", algebra::sinter).keys(1, -1, 1),
    Command::new("sintercard", -3, READONLY, "set", algebra::sintercard),
    Command::new(
        "sinterstore",
        -3,
        WRITE | DENYOOM,
        "set",
        algebra::sinterstore,
    )
    .keys(1, -1, 1),
    Command::new("sunion", -2, READONLY, "set", algebra::sunion).keys(1, -1, 1),
    Command::new(
        "sunionstore",
        -3,
        WRITE | DENYOOM,
        "set",
        algebra::sunionstore,
    )
    .keys(1, -1, 1),
    Command::new("sdiff", -2, READONLY, "set", algebra::sdiff).keys(1, -1, 1),
    Command::new(
        "sdiffstore",
        -3,
        WRITE | DENYOOM,
        "set",
        algebra::sdiffstore,
    )
    .keys(1, -1, 1),
    Command::new("sscan", -3, READONLY, "set", sscan).keys(1, 1, 1),
];
