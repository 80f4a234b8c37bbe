//! `Scenario`: the logical clients, the setup, the invariants and the events a schedule may
//! contain, and the entry points of every strategy.

use std::any::Any;
use std::fmt::Debug;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use redlab_server::faults::Fault;
use redlab_server::Config;

use super::view::View;
use crate::connection::Connection;
use crate::script::Script;

/// A client's return value, kept for the report and for invariants (`View::result`).
pub trait Outcome: Any + Debug {}
impl<T: Any + Debug> Outcome for T {}

pub(crate) type ClientFuture = Pin<Box<dyn Future<Output = Box<dyn Outcome>>>>;
pub(crate) type Factory = Box<dyn Fn(Connection) -> ClientFuture>;
pub(crate) type Invariant = Box<dyn Fn(&mut View) -> Result<(), String>>;

/// What an invariant returns: `bool`, or `Result<(), String>` to say what was wrong.
pub trait Verdict {
    fn into_result(self) -> Result<(), String>;
}

impl Verdict for bool {
    fn into_result(self) -> Result<(), String> {
        if self {
            Ok(())
        } else {
            Err(String::new())
        }
    }
}

impl Verdict for Result<(), String> {
    fn into_result(self) -> Result<(), String> {
        self
    }
}

/// The program under test: who runs what, what must always hold, what may happen to them.
/// The client closures run again from scratch for every schedule, so they are `Fn`.
pub struct Scenario {
    pub(crate) setup: Vec<Vec<Vec<u8>>>,
    pub(crate) clients: Vec<(String, Factory)>,
    pub(crate) invariants: Vec<(String, Invariant)>,
    pub(crate) clock_steps: Vec<u32>,
    pub(crate) max_clock_steps: usize,
    pub(crate) max_timer_steps: usize,
    pub(crate) delays: Vec<(u8, u32)>,
    pub(crate) pauses: Vec<(u8, u32)>,
    pub(crate) crashes: Vec<u8>,
    pub(crate) faults: Vec<Fault>,
    pub(crate) preemption_bound: Option<usize>,
    pub(crate) max_steps: usize,
    pub(crate) config: Config,
    pub(crate) real: Option<(SocketAddr, usize)>,
    pub(crate) before_each: Vec<Box<dyn Fn()>>,
    pub(crate) share_prefixes: bool,
    /// The schedules run on a primary and a replica (`replica`), and may fail over
    /// (`failover`).
    pub(crate) replica: bool,
    pub(crate) failover: bool,
    /// The real replica that confirms counterexamples beside `real`'s primary.
    pub(crate) real_replica: Option<SocketAddr>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario::new()
    }
}

/// A client's future with its result boxed. A plain adapter rather than an `async` block:
/// an async block that awaits a future it captured keeps room for it twice (the captured
/// future and the one awaited), which doubled the allocation made for every client of every
/// schedule and took it past the allocator's cache of small blocks.
struct BoxedOutcome<Fut> {
    fut: Fut,
}

impl<Fut, T> Future for BoxedOutcome<Fut>
where
    Fut: Future<Output = T>,
    T: Outcome,
{
    type Output = Box<dyn Outcome>;

    fn poll(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        // SAFETY: `fut` is pinned structurally: it is never moved out of a pinned
        // `BoxedOutcome` (no method hands it out, no Drop impl moves it), and
        // `BoxedOutcome` is not `Unpin` unless `Fut` is.
        let fut = unsafe { self.map_unchecked_mut(|b| &mut b.fut) };
        fut.poll(cx).map(|t| Box::new(t) as Box<dyn Outcome>)
    }
}

impl Scenario {
    pub fn new() -> Scenario {
        Scenario {
            setup: Vec::new(),
            clients: Vec::new(),
            invariants: Vec::new(),
            clock_steps: Vec::new(),
            max_clock_steps: 0,
            max_timer_steps: 0,
            delays: Vec::new(),
            pauses: Vec::new(),
            crashes: Vec::new(),
            faults: Vec::new(),
            preemption_bound: None,
            share_prefixes: true,
            max_steps: 1000,
            // Every schedule of one scenario (and every replay of it) runs engines with the
            // same seed, so random replies repeat; REDLAB_SEED picks it, as a failure prints.
            config: Config {
                seed: Some(
                    std::env::var("REDLAB_SEED")
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or_else(redlab_server::fresh_seed),
                ),
                ..Config::default()
            },
            real: None,
            before_each: Vec::new(),
            replica: false,
            failover: false,
            real_replica: None,
        }
    }

