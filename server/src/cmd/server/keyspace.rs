//! DBSIZE, FLUSHDB, FLUSHALL, SWAPDB: whole-database operations.

use super::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

pub(super) fn dbsize(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(Reply::Int(e.db(call.db).len() as i64))
}

/// The optional ASYNC|SYNC argument; both free at once here.
fn flush_mode_ok(call: &Call) -> bool {
    match call.argc() {
        1 => true,
        2 => args::is(call.arg(1), "async") || args::is(call.arg(1), "sync"),
        _ => false,
    }
}

pub(super) fn flushdb(e: &mut Engine, call: &mut Call) -> CmdResult {
    if !flush_mode_ok(call) {
        return Err(Reply::err(errors::SYNTAX));
    }
    flush(e, Some(call.db));
    Ok(Reply::ok())
}

pub(super) fn flushall(e: &mut Engine, call: &mut Call) -> CmdResult {
    if !flush_mode_ok(call) {
        return Err(Reply::err(errors::SYNTAX));
    }
    flush(e, None);
    // Redis counts FLUSHALL as one more change, so a configured save still happens.
    e.dirty += 1;
    Ok(Reply::ok())
}

/// Empties one database or all of them; WATCHes on their keys break (as in Redis, even
/// for keys that did not exist).
pub(crate) fn flush(e: &mut Engine, db: Option<usize>) {
    e.touch_all_watched(db);
    let range = match db {
        Some(d) => d..d + 1,
        None => 0..e.dbs.len(),
    };
    for i in range {
        e.dirty += e.dbs[i].len() as u64;
        e.dbs[i].clear();
    }
}

pub(super) fn swapdb(e: &mut Engine, call: &mut Call) -> CmdResult {
    // Redis reads each index as a C int: one that is no integer or does not fit is "invalid";
    // only an int outside the databases is "out of range".
    let as_int = |arg: &[u8]| crate::numfmt::parse_i64(arg).filter(|n| i32::try_from(*n).is_ok());
    let Some(a) = as_int(call.arg(1)) else {
        return Err(Reply::err(errors::SWAPDB_FIRST));
    };
    let Some(b) = as_int(call.arg(2)) else {
        return Err(Reply::err(errors::SWAPDB_SECOND));
    };
    let n = e.dbs.len() as i64;
    if a < 0 || a >= n || b < 0 || b >= n {
        return Err(Reply::err(errors::DB_INDEX));
    }
    let (a, b) = (a as usize, b as usize);
    if a != b {
        // Before the swap, as Redis: what each watched key had and what replaces it.
        e.touch_watched_swapdb(a, b);
        e.dbs.swap(a, b);
        e.recheck_all_dbs();
        // Clients blocked on keys that now exist in their database are served.
        let blocked: Vec<(usize, Vec<u8>)> = e
            .blocking_keys
            .keys()
            .filter(|(d, _)| *d == a || *d == b)
            .cloned()
            .collect();
        for (d, k) in blocked {
            e.signal_ready(d, &k);
        }
        e.dirty += 1;
    }
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use crate::{Config, Engine, Reply};

    #[test]
    fn flushdb_breaks_watch_and_swapdb_swaps() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["SET", "a", "1"]);
        e.execute(1, &["SELECT", "1"]);
        e.execute(1, &["SET", "b", "2"]);
        assert_eq!(e.execute(1, &["SWAPDB", "0", "1"]), Reply::ok());
        assert_eq!(e.execute(1, &["GET", "a"]), Reply::bulk("1"));
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(1));
        assert_eq!(e.execute(1, &["FLUSHALL"]), Reply::ok());
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(0));
        assert_eq!(
            e.execute(1, &["SWAPDB", "0", "16"]),
            Reply::err("ERR DB index is out of range")
        );
        assert_eq!(
            e.execute(1, &["SWAPDB", "x", "1"]),
            Reply::err("ERR invalid first DB index")
        );
    }
}
