//! The patterns users bring to redlab, each a typed API over one reviewed script in
//! `scripts/`. Every result separates a business outcome (limited, stale, not the owner)
//! from invalid input (`Error::Invalid`) and from Redis or connection errors.

pub mod limiter;
pub mod lock;
pub mod max;
pub mod stream;
pub mod versioned;

use crate::error::{Error, Result};
use crate::value::Value;

/// Reads a script's `{status, ...}` reply; status 2 is the scripts' "invalid input".
pub(crate) fn status_reply(v: &Value) -> Result<(i64, &[Value])> {
    let items = v
        .as_array()
        .ok_or_else(|| Error::Protocol(format!("expected an array, got {:?}", v)))?;
    let status = items
        .first()
        .and_then(Value::as_int)
        .ok_or_else(|| Error::Protocol(format!("no status in {:?}", v)))?;
    if status == 2 {
        let reason = items.get(1).and_then(Value::as_str).unwrap_or("invalid");
        return Err(Error::Invalid(reason.to_string()));
    }
    Ok((status, &items[1..]))
}

pub(crate) fn int_at(items: &[Value], i: usize) -> Result<i64> {
    items
        .get(i)
        .and_then(Value::as_int)
        .ok_or_else(|| Error::Protocol(format!("expected an integer at {} in {:?}", i, items)))
}
