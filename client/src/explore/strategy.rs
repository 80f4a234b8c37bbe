//! The choosers: who goes next at each step.
//!
//! - `Dfs`: every schedule, depth first, along a recorded path (stateless model checking:
//!   client futures cannot be cloned); the executor resumes the server at the deepest
//!   branch point the next path shares and replays the clients on recorded replies
//!   (`Executor::run_dfs`);
//! - `RandomWalk`: a uniform pick among what can run, from a seed;
//! - `Pct`: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random
//!   priorities and `depth - 1` priority change points find a bug of depth d with
//!   probability at least 1/(n k^(d-1)) per run;
//! - `Follow`: a given schedule, strictly (replay) or skipping what cannot run (shrinking);
//! - `Indices`: proptest's shrinkable vector of numbers, each picking among what can run.

use super::executor::Chooser;
use super::schedule::Choice;

/// A small, fast, seedable generator (SplitMix64): schedules must be the same for a seed
/// on every platform and every version of this crate, which no external RNG promises.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// The step taken when a schedule says nothing more: the last client goes on if it can,
/// else the first that can; never an event. Keeps the tail of a shrunk schedule free of
/// needless switches.
pub(crate) fn default_choice(enabled: &[Choice], last: Option<u8>) -> Option<Choice> {
    if let Some(l) = last {
        if enabled.contains(&Choice::Run(l)) {
            return Some(Choice::Run(l));
        }
    }
    enabled.iter().copied().find(Choice::is_run)
}

/// Depth-first enumeration of every schedule.
#[derive(Default)]
pub(crate) struct Dfs {
    /// (chosen index, number enabled) at each step of the current path.
    path: Vec<(u16, u16)>,
    pos: usize,
}

impl Chooser for Dfs {
    fn choose(&mut self, _step: usize, enabled: &[Choice], _last: Option<u8>) -> Option<Choice> {
        let n = enabled.len().min(u16::MAX as usize) as u16;
        if self.pos < self.path.len() {
            let (k, count) = self.path[self.pos];
            // The same path always gives the same choices; guard anyway against a scenario
            // that is not deterministic.
            let k = k.min(n - 1);
            self.path[self.pos] = (k, count.min(n));
            self.pos += 1;
            return Some(enabled[k as usize]);
        }
        self.path.push((0, n));
        self.pos += 1;
        Some(enabled[0])
    }

    fn alternatives_left(&self) -> bool {
        self.pos
            .checked_sub(1)
            .and_then(|p| self.path.get(p))
            .is_some_and(|&(k, n)| k + 1 < n)
    }
}

impl Dfs {
    /// After `advance`: the depth of the first step where the new path leaves the last one.
    pub fn diverged_at(&self) -> usize {
        self.path.len().saturating_sub(1)
    }

    /// Goes on from step `depth` of the current path (the steps before it were replayed).
    pub fn resume_at(&mut self, depth: usize) {
        self.pos = depth.min(self.path.len());
    }

    /// Moves to the next path; false when every schedule has been run.
    pub fn advance(&mut self) -> bool {
        self.path.truncate(self.pos);
        self.pos = 0;
        while let Some((k, n)) = self.path.pop() {
            if k + 1 < n {
                self.path.push((k + 1, n));
                return true;
            }
        }
        false
    }
}

/// A uniform random pick at every step.
pub(crate) struct RandomWalk {
    pub rng: Rng,
}

impl Chooser for RandomWalk {
    fn choose(&mut self, _step: usize, enabled: &[Choice], _last: Option<u8>) -> Option<Choice> {
        Some(enabled[self.rng.below(enabled.len())])
    }
}

/// PCT: the enabled choice of highest priority runs; at each change point the running
/// actor drops below everyone.
pub(crate) struct Pct {
    prio: Vec<u64>,
    change_points: Vec<usize>,
    clients: usize,
}

