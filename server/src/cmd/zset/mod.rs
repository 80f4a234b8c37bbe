//! The sorted-set commands: the command table, the shared helpers, and the single-key
//! commands (ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT).
//! Ranges live in `range`, pops in `pop`, set algebra in `setops`, ZRANDMEMBER and ZSCAN in
//! `misc`.

mod misc;
mod parse;
mod pop;
mod range;
mod setops;
#[cfg(test)]
mod tests;

use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use bytes::Bytes;

use super::args;
use super::table::{flags::*, Command};
use crate::db::{Value, ZSet};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

// ---- shared helpers ------------------------------------------------------------------------

/// Deletes `key` if a removal emptied it, with the `del` notification Redis sends then.
pub(super) fn delete_if_empty(e: &mut Engine, db: usize, key: &[u8]) -> bool {
    if e.db(db).remove_if_empty(key) {
        notify::keyspace_event(e, notify::GENERIC, "del", db, key);
        true
    } else {
        false
    }
}

/// Stores a computed set at `dst` (ZUNIONSTORE, ZRANGESTORE...): replaces whatever was
/// there, TTL included; an empty result deletes `dst` instead.
pub(super) fn store(e: &mut Engine, db: usize, dst: &[u8], mut z: ZSet, event: &str) -> Reply {
    let n = z.len();
    if n > 0 {
        z.fit_encoding(&e.encoding_limits());
        e.db(db).set(dst, Value::ZSet(z));
        e.modified(db, dst, notify::ZSET, event);
        e.signal_ready(db, dst);
        Reply::Int(n as i64)
    } else {
        if e.db(db).remove(dst).is_some() {
            e.modified(db, dst, notify::GENERIC, "del");
        }
        Reply::Int(0)
    }
}

/// Member/score results: a flat array in RESP2 (and without scores), `[member, score]`
/// pairs in RESP3 with scores, as Redis's ZRANGE family answers.
pub(super) fn scored_reply<'a, I>(resp: u8, items: I, withscores: bool) -> Reply
where
    I: IntoIterator<Item = (&'a [u8], f64)>,
{
    let mut out = Vec::new();
    for (m, s) in items {
        push_member(&mut out, resp, m, s, withscores);
    }
    Reply::Array(out)
}

/// Appends one member (and its score, when `withscores`) in the shape `scored_reply` uses.
pub(super) fn push_member(out: &mut Vec<Reply>, resp: u8, m: &[u8], s: f64, withscores: bool) {
    if !withscores {
        out.push(Reply::bulk(m));
    } else if resp >= 3 {
        out.push(Reply::Array(vec![Reply::bulk(m), Reply::Double(s)]));
    } else {
        out.push(Reply::bulk(m));
        out.push(Reply::Double(s));
    }
}

/// Key positions of `<cmd> [dst] numkeys key... [options]` (ZUNION, ZINTERSTORE, ZMPOP...).
fn numkeys_positions(args: &[Bytes], numkeys_idx: usize, dst: bool) -> Vec<usize> {
    crate::cmd::table::keyspec::numkeys_keys(args, numkeys_idx, dst)
}

fn keys_numkeys_at_1(args: &[Bytes]) -> Vec<usize> {
    numkeys_positions(args, 1, false)
}

fn keys_numkeys_at_2(args: &[Bytes]) -> Vec<usize> {
    numkeys_positions(args, 2, false)
}

fn keys_store(args: &[Bytes]) -> Vec<usize> {
    numkeys_positions(args, 2, true)
}

// ---- single-key commands -------------------------------------------------------------------

#[derive(Default)]
struct ZaddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

fn zadd(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(zadd_generic(e, call, false))
}

fn zincrby(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(zadd_generic(e, call, true))
}

/// ZADD and ZINCRBY, which Redis runs through the same code (so ZINCRBY takes the option
/// words too, and `ZINCRBY k nx m` is a syntax error).
fn zadd_generic(e: &mut Engine, call: &mut Call, incr: bool) -> Reply {
    let mut f = ZaddFlags {
        incr,
        ..ZaddFlags::default()
    };
    let mut i = 2;
    while i < call.argc() {
        let a = call.arg(i);
        if args::is(a, "nx") {
            f.nx = true;
        } else if args::is(a, "xx") {
            f.xx = true;
        } else if args::is(a, "ch") {
            f.ch = true;
        } else if args::is(a, "incr") {
            f.incr = true;
        } else if args::is(a, "gt") {
            f.gt = true;
        } else if args::is(a, "lt") {
            f.lt = true;
        } else {
            break;
        }
        i += 1;
    }
    let elements = call.argc() - i;
    if elements == 0 || !elements.is_multiple_of(2) {
        return Reply::err(errors::SYNTAX);
    }
    if f.nx && f.xx {
        return Reply::err(errors::ZADD_NX_XX);
    }
    if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
        return Reply::err(errors::ZADD_GT_LT_NX);
    }
    if f.incr && elements > 2 {
        return Reply::err(errors::ZADD_INCR_PAIR);
    }
    let mut scores = Vec::with_capacity(elements / 2);
    for j in (i..call.argc()).step_by(2) {
        match parse::score_or_err(call.arg(j)) {
            Ok(s) => scores.push(s),
            Err(r) => return r,
        }
    }
    let key = call.args[1].clone();
    let db = call.db;
    match lookup_mut::<ZSet>(e, db, &key) {
        Err(r) => return r,
        Ok(Some(_)) => {}
        Ok(None) => {
            if f.xx {
                return if f.incr { Reply::Nil } else { Reply::Int(0) };
            }
            e.db(db).set(&key, Value::ZSet(ZSet::new()));
        }
    }
    let limits = e.encoding_limits();
    let Ok(Some(z)) = lookup_mut::<ZSet>(e, db, &key) else {
        return Reply::err(errors::WRONGTYPE);
    };
    let (mut added, mut updated, mut processed) = (0i64, 0i64, 0i64);
    let mut last = 0.0;
    let mut nan = false;
    for (n, &score) in scores.iter().enumerate() {
        let member = &call.args[i + 2 * n + 1];
        match z.score(member) {
            Some(cur) => {
                if f.nx {
                    continue;
                }
                let mut s = score;
                if f.incr {
                    s += cur;
                    if s.is_nan() {
                        nan = true;
                        break;
                    }
                }
                if (f.lt && s >= cur) || (f.gt && s <= cur) {
                    continue;
                }
                if s != cur {
                    z.insert(member, s, &limits);
                    updated += 1;
                }
                processed += 1;
                last = s;
            }
            None if !f.xx => {
                z.insert(member, score, &limits);
                added += 1;
                processed += 1;
                last = score;
            }
            None => {}
        }
    }
    if added > 0 || updated > 0 {
        e.modified(
            db,
            &key,
            notify::ZSET,
            if f.incr { "zincr" } else { "zadd" },
        );
    }
    if added > 0 {
        e.signal_ready(db, &key);
    }
    if nan {
        return Reply::err(errors::ZADD_NAN);
    }
    if f.incr {
        if processed > 0 {
            Reply::Double(last)
        } else {
            Reply::Nil
        }
    } else {
        Reply::Int(if f.ch { added + updated } else { added })
    }
}

