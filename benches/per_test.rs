//! What one test pays for a fresh server, measured the way a user's test suite pays it, beside
//! spawning a real redis-server and connecting to it, in the same run.
//! `cargo bench --bench per_test`.
//!
//! A suite that gives each test its own server pays this fixed cost thousands of times, so
//! it decides whether "a server per test" is affordable. The rows:
//!
//! - (a) in-process: `Engine::new` and its first EVAL (the Lua state is part of the cost);
//! - (b) `Server::start` and a PING on a raw TCP connection, split into where the time goes;
//! - (c) `Server::start`, a redis-rs connection (with its CLIENT SETINFO handshake), a first
//!   EVAL, and dropping both; the drop of the server is also shown alone, as the test thread
//!   sees it;
//! - (d) 1,000 tests of shape (c) in a row, total;
//! - round trips on an open connection, redis-rs PING, and the cost of opening a redis-rs
//!   connection to a running server, against both servers.
//!
//! (a) and (c) are run with the process-wide pool of Lua states built ahead on a background
//! thread (`redlab_server::pool_lua_states`, the default) and without it, alternating in
//! blocks, so the difference is measured on the same machine at the same time.
//!
//! Where the time goes (session 17, 2-core VM shared with other builds, load 3-10):
//!
//! - (a), with a pooled state: about 30k instructions on the test's thread (callgrind,
//!   `PER_TEST_ONLY=a`): `Engine::new` ~8k, the EVAL ~22k (SHA1 and loading the compiled
//!   chunk ~11k, KEYS/ARGV and the SET through redis.call ~11k). A state built inline instead
//!   (pool empty) is ~180k more. Wall medians 17-39 us moved with the load in the same hour.
//! - (b), timestamps inside the server thread (a throwaway probe), medians after `start`
//!   handed the server over: the test connects in 15-18 us and writes its PING; the server
//!   thread then sets the runtime's task set up (~5 us), builds the engine (~4-5 us), accepts
//!   (8 us through a runtime turn, now taken directly), admits the connection and makes its
//!   session (~8 us: two address texts, the buffers, the session), runs the engine's first
//!   command (~6 us, against ~1 us for the second PING: per-engine first-use tables) and
//!   writes. With the other core busy, the thread woken at the hand-off ran only once the
//!   test blocked in its first read: all of that landed on the first PING. `start` now wakes
//!   the thread before it binds the port (`net::workers`) and the waiting connection is
//!   accepted directly. Full runs alternated with the previous build (`PER_TEST_SCALE=0.3`,
//!   load 7.5, the quieter pairs): start 7.2-7.5 us (was 17.7-21.6), first PONG 39.0-39.2
//!   (was 40.8-55.9), but first PING 24 us against 6.1 for the second (was 15.9-22.9 against
//!   6.4-10.3): the engine's set-up, the connection's and the engine's first command still
//!   run after the test's PING arrives.
//!
//! The machine's load average is printed before and after: on a shared machine the medians
//! move with it, while the ratios of figures taken in the same run move much less.
//!
//! Each figure is the median of hundreds of runs. Redis's figures spawn the process, so
//! fewer of them are taken; the ratio column is redis-server's time over redlab's.
//! `PER_TEST_SCALE=0.2` runs a fifth of the iterations (a quick look). `PER_TEST_ONLY=a`
//! runs only row (a), with the pool, for a profiler (`perf record`, `valgrind --tool=callgrind`);
//! `PER_TEST_ONLY=b` only row (b) with its split (first PING beside the second);
//! `PER_TEST_ONLY=c` only row (c) with its split. `PER_TEST_ONLY=rt` only the round-trip rows
//! (PING and SET+GET on an open connection, connection open), redlab and redis-server
//! interleaved; `PER_TEST_ONLY=rt-redlab` loops redlab's alone, for `strace` or callgrind.
//! `PER_TEST_BUSY_POLL_US=n` starts redlab's servers with `redlab-busy-poll-us` n (0: off).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redlab::{Config, Engine, Server};

