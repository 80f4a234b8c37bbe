//! Exhaustive search shares the server's work on common prefixes (it resumes the engine
//! at a branch point and replays the clients on recorded replies). That must change
//! nothing a schedule sees: every schedule observes the same replies, data and INFO
//! counters with sharing on and off. And Lock tokens, drawn from the scenario's seed, print
//! the same on every replay.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redlab_client::explore::{Scenario, View};
use redlab_client::{Acquire, Lock};

const BUMP: &str = "redis.call('INCRBY', KEYS[1], 10) \
                    return {redis.call('GET', KEYS[1]), math.random(1000)}";

/// The INFO fields that count commands and key lookups (not the timings).
fn counters(v: &mut View) -> String {
    let stats = v.cmd(&["INFO", "stats"]);
    let commands = v.cmd(&["INFO", "commandstats"]);
    let text = format!(
        "{}\n{}",
        stats.as_str().unwrap_or(""),
        commands.as_str().unwrap_or("")
    );
    text.lines()
        .filter(|l| {
            l.starts_with("total_commands_processed")
                || l.starts_with("keyspace_")
                || l.starts_with("expired_keys")
                || l.starts_with("total_error_replies")
                || l.starts_with("cmdstat_")
        })
        // cmdstat_x:calls=..,usec=..,usec_per_call=..,rejected_calls=..,failed_calls=..
        .map(|l| {
            l.split(',')
                .filter(|f| !f.starts_with("usec"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every schedule's observations at its end, in the order exhaustive search runs them.
fn observed(share: bool) -> Vec<String> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    let s = Scenario::new()
        .setup(&[
            &["SET", "k", "1"],
            &["SADD", "s", "a", "b", "c", "d", "e", "f"],
            &["SCRIPT", "LOAD", BUMP],
        ])
        .client("A", |c| async move {
            let a = c.cmd(&["INCR", "k"]).await;
            let b = c.cmd(&["SPOP", "s"]).await;
            let token = redlab_client::patterns::lock::new_token();
            let t = c.cmd(&["SET", "tok", &token]).await;
            format!("{a:?} {b:?} {token} {t:?}")
        })
        .client("B", |c| async move {
            let a = c.cmd(&["EVAL", BUMP, "1", "k"]).await;
            let m = c.cmd(&["MULTI"]).await;
            let x = c.cmd(&["SADD", "s", "x"]).await;
            let y = c.cmd(&["SCARD", "s"]).await;
            let e = c.cmd(&["EXEC"]).await;
            format!("{a:?} {m:?} {x:?} {y:?} {e:?}")
        })
        .client("C", |c| async move {
            let a = c.cmd(&["GET", "k"]).await;
            let b = c.cmd(&["SRANDMEMBER", "s", "-3"]).await;
            let d = c.cmd(&["DEL", "tok"]).await;
            format!("{a:?} {b:?} {d:?}")
        })
        .invariant("records", move |v: &mut View| {
            if v.is_final() {
                let results = format!(
                    "{:?} {:?} {:?}",
                    v.result::<String>("A"),
                    v.result::<String>("B"),
                    v.result::<String>("C"),
                );
                let data = format!("{:?} {:?} {:?}", v.get("k"), v.smembers("s"), v.get("tok"));
                let line = format!("{results} | {data} | {}", counters(v));
                seen.lock().unwrap().push(line);
            }
            true
        })
        .seed(7)
        .share_prefixes(share);
    let r = s.exhaustive();
    assert!(r.holds(), "{r}");
    let out = log.lock().unwrap().clone();
    assert_eq!(out.len() as u64, r.schedules);
    out
}

#[test]
fn sharing_prefixes_changes_nothing_a_schedule_sees() {
    let shared = observed(true);
    let fresh = observed(false);
    assert!(shared.len() > 1000, "{} schedules", shared.len());
    assert_eq!(shared.len(), fresh.len());
    for (k, (a, b)) in shared.iter().zip(&fresh).enumerate() {
        assert_eq!(a, b, "schedule {k} differs");
    }
}

#[test]
fn lock_tokens_print_the_same_on_every_replay() {
    let s = Scenario::new()
        .client("A", |c| async move {
            let lock = Lock::new(c, "lk", Duration::from_secs(10));
            match lock.try_acquire().await {
                Ok(Acquire::Acquired(g)) => g.token,
                other => format!("{other:?}"),
            }
        })
        .client("B", |c| async move {
            let lock = Lock::new(c, "lk", Duration::from_secs(10));
            format!("{:?}", lock.try_acquire().await)
        });
    let first = s.replay("AB").in_process();
    let text = first.to_string();
    for _ in 0..3 {
        assert_eq!(s.replay("AB").in_process().to_string(), text);
    }
    let token = first.replies().join(" ");
    assert!(text.len() > 32, "{text}");
    // Outside the explorer, tokens are random again.
    let a = redlab_client::patterns::lock::new_token();
    let b = redlab_client::patterns::lock::new_token();
    assert_ne!(a, b);
    assert!(!token.is_empty());
}
