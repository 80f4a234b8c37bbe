//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET, CLIENT.

use super::args;
use super::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn ping(e: &mut Engine, call: &mut Call) -> Reply {
    if call.argc() > 2 {
        return Reply::err(errors::wrong_arity("ping"));
    }
    let subscribed = e.sessions.get(&call.conn).is_some_and(|s| s.in_pubsub() && s.resp == 2);
    if subscribed {
        let payload = if call.argc() == 2 { call.args[1].to_vec() } else { Vec::new() };
        return Reply::Array(vec![Reply::bulk("pong"), Reply::bulk(payload)]);
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
    let idx = match crate::numfmt::parse_i64(call.arg(1)) {
        Some(i) => i,
        None => return Reply::err(errors::NOT_INTEGER),
    };
    if idx < 0 || idx as usize >= e.dbs.len() {
        return Reply::err(errors::DB_INDEX);
    }
    if call.in_script {
        call.db = idx as usize;
        return Reply::ok();
    }
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.db = idx as usize;
    }
    call.db = idx as usize;
    Reply::ok()
}

fn quit(e: &mut Engine, call: &mut Call) -> Reply {
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.close_requested = true;
    }
    let _ = args::is;
    Reply::ok()
}

pub static COMMANDS: &[Command] = &[
    Command::new("ping", -1, FAST | SENTINEL, "connection", ping),
    Command::new("echo", 2, FAST, "connection", echo),
    Command::new("select", 2, LOADING | STALE | FAST, "connection", select),
    Command::new("quit", -1, ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH, "connection", quit),
];
