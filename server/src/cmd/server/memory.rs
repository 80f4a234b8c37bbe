//! MEMORY USAGE / DOCTOR / STATS / PURGE / MALLOC-STATS / HELP. Sizes are redlab's own
//! estimates (the same ones INFO used_memory sums), not an allocator's.

use super::args;
use crate::cmd::table::CmdResult;
use crate::cmd::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// MEMORY USAGE key [SAMPLES count]
fn usage(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut i = 3;
    while i < call.argc() {
        if args::is(call.arg(i), "samples") && i + 1 < call.argc() {
            // Redis reads the count as an integer first (its error), then refuses a negative
            // one as a syntax error; 0 (sample everything) and any huge count are fine.
            match args::int(call.arg(i + 1))? {
                n if n < 0 => return Err(Reply::err(errors::SYNTAX)),
                _ => {}
            }
            i += 2;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    let key = call.args[2].clone();
    Ok(match e.db(call.db).peek(&key) {
        Some(entry) => Reply::Int((key.len() + 48 + entry.value.approx_size()) as i64),
        None => Reply::Nil,
    })
}

fn doctor(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::Verbatim(
        "txt",
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".into(),
    ))
}

fn stats(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let used = e.used_memory() as i64;
    let clients = e.clients_memory();
    let (replicas, normal) = (clients.replicas as i64, clients.normal as i64);
    let keys: usize = e.dbs.iter().map(|d| d.len()).sum();
    let kv = |k: &str, v: Reply| (Reply::bulk(k), v);
    // Redis's overhead is the startup memory and the clients' buffers; the rest is data.
    let overhead = 900 * 1024 + replicas + normal;
    Ok(Reply::Map(vec![
        kv("peak.allocated", Reply::Int(used)),
        kv("total.allocated", Reply::Int(used)),
        kv("startup.allocated", Reply::Int(900 * 1024)),
        kv("replication.backlog", Reply::Int(0)),
        kv("clients.slaves", Reply::Int(replicas)),
        kv("clients.normal", Reply::Int(normal)),
        kv("cluster.links", Reply::Int(0)),
        kv("aof.buffer", Reply::Int(0)),
        kv("overhead.total", Reply::Int(overhead)),
        kv("keys.count", Reply::Int(keys as i64)),
        kv("dataset.bytes", Reply::Int(used - overhead)),
    ]))
}

fn purge(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::ok())
}

fn malloc_stats(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::Verbatim(
        "txt",
        "Stats not supported for the current allocator".into(),
    ))
}

fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    ))
}

pub(super) static SUBCOMMANDS: &[Command] = &[
    Command::new("help", 2, LOADING | STALE, "server", help),
    Command::new("doctor", 2, 0, "server", doctor),
    Command::new("purge", 2, 0, "server", purge),
    Command::new("malloc-stats", 2, 0, "server", malloc_stats),
    Command::new("stats", 2, 0, "server", stats),
    Command::new("usage", -3, READONLY, "server", usage).keys(2, 2, 1),
];
