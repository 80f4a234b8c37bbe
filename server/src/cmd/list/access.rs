//! LLEN, LRANGE, LINDEX, LSET, LINSERT, LREM, LTRIM, LPOS: reads and in-place edits.

use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use crate::db::ListValue;
use bytes::Bytes;

use super::{changed, delete_if_empty};
use crate::cmd::args;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;

pub(super) fn llen(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match lookup::<ListValue>(e, call.db, call.arg(1))? {
        None => Reply::Int(0),
        Some(list) => Reply::Int(list.len() as i64),
    })
}

/// Redis's range rule (negative indexes count from the end, clamped), as inclusive bounds;
/// None when the range is empty.
fn clamp_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let llen = len as i64;
    let mut start = if start < 0 { llen + start } else { start };
    let mut end = if end < 0 { llen + end } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= llen {
        return None;
    }
    if end >= llen {
        end = llen - 1;
    }
    Some((start as usize, end as usize))
}

/// A single index (negative from the end) as a position, None when out of range.
fn position(len: usize, index: i64) -> Option<usize> {
    let llen = len as i64;
    let i = if index < 0 {
        llen.checked_add(index)?
    } else {
        index
    };
    (i >= 0 && i < llen).then_some(i as usize)
}

pub(super) fn lrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    let start = args::int(call.arg(2))?;
    let end = args::int(call.arg(3))?;
    Ok(match lookup::<ListValue>(e, call.db, call.arg(1))? {
        None => Reply::Array(Vec::new()),
        Some(list) => match clamp_range(list.len(), start, end) {
            None => Reply::Array(Vec::new()),
            Some((s, t)) => Reply::Array(list.range(s..=t).map(Reply::bulk).collect()),
        },
    })
}

pub(super) fn lindex(e: &mut Engine, call: &mut Call) -> CmdResult {
    // Redis looks the key up (and checks its type) before parsing the index.
    let list = match lookup::<ListValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Nil),
        Some(list) => list,
    };
    let index = args::int(call.arg(2))?;
    Ok(match position(list.len(), index) {
        Some(i) => Reply::bulk(&list[i]),
        None => Reply::Nil,
    })
}

pub(super) fn lset(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let list = match lookup_mut::<ListValue>(e, call.db, key)? {
        None => return Err(Reply::err(errors::NO_SUCH_KEY)),
        Some(list) => list,
    };
    let index = args::int(&call.args[2])?;
    match position(list.len(), index) {
        Some(i) => list[i] = call.args[3].to_vec(),
        None => return Err(Reply::err(errors::INDEX_OUT_OF_RANGE)),
    }
    changed(e, call.db, key, "lset", 1);
    Ok(Reply::ok())
}

pub(super) fn linsert(e: &mut Engine, call: &mut Call) -> CmdResult {
    let after = if args::is(call.arg(2), "after") {
        true
    } else if args::is(call.arg(2), "before") {
        false
    } else {
        return Err(Reply::err(errors::SYNTAX));
    };
    let key = call.arg(1);
    let list = match lookup_mut::<ListValue>(e, call.db, key)? {
        None => return Ok(Reply::Int(0)),
        Some(list) => list,
    };
    let pivot = call.arg(3);
    let Some(at) = list.iter().position(|el| el.as_slice() == pivot) else {
        return Ok(Reply::Int(-1));
    };
    list.insert(if after { at + 1 } else { at }, call.args[4].to_vec());
    let len = list.len();
    changed(e, call.db, key, "linsert", 1);
    e.signal_ready(call.db, key);
    Ok(Reply::Int(len as i64))
}

/// Valkey 8 reads LREM's count and LPOS's rank in -LONG_MAX..=LONG_MAX, so -2^63 is out of
/// range there; Redis 7.0 takes it (and treats it as its magnitude's wrap).
fn valkey_long(e: &Engine, n: i64) -> Result<i64, Reply> {
    if n == i64::MIN && e.profile().family() == crate::compat::Family::Valkey {
        return Err(Reply::err(errors::COUNT_NOT_IN_LONG_RANGE));
    }
    Ok(n)
}

