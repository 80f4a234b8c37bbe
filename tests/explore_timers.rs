//! Client code that sleeps, times out and ticks, explored on one virtual clock shared with
//! the server: `tokio::time::sleep`, `timeout`, `interval` and `Instant` in the clients
//! never wait for real time; a sleep of d lets d of server time pass (TTLs expire); timer
//! firings and delayed replies are choices of the schedule.

use std::time::Duration;

use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, Error, Result};

/// Sleeps past the key's TTL and looks again: the server's clock moved with the sleep.
#[test]
fn a_sleep_moves_the_server_clock() {
    let s = Scenario::new()
        .setup(&[&["SET", "lease", "x", "PX", "100"]])
        .client("A", |c: Connection| async move {
            let before = c.cmd(&["EXISTS", "lease"]).await?.as_int();
            let t0 = tokio::time::Instant::now();
            tokio::time::sleep(Duration::from_millis(150)).await;
            let slept = t0.elapsed();
            let after = c.cmd(&["EXISTS", "lease"]).await?.as_int();
            Ok::<_, Error>((before, after, slept))
        })
        .invariant("the lease expired during the sleep", |v: &mut View| {
            if !v.is_final() {
                return Ok(());
            }
            match v.result::<Result<(Option<i64>, Option<i64>, Duration)>>("A") {
                Some(Ok((Some(1), Some(0), slept))) if *slept == Duration::from_millis(150) => {
                    Ok(())
                }
                other => Err(format!("A saw {:?}", other)),
            }
        });
    let report = s.exhaustive();
    report.assert_holds();
    let run = s.replay("AA").in_process();
    assert!(run.holds(), "{}", run);
    let text = run.timeline.to_string();
    assert!(text.contains("+150 ms (timer of A)"), "{}", text);
}

/// Interval ticks drive a loop of commands; virtual time advances by whole periods.
#[test]
fn an_interval_ticks_on_virtual_time() {
    let s = Scenario::new()
        .client("A", |c: Connection| async move {
            let start = tokio::time::Instant::now();
            let mut every = tokio::time::interval(Duration::from_millis(100));
            for _ in 0..3 {
                every.tick().await;
                c.cmd(&["INCR", "ticks"]).await?;
            }
            Ok::<_, Error>(start.elapsed())
        })
        .client("B", |c: Connection| async move {
            c.cmd(&["INCR", "other"]).await?;
            Ok::<_, Error>(Duration::ZERO)
        })
        .timer_steps(2)
        .invariant("three ticks over 200 ms", |v: &mut View| {
            if !v.is_final() {
                return true;
            }
            v.get_int("ticks") == Some(3)
                && matches!(v.result::<Result<Duration>>("A"), Some(Ok(d)) if *d == Duration::from_millis(200))
                && v.elapsed_ms() == 200
        });
    let r = s.exhaustive();
    r.assert_holds();
    assert!(
        r.schedules >= 3,
        "B goes before, between and after A's ticks"
    );
}

/// With timer steps, a sleeping client's timer may fire while others could still send;
/// without, time only passes when nobody else can run. The bug needs the early firing.
#[test]
fn timer_steps_let_a_sleeper_overtake() {
    let scenario = |steps: usize| {
        Scenario::new()
            .client("A", |c: Connection| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                c.cmd(&["SET", "k", "A"]).await
            })
            .client("B", |c: Connection| async move {
                c.cmd(&["SET", "k", "B"]).await
            })
            .timer_steps(steps)
            .invariant("A's write is the last", |v: &mut View| {
                !v.is_final() || v.get("k").as_deref() == Some("A")
            })
    };
    scenario(0).exhaustive().assert_holds();
    let r = scenario(1).exhaustive();
    let f = r.expect_failure();
    assert_eq!(f.schedule.to_string(), "tAB");
    let replay = scenario(1).replay("tAB").in_process();
    assert!(!replay.holds());
}

/// A timeout around a command whose reply is delayed fires first, although the write
/// landed: the classic "treat a timeout as failure" bug, made a schedule.
#[test]
fn a_delayed_reply_lets_a_timeout_fire_after_the_write_landed() {
    let s = Scenario::new()
        .client("A", |c: Connection| async move {
            let r = tokio::time::timeout(
                Duration::from_millis(50),
                c.cmd(&["SET", "job", "mine", "NX"]),
            )
            .await;
            let believed = matches!(r, Ok(Ok(_)));
            // The client goes on using the connection: the late reply is dropped.
            let after = c.cmd(&["GET", "job"]).await?;
            Ok::<_, Error>((believed, after.as_str().map(String::from)))
        })
        .delay_reply("A", Duration::from_millis(200))
        .invariant("A knows whether it wrote", |v: &mut View| {
            if !v.is_final() {
                return Ok(());
            }
            let exists = v.exists("job");
            match v.result::<Result<(bool, Option<String>)>>("A") {
                Some(Ok((believed, _))) if *believed != exists => Err(format!(
                    "A believes it wrote: {}, the key exists: {}",
                    believed, exists
                )),
                _ => Ok(()),
            }
        });
    let r = s.exhaustive();
    let f = r.expect_failure();
    assert!(f.schedule.to_string().starts_with("dA200"), "{}", f);
    let text = f.timeline.to_string();
    assert!(text.contains("reply held 200 ms"), "{}", text);
    assert!(text.contains("(timer of A)"), "{}", text);
    assert!(text.contains("late reply, dropped"), "{}", text);
}

/// A client awaiting something the explorer cannot drive fails clearly.
#[test]
fn awaiting_a_channel_is_reported() {
    let s = Scenario::new()
        .client("A", |_c: Connection| async move {
            let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
            let _ = rx.await;
        })
        .invariant("nothing", |_v: &mut View| true);
    let r = s.exhaustive();
    let f = r.expect_failure();
    assert!(
        f.violation
            .to_string()
            .contains("awaits neither its connection nor a timer"),
        "{}",
        f
    );
}
