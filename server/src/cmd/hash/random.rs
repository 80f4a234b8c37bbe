//! HRANDFIELD.

use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::cmd::random_picks::{parse_count, picks, Picks};
use crate::cmd::table::CmdResult;
use crate::db::HashValue;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::{self, Reply};

/// HRANDFIELD key [count [WITHVALUES]]. With a count the reply is an array: all fields in
/// order when count >= the size, distinct fields (in hash order) for a smaller positive
/// count, and |count| fields with repeats for a negative one. With WITHVALUES, RESP3 nests
/// each field/value pair in an array of its own; RESP2 flattens them.
pub(super) fn hrandfield(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() == 2 {
        return Ok(match lookup::<HashValue>(e, call.db, call.arg(1))? {
            None => Reply::Nil,
            Some(h) => {
                let len = h.len();
                let i = e.rng.below(len);
                match lookup::<HashValue>(e, call.db, call.arg(1)) {
                    Ok(Some(h)) => Reply::opt_bulk(h.keys().nth(i)),
                    _ => Reply::Nil,
                }
            }
        });
    }
    let count = parse_count(call.arg(2))?;
    let withvalues = match call.argc() {
        3 => false,
        4 if args::is(call.arg(3), "withvalues") => true,
        _ => return Err(Reply::err(errors::SYNTAX)),
    };
    if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return Err(Reply::err(errors::VALUE_OUT_OF_RANGE));
    }
    let resp3 = call.resp >= 3;
    let len = match lookup::<HashValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Array(Vec::new())),
        Some(h) => h.len(),
    };
    let picks = picks(e, call, len, count)?;
    let Ok(Some(h)) = lookup::<HashValue>(e, call.db, call.arg(1)) else {
        return Ok(Reply::Array(Vec::new()));
    };
    // Walked once: a packed hash has no index, and a negative count may pick many times.
    let pairs: Vec<(&[u8], &[u8])> = h.iter().collect();
    let picks = match picks {
        Picks::Chosen(p) => p,
        Picks::Drawn(mut draws) => {
            let items = draws.count() * if withvalues && !resp3 { 2 } else { 1 };
            draws.run(items, |i, out| {
                let Some(&(k, v)) = pairs.get(i) else {
                    return;
                };
                if withvalues && resp3 {
                    reply::put_array_len(out, 2);
                }
                reply::put_bulk(out, k);
                if withvalues {
                    reply::put_bulk(out, v);
                }
            });
            return draws.finish(e, call.conn);
        }
    };
    let mut out = Vec::with_capacity(picks.len() * if withvalues && !resp3 { 2 } else { 1 });
    for i in picks {
        let Some(&(k, v)) = pairs.get(i) else {
            continue;
        };
        match (withvalues, resp3) {
            (false, _) => out.push(Reply::bulk(k)),
            (true, true) => out.push(Reply::Array(vec![Reply::bulk(k), Reply::bulk(v)])),
            (true, false) => {
                out.push(Reply::bulk(k));
                out.push(Reply::bulk(v));
            }
        }
    }
    Ok(Reply::Array(out))
}