    /// Commands run before the clients start, on every schedule (never scheduled).
    pub fn setup(mut self, commands: &[&[&str]]) -> Scenario {
        for c in commands {
            self.setup
                .push(c.iter().map(|a| a.as_bytes().to_vec()).collect());
        }
        self
    }

    /// Loads a script into the script cache in the setup, so a client's first EVALSHA finds
    /// it (otherwise every schedule starts with NOSCRIPT, SCRIPT LOAD, EVALSHA per client).
    pub fn load_script(mut self, script: &Script) -> Scenario {
        self.setup.push(vec![
            b"SCRIPT".to_vec(),
            b"LOAD".to_vec(),
            script.body().as_bytes().to_vec(),
        ]);
        self
    }

    /// Runs at the start of every schedule, before the clients: resets state the clients
    /// and the invariants share outside Redis (a journal of what each client believes).
    pub fn before_each(mut self, f: impl Fn() + 'static) -> Scenario {
        self.before_each.push(Box::new(f));
        self
    }

    /// A logical client: an async closure over its own connection. Its commands are the
    /// scheduling points. Clients are A, B, C... in schedule strings, in this order.
    pub fn client<F, Fut, T>(mut self, name: &str, f: F) -> Scenario
    where
        F: Fn(Connection) -> Fut + 'static,
        Fut: Future<Output = T> + 'static,
        T: Outcome,
    {
        assert!(
            self.clients.len() < 26,
            "redlab explore: at most 26 clients"
        );
        let factory: Factory = Box::new(move |c| Box::pin(BoxedOutcome { fut: f(c) }));
        self.clients.push((name.to_string(), factory));
        self
    }

    /// A logical client written against redis-rs: the closure gets a
    /// [`RedisConnection`](crate::redis_rs::RedisConnection), which implements
    /// `redis::aio::ConnectionLike` and is `Clone` like a `MultiplexedConnection`, so a
    /// function `async fn f<C: redis::aio::ConnectionLike>(c: &mut C, ..)` runs unchanged:
    /// commands, pipelines, `Script::invoke_async` with its NOSCRIPT fallback.
    #[cfg(feature = "redis-rs")]
    pub fn redis_client<F, Fut, T>(self, name: &str, f: F) -> Scenario
    where
        F: Fn(crate::redis_rs::RedisConnection) -> Fut + 'static,
        Fut: Future<Output = T> + 'static,
        T: Outcome,
    {
        self.client(name, move |c| f(crate::redis_rs::RedisConnection::new(c)))
    }

    /// A property checked after every step and once more when every client has finished
    /// (`View::is_final`). It reads the server through the observer connection.
    pub fn invariant<F, V>(mut self, name: &str, f: F) -> Scenario
    where
        F: Fn(&mut View) -> V + 'static,
        V: Verdict,
    {
        self.invariants
            .push((name.to_string(), Box::new(move |v| f(v).into_result())));
        self
    }

    /// Lets schedules advance the server clock by `step`, at most `max` times per schedule.
    /// Call again for other step sizes (they share `max`).
    pub fn clock_step(mut self, step: Duration, max: usize) -> Scenario {
        self.clock_steps
            .push(step.as_millis().min(u32::MAX as u128) as u32);
        self.max_clock_steps = self.max_clock_steps.max(max);
        self
    }

    /// Lets schedules choose, at most `max` times per schedule, to let virtual time run to
    /// the next timer while clients could still send: a client's `tokio::time::sleep`,
    /// `timeout` or `interval` fires before the others' next commands. (When no client can
    /// send, time runs to the next timer anyway, without counting.)
    pub fn timer_steps(mut self, max: usize) -> Scenario {
        self.max_timer_steps = max;
        self
    }

    /// Lets schedules run one command of `client` with its reply held back for `delay` of
    /// virtual time (a slow network), once per schedule: the command lands on the server at
    /// once, and the client's own timeouts may fire before the reply arrives.
    pub fn delay_reply(mut self, client: &str, delay: Duration) -> Scenario {
        let i = self.index_of(client);
        self.delays
            .push((i, delay.as_millis().min(u32::MAX as u128) as u32));
        self
    }

    /// Lets schedules pause `client` once, between two of its commands, for `span` of
    /// server time (a GC pause): it is not scheduled until the clock has moved that far.
    pub fn pause(mut self, client: &str, span: Duration) -> Scenario {
        let i = self.index_of(client);
        self.pauses
            .push((i, span.as_millis().min(u32::MAX as u128) as u32));
        self
    }

    /// Lets schedules crash `client` once: its connection closes and it never runs again.
    pub fn crash(mut self, client: &str) -> Scenario {
        let i = self.index_of(client);
        self.crashes.push(i);
        self
    }

