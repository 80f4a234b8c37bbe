//! The monotonic max under every interleaving: the stored value is the maximum of the ids
//! submitted so far and never decreases; the dirty set holds every key that changed. The
//! naive GET-compare-SET is caught with the read-receipt race (T1..T4), confirmed on a real
//! redis-server; the script passes the same schedules there.

mod explore_support;

use explore_support::{assert_reproduced, lua_ready, on_real, real, RANDOM, REAL_SAMPLE};
use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, MonotonicMax, Result};

const DIRTY: &str = "lastRead:dirty";

/// The naive update: GET, compare in the client, SET, mark dirty. Three steps another
/// client can come between.
async fn naive_max(c: &Connection, key: &str, id: i64) -> Result<bool> {
    let cur = c.cmd(&["GET", key]).await?.as_int().unwrap_or(0);
    if id <= cur {
        return Ok(false);
    }
    c.cmd(&["SET", key, &id.to_string()]).await?;
    c.cmd(&["SADD", DIRTY, key]).await?;
    Ok(true)
}

async fn script_max(c: Connection, key: &str, id: u64) -> Result<bool> {
    MonotonicMax::new(c, DIRTY).update(key, id).await
}

/// What the setup stored: lastRead:u1 = 100, nothing else.
fn initial_of(key: &str) -> i64 {
    if key == "lastRead:u1" {
        100
    } else {
        0
    }
}

/// (client, key, id) of each submission.
fn invariants(s: Scenario, subs: &'static [(&'static str, &'static str, i64)]) -> Scenario {
    s.invariant("never decreases", move |v: &mut View| {
        let mut keys: Vec<&str> = subs.iter().map(|s| s.1).collect();
        keys.sort();
        keys.dedup();
        for (k, key) in keys.iter().enumerate() {
            let initial = initial_of(key);
            let now = v.get_int(key).unwrap_or(initial);
            let prev = v.scratch::<Vec<Option<i64>>>();
            prev.resize(keys.len(), None);
            let before = prev[k].unwrap_or(initial);
            prev[k] = Some(now);
            if now < before {
                return Err(format!("{} went from {} to {}", key, before, now));
            }
        }
        Ok(())
    })
    .invariant(
        "is the maximum of the ids submitted so far",
        move |v: &mut View| {
            let mut keys: Vec<&str> = subs.iter().map(|s| s.1).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let initial = initial_of(key);
                let stored = v.get_int(key).unwrap_or(initial);
                let done = subs
                    .iter()
                    .filter(|s| s.1 == key && v.finished(s.0))
                    .map(|s| s.2)
                    .fold(initial, i64::max);
                let sent_or_initial =
                    stored == initial || subs.iter().any(|s| s.1 == key && s.2 == stored);
                if stored < done || !sent_or_initial {
                    return Err(format!(
                        "{} holds {}, but the finished submissions' maximum is {}",
                        key, stored, done
                    ));
                }
            }
            Ok(())
        },
    )
    .invariant(
        "the dirty set holds every key that changed",
        move |v: &mut View| {
            if !v.is_final() {
                return Ok(());
            }
            let dirty = v.smembers(DIRTY);
            for s in subs {
                if v.get_int(s.1).unwrap_or(initial_of(s.1)) != initial_of(s.1)
                    && !dirty.iter().any(|d| d == s.1)
                {
                    return Err(format!("{} changed but is not in {}", s.1, DIRTY));
                }
            }
            Ok(())
        },
    )
}

const READ_RECEIPT: &[(&str, &str, i64)] = &[("A", "lastRead:u1", 150), ("B", "lastRead:u1", 120)];

fn naive_read_receipt() -> Scenario {
    naive_scenario(READ_RECEIPT)
}

/// The naive update by each (client, key, id) of `subs`, after the setup's lastRead:u1 = 100,
/// under the invariants.
fn naive_scenario(subs: &'static [(&'static str, &'static str, i64)]) -> Scenario {
    let mut s = Scenario::new().setup(&[&["SET", "lastRead:u1", "100"]]);
    for &(name, key, id) in subs {
        s = s.client(name, move |c| async move { naive_max(&c, key, id).await });
    }
    invariants(s, subs)
}

