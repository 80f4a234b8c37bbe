//! Hash field expiration (Redis 7.4: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL,
//! HEXPIRETIME, HPEXPIRETIME, HPERSIST) and Redis 8.0's HGETDEL, HGETEX and HSETEX.
//!
//! The deadlines are kept by `db::hash_ttl` on the engine's clock (REDLAB.CLOCK moves them),
//! which also deletes due fields with the `hexpired` event. These commands exist only in the
//! profiles that have them (`compat::since`). No Redis 7.4/8.x server runs here: replies and
//! error texts follow the published command reference and source, as DIFFERENCES.md says.

use bytes::Bytes;

use super::{delete_if_empty, hash_or_create};
use crate::cmd::args;
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::{flags::*, CmdResult, Command};
use crate::db::HashValue;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// The largest deadline a field may have, in Unix ms: Redis 7.4's HFE_MAX_ABS_TIME_MSEC, a
/// quarter of the 48 bits its expiry structure keeps (2^46 - 1, about the year 4199).
const MAX_DEADLINE_MS: i64 = (1 << 46) - 1;

/// Per-field results of HEXPIRE and friends.
const NO_FIELD: i64 = -2;
const NO_TTL: i64 = -1;
const COND_NOT_MET: i64 = 0;
const SET: i64 = 1;
const DELETED: i64 = 2;

/// Which wording a command uses for a bad FIELDS block: the three families disagree.
#[derive(Clone, Copy)]
enum Wording {
    /// HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (7.4).
    Expire,
    /// HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST (7.4) and HGETDEL (8.0).
    GetDel,
    /// HGETEX and HSETEX (8.0): `name` for the arity error.
    GetEx(&'static str),
}

/// `FIELDS numfields field ...` starting at `at`, to the end of the line; `per` arguments per
/// field (2 for HSETEX's field-value pairs).
fn fields_block(args: &[Bytes], at: usize, per: usize, w: Wording) -> Result<&[Bytes], Reply> {
    if at >= args.len() || !args::is(&args[at], "fields") {
        return Err(Reply::err(errors::HFE_FIELDS_MISSING));
    }
    let count_err = match w {
        Wording::Expire => errors::HFE_NUMFIELDS,
        Wording::GetDel => errors::HGETDEL_NUMFIELDS,
        Wording::GetEx(_) => errors::HGETEX_NUMFIELDS,
    };
    let n = args
        .get(at + 1)
        .and_then(|a| std::str::from_utf8(a).ok())
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|n| *n >= 1)
        .ok_or_else(|| Reply::err(count_err))?;
    let rest = &args[(at + 2).min(args.len())..];
    if (n as u128) * (per as u128) != rest.len() as u128 {
        return Err(Reply::err(match w {
            Wording::GetEx(name) => errors::wrong_arity(name),
            _ => errors::HFE_NUMFIELDS_MISMATCH.to_string(),
        }));
    }
    Ok(rest)
}

/// Seconds or milliseconds, relative to now or absolute.
#[derive(Clone, Copy)]
struct Unit {
    millis: bool,
    absolute: bool,
}

/// The deadline `arg` names, in Unix ms, with Redis's checks and texts.
fn deadline(e: &Engine, arg: &[u8], unit: Unit, cmd: &str) -> Result<i64, Reply> {
    let v = args::int(arg)?;
    if v < 0 {
        return Err(Reply::err(errors::HFE_NEGATIVE_TIME));
    }
    let too_big = || Reply::err(errors::invalid_expire(cmd));
    let ms = if unit.millis {
        v
    } else {
        v.checked_mul(1000).ok_or_else(too_big)?
    };
    if ms > MAX_DEADLINE_MS {
        return Err(too_big());
    }
    let base = if unit.absolute { 0 } else { e.now_ms };
    if ms > MAX_DEADLINE_MS - base {
        return Err(too_big());
    }
    Ok(ms + base)
}

/// The condition of HEXPIRE and friends.
#[derive(Clone, Copy, PartialEq)]
enum Cond {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
}

