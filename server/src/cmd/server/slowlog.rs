//! SLOWLOG GET / LEN / RESET / HELP over the engine's slow log (see `crate::slowlog`).

use super::args;
use crate::cmd::table::{flags::*, CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// SLOWLOG GET [count]: the newest entries, 10 by default, all of them for -1.
fn get(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 3 {
        return Err(Reply::err(errors::subcommand_syntax(
            call.arg(0),
            call.arg(1),
        )));
    }
    let count = match call.args.get(2) {
        None => Some(10),
        Some(a) => match args::int(a) {
            Ok(-1) => None,
            Ok(n) if n >= 0 => Some(n as usize),
            _ => return Err(Reply::err(errors::SLOWLOG_COUNT_RANGE)),
        },
    };
    Ok(Reply::Array(
        e.slowlog.newest(count).map(|entry| entry.reply()).collect(),
    ))
}

fn len(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::Int(e.slowlog.len() as i64))
}

fn reset(e: &mut Engine, _call: &mut Call) -> CmdResult {
    e.slowlog.reset();
    Ok(Reply::ok())
}

fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    ))
}

pub(super) static SUBCOMMANDS: &[Command] = &[
    Command::new("get", -2, ADMIN | LOADING | STALE, "server", get),
    Command::new("len", 2, ADMIN | LOADING | STALE, "server", len),
    Command::new("reset", 2, ADMIN | LOADING | STALE, "server", reset),
    Command::new("help", 2, LOADING | STALE, "server", help),
];
