//! Runs one schedule: the logical clients' futures, polled by hand with a no-op waker, and
//! the target, stepped one command or event at a time in the order a chooser picks.
//!
//! Nothing here is concurrent: a client future runs until its connection parks a command,
//! and only the scheduler ever moves it on. That is what makes a schedule replayable.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use redlab_server::Fork;

use super::report::{command_text, value_text, Row, Violation};
use super::scenario::{ClientFuture, Outcome, Scenario};
use super::schedule::Choice;
use super::strategy::Dfs;
use super::target::{Exec, Target};
use super::transport::{lock, ParkedTransport, SharedSlot, Slot};
use super::tree::{State, Tree, NONE};
use super::vclock::{VirtualClock, NO_TIMER_LIMIT};
use super::view::View;
use crate::connection::Connection;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Runnable,
    /// Paused until this server time (ms since the start).
    Paused(i64),
    Blocked,
    /// Awaiting a timer (or something else that is not its connection).
    Sleeping,
    /// Its command ran; the reply reaches it at this virtual time (ms since the start).
    Waiting(i64),
    Crashed,
    Done,
}

/// A reply on its way to a client (`Choice::Delay`).
struct Held {
    client: usize,
    batch_no: u64,
    index: usize,
    at: i64,
    value: Value,
}

pub(crate) struct ClientRun {
    fut: Option<ClientFuture>,
    slot: SharedSlot,
    pub status: Status,
    pub result: Option<Box<dyn Outcome>>,
    pub crashed_at: Option<i64>,
    pub commands: usize,
    /// The command of a Blocked client: (batch, index).
    blocked_on: Option<(u64, usize)>,
}

/// Picks the next step.
pub(crate) trait Chooser {
    /// One of `enabled` (never empty; client commands first, then events), or a choice of
    /// its own (a replayed schedule), or None to stop the run here.
    fn choose(&mut self, step: usize, enabled: &[Choice], last: Option<u8>) -> Option<Choice>;

    /// Whether the step just chosen has siblings still to run (exhaustive search): the
    /// state before it is worth keeping.
    fn alternatives_left(&self) -> bool {
        false
    }
}

/// Prefix sharing for exhaustive search: the server's state at the branch points of the
/// current path and the reply of every step on it. The next schedule resumes the server
/// at the deepest branch point it shares and replays the logical clients from the start,
/// feeding them the recorded replies: client futures cannot be cloned, but they are
/// deterministic, and running them costs far less than running their commands.
#[derive(Default)]
struct Share {
    /// (depth, the server's state before the step at that depth), shallowest first.
    forks: Vec<(usize, Fork)>,
    /// The reply each step of the current path got.
    replies: Vec<Value>,
    /// The choices of the current path, kept while a run starts again.
    prefix: Vec<Choice>,
    /// The current run keeps forks and replies.
    active: bool,
    /// The scenario did something a fork does not capture (time passed, a client blocked
    /// or panicked, an invariant kept state, an event): no sharing from here on.
    dead: bool,
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
    delay_used: Vec<bool>,
    /// The schedule failed over already (`Choice::Failover`, once per schedule).
    failover_used: bool,
    clock_used: usize,
    timer_used: usize,
    /// Time passages the run made on its own (nobody could send), for the step limit.
    idle_steps: usize,
    held: Vec<Held>,
    vclock: VirtualClock,
    /// Virtual ms already applied to the target's clock.
    synced_ms: i64,
    preemptions: usize,
    last: Option<u8>,
    step: usize,
    /// Kept only when a run is recorded for a report.
    pub rows: Option<Vec<Row>>,
    pub invariant_log: Vec<String>,
    /// A client panicked or misbehaved during the last step; reported by the next check.
    panicked: Option<Violation>,
    share: Share,
    /// The reply the next send takes instead of running its command (a replayed prefix).
    canned: Option<Value>,
    /// The schedules random walks and PCT have seen (see `tree`).
    tree: Tree,
    /// A walk is running (`run_walk`): what cannot be forked kills the tree.
    walking: bool,
    /// The tree node of the current step while a walk records, None when it does not.
    rec: Option<u32>,
    /// The reply the last step got, for the node it leads to.
    rec_reply: Option<Value>,
    /// The choices of the current walk through the tree, and the node at each depth.
    walk_path: Vec<Choice>,
    walk_nodes: Vec<u32>,
    /// Each client's transport, reused from run to run (`transport`).
    transports: Vec<Arc<ParkedTransport>>,
    /// For the next `start`: how many of each client's first commands will be replayed on
    /// recorded replies (`Slot::replayed`).
    replaying: Vec<usize>,
}

