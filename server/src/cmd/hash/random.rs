//! HRANDFIELD, and the count rules SRANDMEMBER and ZRANDMEMBER share.

use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::HashValue;

use crate::cmd::args;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;

/// The most elements a random-member reply may hold. Redis streams a reply of any length,
/// so an absurd negative count (say -10^12) keeps it busy until it runs out of memory;
/// redlab builds a reply in memory before sending it and refuses such a count up front with
/// `too_many_picks` instead. Any count up to this many is answered exactly.
pub(crate) const MAX_PICKS: u64 = 1 << 24;

/// The error for a count past `MAX_PICKS` (checked after the key's type, as Redis checks
/// WRONGTYPE before it starts producing elements).
pub(crate) fn too_many_picks() -> Reply {
    Reply::err(errors::too_many_picks(MAX_PICKS))
}

/// A count parsed as Redis's `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)`.
pub(crate) fn parse_count(arg: &[u8]) -> Result<i64, Reply> {
    match numfmt::parse_i64(arg) {
        None => Err(Reply::err(errors::NOT_INTEGER)),
        Some(i64::MIN) => Err(Reply::err(errors::COUNT_NOT_IN_LONG_RANGE)),
        Some(n) => Ok(n),
    }
}

/// Which elements a count picks from a collection of `len` (> 0): all of them in order when
/// count >= len, distinct ones (in collection order) for a smaller positive count, |count|
/// with repeats for a negative one. Errors when the reply would pass `MAX_PICKS`.
pub(crate) fn picks(e: &mut Engine, len: usize, count: i64) -> Result<Vec<usize>, Reply> {
    if count >= 0 && count as u64 >= len as u64 {
        return Ok((0..len).collect());
    }
    if count.unsigned_abs() > MAX_PICKS {
        return Err(too_many_picks());
    }
    Ok(if count >= 0 {
        e.rng.distinct(len, count as usize)
    } else {
        e.rng.indices(len, count.unsigned_abs() as usize)
    })
}

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
    let picks = picks(e, len, count)?;
    let Ok(Some(h)) = lookup::<HashValue>(e, call.db, call.arg(1)) else {
        return Ok(Reply::Array(Vec::new()));
    };
    // Walked once: a packed hash has no index, and a negative count may pick many times.
    let pairs: Vec<(&[u8], &[u8])> = h.iter().collect();
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
