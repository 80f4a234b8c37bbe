//! In-process EVALSHA throughput of the monotonic-max script, beside the time a real
//! redis-server spends executing the same EVALSHA.
//!
//! Two paths are measured, because they cost very different amounts: `update` sends a value
//! larger than the stored one every time, so every call runs GET, compare, SET and SADD;
//! `stale` sends a value that loses the comparison, so the call runs only GET and compare.
//!
//! redlab runs on this thread through `Engine::execute` (argument building and dispatch
//! included). For Redis, the same commands are piped in with `redis-cli --pipe` and the
//! figure is Redis's own `usec_per_call` for evalsha from INFO commandstats: the time inside
//! the command, without parsing or networking, so the comparison favours Redis.
//!
//! On a shared machine both wall-clock figures count time other processes held the CPU. So
//! the rates per second of CPU time are shown too: redlab's thread, and the whole
//! redis-server process (its reading, parsing and replying included, so that ratio flatters
//! redlab), with the load average.
//!
//! Run: `cargo bench --bench eval`; `EVAL_BENCH_ONLY=update` (or `stale`) runs one path, for
//! profiling; `EVAL_BENCH_CALLS=N` makes redlab run N calls (a multiple of 1,024) instead of
//! running for two seconds, so a profiler (`valgrind --tool=callgrind`, which runs the
//! program some fifty times slower) sees the same number of calls in every run.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;

use redlab::{Config, Engine, Reply};
use redlab_client::RealRedis;
use support::cli;

const MONOTONIC_MAX: &str = "local cur = tonumber(redis.call('GET', KEYS[1]))
local v = tonumber(ARGV[1])
if cur == nil or v > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SADD', KEYS[2], KEYS[1])
  return 1
end
return 0";

/// How long each path is measured on redlab.
const MEASURE: Duration = Duration::from_secs(2);
/// How many EVALSHA calls Redis executes per path.
const REDIS_CALLS: u64 = 300_000;
/// The stored maximum each path starts from.
const START: u64 = 1_000_000;

struct Path {
    name: &'static str,
    /// What every call must answer.
    expect: i64,
    /// The ARGV of call `i`.
    value: fn(u64) -> String,
}

const PATHS: [Path; 2] = [
    Path {
        name: "update (GET, compare, SET, SADD)",
        expect: 1,
        value: |i| (START + 1 + i).to_string(),
    },
    Path {
        name: "stale (GET, compare)",
        expect: 0,
        value: |i| (i % START).to_string(),
    },
];

