//! The lock under every interleaving, with clock advances, GC pauses and crashes: at most
//! one client holds an unexpired lease at any server time; a release never deletes another
//! owner's lock; a renewal never extends another owner's lease; a handover leaves exactly
//! one owner; after a pause longer than the TTL the fencing token makes the resource reject
//! the stale holder's write; a crashed holder's lock is free after its TTL. The naive DEL
//! release and the renewal without the owner check are caught and confirmed on real Redis.

mod explore_support;

use std::time::Duration;

use explore_support::{
    assert_reproduced, lua_ready, note, on_real, real, stamp, Belief, Journal, Shared, RANDOM,
};
use redlab_client::explore::{Scenario, View};
use redlab_client::{Acquire, Connection, Lock, Result, Script, VersionedHash, Write};

/// Short enough that real-Redis replays (where clock advances are sleeps) stay quick, long
/// enough that no lease runs out between two commands by accident.
const TTL: u64 = 200;
const STEP: Duration = Duration::from_millis(300);
const KEY: &str = "lock:job";

#[derive(Clone, Copy, PartialEq)]
enum Release {
    Script,
    /// DEL without checking the token.
    NaiveDel,
}

#[derive(Clone, Copy, PartialEq)]
enum Renew {
    No,
    Script,
    /// PEXPIRE without checking the token.
    NaivePexpire,
}

#[derive(Clone, Copy)]
struct Plan {
    write: bool,
    renew: Renew,
    release: Release,
}

/// Acquire once; if acquired: maybe write the resource with the fencing token, maybe renew,
/// release. Returns the resource write's outcome, if it wrote.
async fn holder(c: Connection, j: Shared, who: &'static str, plan: Plan) -> Result<Option<Write>> {
    let lock = Lock::new(c.clone(), KEY, Duration::from_millis(TTL));
    let Acquire::Acquired(g) = lock.try_acquire().await? else {
        return Ok(None);
    };
    note(&j, who, Belief::holds(&g));
    let mut wrote = None;
    if plan.write {
        wrote = Some(
            VersionedHash::new(c.clone())
                .write("resource", &[("owner", who)], g.fence as u64)
                .await?,
        );
    }
    match plan.renew {
        Renew::No => {}
        Renew::Script => note(
            &j,
            who,
            if lock.renew(&g).await? {
                Belief::Renewed
            } else {
                Belief::Released
            },
        ),
        Renew::NaivePexpire => {
            if c.cmd(&["PEXPIRE", KEY, &TTL.to_string()]).await?.as_int() == Some(1) {
                note(&j, who, Belief::Renewed);
            }
        }
    }
    match plan.release {
        Release::Script => {
            lock.release(&g).await?;
        }
        Release::NaiveDel => {
            c.cmd(&["DEL", KEY]).await?;
        }
    }
    note(&j, who, Belief::Released);
    Ok(wrote)
}

/// Hands the lock over right after acquiring it; the new owner is "A2".
async fn hand_over(c: Connection, j: Shared) -> Result<bool> {
    let lock = Lock::new(c, KEY, Duration::from_millis(TTL));
    let Acquire::Acquired(g) = lock.try_acquire().await? else {
        return Ok(false);
    };
    note(&j, "A", Belief::holds(&g));
    if let Some(next) = lock.handover(&g).await? {
        note(&j, "A", Belief::Released);
        assert!(next.fence > g.fence, "the new owner gets a higher fence");
        note(&j, "A2", Belief::holds(&next));
    }
    Ok(true)
}

/// Which end of a lease an invariant measures. On real Redis the server sets the deadline
/// somewhere between the step's start and its reply: a client that is sure it holds the lock
/// counts from the start (`Earliest`); asking whether the server's lock outlives the lease,
/// count from the reply (`Latest`).
#[derive(Clone, Copy)]
enum LeaseEnd {
    Earliest,
    Latest,
}

