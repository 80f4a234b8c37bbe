//! SORT and SORT_RO over lists, sets and sorted sets, as Redis 7.0's `sortCommandGeneric`.
//!
//! The rules a user's test can see:
//! - numeric order by default: every value must parse as C's strtod reads it, else the whole
//!   command fails (`One or more scores can't be converted into double`); equal numbers are
//!   ordered by the elements' bytes;
//! - ALPHA compares as C strings (up to a NUL) in the C locale, but binary-safe with STORE;
//! - `BY` a pattern without `*` (`nosort`) keeps the key's own order, except for a set inside
//!   a script or with STORE, which is then sorted ALPHA so replicas agree;
//! - a missing BY value sorts as 0 (numeric) or first (ALPHA); a missing GET value is nil, or
//!   an empty string when stored;
//! - STORE writes a list (or deletes the destination for an empty result) and wakes clients
//!   blocked on it.

mod pattern;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;

use bytes::Bytes;

use super::table::{flags::*, CmdResult, Command};
use crate::cmd::args;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// One element and what it sorts by.
struct Item {
    /// Where the element's bytes sit in the arena (`Elems`): one buffer for every element
    /// instead of an allocation each.
    elem: std::ops::Range<usize>,
    score: f64,
    /// The BY value under ALPHA; None when it is missing.
    cmp: Option<Vec<u8>>,
    /// The element's position in the key, which breaks ties as a stable sort does.
    pos: usize,
}

fn sort(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, false)
}

fn sort_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, true)
}

/// Whether the caller's user may read any key through this command line: BY with a pattern
/// and GET read keys that SORT's key specifications do not name, so Redis allows them only
/// to a selector that allows the line and reads every key (`acl::unrestricted_key_access`).
/// Inside a script this is the script caller's user, as for every `redis.call`.
fn full_key_access(e: &Engine, call: &Call, readonly: bool) -> bool {
    let name = if readonly { "sort_ro" } else { "sort" };
    let Some(cmd) = super::table::lookup(name.as_bytes()) else {
        return true;
    };
    crate::cmd::acl::unrestricted_key_access(e, call.conn, cmd, name, &call.args)
}

