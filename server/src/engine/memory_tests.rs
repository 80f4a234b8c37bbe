//! The running total of used_memory (`Db::memory`) equals a full recount after random
//! command sequences, with maxmemory on (values changed in place are listed as they are
//! handed out) and off (a change in place makes the next read recount).

use crate::test_support::{engine, run};

/// Commands over a few keys of every type, chosen by `r`. Some fail (WRONGTYPE, a missing
/// key): a failed command must leave the total right too.
fn command(r: u64) -> Vec<String> {
    let key = format!("k{}", r % 7);
    let other = format!("k{}", (r >> 8) % 7);
    let n = ((r >> 16) % 50).to_string();
    let words: Vec<&str> = match (r >> 24) % 26 {
        0 => vec!["SET", &key, &n],
        1 => vec!["APPEND", &key, "some more bytes to make it long enough"],
        2 => vec!["SETRANGE", &key, &n, "xyz"],
        3 => vec!["INCRBY", &key, &n],
        4 => vec!["HSET", &key, &n, "value", "f", &n],
        5 => vec!["HDEL", &key, &n],
        6 => vec!["SADD", &key, &n, "member"],
        7 => vec!["SREM", &key, &n],
        8 => vec!["ZADD", &key, &n, &n],
        9 => vec!["ZREM", &key, &n],
        10 => vec!["RPUSH", &key, &n, "item"],
        11 => vec!["LPOP", &key],
        12 => vec!["DEL", &key],
        13 => vec!["PEXPIRE", &key, "5"],
        14 => vec!["RENAME", &key, &other],
        15 => vec!["MOVE", &key, "1"],
        16 => vec!["SWAPDB", "0", "1"],
        17 => vec!["SELECT", if r.is_multiple_of(2) { "0" } else { "1" }],
        18 => vec![
            "EVAL",
            "redis.call('HSET', KEYS[1], ARGV[1], ARGV[1]) return 1",
            "1",
            &key,
            &n,
        ],
        19 => vec!["SUNIONSTORE", &key, &key, &other],
        20 => vec!["XADD", &key, "*", "f", &n],
        21 => vec!["SETBIT", &key, &n, "1"],
        22 => vec!["HINCRBY", &key, "counter", &n],
        23 => vec!["COPY", &key, &other, "REPLACE"],
        24 => vec!["FLUSHDB"],
        _ => vec!["LSET", &key, "0", &n],
    };
    words.into_iter().map(str::to_owned).collect()
}

fn run_sequence(seed: u64, maxmemory: &str) {
    let (mut e, clock) = engine();
    run(&mut e, &["CONFIG", "SET", "maxmemory", maxmemory]);
    let mut x = seed;
    for step in 0..3000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let cmd = command(x);
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        run(&mut e, &args);
        if step.is_multiple_of(97) {
            clock.advance(std::time::Duration::from_millis(3));
        }
        for (i, db) in e.dbs.iter().enumerate() {
            assert_eq!(
                db.memory(),
                db.memory_recount(),
                "db {i} after {args:?} (step {step}, seed {seed}, maxmemory {maxmemory})"
            );
        }
    }
}

#[test]
fn running_total_matches_a_recount_with_maxmemory() {
    for seed in [1, 2, 3, 0xdead_beef] {
        run_sequence(seed, "1gb");
    }
}

#[test]
fn running_total_matches_a_recount_without_maxmemory() {
    for seed in [5, 6] {
        run_sequence(seed, "0");
    }
}