const SCRIPT: &str = "return redis.call('SET', KEYS[1], ARGV[1])";

fn scale(n: usize) -> usize {
    let s: f64 = std::env::var("PER_TEST_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    ((n as f64 * s) as usize).max(5)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// One PING on a raw socket, `false` when the server is not there (yet).
fn raw_ping(s: &mut TcpStream) -> bool {
    if s.write_all(b"*1\r\n$4\r\nPING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

fn connect_raw(addr: SocketAddr) -> Option<TcpStream> {
    let s = TcpStream::connect(addr).ok()?;
    let _ = s.set_nodelay(true);
    Some(s)
}

fn first_eval(c: &mut redis::Connection) {
    let r: String = redis::cmd("EVAL")
        .arg(SCRIPT)
        .arg(1)
        .arg("k")
        .arg("v")
        .query(c)
        .expect("EVAL");
    assert_eq!(r, "OK");
}

fn redis_rs(url: &str) -> redis::Connection {
    redis::Client::open(url)
        .expect("url")
        .get_connection()
        .expect("redis-rs connection")
}

/// A row of the table: redlab's median, and redis-server's when it was measured.
struct Row {
    what: &'static str,
    redlab: Duration,
    redis: Option<Duration>,
    runs: String,
}

fn print(rows: &[Row]) {
    println!(
        "{:<58} {:>12} {:>14} {:>9}  runs",
        "", "redlab (us)", "redis (us)", "ratio"
    );
    for r in rows {
        let redis = r
            .redis
            .map(|d| format!("{:>14.1}", us(d)))
            .unwrap_or_else(|| format!("{:>14}", "-"));
        let ratio = r
            .redis
            .map(|d| format!("{:>8.1}x", us(d) / us(r.redlab)))
            .unwrap_or_else(|| format!("{:>9}", "-"));
        println!(
            "{:<58} {:>12.1} {} {}  {}",
            r.what,
            us(r.redlab),
            redis,
            ratio,
            r.runs
        );
    }
}

// ---- redlab ------------------------------------------------------------------------------

/// (a) Engine::new + first EVAL, in-process.
fn engine_first_eval() -> Duration {
    let t = Instant::now();
    let mut e = Engine::new(Config::default());
    let r = e.execute(1, &["EVAL", SCRIPT, "1", "k", "v"]);
    let d = t.elapsed();
    assert!(matches!(r, redlab::Reply::Status(_)), "{r:?}");
    drop(e);
    d
}

/// (b) Server::start + raw TCP PING, with the split: start returned, connected, first PONG,
/// second PONG on the same connection.
struct RawSplit {
    start: Duration,
    connect: Duration,
    first_ping: Duration,
    second_ping: Duration,
    total: Duration,
}

fn server_raw_ping() -> RawSplit {
    let t0 = Instant::now();
    let server = start_server();
    let t1 = Instant::now();
    let mut s = connect_raw(server.addr()).expect("connect");
    let t2 = Instant::now();
    assert!(raw_ping(&mut s));
    let t3 = Instant::now();
    assert!(raw_ping(&mut s));
    let t4 = Instant::now();
    drop(s);
    drop(server);
    RawSplit {
        start: t1 - t0,
        connect: t2 - t1,
        first_ping: t3 - t2,
        second_ping: t4 - t3,
        total: t3 - t0,
    }
}

/// (c) Server::start + redis-rs connection + first EVAL + drop; also the parts.
struct TestSplit {
    start: Duration,
    open: Duration,
    eval: Duration,
    drop_conn: Duration,
    drop_server: Duration,
    total: Duration,
    /// Voluntary context switches of all the process's threads from start to drop: each is a
    /// thread that blocked and had to be woken, the cross-thread handoffs that dominate (c).
    switches: u64,
}

/// Voluntary context switches so far, summed over the process's threads (a thread that
/// exited no longer counts; the server threads are reused and live on).
fn voluntary_switches() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("status")).ok())
        .filter_map(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .sum()
}

fn server_redis_rs_test() -> TestSplit {
    let switches = voluntary_switches();
    let t0 = Instant::now();
    let server = start_server();
    let t1 = Instant::now();
    let mut c = redis_rs(&server.url());
    let t2 = Instant::now();
    first_eval(&mut c);
    let t3 = Instant::now();
    drop(c);
    let t4 = Instant::now();
    drop(server);
    let t5 = Instant::now();
    let switches = voluntary_switches().saturating_sub(switches);
    TestSplit {
        start: t1 - t0,
        open: t2 - t1,
        eval: t3 - t2,
        drop_conn: t4 - t3,
        drop_server: t5 - t4,
        total: t5 - t0,
        switches,
    }
}

/// (d) 1,000 tests of shape (c) in a row.
fn thousand_tests() -> Duration {
    let t = Instant::now();
    for _ in 0..1000 {
        let server = start_server();
        let mut c = redis_rs(&server.url());
        first_eval(&mut c);
    }
    t.elapsed()
}

// ---- redis-server ------------------------------------------------------------------------

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn spawn_redis(bin: &Path, port: u16) -> Child {
    Command::new(bin)
        .args(["--port", &port.to_string()])
        .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server")
}

/// Polls until the spawned server answers PING on a fresh connection; returns it.
fn wait_pong(addr: SocketAddr) -> TcpStream {
    loop {
        if let Some(mut s) = connect_raw(addr) {
            if raw_ping(&mut s) {
                return s;
            }
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// redis-server spawned, first PONG on a raw connection.
fn redis_raw_ping(bin: &Path) -> Duration {
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let t = Instant::now();
    let child = spawn_redis(bin, port);
    let s = wait_pong(addr);
    let d = t.elapsed();
    drop(s);
    kill(child);
    d
}

/// redis-server spawned, a redis-rs connection, first EVAL, stopped: the (c) of a suite that
/// spawns a real server per test. Readiness is polled with raw PINGs (redis-rs would back
/// off longer between attempts).
fn redis_test(bin: &Path) -> Duration {
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let t = Instant::now();
    let child = spawn_redis(bin, port);
    drop(wait_pong(addr));
    let mut c = redis_rs(&format!("redis://{addr}/"));
    first_eval(&mut c);
    drop(c);
    kill(child);
    t.elapsed()
}

/// A real redis-server for the round-trip rows, started once.
struct Running {
    child: Child,
    url: String,
}

fn start_redis(bin: &Path) -> Running {
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let child = spawn_redis(bin, port);
    drop(wait_pong(addr));
    Running {
        child,
        url: format!("redis://{addr}/"),
    }
}

/// `Server::start()`, or with `PER_TEST_BUSY_POLL_US` set, a server polling that long after
/// serving (`redlab-busy-poll-us`; 0 turns busy polling off, to compare).
fn start_server() -> Server {
    match std::env::var("PER_TEST_BUSY_POLL_US")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(us) => redlab::ServerBuilder::new()
            .busy_poll(Duration::from_micros(us))
            .start(),
        None => Server::start(),
    }
}

// ---- round trips on a running server -----------------------------------------------------

/// redis-rs PING on an open connection.
fn pings(url: &str, n: usize) -> Duration {
    let mut c = redis_rs(url);
    for _ in 0..100 {
        let _: String = redis::cmd("PING").query(&mut c).unwrap();
    }
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                let _: String = redis::cmd("PING").query(&mut c).unwrap();
                t.elapsed()
            })
            .collect(),
    )
}

/// Opening a redis-rs connection (TCP connect + CLIENT SETINFO) to a running server.
fn opens(url: &str, n: usize) -> Duration {
    let client = redis::Client::open(url).unwrap();
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                let c = client.get_connection().unwrap();
                let d = t.elapsed();
                drop(c);
                d
            })
            .collect(),
    )
}

