//! LMOVE, RPOPLPUSH and LMPOP, plus the parts BLMOVE and BLMPOP share with them.

use crate::cmd::lookup::lookup_mut;
use crate::cmd::table::CmdResult;
use crate::db::ListValue;
use std::collections::VecDeque;
use std::ops::Range;

use bytes::Bytes;

use super::{
    bulk_array, changed, delete_if_empty, is_wrong_type, pop_end, pop_many, push_end, End,
};
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

pub(super) fn lmove(e: &mut Engine, call: &mut Call) -> CmdResult {
    let from = End::parse(call.arg(3))?;
    let to = End::parse(call.arg(4))?;
    Ok(move_element(
        e,
        call.db,
        call.arg(1),
        call.arg(2),
        from,
        to,
        1,
    ))
}

pub(super) fn rpoplpush(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(move_element(
        e,
        call.db,
        call.arg(1),
        call.arg(2),
        End::Right,
        End::Left,
        1,
    ))
}

/// Pops from `src` and pushes onto `dst`, replying with the element; a missing source gives a
/// null bulk string. Events as Redis sends them: the push on `dst`, then the pop on `src`,
/// then `del` if `src` became empty. `dirty` is what Redis adds to its change counter (1 for
/// LMOVE, 0 when serving a blocked BLMOVE).
pub(super) fn move_element(
    e: &mut Engine,
    db: usize,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
    dirty: u64,
) -> Reply {
    let value = {
        let list = match lookup_mut::<ListValue>(e, db, src) {
            Err(err) => return err,
            Ok(None) => return Reply::Nil,
            Ok(Some(list)) => list,
        };
        if list.is_empty() {
            return Reply::Nil;
        }
        if src == dst {
            let Some(v) = pop_end(list, from) else {
                return Reply::Nil;
            };
            push_end(list, v.clone(), to);
            v
        } else {
            // The destination's type is checked before anything is popped.
            if is_wrong_type(e, db, dst) {
                return Reply::err(errors::WRONGTYPE);
            }
            let Ok(Some(list)) = lookup_mut::<ListValue>(e, db, src) else {
                return Reply::Nil;
            };
            let Some(v) = pop_end(list, from) else {
                return Reply::Nil;
            };
            match lookup_mut::<ListValue>(e, db, dst) {
                Ok(Some(dlist)) => push_end(dlist, v.clone(), to),
                _ => e
                    .db(db)
                    .set(dst, Value::List(Box::new(VecDeque::from([v.clone()])))),
            }
            v
        }
    };
    let before = e.dirty;
    e.modified(db, dst, notify::LIST, to.push_event());
    e.signal_ready(db, dst);
    e.modified(db, src, notify::LIST, from.pop_event());
    delete_if_empty(e, db, src);
    e.dirty = before.saturating_add(dirty);
    Reply::Bulk(Bytes::from(value))
}

/// The parsed tail of LMPOP/BLMPOP: `numkeys key... LEFT|RIGHT [COUNT count]`.
pub(super) struct MpopArgs {
    /// Positions of the keys in the arguments.
    pub keys: Range<usize>,
    pub end: End,
    pub count: usize,
}

/// Parses LMPOP's arguments from `numkeys_idx` on, with Redis's errors in Redis's order.
pub(super) fn parse_mpop(call: &Call, numkeys_idx: usize) -> Result<MpopArgs, Reply> {
    let numkeys = match numfmt::parse_i64(call.arg(numkeys_idx)) {
        Some(n) if n > 0 => n as u64,
        _ => return Err(Reply::err(errors::NUMKEYS_NOT_POSITIVE)),
    };
    let first = numkeys_idx + 1;
    let where_idx = (first as u64).saturating_add(numkeys);
    if where_idx >= call.argc() as u64 {
        return Err(Reply::err(errors::SYNTAX));
    }
    let where_idx = where_idx as usize;
    let end = End::parse(call.arg(where_idx))?;
    let mut count: Option<usize> = None;
    let mut j = where_idx + 1;
    while j < call.argc() {
        let has_value = j + 1 < call.argc();
        if count.is_none() && has_value && call.arg(j).eq_ignore_ascii_case(b"count") {
            j += 1;
            match numfmt::parse_i64(call.arg(j)) {
                Some(n) if n > 0 => count = Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => return Err(Reply::err(errors::COUNT_NOT_POSITIVE)),
            }
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    Ok(MpopArgs {
        keys: first..where_idx,
        end,
        count: count.unwrap_or(1),
    })
}

/// Pops up to `count` elements from the first non-empty list among `keys` and replies
/// `[key, [elements]]`; None when every key is missing. A key of another type met before
/// a non-empty list is a WRONGTYPE error.
pub(super) fn mpop_first(
    e: &mut Engine,
    db: usize,
    keys: &[Bytes],
    end: End,
    count: usize,
) -> Option<Reply> {
    for key in keys {
        let items = match lookup_mut::<ListValue>(e, db, key) {
            Err(err) => return Some(err),
            Ok(None) => continue,
            Ok(Some(list)) if list.is_empty() => continue,
            Ok(Some(list)) => pop_many(list, end, count),
        };
        return Some(popped_with_key(e, db, key, end, items));
    }
    None
}

/// Finishes a multi-pop from `key`: events, deletion of an emptied list, and the
/// `[key, [elements]]` reply.
pub(super) fn popped_with_key(
    e: &mut Engine,
    db: usize,
    key: &[u8],
    end: End,
    items: Vec<Vec<u8>>,
) -> Reply {
    changed(e, db, key, end.pop_event(), items.len() as u64);
    delete_if_empty(e, db, key);
    Reply::Array(vec![Reply::bulk(key), bulk_array(items)])
}

pub(super) fn lmpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    let parsed = parse_mpop(call, 1)?;
    let keys = &call.args[parsed.keys.clone()];
    Ok(mpop_first(e, call.db, keys, parsed.end, parsed.count).unwrap_or(Reply::NilArray))
}
