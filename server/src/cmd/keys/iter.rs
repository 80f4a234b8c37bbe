//! KEYS, SCAN and RANDOMKEY: the commands that walk the keyspace.

use crate::cmd::table::CmdResult;
use crate::db::{scan, Db};
use crate::engine::{Call, Engine};
use crate::reply::Reply;

pub fn keys(e: &mut Engine, call: &mut Call) -> CmdResult {
    let pattern = call.arg(1);
    let all = pattern == b"*";
    let db = e.db(call.db);
    let now = db.now;
    let out = db
        .iter()
        .filter(|(_, en)| {
            en.expire_at()
                .is_none_or(|t| !crate::db::is_expired(t, now))
        })
        .filter(|(k, _)| all || crate::glob::matches(pattern, k, false))
        .map(|(k, _)| Reply::bulk(k))
        .collect();
    Ok(Reply::Array(out))
}

/// SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: see `db::scan` for the cursor.
pub fn scan(e: &mut Engine, call: &mut Call) -> CmdResult {
    let cursor = scan::parse_cursor_in(e.profile(), call.arg(1))?;
    let opts = scan::parse_options(&call.args[2..], scan::Scanned::Keys, || {
        crate::cmd::hash::novalues_known(e)
    })?;
    let db = e.db(call.db);
    let now = db.now;
    let live = db.iter().filter(|(_, en)| {
        en.expire_at()
            .is_none_or(|t| !crate::db::is_expired(t, now))
    });
    let (batch, next) = scan::step(
        live.map(|(k, en)| (Db::key_hash(k), (k, en))),
        cursor,
        opts.count,
    );
    // As Redis, COUNT bounds the keys visited; MATCH and TYPE filter what was visited.
    let items = batch
        .into_iter()
        .filter(|(k, _)| opts.matches(k))
        .filter(|(_, en)| {
            opts.type_name
                .as_deref()
                .is_none_or(|t| t.eq_ignore_ascii_case(en.value.type_name().as_bytes()))
        })
        .map(|(k, _)| Reply::bulk(k))
        .collect();
    Ok(scan::reply(next, items))
}

/// A uniformly chosen live key, drawn from the engine's generator over the keys in the
/// map's (fixed-seed, so repeatable) order.
pub fn randomkey(e: &mut Engine, call: &mut Call) -> CmdResult {
    fn live(db: &Db) -> impl Iterator<Item = &[u8]> + '_ {
        let now = db.now;
        db.iter()
            .filter(move |(_, en)| {
                en.expire_at()
                    .is_none_or(|t| !crate::db::is_expired(t, now))
            })
            .map(|(k, _)| k)
    }
    let n = live(e.db(call.db)).count();
    if n == 0 {
        return Ok(Reply::Nil);
    }
    let i = e.rng.below(n);
    Ok(live(e.db(call.db)).nth(i).map_or(Reply::Nil, Reply::bulk))
}