/// redis-rs SET then GET on an open connection, the pair timed.
fn set_gets(url: &str, n: usize) -> Duration {
    use redis::Commands;
    let mut c = redis_rs(url);
    let mut pair = |i: usize| {
        let _: () = c.set(format!("key:{i}"), i).unwrap();
        let _: i64 = c.get(format!("key:{i}")).unwrap();
    };
    (0..100).for_each(&mut pair);
    median(
        (0..n)
            .map(|i| {
                let t = Instant::now();
                pair(i);
                t.elapsed()
            })
            .collect(),
    )
}

/// The round-trip rows alone: a redlab `Server` and a redis-server, measured in turns (best
/// of the turns, the machine's load moving meanwhile); with `redis` false, redlab's alone.
fn only_round_trips(redis: bool) {
    let np = scale(2000);
    let no = scale(500);
    let server = start_server();
    let real = redis
        .then(redlab_client::real_redis::redis_server_bin)
        .flatten()
        .map(|bin| start_redis(&bin));
    let best = |a: Option<Duration>, b: Duration| Some(a.map_or(b, |a| a.min(b)));
    let (mut lab, mut red) = ([None; 3], [None; 3]);
    for _ in 0..3 {
        let figures = |url: &str| [pings(url, np), set_gets(url, np), opens(url, no)];
        for (slot, d) in lab.iter_mut().zip(figures(&server.url())) {
            *slot = best(*slot, d);
        }
        if let Some(r) = &real {
            for (slot, d) in red.iter_mut().zip(figures(&r.url)) {
                *slot = best(*slot, d);
            }
        }
    }
    println!("load average: {}", load_average());
    let names = [
        "redis-rs PING on an open connection",
        "redis-rs SET+GET on an open connection (pair)",
        "redis-rs connection open (running server)",
    ];
    let rows: Vec<Row> = names
        .iter()
        .zip(lab.iter().zip(red))
        .map(|(what, (l, r))| Row {
            what,
            redlab: l.expect("measured"),
            redis: r,
            runs: format!("best of 3 medians of {np} / {no}"),
        })
        .collect();
    print(&rows);
    if let Some(r) = real {
        kill(r.child);
    }
}

/// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what a run cost, whatever else the
/// machine was doing meanwhile.
fn thread_cpu() -> Duration {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec (two longs on x86-64 Linux) through the pointer.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.sec as u64, t.nsec as u32)
}

/// The 1, 5 and 15 minute load averages, as /proc/loadavg has them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// `n` runs of `f` with the pool of Lua states on (the default) and `n` with it off,
/// alternating in blocks.
fn ab<T>(n: usize, mut f: impl FnMut() -> T) -> (Vec<T>, Vec<T>) {
    let block = 25;
    let (mut on, mut off) = (Vec::with_capacity(n), Vec::with_capacity(n));
    while on.len() < n {
        redlab_server::pool_lua_states(true);
        on.extend((0..block).map(|_| f()));
        redlab_server::pool_lua_states(false);
        off.extend((0..block).map(|_| f()));
    }
    redlab_server::pool_lua_states(true);
    (on, off)
}

/// Row (a) alone, with the pool, as a test suite with short bodies runs it: what a profiler
/// is pointed at.
fn only_a() {
    let n = scale(1000);
    let body = Duration::from_micros(200);
    let cpu_before = thread_cpu();
    let a = median(
        (0..n)
            .map(|_| {
                let d = engine_first_eval();
                std::thread::sleep(body);
                d
            })
            .collect(),
    );
    let cpu = (thread_cpu() - cpu_before) / n as u32;
    println!("load average: {}", load_average());
    println!(
        "(a) Engine::new + first EVAL, pool on: median {:.1} us, mean thread CPU {:.1} us (sleep and drop included), {n} runs",
        us(a),
        us(cpu)
    );
}

/// Row (b) alone, with its split: where the first PONG's time goes, and the first PING on a
/// new connection beside the second.
fn only_b() {
    for _ in 0..50 {
        server_raw_ping();
    }
    let n = scale(1000);
    let runs: Vec<RawSplit> = (0..n).map(|_| server_raw_ping()).collect();
    let m = |f: &dyn Fn(&RawSplit) -> Duration| us(median(runs.iter().map(f).collect()));
    println!("load average: {}", load_average());
    println!(
        "(b) medians of {n}: first PONG {:.1} us = start {:.1} + connect {:.1} + first PING {:.1}; second PING {:.1}",
        m(&|r| r.total),
        m(&|r| r.start),
        m(&|r| r.connect),
        m(&|r| r.first_ping),
        m(&|r| r.second_ping),
    );
}