fn expire_generic(e: &mut Engine, call: &mut Call, unit: Unit, cmd: &str) -> CmdResult {
    let (db, key) = (call.db, call.args[1].clone());
    let exists = lookup::<HashValue>(e, db, &key)?.is_some();
    let at = deadline(e, &call.args[2], unit, cmd)?;
    let cond = match call.args.get(3) {
        Some(a) if args::is(a, "nx") => Cond::Nx,
        Some(a) if args::is(a, "xx") => Cond::Xx,
        Some(a) if args::is(a, "gt") => Cond::Gt,
        Some(a) if args::is(a, "lt") => Cond::Lt,
        _ => Cond::Always,
    };
    let from = if cond == Cond::Always { 3 } else { 4 };
    let fields = fields_block(&call.args, from, 1, Wording::Expire)?.to_vec();
    if !exists {
        return Ok(Reply::Array(vec![Reply::Int(NO_FIELD); fields.len()]));
    }
    let now = e.now_ms;
    let mut out = Vec::with_capacity(fields.len());
    let (mut set, mut deleted) = (false, false);
    for f in &fields {
        let has = lookup::<HashValue>(e, db, &key)?.is_some_and(|h| h.contains_key(&f[..]));
        if !has {
            out.push(Reply::Int(NO_FIELD));
            continue;
        }
        let current = e.hash_ttl.get(db, &key, f);
        let ok = match cond {
            Cond::Always => true,
            Cond::Nx => current.is_none(),
            Cond::Xx => current.is_some(),
            Cond::Gt => current.is_some_and(|c| at > c),
            Cond::Lt => current.is_none_or(|c| at < c),
        };
        if !ok {
            out.push(Reply::Int(COND_NOT_MET));
            continue;
        }
        if at <= now {
            if let Some(h) = lookup_mut::<HashValue>(e, db, &key)? {
                h.remove(&f[..]);
            }
            e.hash_ttl.remove(db, &key, f);
            deleted = true;
            out.push(Reply::Int(DELETED));
        } else {
            e.hash_ttl.set(db, &key, f, at);
            set = true;
            out.push(Reply::Int(SET));
        }
    }
    if deleted {
        e.modified(db, &key, notify::HASH, "hdel");
    }
    if set {
        e.modified(db, &key, notify::HASH, "hexpire");
    }
    delete_if_empty(e, db, &key);
    Ok(Reply::Array(out))
}

fn hexpire(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: false,
        absolute: false,
    };
    expire_generic(e, call, unit, "hexpire")
}

fn hpexpire(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: true,
        absolute: false,
    };
    expire_generic(e, call, unit, "hpexpire")
}

fn hexpireat(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: false,
        absolute: true,
    };
    expire_generic(e, call, unit, "hexpireat")
}

fn hpexpireat(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: true,
        absolute: true,
    };
    expire_generic(e, call, unit, "hpexpireat")
}

/// HTTL and friends: per field -2 (no field), -1 (no deadline) or the time.
fn ttl_generic(e: &mut Engine, call: &mut Call, unit: Unit) -> CmdResult {
    let (db, key) = (call.db, call.args[1].clone());
    let exists = lookup::<HashValue>(e, db, &key)?.is_some();
    let fields = fields_block(&call.args, 2, 1, Wording::GetDel)?.to_vec();
    if !exists {
        return Ok(Reply::Array(vec![Reply::Int(NO_FIELD); fields.len()]));
    }
    let base = if unit.absolute { 0 } else { e.now_ms };
    let mut out = Vec::with_capacity(fields.len());
    for f in &fields {
        let has = lookup::<HashValue>(e, db, &key)?.is_some_and(|h| h.contains_key(&f[..]));
        let v = match (has, e.hash_ttl.get(db, &key, f)) {
            (false, _) => NO_FIELD,
            (true, None) => NO_TTL,
            (true, Some(at)) if unit.millis => at - base,
            // Seconds round up, as Redis's (expire + 999 - base) / 1000.
            (true, Some(at)) => (at + 999 - base) / 1000,
        };
        out.push(Reply::Int(v));
    }
    Ok(Reply::Array(out))
}

fn httl(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: false,
        absolute: false,
    };
    ttl_generic(e, call, unit)
}

fn hpttl(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: true,
        absolute: false,
    };
    ttl_generic(e, call, unit)
}

fn hexpiretime(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: false,
        absolute: true,
    };
    ttl_generic(e, call, unit)
}

fn hpexpiretime(e: &mut Engine, call: &mut Call) -> CmdResult {
    let unit = Unit {
        millis: true,
        absolute: true,
    };
    ttl_generic(e, call, unit)
}

