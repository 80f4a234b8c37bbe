//! What the differential suite cannot show: time (a manual clock), keyspace events, and
//! SCAN's completeness over many calls.

use std::collections::HashSet;
use std::time::Duration;

use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::notify;
use crate::reply::Reply;

const T0: i64 = 1_700_000_000_000;

fn engine() -> (Engine, Clock) {
    let clock = Clock::manual(T0);
    (Engine::with_clock(Config::default(), clock.clone()), clock)
}

fn run(e: &mut Engine, args: &[&str]) -> Reply {
    e.execute(1, args)
}

fn int(e: &mut Engine, args: &[&str]) -> i64 {
    match run(e, args) {
        Reply::Int(n) => n,
        other => panic!("{args:?}: expected an integer, got {other:?}"),
    }
}

/// Subscribes connection 2 to every keyevent of db 0 and returns it.
fn listen(e: &mut Engine) -> u64 {
    e.notify_flags = notify::KEYEVENT | notify::GENERIC | notify::EXPIRED | notify::STRING;
    e.execute(2, &["PING"]);
    e.pubsub
        .patterns
        .entry(b"__keyevent@0__:*".to_vec())
        .or_default()
        .insert(2);
    2
}

fn events(e: &mut Engine, conn: u64) -> Vec<String> {
    e.take_output(conn)
        .into_iter()
        .filter_map(|r| match r {
            Reply::Push(items) => match (&items[2], &items[3]) {
                (Reply::Bulk(ch), Reply::Bulk(key)) => Some(format!(
                    "{} {}",
                    String::from_utf8_lossy(ch)
                        .rsplit(':')
                        .next()
                        .unwrap_or_default(),
                    String::from_utf8_lossy(key)
                )),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn a_key_expires_when_the_clock_passes_its_deadline() {
    let (mut e, clock) = engine();
    let sub = listen(&mut e);
    run(&mut e, &["SET", "k", "v"]);
    assert_eq!(int(&mut e, &["EXPIRE", "k", "10"]), 1);
    clock.advance(Duration::from_millis(9_999));
    assert_eq!(int(&mut e, &["PTTL", "k"]), 1);
    assert_eq!(int(&mut e, &["TTL", "k"]), 0);
    assert_eq!(int(&mut e, &["EXISTS", "k"]), 1);
    // As in Redis (`now > when`), the key lives through its deadline's own millisecond.
    clock.advance(Duration::from_millis(1));
    assert_eq!(int(&mut e, &["PTTL", "k"]), 0);
    assert_eq!(int(&mut e, &["EXISTS", "k"]), 1);
    clock.advance(Duration::from_millis(1));
    assert_eq!(int(&mut e, &["EXISTS", "k"]), 0);
    assert_eq!(int(&mut e, &["TTL", "k"]), -2);
    assert_eq!(events(&mut e, sub), vec!["set k", "expire k", "expired k"]);
}

#[test]
fn ttl_rounds_to_the_nearest_second() {
    let (mut e, clock) = engine();
    run(&mut e, &["SET", "k", "v"]);
    run(&mut e, &["PEXPIRE", "k", "10000"]);
    clock.advance(Duration::from_millis(4_501));
    assert_eq!(int(&mut e, &["TTL", "k"]), 5);
    clock.advance(Duration::from_millis(1));
    assert_eq!(int(&mut e, &["TTL", "k"]), 5);
    clock.advance(Duration::from_millis(998));
    assert_eq!(int(&mut e, &["PTTL", "k"]), 4_500);
    assert_eq!(int(&mut e, &["TTL", "k"]), 5);
    assert_eq!(int(&mut e, &["PEXPIRETIME", "k"]), T0 + 10_000);
    assert_eq!(int(&mut e, &["EXPIRETIME", "k"]), (T0 + 10_000) / 1000);
}

#[test]
fn a_deadline_in_the_past_deletes_with_a_del_event() {
    let (mut e, _clock) = engine();
    let sub = listen(&mut e);
    run(&mut e, &["SET", "a", "v"]);
    run(&mut e, &["SET", "b", "v"]);
    assert_eq!(int(&mut e, &["EXPIRE", "a", "0"]), 1);
    assert_eq!(int(&mut e, &["PEXPIREAT", "b", &T0.to_string()]), 1);
    assert_eq!(int(&mut e, &["EXISTS", "a", "b"]), 0);
    assert_eq!(
        events(&mut e, sub),
        vec!["set a", "set b", "del a", "del b"]
    );
}

#[test]
fn expireat_uses_the_engine_clock() {
    let (mut e, clock) = engine();
    run(&mut e, &["SET", "k", "v"]);
    let at = (T0 / 1000 + 60).to_string();
    assert_eq!(int(&mut e, &["EXPIREAT", "k", &at]), 1);
    assert_eq!(int(&mut e, &["TTL", "k"]), 60);
    assert_eq!(int(&mut e, &["EXPIRE", "k", "30", "GT"]), 0);
    assert_eq!(int(&mut e, &["EXPIRE", "k", "30", "LT"]), 1);
    clock.advance(Duration::from_millis(30_001));
    assert_eq!(int(&mut e, &["EXISTS", "k"]), 0);
}

#[test]
fn del_of_a_key_past_its_deadline_counts_nothing() {
    let (mut e, clock) = engine();
    let sub = listen(&mut e);
    e.active_expire = false;
    run(&mut e, &["SET", "k", "v"]);
    run(&mut e, &["PEXPIRE", "k", "5"]);
    clock.advance(Duration::from_millis(6));
    assert_eq!(int(&mut e, &["DEL", "k"]), 0);
    assert_eq!(events(&mut e, sub), vec!["set k", "expire k", "expired k"]);
}

#[test]
fn rename_carries_the_deadline_and_the_events() {
    let (mut e, clock) = engine();
    let sub = listen(&mut e);
    run(&mut e, &["SET", "a", "v"]);
    run(&mut e, &["EXPIRE", "a", "10"]);
    assert_eq!(run(&mut e, &["RENAME", "a", "b"]), Reply::ok());
    assert_eq!(int(&mut e, &["TTL", "b"]), 10);
    clock.advance(Duration::from_millis(10_001));
    assert_eq!(int(&mut e, &["EXISTS", "b"]), 0);
    assert_eq!(
        events(&mut e, sub),
        vec![
            "set a",
            "expire a",
            "rename_from a",
            "rename_to b",
            "expired b"
        ]
    );
}

#[test]
fn move_and_copy_carry_the_deadline() {
    let (mut e, clock) = engine();
    run(&mut e, &["SET", "a", "v"]);
    run(&mut e, &["SET", "c", "v"]);
    run(&mut e, &["EXPIRE", "a", "10"]);
    run(&mut e, &["EXPIRE", "c", "10"]);
    assert_eq!(int(&mut e, &["MOVE", "a", "1"]), 1);
    assert_eq!(int(&mut e, &["COPY", "c", "d"]), 1);
    assert_eq!(int(&mut e, &["TTL", "d"]), 10);
    clock.advance(Duration::from_millis(10_001));
    run(&mut e, &["SELECT", "1"]);
    assert_eq!(int(&mut e, &["EXISTS", "a"]), 0);
    run(&mut e, &["SELECT", "0"]);
    assert_eq!(int(&mut e, &["EXISTS", "c", "d"]), 0);
}

#[test]
fn restore_ttl_is_relative_to_the_clock_unless_absttl() {
    let (mut e, clock) = engine();
    run(&mut e, &["SET", "src", "hello"]);
    let Reply::Bulk(payload) = run(&mut e, &["DUMP", "src"]) else {
        panic!("dump")
    };
    let p = payload.to_vec();
    e.execute(1, &[&b"RESTORE"[..], b"a", b"5000", &p]);
    assert_eq!(int(&mut e, &["PTTL", "a"]), 5000);
    let abs = (T0 + 2000).to_string();
    e.execute(1, &[&b"RESTORE"[..], b"b", abs.as_bytes(), &p, b"ABSTTL"]);
    assert_eq!(int(&mut e, &["PTTL", "b"]), 2000);
    let past = (T0 - 1).to_string();
    assert_eq!(
        e.execute(1, &[&b"RESTORE"[..], b"c", past.as_bytes(), &p, b"ABSTTL"]),
        Reply::ok()
    );
    assert_eq!(int(&mut e, &["EXISTS", "c"]), 0);
    clock.advance(Duration::from_millis(2001));
    assert_eq!(int(&mut e, &["EXISTS", "a", "b"]), 1);
}

#[test]
fn idle_time_follows_reads_but_not_inspection() {
    let (mut e, clock) = engine();
    run(&mut e, &["SET", "k", "v"]);
    clock.advance(Duration::from_secs(42));
    run(&mut e, &["TYPE", "k"]);
    run(&mut e, &["EXISTS", "k"]);
    run(&mut e, &["TTL", "k"]);
    run(&mut e, &["OBJECT", "ENCODING", "k"]);
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "k"]), 42);
    run(&mut e, &["TOUCH", "k"]);
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "k"]), 0);
    clock.advance(Duration::from_secs(3));
    run(&mut e, &["RENAME", "k", "k2"]);
    clock.advance(Duration::from_secs(2));
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "k2"]), 2);
    let Reply::Bulk(p) = run(&mut e, &["DUMP", "k2"]) else {
        panic!("dump")
    };
    e.execute(1, &[&b"RESTORE"[..], b"r", b"0", &p, b"IDLETIME", b"100"]);
    assert_eq!(int(&mut e, &["OBJECT", "IDLETIME", "r"]), 100);
}

