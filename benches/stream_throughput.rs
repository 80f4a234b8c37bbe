//! Streams over TCP, redlab beside a real redis-server in the same run, with the same load
//! generator (redis-benchmark, 50 clients, pipelines of 1 and 16): XADD with `*` and
//! MAXLEN ~ 1000, XRANGE of 10 entries, and a consumer step (XREADGROUP of one entry and
//! its XACK, in one EVALSHA). Then the memory 1 M entries take in each server.
//! `cargo bench --bench stream_throughput` (`REDLAB_BENCH_ROWS=XADD,XRANGE` runs only the rows
//! whose names start with one of those words, and skips the memory figure).
//!
//! Both servers and the load generator share the machine: the ratio is the result. Each row
//! runs alternately against both servers RUNS times; the median is kept.

mod support;

/// The allocator the `redlab-server` binary runs with, so that the redlab measured here (a
/// server thread of this process) is the one a user starts.
#[global_allocator]
static GLOBAL: redlab_server::MiMalloc = redlab_server::MiMalloc;

use std::process::Command;

use support::{cli, env_count, server_pid, with_cpu_per_op};

const RUNS: usize = 3;
const REQUESTS: usize = 200_000;

/// One redis-benchmark run (50 clients): requests per second.
fn redis_benchmark(port: u16, n: usize, pipeline: u32, args: &[&str]) -> f64 {
    support::redis_benchmark(Command::new("redis-benchmark"), port, n, pipeline, args)
}

const CONSUME: &str = "local r = redis.call('XREADGROUP', 'GROUP', 'g', ARGV[1], 'COUNT', 1, 'STREAMS', KEYS[1], '>') \
if r then redis.call('XACK', KEYS[1], 'g', r[1][2][1][1]) return 1 end return 0";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Resident set size of a process in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// Prepares what a row reads: 1000 entries in `r`; a fresh `q` with a group and enough
/// entries for every consumer step.
fn prepare(port: u16, requests: usize) {
    cli(port, &["DEL", "r", "q", "s"]);
    redis_benchmark(port, 1000, 16, &["XADD", "r", "*", "field", "value"]);
    redis_benchmark(
        port,
        requests + 1000,
        64,
        &["XADD", "q", "*", "field", "value"],
    );
    cli(port, &["XGROUP", "CREATE", "q", "g", "0"]);
}

fn main() {
    let Some((redlab, real)) = support::both_servers() else {
        return;
    };
    let (a, b) = (redlab.port(), real.port());
    // The CPU each server uses per request: redlab serves from a thread of this process (the
    // main thread only waits for redis-benchmark), redis-server is a child process.
    let (pid_a, pid_b) = (
        std::process::id(),
        server_pid(b).expect("redis-server reports its pid"),
    );
    let sha = cli(a, &["SCRIPT", "LOAD", CONSUME]);
    assert_eq!(sha, cli(b, &["SCRIPT", "LOAD", CONSUME]));
    let only: Vec<String> = std::env::var("REDLAB_BENCH_ROWS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let runs = env_count("REDLAB_BENCH_RUNS", RUNS);
    let requests = REQUESTS / env_count("REDLAB_BENCH_DIVIDE", 1);
    println!("{runs} runs each, median; 50 clients");
    println!("cpu: server CPU microseconds (user+system, /proc/<pid>/stat) per request, median; cpu ratio = redis/redlab (above 1: redlab spends less)");
    println!(
        "{:<36} {:>14} {:>14} {:>8} {:>10} {:>10} {:>9}",
        "test", "redlab ops/s", "redis ops/s", "ratio", "redlab cpu", "redis cpu", "cpu ratio"
    );
    for pipeline in [1u32, 16] {
        let rows: Vec<(&str, Vec<&str>)> = vec![
            (
                "XADD * MAXLEN ~ 1000",
                vec!["XADD", "s", "MAXLEN", "~", "1000", "*", "field", "value"],
            ),
            (
                "XRANGE - + COUNT 10",
                vec!["XRANGE", "r", "-", "+", "COUNT", "10"],
            ),
            (
                "XREADGROUP + XACK (EVALSHA)",
                vec!["EVALSHA", &sha, "1", "q", "consumer"],
            ),
        ];
        for (name, args) in rows {
            if !only.is_empty() && !only.iter().any(|w| name.starts_with(w.as_str())) {
                continue;
            }
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            let (mut ours_cpu, mut theirs_cpu) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                prepare(a, requests);
                let (ops, cpu) = with_cpu_per_op(pid_a, requests, || {
                    redis_benchmark(a, requests, pipeline, &args)
                });
                ours.push(ops);
                ours_cpu.push(cpu);
                prepare(b, requests);
                let (ops, cpu) = with_cpu_per_op(pid_b, requests, || {
                    redis_benchmark(b, requests, pipeline, &args)
                });
                theirs.push(ops);
                theirs_cpu.push(cpu);
            }
            let (o, t) = (median(ours), median(theirs));
            let (oc, tc) = (median(ours_cpu), median(theirs_cpu));
            println!(
                "{:<36} {:>14.0} {:>14.0} {:>7.2}x {:>8.2}us {:>8.2}us {:>8.2}x",
                format!("{name} -P {pipeline}"),
                o,
                t,
                o / t,
                oc,
                tc,
                tc / oc
            );
        }
    }

    // Memory of 1 M entries (`field value`, auto IDs): resident size before and after. Only
    // in a full run: REDLAB_BENCH_ROWS asks for some speed rows.
    if !only.is_empty() {
        return;
    }
    println!("\nmemory of 1,000,000 entries (XADD m * field value), resident size growth:");
    for (label, port, pid) in [
        ("redlab", a, std::process::id()),
        ("redis", b, server_pid(b).expect("process_id")),
    ] {
        cli(port, &["FLUSHALL"]);
        let before = rss_kib(pid);
        redis_benchmark(port, 1_000_000, 64, &["XADD", "m", "*", "field", "value"]);
        let len: u64 = cli(port, &["XLEN", "m"]).parse().unwrap_or(0);
        let after = rss_kib(pid);
        let used = cli(port, &["MEMORY", "USAGE", "m", "SAMPLES", "0"]);
        println!(
            "{label:<8} {len} entries: RSS +{:.1} MiB ({:.1} bytes/entry); MEMORY USAGE {used}",
            (after.saturating_sub(before)) as f64 / 1024.0,
            (after.saturating_sub(before)) as f64 * 1024.0 / len.max(1) as f64
        );
    }
}
