//! At-least-once delivery with a consumer group, under interleavings, clock advances and a
//! worker crash: a producer adds jobs, two workers take them with the claim-or-read script
//! (`scripts/stream_claim_or_read.lua`), process them and acknowledge. After recovery (a
//! last worker claiming whatever is still pending with XAUTOCLAIM and reading whatever was
//! never delivered), every job must have been processed and acknowledged exactly once by
//! the group. A worker that acknowledges before processing loses the job it held when it
//! crashes; the explorer finds that, shrinks it and replays it on a real redis-server.

mod explore_support;

use std::time::Duration;

use explore_support::{assert_reproduced, lua_ready, on_real, real, REAL_SAMPLE};
use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, Result, StreamGroup, Value};

const STREAM: &str = "jobs";
const GROUP: &str = "workers";
const MIN_IDLE: Duration = Duration::from_millis(1000);
const JOBS: [&str; 2] = ["j1", "j2"];

/// "Processing" a job: recorded in the set `processed`.
async fn process(c: &Connection, job: &[u8]) -> Result<()> {
    c.cmd(&[&b"SADD"[..], &b"processed"[..], job]).await?;
    Ok(())
}

/// Acknowledges an entry and, in the same atomic step, tallies an acknowledgement that
/// counted (XACK 1) in the hash `acks`: that is how the invariants see "acknowledged exactly
/// once" (a tally sent after XACK could be cut off by a crash).
const ACK_AND_TALLY: &str = "if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 1 then \
     redis.call('HINCRBY', KEYS[2], ARGV[3], 1) end return 1";

/// The EVAL of ACK_AND_TALLY that acknowledges entry `id` and tallies `job`.
fn ack_command<'a>(id: &'a str, job: &'a [u8]) -> [&'a [u8]; 8] {
    [
        b"EVAL",
        ACK_AND_TALLY.as_bytes(),
        b"2",
        STREAM.as_bytes(),
        b"acks",
        GROUP.as_bytes(),
        id.as_bytes(),
        job,
    ]
}

async fn ack(c: &Connection, id: &str, job: &[u8]) -> Result<()> {
    c.cmd(&ack_command(id, job)).await?;
    Ok(())
}

/// A worker taking up to three jobs. The correct one processes, then acknowledges; the
/// naive one acknowledges first.
async fn worker(c: Connection, name: &'static str, ack_first: bool) -> Result<usize> {
    let g = StreamGroup::new(c.clone(), STREAM, GROUP);
    let mut done = 0;
    for _ in 0..3 {
        let Some(d) = g.claim_or_read(name, MIN_IDLE).await? else {
            break;
        };
        let e = d.entry();
        let job = e.get("job").unwrap_or(b"?").to_vec();
        if ack_first {
            ack(&c, &e.id, &job).await?;
            process(&c, &job).await?;
        } else {
            process(&c, &job).await?;
            ack(&c, &e.id, &job).await?;
        }
        done += 1;
    }
    Ok(done)
}

fn ints(v: &Value) -> Vec<Value> {
    v.as_array().map(<[Value]>::to_vec).unwrap_or_default()
}

/// The recovery a supervisor runs once workers are gone: claim every pending entry (any
/// idle time), read every never-delivered one, process and acknowledge each.
fn recover(v: &mut View) {
    let mut todo: Vec<(String, Vec<u8>)> = Vec::new();
    let claimed = v.cmd(&[
        "XAUTOCLAIM",
        STREAM,
        GROUP,
        "recovery",
        "0",
        "0-0",
        "COUNT",
        "100",
    ]);
    let fresh = v.cmd(&[
        "XREADGROUP",
        "GROUP",
        GROUP,
        "recovery",
        "STREAMS",
        STREAM,
        ">",
    ]);
    let mut found = ints(ints(&claimed).get(1).unwrap_or(&Value::Nil));
    if let Some(pair) = ints(&fresh).first() {
        found.extend(ints(ints(pair).get(1).unwrap_or(&Value::Nil)));
    }
    for e in found {
        let e = ints(&e);
        let id = e.first().and_then(Value::as_str).unwrap_or("").to_string();
        let fields = ints(e.get(1).unwrap_or(&Value::Nil));
        let job = fields
            .get(1)
            .and_then(Value::as_bytes)
            .unwrap_or(b"?")
            .to_vec();
        todo.push((id, job));
    }
    for (id, job) in todo {
        v.cmd(&[&b"SADD"[..], &b"processed"[..], &job[..]]);
        v.cmd(&ack_command(&id, &job));
    }
}

/// The group, the claim-or-read script and a producer adding every job: what each
/// scenario starts from.
fn with_producer() -> Scenario {
    Scenario::new()
        .setup(&[&["XGROUP", "CREATE", STREAM, GROUP, "$", "MKSTREAM"]])
        .load_script(&StreamGroup::claim_or_read_script())
        .client("P", |c| async move {
            for job in JOBS {
                c.cmd(&["XADD", STREAM, "*", "job", job]).await?;
            }
            Ok::<_, redlab_client::Error>(())
        })
}

