//! Throughput over TCP with the same load generator against redlab and a real redis-server
//! in the same run: redis-benchmark, 50 clients, pipelines of 1 and 16, for SET, GET and an
//! EVALSHA of the monotonic-max script. `cargo bench --bench tcp_throughput`.
//!
//! Both servers and the load generator share the machine, so absolute figures depend on it;
//! the ratio is the result. Each row runs alternately against both servers, several times,
//! and the median is kept.

use std::process::Command;

use redlab_client::RealRedis;

const MAX_SCRIPT: &str = "local cur = tonumber(redis.call('GET', KEYS[1])) \
local v = tonumber(ARGV[1]) \
if cur == nil or v > cur then redis.call('SET', KEYS[1], ARGV[1]) redis.call('SADD', KEYS[2], KEYS[1]) return 1 end \
return 0";

fn redis_benchmark(port: u16, pipeline: u32, args: &[&str]) -> f64 {
    let out = Command::new("redis-benchmark")
        .args(["-p", &port.to_string(), "-c", "50", "-n", "200000", "-r", "100000", "--csv", "-P", &pipeline.to_string()])
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
    let out = Command::new("redis-cli").args(["-p", &port.to_string(), "SCRIPT", "LOAD", MAX_SCRIPT]).output().expect("redis-cli");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
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
    println!("{:<28} {:>14} {:>14} {:>8}", "test (50 clients)", "redlab ops/s", "redis ops/s", "ratio");
    for pipeline in [1, 16] {
        let rows: Vec<(String, Vec<String>)> = vec![
            ("SET".into(), vec!["-t".into(), "set".into()]),
            ("GET".into(), vec!["-t".into(), "get".into()]),
            (
                "EVALSHA max script".into(),
                vec!["EVALSHA".into(), sha.clone(), "2".into(), "max:__rand_int__".into(), "dirty".into(), "__rand_int__".into()],
            ),
        ];
        for (name, args) in rows {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut ours = Vec::new();
            let mut theirs = Vec::new();
            for _ in 0..3 {
                ours.push(redis_benchmark(a, pipeline, &args));
                theirs.push(redis_benchmark(b, pipeline, &args));
            }
            let (o, t) = (median(ours), median(theirs));
            println!("{:<28} {:>14.0} {:>14.0} {:>7.2}x", format!("{name} -P {pipeline}"), o, t, o / t);
        }
    }
}
