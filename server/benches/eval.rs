//! In-process EVALSHA throughput of the monotonic-max script (GET, compare, SET, SADD).
//!
//! Run: `cargo bench -p redlab-server --bench eval`.

use std::time::{Duration, Instant};

use redlab_server::{Config, Engine, Reply};

const WITH_SADD: &str = "local cur = tonumber(redis.call('GET', KEYS[1]))
local v = tonumber(ARGV[1])
if cur == nil or v > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SADD', KEYS[2], KEYS[1])
  return 1
end
return 0";

fn main() {
    let mut e = Engine::new(Config::default());
    let script = WITH_SADD;
    let sha = match e.execute(1, &["SCRIPT", "LOAD", script]) {
        Reply::Bulk(b) => String::from_utf8(b.to_vec()).expect("hex"),
        other => panic!("SCRIPT LOAD failed: {other:?}"),
    };
    let values: Vec<String> = (0..1024).map(|i| ((i * 7919) % 100_000).to_string()).collect();
    // Warm up, then measure for about two seconds.
    for v in &values {
        e.execute(1, &["EVALSHA", &sha, "2", "max", "dirty", v]);
    }
    let start = Instant::now();
    let mut n: u64 = 0;
    while start.elapsed() < Duration::from_secs(2) {
        for v in &values {
            let r = e.execute(1, &["EVALSHA", sha.as_str(), "2", "max", "dirty", v.as_str()]);
            debug_assert!(!r.is_error(), "{r:?}");
        }
        n += values.len() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "eval/monotonic-max ({}): {:.0} EVALSHA/s ({:.2} us each, {} calls)",
        "GET, SET, SADD",
        n as f64 / secs,
        secs * 1e6 / n as f64,
        n
    );
}