#[test]
fn lfu_policy_swaps_idletime_for_freq() {
    let (mut e, clock) = engine();
    e.config_mut().maxmemory_policy = "allkeys-lfu".into();
    run(&mut e, &["SET", "k", "v"]);
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "k"]), 5);
    assert!(run(&mut e, &["OBJECT", "IDLETIME", "k"]).is_error());
    clock.advance(Duration::from_secs(120));
    assert_eq!(int(&mut e, &["OBJECT", "FREQ", "k"]), 3);
}

fn scan_all(e: &mut Engine, extra: &[&str]) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut out = Vec::new();
    let mut calls = 0;
    loop {
        let mut args = vec!["SCAN", cursor.as_str()];
        args.extend_from_slice(extra);
        let Reply::Array(parts) = run(e, &args) else {
            panic!("scan reply")
        };
        let (Reply::Bulk(next), Reply::Array(keys)) = (&parts[0], &parts[1]) else {
            panic!("scan shape")
        };
        for k in keys {
            if let Reply::Bulk(k) = k {
                out.push(String::from_utf8_lossy(k).into_owned());
            }
        }
        cursor = String::from_utf8_lossy(next).into_owned();
        calls += 1;
        assert!(calls < 10_000, "scan does not terminate");
        if cursor == "0" {
            return out;
        }
    }
}

