//! GET, SET with all its options, SETNX/SETEX/PSETEX, GETSET, GETDEL, GETEX, MGET, MSET,
//! MSETNX, and Redis 8.4's DELEX and DIGEST.

use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::StrValue;
use bytes::Bytes;

use super::digest_hex;
use crate::cmd::args;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

pub(super) fn get(e: &mut Engine, call: &mut Call) -> CmdResult {
    let v = lookup::<StrValue>(e, call.db, call.arg(1))?;
    Ok(Reply::opt_bulk(v))
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ExpireKind {
    Ex,
    Px,
    ExAt,
    PxAt,
}

/// Redis 8.4's compare-and-set conditions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Eq,
    Ne,
    DigestEq,
    DigestNe,
}

#[derive(Default)]
pub(super) struct Opts<'a> {
    pub(super) nx: bool,
    pub(super) xx: bool,
    pub(super) get: bool,
    pub(super) keepttl: bool,
    persist: bool,
    pub(super) expire: Option<(ExpireKind, &'a [u8])>,
    cond: Option<(Cond, &'a [u8])>,
}

impl Opts<'_> {
    /// Whether a SET-only option (GET, or a compare-and-set condition) was given.
    pub(super) fn has_get_or_condition(&self) -> bool {
        self.get || self.cond.is_some()
    }
}

