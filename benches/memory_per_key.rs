//! Memory per key, redlab beside redis-server 7.0.15, for four kinds of key:
//! `cargo bench --bench memory_per_key`.
//!
//! - strings: `SET key:N value:N`;
//! - hashes: `HSET hash:N field:0 value:0 ... field:9 value:9` (10 fields);
//! - sets: `SADD set:N member:0 ... member:9` (10 members);
//! - zsets: `ZADD zset:N 0 member:0 ... 9 member:9` (10 members).
//!
//! Each kind is loaded into a fresh server process of each kind (redlab runs in a child copy
//! of this binary, so the figures are its own and not the loader's), with pipelined writes.
//! Reported per key: the growth of the process's resident size (VmRSS from /proc) from the
//! empty server to the loaded one, and the growth of INFO used_memory over the same load.
//! The ratio is redlab's figure over Redis's: at most 1.0 means redlab needs no more memory
//! per key than Redis does.
//!
//! `MEMORY_KEYS=100000` loads fewer keys (default 1,000,000); `MEMORY_KINDS=strings,sets`
//! runs only some kinds; `REDLAB_SERVER_BIN=path/to/redlab-server` measures that binary
//! instead of this build (an older build, for a before/after table).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redlab::client::RealRedis;

/// Set in the child copy of this binary that serves redlab on the given port.
const CHILD_ENV: &str = "REDLAB_MEMORY_PER_KEY_PORT";

const KINDS: [&str; 4] = ["strings", "hashes", "sets", "zsets"];

/// Commands per pipelined batch.
const BATCH: usize = 1000;

fn main() {
    if let Ok(port) = std::env::var(CHILD_ENV) {
        serve_redlab(port.parse().expect("port"));
    }
    if std::env::args().any(|a| a == "--list") {
        println!("memory_per_key: bench");
        return;
    }
    let keys: usize = std::env::var("MEMORY_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let kinds: Vec<String> = std::env::var("MEMORY_KINDS")
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_else(|_| KINDS.iter().map(|k| k.to_string()).collect());
    println!("memory per key, {keys} keys of each kind (bytes per key; ratio = redlab / redis)");
    println!(
        "{:<8} {:>12} {:>12} {:>7}   {:>15} {:>15} {:>7}",
        "kind", "rss redlab", "rss redis", "ratio", "used_mem redlab", "used_mem redis", "ratio"
    );
    for kind in &kinds {
        let lab = {
            let child = RedlabChild::start();
            measure(child.port, kind, keys)
        };
        let red = {
            let r = RealRedis::start().expect("redis-server 7.0.15 on PATH");
            measure(r.port(), kind, keys)
        };
        println!(
            "{:<8} {:>12.1} {:>12.1} {:>7.2}   {:>15.1} {:>15.1} {:>7.2}",
            kind,
            lab.rss,
            red.rss,
            lab.rss / red.rss,
            lab.used,
            red.used,
            lab.used / red.used
        );
    }
}

/// The child: a redlab server on `port`, until the parent kills it.
fn serve_redlab(port: u16) -> ! {
    let _server = redlab::Server::builder().port(port).start();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

struct RedlabChild {
    child: Child,
    port: u16,
}

impl RedlabChild {
    fn start() -> RedlabChild {
        let port = free_port();
        let mut cmd = match std::env::var_os("REDLAB_SERVER_BIN") {
            Some(bin) => {
                let mut cmd = Command::new(bin);
                cmd.args(["--port", &port.to_string()]);
                cmd
            }
            None => {
                let mut cmd = Command::new(std::env::current_exe().expect("own path"));
                cmd.env(CHILD_ENV, port.to_string());
                cmd
            }
        };
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the redlab child");
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "redlab child did not listen"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        RedlabChild { child, port }
    }
}

impl Drop for RedlabChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port below the ephemeral range, free now.
fn free_port() -> u16 {
    let start = 20_000 + (std::process::id() % 12_000) as u16;
    (0..12_000u16)
        .map(|i| 20_000 + (start - 20_000 + i) % 12_000)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port")
}

struct PerKey {
    rss: f64,
    used: f64,
}

/// Loads `keys` keys of `kind` into the server on `port`; returns the growth per key.
fn measure(port: u16, kind: &str, keys: usize) -> PerKey {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).ok();
    let mut w = stream.try_clone().expect("clone");
    let mut r = BufReader::new(stream);
    let pid: u32 = info_field(&mut w, &mut r, "server", "process_id")
        .parse()
        .expect("process_id");
    settle();
    let rss0 = rss_of(pid);
    let used0: f64 = info_field(&mut w, &mut r, "memory", "used_memory")
        .parse()
        .expect("used_memory");
    let mut buf = Vec::new();
    let mut line = String::new();
    let mut n = 0;
    while n < keys {
        buf.clear();
        let end = (n + BATCH).min(keys);
        for i in n..end {
            write_command(&mut buf, kind, i);
        }
        w.write_all(&buf).expect("write");
        for _ in n..end {
            line.clear();
            r.read_line(&mut line).expect("read");
            assert!(
                line.starts_with('+') || line.starts_with(':'),
                "unexpected reply {line:?}"
            );
        }
        n = end;
    }
    settle();
    let rss1 = rss_of(pid);
    let used1: f64 = info_field(&mut w, &mut r, "memory", "used_memory")
        .parse()
        .expect("used_memory");
    PerKey {
        rss: (rss1 - rss0) / keys as f64,
        used: (used1 - used0) / keys as f64,
    }
}

/// One command of `kind` for key number `i`, in RESP.
fn write_command(buf: &mut Vec<u8>, kind: &str, i: usize) {
    let mut args: Vec<String> = Vec::with_capacity(22);
    match kind {
        "strings" => {
            args.extend(["SET".into(), format!("key:{i}"), format!("value:{i}")]);
        }
        "hashes" => {
            args.extend(["HSET".into(), format!("hash:{i}")]);
            for f in 0..10 {
                args.extend([format!("field:{f}"), format!("value:{f}")]);
            }
        }
        "sets" => {
            args.extend(["SADD".into(), format!("set:{i}")]);
            args.extend((0..10).map(|m| format!("member:{m}")));
        }
        "zsets" => {
            args.extend(["ZADD".into(), format!("zset:{i}")]);
            for m in 0..10 {
                args.extend([m.to_string(), format!("member:{m}")]);
            }
        }
        other => panic!("unknown kind {other:?} (one of {KINDS:?})"),
    }
    write!(buf, "*{}\r\n", args.len()).unwrap();
    for a in &args {
        write!(buf, "${}\r\n{}\r\n", a.len(), a).unwrap();
    }
}

/// Lets the server finish what it was doing (and Redis refresh its figures).
fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

/// A field of `INFO section`.
fn info_field(
    w: &mut TcpStream,
    r: &mut BufReader<TcpStream>,
    section: &str,
    name: &str,
) -> String {
    write!(
        w,
        "*2\r\n$4\r\nINFO\r\n${}\r\n{}\r\n",
        section.len(),
        section
    )
    .expect("write");
    let mut line = String::new();
    r.read_line(&mut line).expect("read");
    let len: usize = line
        .trim_end()
        .strip_prefix('$')
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("INFO answered {line:?}"));
    let mut body = vec![0u8; len + 2];
    std::io::Read::read_exact(r, &mut body).expect("read");
    let text = String::from_utf8_lossy(&body);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .trim()
        .to_owned()
}

/// The resident size of process `pid`, in bytes.
fn rss_of(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024.0
}