/// A walk that departs from the tree mid-way: the path's steps after the fork it resumed
/// from, then the choice the walk had already made at the departure node, then the walk's
/// own chooser.
struct Depart<'a> {
    follow: &'a [Choice],
    pos: usize,
    pending: Option<Choice>,
    inner: &'a mut dyn Chooser,
}

impl Chooser for Depart<'_> {
    fn choose(&mut self, step: usize, enabled: &[Choice], last: Option<u8>) -> Option<Choice> {
        if let Some(&c) = self.follow.get(self.pos) {
            self.pos += 1;
            return Some(c);
        }
        if let Some(c) = self.pending.take() {
            return Some(c);
        }
        self.inner.choose(step, enabled, last)
    }
}

/// Lock tokens drawn from the seed belong to explored schedules only.
impl Drop for Executor<'_> {
    fn drop(&mut self) {
        crate::patterns::lock::unseed_tokens();
    }
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
            delay_used: Vec::new(),
            failover_used: false,
            clock_used: 0,
            timer_used: 0,
            idle_steps: 0,
            held: Vec::new(),
            vclock: VirtualClock::new(),
            synced_ms: 0,
            preemptions: 0,
            last: None,
            step: 0,
            rows: None,
            invariant_log: Vec::new(),
            panicked: None,
            share: Share::default(),
            canned: None,
            tree: Tree::default(),
            walking: false,
            rec: None,
            rec_reply: None,
            walk_path: Vec::new(),
            walk_nodes: Vec::new(),
            transports: Vec::new(),
            replaying: Vec::new(),
        }
    }

    /// Whether the walk cache may serve this scenario: client steps only (no events,
    /// clock or timer steps), as for prefix sharing.
    fn walk_cacheable(&self) -> bool {
        let sc = self.sc;
        sc.clock_steps.is_empty()
            && sc.max_timer_steps == 0
            && sc.delays.is_empty()
            && sc.pauses.is_empty()
            && sc.crashes.is_empty()
            && sc.faults.is_empty()
            && sc.share_prefixes
            && !self.tree.dead
    }

    /// One schedule of a random walk or PCT, through the tree of schedules seen so far
    /// (see `tree`): nothing runs while the walk stays on known ground; where it leaves
    /// it, the server resumes from the deepest fork on the path, the clients replay on the
    /// recorded replies and the rest runs for real. `chooser` must pick among the enabled
    /// choices it is given. The same schedules, with the same outcomes, as `run`.
    pub fn run_walk(&mut self, chooser: &mut dyn Chooser) -> RunOutcome {
        if !self.walk_cacheable() {
            return self.run(chooser, false);
        }
        let mut path = std::mem::take(&mut self.walk_path);
        let mut nodes = std::mem::take(&mut self.walk_nodes);
        path.clear();
        nodes.clear();
        let mut node = self.tree.root();
        nodes.push(node);
        let mut last = None;
        // Down the known part of the tree.
        let mut enabled = std::mem::take(&mut self.enabled);
        let pending = loop {
            match self.tree.nodes[node as usize].state {
                State::Open => break None,
                State::Leaf => {
                    self.enabled = enabled;
                    return self.walk_done(path, nodes, false);
                }
                State::Branch => {}
            }
            self.tree.enabled_into(node, &mut enabled);
            let Some(c) = chooser.choose(path.len(), &enabled, last) else {
                self.enabled = enabled;
                return self.walk_done(path, nodes, true);
            };
            if let Choice::Run(i) = c {
                last = Some(i);
            }
            let next = enabled
                .iter()
                .position(|&e| e == c)
                .map_or(NONE, |k| self.tree.child_at(node, k));
            if next == NONE {
                break Some(c);
            }
            path.push(c);
            node = next;
            nodes.push(node);
        };
        self.enabled = enabled;
        let out = self.depart(&path, &nodes, pending, chooser);
        self.walk_path = path;
        self.walk_nodes = nodes;
        out
    }

    /// A walk that ended inside the known tree: on a leaf (the schedule seen before), or
    /// where the chooser stopped (`stopped`).
    fn walk_done(&mut self, path: Vec<Choice>, nodes: Vec<u32>, stopped: bool) -> RunOutcome {
        self.executed.clear();
        self.executed.extend_from_slice(&path);
        let steps = path.len();
        self.walk_path = path;
        self.walk_nodes = nodes;
        RunOutcome {
            violation: None,
            diverged: stopped.then(|| format!("the schedule stopped at step {}", steps + 1)),
            steps,
        }
    }

    /// Runs a walk from the tree's node `nodes.last()` (reached by `path`) on: resumes the
    /// server from the deepest fork on the path, replays the clients to there on recorded
    /// replies, runs the path's remaining steps and `pending` for real, then `chooser`.
    fn depart(
        &mut self,
        path: &[Choice],
        nodes: &[u32],
        pending: Option<Choice>,
        chooser: &mut dyn Chooser,
    ) -> RunOutcome {
        let from = (1..nodes.len())
            .rev()
            .find(|&d| self.tree.nodes[nodes[d] as usize].fork.is_some())
            .unwrap_or(0);
        self.walking = true;
        self.replay(&path[..from]);
        let early = if from == 0 {
            self.start(false, true)
        } else {
            let id = nodes[from];
            self.tree.touch(id);
            if let Some(fork) = &self.tree.nodes[id as usize].fork {
                self.target.resume(fork);
            }
            self.start(false, false)
        };
        if let Some(early) = early {
            self.walking = false;
            return early;
        }
        for (k, &choice) in path[..from].iter().enumerate() {
            self.wake();
            // Every step into a recorded node has its reply; without one the step could
            // not be replayed (its command was not built: `Slot::replayed`).
            self.canned = self.tree.reply(nodes[k + 1]);
            let replayed = match self.canned {
                Some(_) => self.apply(choice),
                None => Err(String::new()),
            };
            self.canned = None;
            if replayed.is_err() || self.panicked.is_some() || self.executed.len() != k + 1 {
                // The clients did not retrace their steps: run this schedule from scratch
                // and use the tree no more.
                self.tree.kill();
                self.walking = false;
                let mut again = Depart {
                    follow: path,
                    pos: 0,
                    pending,
                    inner: chooser,
                };
                return self.run(&mut again, false);
            }
        }
        self.rec = (!self.tree.dead).then_some(nodes[from]);
        let mut rest = Depart {
            follow: &path[from..],
            pos: 0,
            pending,
            inner: chooser,
        };
        let out = self.steps(&mut rest);
        self.rec = None;
        self.rec_reply = None;
        self.walking = false;
        // An invariant that keeps state between steps (`View::scratch`) has no fork of it.
        if self.scratch.iter().any(Option::is_some) {
            self.tree.kill();
        }
        out
    }

    /// The walk did something a fork cannot bring back: the tree is dropped.
    fn drop_tree(&mut self) {
        if self.walking {
            self.tree.kill();
            self.rec = None;
        }
    }

    /// The next schedule of exhaustive search, sharing the server's work on the prefix it
    /// has in common with the last one (see `Share`) when the scenario allows it: client
    /// steps only (no events, clock or timer steps), an in-process target.
    pub fn run_dfs(&mut self, dfs: &mut Dfs) -> RunOutcome {
        let sc = self.sc;
        let plain = sc.clock_steps.is_empty()
            && sc.max_timer_steps == 0
            && sc.delays.is_empty()
            && sc.pauses.is_empty()
            && sc.crashes.is_empty()
            && sc.faults.is_empty()
            && sc.share_prefixes;
        if !plain || self.share.dead {
            self.share = Share {
                dead: true,
                ..Share::default()
            };
            return self.run(dfs, false);
        }
        let from = dfs.diverged_at();
        while self.share.forks.last().is_some_and(|f| f.0 > from) {
            self.share.forks.pop();
        }
        let depth = self.share.forks.last().map_or(0, |f| f.0);
        if depth == 0 {
            self.share.active = true;
            let out = self.run(dfs, false);
            return self.after_shared(out);
        }
        let mut prefix = std::mem::take(&mut self.share.prefix);
        prefix.clear();
        prefix.extend_from_slice(&self.executed[..depth]);
        if let Some((_, fork)) = self.share.forks.last() {
            self.target.resume(fork);
        }
        self.share.active = true;
        self.replay(&prefix);
        if let Some(early) = self.start(false, false) {
            self.share.prefix = prefix;
            return self.after_shared(early);
        }
        for (k, &choice) in prefix.iter().enumerate() {
            self.wake();
            self.canned = Some(self.share.replies[k].clone());
            let replayed = self.apply(choice);
            self.canned = None;
            if replayed.is_err()
                || self.panicked.is_some()
                || self.share.dead
                || self.executed.len() != k + 1
            {
                // The clients did not retrace their steps: not deterministic. Run the
                // schedule from scratch and share nothing more.
                self.share = Share {
                    dead: true,
                    ..Share::default()
                };
                dfs.resume_at(0);
                return self.run(dfs, false);
            }
        }
        self.share.prefix = prefix;
        dfs.resume_at(depth);
        let out = self.steps(dfs);
        self.after_shared(out)
    }

    fn after_shared(&mut self, out: RunOutcome) -> RunOutcome {
        self.share.active = false;
        // An invariant that keeps state between steps (`View::scratch`) has no fork of it.
        if self.scratch.iter().any(Option::is_some) {
            self.unshare();
        }
        out
    }

    /// This run did something a fork cannot bring back: no more sharing.
    fn unshare(&mut self) {
        self.drop_tree();
        if self.share.active || !self.share.forks.is_empty() {
            self.share = Share {
                dead: true,
                ..Share::default()
            };
        }
    }

    /// Runs one schedule from a fresh server; `record` keeps the timeline.
    pub fn run(&mut self, chooser: &mut dyn Chooser, record: bool) -> RunOutcome {
        if let Some(early) = self.start(record, true) {
            return early;
        }
        self.steps(chooser)
    }

    /// The next `start` replays `prefix` on recorded replies: each client's commands in it
    /// are answered without being run, so they need not be built (`Slot::replayed`).
    fn replay(&mut self, prefix: &[Choice]) {
        self.replaying.clear();
        self.replaying.resize(self.sc.clients.len(), 0);
        for c in prefix {
            if let Choice::Run(i) | Choice::Delay(i, _) = *c {
                if let Some(n) = self.replaying.get_mut(i as usize) {
                    *n += 1;
                }
            }
        }
    }

    /// Starts a run: the executor's state, the server (when `reset_target`; otherwise the
    /// caller has put it where the run starts), and the clients, polled to their first
    /// command. Some(outcome) when the run ended there.
    fn start(&mut self, record: bool, reset_target: bool) -> Option<RunOutcome> {
        let sc = self.sc;
        // Taken first, so that no later start (after an early return here) inherits it.
        let replaying = std::mem::take(&mut self.replaying);
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
        self.delay_used.clear();
        self.delay_used.resize(sc.delays.len(), false);
        self.failover_used = false;
        self.clock_used = 0;
        self.timer_used = 0;
        self.idle_steps = 0;
        self.held.clear();
        self.synced_ms = 0;
        self.vclock.reset(sc.clients.len());
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

        if reset_target {
            if let Err(e) = self.target.reset(sc.clients.len(), &sc.setup) {
                return Some(end(None, Some(format!("the target failed: {}", e)), 0));
            }
        }
        for f in &sc.before_each {
            f();
        }
        crate::patterns::lock::seed_tokens(sc.engine_seed());
        for (k, (_, factory)) in sc.clients.iter().enumerate() {
            let transport = self.transport(k);
            lock(&transport.slot).replayed = replaying.get(k).copied().unwrap_or(0);
            let slot = transport.slot.clone();
            let conn = Connection::parked(transport);
            let fut = factory(conn);
            self.clients.push(ClientRun {
                fut: Some(fut),
                slot,
                status: Status::Runnable,
                result: None,
                crashed_at: None,
                commands: 0,
                blocked_on: None,
            });
        }
        self.replaying = replaying;
        self.replaying.clear();
        for i in 0..self.clients.len() {
            if let Some(v) = self.poll(i) {
                return Some(end(Some(v), None, 0));
            }
        }
        None
    }

    /// Client `k`'s transport for a new run: the last run's, emptied, when nothing holds
    /// it any more (its futures are dropped), so that a run does not allocate two shared
    /// cells and their queues per client again; a new one when a client kept a connection.
    fn transport(&mut self, k: usize) -> Arc<ParkedTransport> {
        let fresh = || {
            Arc::new(ParkedTransport {
                slot: Arc::new(Mutex::new(Slot::default())),
            })
        };
        match self.transports.get_mut(k) {
            Some(t) if Arc::strong_count(t) == 1 && Arc::strong_count(&t.slot) == 1 => {
                lock(&t.slot).reset();
            }
            Some(t) => *t = fresh(),
            None => self.transports.push(fresh()),
        }
        self.transports[k].clone()
    }

    /// Runs steps until the schedule ends.
    fn steps(&mut self, chooser: &mut dyn Chooser) -> RunOutcome {
        let sc = self.sc;
        let end = |violation, diverged, steps| RunOutcome {
            violation,
            diverged,
            steps,
        };
        loop {
            if self.step + self.idle_steps >= sc.max_steps {
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
                // Nobody can send: let time pass to the next timer, the end of a pause or a
                // reply's arrival, or the run is over.
                let sleeping = self.clients.iter().any(|c| c.status == Status::Sleeping);
                if self.next_deadline().is_none() && !sleeping {
                    break;
                }
                self.idle_steps += 1;
                self.unshare();
                if let Some(v) = self.pass_time("time passes") {
                    return end(Some(v), None, self.step);
                }
                continue;
            }
            if let Some(node) = self.rec {
                self.record_node(node);
            }
            let Some(choice) = chooser.choose(self.step, &self.enabled, self.last) else {
                return end(
                    None,
                    Some(format!("the schedule stopped at step {}", self.step + 1)),
                    self.step,
                );
            };
            let k = self.enabled.iter().position(|&e| e == choice);
            if self.share.active
                && self.step > 0
                && chooser.alternatives_left()
                && self.share.forks.last().is_none_or(|f| f.0 < self.step)
            {
                if let Some(fork) = self.target.fork() {
                    self.share.forks.push((self.step, fork));
                }
            }
            if let Err(why) = self.apply(choice) {
                return end(None, Some(why), self.step);
            }
            if let Some(node) = self.rec {
                let reply = self.rec_reply.take();
                self.rec = k.and_then(|k| self.tree.child(node, k, reply));
            }
            if let Some(v) = self.check(false) {
                return end(Some(v), None, self.step);
            }
        }
        let v = self.check(true);
        if let (Some(node), None) = (self.rec, &v) {
            self.tree.leaf(node);
        }
        end(v, None, self.step)
    }

    /// A walk reached tree node `node` on a real run: records what is enabled, and a fork
    /// of the server where the node branches.
    fn record_node(&mut self, node: u32) {
        if !self.tree.visit(node, &self.enabled) {
            // Another set of choices than last time here: not deterministic.
            self.drop_tree();
            return;
        }
        if self.tree.wants_fork(node) {
            if let Some(fork) = self.target.fork() {
                self.tree.keep_fork(node, fork);
            }
        }
    }

    /// The earliest end of a pause or arrival of a held reply, in virtual ms.
    fn next_deadline(&self) -> Option<i64> {
        let paused = self.clients.iter().filter_map(|c| match c.status {
            Status::Paused(t) => Some(t),
            _ => None,
        });
        paused.chain(self.held.iter().map(|h| h.at)).min()
    }

    /// Lets virtual time run to the next timed event (a client's timer, the end of a pause,
    /// a held reply's arrival) and applies it to the server's clock. A client that sleeps
    /// while no timer is set awaits something the explorer cannot drive: a violation.
    fn pass_time(&mut self, label: &str) -> Option<Violation> {
        let now = self.vclock.elapsed_ms();
        let deadline = self.next_deadline();
        let limit = deadline.map_or(NO_TIMER_LIMIT, |t| {
            Duration::from_millis((t - now).max(0) as u64)
        });
        let fired = self.vclock.run_to_next_timer(limit);
        self.sync_clock();
        let passed = self.vclock.elapsed_ms() - now;
        if !fired && deadline.is_none() {
            let who = self
                .clients
                .iter()
                .position(|c| c.status == Status::Sleeping)
                .map_or("?", |i| self.sc.client_name(i));
            return Some(Violation::new(
                usize::MAX,
                "client waits on something else",
                format!(
                    "client {} awaits neither its connection nor a timer (a channel, a spawned task, real I/O?); the explorer drives connection commands and tokio timers only",
                    who
                ),
                self.step,
            ));
        }
        if self.rows.is_some() {
            let woke: Vec<String> = (0..self.clients.len())
                .filter(|&i| self.vclock.woken(i))
                .map(|i| self.sc.client_name(i).to_string())
                .collect();
            let what = if woke.is_empty() {
                format!("{}: +{} ms", label, passed)
            } else {
                format!("{}: +{} ms (timer of {})", label, passed, woke.join(", "))
            };
            self.row(None, what, String::new());
        }
        None
    }

    /// Moves the server clock to the virtual clock.
    fn sync_clock(&mut self) {
        let v = self.vclock.elapsed_ms();
        if v > self.synced_ms {
            self.target.advance((v - self.synced_ms) as u64);
            self.synced_ms = v;
        }
    }

    /// Moves virtual time and the server clock by `ms` (a clock step, a pause's end).
    fn advance_both(&mut self, ms: u64) {
        self.vclock.advance(ms);
        self.sync_clock();
    }

    /// Delivers held replies that arrived, polls clients whose timer fired, resumes paused
    /// clients whose time has come and blocked ones that got their reply.
    fn wake(&mut self) {
        let now = self.vclock.elapsed_ms();
        let mut k = 0;
        while k < self.held.len() {
            if self.held[k].at > now {
                k += 1;
                continue;
            }
            let h = self.held.swap_remove(k);
            let text = self.rows.is_some().then(|| value_text(&h.value));
            let delivered = lock(&self.clients[h.client].slot).reply(h.batch_no, h.index, h.value);
            if let Some(text) = text {
                let what = if delivered.is_some() {
                    "(the reply arrives)"
                } else {
                    "(a late reply, dropped: nobody awaits it)"
                };
                self.row(Some(h.client), what.into(), text);
            }
            if delivered == Some(true) {
                if let Some(v) = self.poll(h.client) {
                    self.pending_panic(v);
                }
            } else {
                self.settle(h.client);
            }
        }
        for i in 0..self.clients.len() {
            if matches!(
                self.clients[i].status,
                Status::Runnable | Status::Sleeping | Status::Waiting(_)
            ) && self.vclock.woken(i)
            {
                if let Some(v) = self.poll(i) {
                    self.pending_panic(v);
                }
            }
        }
        for i in 0..self.clients.len() {
            match self.clients[i].status {
                Status::Paused(t) if now >= t => {
                    self.clients[i].status = Status::Runnable;
                    if self.vclock.woken(i) {
                        if let Some(v) = self.poll(i) {
                            self.pending_panic(v);
                        }
                    }
                }
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
                        if let Some((no, index)) = self.clients[i].blocked_on.take() {
                            lock(&self.clients[i].slot).reply(no, index, v);
                        }
                        self.clients[i].status = Status::Runnable;
                        if let Some(v) = self.poll(i) {
                            self.pending_panic(v);
                        }
                        self.settle(i);
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
        if self.timer_used < sc.max_timer_steps
            && (!self.held.is_empty() || self.clients.iter().any(|c| c.status == Status::Sleeping))
        {
            self.enabled.push(Choice::Timer);
        }
        for (k, &(i, ms)) in sc.delays.iter().enumerate() {
            if !self.delay_used[k] && self.clients[i as usize].status == Status::Runnable {
                self.enabled.push(Choice::Delay(i, ms));
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
                    Status::Runnable
                        | Status::Paused(_)
                        | Status::Blocked
                        | Status::Sleeping
                        | Status::Waiting(_)
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
        if sc.replica && self.target.unreplicated() > 0 {
            self.enabled.push(Choice::Replicate);
        }
        if sc.failover && !self.failover_used {
            self.enabled.push(Choice::Failover);
        }
    }

    fn alive(&self, i: u8) -> Option<&ClientRun> {
        self.clients
            .get(i as usize)
            .filter(|c| !matches!(c.status, Status::Done | Status::Crashed))
    }

    /// Client `i` sends its next command; with `delay`, its reply is held back that long.
    fn send(&mut self, i: u8, delay: Option<u32>) -> Result<(), String> {
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
        let next = lock(&self.clients[i].slot).take_next();
        let Some((batch_no, index, command)) = next else {
            return Err(format!("client {} has no command parked", i));
        };
        let text = self.rows.is_some().then(|| command_text(&command));
        self.clients[i].commands += 1;
        // Read for the timeline only (a virtual call per step otherwise).
        let clock_ms = text.as_ref().map_or(0, |_| self.target.elapsed_ms());
        let canned = self.canned.take();
        let replayed = canned.is_some();
        let exec = match canned {
            Some(v) => Exec::Reply(v),
            None => self.target.exec(i, &command),
        };
        lock(&self.clients[i].slot).recycle(command);
        if self.rec.is_some() && !replayed {
            match (&exec, delay) {
                (Exec::Reply(v), None) => self.rec_reply = Some(v.clone()),
                _ => self.drop_tree(),
            }
        }
        if self.share.active && !replayed {
            match (&exec, delay) {
                (Exec::Reply(v), None) => {
                    self.share.replies.truncate(self.step);
                    self.share.replies.push(v.clone());
                }
                _ => self.unshare(),
            }
        }
        let reply = match (&exec, delay) {
            (Exec::Reply(v), Some(ms)) => self
                .rows
                .is_some()
                .then(|| format!("(reply held {} ms: {})", ms, value_text(v))),
            (Exec::Reply(v), None) => self.rows.is_some().then(|| value_text(v)),
            (Exec::Closed(why), _) => Some(format!("(connection closed: {})", why)),
            (Exec::Blocked, _) => Some("(blocked)".into()),
        };
        if let (Some(rows), Some(text)) = (&mut self.rows, text) {
            rows.push(Row {
                step: self.step + 1,
                clock_ms,
                client: Some(i),
                what: text,
                reply: reply.unwrap_or_default(),
            });
        }
        match exec {
            Exec::Reply(v) if delay.is_some() => {
                let at = self.vclock.elapsed_ms() + delay.unwrap_or(0) as i64;
                self.held.push(Held {
                    client: i,
                    batch_no,
                    index,
                    at,
                    value: v,
                });
                self.settle(i);
            }
            Exec::Reply(v) => {
                let done = lock(&self.clients[i].slot).reply(batch_no, index, v);
                if done == Some(true) {
                    if let Some(v) = self.poll(i) {
                        // A panicking client is reported through the next check.
                        self.pending_panic(v);
                    }
                } else {
                    self.settle(i);
                }
            }
            Exec::Closed(why) => {
                lock(&self.clients[i].slot).close(&why);
                if let Some(v) = self.poll(i) {
                    self.pending_panic(v);
                }
            }
            Exec::Blocked => {
                self.clients[i].status = Status::Blocked;
                self.clients[i].blocked_on = Some((batch_no, index));
            }
        }
        Ok(())
    }

    fn apply(&mut self, choice: Choice) -> Result<(), String> {
        let now = self.vclock.elapsed_ms();
        if !choice.is_run() {
            self.unshare();
        }
        match choice {
            Choice::Run(i) => self.send(i, None)?,
            Choice::Delay(i, ms) => {
                if let Some(k) = self.sc.delays.iter().position(|&(c, m)| c == i && m == ms) {
                    self.delay_used[k] = true;
                }
                self.send(i, Some(ms))?;
            }
            Choice::Timer => {
                self.timer_used += 1;
                if let Some(v) = self.pass_time("timer") {
                    self.pending_panic(v);
                }
            }
            Choice::Advance(ms) => {
                self.clock_used += 1;
                self.advance_both(ms as u64);
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
                self.held.retain(|h| h.client != i as usize);
                let c = &mut self.clients[i as usize];
                c.status = Status::Crashed;
                c.crashed_at = Some(now);
                c.fut = None;
                lock(&c.slot).close("the client crashed");
                self.target.crash(i as usize);
                self.row(Some(i as usize), "(crashed)".into(), String::new());
            }
            Choice::Replicate => {
                let what = self
                    .target
                    .replicate()
                    .map_err(|e| format!("step {}: {}", self.step + 1, e))?;
                self.row(None, format!("replica applies {}", what), String::new());
            }
            Choice::Failover => {
                if self.failover_used || !self.sc.failover {
                    return Err(format!(
                        "step {}: the scenario allows one failover",
                        self.step + 1
                    ));
                }
                let lost = self
                    .target
                    .failover()
                    .map_err(|e| format!("step {}: {}", self.step + 1, e))?;
                self.failover_used = true;
                self.row(
                    None,
                    format!(
                        "failover: the replica is the primary now; {} unit(s) of the stream it had not received are lost",
                        lost
                    ),
                    String::new(),
                );
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
        self.unshare();
        self.panicked = Some(v);
    }

    /// What a live client waits for after a poll or a reply: to send (it has a command
    /// out), a held reply, or a timer.
    fn settle(&mut self, i: usize) {
        let c = &self.clients[i];
        if c.fut.is_none() || matches!(c.status, Status::Blocked | Status::Paused(_)) {
            return;
        }
        let s = lock(&c.slot);
        let status = if s.has_next() {
            Status::Runnable
        } else if let Some(at) = self
            .held
            .iter()
            .filter(|h| h.client == i && s.is_open(h.batch_no))
            .map(|h| h.at)
            .min()
        {
            Status::Waiting(at)
        } else {
            Status::Sleeping
        };
        drop(s);
        self.clients[i].status = status;
    }

    /// A spawned task would run only when the explorer lets time pass, outside the
    /// schedule: refused clearly.
    fn spawn_check(&mut self, i: usize) -> Option<Violation> {
        if self.vclock.spawned_tasks() == 0 {
            return None;
        }
        Some(Violation::new(
            usize::MAX,
            "client spawned a task",
            format!(
                "client {} spawned a task (tokio::spawn); the explorer drives each client's own future only: run concurrent work inside it with join! or select! (for a lock watchdog, Lock::keep_alive)",
                self.sc.client_name(i)
            ),
            self.step,
        ))
    }

    /// Polls a client until it parks a command or finishes; a panic becomes a violation.
    fn poll(&mut self, i: usize) -> Option<Violation> {
        let c = &mut self.clients[i];
        let fut = c.fut.as_mut()?;
        let polled = self.vclock.poll_in(i, |cx| {
            catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx)))
        });
        match polled {
            Ok(Poll::Ready(r)) => {
                c.result = Some(r);
                c.status = Status::Done;
                c.fut = None;
                self.spawn_check(i)
            }
            Ok(Poll::Pending) => {
                self.settle(i);
                self.spawn_check(i)
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
