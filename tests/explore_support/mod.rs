//! What the explorer suites share: the scope of random runs, real-Redis access, and whether
//! the engine runs Lua yet.
#![allow(dead_code)]

use redlab_client::RealRedis;

/// Random schedules per suite (the issue asks for at least 10,000).
pub const RANDOM: u64 = 10_000;

/// Passing schedules replayed on real Redis per exploration (a sample keeps CI short).
pub const REAL_SAMPLE: usize = 25;

/// Whether the in-process engine runs scripts; the correct versions need it. Without it
/// the script suites say so loudly instead of passing silently.
pub fn lua_ready(test: &str) -> bool {
    let mut e = redlab::Engine::new(redlab::Config::default());
    let ok = !e.execute(1, &["EVAL", "return 1", "0"]).is_error();
    if !ok {
        eprintln!(
            "\n!!!! {}: SKIPPED, the engine has no EVAL yet !!!!\n",
            test
        );
    }
    ok
}

pub fn real(test: &str) -> Option<RealRedis> {
    RealRedis::start_or_skip(test)
}

/// `s` confirmed on `real` as well, when one runs (see `Scenario::real_redis`: a failure is
/// replayed there, and `sample` holding schedules are).
pub fn on_real(
    s: redlab_client::explore::Scenario,
    real: &Option<RealRedis>,
    sample: usize,
) -> redlab_client::explore::Scenario {
    match real {
        Some(r) => s.real_redis(r.addr(), sample),
        None => s,
    }
}

/// Asserts a caught counterexample reproduced on real Redis (when one is running).
#[track_caller]
pub fn assert_reproduced(f: &redlab_client::explore::Failure, real: &Option<RealRedis>) {
    if real.is_some() {
        assert!(
            f.reproduced_on_real_redis(),
            "the counterexample must reproduce on real Redis:\n{}",
            f
        );
    }
}

/// What the clients believe, stamped with the server time of the step they learnt it in.
///
/// A client pushes an entry when it gets a reply (acquired, admitted...); the invariants,
/// which run after every step, stamp new entries with the clock of that step. Shared
/// between the client closures and the invariants, reset by `Scenario::before_each`.
#[derive(Default, Debug)]
pub struct Journal {
    pub entries: Vec<Entry>,
    /// When the invariants last ran: the step that follows was sent no earlier.
    pub last_check: i64,
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub who: &'static str,
    pub what: Belief,
    /// When the step that taught it ended (the reply had arrived).
    pub at: Option<i64>,
    /// When that step began (no later than the request was sent). In-process the two are
    /// equal; on a real server they bracket the moment the server acted, so an invariant
    /// can take the bound that is safe for it: a lease measured from `sent` never outlives
    /// the real one, a lease measured from `at` never ends before it.
    pub sent: Option<i64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Belief {
    /// Holds the lock with this token and fence, from `at` for the TTL.
    Holds { token: String, fence: i64 },
    /// Renewed its lease at `at`.
    Renewed,
    /// Gave the lock up (released, handed over, or learnt it lost it).
    Released,
    /// A request was admitted by a limiter (with this many tokens).
    Admitted(u64),
}

impl Belief {
    /// Holds the lock of this guard.
    pub fn holds(g: &redlab_client::Guard) -> Belief {
        Belief::Holds {
            token: g.token.clone(),
            fence: g.fence,
        }
    }
}

pub type Shared = std::rc::Rc<std::cell::RefCell<Journal>>;

pub fn note(j: &Shared, who: &'static str, what: Belief) {
    j.borrow_mut().entries.push(Entry {
        who,
        what,
        at: None,
        sent: None,
    });
}

/// Stamps the entries of the last step with its server time, and with the time it began.
pub fn stamp(j: &Shared, now: i64) {
    let mut j = j.borrow_mut();
    let began = j.last_check;
    for e in j.entries.iter_mut().filter(|e| e.at.is_none()) {
        e.at = Some(now);
        e.sent = Some(began);
    }
    j.last_check = now;
}
