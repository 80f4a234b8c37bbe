//! REDLAB.COMPAT: the profile's report, readable from any client.
//!
//! `REDLAB.COMPAT REPORT` lists what the profile refused (`[name, times, available in]` each),
//! `REDLAB.COMPAT PROFILE` names the profile, `REDLAB.COMPAT RESET` empties the report.

use crate::cmd::table::{flags::*, CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn container(_: &mut Engine, _: &mut Call) -> CmdResult {
    Err(Reply::err(errors::SYNTAX))
}

fn report(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(Reply::Array(
        e.compat_report
            .entries()
            .into_iter()
            .map(|r| {
                Reply::Array(vec![
                    Reply::bulk(r.what),
                    Reply::Int(r.count as i64),
                    Reply::bulk(r.available_in),
                ])
            })
            .collect(),
    ))
}

fn profile(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(Reply::bulk(e.profile().name()))
}

fn reset(e: &mut Engine, _: &mut Call) -> CmdResult {
    e.compat_report.clear();
    Ok(Reply::ok())
}

const CTL: u32 = ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY | SKIP_MONITOR;

pub static COMMANDS: &[Command] = &[Command::new("redlab.compat", -2, CTL, "redlab", container)
    .subcommands(&[
        Command::new("report", 2, CTL, "redlab", report),
        Command::new("profile", 2, CTL, "redlab", profile),
        Command::new("reset", 2, CTL, "redlab", reset),
    ])];
