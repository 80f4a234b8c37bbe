//! A 3-primary, 3-replica cluster from nothing to a first reply of every node: redlab's
//! `Cluster` in-process against six redis-server processes formed into a cluster (ADDSLOTSRANGE,
//! MEET, REPLICATE, then waiting until every node says cluster_state:ok), in the same run.
//! Then SET/GET through redis-rs's ClusterClient against both, in interleaved rounds
//! (`compare_throughput` says why). `cargo bench --bench
//! cluster_start`. `CLUSTER_START_ONLY=throughput` skips the start timings (one cluster of
//! each kind, then the throughput rows); `CLUSTER_START_ONLY=redlab-throughput` loops SET+GET on
//! redlab's alone, for `strace` or callgrind (`CLUSTER_START_OPS` pairs, 20,000 unless told).
//! `CLUSTER_BUSY_POLL_US=n` starts redlab's nodes with `redlab-busy-poll-us` n (0: off), to
//! compare.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn call(addr: &str, args: &[&str]) -> String {
    let Ok(s) = TcpStream::connect(addr) else {
        return String::new();
    };
    let _ = s.set_nodelay(true);
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut r = BufReader::new(s);
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{}\r\n", a.len(), a));
    }
    if r.get_mut().write_all(req.as_bytes()).is_err() {
        return String::new();
    }
    let mut line = String::new();
    if r.read_line(&mut line).is_err() {
        return String::new();
    }
    match line.strip_prefix(['$', '=']) {
        Some(n) => {
            let n: usize = n.trim().parse().unwrap_or(0);
            let mut body = vec![0; n + 2];
            let _ = r.read_exact(&mut body);
            String::from_utf8_lossy(&body[..n]).into_owned()
        }
        None => line.trim_end().to_string(),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn redlab_once() -> (Duration, redlab::Cluster) {
    let t = Instant::now();
    let mut builder = redlab::Cluster::builder()
        .primaries(3)
        .replicas_per_primary(1);
    if let Some(us) = std::env::var("CLUSTER_BUSY_POLL_US")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        builder = builder.server(redlab::ServerBuilder::new().busy_poll(Duration::from_micros(us)));
    }
    let cluster = builder.start();
    for s in cluster.servers() {
        let info = call(&s.addr().to_string(), &["CLUSTER", "INFO"]);
        assert!(info.starts_with("cluster_state:ok"), "{info}");
    }
    (t.elapsed(), cluster)
}

