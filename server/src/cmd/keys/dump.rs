//! DUMP and RESTORE: a value as Redis's serialized payload (see `db::rdb`).

use super::signal_if_blocking_type;
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::db::encoding::Limits;
use crate::db::rdb::{self, RestoreError};
use crate::db::Entry;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

pub fn dump(e: &mut Engine, call: &mut Call) -> CmdResult {
    let limits = Limits::from_config(&e.config);
    Ok(match e.db(call.db).get(call.arg(1)) {
        Some(en) => Reply::bulk(rdb::dump_entry(en, &limits)),
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
    let value = match rdb::restore(call.arg(3)) {
        Ok(v) => v,
        Err(RestoreError::VersionOrChecksum) => return Err(Reply::err(errors::BAD_DUMP_PAYLOAD)),
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
    // IDLETIME sets the access time in the past, unless an LFU policy is in force (then
    // Redis keeps no access time, only the counter); FREQ has no counter to set here.
    let _ = freq;
    let lfu = e.config.maxmemory_policy.contains("lfu");
    let last_access = match idle {
        Some(secs) if !lfu => now - lru_idle_seconds(now, secs) * 1000,
        _ => now,
    };
    let entry = loaded_entry(e, value, deadline, last_access);
    e.db(call.db).insert_entry(&key, entry);
    e.modified(call.db, &key, notify::GENERIC, "restore");
    Ok(Reply::ok())
}

/// The idle time OBJECT IDLETIME reports right after RESTORE ... IDLETIME `secs`: Redis
/// keeps access times on a 24-bit clock of seconds, so an idle time beyond its range wraps
/// as Redis's arithmetic makes it (objectSetLRUOrLFU, then estimateObjectIdleTime).
fn lru_idle_seconds(now_ms: i64, secs: i64) -> i64 {
    const LRU_CLOCK_MAX: i64 = (1 << 24) - 1;
    let clock = (now_ms / 1000) & LRU_CLOCK_MAX;
    let mut abs = clock.wrapping_sub(secs);
    if abs < 0 {
        abs = abs.wrapping_add(LRU_CLOCK_MAX);
    }
    // Stored in a 24-bit field: what is still negative keeps its low bits.
    let lru = abs & LRU_CLOCK_MAX;
    if clock >= lru {
        clock - lru
    } else {
        clock + (LRU_CLOCK_MAX - lru)
    }
}

/// A value read from a serialized payload (RESTORE, DEBUG RELOAD) as the entry Redis's
/// loader makes of it: encodings chosen afresh from the contents (a hash is packed when it
/// fits the limits, and so is a sorted set), except that a set loaded as a hashtable stays one (see `Entry::raw`).
pub(crate) fn loaded_entry(
    e: &Engine,
    mut value: crate::db::Value,
    expire_at: Option<i64>,
    last_access: i64,
) -> Entry {
    let limits = Limits::from_config(&e.config);
    value.fit_loaded(&limits);
    let raw = matches!(value, crate::db::Value::Set(_))
        && crate::db::encoding::of(&value, &limits) == crate::db::encoding::Encoding::Hashtable;
    let mut entry = Entry::new(value, expire_at);
    entry.last_access = last_access;
    entry.raw = raw;
    entry
}
