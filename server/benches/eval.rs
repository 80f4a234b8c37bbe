//! In-process EVALSHA throughput of the monotonic-max script.
//!
//! Two paths are measured, because they cost very different amounts: `update` sends a value
//! larger than the stored one every time, so every call runs GET, compare, SET and SADD (the
//! figure the issue asks for); `stale` sends a value that loses the comparison, so the call
//! runs only GET and compare.
//!
//! Run: `cargo bench -p redlab-server --bench eval`; `EVAL_BENCH_ONLY=update` (or `stale`)
//! runs one path, for profiling.

use std::time::{Duration, Instant};

use redlab_server::{Config, Engine, Reply};

const MONOTONIC_MAX: &str = "local cur = tonumber(redis.call('GET', KEYS[1]))
local v = tonumber(ARGV[1])
if cur == nil or v > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SADD', KEYS[2], KEYS[1])
  return 1
end
return 0";

/// How long each path is measured.
const MEASURE: Duration = Duration::from_secs(2);

fn load(e: &mut Engine) -> String {
    match e.execute(1, &["SCRIPT", "LOAD", MONOTONIC_MAX]) {
        Reply::Bulk(b) => String::from_utf8(b.to_vec()).expect("hex"),
        other => panic!("SCRIPT LOAD failed: {other:?}"),
    }
}

/// Runs EVALSHA with the values `next` produces until MEASURE has passed, checking every reply
/// is `expect` so a path that silently changed (say, to the stale one) cannot pass as fast.
fn measure(name: &str, expect: i64, mut next: impl FnMut(u64) -> String) {
    if std::env::var("EVAL_BENCH_ONLY").is_ok_and(|only| !name.starts_with(&only)) {
        return;
    }
    let mut e = Engine::new(Config::default());
    let sha = load(&mut e);
    e.execute(1, &["SET", "max", "1000000"]);
    let batch: u64 = 1024;
    let mut n: u64 = 0;
    let start = Instant::now();
    while start.elapsed() < MEASURE {
        let values: Vec<String> = (n..n + batch).map(&mut next).collect();
        for v in &values {
            let r = e.execute(1, &["EVALSHA", sha.as_str(), "2", "max", "seen", v.as_str()]);
            assert!(matches!(r, Reply::Int(i) if i == expect), "{r:?}");
        }
        n += batch;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "eval/monotonic-max/{name}: {:.0} EVALSHA/s ({:.2} us each, {n} calls)",
        n as f64 / secs,
        secs * 1e6 / n as f64,
    );
}

fn main() {
    measure("update (GET, compare, SET, SADD)", 1, |i| (1_000_001 + i).to_string());
    measure("stale (GET, compare)", 0, |i| (i % 100_000).to_string());
}