/// Nanoseconds this thread has run on a CPU (the first field of its schedstat).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// EVALSHA calls per second on an in-process engine, per second of wall time and per second
/// of this thread's CPU time, checking every reply is `expect` so a path that silently
/// changed (say, to the stale one) cannot pass as fast.
fn redlab(path: &Path) -> (f64, f64) {
    let mut e = Engine::new(Config::default());
    let sha = match e.execute(1, &["SCRIPT", "LOAD", MONOTONIC_MAX]) {
        Reply::Bulk(b) => String::from_utf8(b.to_vec()).expect("hex"),
        other => panic!("SCRIPT LOAD failed: {other:?}"),
    };
    e.execute(1, &["SET", "max", &START.to_string()]);
    let batch: u64 = 1024;
    let calls: Option<u64> = std::env::var("EVAL_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok());
    let mut n: u64 = 0;
    // Only the calls are timed: the arguments of each batch are formatted before its clocks
    // start, as Redis's commands are built before they are piped in (formatting them inside
    // was about 8% of the CPU time counted for redlab, in a profile of the update path).
    let (mut wall, mut cpu_ns) = (Duration::ZERO, 0u64);
    while calls.map_or(wall < MEASURE, |c| n < c) {
        let values: Vec<String> = (n..n + batch).map(path.value).collect();
        let start = Instant::now();
        let cpu_start = thread_cpu_ns();
        for v in &values {
            let r = e.execute(
                1,
                &["EVALSHA", sha.as_str(), "2", "max", "seen", v.as_str()],
            );
            assert!(matches!(r, Reply::Int(i) if i == path.expect), "{r:?}");
        }
        cpu_ns += thread_cpu_ns() - cpu_start;
        wall += start.elapsed();
        n += batch;
    }
    let cpu = cpu_ns as f64 / 1e9;
    let wall = n as f64 / wall.as_secs_f64();
    (wall, if cpu > 0.0 { n as f64 / cpu } else { wall })
}

fn resp(args: &[&str], out: &mut Vec<u8>) {
    write!(out, "*{}\r\n", args.len()).expect("vec");
    for a in args {
        write!(out, "${}\r\n{}\r\n", a.len(), a).expect("vec");
    }
}

/// CPU time the process `pid` has used, user and system (/proc/PID/stat, in clock ticks of
/// 10 ms).
fn process_cpu(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// EVALSHA calls per second of Redis's own execution time (1 / usec_per_call), and per
/// second of the whole redis-server process's CPU time while it ran them (reading, parsing
/// and replying included, which counts against Redis).
fn redis(real: &RealRedis, path: &Path) -> (f64, f64) {
    let port = real.port();
    let pid = cli(port, &["INFO", "server"])
        .lines()
        .find_map(|l| l.strip_prefix("process_id:").map(|p| p.trim().to_string()))
        .unwrap_or_default();
    let sha = cli(port, &["SCRIPT", "LOAD", MONOTONIC_MAX]);
    cli(port, &["FLUSHALL"]);
    cli(port, &["SET", "max", &START.to_string()]);
    cli(port, &["CONFIG", "RESETSTAT"]);
    let mut input = Vec::new();
    for i in 0..REDIS_CALLS {
        resp(
            &["EVALSHA", &sha, "2", "max", "seen", &(path.value)(i)],
            &mut input,
        );
    }
    let cpu_before = process_cpu(&pid);
    let mut pipe = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "--pipe"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run redis-cli --pipe");
    pipe.stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("pipe commands");
    let out = pipe.wait_with_output().expect("redis-cli --pipe");
    let cpu = (process_cpu(&pid) - cpu_before).as_secs_f64();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("errors: 0"), "redis-cli --pipe: {report}");
    let stats = cli(port, &["INFO", "commandstats"]);
    let line = stats
        .lines()
        .find(|l| l.starts_with("cmdstat_evalsha:"))
        .expect("evalsha in commandstats");
    let field = |name: &str| -> f64 {
        line.split([':', ','])
            .find_map(|kv| kv.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .expect(name)
    };
    assert_eq!(field("calls=") as u64, REDIS_CALLS, "{line}");
    let per_cpu = if cpu > 0.0 {
        REDIS_CALLS as f64 / cpu
    } else {
        f64::NAN
    };
    (1e6 / field("usec_per_call="), per_cpu)
}

fn main() {
    let only = std::env::var("EVAL_BENCH_ONLY").ok();
    let real = RealRedis::start()
        .map_err(|e| println!("redis-server not started ({e}): redlab only"))
        .ok();
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    println!("load average before: {}", load());
    println!(
        "{:<36} {:>14} {:>14} {:>8} {:>16} {:>15} {:>8}",
        "eval/monotonic-max",
        "redlab EVALSHA/s",
        "redis EVALSHA/s",
        "ratio",
        "redlab per CPU s",
        "redis per CPU s",
        "ratio"
    );
    for path in PATHS
        .iter()
        .filter(|p| only.as_deref().is_none_or(|o| p.name.starts_with(o)))
    {
        let (ours, ours_cpu) = redlab(path);
        match &real {
            Some(real) => {
                let (theirs, theirs_cpu) = redis(real, path);
                println!(
                    "{:<36} {:>14.0} {:>14.0} {:>7.2}x {:>16.0} {:>15.0} {:>7.2}x",
                    path.name,
                    ours,
                    theirs,
                    ours / theirs,
                    ours_cpu,
                    theirs_cpu,
                    ours_cpu / theirs_cpu
                );
            }
            None => println!(
                "{:<36} {:>14.0} {:>14} {:>8} {:>16.0} {:>15} {:>8}",
                path.name, ours, "-", "-", ours_cpu, "-", "-"
            ),
        }
    }
    println!("load average after: {}", load());
}
