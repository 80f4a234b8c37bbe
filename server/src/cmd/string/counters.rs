//! INCR, DECR, INCRBY, DECRBY and INCRBYFLOAT. All keep the key's TTL, as Redis does.

use crate::cmd::lookup::lookup_mut;
use crate::cmd::table::CmdResult;

use crate::cmd::args;
use crate::db::{StrValue, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::ldouble::{self, IncrFloatError};
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

/// Redis's `incrDecrCommand`: adds `incr` to the integer at the key (0 when missing).
fn incr_decr(e: &mut Engine, call: &Call, incr: i64) -> Reply {
    let key = call.arg(1);
    let new = match lookup_mut::<StrValue>(e, call.db, key) {
        Err(r) => return r,
        Ok(None) => {
            let mut buf = itoa::Buffer::new();
            e.db(call.db)
                .set(key, Value::Str(buf.format(incr).as_bytes().into()));
            incr
        }
        Ok(Some(s)) => {
            let Some(old) = numfmt::parse_i64(s) else {
                return Reply::err(errors::NOT_INTEGER);
            };
            let Some(new) = old.checked_add(incr) else {
                return Reply::err(errors::OVERFLOW);
            };
            let mut buf = itoa::Buffer::new();
            *s = StrValue::from_slice(buf.format(new).as_bytes());
            fresh_object(e, call.db, key);
            new
        }
    };
    e.modified(call.db, key, notify::STRING, "incrby");
    Reply::Int(new)
}

/// Redis stores a counter's result as a new object (`createStringObjectFromLongLongForValue`,
/// or from the long double), so a string that APPEND or SETRANGE made `raw` reads back as
/// `int` or `embstr` again.
fn fresh_object(e: &mut Engine, db: usize, key: &[u8]) {
    if let Some(entry) = e.db(db).get_mut(key) {
        entry.raw = false;
    }
}

pub(super) fn incr(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(incr_decr(e, call, 1))
}

pub(super) fn decr(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(incr_decr(e, call, -1))
}

pub(super) fn incrby(e: &mut Engine, call: &mut Call) -> CmdResult {
    let n = args::int(call.arg(2))?;
    Ok(incr_decr(e, call, n))
}

pub(super) fn decrby(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match args::int(call.arg(2))? {
        // Negating i64::MIN overflows; Redis refuses it before looking at the key.
        i64::MIN => Reply::err(errors::DECREMENT_OVERFLOW),
        n => incr_decr(e, call, -n),
    })
}

/// INCRBYFLOAT computes in x87 `long double` and stores `%.17Lf` without trailing zeros,
/// exactly as Redis (see `ldouble`).
pub(super) fn incrbyfloat(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let result = match lookup_mut::<StrValue>(e, call.db, key)? {
        None => ldouble::incr_by_float(b"0", call.arg(2)),
        Some(s) => ldouble::incr_by_float(s, call.arg(2)),
    };
    let new = match result {
        Ok(v) => v.into_bytes(),
        Err(IncrFloatError::NotAFloat) => return Err(Reply::err(errors::NOT_FLOAT)),
        Err(IncrFloatError::NanOrInfinity) => return Err(Reply::err(errors::NAN_OR_INF)),
    };
    let reply = Reply::bulk(&new);
    match lookup_mut::<StrValue>(e, call.db, key) {
        Ok(Some(s)) => {
            *s = new.into();
            fresh_object(e, call.db, key);
        }
        _ => e.db(call.db).set(key, Value::Str(new.into())),
    }
    e.modified(call.db, key, notify::STRING, "incrbyfloat");
    Ok(reply)
}