impl Pct {
    /// A fresh schedule: new priorities for `actors`, `depth - 1` change points in 0..len.
    pub fn new(rng: &mut Rng, clients: usize, faults: usize, depth: usize, len: usize) -> Pct {
        let actors = 4 * clients + 4 + faults;
        let d = depth.max(1) as u64;
        let prio = (0..actors).map(|_| d + (rng.next_u64() >> 8)).collect();
        let change_points = (1..depth.max(1)).map(|_| rng.below(len.max(1))).collect();
        Pct {
            prio,
            change_points,
            clients,
        }
    }

    fn actor(&self, c: Choice) -> usize {
        let n = self.clients;
        match c {
            Choice::Run(i) => i as usize,
            Choice::Advance(_) => n,
            Choice::Pause(i, _) => n + 1 + i as usize,
            Choice::Crash(i) => 2 * n + 1 + i as usize,
            Choice::Timer => 3 * n + 1,
            Choice::Delay(i, _) => 3 * n + 2 + i as usize,
            Choice::Replicate => 4 * n + 2,
            Choice::Failover => 4 * n + 3,
            Choice::Fault(j) => 4 * n + 4 + j as usize,
        }
    }

    fn best(&self, enabled: &[Choice]) -> Choice {
        *enabled
            .iter()
            .max_by_key(|c| self.prio.get(self.actor(**c)).copied().unwrap_or(0))
            .expect("enabled is never empty")
    }
}

impl Chooser for Pct {
    fn choose(&mut self, step: usize, enabled: &[Choice], _last: Option<u8>) -> Option<Choice> {
        let mut c = self.best(enabled);
        for (k, &point) in self.change_points.iter().enumerate() {
            if point == step {
                let a = self.actor(c);
                if let Some(p) = self.prio.get_mut(a) {
                    *p = k as u64;
                }
                c = self.best(enabled);
            }
        }
        Some(c)
    }
}

/// A given schedule. Strict: each choice is taken as is (the run reports a divergence if
/// it cannot be). Lenient (shrinking): choices that cannot run are skipped. Past the end,
/// the default continuation.
pub(crate) struct Follow<'a> {
    pub choices: &'a [Choice],
    pub pos: usize,
    pub strict: bool,
}

impl Chooser for Follow<'_> {
    fn choose(&mut self, _step: usize, enabled: &[Choice], last: Option<u8>) -> Option<Choice> {
        while let Some(&c) = self.choices.get(self.pos) {
            self.pos += 1;
            if self.strict || enabled.contains(&c) {
                return Some(c);
            }
        }
        default_choice(enabled, last)
    }
}

/// Numbers, each picking one of what can run (modulo); past the end, the default. Shrinking
/// the numbers towards zero and the vector towards empty shrinks the schedule.
pub(crate) struct Indices<'a> {
    pub picks: &'a [u8],
    pub pos: usize,
}

impl Chooser for Indices<'_> {
    fn choose(&mut self, _step: usize, enabled: &[Choice], last: Option<u8>) -> Option<Choice> {
        match self.picks.get(self.pos) {
            Some(&k) => {
                self.pos += 1;
                Some(enabled[k as usize % enabled.len()])
            }
            None => default_choice(enabled, last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dfs_walks_every_path_once() {
        // Two steps of two choices each: four paths.
        let mut d = Dfs::default();
        let en = [Choice::Run(0), Choice::Run(1)];
        let mut seen = Vec::new();
        loop {
            let a = d.choose(0, &en, None).unwrap();
            let b = d.choose(1, &en, None).unwrap();
            seen.push((a, b));
            if !d.advance() {
                break;
            }
        }
        assert_eq!(seen.len(), 4);
        seen.dedup();
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn rng_is_uniform_enough_and_fixed() {
        let mut r = Rng::new(7);
        let mut counts = [0usize; 3];
        for _ in 0..3000 {
            counts[r.below(3)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 900), "{:?}", counts);
        assert_eq!(Rng::new(1).next_u64(), Rng::new(1).next_u64());
    }
}
