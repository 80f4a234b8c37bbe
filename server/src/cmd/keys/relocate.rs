//! RENAME, RENAMENX, MOVE and COPY: a value changes its name or database; its deadline goes
//! with it.

use super::signal_if_blocking_type;
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

fn rename_generic(e: &mut Engine, call: &mut Call, nx: bool) -> Reply {
    let (src, dst) = (call.arg(1).to_vec(), call.arg(2).to_vec());
    let d = call.db;
    if e.db(d).get(&src).is_none() {
        return Reply::err(errors::NO_SUCH_KEY);
    }
    // Same name: nothing moves, but the key had to exist.
    if src == dst {
        return if nx { Reply::Int(0) } else { Reply::ok() };
    }
    if e.db(d).get(&dst).is_some() {
        if nx {
            return Reply::Int(0);
        }
        e.db(d).remove(&dst);
    }
    let Some(entry) = e.db(d).remove(&src) else {
        return Reply::err(errors::NO_SUCH_KEY);
    };
    signal_if_blocking_type(e, d, &dst, &entry.value);
    e.db(d).insert_entry(&dst, entry);
    e.modified(d, &src, notify::GENERIC, "rename_from");
    e.modified(d, &dst, notify::GENERIC, "rename_to");
    if nx {
        Reply::Int(1)
    } else {
        Reply::ok()
    }
}

pub fn rename(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(rename_generic(e, call, false))
}

pub fn renamenx(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(rename_generic(e, call, true))
}

/// A database index argument: Redis parses it as a C int, then checks the range.
fn db_index(e: &Engine, arg: &[u8]) -> Result<usize, Reply> {
    let n = numfmt::parse_i64(arg).ok_or_else(|| Reply::err(errors::NOT_INTEGER))?;
    if n < i32::MIN as i64 || n > i32::MAX as i64 {
        return Err(Reply::err(errors::INT_OUT_OF_RANGE));
    }
    if n < 0 || n as usize >= e.dbs.len() {
        return Err(Reply::err(errors::DB_INDEX));
    }
    Ok(n as usize)
}

pub fn move_(e: &mut Engine, call: &mut Call) -> CmdResult {
    let target = db_index(e, call.arg(2))?;
    let src = call.db;
    if target == src {
        return Err(Reply::err(errors::SAME_OBJECT));
    }
    let key = call.arg(1).to_vec();
    if e.db(src).get(&key).is_none() || e.db(target).get(&key).is_some() {
        return Ok(Reply::Int(0));
    }
    let Some(entry) = e.db(src).remove(&key) else {
        return Ok(Reply::Int(0));
    };
    signal_if_blocking_type(e, target, &key, &entry.value);
    e.db(target).insert_entry(&key, entry);
    e.modified(src, &key, notify::GENERIC, "move_from");
    e.modified(target, &key, notify::GENERIC, "move_to");
    Ok(Reply::Int(1))
}

/// COPY source destination [DB n] [REPLACE]
pub fn copy(e: &mut Engine, call: &mut Call) -> CmdResult {
    let src_db = call.db;
    let mut dst_db = src_db;
    let mut replace = false;
    let mut i = 3;
    while i < call.argc() {
        let a = call.arg(i);
        if args::is(a, "replace") {
            replace = true;
        } else if args::is(a, "db") && i + 1 < call.argc() {
            dst_db = db_index(e, call.arg(i + 1))?;
            i += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 1;
    }
    let (src, dst) = (call.arg(1).to_vec(), call.arg(2).to_vec());
    if src_db == dst_db && src == dst {
        return Err(Reply::err(errors::SAME_OBJECT));
    }
    let Some(entry) = e.db(src_db).get(&src) else {
        return Ok(Reply::Int(0));
    };
    let (value, expire_at, raw) = (entry.value.clone(), entry.expire_at(), entry.raw);
    if e.db(dst_db).get(&dst).is_some() {
        if !replace {
            return Ok(Reply::Int(0));
        }
        e.db(dst_db).remove(&dst);
    }
    signal_if_blocking_type(e, dst_db, &dst, &value);
    e.db(dst_db).set_with_expire(&dst, value, expire_at);
    if raw {
        // The copy keeps the original's encoding, as Redis's duplicate does.
        e.db(dst_db).mark_raw(&dst);
    }
    e.modified(dst_db, &dst, notify::GENERIC, "copy_to");
    Ok(Reply::Int(1))
}
