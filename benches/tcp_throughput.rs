//! Throughput over TCP with the same load generator against redlab and a real redis-server
//! in the same run: redis-benchmark, 50 clients, pipelines of 1 and 16, for SET, GET and an
//! EVALSHA of the monotonic-max script. `cargo bench --bench tcp_throughput`.
//!
//! Both servers and the load generator share the machine, so absolute figures depend on it;
//! the ratio is the result. Each row runs alternately against both servers, several times,
//! and the median is kept; the spread (lowest-highest) is printed beside it.
//!
//! On a machine with at least two CPUs each server is pinned to one CPU and redis-benchmark
//! to another (`taskset`), the same for both servers. Unpinned, the scheduler puts client and
//! server on the same CPU in some runs and not in others, and at -P 1 that alone moves the
//! figure by half (a ping-pong between two CPUs is much faster than on one): with a handful
//! of runs the median then compares placements, not servers. `REDLAB_BENCH_NO_PIN=1` runs
//! unpinned.

use std::process::Command;

use redlab_client::RealRedis;

const MAX_SCRIPT: &str = "local cur = tonumber(redis.call('GET', KEYS[1])) \
local v = tonumber(ARGV[1]) \
if cur == nil or v > cur then redis.call('SET', KEYS[1], ARGV[1]) redis.call('SADD', KEYS[2], KEYS[1]) return 1 end \
return 0";

/// Runs of each row against each server.
const RUNS: usize = 5;

/// CPUs for the servers and for redis-benchmark, when pinning is possible.
const SERVER_CPU: usize = 1;
const CLIENT_CPU: usize = 0;

fn redis_benchmark(port: u16, pipeline: u32, args: &[&str], pinned: bool) -> f64 {
    let mut cmd = if pinned {
        let mut c = Command::new("taskset");
        c.args(["-c", &CLIENT_CPU.to_string(), "redis-benchmark"]);
        c
    } else {
        Command::new("redis-benchmark")
    };
    let out = cmd
        .args([
            "-p",
            &port.to_string(),
            "-c",
            "50",
            "-n",
            "200000",
            "-r",
            "100000",
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

fn script_load(port: u16) -> String {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "SCRIPT", "LOAD", MAX_SCRIPT])
        .output()
        .expect("redis-cli");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Median, lowest and highest.
fn summary(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Pins every thread of a process to one CPU; false if `taskset` is missing or refuses.
fn pin(pid: u32, cpu: usize) -> bool {
    Command::new("taskset")
        .args(["-a", "-p", "-c", &cpu.to_string(), &pid.to_string()])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The pid a server reports in INFO server.
fn server_pid(port: u16) -> Option<u32> {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "INFO", "server"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("process_id:")?.trim().parse().ok())
}

fn main() {
    let Ok(real) = RealRedis::start() else {
        println!("redis-server not found: no comparison");
        return;
    };
    let redlab = redlab::Server::start();
    let (a, b) = (redlab.port(), real.port());
    let sha = script_load(a);
    assert_eq!(sha, script_load(b), "both servers hash the script alike");
    // redlab runs in this process (its server thread included), redis in its own.
    let two_cpus = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let pinned = two_cpus
        && std::env::var_os("REDLAB_BENCH_NO_PIN").is_none()
        && pin(std::process::id(), SERVER_CPU)
        && server_pid(b).is_some_and(|pid| pin(pid, SERVER_CPU));
    if pinned {
        println!("servers pinned to CPU {SERVER_CPU}, redis-benchmark to CPU {CLIENT_CPU}; {RUNS} runs each, median (lowest-highest)");
    } else {
        println!("not pinned (REDLAB_BENCH_NO_PIN, no taskset, or one CPU): -P 1 figures vary with placement; {RUNS} runs each");
    }
    println!(
        "{:<28} {:>26} {:>26} {:>8}",
        "test (50 clients)", "redlab ops/s", "redis ops/s", "ratio"
    );
    for pipeline in [1, 16] {
        let rows: Vec<(String, Vec<String>)> = vec![
            ("SET".into(), vec!["-t".into(), "set".into()]),
            ("GET".into(), vec!["-t".into(), "get".into()]),
            (
                "EVALSHA max script".into(),
                vec![
                    "EVALSHA".into(),
                    sha.clone(),
                    "2".into(),
                    "max:__rand_int__".into(),
                    "dirty".into(),
                    "__rand_int__".into(),
                ],
            ),
        ];
        for (name, args) in rows {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut ours = Vec::new();
            let mut theirs = Vec::new();
            for _ in 0..RUNS {
                ours.push(redis_benchmark(a, pipeline, &args, pinned));
                theirs.push(redis_benchmark(b, pipeline, &args, pinned));
            }
            let ((o, olo, ohi), (t, tlo, thi)) = (summary(ours), summary(theirs));
            let spread = |m: f64, lo: f64, hi: f64| {
                format!("{m:.0} ({:.0}-{:.0}k)", lo / 1000.0, hi / 1000.0)
            };
            println!(
                "{:<28} {:>26} {:>26} {:>7.2}x",
                format!("{name} -P {pipeline}"),
                spread(o, olo, ohi),
                spread(t, tlo, thi),
                o / t
            );
        }
    }
}
