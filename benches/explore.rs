//! The explorer's speed: exhaustive search of 3 clients x 4 commands of the max scenario
//! (12!/(4!)^3 = 34,650 schedules) in-process, and random exploration in scheduled commands
//! per second; once with plain commands and once with the monotonic-max script (EVALSHA,
//! loaded in the setup). `cargo bench --bench explore`. Goals: each exhaustive space under
//! 1 s on one core; random at least 50,000 schedules/s with or without scripts.

use std::time::Instant;

use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, MonotonicMax, Result, Script};

const MAX_SCRIPT: &str = include_str!("../scripts/monotonic_max.lua");

/// Four commands whatever the replies: read, write the larger, mark dirty, read back.
async fn max_client(c: &Connection, id: i64) -> Result<i64> {
    let cur = c.cmd(&["GET", "k"]).await?.as_int().unwrap_or(0);
    c.cmd(&["SET", "k", &cur.max(id).to_string()]).await?;
    c.cmd(&["SADD", "dirty", "k"]).await?;
    Ok(c.cmd(&["GET", "k"]).await?.as_int().unwrap_or(0))
}

fn scenario() -> Scenario {
    Scenario::new()
        .setup(&[&["SET", "k", "100"]])
        .client("A", |c| async move { max_client(&c, 150).await })
        .client("B", |c| async move { max_client(&c, 120).await })
        .client("C", |c| async move { max_client(&c, 170).await })
        .invariant("holds a submitted value", |v: &mut View| {
            matches!(v.get_int("k"), Some(100 | 120 | 150 | 170))
        })
}

/// Four script calls and reads: update k, read it, update k2, read it.
async fn scripted_client(c: Connection, id: u64) -> Result<u64> {
    let m = MonotonicMax::new(c, "dirty");
    m.update("k", id).await?;
    let a = m.get("k").await?.unwrap_or(0);
    m.update("k2", id).await?;
    Ok(a + m.get("k2").await?.unwrap_or(0))
}

fn scripted() -> Scenario {
    Scenario::new()
        .setup(&[&["SET", "k", "100"]])
        .load_script(&Script::new(MAX_SCRIPT))
        .client("A", |c| async move { scripted_client(c, 150).await })
        .client("B", |c| async move { scripted_client(c, 120).await })
        .client("C", |c| async move { scripted_client(c, 170).await })
        .invariant("holds a submitted value", |v: &mut View| {
            matches!(v.get_int("k"), Some(100 | 120 | 150 | 170))
        })
}

fn main() {
    for (name, s) in [("plain", scenario()), ("scripted", scripted())] {
        println!("{}:", name);
        measure(s);
    }
}

fn measure(s: Scenario) {
    // Warm up once.
    s.random(0, 200);
    let t = Instant::now();
    let r = s.exhaustive();
    let exhaustive = t.elapsed();
    assert!(r.holds());
    assert_eq!(r.schedules, 34_650);
    println!(
        "  exhaustive: {} schedules, {} commands in {:.3} s ({:.0} schedules/s, {:.0} commands/s; goal < 1 s)",
        r.schedules,
        r.steps,
        exhaustive.as_secs_f64(),
        r.schedules as f64 / exhaustive.as_secs_f64(),
        r.steps as f64 / exhaustive.as_secs_f64()
    );
    let t = Instant::now();
    let r = s.random(42, 50_000);
    let random = t.elapsed();
    assert!(r.holds());
    println!(
        "  random: {} schedules, {} commands in {:.3} s ({:.0} schedules/s, {:.0} commands/s; goal >= 50,000 schedules/s)",
        r.schedules,
        r.steps,
        random.as_secs_f64(),
        r.schedules as f64 / random.as_secs_f64(),
        r.steps as f64 / random.as_secs_f64()
    );
    let t = Instant::now();
    let r = s.pct(42, 3, 20_000);
    let pct = t.elapsed();
    println!(
        "  pct: {} schedules, {:.0} schedules/s, {:.0} commands/s",
        r.schedules,
        r.schedules as f64 / pct.as_secs_f64(),
        r.steps as f64 / pct.as_secs_f64()
    );
}