/// Explores the scenario `make` builds (on real Redis too, when one runs) and asserts that a
/// schedule breaks it with a message containing `expected`, and that the schedule breaks real
/// Redis the same way. Skipped (as `lua_ready` says) without the Lua the scripts need.
fn expect_caught(name: &str, make: impl FnOnce() -> Scenario, seed: u64, expected: &str) {
    if !lua_ready(name) {
        return;
    }
    let real = real(name);
    let mut s = make();
    s = on_real(s, &real, 0);
    let report = s.random(seed, 2000);
    let f = report.expect_failure();
    assert!(f.violation.message.contains(expected), "{}", f);
    assert_reproduced(f, &real);
    println!("{}", report);
}

fn scenario(ack_first: bool) -> Scenario {
    with_producer()
        .client("A", move |c| async move { worker(c, "A", ack_first).await })
        .client("B", |c| async move { worker(c, "B", false).await })
        .crash("A")
        .clock_step(MIN_IDLE, 1)
        .invariant("no job is acknowledged twice", |v: &mut View| {
            for job in JOBS {
                let n = v.cmd(&["HGET", "acks", job]).as_int().unwrap_or(0);
                if n > 1 {
                    return Err(format!("{job} acknowledged {n} times"));
                }
            }
            Ok(())
        })
        .invariant(
            "after recovery every job is processed and acknowledged once",
            |v: &mut View| {
                if !v.is_final() {
                    return Ok(());
                }
                recover(v);
                let processed = v.smembers("processed");
                for job in JOBS {
                    if !processed.iter().any(|p| p == job) {
                        return Err(format!("{job} was acknowledged but never processed: lost"));
                    }
                    let n = v.cmd(&["HGET", "acks", job]).as_int().unwrap_or(0);
                    if n != 1 {
                        return Err(format!("{job} acknowledged {n} times"));
                    }
                }
                let pending = v.cmd(&["XPENDING", STREAM, GROUP]);
                if ints(&pending).first().and_then(Value::as_int) != Some(0) {
                    return Err(format!("entries still pending: {pending:?}"));
                }
                Ok(())
            },
        )
}

#[test]
fn acking_before_processing_loses_a_job_when_the_worker_crashes() {
    expect_caught(
        "acking_before_processing_loses_a_job",
        || scenario(true),
        5,
        "lost",
    );
}

#[test]
fn processing_before_acking_delivers_every_job_once_here_and_on_real_redis() {
    if !lua_ready("processing_before_acking_delivers_every_job_once") {
        return;
    }
    let mut s = scenario(false);
    if let Some(r) = real("processing_before_acking_delivers_every_job_once") {
        s = s.real_redis(r.addr(), REAL_SAMPLE);
        s.random(7, 2000).assert_holds();
    } else {
        s.random(7, 2000).assert_holds();
    }
}

/// A worker that outlives the others and is the group's only recovery: it takes work until
/// every job has been acknowledged, sleeping `MIN_IDLE` (virtual time) whenever there is
/// nothing to take, so that an entry a crashed worker held becomes claimable. The correct
/// one takes through the claim-or-read script; the naive one only ever reads new entries
/// (`XREADGROUP ... >`), so an entry that a crashed worker held is never delivered again.
async fn lasting_worker(c: Connection, name: &'static str, reclaims: bool) -> Result<usize> {
    let g = StreamGroup::new(c.clone(), STREAM, GROUP);
    let mut done = 0;
    for _ in 0..8 {
        let acked = c.cmd(&["HLEN", "acks"]).await?.as_int().unwrap_or(0);
        if acked == JOBS.len() as i64 {
            break;
        }
        let next = if reclaims {
            g.claim_or_read(name, MIN_IDLE)
                .await?
                .map(|d| d.entry().clone())
        } else {
            g.read_new(name, 1).await?.into_iter().next()
        };
        let Some(e) = next else {
            tokio::time::sleep(MIN_IDLE).await;
            continue;
        };
        let job = e.get("job").unwrap_or(b"?").to_vec();
        process(&c, &job).await?;
        ack(&c, &e.id, &job).await?;
        done += 1;
    }
    Ok(done)
}

/// No supervisor: A may crash holding a job, and B, which lives on, must finish the work.
fn self_healing(reclaims: bool) -> Scenario {
    with_producer()
        .client("A", move |c| async move {
            lasting_worker(c, "A", reclaims).await
        })
        .client("B", move |c| async move {
            lasting_worker(c, "B", reclaims).await
        })
        .crash("A")
        .timer_steps(1)
        .invariant("the surviving worker finishes every job", |v: &mut View| {
            if !v.is_final() {
                return Ok(());
            }
            let processed = v.smembers("processed");
            for job in JOBS {
                if !processed.iter().any(|p| p == job) {
                    let pending = v.cmd(&["XPENDING", STREAM, GROUP]);
                    return Err(format!(
                        "{job} was never processed: stuck pending ({pending:?})"
                    ));
                }
                let n = v.cmd(&["HGET", "acks", job]).as_int().unwrap_or(0);
                if n != 1 {
                    return Err(format!("{job} acknowledged {n} times"));
                }
            }
            Ok(())
        })
}

#[test]
fn a_worker_that_never_reclaims_leaves_a_crashed_workers_job_pending_forever() {
    expect_caught(
        "a_worker_that_never_reclaims",
        || self_healing(false),
        11,
        "stuck pending",
    );
}

#[test]
fn a_worker_that_reclaims_idle_entries_finishes_a_crashed_workers_job() {
    if !lua_ready("a_worker_that_reclaims_idle_entries_finishes") {
        return;
    }
    self_healing(true).random(13, 2000).assert_holds();
}
