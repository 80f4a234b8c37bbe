//! ZRANGE and its older spellings (ZREVRANGE, ZRANGEBYSCORE, ZRANGEBYLEX, ...), ZRANGESTORE,
//! and ZREMRANGEBYRANK/BYSCORE/BYLEX.
//!
//! Redis 6.2 folded every range command into one parser (`zrangeGenericCommand`); the old
//! names are that parser with the range type or direction fixed, which is why, e.g.,
//! `ZRANGEBYSCORE k 0 1 REV` is a syntax error while `ZRANGE k 0 1 BYSCORE REV` is not.

use super::{args, delete_if_empty, parse, scored_reply, store};
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use crate::db::zset::{LexRange, ScoreRange};
use crate::db::ZSet;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Auto,
    Forward,
    Reverse,
}

enum Spec {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

pub fn zrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 1, false, Kind::Auto, Dir::Auto))
}

pub fn zrevrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 1, false, Kind::Rank, Dir::Reverse))
}

pub fn zrangebyscore(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 1, false, Kind::Score, Dir::Forward))
}

pub fn zrevrangebyscore(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 1, false, Kind::Score, Dir::Reverse))
}

pub fn zrangebylex(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 1, false, Kind::Lex, Dir::Forward))
}

pub fn zrevrangebylex(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 1, false, Kind::Lex, Dir::Reverse))
}

pub fn zrangestore(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, 2, true, Kind::Auto, Dir::Auto))
}

fn generic(
    e: &mut Engine,
    call: &mut Call,
    start: usize,
    is_store: bool,
    mut kind: Kind,
    mut dir: Dir,
) -> Reply {
    let mut withscores = false;
    let mut offset: i64 = 0;
    let mut limit: i64 = -1;
    let mut j = start + 3;
    while j < call.argc() {
        let a = call.arg(j);
        let left = call.argc() - j - 1;
        if !is_store && args::is(a, "withscores") {
            withscores = true;
        } else if args::is(a, "limit") && left >= 2 {
            offset = match args::int(call.arg(j + 1)) {
                Ok(n) => n,
                Err(r) => return r,
            };
            limit = match args::int(call.arg(j + 2)) {
                Ok(n) => n,
                Err(r) => return r,
            };
            j += 2;
        } else if dir == Dir::Auto && args::is(a, "rev") {
            dir = Dir::Reverse;
        } else if kind == Kind::Auto && args::is(a, "bylex") {
            kind = Kind::Lex;
        } else if kind == Kind::Auto && args::is(a, "byscore") {
            kind = Kind::Score;
        } else {
            return Reply::err(errors::SYNTAX);
        }
        j += 1;
    }
    if dir == Dir::Auto {
        dir = Dir::Forward;
    }
    if kind == Kind::Auto {
        kind = Kind::Rank;
    }
    if limit != -1 && kind == Kind::Rank {
        return Reply::err(errors::ZRANGE_LIMIT);
    }
    if withscores && kind == Kind::Lex {
        return Reply::err(errors::ZRANGE_BYLEX_WITHSCORES);
    }
    let rev = dir == Dir::Reverse;
    let (mut lo, mut hi) = (call.arg(start + 1), call.arg(start + 2));
    if rev && kind != Kind::Rank {
        std::mem::swap(&mut lo, &mut hi);
    }
    let spec = match kind {
        Kind::Score => match parse::score_range(lo, hi) {
            Ok(r) => Spec::Score(r),
            Err(r) => return r,
        },
        Kind::Lex => match parse::lex_range(lo, hi) {
            Ok(r) => Spec::Lex(r),
            Err(r) => return r,
        },
        _ => match (args::int(lo), args::int(hi)) {
            (Ok(a), Ok(b)) => Spec::Rank(a, b),
            (Err(r), _) | (_, Err(r)) => return r,
        },
    };
    let key = call.args[start].clone();
    let items: Vec<(Vec<u8>, f64)> = match lookup::<ZSet>(e, call.db, &key) {
        Err(r) => return r,
        Ok(None) => Vec::new(),
        Ok(Some(z)) => select(z, &spec, rev, offset, limit)
            .map(|(m, s)| (m.to_vec(), s))
            .collect(),
    };
    if is_store {
        // Built as Redis 7.0 builds it: a listpack that converts once it outgrows the limits.
        let limits = e.encoding_limits();
        let mut out = ZSet::new();
        for (m, s) in &items {
            out.insert(m, *s, &limits);
        }
        let dst = call.args[1].clone();
        return store(e, call.db, &dst, out, "zrangestore");
    }
    scored_reply(
        call.resp,
        items.iter().map(|(m, s)| (m.as_slice(), *s)),
        withscores,
    )
}

