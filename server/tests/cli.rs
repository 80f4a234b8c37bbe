//! The `redlab-server` binary as a test setup runs it: redis-server's command line, RESP on
//! its port, SHUTDOWN NOSAVE to stop it.

mod support;

use support::call;

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlab-server");

fn free_port() -> u16 {
    support::free_port()
}

fn connect(port: u16) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => {
                s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                return s;
            }
            Err(e) if Instant::now() > deadline => panic!("server did not start: {}", e),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn version_output_is_redis_servers() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let re_ok = text.starts_with("Redis server v=7.0.15 sha=00000000:0 malloc=libc bits=64 build=")
        && text
            .trim_end()
            .rsplit('=')
            .next()
            .is_some_and(|b| b.len() == 16 && b.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(re_ok, "{text}");
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn unknown_option_is_a_fatal_config_error() {
    let out = Command::new(BIN)
        .args(["--port", "0", "--no-such-option", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***"),
        "{err}"
    );
    assert!(
        err.contains(">>> 'no-such-option \"1\"'\nBad directive or wrong number of arguments"),
        "{err}"
    );
}

#[test]
fn serves_resp_with_the_given_options_and_stops_on_shutdown() {
    let port = free_port();
    // Killed on drop: an assertion failing below does not leave the server running.
    let mut child = support::Killed(
        support::spawn_tied(
            // Spelt out as redlab-client's RealRedis starts redis-server, on purpose: the
            // binary must take the options a Redis command line passes.
            Command::new(BIN)
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ])
                .args([
                    "--maxmemory",
                    "100mb",
                    "--daemonize",
                    "no",
                    "--databases",
                    "4",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )
        .unwrap(),
    );
    let mut r = BufReader::new(connect(port));
    assert_eq!(call(&mut r, &["PING"]), "+PONG");
    assert_eq!(
        call(&mut r, &["CONFIG", "GET", "maxmemory"]),
        "maxmemory 104857600"
    );
    assert_eq!(
        call(&mut r, &["CONFIG", "GET", "port"]),
        format!("port {port}")
    );
    assert_eq!(call(&mut r, &["SELECT", "3"]), "+OK");
    assert_eq!(
        call(&mut r, &["SELECT", "4"]),
        "-ERR DB index is out of range"
    );
    assert_eq!(call(&mut r, &["SET", "k", "v"]), "+OK");
    assert_eq!(call(&mut r, &["DBSIZE"]), ":1");
    // SHUTDOWN NOSAVE closes the connection without a reply and ends the process.
    r.get_mut()
        .write_all(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n")
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            panic!("server did not stop after SHUTDOWN NOSAVE");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    let mut log = String::new();
    child
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    // redis-server's line format: `pid:M dd Mon yyyy hh:mm:ss.mmm * message`.
    let ready = log
        .lines()
        .find(|l| l.ends_with(" * Ready to accept connections"))
        .unwrap_or_else(|| panic!("{log}"));
    let (pid, rest) = ready.split_once(":M ").unwrap();
    assert_eq!(pid.parse::<u32>().unwrap(), child.0.id());
    assert_eq!(
        rest.len(),
        "01 Dec 2026 22:04:29.278 * Ready to accept connections".len()
    );
    assert!(log.contains("option 'appendonly' has no effect"), "{log}");
}

#[test]
fn shutdown_stops_an_embedded_server() {
    let server = redlab_server::Server::start();
    let mut r = BufReader::new(connect(server.port()));
    assert_eq!(
        call(&mut r, &["SHUTDOWN", "ABORT"]),
        "-ERR No shutdown in progress."
    );
    r.get_mut().write_all(b"*1\r\n$8\r\nSHUTDOWN\r\n").unwrap();
    let mut rest = Vec::new();
    // The connection is closed with no reply.
    assert_eq!(r.read_to_end(&mut rest).unwrap_or(0), 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.is_running() {
        assert!(
            Instant::now() < deadline,
            "server still running after SHUTDOWN"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `redlab-server -` reads its configuration from standard input, as redis-server does; the
/// binary starts with redis-server's save points; `rename-command` renames.
#[test]
fn config_from_stdin_with_rename_command() {
    let port = free_port();
    let mut child = support::Killed(
        support::spawn_tied(
            Command::new(BIN)
                .args(["-", "--bind", "127.0.0.1"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
        .unwrap(),
    );
    let mut stdin = child.0.stdin.take().unwrap();
    write!(stdin, "port {port}\nrename-command flushdb badger\n").unwrap();
    drop(stdin);
    let mut r = BufReader::new(connect(port));
    assert_eq!(
        call(&mut r, &["CONFIG", "GET", "save"]),
        "save 3600 1 300 100 60 10000"
    );
    assert_eq!(call(&mut r, &["SET", "k", "v"]), "+OK");
    assert_eq!(
        call(&mut r, &["FLUSHDB"]),
        "-ERR unknown command 'FLUSHDB', with args beginning with:"
    );
    assert_eq!(call(&mut r, &["BADGER"]), "+OK");
    assert_eq!(call(&mut r, &["DBSIZE"]), ":0");
}
