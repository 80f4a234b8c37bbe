//! The lock of the patterns across a failover (issue 19, point 7).
//!
//! The scenarios run on a primary and a replica. Two scheduling decisions join the
//! clients' commands: `r`, the replica receives the next unit of the primary's replication
//! stream, and `^`, the replica is promoted and the clients move to it, losing every unit it
//! had not received. The explorer finds the schedule where the failover loses the
//! acquiring write (SET NX and the fence's INCR, one script, one unit) and a second client
//! acquires the same lock on the new primary: two holders at once. It shrinks it, prints
//! its timeline and replays it on a real redis-server primary and replica.
//!
//! Fencing: the lost INCR hands the second holder the fencing token the first one has, so
//! a resource that accepts only strictly increasing tokens takes the write of one of them
//! and rejects the other's; a resource that also takes an equal token (as
//! VersionedHash does, for idempotent rewrites) lets both in. Without a failover, the lock
//! has one holder whatever the replica received.

mod explore_support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use explore_support::{lua_ready, note, Belief, Journal, Shared};
use redlab_client::explore::{Report, Scenario, View};
use redlab_client::{Acquire, Connection, Lock, RealRedis, Result, Script};

/// Long enough that no lease runs out during a replay on real Redis (no clock steps here).
const TTL: u64 = 10_000;
const KEY: &str = "lock:job";

