//! The hash commands that write: HSET, HSETNX, HMSET, HDEL, HINCRBY, HINCRBYFLOAT.

use super::{delete_if_empty, hash_or_create};
use crate::cmd::args;
use crate::cmd::lookup::lookup_mut;
use crate::cmd::table::CmdResult;
use crate::db::HashValue;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

/// HSET and HMSET: the pairs are checked before the key, so an odd count is an arity error
/// even on a key of another type. Every call sends "hset", even one that changed nothing.
fn set_pairs(e: &mut Engine, call: &Call) -> Result<i64, Reply> {
    if call.argc() % 2 == 1 {
        return Err(Reply::err(errors::wrong_arity(&args::lower(call.arg(0)))));
    }
    let limits = e.encoding_limits();
    let h = hash_or_create(e, call.db, call.arg(1))?;
    let mut added = 0;
    for pair in call.args[2..].chunks_exact(2) {
        added += h.set(&pair[0], &pair[1], &limits) as i64;
    }
    e.modified(call.db, call.arg(1), notify::HASH, "hset");
    Ok(added)
}

pub(super) fn hset(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(set_pairs(e, call).map_or_else(|r| r, Reply::Int))
}

pub(super) fn hmset(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(set_pairs(e, call).map_or_else(|r| r, |_| Reply::ok()))
}

pub(super) fn hsetnx(e: &mut Engine, call: &mut Call) -> CmdResult {
    let limits = e.encoding_limits();
    let h = hash_or_create(e, call.db, call.arg(1))?;
    if h.contains_key(call.arg(2)) {
        return Ok(Reply::Int(0));
    }
    h.set(call.arg(2), call.arg(3), &limits);
    e.modified(call.db, call.arg(1), notify::HASH, "hset");
    Ok(Reply::Int(1))
}

pub(super) fn hdel(e: &mut Engine, call: &mut Call) -> CmdResult {
    let h = match lookup_mut::<HashValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Int(0)),
        Some(h) => h,
    };
    let mut deleted = 0;
    for f in &call.args[2..] {
        if h.remove(&f[..]).is_some() {
            deleted += 1;
            if h.is_empty() {
                break;
            }
        }
    }
    if deleted > 0 {
        e.modified(call.db, call.arg(1), notify::HASH, "hdel");
        delete_if_empty(e, call.db, call.arg(1));
    }
    Ok(Reply::Int(deleted))
}

pub(super) fn hincrby(e: &mut Engine, call: &mut Call) -> CmdResult {
    let incr = args::int(call.arg(3))?;
    let limits = e.encoding_limits();
    let h = hash_or_create(e, call.db, call.arg(1))?;
    let current = match h.get(call.arg(2)) {
        None => 0,
        Some(v) => match numfmt::parse_i64(v) {
            Some(n) => n,
            None => return Err(Reply::err(errors::HASH_VALUE_NOT_INTEGER)),
        },
    };
    let Some(new) = current.checked_add(incr) else {
        return Err(Reply::err(errors::OVERFLOW));
    };
    let mut buf = itoa::Buffer::new();
    h.set(call.arg(2), buf.format(new).as_bytes(), &limits);
    e.modified(call.db, call.arg(1), notify::HASH, "hincrby");
    Ok(Reply::Int(new))
}

pub(super) fn hincrbyfloat(e: &mut Engine, call: &mut Call) -> CmdResult {
    // Redis adds in long double: the same arithmetic as INCRBYFLOAT (see ldouble.rs).
    if crate::ldouble::LongDouble::parse(call.arg(3)).is_none() {
        return Err(Reply::err(errors::NOT_FLOAT));
    }
    let lower = call.arg(3).to_ascii_lowercase();
    if lower.windows(3).any(|w| w == b"inf" || w == b"nan") {
        return Err(Reply::err(errors::INCR_IS_NAN_OR_INF));
    }
    let limits = e.encoding_limits();
    let h = hash_or_create(e, call.db, call.arg(1))?;
    let current = h
        .get(call.arg(2))
        .map(|v| v.to_vec())
        .unwrap_or_else(|| b"0".to_vec());
    if crate::ldouble::LongDouble::parse(&current).is_none() {
        return Err(Reply::err(errors::HASH_VALUE_NOT_FLOAT));
    }
    let text = match crate::ldouble::incr_by_float(&current, call.arg(3)) {
        Ok(t) => t,
        Err(crate::ldouble::IncrFloatError::NanOrInfinity) => {
            return Err(Reply::err(errors::NAN_OR_INF))
        }
        Err(crate::ldouble::IncrFloatError::NotAFloat) => {
            return Err(Reply::err(errors::NOT_FLOAT))
        }
    };
    h.set(call.arg(2), text.as_bytes(), &limits);
    e.modified(call.db, call.arg(1), notify::HASH, "hincrbyfloat");
    Ok(Reply::bulk(text))
}
