//! The strategies' drivers: run schedules until one breaks an invariant, shrink it, record
//! its timeline, and confirm it on a real redis-server.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::time::Instant;

use super::executor::{Chooser, Executor, Status};
use super::replica::{PairTarget, RealPairTarget};
use super::report::{Failure, RealCheck, Report, Run, Timeline, Violation};
use super::scenario::Scenario;
use super::schedule::{Choice, Schedule};
use super::strategy::{Dfs, Follow, Indices, Pct, RandomWalk, Rng};
use super::target::{InProcessTarget, RealTarget};

/// A schedule to run again: `scenario.replay("ABAB").on_real_redis(addr)`.
pub struct Replay<'s> {
    scenario: &'s Scenario,
    schedule: Schedule,
}

impl Replay<'_> {
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Runs it on a fresh in-process engine, with the timeline recorded.
    pub fn in_process(&self) -> Run {
        let mut ex = self.scenario.executor();
        self.scenario.recorded(
            &mut ex,
            &mut Follow {
                choices: &self.schedule.0,
                pos: 0,
                strict: true,
            },
        )
    }

    /// Runs it on the redis-server at `addr` (FLUSHALL and SCRIPT FLUSH first): one
    /// connection per logical client, one command in flight at a time, clock advances as
    /// sleeps.
    /// A scenario with a replica (`Scenario::replica`) runs there with the replica that
    /// `Scenario::real_redis_pair` named; `on_real_pair` names one for this replay.
    pub fn on_real_redis(&self, addr: SocketAddr) -> Run {
        let target: Box<dyn super::target::Target> = match (self.scenario.replica, self.scenario.real_replica) {
            (false, _) => Box::new(RealTarget::new(addr)),
            (true, Some(replica)) => Box::new(RealPairTarget::new(addr, replica)),
            (true, None) => panic!(
                "redlab explore: this scenario has a replica: replay it with on_real_pair(primary, replica), or give Scenario::real_redis_pair"
            ),
        };
        let mut ex = Executor::new(self.scenario, target);
        self.scenario.recorded(
            &mut ex,
            &mut Follow {
                choices: &self.schedule.0,
                pos: 0,
                strict: true,
            },
        )
    }

    /// Runs it on the redis-server at `primary` with the one at `replica` as its replica
    /// (see `Scenario::real_redis_pair`): the stream reaches `replica` when the schedule
    /// delivers it, and a failover moves the clients there.
    pub fn on_real_pair(&self, primary: SocketAddr, replica: SocketAddr) -> Run {
        let mut ex = Executor::new(
            self.scenario,
            Box::new(RealPairTarget::new(primary, replica)),
        );
        self.scenario.recorded(
            &mut ex,
            &mut Follow {
                choices: &self.schedule.0,
                pos: 0,
                strict: true,
            },
        )
    }
}

/// Keeps a uniform sample of the schedules explored, for the real-Redis replay.
struct Sampler {
    keep: usize,
    seen: u64,
    rng: Rng,
    picked: Vec<Vec<Choice>>,
}

impl Sampler {
    fn new(sc: &Scenario) -> Sampler {
        Sampler {
            keep: sc.real.map_or(0, |(_, n)| n),
            seen: 0,
            rng: Rng::new(0x5eed),
            picked: Vec::new(),
        }
    }

    fn offer(&mut self, executed: &[Choice]) {
        if self.keep == 0 {
            return;
        }
        self.seen += 1;
        if self.picked.len() < self.keep {
            self.picked.push(executed.to_vec());
        } else {
            let j = self.rng.below(self.seen as usize);
            if j < self.keep {
                self.picked[j] = executed.to_vec();
            }
        }
    }
}

/// Counts of one exploration.
struct Tally {
    strategy: String,
    schedules: u64,
    steps: u64,
    start: Instant,
}

