//! The explorer's speed: exhaustive search of 3 clients x 4 commands of the max scenario
//! (12!/(4!)^3 = 34,650 schedules) in-process, and random exploration in scheduled commands
//! per second; once with plain commands and once with the monotonic-max script (EVALSHA,
//! loaded in the setup). `cargo bench --bench explore`. Goals: each exhaustive space under
//! 1 s on one core; random at least 50,000 schedules/s with or without scripts.
//!
//! The bench keeps Rust's default allocator (the system's), unlike the TCP benches, which
//! measure the `redlab-server` binary and install its mimalloc: the explorer runs inside the
//! user's own test binary, and the library does not choose that binary's allocator.

use std::time::Instant;

use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, MonotonicMax, Result, Script};

thread_local! {
    /// Schedules run to their end (a random walk that repeats a schedule seen before is
    /// counted in the report but not run again).
    static RAN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

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
            if v.is_final() {
                RAN.with(|r| r.set(r.get() + 1));
            }
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
            if v.is_final() {
                RAN.with(|r| r.set(r.get() + 1));
            }
            matches!(v.get_int("k"), Some(100 | 120 | 150 | 170))
        })
}

/// `cargo bench --bench explore -- [plain|scripted] [exhaustive|random|pct]`: the words
/// given pick the scenarios and strategies (all of them by default).
fn main() {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |w: &str, group: &[&str]| {
        !words.iter().any(|x| group.contains(&x.as_str())) || words.iter().any(|x| x == w)
    };
    for (name, s) in [("plain", scenario()), ("scripted", scripted())] {
        if !wanted(name, &["plain", "scripted"]) {
            continue;
        }
        println!("{}:", name);
        measure(s, |w| wanted(w, &["exhaustive", "random", "pct"]));
    }
}

/// CPU seconds this process has used (user + system), from /proc/self/stat; None where
/// there is no /proc. On a loaded machine wall time measures the neighbours too, so the
/// figures are given per CPU second as well.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs `f`, returning its result, wall seconds and CPU seconds (wall where unknown).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let cpu0 = cpu_seconds();
    let t = Instant::now();
    let r = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => wall,
    };
    (r, wall, cpu)
}

fn measure(s: Scenario, run: impl Fn(&str) -> bool) {
    // Warm up once.
    s.random(0, 200);
    if run("exhaustive") {
        exhaustive(&s);
    }
    if run("random") {
        random(&s);
    }
    if run("pct") {
        pct(&s);
    }
}

fn exhaustive(s: &Scenario) {
    let (r, wall, cpu) = timed(|| s.exhaustive());
    assert!(r.holds());
    assert_eq!(r.schedules, 34_650);
    println!(
        "  exhaustive: {} schedules, {} commands in {:.3} s wall, {:.2} s CPU ({:.0} schedules per CPU s; goal < 1 s)",
        r.schedules, r.steps, wall, cpu,
        r.schedules as f64 / cpu,
    );
}

/// Random walks reuse the tree of schedules seen so far (a schedule seen before costs
/// nothing), so the figure depends on how many of the walks are new: both are printed.
fn random(s: &Scenario) {
    RAN.with(|r| r.set(0));
    let (r, wall, cpu) = timed(|| s.random(42, 50_000));
    assert!(r.holds());
    println!(
        "  random: {} schedules ({} run, the rest seen before), {} commands in {:.3} s wall, {:.2} s CPU ({:.0} schedules, {:.0} commands per CPU s; goal >= 50,000 schedules/s)",
        r.schedules, RAN.with(|r| r.get()), r.steps, wall, cpu,
        r.schedules as f64 / cpu,
        r.steps as f64 / cpu
    );
}

fn pct(s: &Scenario) {
    let (r, wall, cpu) = timed(|| s.pct(42, 3, 20_000));
    println!(
        "  pct: {} schedules in {:.3} s wall, {:.2} s CPU ({:.0} schedules per CPU s)",
        r.schedules,
        wall,
        cpu,
        r.schedules as f64 / cpu,
    );
}
