//! Time from "start a server" to its first PONG: redlab in-process against spawning a real
//! redis-server, in the same run. `cargo bench --bench startup`.
//!
//! This is what every test that wants a fresh server pays, so it decides whether "a server
//! per test" is affordable.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ping(addr: std::net::SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_nodelay(true);
    if s.write_all(b"*1\r\n$4\r\nPING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn redlab_once() -> Duration {
    let t = Instant::now();
    let server = redlab::Server::start();
    assert!(ping(server.addr()));
    let d = t.elapsed();
    drop(server);
    d
}

fn redis_once(bin: &std::path::Path) -> Duration {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args([
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
            "--bind",
            "127.0.0.1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server");
    while !ping(addr) {
        std::thread::sleep(Duration::from_micros(50));
    }
    let d = t.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    d
}

fn main() {
    for _ in 0..20 {
        redlab_once();
    }
    let redlab = median((0..500).map(|_| redlab_once()).collect());
    println!(
        "redlab  Server::start() -> first PONG: median {:>9.1} us (500 runs)",
        redlab.as_secs_f64() * 1e6
    );
    match redlab_client::real_redis::redis_server_bin() {
        Some(bin) => {
            let redis = median((0..30).map(|_| redis_once(&bin)).collect());
            println!(
                "redis-server spawn  -> first PONG: median {:>9.1} us (30 runs)",
                redis.as_secs_f64() * 1e6
            );
            println!(
                "ratio: redlab starts {:.0}x faster",
                redis.as_secs_f64() / redlab.as_secs_f64()
            );
        }
        None => println!("redis-server not found: no comparison"),
    }
}
