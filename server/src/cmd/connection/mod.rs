//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET; CLIENT in `client`.
//!
//! Users and passwords are the ACL's (`acl`, `cmd/acl.rs`); `requirepass` is the password
//! of the user `default`.

mod client;

use super::args;
use super::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;
use crate::session::ReplyMode;

fn ping(e: &mut Engine, call: &mut Call) -> Reply {
    if call.argc() > 2 {
        return Reply::err(errors::wrong_arity("ping"));
    }
    // A RESP2 subscriber can only read pushes, so Redis answers PING there with a push-shaped
    // array; a RESP3 subscriber can tell replies from pushes and gets the normal reply.
    let subscribed = e
        .sessions
        .get(&call.conn)
        .is_some_and(|s| s.in_pubsub() && s.resp == 2);
    if subscribed {
        let payload = if call.argc() == 2 {
            call.args[1].clone()
        } else {
            Default::default()
        };
        return Reply::Array(vec![Reply::bulk("pong"), Reply::Bulk(payload)]);
    }
    if call.argc() == 2 {
        Reply::Bulk(call.args[1].clone())
    } else {
        Reply::status("PONG")
    }
}

fn echo(_: &mut Engine, call: &mut Call) -> Reply {
    Reply::Bulk(call.args[1].clone())
}

fn select(e: &mut Engine, call: &mut Call) -> Reply {
    let idx = match numfmt::parse_i64(call.arg(1)) {
        Some(i) => i,
        None => return Reply::err(errors::NOT_INTEGER),
    };
    if idx < 0 || idx as usize >= e.dbs.len() {
        return Reply::err(errors::DB_INDEX);
    }
    call.db = idx as usize;
    if call.in_script {
        return Reply::ok();
    }
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.db = idx as usize;
    }
    Reply::ok()
}

fn quit(e: &mut Engine, call: &mut Call) -> Reply {
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.close_requested = true;
    }
    Reply::ok()
}

/// Whether a new connection starts authenticated: only when `default` needs no password.
pub(crate) fn starts_authenticated(e: &Engine) -> bool {
    e.acl.starts_authenticated()
}

/// One CLIENT LIST line for `s`, as the ACL log records it.
pub(crate) fn client_info_line(s: &crate::session::Session, now_ms: i64) -> String {
    client::info_line(s, now_ms, None)
}

pub(crate) use client::kill_connection;

fn password_matches(password: Option<&str>, user: &[u8], pass: &[u8]) -> bool {
    user == b"default" && password.is_none_or(|p| p.as_bytes() == pass)
}

/// AUTH's verdict from the arguments and `requirepass` alone (no engine), so the loop that
/// serves clients during a busy script authenticates exactly as the command does.
pub(crate) fn check_auth(
    requirepass: Option<&str>,
    args: &[bytes::Bytes],
) -> Result<(), &'static str> {
    let password = requirepass.filter(|p| !p.is_empty());
    let (user, pass): (&[u8], &[u8]) = match args.len() {
        2 if password.is_none() => return Err(errors::AUTH_NOT_CONFIGURED),
        2 => (b"default", &args[1]),
        3 => (&args[1], &args[2]),
        _ => return Err(errors::SYNTAX),
    };
    if password_matches(password, user, pass) {
        Ok(())
    } else {
        Err(errors::WRONGPASS)
    }
}

fn auth(e: &mut Engine, call: &mut Call) -> Reply {
    // A failed AUTH leaves an authenticated connection authenticated, as in Redis.
    let (user, pass) = match call.argc() {
        2 if e.acl.default_user().nopass => return Reply::err(errors::AUTH_NOT_CONFIGURED),
        2 => (bytes::Bytes::from_static(b"default"), call.args[1].clone()),
        3 => (call.args[1].clone(), call.args[2].clone()),
        _ => return Reply::err(errors::SYNTAX),
    };
    if !e.acl.authenticate(&user, &pass) {
        crate::cmd::acl::log_auth_failure(e, call.conn, "auth", &user);
        return Reply::err(errors::WRONGPASS);
    }
    crate::cmd::acl::login(e, call.conn, &user);
    Reply::ok()
}

