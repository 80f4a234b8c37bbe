//! The lock as teams use it, with its timers: `Lock::acquire` retrying with backoff sleeps,
//! the watchdog loop (`Lock::keep_alive`) renewing beside the work, GC pauses and crashes,
//! all on the explorer's virtual clock.
//!
//! - acquire-with-backoff is a mutex: the history of acquires and releases is linearizable;
//! - an acquire that wraps each attempt in a timeout and takes a timeout for "not acquired"
//!   is caught (the write landed: the lock is held by nobody who knows it);
//! - a watchdog that renews with PEXPIRE, without checking ownership, is caught extending
//!   the next owner's lease after a pause; `keep_alive` learns the loss instead;
//! - a crashed holder's lock frees up after its TTL and a waiting acquire gets it.
//!
//! Counterexamples are replayed on a real redis-server when one is installed.

mod explore_support;

use std::time::Duration;

use explore_support::{
    assert_reproduced, lua_ready, note, on_real, real, stamp, Belief, Journal, Shared,
};
use redlab_client::explore::linearizable::models::{LockModel, LockOp};
use redlab_client::explore::linearizable::History;
use redlab_client::explore::{Scenario, View};
use redlab_client::{Acquire, Connection, Lock, Result, Script, WatchdogEnd};

const KEY: &str = "lock:job";

/// The lock's scripts, loaded in the setup so each call is one EVALSHA (as in production
/// once the cache is warm) and schedules of different versions line up step for step.
fn with_lock_scripts(s: Scenario) -> Scenario {
    [
        include_str!("../scripts/lock_acquire.lua"),
        include_str!("../scripts/lock_release.lua"),
        include_str!("../scripts/lock_renew.lua"),
    ]
    .iter()
    .fold(s, |s, body| s.load_script(&Script::new(body)))
}

/// Acquire with backoff, hold for `hold` (sleeping), release; recorded as a mutex history.
async fn use_lock(
    c: Connection,
    h: History<LockModel>,
    who: &'static str,
    hold: Duration,
) -> Result<bool> {
    let lock = Lock::new(c, KEY, Duration::from_millis(2_000));
    let call = h.call(who, LockOp::Acquire(who.into()));
    let got = lock.acquire(Duration::from_millis(400)).await?;
    h.ret(call, got.is_some());
    let Some(g) = got else {
        return Ok(false);
    };
    tokio::time::sleep(hold).await;
    let call = h.call(who, LockOp::Release(who.into()));
    let released = lock.release(&g).await?;
    h.ret(call, released);
    Ok(true)
}

#[test]
fn acquire_with_backoff_is_a_mutex() {
    if !lua_ready("acquire_with_backoff_is_a_mutex") {
        return;
    }
    let h: History<LockModel> = History::new();
    let (ha, hb, hc) = (h.clone(), h.clone(), h.clone());
    let s = with_lock_scripts(Scenario::new())
        .client("A", move |c| {
            use_lock(c, ha.clone(), "A", Duration::from_millis(30))
        })
        .client("B", move |c| {
            use_lock(c, hb.clone(), "B", Duration::from_millis(30))
        })
        .client("C", move |c| {
            use_lock(c, hc.clone(), "C", Duration::from_millis(500))
        })
        .timer_steps(2)
        .linearizable(
            "acquire and release are a mutex's",
            &h,
            LockModel::default(),
        )
        .invariant("every client finished", |v: &mut View| {
            !v.is_final() || ["A", "B", "C"].iter().all(|c| v.finished(c))
        });
    s.random(1, 1_000).assert_holds();
    s.pct(2, 3, 500).assert_holds();
}

