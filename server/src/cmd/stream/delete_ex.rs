//! Redis 8.2's XDELEX and XACKDEL: XDEL, and XACK followed by XDEL, with a policy for the
//! consumer groups' references to the entries (`db::stream::refs`). Written from the 8.2
//! command reference and Redis's own tests of the commands; no 8.2 server here.

use bytes::Bytes;

use super::{parse_id, IdForm};
use crate::cmd::lookup::{lookup, lookup_mut};
use crate::cmd::table::CmdResult;
use crate::db::stream::{refs, Refs, Stream, StreamId};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// `[KEEPREF | DELREF | ACKED] IDS numids id [id ...]`, in any order from `from`: the
/// policy (KEEPREF when none) and the IDs. A second policy, a word that is neither, or IDs
/// past `numids` are syntax errors.
fn parse_tail(args: &[Bytes], from: usize) -> Result<(Refs, Vec<StreamId>), Reply> {
    let mut policy = None;
    let mut ids: Option<&[Bytes]> = None;
    let mut i = from;
    while i < args.len() {
        let word = &args[i][..];
        if let (Some(r), None) = (Refs::parse(word), policy) {
            policy = Some(r);
            i += 1;
        } else if word.eq_ignore_ascii_case(b"ids") && i + 1 < args.len() {
            let n = crate::numfmt::parse_i64(&args[i + 1])
                .filter(|&n| n > 0)
                .ok_or_else(|| Reply::err(errors::STREAM_NUMIDS_NOT_POSITIVE))?;
            let start = i + 2;
            if n as u64 > (args.len() - start) as u64 {
                return Err(Reply::err(errors::STREAM_NUMIDS_MISMATCH));
            }
            let end = start + n as usize;
            ids = Some(&args[start..end]);
            i = end;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    // The arity leaves no line without IDS that gets here (every word after the key would
    // have to be a policy, and a second one is refused above); kept for safety.
    let ids = ids.ok_or_else(|| Reply::err(errors::SYNTAX))?;
    let ids = ids
        .iter()
        .map(|a| parse_id(a, 0, IdForm::Strict))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((policy.unwrap_or_default(), ids))
}

/// Every ID answered "not found": a missing key, or XACKDEL's missing group.
fn all_not_found(n: usize) -> Reply {
    Reply::Array(vec![Reply::Int(refs::NOT_FOUND); n])
}

fn codes_reply(codes: &[i64]) -> Reply {
    Reply::Array(codes.iter().map(|&c| Reply::Int(c)).collect())
}

/// After the deletions: the `xdel` event and WATCH, once, if `n` entries left the stream.
fn deleted(e: &mut Engine, db: usize, key: &[u8], n: usize, acked: usize) {
    if n > 0 {
        e.modified(db, key, notify::STREAM, "xdel");
    }
    e.dirty += (n + acked) as u64;
}

/// `XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]`: per ID, 1 deleted, -1
/// not in the stream, 2 kept because a group still references it (ACKED).
pub(super) fn xdelex(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (policy, ids) = parse_tail(&call.args, 2)?;
    let db = call.db;
    let key = call.args[1].clone();
    if lookup::<Stream>(e, db, &key)?.is_none() {
        return Ok(all_not_found(ids.len()));
    }
    let s = lookup_mut::<Stream>(e, db, &key)?.expect("checked");
    let codes: Vec<i64> = ids.iter().map(|&id| s.delete_with(id, policy)).collect();
    let n = codes.iter().filter(|&&c| c == refs::DELETED).count();
    deleted(e, db, &key, n, 0);
    Ok(codes_reply(&codes))
}

/// `XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]`: per ID, -1 when
/// it was not pending in the group (nothing else is done for it), else it is acknowledged
/// and deleted under the policy: 1, or 2 when ACKED keeps it for another group. An entry
/// acknowledged here but already gone from the stream answers 1.
pub(super) fn xackdel(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (policy, ids) = parse_tail(&call.args, 3)?;
    let db = call.db;
    let key = call.args[1].clone();
    let group = call.args[2].clone();
    let Some(s) = lookup_mut::<Stream>(e, db, &key)? else {
        return Ok(all_not_found(ids.len()));
    };
    if !s.groups.contains_key(&group[..]) {
        return Ok(all_not_found(ids.len()));
    }
    let (mut acked, mut removed) = (0, 0);
    let codes: Vec<i64> = ids
        .iter()
        .map(|&id| {
            let g = s.groups.get_mut(&group[..]).expect("checked");
            if !g.ack(id) {
                return refs::NOT_FOUND;
            }
            acked += 1;
            match s.delete_with(id, policy) {
                refs::STILL_REFERENCED => refs::STILL_REFERENCED,
                refs::DELETED => {
                    removed += 1;
                    refs::DELETED
                }
                // Acknowledged; the entry had left the stream before.
                _ => refs::DELETED,
            }
        })
        .collect();
    deleted(e, db, &key, removed, acked);
    Ok(codes_reply(&codes))
}
