//! APPEND, STRLEN, SETRANGE and GETRANGE/SUBSTR: byte-level access to a string.

use super::{check_string_length, lookup_str_for_update};
use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::StrValue;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

pub(super) fn append(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (key, tail) = (call.arg(1), call.arg(2));
    let max = e.config.proto_max_bulk_len;
    let len = match lookup_str_for_update(e, call.db, key)? {
        None => {
            e.db(call.db).set(key, Value::Str(tail.into()));
            tail.len()
        }
        Some(s) => {
            if (s.len() as u64).saturating_add(tail.len() as u64) > max {
                return Err(Reply::err(errors::STRING_TOO_LONG));
            }
            s.extend_from_slice(tail);
            s.len()
        }
    };
    e.modified(call.db, key, notify::STRING, "append");
    Ok(Reply::Int(len as i64))
}

pub(super) fn strlen(e: &mut Engine, call: &mut Call) -> CmdResult {
    let v = lookup::<StrValue>(e, call.db, call.arg(1))?;
    Ok(Reply::Int(v.map_or(0, |s| s.len() as i64)))
}

/// SETRANGE: overwrites from `offset`, zero-padding a shorter string. An empty value changes
/// nothing (and creates no key); the result may not pass proto-max-bulk-len.
pub(super) fn setrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let offset = match args::int(call.arg(2))? {
        n if n < 0 => return Err(Reply::err(errors::OFFSET_OUT_OF_RANGE)),
        n => n as u64,
    };
    let value = call.arg(3);
    let exists = lookup::<StrValue>(e, call.db, key)?.map(|s| s.len());
    if value.is_empty() {
        return Ok(Reply::Int(exists.unwrap_or(0) as i64));
    }
    check_string_length(e, offset, value.len() as u64)?;
    // Within proto-max-bulk-len, so it fits in memory the way Redis allows.
    let offset = offset as usize;
    let end = offset + value.len();
    let new_len = match lookup_str_for_update(e, call.db, key) {
        Ok(Some(s)) => {
            if s.len() < end {
                s.resize(end, 0);
            }
            s[offset..end].copy_from_slice(value);
            s.len()
        }
        _ => {
            let mut s = vec![0u8; end];
            s[offset..].copy_from_slice(value);
            e.db(call.db).set(key, Value::Str(s.into()));
            e.db(call.db).mark_raw(key);
            end
        }
    };
    e.modified(call.db, key, notify::STRING, "setrange");
    Ok(Reply::Int(new_len as i64))
}

/// GETRANGE (and its old name SUBSTR): inclusive range, negative indexes from the end.
pub(super) fn getrange(e: &mut Engine, call: &mut Call) -> CmdResult {
    let start = args::int(call.arg(2))?;
    let end = args::int(call.arg(3))?;
    let s = match lookup::<StrValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::bulk(b"")),
        Some(s) => s,
    };
    Ok(match byte_range(s.len() as i64, start, end) {
        Some((a, b)) => Reply::bulk(&s[a..=b]),
        None => Reply::bulk(b""),
    })
}

/// Redis's index arithmetic for GETRANGE: the inclusive byte range, or None when empty.
fn byte_range(len: i64, mut start: i64, mut end: i64) -> Option<(usize, usize)> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return None;
    }
    Some((start as usize, end as usize))
}