/// Redis's rank sanitising: negative indexes count from the end; None for an empty range.
fn rank_bounds(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 {
        len.saturating_add(start)
    } else {
        start
    };
    let mut end = if end < 0 {
        len.saturating_add(end)
    } else {
        end
    };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= len {
        return None;
    }
    if end >= len {
        end = len - 1;
    }
    Some((start as usize, end as usize))
}

/// The elements a range selects, in reply order.
fn select<'a>(
    z: &'a ZSet,
    spec: &Spec,
    rev: bool,
    offset: i64,
    limit: i64,
) -> Box<dyn Iterator<Item = (&'a [u8], f64)> + 'a> {
    let empty =
        || -> Box<dyn Iterator<Item = (&'a [u8], f64)> + 'a> { Box::new(std::iter::empty()) };
    let len = z.len();
    if let Spec::Rank(a, b) = spec {
        let Some((start, end)) = rank_bounds(len, *a, *b) else {
            return empty();
        };
        let n = end - start + 1;
        return if rev {
            Box::new(z.rev_iter_from(len - 1 - start).take(n))
        } else {
            Box::new(z.iter_from(start).take(n))
        };
    }
    // A negative offset skips everything in Redis's loop; a negative limit is no limit.
    if offset < 0 || (offset > 0 && offset as u64 >= len as u64) {
        return empty();
    }
    let offset = offset as usize;
    let limit = if limit < 0 {
        usize::MAX
    } else {
        limit as usize
    };
    match spec {
        Spec::Score(r) => {
            let r = *r;
            if rev {
                match z.last_in_score_range(&r) {
                    Some(last) => Box::new(
                        z.rev_iter_from(last)
                            .skip(offset)
                            .take_while(move |(_, s)| r.gte_min(*s))
                            .take(limit),
                    ),
                    None => empty(),
                }
            } else {
                match z.first_in_score_range(&r) {
                    Some(first) => Box::new(
                        z.iter_from(first)
                            .skip(offset)
                            .take_while(move |(_, s)| r.lte_max(*s))
                            .take(limit),
                    ),
                    None => empty(),
                }
            }
        }
        Spec::Lex(r) => {
            let r = r.clone();
            if rev {
                match z.last_in_lex_range(&r) {
                    Some(last) => Box::new(
                        z.rev_iter_from(last)
                            .skip(offset)
                            .take_while(move |(m, _)| r.gte_min(m))
                            .take(limit),
                    ),
                    None => empty(),
                }
            } else {
                match z.first_in_lex_range(&r) {
                    Some(first) => Box::new(
                        z.iter_from(first)
                            .skip(offset)
                            .take_while(move |(m, _)| r.lte_max(m))
                            .take(limit),
                    ),
                    None => empty(),
                }
            }
        }
        Spec::Rank(..) => empty(),
    }
}

pub fn zremrangebyrank(e: &mut Engine, call: &mut Call) -> CmdResult {
    let spec = match (args::int(call.arg(2)), args::int(call.arg(3))) {
        (Ok(a), Ok(b)) => Spec::Rank(a, b),
        (Err(r), _) | (_, Err(r)) => return Ok(r),
    };
    Ok(remove_range(e, call, spec, "zremrangebyrank"))
}

pub fn zremrangebyscore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let r = parse::score_range(call.arg(2), call.arg(3))?;
    Ok(remove_range(e, call, Spec::Score(r), "zremrangebyscore"))
}

pub fn zremrangebylex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let r = parse::lex_range(call.arg(2), call.arg(3))?;
    Ok(remove_range(e, call, Spec::Lex(r), "zremrangebylex"))
}

fn remove_range(e: &mut Engine, call: &mut Call, spec: Spec, event: &str) -> Reply {
    let key = call.args[1].clone();
    let db = call.db;
    let z = match lookup_mut::<ZSet>(e, db, &key) {
        Err(r) => return r,
        Ok(None) => return Reply::Int(0),
        Ok(Some(z)) => z,
    };
    let bounds = match &spec {
        Spec::Rank(a, b) => rank_bounds(z.len(), *a, *b),
        Spec::Score(r) => z.first_in_score_range(r).zip(z.last_in_score_range(r)),
        Spec::Lex(r) => z.first_in_lex_range(r).map(|first| {
            let n = z.iter_from(first).take_while(|(m, _)| r.lte_max(m)).count();
            (first, first + n.max(1) - 1)
        }),
    };
    let removed = match bounds {
        Some((a, b)) if a <= b => z.remove_rank_range(a, b).len(),
        _ => 0,
    };
    if removed > 0 {
        e.modified(db, &key, notify::ZSET, event);
        delete_if_empty(e, db, &key);
    }
    Reply::Int(removed as i64)
}
