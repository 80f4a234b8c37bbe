//! redlab's own commands: the clock and fault injection over the wire, so the standalone
//! binary and tests in any language can control time and failures.
//!
//! REDLAB.CLOCK GET [US] | SET <unix-ms> [MS|US] | ADVANCE <ms> [MS|US] | FREEZE | RESUME
//! (a value is in milliseconds unless followed by US, microseconds).
//! REDLAB.FAULT ADD [match ...] [trigger ...] <action> | LIST | DEL <id> | CLEAR | MARK | LOG
//! (the ADD grammar is in `parse_fault`; README documents it).

use crate::cmd::table::CmdResult;
use std::time::Duration;

use bytes::Bytes;

use super::args;
use super::table::{flags::*, Command};
use crate::clock::Clock;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::faults::Fault;
use crate::reply::Reply;

/// The unit word after a clock value: milliseconds unless `US` (microseconds) is given, so
/// a test can put TIME's microsecond part exactly where it wants.
fn unit_us(args: &[Bytes], at: usize) -> Result<i64, Reply> {
    match args.get(at) {
        None => Ok(1000),
        Some(_) if args.len() > at + 1 => Err(Reply::err(errors::SYNTAX)),
        Some(w) if args::is(w, "ms") => Ok(1000),
        Some(w) if args::is(w, "us") => Ok(1),
        Some(_) => Err(Reply::err(errors::SYNTAX)),
    }
}

/// A value and its optional unit, in microseconds.
fn value_us(args: &[Bytes]) -> Result<i64, Reply> {
    let n = args::int(&args[2])?;
    let unit = unit_us(args, 3)?;
    n.checked_mul(unit)
        .ok_or_else(|| Reply::err(errors::NOT_INTEGER))
}

/// REDLAB.CLOCK on the clock alone, without the engine: what the network shell's busy loop
/// can answer while a script holds the engine (the clock is shared atomics, so a move made
/// here is seen by the script's next TIME). Arity and subcommand errors are the table's.
pub(crate) fn clock_command(clock: &Clock, args: &[Bytes]) -> Reply {
    if !args.first().is_some_and(|a| args::is(a, "redlab.clock")) {
        return Reply::err(errors::SYNTAX);
    }
    let cmd = match crate::engine::resolve(args) {
        Ok((cmd, _)) => cmd,
        Err(r) => return r,
    };
    match cmd.name {
        "get" => clock_get(clock, args),
        "set" => clock_set(clock, args),
        "advance" => clock_advance(clock, args),
        "freeze" => {
            clock.freeze();
            Reply::ok()
        }
        "resume" => {
            clock.resume();
            Reply::ok()
        }
        _ => Reply::err(errors::SYNTAX),
    }
}

fn clock_get(clock: &Clock, args: &[Bytes]) -> Reply {
    match unit_us(args, 2) {
        Ok(unit) => Reply::Int(clock.now_us().div_euclid(unit)),
        Err(r) => r,
    }
}

fn clock_set(clock: &Clock, args: &[Bytes]) -> Reply {
    match value_us(args) {
        Ok(us) => {
            clock.set_unix_us(us);
            Reply::ok()
        }
        Err(r) => r,
    }
}

fn clock_advance(clock: &Clock, args: &[Bytes]) -> Reply {
    match value_us(args) {
        Ok(us) if us >= 0 => {
            clock.advance(Duration::from_micros(us as u64));
            Reply::ok()
        }
        Ok(_) => Reply::err(crate::errors::THE_CLOCK_ONLY_MOVES_FORWARD_WITH),
        Err(r) => r,
    }
}

/// The table's handler for every REDLAB.CLOCK subcommand.
fn clock(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(clock_command(&e.clock, &call.args))
}

