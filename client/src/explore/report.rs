//! The failure report: the interleaving as a person would draw it — a column per client, a
//! row per step with the command, its reply and the clock — then the invariant that broke,
//! the schedule string, how to replay it and whether it reproduced on real Redis.

use std::fmt;
use std::time::Duration;

use super::schedule::{client_letter, Schedule};
use crate::value::Value;

/// One row of a timeline: a client's command and its reply, or an event.
#[derive(Clone, Debug)]
pub struct Row {
    pub step: usize,
    /// Server time since the start, ms.
    pub clock_ms: i64,
    /// The client the row belongs to; None for an event that concerns everyone.
    pub client: Option<usize>,
    pub what: String,
    pub reply: String,
}

/// An invariant that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index of the invariant in the scenario (usize::MAX: a client panicked or looped).
    pub index: usize,
    pub invariant: String,
    pub message: String,
    /// Steps run when it was seen.
    pub step: usize,
}

impl Violation {
    pub(crate) fn new(index: usize, invariant: &str, message: String, step: usize) -> Violation {
        Violation {
            index,
            invariant: invariant.to_string(),
            message,
            step,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invariant broken: \"{}\" after step {}",
            self.invariant, self.step
        )?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

/// A recorded run.
#[derive(Clone, Debug)]
pub struct Timeline {
    pub clients: Vec<String>,
    pub rows: Vec<Row>,
    /// Each client's end: its return value, or crashed / unfinished.
    pub results: Vec<String>,
    /// What the failing invariant read, with the replies.
    pub invariant_reads: Vec<String>,
}

const CELL: usize = 72;

/// A client's column head: its letter, and its name when that says more.
fn head(i: usize, name: &str) -> String {
    if name.len() == 1 && name.starts_with(client_letter(i)) {
        name.to_string()
    } else {
        format!("{} {}", client_letter(i), name)
    }
}

fn clip(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
    out.push('…');
    out
}

impl fmt::Display for Timeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.clients.len();
        let cells: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                if r.reply.is_empty() {
                    r.what.clone()
                } else {
                    format!("{} -> {}", r.what, r.reply)
                }
            })
            .collect();
        let mut width = vec![0usize; n];
        for (i, name) in self.clients.iter().enumerate() {
            width[i] = head(i, name).chars().count().max(6);
        }
        for (r, c) in self.rows.iter().zip(&cells) {
            if let Some(i) = r.client {
                width[i] = width[i].max(c.chars().count().min(CELL));
            }
        }
        let clock = |ms: i64| format!("{} ms", ms);
        let cw = self
            .rows
            .iter()
            .map(|r| clock(r.clock_ms).len())
            .max()
            .unwrap_or(4)
            .max(5);
        write!(f, "{:>4} | {:>cw$}", "step", "clock", cw = cw)?;
        for (i, name) in self.clients.iter().enumerate() {
            write!(f, " | {:w$}", clip(&head(i, name), width[i]), w = width[i])?;
        }
        writeln!(f)?;
        write!(f, "{}-+-{}", "-".repeat(4), "-".repeat(cw))?;
        for w in &width {
            write!(f, "-+-{}", "-".repeat(*w))?;
        }
        writeln!(f)?;
        for (r, c) in self.rows.iter().zip(&cells) {
            write!(f, "{:>4} | {:>cw$}", r.step, clock(r.clock_ms), cw = cw)?;
            match r.client {
                Some(ci) => {
                    for (i, w) in width.iter().enumerate() {
                        let cell = if i == ci { clip(c, *w) } else { String::new() };
                        write!(f, " | {:w$}", cell, w = *w)?;
                    }
                    writeln!(f)?;
                }
                None => writeln!(f, " | ~~ {} ~~", c)?,
            }
        }
        for (i, r) in self.results.iter().enumerate() {
            writeln!(f, "{} -> {}", head(i, &self.clients[i]), r)?;
        }
        Ok(())
    }
}

/// One schedule run again, step by step.
#[derive(Clone, Debug)]
pub struct Run {
    /// The steps that actually ran (a replay that diverged stops early).
    pub schedule: Schedule,
    pub timeline: Timeline,
    pub violation: Option<Violation>,
    /// Why the run could not follow its schedule, if it could not.
    pub diverged: Option<String>,
    pub on_real_redis: bool,
}

impl Run {
    pub fn holds(&self) -> bool {
        self.violation.is_none() && self.diverged.is_none()
    }

    /// The replies of each step, as printed ("step 3: A SET k 150 -> OK").
    pub fn replies(&self) -> Vec<String> {
        self.timeline
            .rows
            .iter()
            .filter(|r| r.client.is_some())
            .map(|r| format!("{} -> {}", r.what, r.reply))
            .collect()
    }

    /// Whether this run broke the same invariant as `other`, at the same step.
    pub fn reproduces(&self, v: &Violation) -> bool {
        self.violation
            .as_ref()
            .is_some_and(|w| w.index == v.index && w.step == v.step)
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.timeline)?;
        if let Some(v) = &self.violation {
            writeln!(f, "{}", v)?;
            for read in &self.timeline.invariant_reads {
                writeln!(f, "  it read: {}", read)?;
            }
        }
        if let Some(d) = &self.diverged {
            writeln!(f, "diverged: {}", d)?;
        }
        writeln!(
            f,
            "schedule: {}{}",
            self.schedule,
            if self.on_real_redis {
                " (on real Redis)"
            } else {
                ""
            }
        )
    }
}

