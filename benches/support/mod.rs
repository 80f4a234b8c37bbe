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
