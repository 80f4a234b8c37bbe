//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET; CLIENT in `client`.
//!
//! Users and passwords are the ACL's (`acl`, `cmd/acl.rs`); `requirepass` is the password
//! of the user `default`.

mod client;
mod client_filter;
mod client_help;
mod memory;

use super::args;
use super::table::{flags::*, CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;
use crate::session::ReplyMode;

fn ping(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 2 {
        return Err(Reply::err(errors::wrong_arity("ping")));
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
        return Ok(Reply::Array(vec![
            Reply::bulk("pong"),
            Reply::Bulk(payload),
        ]));
    }
    Ok(if call.argc() == 2 {
        Reply::Bulk(call.args[1].clone())
    } else {
        Reply::status("PONG")
    })
}

fn echo(_: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(Reply::Bulk(call.args[1].clone()))
}

fn select(e: &mut Engine, call: &mut Call) -> CmdResult {
    let idx = match numfmt::parse_i64(call.arg(1)) {
        Some(i) => i,
        None => return Err(Reply::err(errors::NOT_INTEGER)),
    };
    // Redis reads the index as a C int before it looks for the database.
    if i32::try_from(idx).is_err() {
        return Err(Reply::err(errors::INT_OUT_OF_RANGE));
    }
    if e.cluster.is_some() && idx != 0 {
        return Err(Reply::err(crate::errors::SELECT_IS_NOT_ALLOWED_IN_CLUSTER));
    }
    if idx < 0 || idx as usize >= e.dbs.len() {
        return Err(Reply::err(errors::DB_INDEX));
    }
    call.db = idx as usize;
    if call.in_script {
        return Ok(Reply::ok());
    }
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.db = idx as usize;
    }
    Ok(Reply::ok())
}

fn quit(e: &mut Engine, call: &mut Call) -> CmdResult {
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.close_requested = true;
    }
    Ok(Reply::ok())
}

/// Whether a new connection starts authenticated: only when `default` needs no password.
pub(crate) fn starts_authenticated(e: &Engine) -> bool {
    e.acl.starts_authenticated()
}

/// One CLIENT LIST line for `s`, as the ACL log records it.
pub(crate) fn client_info_line(
    s: &crate::session::Session,
    now_ms: i64,
    profile: crate::compat::Profile,
) -> String {
    client::info_line(s, now_ms, None, profile)
}

pub(crate) use client::kill_connection;
pub(crate) use memory::client_memory;

/// AUTH's verdict from the arguments and the users alone (no engine), so the loop that
/// serves clients during a busy script authenticates exactly as the command does: the name
/// of the user it logs in as, or the error text. (A failure also goes to ACL LOG: the
/// command writes it, the busy loop hands it to the engine as a `CatchUp::AclLog`.)
pub(crate) fn check_auth<'a>(
    users: &crate::acl::Users,
    args: &'a [bytes::Bytes],
) -> Result<&'a [u8], &'static str> {
    let nopass = users.get("default").is_none_or(|d| d.nopass);
    let (user, pass): (&[u8], &[u8]) = match args.len() {
        2 if nopass => return Err(errors::AUTH_NOT_CONFIGURED),
        2 => (b"default", &args[1]),
        3 => (&args[1], &args[2]),
        _ => return Err(errors::SYNTAX),
    };
    if crate::acl::authenticate_in(users, user, pass) {
        Ok(user)
    } else {
        Err(errors::WRONGPASS)
    }
}

fn auth(e: &mut Engine, call: &mut Call) -> CmdResult {
    // A failed AUTH leaves an authenticated connection authenticated, as in Redis.
    let (user, pass) = match call.argc() {
        2 if e.acl.default_user().nopass => return Err(Reply::err(errors::AUTH_NOT_CONFIGURED)),
        2 => (bytes::Bytes::from_static(b"default"), call.args[1].clone()),
        3 => (call.args[1].clone(), call.args[2].clone()),
        _ => return Err(Reply::err(errors::SYNTAX)),
    };
    if !e.acl.authenticate(&user, &pass) {
        let command = call.args[0].clone();
        crate::cmd::acl::log_auth_failure(e, call.conn, &command, &user, call.in_multi);
        return Err(Reply::err(errors::WRONGPASS));
    }
    crate::cmd::acl::login(e, call.conn, &user);
    Ok(Reply::ok())
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
/// What a HELLO line asks for, decided from the arguments, `requirepass` and whether the
/// connection is authenticated, without the engine: the busy-script loop answers HELLO with
/// it too.
pub(crate) struct HelloPlan {
    /// The protocol asked for, if any.
    pub version: Option<u8>,
    /// AUTH was given and its credentials are right.
    pub authenticates: bool,
    /// The index of AUTH's user name.
    pub user: Option<usize>,
    /// The index of SETNAME's argument.
    pub name: Option<usize>,
}

pub(crate) fn plan_hello(
    args: &[bytes::Bytes],
    credentials_ok: impl Fn(&[u8], &[u8]) -> bool,
    authenticated: bool,
) -> Result<HelloPlan, Reply> {
    let mut version = None;
    let mut i = 1;
    if args.len() >= 2 {
        let Some(v) = numfmt::parse_i64(&args[1]) else {
            return Err(Reply::err(errors::PROTOVER_NOT_INTEGER));
        };
        if !(2..=3).contains(&v) {
            return Err(Reply::err(errors::NOPROTO));
        }
        version = Some(v as u8);
        i = 2;
    }
    let mut credentials = None;
    let mut name = None;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i];
        if args::is(opt, "AUTH") && more >= 2 {
            credentials = Some((i + 1, i + 2));
            i += 3;
        } else if args::is(opt, "SETNAME") && more >= 1 {
            if !valid_client_name(&args[i + 1]) {
                return Err(Reply::err(errors::CLIENT_NAME_CHARS));
            }
            name = Some(i + 1);
            i += 2;
        } else {
            return Err(Reply::err(errors::hello_option(opt)));
        }
    }
    let authenticates = match credentials {
        Some((u, p)) if !credentials_ok(&args[u], &args[p]) => {
            return Err(Reply::err(errors::WRONGPASS));
        }
        Some(_) => true,
        None => false,
    };
    if !authenticated && !authenticates {
        return Err(Reply::err(errors::HELLO_NOAUTH));
    }
    Ok(HelloPlan {
        version,
        authenticates,
        user: credentials.map(|(u, _)| u),
        name,
    })
}

