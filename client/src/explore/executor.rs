//! Runs one schedule: the logical clients' futures, polled by hand with a no-op waker, and
//! the target, stepped one command or event at a time in the order a chooser picks.
//!
//! Nothing here is concurrent: a client future runs until its connection parks a command,
//! and only the scheduler ever moves it on. That is what makes a schedule replayable.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::report::{command_text, value_text, Row, Violation};
use super::scenario::{ClientFuture, Outcome, Scenario};
use super::schedule::Choice;
use super::target::{Exec, Target, OBSERVER};
use super::transport::{lock, ParkedTransport, SharedSlot, Slot};
use super::view::View;
use crate::connection::Connection;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Runnable,
    /// Paused until this server time (ms since the start).
    Paused(i64),
    Blocked,
    Crashed,
    Done,
}

pub(crate) struct ClientRun {
    fut: Option<ClientFuture>,
    slot: SharedSlot,
    pub status: Status,
    pub result: Option<Box<dyn Outcome>>,
    pub crashed_at: Option<i64>,
    pub commands: usize,
}

/// Picks the next step.
pub(crate) trait Chooser {
    /// One of `enabled` (never empty; client commands first, then events), or a choice of
    /// its own (a replayed schedule), or None to stop the run here.
    fn choose(&mut self, step: usize, enabled: &[Choice], last: Option<u8>) -> Option<Choice>;
}

/// How a run ended.
pub(crate) struct RunOutcome {
    pub violation: Option<Violation>,
    /// The run could not follow its schedule, or the target failed.
    pub diverged: Option<String>,
    pub steps: usize,
}

/// One explorer: a target and the buffers reused from run to run.
pub(crate) struct Executor<'s> {
    pub sc: &'s Scenario,
    pub target: Box<dyn Target>,
    pub clients: Vec<ClientRun>,
    pub executed: Vec<Choice>,
    enabled: Vec<Choice>,
    scratch: Vec<Option<Box<dyn Any>>>,
    pause_used: Vec<bool>,
    crash_used: Vec<bool>,
    fault_used: Vec<bool>,
    clock_used: usize,
    preemptions: usize,
    last: Option<u8>,
    step: usize,
    /// Kept only when a run is recorded for a report.
    pub rows: Option<Vec<Row>>,
    pub invariant_log: Vec<String>,
    /// A client panicked or misbehaved during the last step; reported by the next check.
    panicked: Option<Violation>,
}