#[test]
fn naive_max_is_caught_with_the_read_receipt_race() {
    let real = real("naive_max_is_caught_with_the_read_receipt_race");
    let mut s = naive_read_receipt();
    s = on_real(s, &real, 0);
    let report = s.exhaustive();
    let f = report.expect_failure();
    // The read-receipt table: both read 100 (T1, T2), A stores 150 (T3), B stores 120 over
    // it (T4). Four steps, no more; the shrinker prefers the order with fewer switches.
    assert_eq!(f.schedule.to_string(), "BAAB", "{}", f);
    assert_eq!(f.violation.invariant, "never decreases", "{}", f);
    let rows: Vec<String> = f
        .timeline
        .rows
        .iter()
        .map(|r| format!("{} {}", r.what, r.reply))
        .collect();
    assert_eq!(
        rows,
        [
            "GET lastRead:u1 \"100\"",
            "GET lastRead:u1 \"100\"",
            "SET lastRead:u1 150 OK",
            "SET lastRead:u1 120 OK"
        ]
    );
    assert_reproduced(f, &real);
    println!("{}", report);
    // The table names the clients and the replay command.
    let text = report.to_string();
    assert!(
        text.contains("REDLAB_SCHEDULE=BAAB") && text.contains("| A"),
        "{}",
        text
    );
}

#[test]
fn naive_max_is_caught_by_every_strategy_and_shrunk_to_four_steps() {
    let s = naive_read_receipt();
    for report in [s.random(1, RANDOM), s.pct(1, 2, RANDOM), s.proptest(1000)] {
        let f = report.expect_failure();
        assert_eq!(f.schedule.len(), 4, "{}: {}", report.strategy, f);
        assert!(f.schedule.switches() >= 2, "{}", f);
    }
}

#[test]
fn replay_gives_the_same_replies_in_process_and_on_real_redis() {
    let s = naive_read_receipt();
    let here = s.replay("ABAB").in_process();
    assert!(here.violation.is_some(), "{}", here);
    if let Some(r) = real("replay_gives_the_same_replies") {
        let there = s.replay("ABAB").on_real_redis(r.addr());
        assert_eq!(here.replies(), there.replies(), "{}\n{}", here, there);
        assert!(
            there.reproduces(here.violation.as_ref().unwrap()),
            "{}",
            there
        );
    }
    // A serial schedule holds.
    assert!(s.replay("AAABB").in_process().holds());
}

const THREE: &[(&str, &str, i64)] = &[
    ("A", "lastRead:u1", 150),
    ("B", "lastRead:u1", 120),
    ("C", "lastRead:u1", 170),
    ("D", "lastRead:u2", 90),
];

fn script_scenario(clients: usize) -> Scenario {
    let mut s = Scenario::new()
        .setup(&[&["SET", "lastRead:u1", "100"]])
        .load_script(&redlab_client::Script::new(include_str!(
            "../scripts/monotonic_max.lua"
        )));
    for &(name, key, id) in &THREE[..clients] {
        s = s.client(
            name,
            move |c| async move { script_max(c, key, id as u64).await },
        );
    }
    invariants(s, &THREE[..clients])
}

#[test]
fn the_script_holds_in_every_schedule_here_and_on_real_redis() {
    if !lua_ready("the_script_holds_in_every_schedule") {
        return;
    }
    let real = real("the_script_holds_in_every_schedule");
    for n in 2..=4 {
        let mut s = script_scenario(n);
        s = on_real(s, &real, REAL_SAMPLE);
        let report = s.exhaustive();
        report.assert_holds();
        assert!(real.is_none() || report.real_replayed > 0);
    }
    let mut s = script_scenario(4);
    s = on_real(s, &real, REAL_SAMPLE);
    s.random(7, RANDOM).assert_holds();
    // The exact schedule that breaks the naive version.
    if let Some(r) = &real {
        assert!(script_scenario(2)
            .replay("ABAB")
            .on_real_redis(r.addr())
            .holds());
    }
}

#[test]
fn naive_max_random_scope_of_three_clients_and_two_keys() {
    let f = naive_scenario(THREE)
        .random(3, RANDOM)
        .failure
        .expect("caught");
    assert_eq!(f.schedule.len(), 4, "{}", f);
}