/// The ACL LOG entry of a HELLO whose AUTH failed: the user is the argument after the last
/// AUTH option, as plan_hello read it (`in_multi`: run by EXEC).
pub(crate) fn hello_auth_refusal(
    args: &[bytes::Bytes],
    in_multi: bool,
) -> crate::cmd::acl::Refusal {
    let user = (2..args.len().saturating_sub(2))
        .rev()
        .find(|&i| args::is(&args[i], "AUTH"))
        .map(|i| args[i + 1].clone())
        .unwrap_or_default();
    crate::cmd::acl::Refusal::auth(&args[0], &user, in_multi)
}

/// HELLO's reply for connection `id` now speaking `proto`.
/// `server`: the name and version it answers as (`Config::hello_server`).
pub(crate) fn hello_reply(
    (server, version): (&str, &str),
    proto: u8,
    id: crate::session::ConnId,
) -> Reply {
    Reply::Map(vec![
        (Reply::bulk("server"), Reply::bulk(server)),
        (Reply::bulk("version"), Reply::bulk(version)),
        (Reply::bulk("proto"), Reply::Int(proto as i64)),
        (Reply::bulk("id"), Reply::Int(id as i64)),
        (Reply::bulk("mode"), Reply::bulk("standalone")),
        (Reply::bulk("role"), Reply::bulk("master")),
        (Reply::bulk("modules"), Reply::Array(Vec::new())),
    ])
}

fn hello(e: &mut Engine, call: &mut Call) -> CmdResult {
    let authenticated = e.sessions.get(&call.conn).is_some_and(|s| s.authenticated);
    let acl = &e.acl;
    let plan = match plan_hello(&call.args, |u, p| acl.authenticate(u, p), authenticated) {
        Ok(plan) => plan,
        Err(err) => {
            if err == Reply::err(errors::WRONGPASS) {
                let refusal = hello_auth_refusal(&call.args, call.in_multi);
                crate::cmd::acl::log_refusal(e, call.conn, refusal);
            }
            return Err(err);
        }
    };
    if let (true, Some(u)) = (plan.authenticates, plan.user) {
        let user = call.args[u].clone();
        crate::cmd::acl::login(e, call.conn, &user);
    }
    if let Some(n) = plan.name {
        let n = call.args[n].clone();
        set_client_name(e, call.conn, &n);
    }
    let resp = match e.sessions.get_mut(&call.conn) {
        Some(s) => {
            if plan.authenticates {
                s.authenticated = true;
            }
            if let Some(v) = plan.version {
                s.resp = v;
            }
            s.resp
        }
        None => 2,
    };
    Ok(hello_reply(e.config.hello_server(), resp, call.conn))
}

/// RESET: back to a fresh connection's state, except CLIENT NO-EVICT (Redis keeps it).
fn reset(e: &mut Engine, call: &mut Call) -> CmdResult {
    let conn = call.conn;
    e.monitors.retain(|&c| c != conn);
    e.unwatch_all(conn);
    crate::cmd::pubsub::unsubscribe_all(e, conn);
    e.disable_tracking(conn);
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
    Ok(Reply::status("RESET"))
}

pub static COMMANDS: &[Command] = &[
    Command::new("ping", -1, FAST | SENTINEL, "connection", ping),
    Command::new("echo", 2, LOADING | STALE | FAST, "connection", echo),
    Command::new("select", 2, LOADING | STALE | FAST, "connection", select),
    Command::new(
        "quit",
        -1,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH,
        "connection",
        quit,
    ),
    Command::new(
        "hello",
        -1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | SENTINEL,
        "connection",
        hello,
    ),
    Command::new(
        "auth",
        -2,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | SENTINEL,
        "connection",
        auth,
    ),
    Command::new(
        "reset",
        1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY,
        "connection",
        reset,
    ),
    Command::new("client", -2, 0, "connection", client::container).subcommands(client::SUBCOMMANDS),
];

#[cfg(test)]
mod tests;
