//! The keys commands (Redis's "generic" group): deleting, inspecting, expiring, renaming,
//! moving, copying, iterating and serializing keys of any type.

pub(crate) mod dump;
mod expire;
mod iter;
mod object;
mod relocate;
#[cfg(test)]
mod tests;

use super::table::{flags::*, Command};
use crate::cmd::table::CmdResult;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::notify;
use crate::reply::Reply;

/// DEL and UNLINK: a key past its deadline counts as absent (and is expired, not deleted).
fn del(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut n = 0;
    for i in 1..call.argc() {
        let key = call.arg(i);
        let db = e.db(call.db);
        if db.peek(key).is_some() && db.remove(key).is_some() {
            e.modified(call.db, key, notify::GENERIC, "del");
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

/// EXISTS counts a key once per time it is named.
fn exists(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = e.db(call.db);
    let n = call.args[1..]
        .iter()
        .filter(|k| db.peek(k).is_some())
        .count();
    Ok(Reply::Int(n as i64))
}

fn type_(e: &mut Engine, call: &mut Call) -> CmdResult {
    let name = e
        .db(call.db)
        .peek(call.arg(1))
        .map_or("none", |en| en.value.type_name());
    Ok(Reply::status(name))
}

/// TOUCH: like EXISTS, but updates each key's access time.
fn touch(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = e.db(call.db);
    let n = call.args[1..]
        .iter()
        .filter(|k| db.get(k).is_some())
        .count();
    Ok(Reply::Int(n as i64))
}

/// A list, sorted set or stream arriving at a key may serve clients blocked on it (Redis's dbAdd).
pub(crate) fn signal_if_blocking_type(e: &mut Engine, db: usize, key: &[u8], v: &Value) {
    if matches!(v, Value::List(_) | Value::ZSet(_) | Value::Stream(_)) {
        e.signal_ready(db, key);
    }
}

pub static OBJECT_SUBCOMMANDS: &[Command] = &[
    Command::new("encoding", 3, READONLY, "generic", object::encoding).keys(2, 2, 1),
    Command::new("freq", 3, READONLY, "generic", object::freq).keys(2, 2, 1),
    Command::new("help", 2, LOADING | STALE, "generic", object::help),
    Command::new("idletime", 3, READONLY, "generic", object::idletime).keys(2, 2, 1),
    Command::new("refcount", 3, READONLY, "generic", object::refcount).keys(2, 2, 1),
];

pub static COMMANDS: &[Command] = &[
    Command::new("del", -2, WRITE, "generic", del).keys(1, -1, 1),
    Command::new("unlink", -2, WRITE | FAST, "generic", del).keys(1, -1, 1),
    Command::new("exists", -2, READONLY | FAST, "generic", exists).keys(1, -1, 1),
    Command::new("type", 2, READONLY | FAST, "generic", type_).keys(1, 1, 1),
    Command::new("touch", -2, READONLY | FAST, "generic", touch).keys(1, -1, 1),
    Command::new("expire", -3, WRITE | FAST, "generic", expire::expire).keys(1, 1, 1),
    Command::new("pexpire", -3, WRITE | FAST, "generic", expire::pexpire).keys(1, 1, 1),
    Command::new("expireat", -3, WRITE | FAST, "generic", expire::expireat).keys(1, 1, 1),
    Command::new("pexpireat", -3, WRITE | FAST, "generic", expire::pexpireat).keys(1, 1, 1),
    Command::new("ttl", 2, READONLY | FAST, "generic", expire::ttl).keys(1, 1, 1),
    Command::new("pttl", 2, READONLY | FAST, "generic", expire::pttl).keys(1, 1, 1),
    Command::new(
        "expiretime",
        2,
        READONLY | FAST,
        "generic",
        expire::expiretime,
    )
    .keys(1, 1, 1),
    Command::new(
        "pexpiretime",
        2,
        READONLY | FAST,
        "generic",
        expire::pexpiretime,
    )
    .keys(1, 1, 1),
    Command::new("persist", 2, WRITE | FAST, "generic", expire::persist).keys(1, 1, 1),
    Command::new("rename", 3, WRITE, "generic", relocate::rename).keys(1, 2, 1),
    Command::new("renamenx", 3, WRITE | FAST, "generic", relocate::renamenx).keys(1, 2, 1),
    Command::new("move", 3, WRITE | FAST, "generic", relocate::move_).keys(1, 1, 1),
    Command::new("copy", -3, WRITE | DENYOOM, "generic", relocate::copy).keys(1, 2, 1),
    Command::new("keys", 2, READONLY, "generic", iter::keys),
    Command::new("scan", -2, READONLY, "generic", iter::scan),
    Command::new("randomkey", 1, READONLY, "generic", iter::randomkey),
    Command::new("dump", 2, READONLY, "generic", dump::dump).keys(1, 1, 1),
    Command::new("restore", -4, WRITE | DENYOOM, "generic", dump::restore).keys(1, 1, 1),
    Command::new("object", -2, 0, "generic", object::help).subcommands(OBJECT_SUBCOMMANDS),
];
