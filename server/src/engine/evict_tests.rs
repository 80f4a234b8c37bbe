//! Eviction by the LFU counter and the LRU clock, driven by the engine's manual clock: what
//! the policy keeps when memory runs out (never the time it takes).

use std::time::Duration;

use crate::reply::Reply;
use crate::test_support::{engine, run};

fn int(e: &mut super::Engine, args: &[&str]) -> i64 {
    match run(e, args) {
        Reply::Int(n) => n,
        other => panic!("{args:?} answered {other:?}"),
    }
}

fn exists(e: &mut super::Engine, key: &str) -> bool {
    int(e, &["EXISTS", key]) == 1
}

/// Sets maxmemory just above what is used now, so the next few writes must evict.
fn cap_memory(e: &mut super::Engine, slack: u64) {
    let used = e.used_memory();
    let limit = (used + slack).to_string();
    assert_eq!(run(e, &["CONFIG", "SET", "maxmemory", &limit]), Reply::ok());
}

/// allkeys-lfu keeps the keys read most often: 8 hot keys read 40 times each survive while
/// 40 new keys push memory over the limit, and only cold keys go.
#[test]
fn allkeys_lfu_evicts_the_least_frequently_used() {
    let (mut e, _clock) = engine();
    for (p, v) in [
        ("redlab-seed", "7"),
        ("maxmemory-policy", "allkeys-lfu"),
        ("lfu-log-factor", "0"),
        ("maxmemory-samples", "10"),
    ] {
        assert_eq!(run(&mut e, &["CONFIG", "SET", p, v]), Reply::ok());
    }
    for i in 0..40 {
        run(&mut e, &["SET", &format!("cold:{i}"), "some value"]);
    }
    for i in 0..8 {
        let k = format!("hot:{i}");
        run(&mut e, &["SET", &k, "some value"]);
        for _ in 0..40 {
            run(&mut e, &["GET", &k]);
        }
        assert_eq!(int(&mut e, &["OBJECT", "FREQ", &k]), 45);
    }
    cap_memory(&mut e, 200);
    for i in 0..40 {
        run(&mut e, &["SET", &format!("new:{i}"), "some value"]);
    }
    let evicted = (0..40)
        .filter(|i| !exists(&mut e, &format!("cold:{i}")))
        .count();
    assert!(evicted >= 20, "only {evicted} cold keys evicted");
    for i in 0..8 {
        assert!(exists(&mut e, &format!("hot:{i}")), "hot:{i} was evicted");
    }
}

/// The counter decays with the engine's clock: keys read often an hour ago rank below keys
/// written a minute ago, so they are the ones volatile-lfu evicts.
#[test]
fn volatile_lfu_counts_decay_with_the_clock() {
    let (mut e, clock) = engine();
    for (p, v) in [
        ("redlab-seed", "11"),
        ("maxmemory-policy", "volatile-lfu"),
        ("lfu-log-factor", "0"),
        ("lfu-decay-time", "1"),
    ] {
        assert_eq!(run(&mut e, &["CONFIG", "SET", p, v]), Reply::ok());
    }
    for i in 0..10 {
        let k = format!("old:{i}");
        run(&mut e, &["SET", &k, "value", "EX", "100000"]);
        for _ in 0..20 {
            run(&mut e, &["GET", &k]);
        }
    }
    clock.advance(Duration::from_secs(3600));
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "old:0"]), 0);
    for i in 0..10 {
        run(
            &mut e,
            &["SET", &format!("fresh:{i}"), "value", "EX", "100000"],
        );
        // Keys without a deadline are never volatile-lfu's candidates.
        run(&mut e, &["SET", &format!("forever:{i}"), "value"]);
    }
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "fresh:0"]), 5);
    cap_memory(&mut e, 100);
    for i in 0..6 {
        run(&mut e, &["SET", &format!("more:{i}"), "value"]);
    }
    let old_gone = (0..10)
        .filter(|i| !exists(&mut e, &format!("old:{i}")))
        .count();
    assert!(old_gone > 0, "no decayed key was evicted");
    for i in 0..10 {
        assert!(
            exists(&mut e, &format!("fresh:{i}")),
            "fresh:{i} was evicted"
        );
        assert!(
            exists(&mut e, &format!("forever:{i}")),
            "forever:{i} was evicted"
        );
    }
}

/// allkeys-lru evicts by the LRU clock: keys read after the clock moved on survive.
#[test]
fn allkeys_lru_evicts_the_longest_idle() {
    let (mut e, clock) = engine();
    for (p, v) in [
        ("redlab-seed", "3"),
        ("maxmemory-policy", "allkeys-lru"),
        ("maxmemory-samples", "10"),
    ] {
        assert_eq!(run(&mut e, &["CONFIG", "SET", p, v]), Reply::ok());
    }
    for i in 0..30 {
        run(&mut e, &["SET", &format!("k:{i}"), "value"]);
    }
    clock.advance(Duration::from_secs(100));
    for i in 0..10 {
        run(&mut e, &["GET", &format!("k:{i}")]);
    }
    clock.advance(Duration::from_secs(100));
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "k:0"]), 100);
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "k:29"]), 200);
    cap_memory(&mut e, 100);
    for i in 0..8 {
        run(&mut e, &["SET", &format!("new:{i}"), "value"]);
    }
    for i in 0..10 {
        assert!(exists(&mut e, &format!("k:{i}")), "k:{i} was evicted");
    }
    assert!((10..30).any(|i| !exists(&mut e, &format!("k:{i}"))));
}

/// The counter and the idle time travel through DEBUG RELOAD as Redis's RDB file carries
/// them, and RESTORE FREQ sets the counter.
#[test]
fn reload_and_restore_keep_the_counter() {
    let (mut e, _clock) = engine();
    for (p, v) in [("maxmemory-policy", "allkeys-lfu"), ("lfu-log-factor", "0")] {
        assert_eq!(run(&mut e, &["CONFIG", "SET", p, v]), Reply::ok());
    }
    run(&mut e, &["SET", "k", "v"]);
    for _ in 0..10 {
        run(&mut e, &["GET", "k"]);
    }
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "k"]), 15);
    assert_eq!(run(&mut e, &["DEBUG", "RELOAD"]), Reply::ok());
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "k"]), 15);
    let Reply::Bulk(payload) = run(&mut e, &["DUMP", "k"]) else {
        panic!("dump")
    };
    e.execute(1, &[&b"RESTORE"[..], b"r", b"0", &payload, b"FREQ", b"200"]);
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "r"]), 200);
    // IDLETIME means nothing under LFU: the key starts at the initial counter.
    e.execute(
        1,
        &[&b"RESTORE"[..], b"i", b"0", &payload, b"IDLETIME", b"50"],
    );
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "i"]), 5);
    // Under LRU the reload keeps idle times.
    assert_eq!(
        run(
            &mut e,
            &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]
        ),
        Reply::ok()
    );
    e.execute(
        1,
        &[&b"RESTORE"[..], b"j", b"0", &payload, b"IDLETIME", b"77"],
    );
    assert_eq!(run(&mut e, &["DEBUG", "RELOAD"]), Reply::ok());
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "j"]), 77);
}
