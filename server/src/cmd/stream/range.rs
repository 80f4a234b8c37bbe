//! XRANGE and XREVRANGE: `-` and `+`, exclusive `(` bounds, COUNT.

use super::{parse_bound, range_reply};
use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::stream::Stream;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

pub(super) fn xrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    range(e, call, false)
}

pub(super) fn xrevrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    range(e, call, true)
}

/// Bounds are parsed (start, then end) before COUNT, and COUNT before the key lookup.
fn range(e: &mut Engine, call: &mut Call, rev: bool) -> CmdResult {
    let (start_arg, end_arg) = if rev { (3, 2) } else { (2, 3) };
    let (mut start, ex) = parse_bound(call.arg(start_arg), 0)?;
    if ex {
        start = start
            .incr()
            .ok_or_else(|| Reply::err(crate::errors::INVALID_START_ID_FOR_THE_INTERVAL))?;
    }
    let (mut end, ex) = parse_bound(call.arg(end_arg), u64::MAX)?;
    if ex {
        end = end
            .decr()
            .ok_or_else(|| Reply::err(crate::errors::INVALID_END_ID_FOR_THE_INTERVAL))?;
    }
    let mut count: i64 = -1;
    let mut j = 4;
    while j < call.argc() {
        if args::is(call.arg(j), "count") && j + 1 < call.argc() {
            count = args::int(call.arg(j + 1))?.max(0);
            j += 2;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    let Some(s) = lookup::<Stream>(e, call.db, &call.args[1])? else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count == 0 {
        return Ok(Reply::NilArray);
    }
    let count = if count < 0 { 0 } else { count as usize };
    Ok(range_reply(s, start, end, count, rev))
}
