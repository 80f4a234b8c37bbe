//! XADD, XTRIM, XDEL, XLEN, XSETID: what changes a stream's entries and its metadata.

use crate::cmd::lookup::{lookup, lookup_mut};
use bytes::Bytes;

use super::{id_reply, node_limits, parse_id, parse_id_ext, IdForm};
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::compat::since;
use crate::db::stream::{Refs, Stream, StreamId, Trim};
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// What XADD and XTRIM share: the trimming options, and for XADD the ID and NOMKSTREAM.
#[derive(Default)]
struct AddArgs {
    trim: Option<Trim>,
    approx: bool,
    limit: u64,
    /// The ID argument, and whether its sequence part was given (`ms-*` leaves it out).
    id: Option<(StreamId, bool)>,
    no_mkstream: bool,
    /// KEEPREF / DELREF / ACKED (Redis 8.2); KEEPREF, 7.0's way, when not given.
    refs: Refs,
    /// Index of the first field (XADD).
    next: usize,
}

/// Parses the options as Redis's streamParseAddOrTrimArgsOrReply, in its order.
fn parse_add_or_trim(e: &Engine, args: &[Bytes], xadd: bool) -> Result<AddArgs, Reply> {
    let mut a = AddArgs::default();
    let mut limit: Option<i64> = None;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i][..];
        if xadd && opt == b"*" {
            break;
        } else if (args::is(opt, "maxlen") || args::is(opt, "minid")) && more > 0 {
            if a.trim.is_some() {
                return Err(Reply::err(errors::XADD_BOTH_STRATEGIES));
            }
            a.approx = false;
            let next = &args[i + 1][..];
            if more >= 2 && next == b"~" {
                a.approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let value = &args[i + 1][..];
            if args::is(opt, "maxlen") {
                let n = args::int(value)?;
                if n < 0 {
                    return Err(Reply::err(crate::errors::THE_MAXLEN_ARGUMENT_MUST_BE_0));
                }
                a.trim = Some(Trim::MaxLen(n as u64));
            } else {
                a.trim = Some(Trim::MinId(parse_id(value, 0, IdForm::Strict)?));
            }
            i += 1;
        } else if args::is(opt, "limit") && more > 0 {
            let n = args::int(&args[i + 1])?;
            if n < 0 {
                return Err(Reply::err(crate::errors::THE_LIMIT_ARGUMENT_MUST_BE_0));
            }
            limit = Some(n);
            i += 1;
        } else if xadd && args::is(opt, "nomkstream") {
            a.no_mkstream = true;
        } else if let Some(refs) = ref_option(e, opt, xadd) {
            a.refs = refs;
        } else if xadd {
            a.id = Some(parse_id_ext(opt, 0, IdForm::Strict, true)?);
            break;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 1;
    }
    a.next = i + 1;
    if limit.is_some_and(|l| l != 0) && a.trim.is_none() {
        return Err(Reply::err(crate::errors::SYNTAX_ERROR_LIMIT_CANNOT_BE_USED));
    }
    if !xadd && a.trim.is_none() {
        return Err(Reply::err(crate::errors::SYNTAX_ERROR_XTRIM_MUST_BE_CALLED));
    }
    match limit {
        Some(_) if !a.approx => {
            return Err(Reply::err(
                crate::errors::SYNTAX_ERROR_LIMIT_CANNOT_BE_USED_2,
            ))
        }
        Some(l) => a.limit = l as u64,
        None if a.approx => {
            let (max_entries, _) = node_limits(e);
            let l = max_entries.saturating_mul(100);
            a.limit = if l == 0 || l > 1_000_000 { 10_000 } else { l };
        }
        None => a.limit = 0,
    }
    Ok(a)
}

/// KEEPREF, DELREF or ACKED in XADD's or XTRIM's options, when the profile has them
/// (Redis 8.2); an older profile reads the word as XADD's ID or XTRIM's unknown option, and
/// the report records it. The last one given wins.
fn ref_option(e: &Engine, opt: &[u8], xadd: bool) -> Option<Refs> {
    let refs = Refs::parse(opt)?;
    let what = format!(
        "{} {}",
        if xadd { "xadd" } else { "xtrim" },
        String::from_utf8_lossy(opt).to_ascii_uppercase()
    );
    e.has_option(since::STREAM_REF_OPTIONS, &what)
        .then_some(refs)
}

