//! EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX/XX/GT/LT), TTL, PTTL, EXPIRETIME,
//! PEXPIRETIME and PERSIST.

use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

#[derive(Default)]
struct Flags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_flags(call: &Call) -> Result<Flags, Reply> {
    let mut f = Flags::default();
    for a in &call.args[3..] {
        if args::is(a, "nx") {
            f.nx = true;
        } else if args::is(a, "xx") {
            f.xx = true;
        } else if args::is(a, "gt") {
            f.gt = true;
        } else if args::is(a, "lt") {
            f.lt = true;
        } else {
            return Err(Reply::err(errors::unsupported_option(a)));
        }
    }
    if f.nx && (f.xx || f.gt || f.lt) {
        return Err(Reply::err(errors::EXPIRE_NX_CONFLICT));
    }
    if f.gt && f.lt {
        return Err(Reply::err(errors::EXPIRE_GT_LT_CONFLICT));
    }
    Ok(f)
}

/// Redis's `expireGenericCommand`: `relative` adds "now"; `seconds` scales by 1000. A
/// deadline at or before now deletes the key (event "del"), otherwise sets it ("expire").
fn expire_generic(e: &mut Engine, call: &mut Call, relative: bool, seconds: bool) -> Reply {
    let f = match parse_flags(call) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let mut when = match args::int(call.arg(2)) {
        Ok(n) => n,
        Err(r) => return r,
    };
    let name = args::lower(call.arg(0));
    if seconds {
        match when.checked_mul(1000) {
            Some(ms) => when = ms,
            None => return Reply::err(errors::invalid_expire(&name)),
        }
    }
    let base = if relative { e.now_ms } else { 0 };
    if when > i64::MAX - base {
        return Reply::err(errors::invalid_expire(&name));
    }
    when += base;

    let key = call.arg(1).to_vec();
    let now = e.now_ms;
    let db = e.db(call.db);
    let Some(entry) = db.get(&key) else {
        return Reply::Int(0);
    };
    let current = entry.expire_at();
    if f.nx && current.is_some() {
        return Reply::Int(0);
    }
    if f.xx && current.is_none() {
        return Reply::Int(0);
    }
    // No deadline counts as infinite: GT never passes, LT always does.
    if f.gt && current.is_none_or(|c| when <= c) {
        return Reply::Int(0);
    }
    if f.lt && current.is_some_and(|c| when >= c) {
        return Reply::Int(0);
    }
    if when <= now {
        db.remove(&key);
        e.modified(call.db, &key, notify::GENERIC, "del");
    } else {
        db.set_expire(&key, Some(when));
        e.modified(call.db, &key, notify::GENERIC, "expire");
    }
    Reply::Int(1)
}

pub fn expire(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(expire_generic(e, call, true, true))
}

pub fn pexpire(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(expire_generic(e, call, true, false))
}

pub fn expireat(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(expire_generic(e, call, false, true))
}

pub fn pexpireat(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(expire_generic(e, call, false, false))
}

/// TTL family: -2 no key, -1 no deadline; relative values round to the nearest second.
fn ttl_generic(e: &mut Engine, call: &mut Call, ms: bool, absolute: bool) -> Reply {
    let now = e.now_ms;
    let Some(entry) = e.db(call.db).peek(call.arg(1)) else {
        return Reply::Int(-2);
    };
    let Some(at) = entry.expire_at() else {
        return Reply::Int(-1);
    };
    if absolute {
        return Reply::Int(if ms { at } else { at / 1000 });
    }
    let left = (at - now).max(0);
    Reply::Int(if ms { left } else { (left + 500) / 1000 })
}

pub fn ttl(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(ttl_generic(e, call, false, false))
}

pub fn pttl(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(ttl_generic(e, call, true, false))
}

pub fn expiretime(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(ttl_generic(e, call, false, true))
}

pub fn pexpiretime(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(ttl_generic(e, call, true, true))
}

pub fn persist(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let db = e.db(call.db);
    let had_deadline = db.get(key).is_some_and(|en| en.expire_at().is_some());
    if !had_deadline {
        return Ok(Reply::Int(0));
    }
    db.set_expire(key, None);
    e.modified(call.db, key, notify::GENERIC, "persist");
    Ok(Reply::Int(1))
}
