//! LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP.

use crate::cmd::lookup::lookup_mut;
use crate::cmd::table::CmdResult;
use crate::db::ListValue;
use std::collections::VecDeque;

use super::{bulk_array, changed, delete_if_empty, pop_end, pop_many, push_end, End};
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;

pub(super) fn lpush(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(push(e, call, End::Left, false))
}

pub(super) fn rpush(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(push(e, call, End::Right, false))
}

pub(super) fn lpushx(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(push(e, call, End::Left, true))
}

pub(super) fn rpushx(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(push(e, call, End::Right, true))
}

/// Pushes every element in argument order (so LPUSH a b c leaves c b a), creating the list
/// unless `only_existing` (the X forms answer 0 for a missing key).
fn push(e: &mut Engine, call: &mut Call, end: End, only_existing: bool) -> Reply {
    let key = call.arg(1);
    let elements = &call.args[2..];
    let len = match lookup_mut::<ListValue>(e, call.db, key) {
        Err(err) => return err,
        Ok(Some(list)) => {
            for el in elements {
                push_end(list, el.to_vec(), end);
            }
            list.len()
        }
        Ok(None) if only_existing => return Reply::Int(0),
        Ok(None) => {
            let mut list = VecDeque::with_capacity(elements.len());
            for el in elements {
                push_end(&mut list, el.to_vec(), end);
            }
            let len = list.len();
            e.db(call.db).set(key, Value::List(Box::new(list)));
            len
        }
    };
    changed(e, call.db, key, end.push_event(), elements.len() as u64);
    e.signal_ready(call.db, key);
    Reply::Int(len as i64)
}

pub(super) fn lpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(pop(e, call, End::Left))
}

pub(super) fn rpop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(pop(e, call, End::Right))
}

/// LPOP/RPOP key [count]: without a count a bulk string, with one an array (count 0: an
/// empty array for an existing list); a missing key is a null of the matching shape.
fn pop(e: &mut Engine, call: &mut Call, end: End) -> Reply {
    if call.argc() > 3 {
        return Reply::err(errors::wrong_arity(if end == End::Left {
            "lpop"
        } else {
            "rpop"
        }));
    }
    let count = if call.argc() == 3 {
        match numfmt::parse_i64(call.arg(2)) {
            Some(n) if n >= 0 => Some(n as usize),
            _ => return Reply::err(errors::MUST_BE_POSITIVE),
        }
    } else {
        None
    };
    let key = call.arg(1);
    let list = match lookup_mut::<ListValue>(e, call.db, key) {
        Err(err) => return err,
        Ok(None) => {
            return if count.is_some() {
                Reply::NilArray
            } else {
                Reply::Nil
            }
        }
        Ok(Some(list)) => list,
    };
    let (reply, removed) = match count {
        Some(0) => return Reply::Array(Vec::new()),
        None => match pop_end(list, end) {
            Some(v) => (Reply::bulk(v), 1),
            None => return Reply::Nil,
        },
        Some(n) => {
            let items = pop_many(list, end, n);
            let removed = items.len() as u64;
            (bulk_array(items), removed)
        }
    };
    changed(e, call.db, key, end.pop_event(), removed);
    delete_if_empty(e, call.db, key);
    reply
}
