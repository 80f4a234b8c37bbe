//! MSETEX (Redis 8.4): MSET with SET's NX/XX and one expiration for every key. Written from
//! the 8.4 command reference and Redis's own tests of it; no 8.4 server here.

use super::get_set::{deadline, parse_opts, store};
use crate::cmd::table::CmdResult;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// `MSETEX numkeys key value [key value ...] [NX | XX] [EX s | PX ms | EXAT t | PXAT t |
/// KEEPTTL]`: 1 when every pair was set, 0 when NX or XX held them all back. The options
/// follow the pairs in any order, with SET's rules (NX with XX, KEEPTTL with an expiration,
/// two kinds of expiration are syntax errors); GET and the IF* conditions are not options
/// here.
pub(super) fn msetex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let numkeys = crate::numfmt::parse_i64(call.arg(1))
        .filter(|n| (1..=i32::MAX as i64).contains(n))
        .ok_or_else(|| Reply::err(errors::MSETEX_NUMKEYS))?;
    let pairs_end = 2 + 2 * numkeys as usize;
    if pairs_end > call.argc() {
        return Err(Reply::err(errors::MSETEX_PAIRS));
    }
    let o = parse_opts(&call.args, pairs_end, true)?;
    if o.has_get_or_condition() {
        return Err(Reply::err(errors::SYNTAX));
    }
    let when = match o.expire {
        Some((kind, arg)) => Some(deadline(arg, kind, e.now_ms, "msetex")?),
        None => None,
    };
    let db = call.db;
    let pairs = &call.args[2..pairs_end];
    if o.nx || o.xx {
        let d = e.db(db);
        let held_back = if o.nx {
            pairs.iter().step_by(2).any(|k| d.contains(k))
        } else {
            !pairs.iter().step_by(2).all(|k| d.contains(k))
        };
        if held_back {
            return Ok(Reply::Int(0));
        }
    }
    for pair in pairs.chunks_exact(2) {
        store(
            e,
            db,
            &pair[0],
            Value::Str(pair[1][..].into()),
            o.keepttl,
            when,
        );
    }
    Ok(Reply::Int(1))
}
