//! `cargo run --example explore_redis_rs`: a function written against redis-rs only —
//! generic over `redis::aio::ConnectionLike`, nothing of redlab in it — explored as
//! written. The check-then-act version sells the last ticket twice; the explorer prints
//! the interleaving as a timeline (and replays it on a real redis-server when one is on
//! PATH). The script version, called with redis-rs's `Script::invoke_async`, passes every
//! schedule, including its NOSCRIPT fallback and a retry loop that sleeps on the virtual
//! clock.

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::AsyncCommands;
use redlab::client::explore::{Scenario, View};
use redlab::client::RealRedis;

/// The user's code: take a ticket if one is left.
async fn take_ticket<C: ConnectionLike + Send + Sync>(
    c: &mut C,
    user: &str,
) -> redis::RedisResult<bool> {
    let left: i64 = c.get("tickets").await?;
    if left <= 0 {
        return Ok(false);
    }
    let _: i64 = c.decr("tickets", 1).await?;
    let _: i64 = c.sadd("holders", user).await?;
    Ok(true)
}

const TAKE: &str = r#"
if tonumber(redis.call('GET', KEYS[1]) or '0') <= 0 then return 0 end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"#;

/// The fixed version: the check and the write in one script. A refused buyer waits
/// 100 ms (tokio's sleep, on the explorer's virtual clock) and tries once more, in case a
/// ticket came back.
async fn take_ticket_fixed<C: ConnectionLike + Send + Sync>(
    c: &mut C,
    user: &str,
) -> redis::RedisResult<bool> {
    let script = redis::Script::new(TAKE);
    for _ in 0..2 {
        let got: i64 = script
            .key("tickets")
            .key("holders")
            .arg(user)
            .invoke_async(c)
            .await?;
        if got == 1 {
            return Ok(true);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(false)
}

fn sold_at_most_once(v: &mut View) -> Result<(), String> {
    let left = v.get_int("tickets").unwrap_or(0);
    let holders = v.smembers("holders").len() as i64;
    if left < 0 || left + holders != 1 {
        return Err(format!("{} left, {} holders, from 1 ticket", left, holders));
    }
    Ok(())
}

fn main() {
    let real = RealRedis::start().ok();
    let mut broken = Scenario::new()
        .setup(&[&["SET", "tickets", "1"]])
        .redis_client("alice", |mut c| async move {
            take_ticket(&mut c, "alice").await
        })
        .redis_client(
            "bob",
            |mut c| async move { take_ticket(&mut c, "bob").await },
        )
        .invariant("the ticket is sold at most once", |v: &mut View| {
            if v.is_final() {
                sold_at_most_once(v)
            } else {
                Ok(())
            }
        });
    if let Some(r) = &real {
        broken = broken.real_redis(r.addr(), 0);
    }
    let report = broken.exhaustive();
    println!("== check-then-act with redis-rs ==\n{}", report);
    assert!(!report.holds(), "the race is found");

    let fixed = Scenario::new()
        .setup(&[&["SET", "tickets", "1"]])
        .redis_client("alice", |mut c| async move {
            take_ticket_fixed(&mut c, "alice").await
        })
        .redis_client("bob", |mut c| async move {
            take_ticket_fixed(&mut c, "bob").await
        })
        .timer_steps(1)
        .invariant("the ticket is sold at most once", |v: &mut View| {
            if v.is_final() {
                sold_at_most_once(v)
            } else {
                Ok(())
            }
        });
    let report = fixed.exhaustive();
    println!("== one script, Script::invoke_async ==\n{}", report);
    report.assert_holds();
}
