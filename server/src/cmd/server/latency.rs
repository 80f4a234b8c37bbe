//! LATENCY LATEST / HISTORY / RESET / HELP over the engine's latency monitor (see
//! `crate::latency`).

use crate::cmd::table::{flags::*, CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::reply::Reply;

fn latest(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(e.latency.latest())
}

fn history(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(e.latency.history(&String::from_utf8_lossy(call.arg(2))))
}

fn reset(e: &mut Engine, call: &mut Call) -> CmdResult {
    let events: Vec<&[u8]> = call.args[2..].iter().map(|a| a.as_ref()).collect();
    Ok(Reply::Int(e.latency.reset(&events) as i64))
}

fn help(_e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    ))
}

pub(super) static SUBCOMMANDS: &[Command] = &[
    Command::new(
        "latest",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        latest,
    ),
    Command::new(
        "history",
        3,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        history,
    ),
    Command::new(
        "reset",
        -2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        reset,
    ),
    Command::new("help", 2, LOADING | STALE, "server", help),
];