/// Six redis-server processes, killed and their directories removed on drop.
struct RealCluster {
    children: Vec<Child>,
    dirs: Vec<PathBuf>,
    addrs: Vec<String>,
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for d in &self.dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A port below the ephemeral range whose bus port (+10000) is free too.
fn free_port(next: &mut u16) -> u16 {
    loop {
        let p = *next;
        *next = if *next >= 21_999 { 20_000 } else { *next + 1 };
        let bind = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        if bind(p) && bind(p + 10_000) {
            return p;
        }
    }
}

fn redis_once(bin: &Path, next: &mut u16) -> (Duration, RealCluster) {
    let ports: Vec<u16> = (0..6).map(|_| free_port(next)).collect();
    let t = Instant::now();
    let mut real = RealCluster {
        children: Vec::new(),
        dirs: Vec::new(),
        addrs: ports.iter().map(|p| format!("127.0.0.1:{p}")).collect(),
    };
    for p in &ports {
        let dir =
            std::env::temp_dir().join(format!("redlab-bench-cluster-{}-{p}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let child = Command::new(bin)
            .args(["--port", &p.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--cluster-enabled",
                "yes",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        real.children.push(child);
        real.dirs.push(dir);
    }
    for a in &real.addrs {
        while call(a, &["PING"]) != "+PONG" {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let ranges = [("0", "5460"), ("5461", "10922"), ("10923", "16383")];
    for (a, (s, e)) in real.addrs.iter().zip(ranges) {
        call(a, &["CLUSTER", "ADDSLOTSRANGE", s, e]);
    }
    for p in &ports[1..] {
        call(
            &real.addrs[0],
            &["CLUSTER", "MEET", "127.0.0.1", &p.to_string()],
        );
    }
    let ids: Vec<String> = real
        .addrs
        .iter()
        .map(|a| call(a, &["CLUSTER", "MYID"]))
        .collect();
    for r in 3..6 {
        // A replica can follow its primary once it knows it.
        while !call(&real.addrs[r], &["CLUSTER", "REPLICATE", &ids[r - 3]]).starts_with("+OK") {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    for a in &real.addrs {
        loop {
            let info = call(a, &["CLUSTER", "INFO"]);
            if info.starts_with("cluster_state:ok") && info.contains("cluster_known_nodes:6") {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    (t.elapsed(), real)
}

/// SET then GET of `n` keys through redis-rs's cluster client; operations per second.
fn throughput(urls: Vec<String>, n: usize) -> f64 {
    use redis::Commands;
    let client = redis::cluster::ClusterClient::new(urls).unwrap();
    let mut con = client.get_connection().unwrap();
    let t = Instant::now();
    for i in 0..n {
        let _: () = con.set(format!("key:{i}"), i).unwrap();
        let _: i64 = con.get(format!("key:{i}")).unwrap();
    }
    (2 * n) as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let only = std::env::var("CLUSTER_START_ONLY").unwrap_or_default();
    if only == "redlab-throughput" {
        let (_, cluster) = redlab_once();
        let n = std::env::var("CLUSTER_START_OPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000);
        let ops = throughput(cluster.urls(), n);
        println!(
            "redlab  ClusterClient SET+GET: {ops:>10.0} ops/s (load {})",
            load()
        );
        return;
    }
    if only == "throughput" {
        let (_, cluster) = redlab_once();
        let Some(bin) = redlab_client::real_redis::redis_server_bin() else {
            println!("redis-server not found: no comparison");
            return;
        };
        let mut next = 20_000 + (std::process::id() % 100) as u16 * 20;
        let (_, real) = redis_once(&bin, &mut next);
        return compare_throughput(&cluster, &real);
    }
    let _ = redlab_once();
    let runs: Vec<(Duration, redlab::Cluster)> = (0..20).map(|_| redlab_once()).collect();
    let redlab = median(runs.iter().map(|(d, _)| *d).collect());
    drop(runs);
    println!(
        "redlab  Cluster 3+3 -> every node answers: median {:>10.1} us (20 runs)",
        redlab.as_secs_f64() * 1e6
    );
    let (_, cluster) = redlab_once();
    let Some(bin) = redlab_client::real_redis::redis_server_bin() else {
        println!("redis-server not found: no comparison");
        return;
    };
    let mut next = 20_000 + (std::process::id() % 100) as u16 * 20;
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let (d, real) = redis_once(&bin, &mut next);
        times.push(d);
        last = Some(real);
    }
    let redis = median(times);
    println!(
        "redis   6 processes formed  -> cluster ok: median {:>10.1} us (3 runs)",
        redis.as_secs_f64() * 1e6
    );
    println!(
        "start: redlab is {:.0}x faster",
        redis.as_secs_f64() / redlab.as_secs_f64()
    );
    compare_throughput(&cluster, &last.expect("three runs"));
}

/// The 1-minute load average, printed beside each throughput figure.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The throughput comparison's rounds and their length (`CLUSTER_ROUNDS`, `CLUSTER_ROUND_MS`
/// override them).
const ROUNDS: usize = 10;
const ROUND_MS: u64 = 1000;

/// SET+GET throughput through the cluster client, redlab's cluster against the real one.
///
/// Why rounds and a median of ratios: this machine is shared, and the load moves by the
/// second (redis-server's own figure moved 18k -> 28k ops/s between two runs), so two
/// figures taken one after the other compare the moments as much as the servers. Here the
/// two sides alternate in `ROUNDS` short rounds, which side goes first alternating too, and
/// each round gives one ratio of figures taken within a second or two of each other; the
/// median of those ratios is the figure, the min-max spread says how far to trust it, and
/// the median ops/s of each side are printed beside it.
///
/// Both sides get identical work: the same redis-rs sync `ClusterConnection` code (one
/// connection per primary, opened before the first round; one command in flight, no
/// pipelining, reads from primaries only), the same keys (`key:0`, `key:1`, ... from 0 in
/// every round) and the same command sequence (SET then GET of each key). A round is
/// bounded by time, not by count, so a slow moment cannot stretch the run: the whole
/// comparison takes `2 * ROUNDS * ROUND_MS` plus a short warm-up of each side.
fn compare_throughput(cluster: &redlab::Cluster, real: &RealCluster) {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let rounds = env("CLUSTER_ROUNDS", ROUNDS as u64) as usize;
    let round_len = Duration::from_millis(env("CLUSTER_ROUND_MS", ROUND_MS));
    let real_urls: Vec<String> = real.addrs.iter().map(|a| format!("redis://{a}/")).collect();
    let mut redlab_con = connect(cluster.urls());
    let mut redis_con = connect(real_urls);
    // Warm-up: connections to every primary opened, slot maps and caches filled.
    let warm = Duration::from_millis(200);
    pairs_for(&mut redlab_con, warm);
    pairs_for(&mut redis_con, warm);
    let (mut ratios, mut redlab_ops, mut redis_ops) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = pairs_for(&mut redlab_con, round_len);
            (a, pairs_for(&mut redis_con, round_len))
        } else {
            let b = pairs_for(&mut redis_con, round_len);
            (pairs_for(&mut redlab_con, round_len), b)
        };
        ratios.push(a / b);
        redlab_ops.push(a);
        redis_ops.push(b);
    }
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &r| (l.min(r), h.max(r)));
    println!(
        "redlab  ClusterClient SET+GET: {:>10.0} ops/s (median of {rounds} rounds of {:?})",
        median_f64(redlab_ops),
        round_len
    );
    println!(
        "redis   ClusterClient SET+GET: {:>10.0} ops/s (median of {rounds} rounds of {:?})",
        median_f64(redis_ops),
        round_len
    );
    println!(
        "throughput: redlab / redis = {:.2} median of per-round ratios, spread {lo:.2}-{hi:.2} (load {})",
        median_f64(ratios),
        load()
    );
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn connect(urls: Vec<String>) -> redis::cluster::ClusterConnection {
    let client = redis::cluster::ClusterClient::new(urls).unwrap();
    client.get_connection().unwrap()
}

/// SET then GET of `key:0`, `key:1`, ... for about `d`; operations per second.
fn pairs_for(con: &mut redis::cluster::ClusterConnection, d: Duration) -> f64 {
    use redis::Commands;
    let t = Instant::now();
    let mut i = 0usize;
    loop {
        // The clock is read once per 32 pairs, so reading it costs both sides next to nothing.
        for _ in 0..32 {
            let _: () = con.set(format!("key:{i}"), i).unwrap();
            let _: i64 = con.get(format!("key:{i}")).unwrap();
            i += 1;
        }
        let e = t.elapsed();
        if e >= d {
            return (2 * i) as f64 / e.as_secs_f64();
        }
    }
}