impl Scenario {
    fn executor(&self) -> Executor<'_> {
        if self.replica {
            return Executor::new(self, Box::new(PairTarget::new(self.config.clone())));
        }
        Executor::new(self, Box::new(InProcessTarget::new(self.config.clone())))
    }

    fn tally(&self, strategy: String) -> Tally {
        Tally {
            strategy,
            schedules: 0,
            steps: 0,
            start: Instant::now(),
        }
    }

    /// Every interleaving of the clients' commands and the declared events (bounded by
    /// `preemption_bound` if set). Stops at the first schedule that breaks an invariant.
    pub fn exhaustive(&self) -> Report {
        if let Some(r) = self.replay_from_env() {
            return r;
        }
        let label = match self.preemption_bound {
            Some(b) => format!("exhaustive search (at most {} preemptions)", b),
            None => "exhaustive search".to_string(),
        };
        let mut t = self.tally(label);
        let mut ex = self.executor();
        let mut dfs = Dfs::default();
        let mut sampler = Sampler::new(self);
        loop {
            let out = ex.run_dfs(&mut dfs);
            t.schedules += 1;
            t.steps += out.steps as u64;
            if let Some(v) = out.violation {
                let found = ex.executed.clone();
                return self.failed(t, &mut ex, found, v);
            }
            sampler.offer(&ex.executed);
            if !dfs.advance() {
                break;
            }
        }
        self.passed(t, sampler)
    }

    /// `n` schedules, each step a uniform pick among what can run, from `seed`.
    pub fn random(&self, seed: u64, n: u64) -> Report {
        if let Some(r) = self.replay_from_env() {
            return r;
        }
        let mut t = self.tally(format!("random walk (seed {})", seed));
        let mut ex = self.executor();
        let mut chooser = RandomWalk {
            rng: Rng::new(seed),
        };
        let mut sampler = Sampler::new(self);
        for _ in 0..n {
            let out = ex.run_walk(&mut chooser);
            t.schedules += 1;
            t.steps += out.steps as u64;
            if let Some(v) = out.violation {
                let found = ex.executed.clone();
                return self.failed(t, &mut ex, found, v);
            }
            sampler.offer(&ex.executed);
        }
        self.passed(t, sampler)
    }

    /// `n` PCT schedules of bug depth `depth` (2 finds most ordering bugs between two
    /// commands), from `seed`.
    pub fn pct(&self, seed: u64, depth: usize, n: u64) -> Report {
        if let Some(r) = self.replay_from_env() {
            return r;
        }
        let mut t = self.tally(format!("PCT (seed {}, depth {})", seed, depth));
        let mut ex = self.executor();
        let mut rng = Rng::new(seed);
        let mut sampler = Sampler::new(self);
        let mut len = ex
            .run(
                &mut Follow {
                    choices: &[],
                    pos: 0,
                    strict: false,
                },
                false,
            )
            .steps
            .max(1);
        for _ in 0..n {
            let mut chooser = Pct::new(&mut rng, self.clients.len(), self.faults.len(), depth, len);
            let out = ex.run_walk(&mut chooser);
            t.schedules += 1;
            t.steps += out.steps as u64;
            len = len.max(out.steps);
            if let Some(v) = out.violation {
                let found = ex.executed.clone();
                return self.failed(t, &mut ex, found, v);
            }
            sampler.offer(&ex.executed);
        }
        self.passed(t, sampler)
    }

    /// `cases` schedules drawn by proptest as vectors of picks (each picks among what can
    /// run), shrunk by proptest on failure and then by the explorer's own shrinker.
    pub fn proptest(&self, cases: u32) -> Report {
        use proptest::test_runner::{
            Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
        };
        if let Some(r) = self.replay_from_env() {
            return r;
        }
        let t = self.tally(format!("proptest ({} cases)", cases));
        let ex = RefCell::new(self.executor());
        // The in-order run's length, measured as `pct` does; inline on purpose, since here
        // the executor sits in the RefCell that proptest's closure borrows.
        let len = ex
            .borrow_mut()
            .run(
                &mut Follow {
                    choices: &[],
                    pos: 0,
                    strict: false,
                },
                false,
            )
            .steps
            .max(1);
        let max_len = (2 * len
            + self.pauses.len()
            + self.crashes.len()
            + self.faults.len()
            + self.delays.len()
            + self.max_timer_steps
            + self.max_clock_steps)
            .min(512);
        let schedules = Cell::new(0u64);
        let steps = Cell::new(0u64);
        let sampler = RefCell::new(Sampler::new(self));
        let config = Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 4096,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        let strategy = proptest::collection::vec(proptest::num::u8::ANY, 0..=max_len);
        let result = runner.run(&strategy, |picks| {
            let mut ex = ex.borrow_mut();
            let out = ex.run(
                &mut Indices {
                    picks: &picks,
                    pos: 0,
                },
                false,
            );
            schedules.set(schedules.get() + 1);
            steps.set(steps.get() + out.steps as u64);
            match out.violation {
                Some(v) => Err(TestCaseError::fail(v.to_string())),
                None => {
                    sampler.borrow_mut().offer(&ex.executed);
                    Ok(())
                }
            }
        });
        let mut t = t;
        t.schedules = schedules.get();
        t.steps = steps.get();
        let mut ex = ex.into_inner();
        match result {
            Ok(()) => self.passed(t, sampler.into_inner()),
            Err(TestError::Fail(_, picks)) => {
                let out = ex.run(
                    &mut Indices {
                        picks: &picks,
                        pos: 0,
                    },
                    false,
                );
                let v = out
                    .violation
                    .expect("proptest's minimal case fails again: the explorer is deterministic");
                let found = ex.executed.clone();
                self.failed(t, &mut ex, found, v)
            }
            Err(TestError::Abort(why)) => panic!("redlab explore: proptest aborted: {}", why),
        }
    }

    /// A schedule string to run again (`in_process()` or `on_real_redis(addr)`).
    #[track_caller]
    pub fn replay(&self, schedule: &str) -> Replay<'_> {
        match schedule.parse() {
            Ok(schedule) => Replay {
                scenario: self,
                schedule,
            },
            Err(e) => panic!("redlab explore: {}", e),
        }
    }

    /// Runs the schedule that these picks make (each picks among what can run, modulo; past
    /// the end, the last client goes on): for a proptest of your own that draws the
    /// programs' parameters and the schedule together.
    pub fn run_picks(&self, picks: &[u8]) -> Run {
        let mut ex = self.executor();
        self.recorded(&mut ex, &mut Indices { picks, pos: 0 })
    }

    /// REDLAB_SCHEDULE=<schedule> turns every strategy into one replay of that schedule.
    fn replay_from_env(&self) -> Option<Report> {
        let text = std::env::var("REDLAB_SCHEDULE").ok()?;
        let schedule: Schedule = text
            .parse()
            .unwrap_or_else(|e| panic!("REDLAB_SCHEDULE: {}", e));
        let t = self.tally(format!("replay of REDLAB_SCHEDULE={}", text));
        let mut ex = self.executor();
        let run = self.recorded(
            &mut ex,
            &mut Follow {
                choices: &schedule.0,
                pos: 0,
                strict: true,
            },
        );
        let mut report = Report {
            strategy: t.strategy,
            schedules: 1,
            steps: run.schedule.len() as u64,
            elapsed: t.start.elapsed(),
            failure: None,
            real_replayed: 0,
            real_failed: None,
        };
        if let Some(v) = run.violation {
            let real = self.confirm(&run.schedule, &v);
            report.failure = Some(Failure {
                violation: v,
                schedule: run.schedule.clone(),
                timeline: run.timeline,
                found: schedule,
                real,
                seed: self.engine_seed(),
            });
        }
        Some(report)
    }

    /// Runs with the timeline recorded.
    pub(crate) fn recorded(&self, ex: &mut Executor, chooser: &mut dyn Chooser) -> Run {
        let out = ex.run(chooser, true);
        let results = ex
            .clients
            .iter()
            .map(|c| match c.status {
                Status::Done => match &c.result {
                    Some(r) => format!("{:?}", r),
                    None => "finished".into(),
                },
                Status::Crashed => "crashed".into(),
                Status::Blocked => "still blocked".into(),
                Status::Paused(_) => "still paused".into(),
                Status::Sleeping => "still sleeping".into(),
                Status::Waiting(_) => "still waiting for a reply".into(),
                Status::Runnable => "(had not finished)".into(),
            })
            .collect();
        let timeline = Timeline {
            clients: self.clients.iter().map(|(n, _)| n.clone()).collect(),
            rows: ex.rows.take().unwrap_or_default(),
            results,
            invariant_reads: if out.violation.is_some() {
                ex.invariant_log.clone()
            } else {
                Vec::new()
            },
        };
        Run {
            schedule: Schedule(ex.executed.clone()),
            timeline,
            violation: out.violation,
            diverged: out.diverged,
            on_real_redis: ex.target.is_real(),
        }
    }

    /// Shrinks, records and confirms a counterexample.
    fn failed(&self, t: Tally, ex: &mut Executor, found: Vec<Choice>, v: Violation) -> Report {
        let found_len = v.step.min(found.len());
        let best = shrink(ex, found[..found_len].to_vec(), v);
        let run = self.recorded(
            ex,
            &mut Follow {
                choices: &best,
                pos: 0,
                strict: true,
            },
        );
        let violation = run
            .violation
            .clone()
            .expect("a shrunk counterexample fails when run again");
        let real = self.confirm(&run.schedule, &violation);
        Report {
            strategy: t.strategy,
            schedules: t.schedules,
            steps: t.steps,
            elapsed: t.start.elapsed(),
            failure: Some(Failure {
                violation,
                schedule: run.schedule.clone(),
                timeline: run.timeline,
                found: Schedule(found[..found_len].to_vec()),
                real,
                seed: self.engine_seed(),
            }),
            real_replayed: 0,
            real_failed: None,
        }
    }

    fn confirm(&self, schedule: &Schedule, v: &Violation) -> RealCheck {
        let Some((addr, _)) = self.real else {
            return RealCheck::NotChecked;
        };
        if schedule.0.iter().any(|c| matches!(c, Choice::Fault(_))) {
            return RealCheck::Unsupported(
                "the schedule injects faults, which a real redis-server cannot".into(),
            );
        }
        let replay = Replay {
            scenario: self,
            schedule: schedule.clone(),
        };
        // A schedule with clock time runs on real time there: a loaded machine can make
        // a command land a few milliseconds late and the run take another path. Such a
        // run (it diverged, or broke nothing) is tried again, up to three times.
        let timed = schedule.0.iter().any(|c| !matches!(c, Choice::Run(_)));
        let mut run = replay.on_real_redis(addr);
        for _ in 1..if timed { 3 } else { 1 } {
            if run.reproduces(v) || run.violation.is_some() {
                break;
            }
            run = replay.on_real_redis(addr);
        }
        if run.reproduces(v) {
            RealCheck::Reproduced(Box::new(run))
        } else {
            RealCheck::NotReproduced(Box::new(run))
        }
    }

    fn passed(&self, t: Tally, sampler: Sampler) -> Report {
        let mut report = Report {
            strategy: t.strategy,
            schedules: t.schedules,
            steps: t.steps,
            elapsed: Default::default(),
            failure: None,
            real_replayed: 0,
            real_failed: None,
        };
        if let Some((addr, _)) = self.real {
            for choices in sampler.picked {
                if choices.iter().any(|c| matches!(c, Choice::Fault(_))) {
                    continue;
                }
                let run = Replay {
                    scenario: self,
                    schedule: Schedule(choices),
                }
                .on_real_redis(addr);
                report.real_replayed += 1;
                if !run.holds() {
                    report.real_failed = Some(Box::new(run));
                    break;
                }
            }
        }
        report.elapsed = t.start.elapsed();
        report
    }
}

