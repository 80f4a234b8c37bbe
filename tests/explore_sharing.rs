//! Exhaustive search shares the server's work on common prefixes (it resumes the engine
//! at a branch point and replays the clients on recorded replies), and random walks and
//! PCT keep the tree of schedules they have seen (resuming from forks at its nodes). That
//! must change nothing a schedule sees: every schedule observes the same replies, data and
//! INFO counters with sharing on and off. And Lock tokens, drawn from the scenario's seed, print
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
    let s = scenario(share, log.clone());
    let r = s.exhaustive();
    assert!(r.holds(), "{r}");
    let out = log.lock().unwrap().clone();
    assert_eq!(out.len() as u64, r.schedules);
    out
}

/// Three clients whose steps touch random replies, a script, a transaction and a token;
/// C sends one more command when k has grown, so schedules differ in length. Each
/// schedule's end (results, data, INFO counters) is pushed to `log`.
fn scenario(share: bool, log: Arc<Mutex<Vec<String>>>) -> Scenario {
    let seen = log;
    Scenario::new()
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
            let grown = a.as_ref().ok().and_then(|v| v.as_int()).unwrap_or(0) > 1;
            let e = if grown {
                Some(c.cmd(&["SCARD", "s"]).await)
            } else {
                None
            };
            format!("{a:?} {b:?} {d:?} {e:?}")
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
        .share_prefixes(share)
}

/// The lines of `log` without repeats, in the order they first appeared.
fn first_seen(log: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    log.iter().filter(|l| seen.insert(*l)).cloned().collect()
}

/// Random walks (or PCT) with the tree of seen schedules on and off: the same schedules
/// (the same number of steps in all), the same observations at each new schedule's end.
/// With the tree, a schedule seen before is not run again, so its end is not observed
/// again: the lines compare without repeats.
fn walks_agree(walk: impl Fn(&Scenario) -> redlab_client::explore::Report) {
    let run = |share: bool| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let r = walk(&scenario(share, log.clone()));
        assert!(r.holds(), "{r}");
        let out = log.lock().unwrap().clone();
        (r, out)
    };
    let (cached, on) = run(true);
    let (fresh, off) = run(false);
    assert_eq!(cached.schedules, fresh.schedules);
    assert_eq!(cached.steps, fresh.steps, "the walks took other paths");
    // PCT runs one schedule first to measure its length: at least one line per walk.
    assert!(off.len() as u64 >= fresh.schedules);
    assert!(
        on.len() < off.len(),
        "no walk repeated a schedule: {} of {}",
        on.len(),
        off.len()
    );
    assert!(on.len() > 100, "{} schedules run", on.len());
    let (a, b) = (first_seen(&on), first_seen(&off));
    assert_eq!(a.len(), b.len());
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "observation {k} differs");
    }
}

#[test]
fn the_random_walk_cache_changes_nothing_a_schedule_sees() {
    walks_agree(|s| s.random(11, 3000));
}

#[test]
fn the_pct_cache_changes_nothing_a_schedule_sees() {
    walks_agree(|s| s.pct(5, 3, 3000));
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