/// Row (c) alone, with its split and context switches: for a profiler, or to compare two
/// builds quickly.
fn only_c() {
    for _ in 0..50 {
        server_redis_rs_test();
    }
    let n = scale(500);
    let tests: Vec<TestSplit> = (0..n).map(|_| server_redis_rs_test()).collect();
    let m = |f: &dyn Fn(&TestSplit) -> Duration| us(median(tests.iter().map(f).collect()));
    println!("load average: {}", load_average());
    println!(
        "(c) medians of {n}: total {:.1} us = start {:.1} + open {:.1} + first EVAL {:.1} + drop connection {:.1} + drop server {:.1}; voluntary context switches per test {:.2}",
        m(&|t| t.total),
        m(&|t| t.start),
        m(&|t| t.open),
        m(&|t| t.eval),
        m(&|t| t.drop_conn),
        m(&|t| t.drop_server),
        tests.iter().map(|t| t.switches).sum::<u64>() as f64 / n as f64
    );
}

fn main() {
    match std::env::var("PER_TEST_ONLY").as_deref() {
        Ok("a") => return only_a(),
        Ok("b") => return only_b(),
        Ok("c") => return only_c(),
        Ok("rt") => return only_round_trips(true),
        Ok("rt-redlab") => return only_round_trips(false),
        _ => {}
    }
    let bin = redlab_client::real_redis::redis_server_bin();
    if bin.is_none() {
        println!("redis-server not found (set REDIS_SERVER_BIN): redlab figures only");
    }
    // Warm up: code paths, allocator, the loopback device.
    for _ in 0..50 {
        engine_first_eval();
        server_raw_ping();
        server_redis_rs_test();
    }

    println!("load average before: {}", load_average());
    // A test has a body: (a) leaves 200 us between runs (untimed), the time a short test
    // takes; back to back is shown too.
    let n = scale(1000);
    let body = Duration::from_micros(200);
    let (a, a_off) = ab(n, || {
        let d = engine_first_eval();
        std::thread::sleep(body);
        d
    });
    let (a, a_off) = (median(a), median(a_off));
    let cpu_before = thread_cpu();
    let a_tight = median((0..n).map(|_| engine_first_eval()).collect());
    // The mean CPU time of a back-to-back run, dropping the engine included.
    let a_cpu = (thread_cpu() - cpu_before) / n as u32;
    redlab_server::pool_lua_states(false);
    let a_tight_off = median((0..n).map(|_| engine_first_eval()).collect());
    redlab_server::pool_lua_states(true);
    // (c) with the pool of Lua states (the default) and without, alternating in blocks so
    // both see the same machine.

    let nb = scale(500);
    let raw: Vec<RawSplit> = (0..nb).map(|_| server_raw_ping()).collect();
    let nc = scale(500);
    let (tests, tests_off) = ab(nc, server_redis_rs_test);
    let nd = scale(5).min(5);
    let d = median((0..nd).map(|_| thousand_tests()).collect());

    let nr = scale(100);
    let (redis_raw, redis_c) = match &bin {
        Some(bin) => {
            for _ in 0..3 {
                redis_raw_ping(bin);
            }
            (
                Some(median((0..nr).map(|_| redis_raw_ping(bin)).collect())),
                Some(median((0..nr).map(|_| redis_test(bin)).collect())),
            )
        }
        None => (None, None),
    };

    let np = scale(2000);
    let no = scale(500);
    let server = start_server();
    let redlab_ping = pings(&server.url(), np);
    let redlab_open = opens(&server.url(), no);
    drop(server);
    let (redis_ping, redis_open) = match &bin {
        Some(bin) => {
            let r = start_redis(bin);
            let p = pings(&r.url, np);
            let o = opens(&r.url, no);
            kill(r.child);
            (Some(p), Some(o))
        }
        None => (None, None),
    };

    let m = |f: &dyn Fn(&RawSplit) -> Duration| median(raw.iter().map(f).collect());
    let mc = |f: &dyn Fn(&TestSplit) -> Duration| median(tests.iter().map(f).collect());
    let mc_off = |f: &dyn Fn(&TestSplit) -> Duration| median(tests_off.iter().map(f).collect());
    let rows = [
        Row {
            what: "(a) Engine::new + first EVAL (in-process)",
            redlab: a,
            redis: None,
            runs: format!("{n}"),
        },
        Row {
            what: "    without the pool of Lua states",
            redlab: a_off,
            redis: None,
            runs: format!("{n}"),
        },
        Row {
            what: "    back to back (no test body between runs)",
            redlab: a_tight,
            redis: None,
            runs: format!("{n}"),
        },
        Row {
            what: "    back to back, without the pool",
            redlab: a_tight_off,
            redis: None,
            runs: format!("{n}"),
        },
        Row {
            what: "    back to back, mean thread CPU time (drop included)",
            redlab: a_cpu,
            redis: None,
            runs: format!("{n}"),
        },
        Row {
            what: "(b) Server::start + raw TCP PING: first PONG",
            redlab: m(&|r| r.total),
            redis: redis_raw,
            runs: format!("{nb} / {nr} spawns"),
        },
        Row {
            what: "    Server::start() returns",
            redlab: m(&|r| r.start),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    TCP connect",
            redlab: m(&|r| r.connect),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    first PING on the new connection",
            redlab: m(&|r| r.first_ping),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    second PING on the same connection",
            redlab: m(&|r| r.second_ping),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "(c) start + redis-rs connect + first EVAL + drop",
            redlab: mc(&|t| t.total),
            redis: redis_c,
            runs: format!("{nc} / {nr} spawns"),
        },
        Row {
            what: "    without the pool of Lua states",
            redlab: mc_off(&|t| t.total),
            redis: None,
            runs: format!("{nc}"),
        },
        Row {
            what: "    Server::start() returns",
            redlab: mc(&|t| t.start),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    redis-rs connection open",
            redlab: mc(&|t| t.open),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    first EVAL",
            redlab: mc(&|t| t.eval),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    first EVAL, without the pool",
            redlab: mc_off(&|t| t.eval),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    drop the connection",
            redlab: mc(&|t| t.drop_conn),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "    drop the server (test thread)",
            redlab: mc(&|t| t.drop_server),
            redis: None,
            runs: String::new(),
        },
        Row {
            what: "(d) 1,000 tests of (c) in a row, total (redis: 1000 x c)",
            redlab: d,
            redis: redis_c.map(|c| c * 1000),
            runs: format!("{nd}"),
        },
        Row {
            what: "redis-rs PING on an open connection",
            redlab: redlab_ping,
            redis: redis_ping,
            runs: format!("{np}"),
        },
        Row {
            what: "redis-rs connection open (running server)",
            redlab: redlab_open,
            redis: redis_open,
            runs: format!("{no}"),
        },
    ];
    println!("load average after: {}", load_average());
    println!("per-test fixed cost, medians; ratio = redis-server / redlab");
    print(&rows);
    let mean_switches =
        |t: &[TestSplit]| t.iter().map(|t| t.switches).sum::<u64>() as f64 / t.len() as f64;
    println!(
        "(c) voluntary context switches per test, all threads: {:.2} ({:.2} without the pool)",
        mean_switches(&tests),
        mean_switches(&tests_off)
    );
    println!(
        "redis-rs open / one PING round trip: redlab {:.2}x{}",
        us(redlab_open) / us(redlab_ping),
        match (redis_open, redis_ping) {
            (Some(o), Some(p)) => format!(", redis-server {:.2}x", us(o) / us(p)),
            _ => String::new(),
        }
    );
}