    /// Lets schedules add this fault rule to the server once, at any step (in-process
    /// only: a real redis-server cannot inject faults).
    pub fn fault(mut self, fault: Fault) -> Scenario {
        assert!(
            self.faults.len() < 255,
            "redlab explore: at most 255 faults"
        );
        self.faults.push(fault);
        self
    }

    /// Runs every schedule on a primary and a replica: the clients talk to the primary, and
    /// the primary's replication stream (one unit per command, transaction or script, as
    /// Redis sends it) reaches the replica only when a schedule says so (`r`, one unit at a
    /// time, in order). On its own this changes nothing the clients see; it is the ground
    /// `failover` stands on.
    pub fn replica(mut self) -> Scenario {
        self.replica = true;
        self
    }

    /// Lets schedules fail over once (`^`): the replica is promoted, the clients' next
    /// commands go to it (as a client that reconnects through Sentinel or a cluster's
    /// redirect would), and the units of the stream it had not received are lost, as a
    /// failover to a lagging replica loses them. Implies `replica`.
    pub fn failover(mut self) -> Scenario {
        self.replica = true;
        self.failover = true;
        self
    }

    /// Exhaustive exploration only switches away from a client that could go on at most
    /// `n` times per schedule (most bugs need one or two preemptions).
    pub fn preemption_bound(mut self, n: usize) -> Scenario {
        self.preemption_bound = Some(n);
        self
    }

    /// Exhaustive search shares the server's work on the prefix a schedule has in common with
    /// the last one (on by default): it puts the engine back to the branch point and replays
    /// the clients on recorded replies. Random walks and PCT keep the tree of schedules
    /// they have run: a walk runs nothing while it follows steps seen before, and a
    /// schedule seen before is not run again (its invariants held then; they are not
    /// called again for it). That relies on the clients being deterministic, as every
    /// replay does; `false` runs each schedule from scratch instead (the same schedules
    /// and results, slower).
    pub fn share_prefixes(mut self, on: bool) -> Scenario {
        self.share_prefixes = on;
        self
    }

    /// A schedule longer than this is stopped as a failure (a client that never ends).
    pub fn max_steps(mut self, n: usize) -> Scenario {
        self.max_steps = n;
        self
    }

    /// The configuration of the in-process engine (a config without a seed keeps the
    /// scenario's).
    pub fn config(mut self, mut config: Config) -> Scenario {
        config.seed = config.seed.or(self.config.seed);
        self.config = config;
        self
    }

    /// Runs the in-process engine as this server version (`redlab_server::compat`): an
    /// invariant suite can run under redis-7.0 and valkey-8.1 alike, and a client command
    /// the version lacks fails as it would there.
    pub fn compat(mut self, profile: redlab_server::Profile) -> Scenario {
        self.config.set_compat(profile);
        self
    }

    /// The engine seed every schedule and replay runs with (SPOP, RANDOMKEY, math.random...).
    pub fn seed(mut self, seed: u64) -> Scenario {
        self.config.seed = Some(seed);
        self
    }

    /// The engine seed in use: what a counterexample prints and REDLAB_SEED gives back.
    pub fn engine_seed(&self) -> u64 {
        self.config.seed.unwrap_or(0)
    }

    /// Confirms on a real redis-server at `addr`: a failure is replayed there (the report
    /// says whether it reproduced), and when every schedule holds, `sample` of the explored
    /// schedules are replayed there and must hold too.
    pub fn real_redis(mut self, addr: SocketAddr, sample: usize) -> Scenario {
        self.real = Some((addr, sample));
        self
    }

    /// `real_redis` for a scenario with a replica: counterexamples are confirmed on the
    /// redis-server at `primary`, with the one at `replica` as its replica. The explorer
    /// attaches to the primary as a replica itself (SYNC) and passes the stream on to
    /// `replica` unit by unit when a schedule delivers (`r`); `replica` must be a writable
    /// primary of its own (never REPLICAOF, or detached with REPLICAOF NO ONE), so a
    /// failover is the clients moving to it.
    pub fn real_redis_pair(
        mut self,
        primary: SocketAddr,
        replica: SocketAddr,
        sample: usize,
    ) -> Scenario {
        self.real = Some((primary, sample));
        self.real_replica = Some(replica);
        self
    }

    fn index_of(&self, name: &str) -> u8 {
        match self.clients.iter().position(|(n, _)| n == name) {
            Some(i) => i as u8,
            None => panic!(
                "redlab explore: no client named {:?} (declare the client before its events)",
                name
            ),
        }
    }

    pub(crate) fn client_name(&self, i: usize) -> &str {
        &self.clients[i].0
    }
}