pub(super) fn lrem(e: &mut Engine, call: &mut Call) -> CmdResult {
    let count = valkey_long(e, args::int(call.arg(2))?)?;
    let key = call.arg(1);
    let list = match lookup_mut::<ListValue>(e, call.db, key)? {
        None => return Ok(Reply::Int(0)),
        Some(list) => list,
    };
    let element = call.arg(3);
    // 0 removes all; i64::MIN's magnitude is never reached, so it removes all too, as in Redis.
    let limit = count.unsigned_abs();
    let mut removed: u64 = 0;
    if count >= 0 {
        list.retain(|el| {
            if (limit == 0 || removed < limit) && el.as_slice() == element {
                removed += 1;
                false
            } else {
                true
            }
        });
    } else {
        let mut i = list.len();
        while i > 0 && removed < limit {
            i -= 1;
            if list[i].as_slice() == element {
                list.remove(i);
                removed += 1;
            }
        }
    }
    if removed > 0 {
        changed(e, call.db, key, "lrem", removed);
        delete_if_empty(e, call.db, key);
    }
    Ok(Reply::Int(removed as i64))
}

pub(super) fn ltrim(e: &mut Engine, call: &mut Call) -> CmdResult {
    let start = args::int(call.arg(2))?;
    let end = args::int(call.arg(3))?;
    let key = call.arg(1);
    let list = match lookup_mut::<ListValue>(e, call.db, key)? {
        None => return Ok(Reply::ok()),
        Some(list) => list,
    };
    let before = list.len();
    match clamp_range(before, start, end) {
        None => list.clear(),
        Some((s, t)) => {
            list.truncate(t + 1);
            list.drain(..s);
        }
    }
    let removed = (before - list.len()) as u64;
    // Redis sends `ltrim` (and counts the key as modified) even when nothing was removed.
    changed(e, call.db, key, "ltrim", removed);
    delete_if_empty(e, call.db, key);
    Ok(Reply::ok())
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
pub(super) fn lpos(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut rank: i64 = 1;
    let mut count: Option<u64> = None;
    let mut maxlen: u64 = 0;
    let mut j = 3;
    while j < call.argc() {
        let opt = call.arg(j);
        let has_value = j + 1 < call.argc();
        if args::is(opt, "rank") && has_value {
            j += 1;
            rank = valkey_long(e, args::int(call.arg(j))?)?;
            if rank == 0 {
                return Err(Reply::err(errors::LPOS_RANK_ZERO));
            }
        } else if args::is(opt, "count") && has_value {
            j += 1;
            match numfmt::parse_i64(call.arg(j)) {
                Some(n) if n >= 0 => count = Some(n as u64),
                _ => return Err(Reply::err(errors::LPOS_COUNT_NEGATIVE)),
            }
        } else if args::is(opt, "maxlen") && has_value {
            j += 1;
            match numfmt::parse_i64(call.arg(j)) {
                Some(n) if n >= 0 => maxlen = n as u64,
                _ => return Err(Reply::err(errors::LPOS_MAXLEN_NEGATIVE)),
            }
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    // A negative rank searches from the tail. Redis negates a C long, so i64::MIN stays
    // negative and then matches from the first hit: wrapping keeps that.
    let from_tail = rank < 0;
    if from_tail {
        rank = rank.wrapping_neg();
    }
    let element: Bytes = call.args[2].clone();
    let list = match lookup::<ListValue>(e, call.db, call.arg(1))? {
        None => {
            return Ok(if count.is_some() {
                Reply::Array(Vec::new())
            } else {
                Reply::Nil
            })
        }
        Some(list) => list,
    };
    let len = list.len();
    let mut found: Vec<Reply> = Vec::new();
    let mut matches: i64 = 0;
    let scan = |i: usize| if from_tail { len - 1 - i } else { i };
    for step in 0..len {
        if maxlen != 0 && step as u64 >= maxlen {
            break;
        }
        let idx = scan(step);
        if list[idx].as_slice() != element.as_ref() {
            continue;
        }
        matches += 1;
        if matches < rank {
            continue;
        }
        match count {
            None => return Ok(Reply::Int(idx as i64)),
            Some(c) => {
                found.push(Reply::Int(idx as i64));
                if c != 0 && matches.wrapping_sub(rank).wrapping_add(1) >= c as i64 {
                    break;
                }
            }
        }
    }
    Ok(match count {
        None => Reply::Nil,
        Some(_) => Reply::Array(found),
    })
}