/// HPERSIST: per field -2 (no field), -1 (no deadline) or 1 (deadline removed).
fn hpersist(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (db, key) = (call.db, call.args[1].clone());
    let exists = lookup::<HashValue>(e, db, &key)?.is_some();
    let fields = fields_block(&call.args, 2, 1, Wording::GetDel)?.to_vec();
    if !exists {
        return Ok(Reply::Array(vec![Reply::Int(NO_FIELD); fields.len()]));
    }
    let mut out = Vec::with_capacity(fields.len());
    let mut any = false;
    for f in &fields {
        let has = lookup::<HashValue>(e, db, &key)?.is_some_and(|h| h.contains_key(&f[..]));
        let v = if !has {
            NO_FIELD
        } else if e.hash_ttl.remove(db, &key, f) {
            any = true;
            1
        } else {
            NO_TTL
        };
        out.push(Reply::Int(v));
    }
    if any {
        e.modified(db, &key, notify::HASH, "hpersist");
    }
    Ok(Reply::Array(out))
}

/// HGETDEL key FIELDS n field...: the values, and the fields deleted.
fn hgetdel(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (db, key) = (call.db, call.args[1].clone());
    let fields = fields_block(&call.args, 2, 1, Wording::GetDel)?.to_vec();
    let Some(h) = lookup_mut::<HashValue>(e, db, &key)? else {
        return Ok(Reply::Array(vec![Reply::Nil; fields.len()]));
    };
    let mut out = Vec::with_capacity(fields.len());
    let mut deleted = false;
    for f in &fields {
        let v = h.remove(&f[..]);
        deleted |= v.is_some();
        out.push(Reply::opt_bulk(v.as_deref()));
    }
    if deleted {
        e.modified(db, &key, notify::HASH, "hdel");
        delete_if_empty(e, db, &key);
    }
    Ok(Reply::Array(out))
}

/// The deadline option of HGETEX / HSETEX.
enum Expiry {
    None,
    At(i64),
    /// HGETEX PERSIST.
    Persist,
    /// HSETEX KEEPTTL.
    Keep,
}

/// Parses `[EX s | PX ms | EXAT s | PXAT ms | <extra>]` and, for HSETEX, `[FNX | FXX]`,
/// from `at`, up to FIELDS. Returns the expiry, the condition and where FIELDS is.
fn ex_options(
    e: &Engine,
    call: &Call,
    at: usize,
    setex: bool,
) -> Result<(Expiry, Option<bool>, usize), Reply> {
    let name = if setex { "hsetex" } else { "hgetex" };
    let one_of = if setex {
        errors::HSETEX_ONE_OF
    } else {
        errors::HGETEX_ONE_OF
    };
    let mut expiry = Expiry::None;
    // Some(true) FNX, Some(false) FXX.
    let mut cond = None;
    let mut i = at;
    while i < call.args.len() && !args::is(&call.args[i], "fields") {
        let a = &call.args[i];
        let unit = [
            ("ex", false, false),
            ("px", true, false),
            ("exat", false, true),
            ("pxat", true, true),
        ]
        .into_iter()
        .find(|(n, _, _)| args::is(a, n));
        if let Some((_, millis, absolute)) = unit {
            if !matches!(expiry, Expiry::None) {
                return Err(Reply::err(one_of));
            }
            let v = call
                .args
                .get(i + 1)
                .ok_or_else(|| Reply::err(errors::wrong_arity(name)))?;
            expiry = Expiry::At(deadline(e, v, Unit { millis, absolute }, name)?);
            i += 2;
            continue;
        }
        if (!setex && args::is(a, "persist")) || (setex && args::is(a, "keepttl")) {
            if !matches!(expiry, Expiry::None) {
                return Err(Reply::err(one_of));
            }
            expiry = if setex { Expiry::Keep } else { Expiry::Persist };
        } else if setex && (args::is(a, "fnx") || args::is(a, "fxx")) {
            if cond.is_some() {
                return Err(Reply::err(errors::HSETEX_ONE_COND));
            }
            cond = Some(args::is(a, "fnx"));
        } else {
            return Err(Reply::err(errors::HFE_FIELDS_MISSING));
        }
        i += 1;
    }
    Ok((expiry, cond, i))
}