/// One attempt under a timeout. With `timeout_is_failure` a timeout is recorded as "not
/// acquired": that is the broken part, for the script may have run, and then the lock is held
/// by a token nobody knows. Without it a timeout leaves the outcome unknown: no answer is
/// recorded, and the caller does not claim the lock is free.
async fn acquire_under_timeout(
    c: Connection,
    h: History<LockModel>,
    who: &'static str,
    timeout_is_failure: bool,
) -> Result<bool> {
    let lock = Lock::new(c, KEY, Duration::from_millis(2_000));
    let call = h.call(who, LockOp::Acquire(who.into()));
    match tokio::time::timeout(Duration::from_millis(50), lock.try_acquire()).await {
        Ok(r) => {
            let got = matches!(r?, Acquire::Acquired(_));
            h.ret(call, got);
            Ok(got)
        }
        Err(_elapsed) => {
            if timeout_is_failure {
                h.ret(call, false);
            }
            Ok(false)
        }
    }
}

#[test]
fn an_acquire_that_takes_a_timeout_for_failure_is_caught() {
    if !lua_ready("an_acquire_that_takes_a_timeout_for_failure_is_caught") {
        return;
    }
    let server = real("an_acquire_that_takes_a_timeout_for_failure_is_caught");
    let scenario = |broken: bool| {
        let h: History<LockModel> = History::new();
        let (ha, hb) = (h.clone(), h.clone());
        let mut s = with_lock_scripts(Scenario::new())
            .client("A", move |c| {
                let h = ha.clone();
                async move { acquire_under_timeout(c, h, "A", broken).await }
            })
            .client("B", move |c| {
                let h = hb.clone();
                async move { acquire_under_timeout(c, h, "B", false).await }
            })
            .delay_reply("A", Duration::from_millis(100))
            .linearizable("acquire is a mutex's", &h, LockModel::default());
        s = on_real(s, &server, 0);
        s
    };
    let r = scenario(true).exhaustive();
    let f = r.expect_failure();
    assert!(f.schedule.to_string().contains("dA100"), "{}", f);
    assert!(
        f.violation
            .to_string()
            .contains("no order of these operations"),
        "{}",
        f
    );
    assert_reproduced(f, &server);
    scenario(false).exhaustive().assert_holds();
}

/// The broken watchdog: PEXPIRE on the key, whoever holds it.
async fn naive_keep_alive(c: &Connection, ttl: Duration) -> WatchdogEnd {
    loop {
        tokio::time::sleep(ttl / 3).await;
        match c.cmd(&["PEXPIRE", KEY, &ttl.as_millis().to_string()]).await {
            Ok(v) if v.as_int() == Some(1) => continue,
            Ok(_) => return WatchdogEnd::Lost,
            Err(e) => return WatchdogEnd::Failed(e),
        }
    }
}

const TTL: Duration = Duration::from_millis(90);

/// A holds the lock for 300 ms of work (more than three TTLs) with a watchdog beside it.
async fn worker(c: Connection, j: Shared, broken: bool) -> Result<&'static str> {
    let lock = Lock::new(c.clone(), KEY, TTL);
    let Some(g) = lock.acquire(Duration::from_millis(50)).await? else {
        return Ok("not acquired");
    };
    note(&j, "A", Belief::holds(&g));
    let dog = async {
        if broken {
            naive_keep_alive(&c, TTL).await
        } else {
            lock.keep_alive(&g).await
        }
    };
    tokio::select! {
        biased;
        end = dog => {
            note(&j, "A", Belief::Released);
            Ok(if end == WatchdogEnd::Lost { "lost the lock" } else { "watchdog failed" })
        }
        _ = tokio::time::sleep(Duration::from_millis(300)) => {
            lock.release(&g).await?;
            note(&j, "A", Belief::Released);
            Ok("done")
        }
    }
}

