//! DUMP and RESTORE: a value as Redis's serialized payload (see `db::rdb`).

use super::signal_if_blocking_type;
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::db::access::{Access, Hint};
use crate::db::rdb::{self, RestoreError};
use crate::db::Entry;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// DUMP key. A hash's field deadlines (Redis 7.4) go into the payload with it.
pub fn dump(e: &mut Engine, call: &mut Call) -> CmdResult {
    let limits = e.encoding_limits();
    let version = e.profile().rdb_version();
    let deadlines = e
        .hash_ttl
        .map
        .get(&(call.db, call.arg(1).to_vec()))
        .cloned();
    Ok(match e.db(call.db).get(call.arg(1)) {
        Some(en) => {
            let payload = rdb::dump_with_field_ttls(&en.value, &limits, deadlines.as_ref());
            Reply::bulk(match version {
                rdb::RDB_VERSION => payload,
                v => rdb::restamp(payload, v),
            })
        }
        None => Reply::Nil,
    })
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
pub fn restore(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (mut replace, mut absttl) = (false, false);
    let mut idle: Option<i64> = None;
    let mut freq: Option<i64> = None;
    let mut i = 4;
    while i < call.argc() {
        let a = call.arg(i);
        let more = i + 1 < call.argc();
        if args::is(a, "replace") {
            replace = true;
        } else if args::is(a, "absttl") {
            absttl = true;
        } else if args::is(a, "idletime") && more && freq.is_none() {
            let n = args::int(call.arg(i + 1))?;
            if n < 0 {
                return Err(Reply::err(errors::INVALID_IDLETIME));
            }
            idle = Some(n);
            i += 1;
        } else if args::is(a, "freq") && more && idle.is_none() {
            let n = args::int(call.arg(i + 1))?;
            if !(0..=255).contains(&n) {
                return Err(Reply::err(errors::INVALID_FREQ));
            }
            freq = Some(n);
            i += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 1;
    }
    let key = call.arg(1).to_vec();
    if !replace && e.db(call.db).get(&key).is_some() {
        return Err(Reply::err(errors::BUSYKEY));
    }
    let ttl = args::int(call.arg(2))?;
    if ttl < 0 {
        return Err(Reply::err(errors::INVALID_TTL));
    }
    let (value, deadlines) =
        match rdb::restore_with_field_ttls(call.arg(3), e.profile().rdb_version()) {
            Ok(v) => v,
            Err(RestoreError::VersionOrChecksum) => {
                return Err(Reply::err(errors::BAD_DUMP_PAYLOAD))
            }
            Err(RestoreError::BadFormat) => return Err(Reply::err(errors::BAD_DATA_FORMAT)),
        };
    let now = e.now_ms;
    let deleted = replace && e.db(call.db).remove(&key).is_some();
    // Redis adds in C's wrapping arithmetic: an absurd TTL lands in the past.
    let deadline = match ttl {
        0 => None,
        t if absttl => Some(t),
        t => Some(t.wrapping_add(now)),
    };
    if deadline.is_some_and(|t| t <= now) {
        if deleted {
            e.modified(call.db, &key, notify::GENERIC, "del");
        }
        return Ok(Reply::ok());
    }
    signal_if_blocking_type(e, call.db, &key, &value);
    // IDLETIME counts under a policy that is not LFU, FREQ under LFU (objectSetLRUOrLFU).
    let hint = match (idle, freq) {
        (Some(secs), _) => Hint::Idle(secs),
        (_, Some(n)) => Hint::Freq(n as u8),
        _ => Hint::None,
    };
    let entry = loaded_entry(e, value, deadline, hint);
    e.db(call.db).insert_entry(&key, entry);
    // The key's deadlines are the payload's (none for most values); fields already due go at
    // the next expiry pass, as any due field does.
    e.hash_ttl.take_key(call.db, &key);
    e.hash_ttl.put_key(call.db, &key, deadlines);
    e.modified(call.db, &key, notify::GENERIC, "restore");
    Ok(Reply::ok())
}

/// A value read from a serialized payload (RESTORE, DEBUG RELOAD) as the entry Redis's
/// loader makes of it: encodings chosen afresh from the contents (a hash, a set or a sorted
/// set is packed when it fits the limits).
pub(crate) fn loaded_entry(
    e: &Engine,
    mut value: crate::db::Value,
    expire_at: Option<i64>,
    hint: Hint,
) -> Entry {
    let limits = e.encoding_limits();
    value.fit_loaded(&limits);
    let mut entry = Entry::new(value, expire_at);
    entry.access = Access::loaded(e.config.lfu(), hint, e.now_ms);
    entry
}
