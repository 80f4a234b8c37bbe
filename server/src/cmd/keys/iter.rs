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
///
/// As Redis's, the walk visits every stored key, those past their deadline included (COUNT
/// bounds the keys visited), and a visited key that passes MATCH and TYPE but is past its
/// deadline is expired then and there: it leaves the reply and goes to replicas as a DEL
/// of its own (what matters while active expiry is off, DEBUG SET-ACTIVE-EXPIRE 0).
pub fn scan(e: &mut Engine, call: &mut Call) -> CmdResult {
    let cursor = scan::parse_cursor_in(e.profile(), call.arg(1))?;
    let opts = crate::cmd::args::scan_options(e, &call.args[2..], scan::Scanned::Keys)?;
    let db = e.db(call.db);
    let now = db.now;
    let (batch, next) = scan::step(
        db.stored().map(|(k, en)| (Db::key_hash(k), (k, en))),
        cursor,
        opts.count,
    );
    // MATCH filters what was visited; a key that passes is looked up, which expires it if
    // its deadline passed (Redis's TYPE check is such a lookup too), and then TYPE filters.
    let visited: Vec<(Vec<u8>, bool, bool)> = batch
        .into_iter()
        .filter(|(k, _)| opts.matches(k))
        .map(|(k, en)| {
            let due = en
                .expire_at()
                .is_some_and(|t| crate::db::is_expired(t, now));
            let typed = opts
                .type_name
                .as_deref()
                .is_none_or(|t| t.eq_ignore_ascii_case(en.value.type_name().as_bytes()));
            (k.to_vec(), due, typed)
        })
        .collect();
    let mut items = Vec::with_capacity(visited.len());
    for (k, due, typed) in visited {
        // `peek` expires a key past its deadline (unless expiry is held) and misses it.
        if due && e.db(call.db).peek(&k).is_none() || !typed {
            continue;
        }
        items.push(Reply::bulk(&k));
    }
    Ok(scan::reply(next, items))
}

/// A uniformly chosen live key, drawn from the engine's generator over the keys in the
/// map's (fixed-seed, so repeatable) order. As Redis's `dbRandomKey`, the draw is among the
/// stored keys: one past its deadline is expired on the spot (a DEL for the replicas) and
/// the draw starts again. While expiry is held (CLIENT PAUSE) nothing can be removed, so
/// the draw is among the live keys only.
pub fn randomkey(e: &mut Engine, call: &mut Call) -> CmdResult {
    fn live(db: &Db) -> impl Iterator<Item = &[u8]> + '_ {
        let now = db.now;
        db.stored()
            .filter(move |(_, en)| {
                en.expire_at()
                    .is_none_or(|t| !crate::db::is_expired(t, now))
            })
            .map(|(k, _)| k)
    }
    if e.db(call.db).hold_expired {
        let n = live(e.db(call.db)).count();
        if n == 0 {
            return Ok(Reply::Nil);
        }
        let i = e.rng.below(n);
        return Ok(live(e.db(call.db)).nth(i).map_or(Reply::Nil, Reply::bulk));
    }
    loop {
        let n = e.db(call.db).stored_len();
        if n == 0 {
            return Ok(Reply::Nil);
        }
        let i = e.rng.below(n);
        let db = e.db(call.db);
        let Some((key, en)) = db.stored_nth(i) else {
            return Ok(Reply::Nil);
        };
        if en
            .expire_at()
            .is_none_or(|t| !crate::db::is_expired(t, db.now))
        {
            return Ok(Reply::bulk(key));
        }
        let key = key.to_vec();
        db.peek(&key);
    }
}
