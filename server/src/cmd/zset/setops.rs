//! ZUNION, ZINTER, ZDIFF, their STORE forms, and ZINTERCARD.
//!
//! Plain sets are valid inputs (every member scores 1). As in Redis, union and intersection
//! visit the inputs from the smallest to the largest, which decides the order scores are
//! summed in (and so the last bits of a float SUM). NaN from `inf + -inf` or `0 * inf`
//! becomes 0 as Redis makes it: a weighted score of a union's input or of an intersection's
//! first input, and a SUM; an intersection's later NaN products leave MIN and MAX unchanged.

use crate::cmd::table::CmdResult;
use std::collections::HashMap;

use bytes::Bytes;
use foldhash::fast::FixedState;

use super::{args, parse, scored_reply, store};
use crate::db::value::SetValue;
use crate::db::{Value, ZSet};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    fn apply(self, target: &mut f64, v: f64) {
        match self {
            Aggregate::Sum => {
                *target += v;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if v < *target {
                    *target = v;
                }
            }
            Aggregate::Max => {
                if v > *target {
                    *target = v;
                }
            }
        }
    }
}

enum Data<'a> {
    Missing,
    Z(&'a ZSet),
    S(&'a SetValue),
}

struct Src<'a> {
    data: Data<'a>,
    weight: f64,
}

impl<'a> Src<'a> {
    fn len(&self) -> usize {
        match self.data {
            Data::Missing => 0,
            Data::Z(z) => z.len(),
            Data::S(s) => s.len(),
        }
    }

    fn iter(&self) -> Box<dyn Iterator<Item = (&'a [u8], f64)> + 'a> {
        match self.data {
            Data::Missing => Box::new(std::iter::empty()),
            Data::Z(z) => Box::new(z.iter()),
            Data::S(s) => Box::new(s.iter().map(|m| (m, 1.0))),
        }
    }

    fn find(&self, m: &[u8]) -> Option<f64> {
        match self.data {
            Data::Missing => None,
            Data::Z(z) => z.score(m),
            Data::S(s) => s.contains(m).then_some(1.0),
        }
    }
}

fn weighted(w: f64, s: f64) -> f64 {
    let v = w * s;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

pub fn zunion(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, None, 1, Op::Union, false))
}

pub fn zinter(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, None, 1, Op::Inter, false))
}

pub fn zdiff(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, None, 1, Op::Diff, false))
}

pub fn zunionstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let dst = call.args[1].clone();
    Ok(generic(e, call, Some(dst), 2, Op::Union, false))
}

pub fn zinterstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let dst = call.args[1].clone();
    Ok(generic(e, call, Some(dst), 2, Op::Inter, false))
}

pub fn zdiffstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let dst = call.args[1].clone();
    Ok(generic(e, call, Some(dst), 2, Op::Diff, false))
}

pub fn zintercard(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(generic(e, call, None, 1, Op::Inter, true))
}

