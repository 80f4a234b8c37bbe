//! HRANDFIELD, and the random picking SRANDMEMBER and SPOP share.

use super::hash_ref;
use crate::cmd::args;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;

/// The most picks a negative count may ask for. Redis would try to send any number and run
/// out of memory; past this we answer "value is out of range" instead.
pub(crate) const MAX_REPEATED_PICKS: u64 = 1 << 22;

/// A count parsed as Redis's `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)`.
pub(crate) fn parse_count(arg: &[u8]) -> Result<i64, Reply> {
    match numfmt::parse_i64(arg) {
        None => Err(Reply::err(errors::NOT_INTEGER)),
        Some(i64::MIN) => Err(Reply::err(errors::COUNT_NOT_IN_LONG_RANGE)),
        Some(n) => Ok(n),
    }
}

/// `n` uniformly random indices below `len` (len > 0), repeats allowed.
pub(crate) fn random_indices(len: usize, n: usize) -> Vec<usize> {
    (0..n).map(|_| rand::random_range(0..len)).collect()
}

/// `n` distinct random indices below `len` (n <= len), in ascending order.
pub(crate) fn distinct_indices(len: usize, n: usize) -> Vec<usize> {
    let mut idx = rand::seq::index::sample(&mut rand::rng(), len, n).into_vec();
    idx.sort_unstable();
    idx
}

/// HRANDFIELD key [count [WITHVALUES]]. With a count the reply is an array: all fields in
/// order when count >= the size, distinct fields (in hash order) for a smaller positive
/// count, and |count| fields with repeats for a negative one. With WITHVALUES, RESP3 nests
/// each field/value pair in an array of its own; RESP2 flattens them.
pub(super) fn hrandfield(e: &mut Engine, call: &mut Call) -> Reply {
    if call.argc() == 2 {
        return match hash_ref(e, call.db, call.arg(1)) {
            Err(r) => r,
            Ok(None) => Reply::Nil,
            Ok(Some(h)) => {
                let i = rand::random_range(0..h.len());
                Reply::opt_bulk(h.get_index(i).map(|(k, _)| k))
            }
        };
    }
    let count = match parse_count(call.arg(2)) {
        Ok(n) => n,
        Err(r) => return r,
    };
    let withvalues = match call.argc() {
        3 => false,
        4 if args::is(call.arg(3), "withvalues") => true,
        _ => return Reply::err(errors::SYNTAX),
    };
    if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return Reply::err(errors::VALUE_OUT_OF_RANGE);
    }
    if count < 0 && count.unsigned_abs() > MAX_REPEATED_PICKS {
        return Reply::err(errors::VALUE_OUT_OF_RANGE);
    }
    let resp3 = call.resp >= 3;
    let h = match hash_ref(e, call.db, call.arg(1)) {
        Err(r) => return r,
        Ok(None) => return Reply::Array(Vec::new()),
        Ok(Some(h)) => h,
    };
    let picks: Vec<usize> = if count >= 0 && count as u64 >= h.len() as u64 {
        (0..h.len()).collect()
    } else if count >= 0 {
        distinct_indices(h.len(), count as usize)
    } else {
        random_indices(h.len(), count.unsigned_abs() as usize)
    };
    let mut out = Vec::with_capacity(picks.len() * if withvalues && !resp3 { 2 } else { 1 });
    for i in picks {
        let Some((k, v)) = h.get_index(i) else { continue };
        match (withvalues, resp3) {
            (false, _) => out.push(Reply::bulk(k)),
            (true, true) => out.push(Reply::Array(vec![Reply::bulk(k), Reply::bulk(v)])),
            (true, false) => {
                out.push(Reply::bulk(k));
                out.push(Reply::bulk(v));
            }
        }
    }
    Reply::Array(out)
}
