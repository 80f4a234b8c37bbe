//! The HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST.
//!
//! The value is a plain string in Redis's own format (see `sketch`), so it survives GET/SET,
//! DUMP/RESTORE and APPEND exactly as in Redis, and each command checks it on the way in
//! (`WRONGTYPE Key is not a valid HyperLogLog string value.`).

mod selftest;
pub(crate) mod sketch;
#[cfg(test)]
mod tests;

use super::table::{flags::*, CmdResult, Command};
use crate::cmd::lookup::lookup;
use crate::cmd::string::lookup_str_for_update;
use crate::db::{StrValue, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// The value at `key` for an update, checked to be a HyperLogLog; None when there is no key.
fn hll_for_update<'a>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
) -> Result<Option<&'a mut Vec<u8>>, Reply> {
    if !is_hll(e, db, key)? {
        return Ok(None);
    }
    lookup_str_for_update(e, db, key)
}

/// Whether `key` holds a valid HyperLogLog: false when it does not exist, WRONGTYPE for
/// another type and Redis's HyperLogLog WRONGTYPE for a string of another shape.
fn is_hll(e: &mut Engine, db: usize, key: &[u8]) -> Result<bool, Reply> {
    match lookup::<StrValue>(e, db, key)? {
        None => Ok(false),
        Some(s) if sketch::is_valid(s) => Ok(true),
        Some(_) => Err(Reply::err(errors::HLL_WRONGTYPE)),
    }
}

fn invalid() -> Reply {
    Reply::err(errors::HLL_INVALID)
}

/// hll-sparse-max-bytes: past it a sparse value turns dense.
fn sparse_max_bytes(e: &Engine) -> usize {
    e.config
        .get_by_name("hll-sparse-max-bytes")
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(3000, |v| v.min(usize::MAX as u64) as usize)
}

/// Creates an empty HyperLogLog at `key`, in the raw encoding Redis gives it.
fn create(e: &mut Engine, db: usize, key: &[u8]) {
    e.db(db)
        .set(key, Value::Str(StrValue::from(sketch::new_sparse())));
    e.db(db).mark_raw(key);
}

/// PFADD key [element ...]: 1 when a register changed or the key was created.
fn pfadd(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (db, key) = (call.db, &call.args[1]);
    let updated = match add_to_dense(e, db, key, &call.args[2..])? {
        Some(updated) => updated,
        None => {
            let mut updated = false;
            if !is_hll(e, db, key)? {
                create(e, db, key);
                updated = true;
            }
            // Reading a parameter by name costs more than the rest of a one-element PFADD:
            // only a sparse value, which may turn dense, gets here to read it.
            let max = sparse_max_bytes(e);
            let v = lookup_str_for_update(e, db, key)?.ok_or_else(invalid)?;
            for elem in &call.args[2..] {
                updated |= sketch::add(v, elem, max).ok_or_else(invalid)?;
            }
            if updated {
                sketch::invalidate_cache(v);
            }
            updated
        }
    };
    if updated {
        e.modified(db, key, notify::STRING, "pfadd");
    }
    Ok(Reply::Int(updated as i64))
}

/// PFADD's usual case, a counter already dense, in one write look-up (Redis's
/// `lookupKeyWrite`, then `dbUnshareStringValue`): whether a register changed, or None when
/// the key is missing or sparse (the caller's general way then runs, from the start). The
/// errors of `is_hll` for a value that is no HyperLogLog.
fn add_to_dense(
    e: &mut Engine,
    db: usize,
    key: &[u8],
    elems: &[bytes::Bytes],
) -> Result<Option<bool>, Reply> {
    let Some(entry) = e.db(db).get_mut(key) else {
        return Ok(None);
    };
    let Value::Str(s) = &mut entry.value else {
        return Err(Reply::err(errors::WRONGTYPE));
    };
    if !sketch::is_valid(s) {
        return Err(Reply::err(errors::HLL_WRONGTYPE));
    }
    if s[4] != sketch::DENSE {
        return Ok(None);
    }
    entry.raw = true;
    let v = s.make_mut();
    let mut updated = false;
    for elem in elems {
        // Dense registers never fail to take a value; the limit only concerns sparse ones.
        updated |= sketch::add(v, elem, 0).ok_or_else(invalid)?;
    }
    if updated {
        sketch::invalidate_cache(v);
    }
    Ok(Some(updated))
}

