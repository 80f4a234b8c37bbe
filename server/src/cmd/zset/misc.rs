//! ZRANDMEMBER and ZSCAN.

use super::{args, push_member};
use crate::cmd::lookup::lookup;
use crate::cmd::random_picks::{picks, Picks, MAX_PICKS};
use crate::cmd::table::CmdResult;
use crate::db::{scan, Db, ZSet};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::{self, Reply};

pub fn zrandmember(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() >= 3 {
        let l = match args::int(call.arg(2))? {
            i64::MIN => return Err(Reply::err(crate::errors::COUNT_NOT_IN_LONG_RANGE)),
            n => n,
        };
        if call.argc() > 4 || (call.argc() == 4 && !args::is(call.arg(3), "withscores")) {
            return Err(Reply::err(errors::SYNTAX));
        }
        let withscores = call.argc() == 4;
        if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
            return Err(Reply::err(errors::VALUE_OUT_OF_RANGE));
        }
        let len = match lookup::<ZSet>(e, call.db, call.arg(1))? {
            None => return Ok(Reply::Array(Vec::new())),
            Some(z) => z.len(),
        };
        let ranks = picks(e, call, len, l)?;
        let Ok(Some(z)) = lookup::<ZSet>(e, call.db, call.arg(1)) else {
            return Ok(Reply::Array(Vec::new()));
        };
        let ranks = match ranks {
            Picks::Chosen(r) => r,
            Picks::Drawn(mut draws) => {
                let resp = call.resp;
                let items = draws.count() * if withscores && resp < 3 { 2 } else { 1 };
                draws.run(items, |r, out| {
                    let Some((m, s)) = z.get_by_rank(r) else {
                        return;
                    };
                    if withscores && resp >= 3 {
                        reply::put_array_len(out, 2);
                    }
                    reply::put_bulk(out, m);
                    if withscores {
                        Reply::Double(s).encode(resp, out);
                    }
                });
                return draws.finish(e, call.conn);
            }
        };
        return Ok(with_count(z, l, ranks, withscores, call.resp));
    }
    let len = match lookup::<ZSet>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Nil),
        Some(z) => z.len(),
    };
    let rank = e.rng.below(len);
    Ok(match lookup::<ZSet>(e, call.db, call.arg(1)) {
        Ok(Some(z)) => match z.get_by_rank(rank) {
            Some((m, _)) => Reply::bulk(m),
            None => Reply::Nil,
        },
        _ => Reply::Nil,
    })
}

/// The reply for `ranks` (from `picks`): Redis answers a count covering the whole set from
/// the tail of its listpack, so that case comes out highest rank first.
fn with_count(z: &ZSet, l: i64, ranks: Vec<usize>, withscores: bool, resp: u8) -> Reply {
    debug_assert!(ranks.len() as u64 <= MAX_PICKS.max(z.len() as u64));
    let mut out = Vec::with_capacity(ranks.len() * if withscores && resp < 3 { 2 } else { 1 });
    if l > 0 && l as u64 >= z.len() as u64 {
        for (m, s) in z.iter().rev() {
            push_member(&mut out, resp, m, s, withscores);
        }
        return Reply::Array(out);
    }
    for r in ranks {
        if let Some((m, s)) = z.get_by_rank(r) {
            push_member(&mut out, resp, m, s, withscores);
        }
    }
    Reply::Array(out)
}

pub fn zscan(e: &mut Engine, call: &mut Call) -> CmdResult {
    let cursor = scan::parse_cursor_in(e.profile(), call.arg(2))?;
    // Option errors come after the key's (as HSCAN's).
    let opts = crate::cmd::args::scan_options(e, &call.args[3..], scan::Scanned::ZSet);
    let z = match lookup::<ZSet>(e, call.db, call.arg(1))? {
        None => {
            return Ok(Reply::Array(vec![
                Reply::bulk("0"),
                Reply::Array(Vec::new()),
            ]))
        }
        Some(z) => z,
    };
    let opts = opts?;
    let matches = |m: &[u8]| opts.matches(m);
    let mut items = Vec::new();
    let mut next = 0u64;
    if z.is_listpack() {
        // Redis returns a small set whole, in order, whatever the cursor.
        for (m, s) in z.iter() {
            if matches(m) {
                items.push(Reply::bulk(m));
                if !opts.noscores {
                    items.push(Reply::bulk(numfmt::format_double(s)));
                }
            }
        }
    } else {
        // Redis's reverse-binary bucket cursor, over a virtual table (see `db::scan`).
        let (found, after) = scan::step(
            z.iter().map(|(m, s)| (Db::key_hash(m), (m, s))),
            cursor,
            opts.count,
        );
        next = after;
        for (m, s) in found {
            if matches(m) {
                items.push(Reply::bulk(m));
                if !opts.noscores {
                    items.push(Reply::bulk(numfmt::format_double(s)));
                }
            }
        }
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(items),
    ]))
}
