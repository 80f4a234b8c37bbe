//! SINTER, SUNION, SDIFF, their STORE forms, and SINTERCARD.
//!
//! Every source key is type-checked before any result is computed (a missing key does not
//! stop the checks), so `SINTER missing string-key` is WRONGTYPE, as in Redis.

use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use bytes::Bytes;
use indexmap::IndexSet;

use super::{reply_order, set_reply};
use crate::cmd::args;
use crate::db::{Db, Entry, SetValue, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

#[derive(Clone, Copy)]
enum Op {
    Inter,
    Union,
    Diff,
}

impl Op {
    fn store_event(self) -> &'static str {
        match self {
            Op::Inter => "sinterstore",
            Op::Union => "sunionstore",
            Op::Diff => "sdiffstore",
        }
    }
}

/// Checks every key's type (and expires the dead ones).
fn check_types(e: &mut Engine, db: usize, keys: &[Bytes]) -> Result<(), Reply> {
    for k in keys {
        lookup::<SetValue>(e, db, k)?;
    }
    Ok(())
}

/// The sets behind `keys`, None for a missing key. Call `check_types` first.
fn sources<'a>(d: &'a Db, keys: &[Bytes]) -> Vec<Option<&'a SetValue>> {
    keys.iter()
        .map(|k| match d.get_shared(k) {
            Some(Entry {
                value: Value::Set(s),
                ..
            }) => Some(s),
            _ => None,
        })
        .collect()
}

/// Members of the first set in every other one, walking the smallest set as Redis does;
/// stops after `limit` members (0: no limit).
fn intersect<'a>(sets: &[Option<&'a SetValue>], limit: usize) -> Vec<&'a [u8]> {
    let Some(mut sets) = sets.iter().copied().collect::<Option<Vec<&SetValue>>>() else {
        return Vec::new();
    };
    sets.sort_by_key(|s| s.len());
    let Some((first, rest)) = sets.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in first.iter() {
        if rest.iter().all(|s| s.contains(m)) {
            out.push(m);
            if limit != 0 && out.len() >= limit {
                break;
            }
        }
    }
    out
}

fn compute<'a>(op: Op, sets: &[Option<&'a SetValue>]) -> Vec<&'a [u8]> {
    match op {
        Op::Inter => intersect(sets, 0),
        Op::Union => {
            let mut all: IndexSet<&[u8]> = IndexSet::new();
            for s in sets.iter().flatten() {
                all.extend(s.iter());
            }
            all.into_iter().collect()
        }
        Op::Diff => match sets.first() {
            Some(Some(first)) => first
                .iter()
                .filter(|m| !sets[1..].iter().flatten().any(|s| s.contains(m)))
                .collect(),
            _ => Vec::new(),
        },
    }
}

fn read_op(op: Op, e: &mut Engine, call: &Call) -> Reply {
    let keys = &call.args[1..];
    if let Err(r) = check_types(e, call.db, keys) {
        return r;
    }
    let max = e.encoding_limits().set_max_intset_entries;
    let sets = sources(e.db(call.db), keys);
    let mut members = compute(op, &sets);
    reply_order(&mut members, max);
    set_reply(members)
}

/// The STORE forms: the result replaces the destination whatever its type (and TTL); an
/// empty result deletes it, with a "del" event only if it existed.
fn store_op(op: Op, e: &mut Engine, call: &Call) -> Reply {
    let dst = call.arg(1);
    let keys = &call.args[2..];
    if let Err(r) = check_types(e, call.db, keys) {
        return r;
    }
    let l = e.encoding_limits();
    // Built as Redis builds it, from an empty intset one member at a time, so it converts
    // where Redis's would.
    let result = {
        let sets = sources(e.db(call.db), keys);
        let mut members = compute(op, &sets);
        reply_order(&mut members, l.set_max_intset_entries);
        let mut result = SetValue::default();
        for m in members {
            result.insert(m, &l);
        }
        result
    };
    let len = result.len() as i64;
    if result.is_empty() {
        if e.db(call.db).remove(dst).is_some() {
            e.modified(call.db, dst, notify::GENERIC, "del");
        }
    } else {
        e.db(call.db).set(dst, Value::Set(result));
        e.modified(call.db, dst, notify::SET, op.store_event());
    }
    Reply::Int(len)
}

pub(super) fn sinter(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(read_op(Op::Inter, e, call))
}

pub(super) fn sunion(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(read_op(Op::Union, e, call))
}

pub(super) fn sdiff(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(read_op(Op::Diff, e, call))
}

pub(super) fn sinterstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(store_op(Op::Inter, e, call))
}

pub(super) fn sunionstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(store_op(Op::Union, e, call))
}

pub(super) fn sdiffstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(store_op(Op::Diff, e, call))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit]
pub(super) fn sintercard(e: &mut Engine, call: &mut Call) -> CmdResult {
    let numkeys = match numfmt::parse_i64(call.arg(1)) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(Reply::err(errors::NUMKEYS_NOT_POSITIVE)),
    };
    if numkeys > (call.argc() - 2) as u64 {
        return Err(Reply::err(errors::NUMKEYS_TOO_BIG));
    }
    let end = 2 + numkeys as usize;
    let mut limit = 0usize;
    let mut i = end;
    while i < call.argc() {
        if i + 1 < call.argc() && args::is(call.arg(i), "limit") {
            match numfmt::parse_i64(call.arg(i + 1)) {
                Some(n) if n >= 0 => limit = usize::try_from(n).unwrap_or(usize::MAX),
                _ => return Err(Reply::err(errors::LIMIT_NEGATIVE)),
            }
            i += 2;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    let keys = &call.args[2..end];
    check_types(e, call.db, keys)?;
    let sets = sources(e.db(call.db), keys);
    Ok(Reply::Int(intersect(&sets, limit).len() as i64))
}
