//! Server commands: INFO, CONFIG, DBSIZE, FLUSHDB/FLUSHALL, SWAPDB, TIME, COMMAND, SAVE
//! stand-ins, SHUTDOWN, MONITOR, ROLE, MEMORY.
//!
//! redlab keeps no files: SAVE, BGSAVE and BGREWRITEAOF answer as Redis does and record
//! the save time, so clients and test setups that call them keep working.

mod command;
mod config;
pub(crate) mod config_rewrite;
mod info;
mod keyspace;
mod latency;
mod lolwut;
mod memory;
mod script_memory;
mod slowlog;
mod standalone;

use crate::cmd::table::CmdResult;
use bytes::Bytes;

use super::args;
use super::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// Redis's `sdscatrepr`: a quoted, escaped form of binary data (MONITOR, CLIENT LIST).
pub fn repr(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() + 2);
    s.push('"');
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            c if c.is_ascii_graphic() || c == b' ' => s.push(c as char),
            c => s.push_str(&format!("\\x{:02x}", c)),
        }
    }
    s.push('"');
    s
}

/// One MONITOR line: `<secs>.<micros> [<db> <addr>] "arg" "arg"`.
pub fn monitor_line(now_us: i64, db: usize, addr: &str, args: &[Bytes]) -> String {
    let mut line = format!(
        "{}.{:06} [{} {}]",
        now_us / 1_000_000,
        now_us % 1_000_000,
        db,
        addr
    );
    for a in args {
        line.push(' ');
        line.push_str(&repr(a));
    }
    line
}

/// TIME: the engine clock read now, as Redis's [seconds, microseconds] pair of bulk strings.
/// Inside a script or EXEC too: Redis 7.0 freezes only the time expiry is judged by, and a
/// script that waits for TIME to move on must see it move.
/// TIME reads the clock; from Redis 7.2 (redis/redis#10300, and in Valkey) a script or
/// transaction sees the time stand still, so every TIME in one answers the same.
fn time(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let frozen = e.time_frozen
        && e.profile()
            .has(crate::compat::since::TIME_FROZEN_IN_SCRIPTS);
    let us = match e.frozen_time_us {
        Some(us) if frozen => us,
        _ => {
            let us = e.clock.now_us();
            if frozen {
                e.frozen_time_us = Some(us);
            }
            us
        }
    };
    Ok(Reply::Array(vec![
        Reply::bulk(us.div_euclid(1_000_000).to_string()),
        Reply::bulk(us.rem_euclid(1_000_000).to_string()),
    ]))
}

fn lastsave(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::Int(e.last_save_s))
}

/// SAVE and BGSAVE keep the dataset as DEBUG RELOAD NOSAVE reads it back; the binary writes
/// it to its RDB file too (`persist`), in-process servers write nothing.
fn mark_saved(e: &mut Engine) -> Result<(), ()> {
    crate::cmd::debug_reload::save(e)
}

fn save(e: &mut Engine, _call: &mut Call) -> CmdResult {
    // Redis answers a failed save with a bare "-ERR" (the reason is in the log).
    mark_saved(e).map_err(|()| Reply::err("ERR"))?;
    Ok(Reply::ok())
}

fn bgsave(e: &mut Engine, call: &mut Call) -> CmdResult {
    // BGSAVE CANCEL (Valkey 8.1): a save here is done by the time BGSAVE answers, so there is
    // never one running or scheduled to cancel.
    if call.argc() == 2
        && args::is(call.arg(1), "cancel")
        && e.has_option(crate::compat::since::BGSAVE_CANCEL, "bgsave CANCEL")
    {
        return Err(Reply::err(errors::NO_BGSAVE_IN_PROGRESS));
    }
    if call.argc() > 2 || (call.argc() == 2 && !args::is(call.arg(1), "schedule")) {
        return Err(Reply::err(errors::SYNTAX));
    }
    // A background save that fails says so only in the log, as Redis's child does.
    let _ = mark_saved(e);
    Ok(Reply::status("Background saving started"))
}

