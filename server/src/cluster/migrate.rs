//! MIGRATE (move keys to another server, DUMP + RESTORE over a connection of its own) and
//! RESTORE-ASKING (the RESTORE a migrating node sends, served by an importing node without
//! the client's ASKING).
//!
//! As in Redis, MIGRATE holds the node while it talks to the target, within its timeout:
//! the target is another server (another thread when it is a node of the same `Cluster`).

use std::io;
use std::net::ToSocketAddrs;
use std::time::Duration;

use bytes::Bytes;

use super::wire::{Conn, Resp};
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::db::rdb;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// What MIGRATE was asked to do.
struct Request {
    host: String,
    port: u16,
    db: i64,
    timeout: Duration,
    copy: bool,
    replace: bool,
    auth: Option<(Option<Bytes>, Bytes)>,
    keys: Vec<Bytes>,
}

fn parse(call: &Call) -> Result<Request, Reply> {
    let (mut copy, mut replace, mut auth) = (false, false, None);
    let mut keys = vec![call.args[3].clone()];
    let mut j = 6;
    while j < call.argc() {
        let more = call.argc() - 1 - j;
        let a = call.arg(j);
        if args::is(a, "copy") {
            copy = true;
        } else if args::is(a, "replace") {
            replace = true;
        } else if args::is(a, "auth") {
            if more == 0 {
                return Err(Reply::err(errors::SYNTAX));
            }
            j += 1;
            auth = Some((None, call.args[j].clone()));
        } else if args::is(a, "auth2") {
            if more < 2 {
                return Err(Reply::err(errors::SYNTAX));
            }
            auth = Some((Some(call.args[j + 1].clone()), call.args[j + 2].clone()));
            j += 2;
        } else if args::is(a, "keys") {
            if !call.arg(3).is_empty() {
                return Err(Reply::err(
                    crate::errors::WHEN_USING_MIGRATE_KEYS_OPTION_THE,
                ));
            }
            keys = call.args[j + 1..].to_vec();
            break;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    let timeout = args::int(call.arg(5))?;
    let db = args::int(call.arg(4))?;
    let port = args::int(call.arg(2)).unwrap_or(-1);
    Ok(Request {
        host: String::from_utf8_lossy(call.arg(1)).into_owned(),
        port: u16::try_from(port).unwrap_or(0),
        db,
        timeout: Duration::from_millis(if timeout <= 0 { 1000 } else { timeout as u64 }),
        copy,
        replace,
        auth,
        keys,
    })
}

/// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH pw]
/// [AUTH2 user pw] [KEYS key ...]
pub(crate) fn migrate(e: &mut Engine, call: &mut Call) -> CmdResult {
    let req = parse(call)?;
    let limits = e.encoding_limits();
    let now = e.now_ms;
    // (key, payload, ttl in ms or 0) of the keys that are here.
    let mut found = Vec::new();
    for k in &req.keys {
        if let Some(en) = e.db(call.db).get(k) {
            let ttl = en.expire_at().map_or(0, |t| (t - now).max(1));
            found.push((k.clone(), rdb::dump(&en.value, &limits), ttl));
        }
    }
    if found.is_empty() {
        return Ok(Reply::Status("NOKEY".into()));
    }
    let mut conn = connect(&req.host, req.port, req.timeout)
        .map_err(|_| Reply::err(crate::errors::ERROR_OR_TIMEOUT_CONNECTING_TO_THE))?;
    let ioerr = |_| Reply::err(crate::errors::ERROR_OR_TIMEOUT_READING_TO_TARGET);
    if let Some((user, pw)) = &req.auth {
        let mut a: Vec<&[u8]> = vec![b"AUTH"];
        if let Some(u) = user {
            a.push(u);
        }
        a.push(pw);
        target_ok(conn.call(&a).map_err(ioerr)?)?;
    }
    let db = req.db.to_string();
    target_ok(conn.call(&[b"SELECT", db.as_bytes()]).map_err(ioerr)?)?;
    let restore: &[u8] = if e.cluster.is_some() {
        b"RESTORE-ASKING"
    } else {
        b"RESTORE"
    };
    let mut moved = Vec::new();
    let mut failure = None;
    for (key, payload, ttl) in &found {
        let ttl = ttl.to_string();
        let mut a: Vec<&[u8]> = vec![restore, key, ttl.as_bytes(), payload];
        if req.replace {
            a.push(b"REPLACE");
        }
        match conn.call(&a).map_err(ioerr)? {
            Resp::Error(text) => {
                failure = Some(text);
                break;
            }
            _ => moved.push(key.clone()),
        }
    }
    if !req.copy {
        for key in &moved {
            if e.db(call.db).remove(key).is_some() {
                e.modified(call.db, key, crate::notify::GENERIC, "del");
            }
        }
    }
    match failure {
        Some(text) => Err(Reply::err(errors::migrate_target_error(&text))),
        None => Ok(Reply::ok()),
    }
}

fn target_ok(r: Resp) -> Result<(), Reply> {
    match r {
        Resp::Error(text) => Err(Reply::err(errors::migrate_target_error(&text))),
        _ => Ok(()),
    }
}

fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<Conn> {
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::other("no address"))?;
    Conn::connect_timeout(addr, timeout)
}

/// RESTORE-ASKING: RESTORE, served by an importing node without ASKING (`route` knows it).
pub(crate) fn restore_asking(e: &mut Engine, call: &mut Call) -> CmdResult {
    crate::cmd::keys::dump::restore(e, call)
}