/// Redis's `parseExtendedStringArgumentsOrReply`: which option may follow which, for SET
/// (`for_set`) or GETEX. Repeating EX (or PX, ...) is allowed and the last one wins, as in Redis.
pub(super) fn parse_opts(args: &[Bytes], start: usize, for_set: bool) -> Result<Opts<'_>, Reply> {
    let mut o = Opts::default();
    let mut j = start;
    while j < args.len() {
        let opt = &args[j][..];
        let next = args.get(j + 1).map(|b| &b[..]);
        let expire_is = |k: ExpireKind| o.expire.is_none_or(|(x, _)| x == k);
        if args::is(opt, "nx") && !o.xx && o.cond.is_none() && for_set {
            o.nx = true;
        } else if args::is(opt, "xx") && !o.nx && o.cond.is_none() && for_set {
            o.xx = true;
        } else if args::is(opt, "get") && for_set {
            o.get = true;
        } else if args::is(opt, "keepttl") && !o.persist && o.expire.is_none() && for_set {
            o.keepttl = true;
        } else if args::is(opt, "persist") && !for_set && o.expire.is_none() && !o.keepttl {
            o.persist = true;
        } else if let (Some(kind), Some(v)) = (expire_option(opt), next) {
            if o.keepttl || o.persist || !expire_is(kind) {
                return Err(Reply::err(errors::SYNTAX));
            }
            o.expire = Some((kind, v));
            j += 1;
        } else if let (Some(cond), Some(v), true) = (cond_option(opt), next, for_set) {
            if o.nx || o.xx || o.cond.is_some() {
                return Err(Reply::err(errors::SYNTAX));
            }
            o.cond = Some((cond, v));
            j += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    Ok(o)
}

fn expire_option(opt: &[u8]) -> Option<ExpireKind> {
    [
        ("ex", ExpireKind::Ex),
        ("px", ExpireKind::Px),
        ("exat", ExpireKind::ExAt),
        ("pxat", ExpireKind::PxAt),
    ]
    .into_iter()
    .find(|(name, _)| args::is(opt, name))
    .map(|(_, k)| k)
}

fn cond_option(opt: &[u8]) -> Option<Cond> {
    [
        ("ifeq", Cond::Eq),
        ("ifne", Cond::Ne),
        ("ifdeq", Cond::DigestEq),
        ("ifdne", Cond::DigestNe),
    ]
    .into_iter()
    .find(|(name, _)| args::is(opt, name))
    .map(|(_, c)| c)
}

/// Redis's `getExpireMillisecondsOrReply`: the absolute deadline in ms. Relative times are
/// added to now with C's wrapping arithmetic, so a huge PX overflows into "invalid".
pub(super) fn deadline(arg: &[u8], kind: ExpireKind, now: i64, cmd: &str) -> Result<i64, Reply> {
    let v = args::int(arg)?;
    let secs = matches!(kind, ExpireKind::Ex | ExpireKind::ExAt);
    if v <= 0 || (secs && v > i64::MAX / 1000) {
        return Err(Reply::err(errors::invalid_expire(cmd)));
    }
    let mut ms = if secs { v * 1000 } else { v };
    if matches!(kind, ExpireKind::Ex | ExpireKind::Px) {
        ms = ms.wrapping_add(now);
    }
    if ms <= 0 {
        return Err(Reply::err(errors::invalid_expire(cmd)));
    }
    Ok(ms)
}

/// Writes a string as SET does once its conditions passed: keeping the key's TTL or setting
/// the deadline, with the `set` (and `expire`) events. MSETEX stores each pair the same way.
pub(super) fn store(
    e: &mut Engine,
    db: usize,
    key: &[u8],
    value: Value,
    keepttl: bool,
    when: Option<i64>,
) {
    if keepttl {
        e.db(db).set_keep_ttl(key, value);
    } else {
        e.db(db).set_with_expire(key, value, when);
    }
    e.modified(db, key, notify::STRING, "set");
    if when.is_some() {
        notify::keyspace_event(e, notify::GENERIC, "expire", db, key);
    }
}

/// What `set_generic` did: whether it stored the value, and the old value when GET asked.
struct SetOutcome {
    stored: bool,
    old: Option<Vec<u8>>,
}

/// Redis's `setGenericCommand`, shared by SET, SETNX, SETEX and PSETEX.
fn set_generic(
    e: &mut Engine,
    db: usize,
    key: &[u8],
    val: &[u8],
    o: &Opts,
    cmd: &str,
) -> Result<SetOutcome, Reply> {
    let when = match o.expire {
        Some((kind, arg)) => Some(deadline(arg, kind, e.now_ms, cmd)?),
        None => None,
    };
    // GET and the IF* conditions need the current value, and refuse other types.
    let mut old = None;
    let found = if o.get || o.cond.is_some() {
        old = lookup::<StrValue>(e, db, key)?.map(|s| s.to_vec());
        if o.get && old.is_some() {
            // Redis reads the old value (an access), then looks the key up to write it.
            e.db(db).access_again(key);
        }
        old.is_some()
    } else if o.nx || o.xx {
        // Redis's lookup for writing: an access of the key.
        e.db(db).get(key).is_some()
    } else {
        // A plain SET needs no lookup of its own: the store below finds the old entry (and
        // expires it first if its deadline passed, as this lookup would have).
        false
    };
    let cond_ok = match o.cond {
        None => true,
        Some((c, arg)) => {
            let cur = old.as_deref();
            match c {
                Cond::Eq => cur == Some(arg),
                Cond::Ne => cur != Some(arg),
                Cond::DigestEq => {
                    cur.is_some_and(|v| digest_hex(v).as_bytes().eq_ignore_ascii_case(arg))
                }
                Cond::DigestNe => {
                    cur.is_none_or(|v| !digest_hex(v).as_bytes().eq_ignore_ascii_case(arg))
                }
            }
        }
    };
    if (o.nx && found) || (o.xx && !found) || !cond_ok {
        return Ok(SetOutcome {
            stored: false,
            old: if o.get { old } else { None },
        });
    }
    store(e, db, key, Value::Str(val.into()), o.keepttl, when);
    Ok(SetOutcome {
        stored: true,
        old: if o.get { old } else { None },
    })
}

pub(super) fn set(e: &mut Engine, call: &mut Call) -> CmdResult {
    let o = parse_opts(&call.args, 3, true)?;
    // The conditions are newer than 7.0: a profile without one answers as for any unknown
    // option (`crate::compat::since`).
    if let Some((c, _)) = o.cond {
        let (since, what) = match c {
            Cond::Eq => (crate::compat::since::SET_IFEQ, "set IFEQ"),
            Cond::Ne => (crate::compat::since::SET_DIGEST_CONDITIONS, "set IFNE"),
            Cond::DigestEq => (crate::compat::since::SET_DIGEST_CONDITIONS, "set IFDEQ"),
            Cond::DigestNe => (crate::compat::since::SET_DIGEST_CONDITIONS, "set IFDNE"),
        };
        if !e.has_option(since, what) {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    Ok(
        match set_generic(e, call.db, call.arg(1), call.arg(2), &o, "set")? {
            out if o.get => Reply::opt_bulk(out.old),
            out if out.stored => Reply::ok(),
            _ => Reply::Nil,
        },
    )
}

pub(super) fn setnx(e: &mut Engine, call: &mut Call) -> CmdResult {
    let o = Opts {
        nx: true,
        ..Default::default()
    };
    let out = set_generic(e, call.db, call.arg(1), call.arg(2), &o, "setnx")?;
    Ok(Reply::Int(i64::from(out.stored)))
}

fn set_with_ttl(e: &mut Engine, call: &Call, kind: ExpireKind, cmd: &str) -> Reply {
    let o = Opts {
        expire: Some((kind, call.arg(2))),
        ..Default::default()
    };
    match set_generic(e, call.db, call.arg(1), call.arg(3), &o, cmd) {
        Err(r) => r,
        Ok(_) => Reply::ok(),
    }
}

pub(super) fn setex(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(set_with_ttl(e, call, ExpireKind::Ex, "setex"))
}

pub(super) fn psetex(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(set_with_ttl(e, call, ExpireKind::Px, "psetex"))
}

pub(super) fn getset(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let old = lookup::<StrValue>(e, call.db, key)?.cloned();
    if old.is_some() {
        // Redis reads the old value, then looks the key up again to write it.
        e.db(call.db).access_again(key);
    }
    e.db(call.db).set(key, Value::Str(call.arg(2).into()));
    e.modified(call.db, key, notify::STRING, "set");
    Ok(Reply::opt_bulk(old))
}

pub(super) fn getdel(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    Ok(match lookup::<StrValue>(e, call.db, key)? {
        None => Reply::Nil,
        Some(_) => {
            let old = e.db(call.db).remove(key);
            e.modified(call.db, key, notify::GENERIC, "del");
            match old.map(|entry| entry.value) {
                Some(Value::Str(v)) => Reply::bulk(v),
                _ => Reply::Nil,
            }
        }
    })
}

/// GETEX: the value, and a new TTL (EX/PX/EXAT/PXAT), no TTL (PERSIST), or nothing changed.
/// A deadline already in the past deletes the key, as Redis does.
pub(super) fn getex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let o = parse_opts(&call.args, 2, false)?;
    let key = call.arg(1);
    let value = match lookup::<StrValue>(e, call.db, key)? {
        None => return Ok(Reply::Nil),
        Some(v) => Reply::bulk(v),
    };
    let when = match o.expire {
        Some((kind, arg)) => Some((kind, deadline(arg, kind, e.now_ms, "getex")?)),
        None => None,
    };
    match when {
        Some((ExpireKind::ExAt | ExpireKind::PxAt, t)) if t <= e.now_ms => {
            e.db(call.db).remove(key);
            e.modified(call.db, key, notify::GENERIC, "del");
        }
        Some((_, t)) => {
            e.db(call.db).set_expire(key, Some(t));
            e.modified(call.db, key, notify::GENERIC, "expire");
        }
        None if o.persist => {
            let had_ttl = e
                .db(call.db)
                .peek(key)
                .is_some_and(|en| en.expire_at().is_some());
            if had_ttl {
                e.db(call.db).set_expire(key, None);
                e.modified(call.db, key, notify::GENERIC, "persist");
            }
        }
        None => {}
    }
    Ok(value)
}

pub(super) fn mget(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = e.db(call.db);
    let items = call.args[1..]
        .iter()
        .map(|k| match db.get(k).map(|en| &en.value) {
            Some(Value::Str(s)) => Reply::bulk(s),
            _ => Reply::Nil,
        })
        .collect();
    Ok(Reply::Array(items))
}

fn mset_all(e: &mut Engine, call: &Call) {
    for pair in call.args[1..].chunks_exact(2) {
        e.db(call.db).set(&pair[0], Value::Str(pair[1][..].into()));
        e.modified(call.db, &pair[0], notify::STRING, "set");
    }
}

pub(super) fn mset(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc().is_multiple_of(2) {
        return Err(Reply::err(errors::wrong_arity("mset")));
    }
    mset_all(e, call);
    Ok(Reply::ok())
}

pub(super) fn msetnx(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc().is_multiple_of(2) {
        return Err(Reply::err(errors::wrong_arity("msetnx")));
    }
    let db = e.db(call.db);
    if call.args[1..].iter().step_by(2).any(|k| db.contains(k)) {
        return Ok(Reply::Int(0));
    }
    mset_all(e, call);
    Ok(Reply::Int(1))
}

/// DELEX (Redis 8.4): DEL for one key, or a compare-and-delete of a string with IFEQ, IFNE,
/// IFDEQ or IFDNE. Replies 1 when the key was deleted, else 0.
pub(super) fn delex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let cond = match call.argc() {
        2 => None,
        4 => match cond_option(call.arg(2)) {
            Some(c) => Some((c, call.arg(3))),
            None => return Err(Reply::err(errors::SYNTAX)),
        },
        _ => return Err(Reply::err(errors::SYNTAX)),
    };
    let delete = match cond {
        None => e.db(call.db).contains(key),
        Some((c, arg)) => match lookup::<StrValue>(e, call.db, key)? {
            None => false,
            Some(v) => match c {
                Cond::Eq => v[..] == *arg,
                Cond::Ne => v[..] != *arg,
                Cond::DigestEq => digest_hex(v).as_bytes().eq_ignore_ascii_case(arg),
                Cond::DigestNe => !digest_hex(v).as_bytes().eq_ignore_ascii_case(arg),
            },
        },
    };
    if !delete {
        return Ok(Reply::Int(0));
    }
    e.db(call.db).remove(key);
    e.modified(call.db, key, notify::GENERIC, "del");
    Ok(Reply::Int(1))
}

/// DIGEST (Redis 8.4): the XXH3 64-bit hash of a string value as 16 hex digits.
pub(super) fn digest(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(match lookup::<StrValue>(e, call.db, call.arg(1))? {
        None => Reply::Nil,
        Some(v) => Reply::bulk(digest_hex(v)),
    })
}