#[test]
fn scan_visits_every_key_exactly_once() {
    let (mut e, _clock) = engine();
    for i in 0..500 {
        run(&mut e, &["SET", &format!("key:{i}"), "v"]);
    }
    for count in ["1", "7", "10", "1000"] {
        let seen = scan_all(&mut e, &["COUNT", count]);
        assert_eq!(seen.len(), 500, "COUNT {count}");
        assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 500);
    }
    let matched = scan_all(&mut e, &["MATCH", "key:1?", "COUNT", "3"]);
    assert_eq!(matched.iter().collect::<HashSet<_>>().len(), 10);
    assert!(scan_all(&mut e, &["TYPE", "hash"]).is_empty());
}

#[test]
fn scan_returns_keys_present_throughout_despite_writes() {
    let (mut e, _clock) = engine();
    for i in 0..200 {
        run(&mut e, &["SET", &format!("stable:{i}"), "v"]);
    }
    let mut cursor = "0".to_string();
    let mut seen = HashSet::new();
    let mut round = 0;
    loop {
        let Reply::Array(parts) = run(&mut e, &["SCAN", &cursor, "COUNT", "5"]) else {
            panic!()
        };
        let (Reply::Bulk(next), Reply::Array(keys)) = (&parts[0], &parts[1]) else {
            panic!()
        };
        for k in keys {
            if let Reply::Bulk(k) = k {
                seen.insert(String::from_utf8_lossy(k).into_owned());
            }
        }
        cursor = String::from_utf8_lossy(next).into_owned();
        run(&mut e, &["SET", &format!("new:{round}"), "v"]);
        run(&mut e, &["DEL", &format!("new:{}", round / 2)]);
        round += 1;
        if cursor == "0" {
            break;
        }
    }
    for i in 0..200 {
        assert!(seen.contains(&format!("stable:{i}")), "stable:{i} missed");
    }
}

#[test]
fn randomkey_skips_expired_keys() {
    let (mut e, clock) = engine();
    e.active_expire = false;
    run(&mut e, &["SET", "gone", "v"]);
    run(&mut e, &["PEXPIRE", "gone", "1"]);
    run(&mut e, &["SET", "here", "v"]);
    clock.advance(Duration::from_millis(2));
    for _ in 0..20 {
        assert_eq!(run(&mut e, &["RANDOMKEY"]), Reply::bulk("here"));
    }
    let Reply::Array(keys) = run(&mut e, &["KEYS", "*"]) else {
        panic!()
    };
    assert_eq!(keys, vec![Reply::bulk("here")]);
}

/// Active expiry looks only at databases that may hold deadlines (Engine::maybe_expiring):
/// a key in another database than the one commands run in, or one SWAPDB moved, must still
/// expire on time and be counted.
#[test]
fn keys_in_other_databases_expire_actively() {
    let (mut e, clock) = engine();
    e.execute(3, &["SELECT", "5"]);
    e.execute(3, &["SET", "a", "1", "PX", "100"]);
    e.execute(3, &["SELECT", "9"]);
    e.execute(3, &["SET", "b", "1", "PX", "300"]);
    e.execute(3, &["SWAPDB", "9", "12"]);
    e.execute(3, &["SELECT", "0"]);
    for _ in 0..3 {
        run(&mut e, &["PING"]);
    }
    assert_eq!(e.stats.expired_keys, 0);
    clock.advance(Duration::from_millis(150));
    run(&mut e, &["PING"]);
    assert_eq!(
        e.stats.expired_keys, 1,
        "db 5's key expires while db 0 is in use"
    );
    clock.advance(Duration::from_millis(200));
    run(&mut e, &["PING"]);
    assert_eq!(
        e.stats.expired_keys, 2,
        "the key SWAPDB moved to db 12 expires too"
    );
    assert_eq!(e.dbs[5].len() + e.dbs[12].len(), 0);
}
