//! The interleaving explorer: run your own client code as logical clients, let the
//! scheduler choose the order in which their commands reach the server, find the
//! interleaving that breaks an invariant, shrink it, print it as a timeline and replay it on
//! a real redis-server.
//!
//! A script is atomic; the code around it is not. GET then SET from two requests, a release
//! after a GC pause, a pipelined batch racing an admin edit: each is correct alone and wrong
//! in one order. The explorer finds that order.
//!
//! # Exploring code written with redis-rs
//!
//! With the `redis-rs` feature, `Scenario::redis_client` gives each logical client a
//! [`RedisConnection`](crate::redis_rs::RedisConnection): `redis::aio::ConnectionLike`,
//! `Clone` like a multiplexed connection. The function under test is the one you ship:
//!
//! ```ignore
//! // (needs the `redis-rs` feature)
//! async fn naive_max<C: redis::aio::ConnectionLike + Send + Sync>(c: &mut C, id: i64) -> redis::RedisResult<()> {
//!     use redis::AsyncCommands;
//!     let cur: Option<i64> = c.get("k").await?;
//!     if id > cur.unwrap_or(0) {
//!         let _: () = c.set("k", id).await?;
//!     }
//!     Ok(())
//! }
//!
//! Scenario::new()
//!     .setup(&[&["SET", "k", "100"]])
//!     .redis_client("A", |mut c| async move { naive_max(&mut c, 150).await })
//!     .redis_client("B", |mut c| async move { naive_max(&mut c, 120).await })
//!     .invariant("ends at the maximum", |v: &mut View| !v.is_final() || v.get_int("k") == Some(150))
//!     .exhaustive()
//!     .assert_holds();
//! ```
//!
//! Single commands, pipelines (each command a scheduling point; MULTI/EXEC stays atomic on
//! the server), `redis::Script::invoke_async` with its NOSCRIPT fallback, and errors as
//! redis-rs reports them. The same function then runs on a real redis-rs connection.
//!
//! # Exploring code written with redlab's `Connection`
//!
//! ```no_run
//! use redlab_client::explore::{Scenario, View};
//! use redlab_client::Connection;
//!
//! // The code under test: read, compare, write. Each command is a point where another
//! // client may go first.
//! async fn naive_max(c: &Connection, key: &str, id: i64) -> redlab_client::Result<()> {
//!     let cur = c.cmd(&["GET", key]).await?.as_int().unwrap_or(0);
//!     if id > cur {
//!         c.cmd(&["SET", key, &id.to_string()]).await?;
//!     }
//!     Ok(())
//! }
//!
//! let report = Scenario::new()
//!     .setup(&[&["SET", "k", "100"]])
//!     .client("A", |c| async move { naive_max(&c, "k", 150).await })
//!     .client("B", |c| async move { naive_max(&c, "k", 120).await })
//!     .invariant("never decreases", |v: &mut View| {
//!         let now = v.get_int("k").unwrap_or(0);
//!         let before = std::mem::replace(v.scratch::<i64>(), now);
//!         now >= before
//!     })
//!     .exhaustive(); // or .random(seed, n), .pct(seed, depth, n), .proptest(cases)
//! report.assert_holds(); // panics with the timeline, the schedule string and how to replay it
//! ```
//!
//! That panics with:
//!
//! ```text
//! step | clock | A               | B
//! -----+-------+-----------------+----------------
//!    1 |  0 ms | GET k -> "100"  |
//!    2 |  0 ms |                 | GET k -> "100"
//!    3 |  0 ms | SET k 150 -> OK |
//!    4 |  0 ms |                 | SET k 120 -> OK
//! invariant broken: "never decreases" after step 4
//! schedule: ABAB
//! ```
//!
//! # What a schedule contains
//!
//! Every command a client sends is one step; a pipeline of n commands is n steps, because on
//! a real server other connections interleave inside a pipeline (only MULTI/EXEC and
//! scripts are atomic). Between them, the events the scenario allows:
//! - `clock_step(d, max)`: the server clock advances by `d` (TTLs, TIME, TIME in scripts);
//! - `pause(client, d)`: a GC pause: the client is not scheduled until `d` of server time
//!   has passed (when nobody else can run, the clock jumps to its end);
//! - `crash(client)`: its connection closes and it is never scheduled again;
//! - `fault(rule)`: a `redlab_server::faults::Fault` rule is added to the engine.
//!
//! A schedule prints as a short string: `ABAB` (clients by declaration order), `+1500`
//! (clock), `pA1500` (pause), `xA` (crash), `f0` (fault 0).
//!
//! # Strategies
//!
//! - `exhaustive()`: every interleaving (with `preemption_bound(n)`, only those that switch
//!   away from a client that could go on at most n times);
//! - `random(seed, n)`: n random walks; `pct(seed, depth, n)`: n PCT schedules;
//! - `proptest(cases)`: the schedule as a proptest strategy, shrunk by proptest;
//!   `run_picks` runs a drawn schedule inside a proptest of your own that also draws the
//!   programs.
//!
//! A counterexample is shrunk to the shortest run to the violation found by removing
//! steps, and printed with each client's result and what the invariant read.
//!
//! # Replay and real Redis
//!
//! `scenario.replay("ABAB").in_process()` or `.on_real_redis(addr)` runs a schedule again
//! and returns its timeline; `REDLAB_SCHEDULE=ABAB cargo test ...` makes every strategy
//! call replay that schedule instead. On a real redis-server there is one connection per
//! logical client and one command in flight at a time; the server is flushed (data and
//! scripts) first and clock advances are sleeps, so keep TTLs and steps short there.
//! `Scenario::real_redis(addr, sample)` confirms every counterexample there (the report
//! says whether it reproduced) and replays a sample of passing schedules.
//!
//! # Timers on a virtual clock
//!
//! Clients may use `tokio::time::sleep`, `timeout`, `interval` and `tokio::time::Instant`:
//! they run on a paused tokio clock that is also the server's clock, moved only by the
//! schedule (clock steps, pause ends, timer steps), so a sleep never waits for real time and
//! TTLs expire as the sleeping client expects. When no client can send, time runs to the
//! next timer; `timer_steps(n)` also lets a timer fire while others could send (`t` in a
//! schedule string, at most n per schedule). `delay_reply(client, d)` runs one command at
//! once and holds its reply back for d (`dA200`), so a client's timeout can fire after its
//! write landed; the late reply is dropped, as a multiplexed connection drops the reply of
//! a request nobody awaits.
//!
//! What a client may not await: a spawned task (`tokio::spawn`; run concurrent work such as
//! a lock watchdog inside the client with `select!` or `join!` — `Lock::keep_alive`), a
//! channel fed from outside the client, real I/O or another thread. The explorer reports a
//! client that spawns or that waits on something that is neither its connection nor a
//! timer. Use `select!` with `biased;`: an unbiased select picks its branch at random.
//! The explorer runs its own tokio runtime: call it from a plain `#[test]`, not from inside
//! a tokio runtime (`#[tokio::test]`), where tokio refuses to start a second one.
//!
//! # Linearizability
//!
//! [`linearizable`]: record each operation's call and return in a `History` and check every
//! schedule's history against a sequential model (`Scenario::linearizable`).
//!
//! # Runs
//!
//! The clients are closures over a [`Connection`](crate::Connection) and re-run from
//! scratch for every schedule; their futures are polled by hand, one step at a time. Each
//! schedule starts from a snapshot of the engine taken after the setup (data, scripts with
//! their compiled Lua, clock at [`START_MS`], RNG), restored instead of building a new
//! engine. Exhaustive search resumes the engine at the deepest branch point a schedule
//! shares with the last one; random walks and PCT keep the tree of schedules they have
//! seen, with the server forked at its branch points, so a walk runs nothing until it
//! leaves known ground, and a schedule seen before is not run (nor checked) again. Both
//! replay the clients on recorded replies and switch themselves off when a scenario does
//! what a fork cannot capture (`Scenario::share_prefixes`).

mod executor;
mod explorer;
pub mod linearizable;
mod replica;
mod report;
mod scenario;
mod schedule;
mod strategy;
mod target;
pub(crate) mod transport;
mod tree;
mod vclock;
mod view;

pub use explorer::Replay;
pub use report::{Failure, RealCheck, Report, Row, Run, Timeline, Violation};
pub use scenario::{Outcome, Scenario, Verdict};
pub use schedule::{client_letter, Choice, ParseError, Schedule};
pub use strategy::Rng;
pub use target::START_MS;
pub use view::View;