/// (steps, events, switches, the choices): shorter first, then fewer events, then fewer
/// switches, then earlier clients first (so equal races print the same way every time).
fn measure(s: &[Choice]) -> (usize, usize, usize, &[Choice]) {
    let events = s.iter().filter(|c| !c.is_run()).count();
    (s.len(), events, Schedule(s.to_vec()).switches(), s)
}

/// Removes one choice, or moves one earlier, while the schedule still breaks the same
/// invariant and measures smaller, until nothing helps. Whatever a change leaves to the end
/// is filled by the default continuation, so the result is the shortest run to the
/// violation that this greedy search finds.
fn shrink(ex: &mut Executor, mut best: Vec<Choice>, mut v: Violation) -> Vec<Choice> {
    loop {
        let mut improved = false;
        let n = best.len();
        // Candidates: k < n removes choice k; then (from, to) pairs move `from` to `to`.
        let moves = (0..n).flat_map(|from| (0..from).map(move |to| (from, to)));
        let candidates = (0..n).map(|k| (k, usize::MAX)).chain(moves);
        for (a, b) in candidates {
            let mut cand = best.clone();
            if b == usize::MAX {
                cand.remove(a);
            } else {
                if cand[a] == cand[b] {
                    continue;
                }
                let c = cand.remove(a);
                cand.insert(b, c);
            }
            let out = ex.run(
                &mut Follow {
                    choices: &cand,
                    pos: 0,
                    strict: false,
                },
                false,
            );
            let Some(w) = out.violation else { continue };
            if w.index != v.index {
                continue;
            }
            let got = &ex.executed[..w.step.min(ex.executed.len())];
            if measure(got) < measure(&best) {
                best = got.to_vec();
                v = w;
                improved = true;
                break;
            }
        }
        if !improved {
            break;
        }
    }
    best
}