fn generic(
    e: &mut Engine,
    call: &mut Call,
    dst: Option<Bytes>,
    numkeys_idx: usize,
    op: Op,
    card_only: bool,
) -> Reply {
    let setnum = match args::int(call.arg(numkeys_idx)) {
        Ok(n) => n,
        Err(r) => return r,
    };
    if setnum < 1 {
        return Reply::err(errors::setop_no_keys(&args::lower(call.arg(0))));
    }
    if setnum as u64 > (call.argc() - numkeys_idx - 1) as u64 {
        return Reply::err(errors::SYNTAX);
    }
    let setnum = setnum as usize;
    let first = numkeys_idx + 1;
    let keys = &call.args[first..first + setnum];
    for k in keys {
        if let Some(entry) = e.db(call.db).get(k) {
            if !matches!(entry.value, Value::ZSet(_) | Value::Set(_)) {
                return Reply::err(errors::WRONGTYPE);
            }
        }
    }
    let mut weights = vec![1.0; setnum];
    let mut aggregate = Aggregate::Sum;
    let mut withscores = false;
    let mut limit: usize = 0;
    let mut j = first + setnum;
    while j < call.argc() {
        let remaining = call.argc() - j;
        let a = call.arg(j);
        if op != Op::Diff && !card_only && remaining > setnum && args::is(a, "weights") {
            for (i, w) in weights.iter_mut().enumerate() {
                *w = match parse::score(call.arg(j + 1 + i)) {
                    Some(v) => v,
                    None => return Reply::err(errors::WEIGHT_NOT_FLOAT),
                };
            }
            j += 1 + setnum;
        } else if op != Op::Diff && !card_only && remaining >= 2 && args::is(a, "aggregate") {
            let v = call.arg(j + 1);
            aggregate = if args::is(v, "sum") {
                Aggregate::Sum
            } else if args::is(v, "min") {
                Aggregate::Min
            } else if args::is(v, "max") {
                Aggregate::Max
            } else {
                return Reply::err(errors::SYNTAX);
            };
            j += 2;
        } else if dst.is_none() && !card_only && args::is(a, "withscores") {
            withscores = true;
            j += 1;
        } else if card_only && remaining >= 2 && args::is(a, "limit") {
            limit = match args::int(call.arg(j + 1)) {
                Ok(n) if n >= 0 => n as usize,
                _ => return Reply::err(errors::LIMIT_NEGATIVE),
            };
            j += 2;
        } else {
            return Reply::err(errors::SYNTAX);
        }
    }

    let db = e.db(call.db);
    let mut srcs: Vec<Src> = keys
        .iter()
        .zip(&weights)
        .map(|(k, &weight)| {
            let data = match db.get_shared(k).map(|en| &en.value) {
                Some(Value::ZSet(z)) => Data::Z(z),
                Some(Value::Set(s)) => Data::S(s),
                _ => Data::Missing,
            };
            Src { data, weight }
        })
        .collect();
    if op != Op::Diff {
        srcs.sort_by_key(|s| s.len());
    }

    let mut result = ZSet::new_unpacked();
    let mut cardinality = 0usize;
    match op {
        Op::Inter => {
            if srcs[0].len() > 0 {
                'outer: for (m, s) in srcs[0].iter() {
                    let mut score = weighted(srcs[0].weight, s);
                    for other in &srcs[1..] {
                        match other.find(m) {
                            // Unlike the first input's, these products are not
                            // cleaned: a NaN (0 * inf) is 0 only through SUM; MIN and
                            // MAX compare false with it and keep the score.
                            Some(v) => aggregate.apply(&mut score, other.weight * v),
                            None => continue 'outer,
                        }
                    }
                    if card_only {
                        cardinality += 1;
                        if limit > 0 && cardinality >= limit {
                            break;
                        }
                    } else {
                        result.push(m, score);
                    }
                }
            }
        }
        Op::Union => {
            let mut acc: HashMap<&[u8], f64, FixedState> = HashMap::default();
            for src in &srcs {
                for (m, s) in src.iter() {
                    let score = weighted(src.weight, s);
                    match acc.get_mut(m) {
                        Some(t) => aggregate.apply(t, score),
                        None => {
                            acc.insert(m, score);
                        }
                    }
                }
            }
            for (m, s) in acc {
                result.push(m, s);
            }
        }
        Op::Diff => {
            for (m, s) in srcs[0].iter() {
                if !srcs[1..].iter().any(|o| o.find(m).is_some()) {
                    result.push(m, s);
                }
            }
        }
    }
    drop(srcs);

    if card_only {
        return Reply::Int(cardinality as i64);
    }
    if let Some(dst) = dst {
        let event = match op {
            Op::Union => "zunionstore",
            Op::Inter => "zinterstore",
            Op::Diff => "zdiffstore",
        };
        return store(e, call.db, &dst, result, event);
    }
    scored_reply(call.resp, result.iter(), withscores)
}
