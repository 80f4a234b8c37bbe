//! SPOP and SRANDMEMBER.

use super::{delete_if_empty, max_intset, members_reply};
use crate::cmd::hash::random::{parse_count, picks};
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use crate::db::SetValue;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

/// SPOP key [count]. Without a count: a member or nil. With one: a RESP3 set, the whole set
/// (in reply order) when count >= its size, which then deletes the key ("spop", "del").
pub(super) fn spop(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match call.argc() {
        2 => spop_one(e, call),
        3 => spop_count(e, call),
        _ => Reply::err(errors::SYNTAX),
    })
}

fn spop_one(e: &mut Engine, call: &mut Call) -> Reply {
    let len = match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => return r,
        Ok(None) => return Reply::Nil,
        Ok(Some(s)) => s.len(),
    };
    let i = e.rng.below(len);
    let Ok(Some(s)) = lookup_mut::<SetValue>(e, call.db, call.arg(1)) else {
        return Reply::Nil;
    };
    let Some(member) = s.swap_remove_index(i) else {
        return Reply::Nil;
    };
    e.modified(call.db, call.arg(1), notify::SET, "spop");
    delete_if_empty(e, call.db, call.arg(1));
    Reply::bulk(member)
}

fn spop_count(e: &mut Engine, call: &mut Call) -> Reply {
    let count = match numfmt::parse_i64(call.arg(2)) {
        Some(n) if n >= 0 => n as u64,
        _ => return Reply::err(errors::MUST_BE_POSITIVE),
    };
    let max = max_intset(e);
    let len = match lookup::<SetValue>(e, call.db, call.arg(1)) {
        Err(r) => return r,
        Ok(None) => return Reply::Set(Vec::new()),
        Ok(Some(s)) => s.len(),
    };
    if count == 0 {
        return Reply::Set(Vec::new());
    }
    let chosen = if count < len as u64 {
        e.rng.distinct(len, count as usize)
    } else {
        Vec::new()
    };
    let Ok(Some(s)) = lookup_mut::<SetValue>(e, call.db, call.arg(1)) else {
        return Reply::Set(Vec::new());
    };
    let reply = if count >= len as u64 {
        let reply = members_reply(s.iter().map(|m| &m[..]), max);
        s.clear();
        reply
    } else {
        // Remove from the highest index down so swap_remove never moves a chosen member.
        let mut idx = chosen;
        idx.reverse();
        let popped: Vec<Reply> = idx
            .into_iter()
            .filter_map(|i| s.swap_remove_index(i))
            .map(Reply::bulk)
            .collect();
        Reply::Set(popped)
    };
    e.modified(call.db, call.arg(1), notify::SET, "spop");
    delete_if_empty(e, call.db, call.arg(1));
    reply
}

/// SRANDMEMBER key [count]. With a count the reply is an array (never a RESP3 set): the
/// whole set in reply order when count >= its size, distinct members for a smaller positive
/// count, |count| members with repeats for a negative one.
pub(super) fn srandmember(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 3 {
        return Err(Reply::err(errors::SYNTAX));
    }
    if call.argc() == 2 {
        return Ok(match lookup::<SetValue>(e, call.db, call.arg(1))? {
            None => Reply::Nil,
            Some(s) => {
                let len = s.len();
                let i = e.rng.below(len);
                match lookup::<SetValue>(e, call.db, call.arg(1)) {
                    Ok(Some(s)) => Reply::opt_bulk(s.get_index(i)),
                    _ => Reply::Nil,
                }
            }
        });
    }
    let count = parse_count(call.arg(2))?;
    let max = max_intset(e);
    let len = match lookup::<SetValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Array(Vec::new())),
        Some(s) => s.len(),
    };
    let picks = picks(e, len, count)?;
    let Ok(Some(s)) = lookup::<SetValue>(e, call.db, call.arg(1)) else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count >= 0 && count as u64 >= len as u64 {
        return Ok(match members_reply(s.iter().map(|m| &m[..]), max) {
            Reply::Set(items) => Reply::Array(items),
            other => other,
        });
    }
    Ok(Reply::Array(
        picks
            .into_iter()
            .filter_map(|i| s.get_index(i))
            .map(Reply::bulk)
            .collect(),
    ))
}