fn generic(e: &mut Engine, call: &mut Call, readonly: bool) -> CmdResult {
    let (mut desc, mut alpha) = (false, false);
    let (mut limit_start, mut limit_count) = (0i64, -1i64);
    let mut store: Option<Bytes> = None;
    let mut by: Option<Bytes> = None;
    let mut dontsort = false;
    let mut gets: Vec<Bytes> = Vec::new();
    let argc = call.argc();
    let mut j = 2;
    while j < argc {
        let a = call.arg(j);
        let left = argc - j - 1;
        if args::is(a, "asc") {
            desc = false;
        } else if args::is(a, "desc") {
            desc = true;
        } else if args::is(a, "alpha") {
            alpha = true;
        } else if args::is(a, "limit") && left >= 2 {
            limit_start = args::int(call.arg(j + 1))?;
            limit_count = args::int(call.arg(j + 2))?;
            j += 2;
        } else if !readonly && args::is(a, "store") && left >= 1 {
            store = Some(call.args[j + 1].clone());
            j += 1;
        } else if args::is(a, "by") && left >= 1 {
            let p = call.args[j + 1].clone();
            dontsort = !pattern::c_str(&p).contains(&b'*');
            if !dontsort && e.cluster.is_some() {
                return Err(Reply::err(errors::SORT_BY_IN_CLUSTER));
            }
            if !dontsort && !full_key_access(e, call, readonly) {
                return Err(Reply::err(errors::SORT_BY_DENIED_BY_ACL));
            }
            by = Some(p);
            j += 1;
        } else if args::is(a, "get") && left >= 1 {
            if e.cluster.is_some() {
                return Err(Reply::err(errors::SORT_GET_IN_CLUSTER));
            }
            if !full_key_access(e, call, readonly) {
                return Err(Reply::err(errors::SORT_GET_DENIED_BY_ACL));
            }
            gets.push(call.args[j + 1].clone());
            j += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }

    let db = call.db;
    let key = call.args[1].clone();
    let limits = e.encoding_limits();
    let mut arena = Vec::new();
    let (mut items, is_set) = match e.db(db).get(&key).map(|en| &en.value) {
        None => (Vec::new(), false),
        Some(Value::List(l)) => (items_of(&mut arena, l.iter().map(|m| &m[..])), false),
        Some(Value::Set(s)) => {
            let members = crate::cmd::set::stored_order(s, &limits);
            (items_of(&mut arena, members.into_iter()), true)
        }
        Some(Value::ZSet(z)) => (items_of(&mut arena, z.iter().map(|(m, _)| m)), false),
        Some(_) => return Err(Reply::err(errors::WRONGTYPE)),
    };
    let arena = arena;
    if dontsort && is_set && (store.is_some() || call.in_script) {
        dontsort = false;
        alpha = true;
        by = None;
    }

    // LIMIT, clamped as Redis does.
    let len = items.len() as i64;
    let mut start = limit_start.max(0);
    let mut end = if limit_count < 0 {
        len - 1
    } else {
        start.saturating_add(limit_count).saturating_sub(1)
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    if end >= len {
        end = len - 1;
    }

    if dontsort {
        // The key's own order, reversed by DESC for lists and sorted sets (a set's order is
        // its own either way), only the LIMIT range.
        if desc && !is_set {
            items.reverse();
        }
        if end >= start && start >= 0 {
            items = items
                .drain(start as usize..=end as usize)
                .collect::<Vec<_>>();
        } else {
            items.clear();
        }
        end -= start;
        start = 0;
    } else {
        let mut bad_number = false;
        for it in items.iter_mut() {
            let value = match &by {
                Some(p) => match pattern::lookup(e, db, p, &arena[it.elem.clone()]) {
                    Some(v) => v,
                    None => continue,
                },
                None => {
                    if !alpha {
                        match pattern::strtod(&arena[it.elem.clone()]) {
                            Some(s) => it.score = s,
                            None => bad_number = true,
                        }
                    }
                    continue;
                }
            };
            if alpha {
                it.cmp = Some(value);
            } else {
                match pattern::strtod(&value) {
                    Some(s) => it.score = s,
                    None => bad_number = true,
                }
            }
        }
        if bad_number {
            return Err(Reply::err(errors::SORT_NOT_NUMBER));
        }
        let by_pattern = by.is_some();
        let binary = store.is_some();
        let order = |a: &Item, b: &Item| {
            let o = compare(&arena, a, b, alpha, by_pattern, binary);
            if desc {
                o.reverse()
            } else {
                o
            }
        };
        let wanted = if end >= start && start >= 0 {
            end as usize + 1
        } else {
            0
        };
        if wanted < items.len() {
            // LIMIT reads a prefix: select it, then sort only that part. Ties are broken by
            // the position in the key, which makes the order total and the prefix exactly the
            // one the full stable sort below gives.
            let tied = |a: &Item, b: &Item| order(a, b).then(a.pos.cmp(&b.pos));
            if wanted > 0 {
                items.select_nth_unstable_by(wanted - 1, tied);
            }
            items.truncate(wanted);
            items.sort_unstable_by(tied);
        } else {
            items.sort_by(order);
        }
    }

    let range: Vec<Item> = if end >= start && start >= 0 {
        items
            .into_iter()
            .skip(start as usize)
            .take((end - start + 1) as usize)
            .collect()
    } else {
        Vec::new()
    };

    match store {
        None => {
            let mut out = Vec::new();
            for it in &range {
                if gets.is_empty() {
                    out.push(Reply::bulk(&arena[it.elem.clone()]));
                }
                for g in &gets {
                    out.push(match pattern::lookup(e, db, g, &arena[it.elem.clone()]) {
                        Some(v) => Reply::bulk(v),
                        None => Reply::Nil,
                    });
                }
            }
            Ok(Reply::Array(out))
        }
        Some(dst) => {
            let mut list = std::collections::VecDeque::new();
            for it in &range {
                if gets.is_empty() {
                    list.push_back(arena[it.elem.clone()].to_vec());
                }
                for g in &gets {
                    list.push_back(
                        pattern::lookup(e, db, g, &arena[it.elem.clone()]).unwrap_or_default(),
                    );
                }
            }
            let n = list.len() as i64;
            if n > 0 {
                e.db(db).set(&dst, Value::List(Box::new(list)));
                e.modified(db, &dst, notify::LIST, "sortstore");
                e.signal_ready(db, &dst);
            } else if e.db(db).remove(&dst).is_some() {
                e.modified(db, &dst, notify::GENERIC, "del");
            }
            Ok(Reply::Int(n))
        }
    }
}

/// The elements as items, their bytes copied into `arena`, in the key's order.
fn items_of<'a>(arena: &mut Vec<u8>, elems: impl Iterator<Item = &'a [u8]>) -> Vec<Item> {
    elems
        .enumerate()
        .map(|(pos, m)| {
            let at = arena.len();
            arena.extend_from_slice(m);
            Item {
                elem: at..arena.len(),
                score: 0.0,
                cmp: None,
                pos,
            }
        })
        .collect()
}

/// Redis's `sortCompare`, before DESC flips it.
fn compare(
    arena: &[u8],
    a: &Item,
    b: &Item,
    alpha: bool,
    by_pattern: bool,
    binary: bool,
) -> Ordering {
    let (ea, eb) = (&arena[a.elem.clone()], &arena[b.elem.clone()]);
    let strings = |x: &[u8], y: &[u8]| {
        if binary {
            x.cmp(y)
        } else {
            pattern::c_str(x).cmp(pattern::c_str(y))
        }
    };
    if !alpha {
        return match a.score.partial_cmp(&b.score) {
            Some(Ordering::Equal) | None => ea.cmp(eb),
            Some(o) => o,
        };
    }
    if by_pattern {
        return match (&a.cmp, &b.cmp) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => strings(x, y),
        };
    }
    strings(ea, eb)
}

/// SORT's keys: the sorted key and the STORE destination.
fn sort_keys(args: &[Bytes]) -> Vec<usize> {
    let mut out = vec![1];
    let mut store = None;
    let mut j = 2;
    while j < args.len() {
        let a = &args[j];
        if args::is(a, "limit") {
            j += 2;
        } else if args::is(a, "get") || args::is(a, "by") {
            j += 1;
        } else if args::is(a, "store") && j + 1 < args.len() {
            store = Some(j + 1);
            j += 1;
        }
        j += 1;
    }
    out.extend(store);
    out
}

/// SORT_RO's keys: the sorted key alone (Redis's sortROGetKeys; its BY/GET patterns name keys
/// only at run time, so its key specs are unknown and the walk falls back to this).
fn sort_ro_keys(_args: &[Bytes]) -> Vec<usize> {
    vec![1]
}

pub static COMMANDS: &[Command] = &[
    Command::new("sort", -2, WRITE | DENYOOM, "generic", sort)
        .keys(1, 1, 1)
        .movable_keys(sort_keys),
    Command::new("sort_ro", -2, READONLY, "generic", sort_ro)
        .keys(1, 1, 1)
        .movable_keys(sort_ro_keys),
];