fn bgrewriteaof(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::status(
        "Background append only file rewriting started",
    ))
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: the network shell stops once the command
/// returns. There is never a shutdown in progress to ABORT.
fn shutdown(e: &mut Engine, call: &mut Call) -> CmdResult {
    let (mut save, mut nosave, mut abort) = (false, false, false);
    for a in &call.args[1..] {
        if args::is(a, "nosave") {
            nosave = true;
        } else if args::is(a, "save") {
            save = true;
        } else if args::is(a, "abort") {
            abort = true;
        } else if !(args::is(a, "now") || args::is(a, "force")) {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    if (save && nosave) || (abort && call.argc() > 2) {
        return Err(Reply::err(errors::SYNTAX));
    }
    if abort {
        return Err(Reply::err(errors::NO_SHUTDOWN_IN_PROGRESS));
    }
    let flags = crate::persist::shutdown::ShutdownFlags {
        save,
        nosave,
        now: false,
        force: call.args[1..].iter().any(|a| args::is(a, "force")),
    };
    if crate::persist::shutdown::prepare(e, flags).is_err() {
        return Err(Reply::err(errors::SHUTDOWN_FAILED));
    }
    e.shutdown_requested = true;
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.close_requested = true;
    }
    // Redis closes the connection without a reply.
    Ok(Reply::None)
}

fn monitor(e: &mut Engine, call: &mut Call) -> CmdResult {
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        if s.monitor {
            return Ok(Reply::ok());
        }
        s.monitor = true;
    }
    if !e.monitors.contains(&call.conn) {
        e.monitors.push(call.conn);
    }
    Ok(Reply::ok())
}

fn role(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::repl::commands::role(e))
}

pub static COMMANDS: &[Command] = &[
    Command::new("info", -1, LOADING | STALE, "server", info::info),
    Command::new("config", -2, 0, "server", container).subcommands(config::SUBCOMMANDS),
    Command::new("dbsize", 1, READONLY | FAST, "server", keyspace::dbsize),
    Command::new("flushdb", -1, WRITE, "server", keyspace::flushdb),
    Command::new("flushall", -1, WRITE, "server", keyspace::flushall),
    Command::new("swapdb", 3, WRITE | FAST, "server", keyspace::swapdb),
    Command::new("time", 1, LOADING | STALE | FAST, "server", time),
    Command::new("command", -1, LOADING | STALE, "server", command::command)
        .subcommands(command::SUBCOMMANDS),
    Command::new("lastsave", 1, LOADING | STALE | FAST, "server", lastsave),
    Command::new("save", 1, ADMIN | NOSCRIPT | NO_MULTI, "server", save),
    Command::new("bgsave", -1, ADMIN | NOSCRIPT, "server", bgsave),
    Command::new("bgrewriteaof", 1, ADMIN | NOSCRIPT, "server", bgrewriteaof),
    Command::new(
        "shutdown",
        -1,
        ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY,
        "server",
        shutdown,
    ),
    Command::new(
        "monitor",
        1,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        monitor,
    ),
    Command::new("role", 1, NOSCRIPT | LOADING | STALE | FAST, "server", role),
    Command::new("memory", -2, 0, "server", container).subcommands(memory::SUBCOMMANDS),
    Command::new("lolwut", -1, READONLY | FAST, "server", lolwut::lolwut),
    Command::new("slowlog", -2, 0, "server", container).subcommands(slowlog::SUBCOMMANDS),
    Command::new("latency", -2, 0, "server", container).subcommands(latency::SUBCOMMANDS),
    Command::new("wait", 3, NOSCRIPT, "generic", standalone::wait),
    // Redis 7.2's flags; 7.4 made it `blocking` and scriptable (`since::WAIT_BLOCKING`).
    Command::new("waitaof", 4, NOSCRIPT, "generic", standalone::waitaof),
    Command::new(
        "failover",
        -1,
        ADMIN | NOSCRIPT | STALE,
        "server",
        crate::repl::failover::failover,
    ),
];

/// The handler of a container command (CONFIG, MEMORY) called with no subcommand; the
/// dispatcher refuses that by arity first, so this only guards a wrong table entry.
fn container(_e: &mut Engine, call: &mut Call) -> CmdResult {
    Err(Reply::err(errors::wrong_arity(&args::lower(call.arg(0)))))
}
