//! SPOP and SRANDMEMBER.

use super::{delete_if_empty, set_reply, stored_order};
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::random_picks::{parse_count, picks, Picks};
use crate::cmd::table::CmdResult;
use crate::db::SetValue;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::{self, Reply};

/// SPOP with a count builds a new set of the members left when they are at most
/// 1/SPOP_MOVE_STRATEGY_MUL of the members popped (Redis's constant).
const SPOP_MOVE_STRATEGY_MUL: u64 = 5;

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
    let l = e.encoding_limits();
    let Ok(Some(s)) = lookup_mut::<SetValue>(e, call.db, call.arg(1)) else {
        return Reply::Nil;
    };
    let Some(member) = s.remove_index(i, &l) else {
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
    let l = e.encoding_limits();
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
        let reply = set_reply(stored_order(s, &l));
        s.clear();
        reply
    } else {
        // Remove from the highest index down so a removal never moves a chosen member.
        let mut idx = chosen;
        idx.reverse();
        let popped: Vec<Reply> = idx
            .into_iter()
            .filter_map(|i| s.remove_index(i, &l))
            .map(Reply::bulk)
            .collect();
        if (len as u64 - count).saturating_mul(SPOP_MOVE_STRATEGY_MUL) <= count {
            s.rebuild(&l);
        }
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
    let l = e.encoding_limits();
    let len = match lookup::<SetValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Array(Vec::new())),
        Some(s) => s.len(),
    };
    let picks = picks(e, call, len, count)?;
    let Ok(Some(s)) = lookup::<SetValue>(e, call.db, call.arg(1)) else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count >= 0 && count as u64 >= len as u64 {
        return Ok(Reply::Array(
            stored_order(s, &l).into_iter().map(Reply::bulk).collect(),
        ));
    }
    let picks = match picks {
        Picks::Chosen(p) => p,
        Picks::Drawn(mut draws) => {
            draws.run(draws.count(), |i, out| {
                if let Some(m) = s.get_index(i) {
                    reply::put_bulk(out, m);
                }
            });
            return draws.finish(e, call.conn);
        }
    };
    Ok(Reply::Array(
        picks
            .into_iter()
            .filter_map(|i| s.get_index(i))
            .map(Reply::bulk)
            .collect(),
    ))
}
