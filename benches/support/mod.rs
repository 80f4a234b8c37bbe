//! Helpers shared by the benches that drive a server from outside with Redis's own tools
//! (redis-cli, redis-benchmark), the same way for redlab and for a real redis-server.
#![allow(dead_code)]

use std::process::Command;

use redlab_client::RealRedis;

/// A redlab server and a real redis-server to compare it with; None (said on stdout) when
/// redis-server is missing, for a bench that has nothing to show without both.
pub fn both_servers() -> Option<(redlab::Server, RealRedis)> {
    let Ok(real) = RealRedis::start() else {
        println!("redis-server not found: no comparison");
        return None;
    };
    Some((redlab::Server::start(), real))
}

/// Runs one redis-cli command against the server on `port` and returns its output, trimmed.
pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .expect("run redis-cli");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The pid a server reports in INFO server.
pub fn server_pid(port: u16) -> Option<u32> {
    cli(port, &["INFO", "server"])
        .lines()
        .find_map(|l| l.strip_prefix("process_id:")?.trim().parse().ok())
}

/// Requests per second from one redis-benchmark run: 50 clients, `requests` requests in
/// pipelines of `pipeline`, then `args` (options such as `-r`, then the command or `-t`).
/// `program` is the command that starts redis-benchmark: `Command::new("redis-benchmark")`,
/// or a wrapper such as `taskset -c N redis-benchmark`.
pub fn redis_benchmark(
    mut program: Command,
    port: u16,
    requests: usize,
    pipeline: u32,
    args: &[&str],
) -> f64 {
    let out = program
        .args([
            "-p",
            &port.to_string(),
            "-c",
            "50",
            "-n",
            &requests.to_string(),
            "--csv",
            "-P",
            &pipeline.to_string(),
        ])
        .args(args)
        .output()
        .expect("run redis-benchmark");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .nth(1)
        .and_then(|l| l.split(',').nth(1))
        .and_then(|v| v.trim_matches('"').parse().ok())
        .unwrap_or_else(|| panic!("no figure in redis-benchmark output: {text}"))
}

/// Clock ticks per second of the `utime`/`stime` fields in /proc/<pid>/stat (`getconf
/// CLK_TCK`; 100 on every Linux we run on, used when getconf is missing).
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// CPU seconds (user + system, every thread) a process has used so far, from
/// /proc/<pid>/stat; 0 where /proc is missing.
///
/// Wall-clock ops/s move with whatever else the machine runs; the CPU a server spends per
/// request moves much less, so the benches print it beside the wall figures.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) sit at 11 and 12 here.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let hz = *TICKS.get_or_init(clock_ticks_per_second);
    (ticks(11) + ticks(12)) as f64 / hz
}

/// Runs `f` (one benchmark run of `requests` requests) and returns its result with the CPU
/// microseconds process `pid` spent per request meanwhile.
pub fn with_cpu_per_op<T>(pid: u32, requests: usize, f: impl FnOnce() -> T) -> (T, f64) {
    let before = cpu_seconds(pid);
    let out = f();
    let used = cpu_seconds(pid) - before;
    (out, used * 1e6 / requests.max(1) as f64)
}

/// A count from the environment, or `default`: `REDLAB_BENCH_RUNS` (runs per row) and
/// `REDLAB_BENCH_DIVIDE` (every row's request count divided by it) make a quick pass on a
/// busy machine, where the CPU-per-request column still compares the servers.
pub fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}
