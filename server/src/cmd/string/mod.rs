//! String commands: GET/SET and their variants, counters, ranges, LCS, and Redis 8.4's
//! compare-and-set family (SET IFEQ/IFNE/IFDEQ/IFDNE, DELEX, DIGEST).
//!
//! Values are `Value::Str(Vec<u8>)`. Redis keeps small integers in an int encoding; that is
//! invisible to clients except through OBJECT ENCODING, so counters here simply rewrite the
//! bytes in place (no allocation on INCR's hot path).

mod counters;
mod get_set;
mod lcs;
mod msetex;
mod range;

#[cfg(test)]
mod tests;

use super::table::{flags::*, Command};
use crate::db::Value;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;

/// `lookup_str_mut` for a write in place: Redis unshares the value into its "raw" encoding,
/// which OBJECT ENCODING then reports (see `Entry::raw`).
pub(crate) fn lookup_str_for_update<'a>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
) -> Result<Option<&'a mut Vec<u8>>, Reply> {
    match e.db(db).get_mut(key) {
        None => Ok(None),
        Some(entry) => match &mut entry.value {
            Value::Str(s) => {
                entry.raw = true;
                Ok(Some(s.make_mut()))
            }
            _ => Err(wrongtype()),
        },
    }
}

pub(crate) fn wrongtype() -> Reply {
    Reply::err(errors::WRONGTYPE)
}

/// Redis's `checkStringLength`: a string may not grow past proto-max-bulk-len.
pub(crate) fn check_string_length(e: &Engine, size: u64, append: u64) -> Result<(), Reply> {
    match size.checked_add(append) {
        Some(total) if total <= e.config.proto_max_bulk_len => Ok(()),
        _ => Err(Reply::err(errors::STRING_TOO_LONG)),
    }
}

/// The XXH3 64-bit digest as DIGEST prints it: 16 lower-case hex digits.
pub(crate) fn digest_hex(value: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(value))
}

pub static COMMANDS: &[Command] = &[
    Command::new("get", 2, READONLY | FAST, "string", get_set::get).keys(1, 1, 1),
    Command::new("set", -3, WRITE | DENYOOM, "string", get_set::set).keys(1, 1, 1),
    Command::new("setnx", 3, WRITE | DENYOOM | FAST, "string", get_set::setnx).keys(1, 1, 1),
    Command::new("setex", 4, WRITE | DENYOOM, "string", get_set::setex).keys(1, 1, 1),
    Command::new("psetex", 4, WRITE | DENYOOM, "string", get_set::psetex).keys(1, 1, 1),
    Command::new(
        "getset",
        3,
        WRITE | DENYOOM | FAST,
        "string",
        get_set::getset,
    )
    .keys(1, 1, 1),
    Command::new("getdel", 2, WRITE | FAST, "string", get_set::getdel).keys(1, 1, 1),
    Command::new("getex", -2, WRITE | FAST, "string", get_set::getex).keys(1, 1, 1),
    Command::new("mget", -2, READONLY | FAST, "string", get_set::mget).keys(1, -1, 1),
    Command::new("mset", -3, WRITE | DENYOOM, "string", get_set::mset).keys(1, -1, 2),
    Command::new("msetnx", -3, WRITE | DENYOOM, "string", get_set::msetnx).keys(1, -1, 2),
    Command::new("msetex", -4, WRITE | DENYOOM, "string", msetex::msetex),
    Command::new("delex", -2, WRITE | FAST, "string", get_set::delex).keys(1, 1, 1),
    Command::new("digest", 2, READONLY | FAST, "string", get_set::digest).keys(1, 1, 1),
    Command::new("append", 3, WRITE | DENYOOM | FAST, "string", range::append).keys(1, 1, 1),
    Command::new("strlen", 2, READONLY | FAST, "string", range::strlen).keys(1, 1, 1),
    Command::new("setrange", 4, WRITE | DENYOOM, "string", range::setrange).keys(1, 1, 1),
    Command::new("getrange", 4, READONLY, "string", range::getrange).keys(1, 1, 1),
    Command::new("substr", 4, READONLY, "string", range::getrange).keys(1, 1, 1),
    Command::new("incr", 2, WRITE | DENYOOM | FAST, "string", counters::incr).keys(1, 1, 1),
    Command::new("decr", 2, WRITE | DENYOOM | FAST, "string", counters::decr).keys(1, 1, 1),
    Command::new(
        "incrby",
        3,
        WRITE | DENYOOM | FAST,
        "string",
        counters::incrby,
    )
    .keys(1, 1, 1),
    Command::new(
        "decrby",
        3,
        WRITE | DENYOOM | FAST,
        "string",
        counters::decrby,
    )
    .keys(1, 1, 1),
    Command::new(
        "incrbyfloat",
        3,
        WRITE | DENYOOM | FAST,
        "string",
        counters::incrbyfloat,
    )
    .keys(1, 1, 1),
    Command::new("lcs", -3, READONLY, "string", lcs::lcs).keys(1, 2, 1),
];
