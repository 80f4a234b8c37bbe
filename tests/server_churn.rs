//! A server per test, thousands of times: starting and dropping servers leaks neither threads
//! nor file descriptors, and a dropped server's port is free at once.
//!
//! Thread and descriptor counts are whole-process figures, so these checks run in their own
//! test binary with `harness = false` (see the root Cargo.toml): nothing else in the process
//! starts threads or opens files meanwhile. Dropping a server does not wait for its thread,
//! and a server thread waits a while for the next server before it exits, so the counts are
//! polled until they come back, never timed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use redlab::Server;

/// Threads of this process.
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .expect("/proc/self/status has Threads")
}

/// Open file descriptors of this process.
fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count()
}

/// What the open descriptors are, for a failure message.
fn fd_list() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| {
                    let target = std::fs::read_link(e.path()).unwrap_or_default();
                    format!("{}->{}", e.file_name().to_string_lossy(), target.display())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Polls until both counts are back to `(threads, fds)`; panics with the counts if they are
/// not after a long while (a leak, not a slow machine: a parked server thread exits after a
/// second).
fn settles_to(what: &str, base: (usize, usize)) {
    let give_up = Instant::now() + Duration::from_secs(120);
    loop {
        let now = (threads(), fds());
        if now == base {
            println!("{what}: back to {} threads, {} fds", base.0, base.1);
            return;
        }
        assert!(
            Instant::now() < give_up,
            "{what}: threads/fds stay at {now:?}, began at {base:?}; open: {:?}",
            fd_list()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn send(s: &mut TcpStream, args: &[&str]) -> String {
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{}\r\n", a.len(), a));
    }
    s.write_all(req.as_bytes()).expect("send");
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(b"\r\n") {
        assert_eq!(s.read(&mut b).expect("reply"), 1, "closed after {out:?}");
        out.push(b[0]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// 10,000 servers started and dropped, each answering a PING on a connection still open when
/// it is dropped; every tenth runs a script too (a Lua state built and freed).
fn ten_thousand_servers_leave_no_thread_or_fd() {
    let base = (threads(), fds());
    for i in 0..10_000 {
        let server = Server::start();
        let mut c = connect(server.addr());
        assert_eq!(send(&mut c, &["PING"]), "+PONG\r\n");
        if i % 10 == 0 {
            assert_eq!(
                send(
                    &mut c,
                    &["EVAL", "return redis.call('INCR', KEYS[1])", "1", "n"]
                ),
                ":1\r\n"
            );
        }
        drop(server);
        // The connection outlives the server; the server closes its end.
        let mut b = [0u8; 1];
        assert_eq!(c.read(&mut b).unwrap_or(0), 0, "the dropped server closes");
    }
    settles_to("10,000 servers", base);
}

/// A server dropped while a script loops forever stops it (as SHUTDOWN NOSAVE would, once the
/// script passes busy-reply-threshold): its thread does not spin on after the test.
fn a_dropped_server_stops_a_runaway_script() {
    let base = (threads(), fds());
    let server = Server::builder()
        .busy_reply_threshold(Duration::from_millis(50))
        .start();
    let mut c = connect(server.addr());
    c.write_all(b"*3\r\n$4\r\nEVAL\r\n$17\r\nwhile true do end\r\n$1\r\n0\r\n")
        .unwrap();
    // The script is running once another client gets BUSY.
    let mut other = connect(server.addr());
    loop {
        if send(&mut other, &["PING"]).starts_with("-BUSY") {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(server);
    // Its connections are closed once the script stopped.
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    drop((c, other));
    settles_to("a runaway script's server", base);
}

/// A server started right after dropping one whose thread is still held by a script (it is
/// stopped only once the script passes busy-reply-threshold) is served by another thread, not
/// queued behind that script: its PONG comes while the script's connection is still open.
fn a_new_server_does_not_wait_for_a_thread_held_by_a_script() {
    let base = (threads(), fds());
    let held = Server::builder()
        .busy_reply_threshold(Duration::from_secs(5))
        .start();
    let mut c = connect(held.addr());
    c.write_all(b"*3\r\n$4\r\nEVAL\r\n$17\r\nwhile true do end\r\n$1\r\n0\r\n")
        .unwrap();
    // The script is running once the server no longer answers another client's PING
    // (below the threshold a busy server answers nothing).
    let mut probe = connect(held.addr());
    probe
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    loop {
        probe.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
        let mut b = [0u8; 7];
        if probe.read_exact(&mut b).is_err() {
            break;
        }
    }
    drop(held);
    // The next servers go to other threads than the held one.
    for _ in 0..3 {
        let next = Server::start();
        let mut n = connect(next.addr());
        assert_eq!(send(&mut n, &["PING"]), "+PONG\r\n");
    }
    c.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    assert!(
        matches!(c.read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the held server's script ended before the next servers answered"
    );
    // The held thread stops its script at the threshold, then everything is given back.
    c.set_nonblocking(false).unwrap();
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    drop((c, probe));
    settles_to("a server held by a script, and the next ones", base);
}

/// The port of a dropped server refuses connections and can be bound again at once.
fn a_dropped_servers_port_is_free_at_once() {
    let server = Server::start();
    let port = server.port();
    let mut c = connect(server.addr());
    assert_eq!(send(&mut c, &["SET", "k", "first"]), "+OK\r\n");
    drop(server);
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "a dropped server's port refuses connections"
    );
    let again = Server::builder().port(port).start();
    let mut c = connect(again.addr());
    assert_eq!(send(&mut c, &["EXISTS", "k"]), ":0\r\n", "a fresh server");
}

/// SHUTDOWN from a client stops the server: the port refuses connections then too, though
/// the `Server` value still exists.
fn shutdown_by_a_client_closes_the_port() {
    let server = Server::start();
    let mut c = connect(server.addr());
    c.write_all(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n")
        .unwrap();
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    while server.is_running() {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(TcpStream::connect(server.addr()).is_err());
}

/// The first server thread's runtime opens what tokio keeps for the whole process (the socket
/// pair of its signal handling) once; the counts are taken after that.
fn process_wide_state_opened_once() {
    let threads_before = threads();
    drop(Server::start());
    let give_up = Instant::now() + Duration::from_secs(120);
    while threads() != threads_before {
        assert!(Instant::now() < give_up, "the server thread never exits");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn main() {
    process_wide_state_opened_once();
    let checks: [(&str, fn()); 5] = [
        (
            "ten_thousand_servers_leave_no_thread_or_fd",
            ten_thousand_servers_leave_no_thread_or_fd,
        ),
        (
            "a_new_server_does_not_wait_for_a_thread_held_by_a_script",
            a_new_server_does_not_wait_for_a_thread_held_by_a_script,
        ),
        (
            "a_dropped_server_stops_a_runaway_script",
            a_dropped_server_stops_a_runaway_script,
        ),
        (
            "a_dropped_servers_port_is_free_at_once",
            a_dropped_servers_port_is_free_at_once,
        ),
        (
            "shutdown_by_a_client_closes_the_port",
            shutdown_by_a_client_closes_the_port,
        ),
    ];
    for (name, check) in checks {
        println!("test {name} ...");
        check();
        println!("ok");
    }
}