/// What the replay on a real redis-server showed.
#[derive(Clone, Debug)]
pub enum RealCheck {
    NotChecked,
    /// The same invariant broke at the same step.
    Reproduced(Box<Run>),
    NotReproduced(Box<Run>),
    /// The schedule cannot run there (it injects faults), or the server was unreachable.
    Unsupported(String),
}

/// A counterexample.
#[derive(Clone, Debug)]
pub struct Failure {
    pub violation: Violation,
    /// The shrunk schedule.
    pub schedule: Schedule,
    pub timeline: Timeline,
    /// The schedule as first found, before shrinking.
    pub found: Schedule,
    pub real: RealCheck,
    /// The engine seed the schedule ran with: random replies repeat only with it.
    pub seed: u64,
}

impl Failure {
    pub fn reproduced_on_real_redis(&self) -> bool {
        matches!(self.real, RealCheck::Reproduced(_))
    }

    /// Client commands in the counterexample (events not counted).
    pub fn commands(&self) -> usize {
        self.schedule.commands()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.timeline)?;
        writeln!(f, "{}", self.violation)?;
        for read in &self.timeline.invariant_reads {
            writeln!(f, "  it read: {}", read)?;
        }
        writeln!(
            f,
            "schedule: {}   (found as {}, shrunk to {} steps)",
            self.schedule,
            self.found,
            self.schedule.len()
        )?;
        writeln!(
            f,
            "replay: scenario.seed({seed}).replay(\"{s}\").in_process() or .on_real_redis(addr); or rerun the test with REDLAB_SEED={seed} REDLAB_SCHEDULE={s}",
            s = self.schedule,
            seed = self.seed
        )?;
        writeln!(f, "engine seed: {}", self.seed)?;
        match &self.real {
            RealCheck::NotChecked => writeln!(f, "real Redis: not checked (Scenario::real_redis)"),
            RealCheck::Reproduced(_) => writeln!(
                f,
                "real Redis: REPRODUCED (the same invariant broke at the same step)"
            ),
            RealCheck::NotReproduced(run) => {
                writeln!(f, "real Redis: did NOT reproduce; the run there:\n{}", run)
            }
            RealCheck::Unsupported(why) => writeln!(f, "real Redis: not replayed: {}", why),
        }
    }
}

/// The outcome of an exploration.
#[derive(Clone, Debug)]
pub struct Report {
    pub strategy: String,
    /// Schedules run (not counting shrinking and replays).
    pub schedules: u64,
    /// Steps (commands and events) run across those schedules.
    pub steps: u64,
    pub elapsed: Duration,
    pub failure: Option<Failure>,
    /// Schedules replayed on real Redis when everything held, and the first that failed there.
    pub real_replayed: usize,
    pub real_failed: Option<Box<Run>>,
}

impl Report {
    pub fn holds(&self) -> bool {
        self.failure.is_none() && self.real_failed.is_none()
    }

    /// Panics with the timeline, the schedule and how to replay it, unless every schedule held.
    #[track_caller]
    pub fn assert_holds(&self) {
        if !self.holds() {
            panic!("\n{}", self);
        }
    }

    /// The counterexample; panics when every schedule held (for suites proving a broken
    /// version is caught).
    #[track_caller]
    pub fn expect_failure(&self) -> &Failure {
        match &self.failure {
            Some(f) => f,
            None => panic!(
                "expected a counterexample, but every schedule held\n{}",
                self
            ),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "explored {} schedules ({} steps) with {} in {:.2?}",
            self.schedules, self.steps, self.strategy, self.elapsed
        )?;
        if let Some(fail) = &self.failure {
            write!(f, "{}", fail)?;
        } else {
            writeln!(f, "every invariant held")?;
        }
        if self.real_replayed > 0 {
            writeln!(f, "replayed {} of them on real Redis", self.real_replayed)?;
        }
        if let Some(run) = &self.real_failed {
            writeln!(f, "but on real Redis this schedule failed:\n{}", run)?;
        }
        Ok(())
    }
}

/// A command as the timeline prints it: long arguments (script bodies, SHAs, tokens) cut.
pub(crate) fn command_text(command: &[Vec<u8>]) -> String {
    let mut s = String::new();
    for (i, a) in command.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let text = String::from_utf8_lossy(a);
        let shown = if text.chars().count() > 14 {
            format!("{}…", text.chars().take(8).collect::<String>())
        } else {
            text.into_owned()
        };
        if shown.is_empty() || shown.contains(' ') {
            s.push_str(&format!("{:?}", shown));
        } else {
            s.push_str(&shown);
        }
    }
    s
}

/// A reply as the timeline prints it.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Int(n) => n.to_string(),
        Value::Bulk(b) => {
            let t = String::from_utf8_lossy(b);
            if t.chars().count() > 14 {
                format!("\"{}…\"", t.chars().take(8).collect::<String>())
            } else {
                format!("{:?}", t)
            }
        }
        Value::Status(s) => s.clone(),
        Value::Error { code, message } => format!("(error) {} {}", code, message),
        Value::Array(items) | Value::Set(items) | Value::Push(items) => {
            format!(
                "[{}]",
                items.iter().map(value_text).collect::<Vec<_>>().join(", ")
            )
        }
        Value::Map(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", value_text(k), value_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Double(d) => d.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::BigNumber(n) => n.clone(),
        Value::Verbatim { text, .. } => format!("{:?}", String::from_utf8_lossy(text)),
    }
}