fn zrem(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.args[1].clone();
    let db = call.db;
    let z = match lookup_mut::<ZSet>(e, db, &key)? {
        None => return Ok(Reply::Int(0)),
        Some(z) => z,
    };
    let mut deleted = 0;
    for m in &call.args[2..] {
        if z.remove(m).is_some() {
            deleted += 1;
            if z.is_empty() {
                break;
            }
        }
    }
    if deleted > 0 {
        e.modified(db, &key, notify::ZSET, "zrem");
        delete_if_empty(e, db, &key);
    }
    Ok(Reply::Int(deleted))
}

fn zcard(e: &mut Engine, call: &mut Call) -> CmdResult {
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(z.map_or(0, |z| z.len() as i64)))
}

fn zscore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    Ok(z.and_then(|z| z.score(call.arg(2)))
        .map_or(Reply::Nil, Reply::Double))
}

fn zmscore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    Ok(Reply::Array(
        call.args[2..]
            .iter()
            .map(|m| z.and_then(|z| z.score(m)).map_or(Reply::Nil, Reply::Double))
            .collect(),
    ))
}

/// ZRANK / ZREVRANK key member [WITHSCORE]. WITHSCORE is Redis 7.2's: only a profile that has
/// it admits a fourth word (`compat::since::LATER_ARITY`), and there, as in 7.2's
/// zrankGenericCommand, a fifth is an arity error and any other fourth word a syntax error,
/// both before the key is looked at; a missing key or member is then the null array.
fn zrank_generic(e: &mut Engine, call: &mut Call, rev: bool) -> CmdResult {
    if call.argc() > 4 {
        return Err(Reply::err(errors::wrong_arity(if rev {
            "zrevrank"
        } else {
            "zrank"
        })));
    }
    let withscore = match call.args.get(3) {
        None => false,
        Some(a) if a.eq_ignore_ascii_case(b"withscore") => true,
        Some(_) => return Err(Reply::err(errors::SYNTAX)),
    };
    let none = if withscore {
        Reply::NilArray
    } else {
        Reply::Nil
    };
    let Some(z) = lookup::<ZSet>(e, call.db, call.arg(1))? else {
        return Ok(none);
    };
    let Some(r) = z.rank(call.arg(2)) else {
        return Ok(none);
    };
    let rank = Reply::Int((if rev { z.len() - 1 - r } else { r }) as i64);
    if !withscore {
        return Ok(rank);
    }
    let score = z.score(call.arg(2)).map_or(Reply::Nil, Reply::Double);
    Ok(Reply::Array(vec![rank, score]))
}

fn zrank(e: &mut Engine, call: &mut Call) -> CmdResult {
    zrank_generic(e, call, false)
}

