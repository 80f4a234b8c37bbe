//! The binary started the way tools start redis-server: the log lines they wait for, the
//! Unix socket beside TCP, the pid file, SIGTERM as a clean shutdown, `daemonize yes`.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlab-server");

fn free_port() -> u16 {
    support::free_port()
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redlab-process-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One command over a stream; the first line of the reply.
fn ask<S: Read + Write>(s: &mut BufReader<S>, cmd: &str) -> String {
    s.get_mut().write_all(cmd.as_bytes()).unwrap();
    let mut line = String::new();
    s.read_line(&mut line).unwrap();
    line.trim_end().to_string()
}

fn unix_client(path: &Path) -> BufReader<UnixStream> {
    let s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    BufReader::new(s)
}

fn tcp_client(port: u16) -> BufReader<std::net::TcpStream> {
    let s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    BufReader::new(s)
}

#[test]
fn unix_socket_pidfile_log_and_sigterm() {
    let dir = scratch("sigterm");
    let sock = dir.join("redis.sock");
    let pidfile = dir.join("redis.pid");
    let logfile = dir.join("stdout");
    let port = free_port();
    let log = std::fs::File::create(&logfile).unwrap();
    let mut child = support::Killed(
        support::spawn_tied(
            Command::new(BIN)
                .args(["--port", &port.to_string(), "--save", ""])
                .args(["--unixsocket", sock.to_str().unwrap()])
                .args(["--unixsocketperm", "700"])
                .args(["--pidfile", pidfile.to_str().unwrap()])
                .args(["--always-show-logo", "yes"])
                .stdout(log)
                .stderr(Stdio::null()),
        )
        .unwrap(),
    );
    let pid = child.0.id();
    let read_log = || std::fs::read_to_string(&logfile).unwrap();
    // What Redis's harness waits for: its pid after " PID: ", then the ready line.
    wait_for("the ready line", || {
        read_log().contains("Ready to accept connections")
    });
    let text = read_log();
    assert!(text.contains(&format!(" PID: {pid}")), "{text}");
    assert!(
        text.contains(&format!(
            "The server is now ready to accept connections at {}",
            sock.display()
        )),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&pidfile).unwrap(),
        format!("{pid}\n")
    );
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);

    // Both listeners serve the same keyspace.
    let mut u = unix_client(&sock);
    let mut t = tcp_client(port);
    assert_eq!(ask(&mut u, "SET k from-unix\r\n"), "+OK");
    assert_eq!(ask(&mut t, "GET k\r\n"), "$9");
    // The binary runs on mimalloc, and INFO names it (where Redis names its jemalloc).
    let mut value = String::new();
    t.read_line(&mut value).unwrap();
    assert_eq!(value, "from-unix\r\n");
    let head = ask(&mut t, "INFO memory\r\n");
    let len: usize = head[1..].parse().unwrap();
    let mut body = vec![0; len + 2];
    t.read_exact(&mut body).unwrap();
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains("\r\nmem_allocator:mimalloc-"), "{body}");
    // A Unix client's address is the socket's path, port 0.
    let mut u2 = unix_client(&sock);
    let line = ask(&mut u2, "CLIENT INFO\r\n");
    assert!(line.starts_with('$'), "{line}");
    let mut info = String::new();
    u2.read_line(&mut info).unwrap();
    assert!(
        info.contains(&format!("addr={}:0 ", sock.display())),
        "{info}"
    );

    // SIGTERM: a clean exit, files removed, the goodbye logged.
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    let rc = unsafe { libc_kill(pid as i32, 15) };
    assert_eq!(rc, 0);
    let mut status = None;
    wait_for("the exit", || {
        status = child.0.try_wait().unwrap();
        status.is_some()
    });
    assert!(status.unwrap().success());
    let text = read_log();
    assert!(
        text.contains("# Received SIGTERM scheduling shutdown..."),
        "{text}"
    );
    assert!(
        text.contains("# Redis is now ready to exit, bye bye..."),
        "{text}"
    );
    assert!(!pidfile.exists());
    assert!(!sock.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn daemonize_detaches_and_writes_the_pidfile() {
    let dir = scratch("daemon");
    let pidfile = dir.join("redis.pid");
    let logfile = dir.join("redis.log");
    let port = free_port();
    // The parent returns at once; the daemon keeps serving.
    let status = Command::new(BIN)
        .args(["--port", &port.to_string(), "--save", ""])
        .args(["--daemonize", "yes"])
        .args(["--pidfile", pidfile.to_str().unwrap()])
        .args(["--logfile", logfile.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    wait_for("the pid file", || {
        std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'))
    });
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Whatever happens below, the daemon does not outlive the test.
    struct KillOnDrop(i32);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            // SAFETY: kill(2) takes plain integers and touches no memory of ours.
            unsafe { libc_kill(self.0, 9) };
        }
    }
    let _guard = KillOnDrop(pid);
    wait_for("the ready line", || {
        std::fs::read_to_string(&logfile).is_ok_and(|t| t.contains("Ready to accept connections"))
    });
    let mut t = tcp_client(port);
    assert_eq!(ask(&mut t, "PING\r\n"), "+PONG");
    // SHUTDOWN ends the daemon, which removes its pid file.
    t.get_mut().write_all(b"SHUTDOWN NOSAVE\r\n").unwrap();
    wait_for("the pid file's removal", || !pidfile.exists());
    let text = std::fs::read_to_string(&logfile).unwrap();
    assert!(text.contains(&format!("{pid}:M ")), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