/// HGETEX key [EX|PX|EXAT|PXAT t | PERSIST] FIELDS n field...: the values, with their
/// deadlines set or removed.
fn hgetex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (db, key) = (call.db, call.args[1].clone());
    let exists = lookup::<HashValue>(e, db, &key)?.is_some();
    let (expiry, _, at) = ex_options(e, call, 2, false)?;
    let fields = fields_block(&call.args, at, 1, Wording::GetEx("hgetex"))?.to_vec();
    if !exists {
        return Ok(Reply::Array(vec![Reply::Nil; fields.len()]));
    }
    let now = e.now_ms;
    let mut out = Vec::with_capacity(fields.len());
    let (mut event, mut deleted) = (None, false);
    for f in &fields {
        let v = lookup::<HashValue>(e, db, &key)?.and_then(|h| h.get(&f[..]).map(<[u8]>::to_vec));
        if v.is_some() {
            match expiry {
                Expiry::At(t) if t <= now => {
                    if let Some(h) = lookup_mut::<HashValue>(e, db, &key)? {
                        h.remove(&f[..]);
                    }
                    e.hash_ttl.remove(db, &key, f);
                    deleted = true;
                }
                Expiry::At(t) => {
                    e.hash_ttl.set(db, &key, f, t);
                    event = Some("hexpire");
                }
                Expiry::Persist => {
                    if e.hash_ttl.remove(db, &key, f) {
                        event = Some("hpersist");
                    }
                }
                Expiry::None | Expiry::Keep => {}
            }
        }
        out.push(Reply::opt_bulk(v.as_deref()));
    }
    if let Some(ev) = event {
        e.modified(db, &key, notify::HASH, ev);
    }
    if deleted {
        e.modified(db, &key, notify::HASH, "hdel");
        delete_if_empty(e, db, &key);
    }
    Ok(Reply::Array(out))
}

/// HSETEX key [FNX|FXX] [EX|PX|EXAT|PXAT t | KEEPTTL] FIELDS n field value ...: 1 when the
/// fields were set, 0 when the condition kept them from it.
fn hsetex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (db, key) = (call.db, call.args[1].clone());
    lookup::<HashValue>(e, db, &key)?;
    let (expiry, cond, at) = ex_options(e, call, 2, true)?;
    let pairs = fields_block(&call.args, at, 2, Wording::GetEx("hsetex"))?.to_vec();
    if let Some(need_absent) = cond {
        let h = lookup::<HashValue>(e, db, &key)?;
        let all = pairs
            .chunks(2)
            .all(|p| h.is_some_and(|h| h.contains_key(&p[0][..])) != need_absent);
        if !all {
            return Ok(Reply::Int(0));
        }
    }
    let limits = e.encoding_limits();
    let h = hash_or_create(e, db, &key)?;
    for p in pairs.chunks(2) {
        h.set(&p[0], &p[1], &limits);
    }
    let now = e.now_ms;
    let mut expired = false;
    for p in pairs.chunks(2) {
        match expiry {
            Expiry::At(t) if t <= now => {
                if let Some(h) = lookup_mut::<HashValue>(e, db, &key)? {
                    h.remove(&p[0][..]);
                }
                e.hash_ttl.remove(db, &key, &p[0]);
                expired = true;
            }
            Expiry::At(t) => e.hash_ttl.set(db, &key, &p[0], t),
            Expiry::Keep => {}
            Expiry::None | Expiry::Persist => {
                e.hash_ttl.remove(db, &key, &p[0]);
            }
        }
    }
    e.modified(db, &key, notify::HASH, "hset");
    if expired {
        e.modified(db, &key, notify::HASH, "hdel");
        delete_if_empty(e, db, &key);
    } else if matches!(expiry, Expiry::At(_)) {
        e.modified(db, &key, notify::HASH, "hexpire");
    }
    Ok(Reply::Int(1))
}

const W: u32 = WRITE | DENYOOM | FAST;

pub(crate) static COMMANDS: &[Command] = &[
    Command::new("hexpire", -6, W, "hash", hexpire).keys(1, 1, 1),
    Command::new("hpexpire", -6, W, "hash", hpexpire).keys(1, 1, 1),
    Command::new("hexpireat", -6, W, "hash", hexpireat).keys(1, 1, 1),
    Command::new("hpexpireat", -6, W, "hash", hpexpireat).keys(1, 1, 1),
    Command::new("httl", -5, READONLY | FAST, "hash", httl).keys(1, 1, 1),
    Command::new("hpttl", -5, READONLY | FAST, "hash", hpttl).keys(1, 1, 1),
    Command::new("hexpiretime", -5, READONLY | FAST, "hash", hexpiretime).keys(1, 1, 1),
    Command::new("hpexpiretime", -5, READONLY | FAST, "hash", hpexpiretime).keys(1, 1, 1),
    Command::new("hpersist", -5, WRITE | FAST, "hash", hpersist).keys(1, 1, 1),
    Command::new("hgetdel", -5, WRITE | FAST, "hash", hgetdel).keys(1, 1, 1),
    Command::new("hgetex", -5, WRITE | FAST, "hash", hgetex).keys(1, 1, 1),
    Command::new("hsetex", -6, W, "hash", hsetex).keys(1, 1, 1),
];

#[cfg(test)]
mod tests;
