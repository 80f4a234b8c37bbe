//! `cargo run --example explore_max`: the read-receipt race of a naive GET-compare-SET max,
//! found by the explorer and printed as a timeline, then the script version passing every
//! schedule. With redis-server on PATH, the counterexample is replayed on it too.

use redlab::client::explore::{Scenario, View};
use redlab::client::{Connection, MonotonicMax, RealRedis, Result, Script};

/// The code under test: read, compare in the client, write. Another request can come in
/// between any two of these commands.
async fn naive_max(c: &Connection, key: &str, id: i64) -> Result<bool> {
    let cur = c.cmd(&["GET", key]).await?.as_int().unwrap_or(0);
    if id <= cur {
        return Ok(false);
    }
    c.cmd(&["SET", key, &id.to_string()]).await?;
    c.cmd(&["SADD", "lastRead:dirty", key]).await?;
    Ok(true)
}

fn never_decreases(v: &mut View) -> std::result::Result<(), String> {
    let now = v.get_int("lastRead:u1").unwrap_or(0);
    let before = std::mem::replace(v.scratch::<i64>(), now);
    if now < before {
        return Err(format!("went from {} to {}", before, now));
    }
    Ok(())
}

fn main() {
    let real = RealRedis::start().ok();
    let mut naive = Scenario::new()
        .setup(&[&["SET", "lastRead:u1", "100"]])
        .client(
            "A",
            |c| async move { naive_max(&c, "lastRead:u1", 150).await },
        )
        .client(
            "B",
            |c| async move { naive_max(&c, "lastRead:u1", 120).await },
        )
        .invariant("never decreases", never_decreases);
    if let Some(r) = &real {
        naive = naive.real_redis(r.addr(), 0);
    }
    println!("== the naive GET-compare-SET ==\n{}", naive.exhaustive());

    let script = Script::new(include_str!("../scripts/monotonic_max.lua"));
    let mut scripted = Scenario::new()
        .setup(&[&["SET", "lastRead:u1", "100"]])
        .load_script(&script)
        .client("A", |c| async move {
            MonotonicMax::new(c, "lastRead:dirty")
                .update("lastRead:u1", 150)
                .await
        })
        .client("B", |c| async move {
            MonotonicMax::new(c, "lastRead:dirty")
                .update("lastRead:u1", 120)
                .await
        })
        .client("C", |c| async move {
            MonotonicMax::new(c, "lastRead:dirty")
                .update("lastRead:u1", 170)
                .await
        })
        .invariant("never decreases", never_decreases);
    if let Some(r) = &real {
        scripted = scripted.real_redis(r.addr(), 20);
    }
    println!(
        "== the script (monotonic_max.lua) ==\n{}",
        scripted.exhaustive()
    );
    println!("{}", scripted.random(1, 10_000));
}