/// A store outside Redis that the holders write to, guarded by the fencing token.
#[derive(Default, Debug)]
struct Resource {
    /// Refuse a token equal to the last one accepted (fencing as it must be), or take it.
    strict: bool,
    last: Option<i64>,
    /// (who, token, accepted)
    log: Vec<(&'static str, i64, bool)>,
}

impl Resource {
    fn write(&mut self, who: &'static str, fence: i64) -> bool {
        let ok = match self.last {
            None => true,
            Some(last) if self.strict => fence > last,
            Some(last) => fence >= last,
        };
        if ok {
            self.last = Some(fence);
        }
        self.log.push((who, fence, ok));
        ok
    }
}

type Res = Rc<RefCell<Resource>>;

/// Acquire once; if acquired, do the job's work (one read: another client may go between
/// the acquire and the write), write the resource with the fencing token, release.
/// Returns whether the resource took the write (None: not acquired).
async fn holder(c: Connection, j: Shared, res: Res, who: &'static str) -> Result<Option<bool>> {
    let lock = Lock::new(c.clone(), KEY, Duration::from_millis(TTL));
    let Acquire::Acquired(g) = lock.try_acquire().await? else {
        return Ok(None);
    };
    note(&j, who, Belief::holds(&g));
    c.cmd(&["GET", "job:input"]).await?;
    let accepted = res.borrow_mut().write(who, g.fence);
    lock.release(&g).await?;
    note(&j, who, Belief::Released);
    Ok(Some(accepted))
}

/// Who believes it holds the lock now, with its fencing token.
fn holders(j: &Journal) -> Vec<(&'static str, i64)> {
    let mut held: Vec<(&'static str, i64)> = Vec::new();
    for e in &j.entries {
        held.retain(|h| h.0 != e.who);
        if let Belief::Holds { fence, .. } = &e.what {
            held.push((e.who, *fence));
        }
    }
    held
}

const ONE_HOLDER: &str = "at most one client holds the lock";
const ONE_WRITER: &str = "the resource never accepts two writes under one fencing token";

#[derive(Clone, Copy, PartialEq)]
enum Check {
    Holders,
    Resource,
    Both,
}

/// Two holders of the lock on a primary with a replica; `failover` lets schedules fail
/// over once.
fn scenario(failover: bool, strict: bool, check: Check) -> Scenario {
    let j = Shared::default();
    let res: Res = Rc::new(RefCell::new(Resource {
        strict,
        ..Resource::default()
    }));
    let (ja, jb, jr) = (j.clone(), j.clone(), j.clone());
    let (ra, rb, rr, rv) = (res.clone(), res.clone(), res.clone(), res.clone());
    let mut s = Scenario::new();
    for body in [
        include_str!("../scripts/lock_acquire.lua"),
        include_str!("../scripts/lock_release.lua"),
    ] {
        s = s.load_script(&Script::new(body));
    }
    s = s
        .setup(&[&["SET", "job:input", "42"]])
        .client("A", move |c| holder(c, ja.clone(), ra.clone(), "A"))
        .client("B", move |c| holder(c, jb.clone(), rb.clone(), "B"))
        .before_each(move || {
            *jr.borrow_mut() = Journal::default();
            let mut r = rr.borrow_mut();
            r.last = None;
            r.log.clear();
        });
    s = if failover { s.failover() } else { s.replica() };
    if check != Check::Resource {
        let j = j.clone();
        s = s.invariant(ONE_HOLDER, move |_v: &mut View| {
            let h = holders(&j.borrow());
            if h.len() > 1 {
                return Err(format!("holders (client, fencing token): {:?}", h));
            }
            Ok(())
        });
    }
    if check != Check::Holders {
        s = s.invariant(ONE_WRITER, move |_v: &mut View| {
            let r = rv.borrow();
            let accepted: Vec<_> = r.log.iter().filter(|w| w.2).collect();
            for (k, a) in accepted.iter().enumerate() {
                if let Some(b) = accepted[..k].iter().find(|b| b.1 == a.1 && b.0 != a.0) {
                    return Err(format!(
                        "{} and {} both wrote under token {}; the resource's log: {:?}",
                        b.0, a.0, a.1, r.log
                    ));
                }
            }
            Ok(())
        });
    }
    s
}

/// A real redis-server primary and a second one as its replica, or None (outside CI) when
/// redis-server is missing; under CI=true a missing redis-server fails the test.
fn real_pair(test: &str) -> Option<(RealRedis, RealRedis)> {
    let primary = RealRedis::start_or_skip(test)?;
    let replica = RealRedis::start_or_skip(test)?;
    Some((primary, replica))
}

fn on_real_pair(s: Scenario, real: &Option<(RealRedis, RealRedis)>, sample: usize) -> Scenario {
    match real {
        Some((p, r)) => s.real_redis_pair(p.addr(), r.addr(), sample),
        None => s,
    }
}

fn failure_of(report: &Report) -> &redlab_client::explore::Failure {
    report.expect_failure()
}

#[test]
fn with_no_failover_the_lock_has_one_holder_whatever_the_replica_received() {
    if !lua_ready("failover: no failover") {
        return;
    }
    let real = real_pair("failover: no failover");
    for strict in [true, false] {
        let s = on_real_pair(scenario(false, strict, Check::Both), &real, 4);
        let report = s.exhaustive();
        println!("{}", report);
        report.assert_holds();
        // Deliveries interleave with every command: many schedules, not one.
        assert!(report.schedules > 50, "{}", report);
    }
}

#[test]
fn a_failover_that_loses_the_acquiring_write_gives_two_holders_here_and_on_real_redis() {
    if !lua_ready("failover: two holders") {
        return;
    }
    let real = real_pair("failover: two holders");
    let s = on_real_pair(scenario(true, true, Check::Holders), &real, 0);
    let report = s.exhaustive();
    println!("{}", report);
    let f = failure_of(&report);
    assert_eq!(f.violation.invariant, ONE_HOLDER, "{}", f);
    // A acquires on the primary; the failover loses that unit; B acquires on the new
    // primary, whose script cache is empty (NOSCRIPT, SCRIPT LOAD, EVALSHA).
    assert_eq!(f.schedule.to_string(), "A^BBB", "{}", f);
    let text = f.to_string();
    assert!(
        text.contains("1 unit(s) of the stream it had not received are lost"),
        "{}",
        f
    );
    if real.is_some() {
        assert!(
            f.reproduced_on_real_redis(),
            "the two holders must show on real Redis too:\n{}",
            f
        );
    }
    // The other strategies find it as well.
    assert!(s.random(7, 2_000).expect_failure().schedule.len() <= 5);
    assert!(s.pct(7, 3, 2_000).expect_failure().schedule.len() <= 5);
}

#[test]
fn a_failover_after_the_replica_received_the_acquire_keeps_one_holder() {
    if !lua_ready("failover: delivered") {
        return;
    }
    // The same moves with the acquiring unit delivered first: B finds the lock held.
    let s = scenario(true, true, Check::Holders);
    let mut runs = vec![s.replay("Ar^BBB").in_process()];
    let real = real_pair("failover: delivered");
    if let Some((p, r)) = &real {
        runs.push(s.replay("Ar^BBB").on_real_pair(p.addr(), r.addr()));
    }
    for run in runs {
        assert!(run.holds(), "{}", run);
        assert_eq!(
            run.timeline.results[1], "Ok(None)",
            "B did not acquire: {}",
            run
        );
    }
}

#[test]
fn fencing_tokens_catch_the_stale_holder_here_and_on_real_redis() {
    if !lua_ready("failover: fencing") {
        return;
    }
    let real = real_pair("failover: fencing");
    // Strictly increasing tokens: two holders exist, yet one token is accepted once.
    let s = on_real_pair(scenario(true, true, Check::Resource), &real, 6);
    let report = s.exhaustive();
    println!("{}", report);
    report.assert_holds();
    // A resource that takes an equal token lets both holders in: the invariant can fail.
    let lax = on_real_pair(scenario(true, false, Check::Resource), &real, 0);
    let report = lax.exhaustive();
    println!("{}", report);
    let f = failure_of(&report);
    assert_eq!(f.violation.invariant, ONE_WRITER, "{}", f);
    if real.is_some() {
        assert!(f.reproduced_on_real_redis(), "{}", f);
    }
    // The stale holder's write: A acquired on the old primary (lost), B acquired on the
    // new one with the same token and wrote first; A's late write is rejected.
    let schedule = "A^BBBBA";
    let mut runs = vec![s.replay(schedule).in_process()];
    if let Some((p, r)) = &real {
        runs.push(s.replay(schedule).on_real_pair(p.addr(), r.addr()));
    }
    for run in runs {
        println!("{}", run);
        assert!(run.holds(), "{}", run);
        assert_eq!(
            run.timeline.results[0], "Ok(Some(false))",
            "A is rejected: {}",
            run
        );
        assert_eq!(
            run.timeline.results[1], "Ok(Some(true))",
            "B wrote: {}",
            run
        );
    }
}