/// B polls for the lock every 20 ms (fixed steps, so a replay on real Redis takes the same
/// path even when the server's clock runs a few ms ahead) and holds it for half a TTL,
/// without a watchdog.
async fn waiter(c: Connection, j: Shared) -> Result<&'static str> {
    let lock = Lock::new(c, KEY, TTL);
    let mut got = None;
    for _ in 0..50 {
        if let Acquire::Acquired(g) = lock.try_acquire().await? {
            got = Some(g);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let Some(g) = got else {
        return Ok("not acquired");
    };
    note(&j, "B", Belief::holds(&g));
    tokio::time::sleep(TTL / 2).await;
    lock.release(&g).await?;
    note(&j, "B", Belief::Released);
    Ok("done")
}

fn watchdog_scenario(broken: bool, j: Shared) -> Scenario {
    let (ja, jb, jr, jc) = (j.clone(), j.clone(), j.clone(), j);
    with_lock_scripts(Scenario::new())
        .client("A", move |c| worker(c, ja.clone(), broken))
        .client("B", move |c| waiter(c, jb.clone()))
        .pause("A", Duration::from_millis(100))
        .before_each(move || *jr.borrow_mut() = Journal::default())
        .invariant("nobody extends B's lease but B", move |v: &mut View| {
            let now = v.elapsed_ms();
            stamp(&jc, now);
            let journal = jc.borrow();
            let b_holds = journal
                .entries
                .iter()
                .rev()
                .find_map(|e| match (&e.what, e.who) {
                    (Belief::Holds { token, .. }, "B") => {
                        Some((token.clone(), e.at.unwrap_or(now)))
                    }
                    _ => None,
                });
            let Some((token, since)) = b_holds else {
                return Ok(());
            };
            if v.get(KEY).as_deref() != Some(token.as_str()) {
                return Ok(());
            }
            let expires = now + v.pttl(KEY);
            let allowed = since + TTL.as_millis() as i64;
            if expires > allowed {
                return Err(format!(
                    "B's lease, taken at {} ms for {} ms, now runs to {} ms",
                    since,
                    TTL.as_millis(),
                    expires
                ));
            }
            Ok(())
        })
}

#[test]
fn a_watchdog_that_renews_without_checking_ownership_is_caught() {
    if !lua_ready("a_watchdog_that_renews_without_checking_ownership_is_caught") {
        return;
    }
    let server = real("a_watchdog_that_renews_without_checking_ownership_is_caught");
    let j: Shared = Default::default();
    let mut broken = watchdog_scenario(true, j.clone());
    broken = on_real(broken, &server, 0);
    let r = broken.random(3, 2_000);
    let f = r.expect_failure();
    assert!(f.schedule.to_string().contains("pA100"), "{}", f);
    assert_reproduced(f, &server);

    let correct = watchdog_scenario(false, j);
    correct.random(3, 2_000).assert_holds();
    // In the schedule that broke the naive watchdog, keep_alive learns it lost the lock
    // (the run may end early: A stops working once it knows).
    let run = correct.replay(&f.schedule.to_string()).in_process();
    assert!(run.violation.is_none(), "{}", run);
}

#[test]
fn a_crashed_holders_lock_frees_up_after_its_ttl() {
    if !lua_ready("a_crashed_holders_lock_frees_up_after_its_ttl") {
        return;
    }
    let j: Shared = Default::default();
    let (ja, jb) = (j.clone(), j.clone());
    let s = with_lock_scripts(Scenario::new())
        .client("A", move |c| {
            let j = ja.clone();
            async move {
                let lock = Lock::new(c, KEY, TTL);
                let g = lock.acquire(Duration::from_millis(10)).await?;
                if let Some(g) = &g {
                    note(&j, "A", Belief::holds(g));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, redlab_client::Error>(g.is_some())
            }
        })
        .client("B", move |c| waiter(c, jb.clone()))
        .crash("A")
        .invariant("B gets the lock once A's lease runs out", |v: &mut View| {
            if !v.is_final() {
                return Ok(());
            }
            match v.result::<Result<&'static str>>("B") {
                Some(Ok("done")) => Ok(()),
                other => Err(format!("B ended with {:?}", other)),
            }
        });
    let r = s.exhaustive();
    r.assert_holds();
    assert!(r.schedules > 3);
}
