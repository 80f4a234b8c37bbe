//! The versioned write under every interleaving: an admin's newer version is never
//! overwritten by a stale batch. The naive pipelined HSET batch is caught (each command of a
//! pipeline is a step other connections can come between), confirmed on a real
//! redis-server; the script passes the same schedules there.

mod explore_support;

use explore_support::{assert_reproduced, lua_ready, on_real, real, RANDOM, REAL_SAMPLE};
use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, Pipeline, Result, Script, VersionedHash, Write};

const KEY: &str = "product:42";

/// The batch worker's naive sync: the fields then the version, pipelined, no check.
async fn naive_batch(c: &Connection, fields: &[(&str, &str)], version: u64) -> Result<()> {
    let mut p = Pipeline::new();
    for (f, v) in fields {
        p.cmd(&["HSET", KEY, f, v]);
    }
    p.cmd(&["HSET", KEY, "version", &version.to_string()]);
    c.pipeline(&p).await?;
    Ok(())
}

async fn script_write(
    c: Connection,
    fields: &'static [(&'static str, &'static str)],
    version: u64,
) -> Result<Write> {
    VersionedHash::new(c).write(KEY, fields, version).await
}

const BATCH: &[(&str, &str)] = &[("price", "150000"), ("stock", "50"), ("status", "ACTIVE")];
const ADMIN: &[(&str, &str)] = &[("stock", "0")];

/// Once the admin's version 2 is in, no step may bring back an older version or the
/// batch's stock.
fn never_overwritten(s: Scenario) -> Scenario {
    s.invariant(
        "an admin's newer version is never overwritten by a stale batch",
        |v: &mut View| {
            if !v.finished("admin") {
                return Ok(());
            }
            let version: i64 = v
                .hget(KEY, "version")
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let stock = v.hget(KEY, "stock");
            if version < 2 || stock.as_deref() != Some("0") {
                return Err(format!(
                    "after the admin's edit (version 2, stock 0): version {}, stock {:?}",
                    version, stock
                ));
            }
            Ok(())
        },
    )
}

fn setup(s: Scenario) -> Scenario {
    s.setup(&[&[
        "HSET", KEY, "price", "100000", "stock", "10", "status", "ACTIVE", "version", "0",
    ]])
}

fn naive() -> Scenario {
    let s = setup(Scenario::new())
        .client("batch", |c| async move { naive_batch(&c, BATCH, 1).await })
        .client("admin", |c| async move { naive_batch(&c, ADMIN, 2).await });
    never_overwritten(s)
}

#[test]
fn the_naive_pipelined_batch_is_caught_and_reproduces_on_real_redis() {
    let real = real("the_naive_pipelined_batch_is_caught");
    let mut s = naive();
    s = on_real(s, &real, 0);
    let report = s.exhaustive();
    let f = report.expect_failure();
    println!("{}", report);
    assert_reproduced(f, &real);
    // The admin's two commands, then the batch's stock write: the shortest overwrite.
    assert_eq!(f.schedule.to_string(), "BBAA", "{}", f);
    for report in [s.random(5, RANDOM), s.pct(5, 2, RANDOM), s.proptest(500)] {
        let g = report.expect_failure();
        assert!(
            g.schedule.len() <= f.schedule.len(),
            "{}: {}",
            report.strategy,
            g
        );
    }
}

#[test]
fn the_batch_worker_is_interleaved_inside_its_pipeline() {
    // Background article's timeline: the batch's price, the admin's edit, the batch's stock.
    let run = naive().replay("ABBAA").in_process();
    let rows: Vec<_> = run
        .timeline
        .rows
        .iter()
        .map(|r| (r.client, r.what.clone()))
        .collect();
    assert_eq!(
        rows[1],
        (Some(1), "HSET product:42 stock 0".to_string()),
        "{}",
        run
    );
    assert!(run.violation.is_some(), "{}", run);
}

fn scripted(batches: usize) -> Scenario {
    let mut s = setup(Scenario::new())
        .load_script(&Script::new(include_str!(
            "../scripts/versioned_hash_write.lua"
        )))
        .client("batch", |c| async move { script_write(c, BATCH, 1).await })
        .client("admin", |c| async move { script_write(c, ADMIN, 2).await });
    if batches > 1 {
        s = s.client("retry", |c| async move { script_write(c, BATCH, 1).await });
    }
    never_overwritten(s).invariant("fields and version are written together", |v: &mut View| {
        let version = v.hget(KEY, "version");
        let stock = v.hget(KEY, "stock");
        match (version.as_deref(), stock.as_deref()) {
            (Some("0"), Some("10")) | (Some("1"), Some("50")) | (Some("2"), Some("0")) => Ok(()),
            other => Err(format!(
                "version and stock from different writes: {:?}",
                other
            )),
        }
    })
}

#[test]
fn the_script_holds_in_every_schedule_here_and_on_real_redis() {
    if !lua_ready("versioned: the_script_holds") {
        return;
    }
    let real = real("versioned: the_script_holds");
    for n in [1, 2] {
        let mut s = scripted(n);
        s = on_real(s, &real, REAL_SAMPLE);
        s.exhaustive().assert_holds();
        s.random(11, RANDOM).assert_holds();
    }
    // The schedule that breaks the naive batch, with the script.
    if let Some(r) = &real {
        let run = scripted(1).replay("BA").on_real_redis(r.addr());
        assert!(run.holds(), "{}", run);
        assert!(run.timeline.results[0].contains("Stale"), "{}", run);
    }
}