/// Redis accepts client names made of printable ASCII without spaces ('!'..='~').
pub(crate) fn valid_client_name(name: &[u8]) -> bool {
    name.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

/// Sets (or, for an empty name, clears) the connection's name.
pub(crate) fn set_client_name(e: &mut Engine, conn: crate::session::ConnId, name: &[u8]) {
    if let Some(s) = e.sessions.get_mut(&conn) {
        s.name = if name.is_empty() {
            None
        } else {
            Some(name.to_vec())
        };
    }
}

/// HELLO [protover [AUTH user pass] [SETNAME name]]: options are all checked before any
/// takes effect; AUTH runs before the "must be authenticated" check so one HELLO can log in.
fn hello(e: &mut Engine, call: &mut Call) -> Reply {
    let mut version = None;
    let mut i = 1;
    if call.argc() >= 2 {
        let Some(v) = numfmt::parse_i64(call.arg(1)) else {
            return Reply::err(errors::PROTOVER_NOT_INTEGER);
        };
        if !(2..=3).contains(&v) {
            return Reply::err(errors::NOPROTO);
        }
        version = Some(v as u8);
        i = 2;
    }
    let mut credentials = None;
    let mut name = None;
    while i < call.argc() {
        let more = call.argc() - 1 - i;
        let opt = call.arg(i);
        if args::is(opt, "AUTH") && more >= 2 {
            credentials = Some((i + 1, i + 2));
            i += 3;
        } else if args::is(opt, "SETNAME") && more >= 1 {
            if !valid_client_name(call.arg(i + 1)) {
                return Reply::err(errors::CLIENT_NAME_CHARS);
            }
            name = Some(i + 1);
            i += 2;
        } else {
            return Reply::err(errors::hello_option(opt));
        }
    }
    if let Some((u, p)) = credentials {
        let user = call.args[u].clone();
        if !e.acl.authenticate(&user, call.arg(p)) {
            crate::cmd::acl::log_auth_failure(e, call.conn, "hello", &user);
            return Reply::err(errors::WRONGPASS);
        }
        crate::cmd::acl::login(e, call.conn, &user);
    }
    if !e.sessions.get(&call.conn).is_some_and(|s| s.authenticated) {
        return Reply::err(errors::HELLO_NOAUTH);
    }
    if let Some(n) = name {
        let n = call.args[n].clone();
        set_client_name(e, call.conn, &n);
    }
    let resp = match e.sessions.get_mut(&call.conn) {
        Some(s) => {
            if let Some(v) = version {
                s.resp = v;
            }
            s.resp
        }
        None => 2,
    };
    Reply::Map(vec![
        (Reply::bulk("server"), Reply::bulk("redis")),
        (Reply::bulk("version"), Reply::bulk(&e.config.redis_version)),
        (Reply::bulk("proto"), Reply::Int(resp as i64)),
        (Reply::bulk("id"), Reply::Int(call.conn as i64)),
        (Reply::bulk("mode"), Reply::bulk("standalone")),
        (Reply::bulk("role"), Reply::bulk("master")),
        (Reply::bulk("modules"), Reply::Array(Vec::new())),
    ])
}

/// RESET: back to a fresh connection's state, except CLIENT NO-EVICT (Redis keeps it).
fn reset(e: &mut Engine, call: &mut Call) -> Reply {
    let conn = call.conn;
    e.monitors.retain(|&c| c != conn);
    e.unwatch_all(conn);
    crate::cmd::pubsub::unsubscribe_all(e, conn);
    let authenticated = starts_authenticated(e);
    let free = e.acl.default_user().unrestricted();
    if let Some(s) = e.sessions.get_mut(&conn) {
        s.user = "default".into();
        s.acl_free = free;
        s.monitor = false;
        s.db = 0;
        s.resp = 2;
        s.name = None;
        s.multi = None;
        s.reply_mode = ReplyMode::On;
        s.authenticated = authenticated;
    }
    call.db = 0;
    Reply::status("RESET")
}

pub static COMMANDS: &[Command] = &[
    Command::legacy("ping", -1, FAST | SENTINEL, "connection", ping),
    Command::legacy("echo", 2, LOADING | STALE | FAST, "connection", echo),
    Command::legacy("select", 2, LOADING | STALE | FAST, "connection", select),
    Command::legacy(
        "quit",
        -1,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH,
        "connection",
        quit,
    ),
    Command::legacy(
        "hello",
        -1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | SENTINEL,
        "connection",
        hello,
    ),
    Command::legacy(
        "auth",
        -2,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | SENTINEL,
        "connection",
        auth,
    ),
    Command::legacy(
        "reset",
        1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY,
        "connection",
        reset,
    ),
    Command::legacy("client", -2, 0, "connection", client::container)
        .subcommands(client::SUBCOMMANDS),
];

#[cfg(test)]
mod tests;