/// Who holds a lease that has not run out at `now`: (who, token, lease end).
fn holders(j: &Journal, now: i64, end: LeaseEnd) -> Vec<(&'static str, String, i64)> {
    let mut state: Vec<(&'static str, Option<(String, i64)>)> = Vec::new();
    for e in &j.entries {
        let at = match end {
            LeaseEnd::Earliest => e.sent,
            LeaseEnd::Latest => e.at,
        }
        .unwrap_or(now);
        let slot = match state.iter().position(|s| s.0 == e.who) {
            Some(i) => i,
            None => {
                state.push((e.who, None));
                state.len() - 1
            }
        };
        match &e.what {
            Belief::Holds { token, .. } => state[slot].1 = Some((token.clone(), at + TTL as i64)),
            Belief::Renewed => {
                if let Some(h) = &mut state[slot].1 {
                    h.1 = at + TTL as i64;
                }
            }
            Belief::Released => state[slot].1 = None,
            Belief::Admitted(_) => {}
        }
    }
    state
        .into_iter()
        .filter_map(|(w, h)| h.filter(|h| h.1 > now).map(|(t, end)| (w, t, end)))
        .collect()
}

fn crashed_holder_token(j: &Journal, v: &View, who: &'static str) -> Option<(String, i64)> {
    let _ = v;
    let mut held = None;
    for e in j.entries.iter().filter(|e| e.who == who) {
        match &e.what {
            Belief::Holds { token, .. } => {
                held = Some((token.clone(), e.at.unwrap_or(0) + TTL as i64))
            }
            // A renewal moves the end of the lease the crashed holder had.
            Belief::Renewed => {
                if let Some(h) = &mut held {
                    h.1 = e.at.unwrap_or(0) + TTL as i64;
                }
            }
            Belief::Released => held = None,
            _ => {}
        }
    }
    held
}

/// The scenario's invariants, over the journal `j`.
fn invariants(s: Scenario, j: &Shared) -> Scenario {
    let (j1, j2, j3, j4, j5) = (j.clone(), j.clone(), j.clone(), j.clone(), j.clone());
    let reset = j.clone();
    // Real Redis rounds PTTL and its clock is not ours: a few ms of slack there.
    let slack = |v: &View| if v.on_real_redis() { 5 } else { 0 };
    s.before_each(move || *reset.borrow_mut() = Journal::default())
        .invariant("a renewal never extends another owner's lease", move |v: &mut View| {
            let now = v.elapsed_ms();
            stamp(&j1, now);
            let owner = v.get(KEY);
            let pttl = v.pttl(KEY);
            for (who, token, end) in holders(&j1.borrow(), now, LeaseEnd::Latest) {
                if owner.as_deref() == Some(token.as_str()) && pttl > 0 && now + pttl > end + slack(v) {
                    return Err(format!("{}'s lease ends at {} ms, but its lock lives until {} ms", who, end, now + pttl));
                }
            }
            Ok(())
        })
        .invariant("at most one client holds an unexpired lease", move |v: &mut View| {
            let now = v.elapsed_ms();
            stamp(&j2, now);
            let h = holders(&j2.borrow(), now, LeaseEnd::Earliest);
            if h.len() > 1 {
                return Err(format!("at {} ms: {:?}", now, h.iter().map(|h| (h.0, h.2)).collect::<Vec<_>>()));
            }
            Ok(())
        })
        .invariant("a release never deletes another owner's lock (and a handover leaves exactly one owner)", move |v: &mut View| {
            let now = v.elapsed_ms();
            stamp(&j3, now);
            let owner = v.get(KEY);
            for (who, token, end) in holders(&j3.borrow(), now, LeaseEnd::Earliest) {
                // A lease about to end may already be gone on a real server.
                if owner.as_deref() != Some(token.as_str()) && end - now > slack(v) {
                    return Err(format!("{} holds the lock until {} ms, but the key holds {:?}", who, end, owner));
                }
            }
            Ok(())
        })
        .invariant("the resource's fence never goes back", move |v: &mut View| {
            stamp(&j4, v.elapsed_ms());
            let fence: i64 = v.hget("resource", "version").and_then(|s| s.parse().ok()).unwrap_or(0);
            let prev = v.scratch::<i64>();
            let ok = fence >= *prev;
            *prev = fence;
            ok
        })
        .invariant("a crashed holder's lock is free after its TTL", move |v: &mut View| {
            let now = v.elapsed_ms();
            stamp(&j5, now);
            let crashed = ["A", "B"].into_iter().filter(|w| v.crashed(w)).collect::<Vec<_>>();
            for who in crashed {
                let held = crashed_holder_token(&j5.borrow(), v, who);
                if let Some((token, end)) = held {
                    if now > end + slack(v) && v.get(KEY).as_deref() == Some(token.as_str()) {
                        return Err(format!("{} crashed holding the lock until {} ms; at {} ms it is still held", who, end, now));
                    }
                }
            }
            Ok(())
        })
}

fn scripts(s: Scenario) -> Scenario {
    let mut s = s;
    for body in [
        include_str!("../scripts/lock_acquire.lua"),
        include_str!("../scripts/lock_release.lua"),
        include_str!("../scripts/lock_renew.lua"),
        include_str!("../scripts/lock_handover.lua"),
        include_str!("../scripts/versioned_hash_write.lua"),
    ] {
        s = s.load_script(&Script::new(body));
    }
    s
}

fn two_holders(a: Plan, b: Plan) -> Scenario {
    let j = Shared::default();
    let (ja, jb) = (j.clone(), j.clone());
    let s = scripts(Scenario::new())
        .client("A", move |c| holder(c, ja.clone(), "A", a))
        .client("B", move |c| holder(c, jb.clone(), "B", b))
        .clock_step(STEP, 1);
    invariants(s, &j)
}

const CORRECT: Plan = Plan {
    write: true,
    renew: Renew::Script,
    release: Release::Script,
};

#[test]
fn the_naive_del_release_is_caught_and_reproduces_on_real_redis() {
    if !lua_ready("lock: naive DEL release") {
        return;
    }
    let real = real("lock: naive DEL release");
    let naive = Plan {
        write: false,
        renew: Renew::No,
        release: Release::NaiveDel,
    };
    let mut s = two_holders(naive, naive);
    s = on_real(s, &real, 0);
    let report = s.exhaustive();
    let f = report.expect_failure();
    println!("{}", report);
    // A acquires, its lease runs out, B acquires, A's DEL removes B's lock.
    assert_eq!(f.schedule.to_string(), "A+300BA", "{}", f);
    assert!(
        f.violation.invariant.starts_with("a release never deletes"),
        "{}",
        f
    );
    assert_reproduced(f, &real);
    assert!(s.random(3, RANDOM).expect_failure().schedule.len() <= 4);
}

#[test]
fn the_renewal_without_owner_check_is_caught_and_reproduces_on_real_redis() {
    if !lua_ready("lock: naive renewal") {
        return;
    }
    let real = real("lock: naive renewal");
    let naive = Plan {
        write: false,
        renew: Renew::NaivePexpire,
        release: Release::Script,
    };
    let mut s = two_holders(
        naive,
        Plan {
            renew: Renew::No,
            ..naive
        },
    );
    s = on_real(s, &real, 0);
    let report = s.exhaustive();
    let f = report.expect_failure();
    println!("{}", report);
    assert_eq!(f.schedule.to_string(), "A+300BA", "{}", f);
    // Renewed at the moment B acquired, A's PEXPIRE makes A believe it holds B's lock.
    let caught_by = [
        "a renewal never extends another owner's lease",
        "at most one client holds an unexpired lease",
    ];
    assert!(caught_by.contains(&f.violation.invariant.as_str()), "{}", f);
    assert_reproduced(f, &real);
    assert!(s.pct(3, 3, RANDOM).expect_failure().schedule.len() <= 4);
}

#[test]
fn the_scripts_hold_with_pauses_and_crashes_here_and_on_real_redis() {
    if !lua_ready("lock: scripts hold") {
        return;
    }
    let real = real("lock: scripts hold");
    let mut s = two_holders(CORRECT, CORRECT).pause("A", STEP).crash("B");
    s = on_real(s, &real, 8);
    let report = s.exhaustive();
    report.assert_holds();
    assert!(report.schedules > 1000, "{}", report);
    let mut s = two_holders(CORRECT, CORRECT)
        .pause("A", STEP)
        .crash("A")
        .clock_step(Duration::from_millis(100), 3);
    s = on_real(s, &real, 4);
    s.random(9, RANDOM).assert_holds();
}

#[test]
fn after_a_pause_longer_than_the_ttl_the_fence_rejects_the_stale_write() {
    if !lua_ready("lock: fencing") {
        return;
    }
    let s = two_holders(CORRECT, CORRECT).pause("A", STEP);
    // A acquires, pauses past its TTL; B acquires, writes, renews, releases; A writes late.
    let schedule = "ApA300+300BBBBAAA";
    let mut runs = vec![s.replay(schedule).in_process()];
    let real = real("lock: fencing");
    if let Some(r) = &real {
        runs.push(s.replay(schedule).on_real_redis(r.addr()));
    }
    for run in runs {
        assert!(run.holds(), "{}", run);
        assert_eq!(
            run.timeline.results[0], "Ok(Some(Stale { stored: 2 }))",
            "{}",
            run
        );
        assert_eq!(run.timeline.results[1], "Ok(Some(Applied))", "{}", run);
    }
}

#[test]
fn a_crashed_holders_lock_is_free_after_its_ttl_and_a_handover_leaves_one_owner() {
    if !lua_ready("lock: crash and handover") {
        return;
    }
    let real = real("lock: crash and handover");
    let s = two_holders(CORRECT, CORRECT).crash("A");
    let mut runs = vec![s.replay("AxA+300B").in_process()];
    if let Some(r) = &real {
        runs.push(s.replay("AxA+300B").on_real_redis(r.addr()));
    }
    for run in runs {
        assert!(run.holds(), "{}", run);
        assert_eq!(
            run.timeline.results[1], "Ok(Some(Applied))",
            "B got the lock after A's TTL: {}",
            run
        );
    }
    let j = Shared::default();
    let (ja, jb) = (j.clone(), j.clone());
    let s = scripts(Scenario::new())
        .client("A", move |c| hand_over(c, ja.clone()))
        .client("B", move |c| holder(c, jb.clone(), "B", CORRECT))
        .clock_step(STEP, 1);
    let mut s = invariants(s, &j);
    s = on_real(s, &real, 6);
    s.exhaustive().assert_holds();
}
