//! LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR / HELP over the engine's latency
//! monitor, and LATENCY HISTOGRAM over latency-tracking's per-command histograms (see
//! `crate::latency`).

use bytes::Bytes;

use crate::cmd::table::{flags::*, lookup_in, lookup_sub_in, CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
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

fn graph(e: &mut Engine, call: &mut Call) -> CmdResult {
    let event = String::from_utf8_lossy(call.arg(2));
    match e.latency.graph(&event, e.now_ms.div_euclid(1000)) {
        Some(text) => Ok(Reply::Verbatim("txt", Bytes::from(text))),
        None => Err(Reply::err(errors::latency_no_samples(call.arg(2)))),
    }
}

fn doctor(e: &mut Engine, _call: &mut Call) -> CmdResult {
    e.latency.enabled(&e.config);
    let text = e
        .latency
        .doctor(e.latency.threshold_ms(), e.now_ms.div_euclid(1000));
    Ok(Reply::Verbatim("txt", Bytes::from(text)))
}

/// The command a LATENCY HISTOGRAM argument names: `name` or `parent|sub`, case-insensitive;
/// None for anything else.
fn named_command(e: &Engine, name: &[u8]) -> Option<&'static Command> {
    let mut parts = name.split(|&b| b == b'|');
    let first = parts.next()?;
    let cmd = lookup_in(e.config.compat, first)?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(cmd),
        (Some(sub), None) if !cmd.subcommands.is_empty() => {
            lookup_sub_in(e.config.compat, cmd, sub)
        }
        _ => None,
    }
}

fn histogram(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.args.len() == 2 {
        return Ok(e.latency_tracking.all_reply());
    }
    let named: Vec<Option<&'static Command>> =
        call.args[2..].iter().map(|a| named_command(e, a)).collect();
    Ok(e.latency_tracking.some_reply(&named))
}

fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
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
    Command::new(
        "graph",
        3,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        graph,
    ),
    Command::new(
        "doctor",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        doctor,
    ),
    Command::new(
        "histogram",
        -2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        histogram,
    ),
    Command::new("help", 2, LOADING | STALE, "server", help),
];