/// `XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...`
pub(super) fn xadd(e: &mut Engine, call: &mut Call) -> CmdResult {
    let a = parse_add_or_trim(e, &call.args, true)?;
    let nargs = call.argc().saturating_sub(a.next);
    if nargs < 2 || nargs % 2 == 1 {
        return Err(Reply::err(errors::wrong_arity("xadd")));
    }
    if let Some((id, true)) = a.id {
        if id.is_zero() {
            return Err(Reply::err(crate::errors::THE_ID_SPECIFIED_IN_XADD_MUST));
        }
    }
    let key = call.args[1].clone();
    let db = call.db;
    let exists = lookup::<Stream>(e, db, &key)?.is_some();
    if !exists {
        if a.no_mkstream {
            return Ok(Reply::Nil);
        }
        e.db(db).set(&key, Value::Stream(Box::new(Stream::new())));
    }
    let now = e.now_ms;
    let (max_entries, max_bytes) = node_limits(e);
    let s = lookup_mut::<Stream>(e, db, &key)?.expect("exists");
    if s.last_id == StreamId::MAX {
        return Err(Reply::err(crate::errors::THE_STREAM_HAS_EXHAUSTED_THE_LAST));
    }
    let id = match a.id {
        None => {
            let ms = now.max(0) as u64;
            if ms > s.last_id.ms {
                StreamId::new(ms, 0)
            } else {
                // The clock is at or behind the last ID: continue its sequence.
                s.last_id.incr().expect("not the last ID")
            }
        }
        Some((id, seq_given)) => {
            let id = if seq_given {
                id
            } else if id.ms == s.last_id.ms {
                match s.last_id.incr() {
                    Some(next) if next.ms == id.ms => next,
                    // Redis fails here without setting errno to EDOM, so it gives the
                    // other error text.
                    _ => return Err(Reply::err(crate::errors::ELEMENTS_ARE_TOO_LARGE_TO_BE)),
                }
            } else {
                id
            };
            if id <= s.last_id {
                return Err(equal_or_smaller());
            }
            id
        }
    };
    let fields: Vec<(&[u8], &[u8])> = call.args[a.next..]
        .chunks_exact(2)
        .map(|p| (&p[0][..], &p[1][..]))
        .collect();
    s.append(id, &fields, max_entries, max_bytes);
    let trimmed = match a.trim {
        Some(t) => s.trim_with(t, a.approx, a.limit, a.refs),
        None => 0,
    };
    e.modified(db, &key, notify::STREAM, "xadd");
    if trimmed > 0 {
        notify::keyspace_event(e, notify::STREAM, "xtrim", db, &key);
    }
    e.signal_ready(db, &key);
    Ok(id_reply(id))
}

fn equal_or_smaller() -> Reply {
    Reply::err(crate::errors::THE_ID_SPECIFIED_IN_XADD_IS)
}

/// `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count] [KEEPREF|DELREF|ACKED]`
pub(super) fn xtrim(e: &mut Engine, call: &mut Call) -> CmdResult {
    let a = parse_add_or_trim(e, &call.args, false)?;
    let db = call.db;
    let key = call.args[1].clone();
    let Some(s) = lookup_mut::<Stream>(e, db, &key)? else {
        return Ok(Reply::Int(0));
    };
    let deleted = s.trim_with(a.trim.expect("checked"), a.approx, a.limit, a.refs);
    if deleted > 0 {
        notify::keyspace_event(e, notify::STREAM, "xtrim", db, &key);
        e.touch_watched(db, &key);
        e.dirty += deleted;
    }
    Ok(Reply::Int(deleted as i64))
}

/// `XDEL key id [id ...]`: the key is looked up before the IDs are checked.
pub(super) fn xdel(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = call.db;
    let key = call.args[1].clone();
    if lookup::<Stream>(e, db, &key)?.is_none() {
        return Ok(Reply::Int(0));
    }
    let ids = call.args[2..]
        .iter()
        .map(|a| parse_id(a, 0, IdForm::Strict))
        .collect::<Result<Vec<_>, _>>()?;
    let s = lookup_mut::<Stream>(e, db, &key)?.expect("checked");
    let deleted = ids.into_iter().filter(|id| s.delete(*id)).count() as u64;
    if deleted > 0 {
        e.modified(db, &key, notify::STREAM, "xdel");
        e.dirty += deleted - 1;
    }
    Ok(Reply::Int(deleted as i64))
}

/// `XLEN key`
pub(super) fn xlen(e: &mut Engine, call: &mut Call) -> CmdResult {
    let n = lookup::<Stream>(e, call.db, &call.args[1])?.map_or(0, |s| s.len());
    Ok(Reply::Int(n as i64))
}

/// `XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]`
pub(super) fn xsetid(e: &mut Engine, call: &mut Call) -> CmdResult {
    let id = parse_id(call.arg(2), 0, IdForm::Strict)?;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < call.argc() {
        let more = call.argc() - 1 - i;
        let opt = call.arg(i);
        if args::is(opt, "entriesadded") && more > 0 {
            let n = args::int(call.arg(i + 1))?;
            if n < 0 {
                return Err(Reply::err(crate::errors::ENTRIES_ADDED_MUST_BE_POSITIVE));
            }
            entries_added = Some(n as u64);
        } else if args::is(opt, "maxdeletedid") && more > 0 {
            max_deleted = parse_id(call.arg(i + 1), 0, IdForm::Strict)?;
            if id < max_deleted {
                return Err(Reply::err(crate::errors::THE_ID_SPECIFIED_IN_XSETID_IS));
            }
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 2;
    }
    let db = call.db;
    let key = call.args[1].clone();
    let Some(s) = lookup_mut::<Stream>(e, db, &key)? else {
        return Err(Reply::err(errors::NO_SUCH_KEY));
    };
    if !s.is_empty() {
        if id < s.last_valid_id() {
            return Err(Reply::err(crate::errors::THE_ID_SPECIFIED_IN_XSETID_IS_2));
        }
        if entries_added.is_some_and(|n| s.len() > n) {
            return Err(Reply::err(
                crate::errors::THE_ENTRIES_ADDED_SPECIFIED_IN_XSETID,
            ));
        }
    }
    s.last_id = id;
    if let Some(n) = entries_added {
        s.entries_added = n;
    }
    if !max_deleted.is_zero() {
        s.max_deleted_id = max_deleted;
    }
    e.modified(db, &key, notify::STREAM, "xsetid");
    Ok(Reply::ok())
}