fn zrevrank(e: &mut Engine, call: &mut Call) -> CmdResult {
    zrank_generic(e, call, true)
}

fn zcount(e: &mut Engine, call: &mut Call) -> CmdResult {
    let range = parse::score_range(call.arg(2), call.arg(3))?;
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(
        z.map_or(0, |z| z.count_in_score_range(&range) as i64),
    ))
}

fn zlexcount(e: &mut Engine, call: &mut Call) -> CmdResult {
    let range = parse::lex_range(call.arg(2), call.arg(3))?;
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(
        z.map_or(0, |z| z.count_in_lex_range(&range) as i64),
    ))
}

const G: &str = "sorted-set";

pub static COMMANDS: &[Command] = &[
    Command::new("zadd", -4, WRITE | DENYOOM | FAST, G, zadd).keys(1, 1, 1),
    Command::new("zincrby", 4, WRITE | DENYOOM | FAST, G, zincrby).keys(1, 1, 1),
    Command::new("zrem", -3, WRITE | FAST, G, zrem).keys(1, 1, 1),
    Command::new("zcard", 2, READONLY | FAST, G, zcard).keys(1, 1, 1),
    Command::new("zscore", 3, READONLY | FAST, G, zscore).keys(1, 1, 1),
    Command::new("zmscore", -3, READONLY | FAST, G, zmscore).keys(1, 1, 1),
    Command::new("zrank", 3, READONLY | FAST, G, zrank).keys(1, 1, 1),
    Command::new("zrevrank", 3, READONLY | FAST, G, zrevrank).keys(1, 1, 1),
    Command::new("zcount", 4, READONLY | FAST, G, zcount).keys(1, 1, 1),
    Command::new("zlexcount", 4, READONLY | FAST, G, zlexcount).keys(1, 1, 1),
    Command::new("zrange", -4, READONLY, G, range::zrange).keys(1, 1, 1),
    Command::new("zrangebyscore", -4, READONLY, G, range::zrangebyscore).keys(1, 1, 1),
    Command::new("zrevrangebyscore", -4, READONLY, G, range::zrevrangebyscore).keys(1, 1, 1),
    Command::new("zrangebylex", -4, READONLY, G, range::zrangebylex).keys(1, 1, 1),
    Command::new("zrevrangebylex", -4, READONLY, G, range::zrevrangebylex).keys(1, 1, 1),
    Command::new("zrevrange", -4, READONLY, G, range::zrevrange).keys(1, 1, 1),
    Command::new("zrangestore", -5, WRITE | DENYOOM, G, range::zrangestore).keys(1, 2, 1),
    Command::new("zremrangebyrank", 4, WRITE, G, range::zremrangebyrank).keys(1, 1, 1),
    Command::new("zremrangebyscore", 4, WRITE, G, range::zremrangebyscore).keys(1, 1, 1),
    Command::new("zremrangebylex", 4, WRITE, G, range::zremrangebylex).keys(1, 1, 1),
    Command::new("zpopmin", -2, WRITE | FAST, G, pop::zpopmin).keys(1, 1, 1),
    Command::new("zpopmax", -2, WRITE | FAST, G, pop::zpopmax).keys(1, 1, 1),
    Command::new("zmpop", -4, WRITE, G, pop::zmpop).movable_keys(keys_numkeys_at_1),
    Command::new(
        "bzpopmin",
        -3,
        WRITE | NOSCRIPT | BLOCKING | FAST,
        G,
        pop::bzpopmin,
    )
    .keys(1, -2, 1),
    Command::new(
        "bzpopmax",
        -3,
        WRITE | NOSCRIPT | BLOCKING | FAST,
        G,
        pop::bzpopmax,
    )
    .keys(1, -2, 1),
    Command::new("bzmpop", -5, WRITE | BLOCKING, G, pop::bzmpop).movable_keys(keys_numkeys_at_2),
    Command::new("zunion", -3, READONLY, G, setops::zunion).movable_keys(keys_numkeys_at_1),
    Command::new("zinter", -3, READONLY, G, setops::zinter).movable_keys(keys_numkeys_at_1),
    Command::new("zdiff", -3, READONLY, G, setops::zdiff).movable_keys(keys_numkeys_at_1),
    Command::new("zunionstore", -4, WRITE | DENYOOM, G, setops::zunionstore)
        .keys(1, 1, 1)
        .movable_keys(keys_store),
    Command::new("zinterstore", -4, WRITE | DENYOOM, G, setops::zinterstore)
        .keys(1, 1, 1)
        .movable_keys(keys_store),
    Command::new("zdiffstore", -4, WRITE | DENYOOM, G, setops::zdiffstore)
        .keys(1, 1, 1)
        .movable_keys(keys_store),
    Command::new("zintercard", -3, READONLY, G, setops::zintercard).movable_keys(keys_numkeys_at_1),
    Command::new("zrandmember", -2, READONLY, G, misc::zrandmember).keys(1, 1, 1),
    Command::new("zscan", -3, READONLY, G, misc::zscan).keys(1, 1, 1),
];