/// PFCOUNT key [key ...]. One key answers from, or refreshes, the cached cardinality (a
/// refresh is a change of the value: it breaks WATCH, as in Redis, though it sends no event);
/// several keys are merged into scratch registers and counted.
fn pfcount(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 2 {
        let mut max = Box::new([0u8; sketch::REGISTERS]);
        for key in &call.args[1..] {
            if !is_hll(e, call.db, key)? {
                continue;
            }
            let v = lookup::<StrValue>(e, call.db, key)?.ok_or_else(invalid)?;
            sketch::merge_into(&mut max, v).map_err(|_| invalid())?;
        }
        return Ok(Reply::Int(sketch::count_raw(&max) as i64));
    }
    let key = call.args[1].clone();
    let Some(v) = hll_for_update(e, call.db, &key)? else {
        return Ok(Reply::Int(0));
    };
    if let Some(card) = sketch::cached(v) {
        return Ok(Reply::Int(card as i64));
    }
    let card = sketch::count(v).ok_or_else(invalid)?;
    sketch::set_cache(v, card);
    e.touch_watched(call.db, &key);
    e.dirty += 1;
    Ok(Reply::Int(card as i64))
}

/// PFMERGE destkey [sourcekey ...]: the union into `destkey`, which is itself one of the
/// inputs. The result is dense when any input is.
fn pfmerge(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut max = Box::new([0u8; sketch::REGISTERS]);
    let mut dense = false;
    for key in &call.args[1..] {
        if !is_hll(e, call.db, key)? {
            continue;
        }
        let v = lookup::<StrValue>(e, call.db, key)?.ok_or_else(invalid)?;
        dense |= v[4] == sketch::DENSE;
        sketch::merge_into(&mut max, v).map_err(|_| invalid())?;
    }
    let key = call.args[1].clone();
    let limit = sparse_max_bytes(e);
    if !is_hll(e, call.db, &key)? {
        create(e, call.db, &key);
    }
    let v = lookup_str_for_update(e, call.db, &key)?.ok_or_else(invalid)?;
    if dense {
        sketch::to_dense(v).ok_or_else(invalid)?;
    }
    for (i, &r) in max.iter().enumerate() {
        if r != 0 {
            // Redis ignores a failure here: the inputs were all checked above.
            let _ = sketch::set_register(v, i, r, limit);
        }
    }
    sketch::invalidate_cache(v);
    e.modified(call.db, &key, notify::STRING, "pfadd");
    Ok(Reply::ok())
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.
fn pfdebug(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.args[2].clone();
    let Some(v) = hll_for_update(e, call.db, &key)? else {
        return Err(Reply::err(errors::HLL_NO_KEY));
    };
    let sub = call.arg(1);
    let is = |name: &str| sub.eq_ignore_ascii_case(name.as_bytes());
    if is("getreg") {
        let was_sparse = v[4] == sketch::SPARSE;
        sketch::to_dense(v).ok_or_else(invalid)?;
        let regs = (0..sketch::REGISTERS)
            .map(|i| Reply::Int(sketch::dense_get(&v[sketch::HDR..], i) as i64))
            .collect();
        if was_sparse {
            e.dirty += 1;
        }
        Ok(Reply::Array(regs))
    } else if is("decode") {
        if v[4] != sketch::SPARSE {
            return Err(Reply::err(errors::HLL_NOT_SPARSE));
        }
        Ok(Reply::bulk(sketch::decode(v)))
    } else if is("encoding") {
        Ok(Reply::status(if v[4] == sketch::DENSE {
            "dense"
        } else {
            "sparse"
        }))
    } else if is("todense") {
        let converted = v[4] == sketch::SPARSE;
        sketch::to_dense(v).ok_or_else(invalid)?;
        if converted {
            e.dirty += 1;
        }
        Ok(Reply::Int(converted as i64))
    } else {
        Err(Reply::err(errors::pfdebug_subcommand(sub)))
    }
}

fn pfselftest(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    selftest::run().map_err(|msg| Reply::err(errors::pfselftest_failed(&msg)))?;
    Ok(Reply::ok())
}

pub static COMMANDS: &[Command] = &[
    Command::new("pfadd", -2, WRITE | DENYOOM | FAST, "hyperloglog", pfadd).keys(1, 1, 1),
    Command::new(
        "pfcount",
        -2,
        READONLY | MAY_REPLICATE,
        "hyperloglog",
        pfcount,
    )
    .keys(1, -1, 1),
    Command::new("pfmerge", -2, WRITE | DENYOOM, "hyperloglog", pfmerge).keys(1, -1, 1),
    Command::new(
        "pfdebug",
        3,
        WRITE | DENYOOM | ADMIN,
        "hyperloglog",
        pfdebug,
    )
    .keys(2, 2, 1),
    Command::new("pfselftest", 1, ADMIN, "hyperloglog", pfselftest),
];