/// Parses `REDLAB.FAULT ADD` arguments (from index 2).
///
/// Match: `COMMAND name`, `KEY glob`, `SCRIPT sha|function`, `CLIENT-NAME n`, `CLIENT-ID id`.
/// Trigger: `TIMES n`, `EVERY n`, `AFTER n`, `PROBABILITY p SEED s`.
/// Action (exactly one): `ERROR "text"`, `CLOSE-BEFORE`, `CLOSE-AFTER`, `DELAY-US us`,
/// `DELAY ms`, `TRUNCATE bytes`, `STALL ms`, `FLUSH-SCRIPTS`, `ROLLBACK`.
pub fn parse_fault(a: &[bytes::Bytes]) -> Result<Fault, Reply> {
    let mut f = Fault::on_any();
    let mut action = false;
    let mut i = 0;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let num = |b: &[u8]| args::positive_or(b, errors::NOT_INTEGER).map(|n| n as u64);
    while i < a.len() {
        let word = args::lower(&a[i]);
        let val = a.get(i + 1);
        let needs_val = !matches!(
            word.as_str(),
            "close-before" | "close-after" | "flush-scripts" | "rollback"
        );
        if needs_val && val.is_none() {
            return Err(Reply::err(errors::SYNTAX));
        }
        let v = val.map(|b| &b[..]).unwrap_or(b"");
        match word.as_str() {
            "command" => f = f.command(&text(v)),
            "key" => f = f.key(&text(v)),
            "script" => f.script = Some(text(v)),
            "client-name" => f = f.client_name(&text(v)),
            "client-id" => f = f.client_id(num(v)?),
            "times" => f = f.times(num(v)?),
            "every" => f = f.every(num(v)?),
            "after" => f = f.after(num(v)?),
            "probability" => {
                let p = args::float(v)?;
                let seed = match (a.get(i + 2), a.get(i + 3)) {
                    (Some(w), Some(s)) if args::is(w, "seed") => {
                        i += 2;
                        num(s)?
                    }
                    _ => 1,
                };
                f = f.probability(p, seed);
            }
            "error" => {
                f = f.reply_error(&text(v));
                action = true;
            }
            "delay" => {
                f = f.delay(Duration::from_millis(num(v)?));
                action = true;
            }
            "delay-us" => {
                f = f.delay(Duration::from_micros(num(v)?));
                action = true;
            }
            "truncate" => {
                f = f.truncate_reply(num(v)? as usize);
                action = true;
            }
            "stall" => {
                f = f.stall(Duration::from_millis(num(v)?));
                action = true;
            }
            "close-before" => {
                f = f.close_before();
                action = true;
            }
            "close-after" => {
                f = f.close_after();
                action = true;
            }
            "flush-scripts" => {
                f = f.flush_scripts();
                action = true;
            }
            "rollback" => {
                f = f.rollback();
                action = true;
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        i += if needs_val { 2 } else { 1 };
    }
    if !action {
        return Err(Reply::err(crate::errors::REDLAB_FAULT_ADD_NEEDS_AN_ACTION));
    }
    Ok(f)
}

fn fault_add(e: &mut Engine, call: &mut Call) -> CmdResult {
    let f = parse_fault(&call.args[2..])?;
    Ok(Reply::Int(e.faults.add(f) as i64))
}

fn fault_list(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(Reply::Array(
        e.faults
            .list()
            .into_iter()
            .map(|(id, desc, fired)| Reply::bulk(format!("id={} fired={} {}", id, fired, desc)))
            .collect(),
    ))
}

fn fault_del(e: &mut Engine, call: &mut Call) -> CmdResult {
    let id = args::int(call.arg(2))?;
    Ok(Reply::Int(e.faults.remove(id as u64) as i64))
}

fn fault_clear(e: &mut Engine, _: &mut Call) -> CmdResult {
    e.faults.clear();
    Ok(Reply::ok())
}

fn fault_mark(e: &mut Engine, _: &mut Call) -> CmdResult {
    e.mark();
    Ok(Reply::ok())
}

fn fault_log(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(Reply::Array(
        e.faults
            .log()
            .into_iter()
            .map(|f| {
                Reply::bulk(format!(
                    "rule={} conn={} action={:?} command={}",
                    f.rule, f.conn, f.action, f.command
                ))
            })
            .collect(),
    ))
}

fn container(_: &mut Engine, _: &mut Call) -> CmdResult {
    Err(Reply::err(errors::SYNTAX))
}

const CTL: u32 = ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY | SKIP_MONITOR;

pub static COMMANDS: &[Command] = &[
    Command::new("redlab.clock", -2, CTL, "redlab", container).subcommands(&[
        Command::new("get", -2, CTL, "redlab", clock),
        Command::new("set", -3, CTL, "redlab", clock),
        Command::new("advance", -3, CTL, "redlab", clock),
        Command::new("freeze", 2, CTL, "redlab", clock),
        Command::new("resume", 2, CTL, "redlab", clock),
    ]),
    Command::new("redlab.fault", -2, CTL, "redlab", container).subcommands(&[
        Command::new("add", -3, CTL, "redlab", fault_add),
        Command::new("list", 2, CTL, "redlab", fault_list),
        Command::new("del", 3, CTL, "redlab", fault_del),
        Command::new("clear", 2, CTL, "redlab", fault_clear),
        Command::new("mark", 2, CTL, "redlab", fault_mark),
        Command::new("log", 2, CTL, "redlab", fault_log),
    ]),
    // The `Cluster` controls over the wire (cluster/wire_control.rs).
    Command::new(
        "redlab.cluster",
        -2,
        CTL,
        "redlab",
        crate::cluster::wire_control::redlab_cluster,
    ),
];

#[cfg(test)]
mod tests {
    use crate::reply::Reply;
    use crate::test_support::{engine, run, T0};

    fn time(e: &mut crate::engine::Engine) -> Reply {
        run(e, &["TIME"])
    }

    #[test]
    fn set_and_advance_take_microseconds_when_asked() {
        let (mut e, clock) = engine();
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "SET", "1700000000123456", "US"]),
            Reply::ok()
        );
        assert_eq!(clock.now_us(), 1_700_000_000_123_456);
        assert_eq!(
            time(&mut e),
            Reply::Array(vec![Reply::bulk("1700000000"), Reply::bulk("123456")])
        );
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "ADVANCE", "9", "us"]),
            Reply::ok()
        );
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "GET", "US"]),
            Reply::Int(1_700_000_000_123_465)
        );
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "GET"]),
            Reply::Int(1_700_000_000_123)
        );
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "ADVANCE", "2", "MS"]),
            Reply::ok()
        );
        assert_eq!(clock.now_us(), 1_700_000_000_125_465);
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "SET", &T0.to_string()]),
            Reply::ok()
        );
        assert_eq!(
            clock.now_us(),
            T0 * 1000,
            "without a unit the value is milliseconds, as before"
        );
    }

    #[test]
    fn clock_arguments_are_checked() {
        let (mut e, clock) = engine();
        let syntax = Reply::err(crate::errors::SYNTAX);
        assert_eq!(run(&mut e, &["REDLAB.CLOCK", "SET", "5", "NS"]), syntax);
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "SET", "5", "US", "US"]),
            syntax
        );
        assert_eq!(run(&mut e, &["REDLAB.CLOCK", "GET", "MS", "x"]), syntax);
        assert_eq!(
            run(&mut e, &["REDLAB.CLOCK", "ADVANCE", "x"]),
            Reply::err(crate::errors::NOT_INTEGER)
        );
        assert_eq!(
            run(
                &mut e,
                &["REDLAB.CLOCK", "SET", "9223372036854775807", "MS"]
            ),
            Reply::err(crate::errors::NOT_INTEGER)
        );
        assert!(run(&mut e, &["REDLAB.CLOCK", "ADVANCE", "-1", "US"]).is_error());
        assert_eq!(
            clock.now_ms(),
            T0,
            "a refused command leaves the clock alone"
        );
    }

    #[test]
    fn the_clock_answers_without_the_engine() {
        use super::clock_command;
        let clock = crate::clock::Clock::manual(T0);
        let args = |s: &[&str]| {
            s.iter()
                .map(|a| bytes::Bytes::copy_from_slice(a.as_bytes()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            clock_command(&clock, &args(&["redlab.clock", "advance", "1500", "us"])),
            Reply::ok()
        );
        assert_eq!(clock.now_us(), T0 * 1000 + 1500);
        assert_eq!(
            clock_command(&clock, &args(&["REDLAB.CLOCK", "GET"])),
            Reply::Int(T0 + 1)
        );
        assert_eq!(
            clock_command(&clock, &args(&["REDLAB.CLOCK", "SET"])),
            Reply::err(crate::errors::wrong_arity("redlab.clock|set"))
        );
        assert!(clock_command(&clock, &args(&["REDLAB.CLOCK", "NOPE"])).is_error());
        assert!(
            clock_command(&clock, &args(&["REDLAB.FAULT", "CLEAR"])).is_error(),
            "only the clock"
        );
    }

    #[test]
    fn time_inside_a_script_reads_the_clock_not_the_scripts_start() {
        let (mut e, clock) = engine();
        clock.set_unix_us(T0 * 1000 + 77);
        let r = run(&mut e, &["EVAL", "return redis.call('TIME')", "0"]);
        assert_eq!(
            r,
            Reply::Array(vec![Reply::bulk("1700000000"), Reply::bulk("77")])
        );
    }
}