impl<'s> Executor<'s> {
    pub fn new(sc: &'s Scenario, target: Box<dyn Target>) -> Executor<'s> {
        Executor {
            sc,
            target,
            clients: Vec::new(),
            executed: Vec::new(),
            enabled: Vec::new(),
            scratch: Vec::new(),
            pause_used: Vec::new(),
            crash_used: Vec::new(),
            fault_used: Vec::new(),
            clock_used: 0,
            preemptions: 0,
            last: None,
            step: 0,
            rows: None,
            invariant_log: Vec::new(),
            panicked: None,
        }
    }

    /// Runs one schedule from a fresh server; `record` keeps the timeline.
    pub fn run(&mut self, chooser: &mut dyn Chooser, record: bool) -> RunOutcome {
        let sc = self.sc;
        self.executed.clear();
        self.clients.clear();
        self.scratch.clear();
        self.scratch.resize_with(sc.invariants.len(), || None);
        self.pause_used.clear();
        self.pause_used.resize(sc.pauses.len(), false);
        self.crash_used.clear();
        self.crash_used.resize(sc.crashes.len(), false);
        self.fault_used.clear();
        self.fault_used.resize(sc.faults.len(), false);
        self.clock_used = 0;
        self.preemptions = 0;
        self.last = None;
        self.step = 0;
        self.rows = record.then(Vec::new);
        self.invariant_log.clear();
        self.panicked = None;
        let end = |violation, diverged, steps| RunOutcome {
            violation,
            diverged,
            steps,
        };

        if let Err(e) = self.target.reset(sc.clients.len()) {
            return end(None, Some(format!("the target failed: {}", e)), 0);
        }
        for command in &sc.setup {
            if let Exec::Closed(why) = self.target.exec(OBSERVER, command.clone()) {
                return end(None, Some(format!("setup failed: {}", why)), 0);
            }
        }
        for f in &sc.before_each {
            f();
        }
        for (_, factory) in &sc.clients {
            let slot: SharedSlot = Arc::new(Mutex::new(Slot::default()));
            let conn = Connection::new(Arc::new(ParkedTransport { slot: slot.clone() }));
            let fut = factory(conn);
            self.clients.push(ClientRun {
                fut: Some(fut),
                slot,
                status: Status::Runnable,
                result: None,
                crashed_at: None,
                commands: 0,
            });
        }
        for i in 0..self.clients.len() {
            if let Some(v) = self.poll(i) {
                return end(Some(v), None, 0);
            }
        }

        loop {
            if self.step >= sc.max_steps {
                let v = Violation::new(
                    usize::MAX,
                    "step limit",
                    format!(
                        "more than {} steps: does a client loop forever?",
                        sc.max_steps
                    ),
                    self.step,
                );
                return end(Some(v), None, self.step);
            }
            self.wake();
            self.collect_enabled();
            if !self.enabled.first().is_some_and(Choice::is_run) {
                // Nobody can send: let paused clients' time pass, or the run is over.
                let wake_at = self
                    .clients
                    .iter()
                    .filter_map(|c| {
                        if let Status::Paused(t) = c.status {
                            Some(t)
                        } else {
                            None
                        }
                    })
                    .min();
                match wake_at {
                    Some(t) => {
                        let now = self.target.elapsed_ms();
                        let ms = (t - now).max(0) as u64;
                        self.target.advance(ms);
                        self.row(
                            None,
                            format!("clock +{} ms (a pause ends)", ms),
                            String::new(),
                        );
                        continue;
                    }
                    None => break,
                }
            }
            let Some(choice) = chooser.choose(self.step, &self.enabled, self.last) else {
                return end(
                    None,
                    Some(format!("the schedule stopped at step {}", self.step + 1)),
                    self.step,
                );
            };
            if let Err(why) = self.apply(choice) {
                return end(None, Some(why), self.step);
            }
            if let Some(v) = self.check(false) {
                return end(Some(v), None, self.step);
            }
        }
        let v = self.check(true);
        end(v, None, self.step)
    }

    /// Resumes paused clients whose time has come and blocked ones that got their reply.
    fn wake(&mut self) {
        let now = self.target.elapsed_ms();
        for i in 0..self.clients.len() {
            match self.clients[i].status {
                Status::Paused(t) if now >= t => self.clients[i].status = Status::Runnable,
                Status::Blocked => {
                    if let Some(v) = self.target.poll_blocked(i) {
                        if let Some(rows) = &mut self.rows {
                            rows.push(Row {
                                step: self.step,
                                clock_ms: now,
                                client: Some(i),
                                what: "(unblocked)".into(),
                                reply: value_text(&v),
                            });
                        }
                        lock(&self.clients[i].slot).reply(v);
                        self.clients[i].status = Status::Runnable;
                        if let Some(v) = self.poll(i) {
                            self.pending_panic(v);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn collect_enabled(&mut self) {
        let sc = self.sc;
        self.enabled.clear();
        let last_runnable = self
            .last
            .is_some_and(|l| self.clients[l as usize].status == Status::Runnable);
        let bounded = sc.preemption_bound.is_some_and(|b| self.preemptions >= b) && last_runnable;
        for (i, c) in self.clients.iter().enumerate() {
            if c.status == Status::Runnable && (!bounded || self.last == Some(i as u8)) {
                self.enabled.push(Choice::Run(i as u8));
            }
        }
        if self.enabled.is_empty() {
            return;
        }
        if self.clock_used < sc.max_clock_steps {
            for &ms in &sc.clock_steps {
                self.enabled.push(Choice::Advance(ms));
            }
        }
        for (k, &(i, ms)) in sc.pauses.iter().enumerate() {
            if !self.pause_used[k] && self.clients[i as usize].status == Status::Runnable {
                self.enabled.push(Choice::Pause(i, ms));
            }
        }
        for (k, &i) in sc.crashes.iter().enumerate() {
            if !self.crash_used[k]
                && matches!(
                    self.clients[i as usize].status,
                    Status::Runnable | Status::Paused(_) | Status::Blocked
                )
            {
                self.enabled.push(Choice::Crash(i));
            }
        }
        for (j, used) in self.fault_used.iter().enumerate() {
            if !used {
                self.enabled.push(Choice::Fault(j as u8));
            }
        }
    }

    fn alive(&self, i: u8) -> Option<&ClientRun> {
        self.clients
            .get(i as usize)
            .filter(|c| !matches!(c.status, Status::Done | Status::Crashed))
    }

    fn apply(&mut self, choice: Choice) -> Result<(), String> {
        let now = self.target.elapsed_ms();
        match choice {
            Choice::Run(i) => {
                let ok = self
                    .clients
                    .get(i as usize)
                    .is_some_and(|c| c.status == Status::Runnable);
                if !ok {
                    return Err(format!(
                        "step {}: client {} cannot send now",
                        self.step + 1,
                        super::schedule::client_letter(i as usize)
                    ));
                }
                let i = i as usize;
                if let Some(l) = self.last {
                    if l as usize != i && self.clients[l as usize].status == Status::Runnable {
                        self.preemptions += 1;
                    }
                }
                self.last = Some(i as u8);
                let Some(command) = lock(&self.clients[i].slot).take_next() else {
                    return Err(format!("client {} has no command parked", i));
                };
                let text = self.rows.is_some().then(|| command_text(&command));
                self.clients[i].commands += 1;
                let exec = self.target.exec(i, command);
                let reply = match &exec {
                    Exec::Reply(v) => self.rows.is_some().then(|| value_text(v)),
                    Exec::Closed(why) => Some(format!("(connection closed: {})", why)),
                    Exec::Blocked => Some("(blocked)".into()),
                };
                if let (Some(rows), Some(text)) = (&mut self.rows, text) {
                    rows.push(Row {
                        step: self.step + 1,
                        clock_ms: now,
                        client: Some(i),
                        what: text,
                        reply: reply.unwrap_or_default(),
                    });
                }
                match exec {
                    Exec::Reply(v) => {
                        let done = {
                            let mut s = lock(&self.clients[i].slot);
                            s.reply(v);
                            !s.waiting
                        };
                        if done {
                            if let Some(v) = self.poll(i) {
                                // A panicking client is reported through the next check.
                                self.pending_panic(v);
                            }
                        }
                    }
                    Exec::Closed(why) => {
                        lock(&self.clients[i].slot).close(&why);
                        if let Some(v) = self.poll(i) {
                            self.pending_panic(v);
                        }
                    }
                    Exec::Blocked => self.clients[i].status = Status::Blocked,
                }
            }
            Choice::Advance(ms) => {
                self.clock_used += 1;
                self.target.advance(ms as u64);
                self.row(None, format!("clock +{} ms", ms), String::new());
            }
            Choice::Pause(i, ms) => {
                if self.alive(i).is_none() {
                    return Err(format!(
                        "step {}: cannot pause a finished client",
                        self.step + 1
                    ));
                }
                if let Some(k) = self.sc.pauses.iter().position(|&(c, m)| c == i && m == ms) {
                    self.pause_used[k] = true;
                }
                self.clients[i as usize].status = Status::Paused(now + ms as i64);
                self.row(
                    Some(i as usize),
                    format!("(paused {} ms)", ms),
                    String::new(),
                );
            }
            Choice::Crash(i) => {
                if self.alive(i).is_none() {
                    return Err(format!(
                        "step {}: cannot crash a finished client",
                        self.step + 1
                    ));
                }
                if let Some(k) = self.sc.crashes.iter().position(|&c| c == i) {
                    self.crash_used[k] = true;
                }
                let c = &mut self.clients[i as usize];
                c.status = Status::Crashed;
                c.crashed_at = Some(now);
                c.fut = None;
                lock(&c.slot).close("the client crashed");
                self.target.crash(i as usize);
                self.row(Some(i as usize), "(crashed)".into(), String::new());
            }
            Choice::Fault(j) => {
                let Some(fault) = self.sc.faults.get(j as usize) else {
                    return Err(format!("step {}: no fault {}", self.step + 1, j));
                };
                if !self.target.add_fault(fault) {
                    return Err("faults cannot be injected into a real redis-server".into());
                }
                self.fault_used[j as usize] = true;
                self.row(
                    None,
                    format!("fault added: {}", fault.describe()),
                    String::new(),
                );
            }
        }
        self.executed.push(choice);
        self.step += 1;
        Ok(())
    }

    fn row(&mut self, client: Option<usize>, what: String, reply: String) {
        let clock_ms = self.target.elapsed_ms();
        let step = self.step + 1;
        if let Some(rows) = &mut self.rows {
            rows.push(Row {
                step,
                clock_ms,
                client,
                what,
                reply,
            });
        }
    }

    fn pending_panic(&mut self, v: Violation) {
        self.panicked = Some(v);
    }

    /// Polls a client until it parks a command or finishes; a panic becomes a violation.
    fn poll(&mut self, i: usize) -> Option<Violation> {
        let c = &mut self.clients[i];
        let fut = c.fut.as_mut()?;
        let mut cx = Context::from_waker(Waker::noop());
        match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(r)) => {
                c.result = Some(r);
                c.status = Status::Done;
                c.fut = None;
                None
            }
            Ok(Poll::Pending) => {
                if lock(&c.slot).waiting {
                    c.status = Status::Runnable;
                    return None;
                }
                c.status = Status::Done;
                c.fut = None;
                Some(Violation::new(
                    usize::MAX,
                    "client waits on something else",
                    format!(
                        "client {} awaited something other than its connection (a timer, a channel?); the explorer schedules connection commands only",
                        self.sc.client_name(i)
                    ),
                    self.step,
                ))
            }
            Err(panic) => {
                c.status = Status::Done;
                c.fut = None;
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(no message)".into());
                Some(Violation::new(
                    usize::MAX,
                    "client panicked",
                    format!("client {} panicked: {}", self.sc.client_name(i), msg),
                    self.step,
                ))
            }
        }
    }

    /// Checks every invariant; the first that fails is the violation.
    fn check(&mut self, is_final: bool) -> Option<Violation> {
        if let Some(v) = self.panicked.take() {
            return Some(v);
        }
        let sc = self.sc;
        for (k, (name, f)) in sc.invariants.iter().enumerate() {
            let record = self.rows.is_some();
            if record {
                self.invariant_log.clear();
            }
            let mut view = View {
                target: &mut *self.target,
                scenario: sc,
                clients: &self.clients,
                scratch: &mut self.scratch[k],
                is_final,
                step: self.step,
                log: record.then_some(&mut self.invariant_log),
            };
            if let Err(message) = f(&mut view) {
                return Some(Violation::new(k, name, message, self.step));
            }
        }
        None
    }
}
