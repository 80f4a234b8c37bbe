//! Code written against redis-rs, explored as written: the clients below are generic over
//! `redis::aio::ConnectionLike` and never mention redlab. Under the explorer each gets a
//! `RedisConnection` (Clone, like a multiplexed connection); the same functions then run on
//! a real redis-server with a real redis-rs connection, and a replayed schedule agrees.

mod explore_support;

use explore_support::{on_real, real, RANDOM};
use redis::aio::ConnectionLike;
use redis::AsyncCommands;
use redlab_client::explore::{Scenario, View};

const MAX_SCRIPT: &str = include_str!("../scripts/monotonic_max.lua");

/// The naive max: read, compare in the client, write. Another client can come between.
async fn naive_max<C: ConnectionLike + Send + Sync>(
    c: &mut C,
    key: &str,
    id: i64,
) -> redis::RedisResult<bool> {
    let cur: Option<i64> = c.get(key).await?;
    if id <= cur.unwrap_or(0) {
        return Ok(false);
    }
    let _: () = c.set(key, id).await?;
    Ok(true)
}

/// The script version through `Script::invoke_async`: EVALSHA, and on NOSCRIPT the script
/// is loaded and called again (the setup does not load it).
async fn script_max<C: ConnectionLike + Send + Sync>(
    c: &mut C,
    key: &str,
    id: i64,
) -> redis::RedisResult<bool> {
    let stored: i64 = redis::Script::new(MAX_SCRIPT)
        .key(key)
        .key("dirty")
        .arg(id)
        .invoke_async(c)
        .await?;
    Ok(stored == 1)
}

#[derive(Clone, Copy)]
enum Max {
    Naive,
    Script,
}

/// From k = 100, one redis-rs client per (name, version, id), each submitting its id once.
fn max_clients(clients: &[(&'static str, Max, i64)]) -> Scenario {
    let mut s = Scenario::new().setup(&[&["SET", "k", "100"]]);
    for &(name, max, id) in clients {
        s = s.redis_client(name, move |mut c| async move {
            match max {
                Max::Naive => naive_max(&mut c, "k", id).await,
                Max::Script => script_max(&mut c, "k", id).await,
            }
        });
    }
    s
}

fn never_decreases(s: Scenario) -> Scenario {
    s.invariant("never decreases", |v: &mut View| {
        let now = v.get_int("k").unwrap_or(0);
        let before = std::mem::replace(v.scratch::<i64>(), now);
        if now < before {
            return Err(format!("k went from {} to {}", before, now));
        }
        Ok(())
    })
}

#[test]
fn naive_redis_rs_max_is_caught_and_the_script_holds() {
    let server = real("naive_redis_rs_max_is_caught_and_the_script_holds");
    let mut s = max_clients(&[("A", Max::Naive, 150), ("B", Max::Naive, 120)]);
    s = never_decreases(s);
    s = on_real(s, &server, 5);
    let report = s.exhaustive();
    let f = report.expect_failure();
    assert_eq!(f.schedule.commands(), 4, "{}", f);
    if server.is_some() {
        assert!(f.reproduced_on_real_redis(), "{}", f);
    }

    let mut s = max_clients(&[
        ("A", Max::Script, 150),
        ("B", Max::Script, 120),
        ("C", Max::Script, 170),
    ]);
    s = never_decreases(s).invariant("ends at the maximum", |v: &mut View| {
        !v.is_final() || v.get_int("k") == Some(170)
    });
    s = on_real(s, &server, 5);
    s.exhaustive().assert_holds();
    s.random(7, RANDOM / 10).assert_holds();
}

#[test]
fn noscript_fallback_and_errors_are_redis_rs_own() {
    let s = Scenario::new()
        .setup(&[&["SET", "str", "x"]])
        .redis_client("A", |mut c| async move {
            let first = script_max(&mut c, "k", 5).await?;
            // A WRONGTYPE reply arrives as redis-rs's server error, code and text intact.
            let err = c.lpush::<_, _, i64>("str", "v").await.unwrap_err();
            assert_eq!(err.code(), Some("WRONGTYPE"));
            assert!(err.to_string().contains("wrong kind of value"), "{}", err);
            Ok::<_, redis::RedisError>(first)
        })
        .invariant("the script ran once it was loaded", |v: &mut View| {
            !v.is_final() || v.get_int("k") == Some(5)
        });
    let run = s.replay("AAAA").in_process();
    assert!(run.holds(), "{}", run);
    let replies = run.replies();
    assert!(
        replies[0].starts_with("EVALSHA") && replies[0].contains("NOSCRIPT"),
        "{:?}",
        replies
    );
    assert!(replies[1].starts_with("SCRIPT LOAD"), "{:?}", replies);
    assert!(
        replies[2].starts_with("EVALSHA") && replies[2].ends_with("-> 1"),
        "{:?}",
        replies
    );
}

#[test]
fn a_pipeline_is_one_step_per_command_and_multi_exec_stays_atomic() {
    // Two INCRs in a plain pipeline: another client's reads can see the first without the
    // second. With both batches in MULTI/EXEC they cannot.
    let split = |atomic: bool| {
        Scenario::new()
            .redis_client("A", move |mut c| async move {
                let mut p = redis::pipe();
                if atomic {
                    p.atomic();
                }
                p.incr("a", 1).incr("b", 1);
                let r: (i64, i64) = p.query_async(&mut c).await?;
                Ok::<_, redis::RedisError>(r)
            })
            .redis_client("B", move |mut c| async move {
                let mut p = redis::pipe();
                if atomic {
                    p.atomic();
                }
                let (a, b): (Option<i64>, Option<i64>) =
                    p.get("a").get("b").query_async(&mut c).await?;
                Ok::<_, redis::RedisError>((a, b))
            })
            .invariant("B never sees half of A's batch", |v: &mut View| match v
                .result::<redis::RedisResult<(Option<i64>, Option<i64>)>>("B")
            {
                Some(Ok((a, b))) => a == b,
                _ => true,
            })
    };
    let f = split(false).exhaustive();
    let f = f.expect_failure();
    assert!(f.schedule.commands() >= 3, "{}", f);
    split(true).exhaustive().assert_holds();
}

/// The function explored in-process and the same function over a real redis-rs connection
/// to a real redis-server agree on a replayed schedule: the same replies, step by step.
#[test]
fn explored_and_real_redis_rs_agree_on_a_replayed_schedule() {
    let Some(server) = real("explored_and_real_redis_rs_agree_on_a_replayed_schedule") else {
        return;
    };
    let s = never_decreases(max_clients(&[
        ("A", Max::Script, 150),
        ("B", Max::Naive, 120),
    ]));
    for schedule in ["AAABB", "BAAAB", "ABABA"] {
        let here = s.replay(schedule).in_process();
        let there = s.replay(schedule).on_real_redis(server.addr());
        assert_eq!(here.replies(), there.replies(), "schedule {}", schedule);
    }

    // And the unmodified function on a real redis-rs multiplexed connection.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = redis::Client::open(server.url()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("FLUSHALL").query_async(&mut c).await.unwrap();
        let _: () = c.set("k", 100).await.unwrap();
        assert!(script_max(&mut c, "k", 150).await.unwrap());
        assert!(!naive_max(&mut c, "k", 120).await.unwrap());
        let k: i64 = c.get("k").await.unwrap();
        assert_eq!(k, 150);
    });
}
