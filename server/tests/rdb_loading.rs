//! The binary's RDB file on disk, as redis-server's: saved on SIGTERM when save points are
//! set, loaded at the next start while clients are already served (-LOADING for most
//! commands, CONFIG SET of `dir` refused, `loglevel` allowed), then serving the data.
//! Nothing waits on time: every wait is on a condition (INFO loading, the log, the exit).

mod support;

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{call, Killed};

const BIN: &str = env!("CARGO_BIN_EXE_redlab-server");

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redlab-rdb-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The binary on `port` with its files in `dir`, its log appended to `dir/log`.
fn spawn(dir: &Path, port: u16, extra: &[&str]) -> Killed {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("log"))
        .unwrap();
    let child = support::spawn_tied(
        Command::new(BIN)
            .args(["--port", &port.to_string(), "--dir", dir.to_str().unwrap()])
            .args(["--enable-debug-command", "yes"])
            .args(["--enable-protected-configs", "yes"])
            .args(extra)
            .stdout(log)
            .stderr(Stdio::null()),
    )
    .unwrap();
    Killed(child)
}

fn connect(port: u16) -> BufReader<TcpStream> {
    let mut stream = None;
    wait_for("the port", || {
        stream = TcpStream::connect(("127.0.0.1", port)).ok();
        stream.is_some()
    });
    let s = stream.unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    BufReader::new(s)
}

fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("log")).unwrap_or_default()
}

fn info_field(c: &mut BufReader<TcpStream>, field: &str) -> Option<String> {
    let text = call(c, &["INFO", "persistence"]);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
}

fn signal(child: &Child, sig: i32) {
    extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    assert_eq!(unsafe { kill(child.id() as i32, sig) }, 0);
}

fn wait_exit(child: &mut Killed) -> std::process::ExitStatus {
    let mut status = None;
    wait_for("the exit", || {
        status = child.0.try_wait().unwrap();
        status.is_some()
    });
    status.unwrap()
}

/// A server with 2000 keys of 1000 bytes, stopped with SIGTERM: its dump.rdb.
fn saved_dataset(dir: &Path, port: u16) -> Vec<u8> {
    let mut server = spawn(dir, port, &["--save", "900 1"]);
    let mut c = connect(port);
    assert_eq!(
        call(&mut c, &["DEBUG", "POPULATE", "2000", "key", "1000"]),
        "+OK"
    );
    signal(&server.0, 15);
    assert!(wait_exit(&mut server).success());
    let text = log(dir);
    assert!(
        text.contains("# Received SIGTERM scheduling shutdown..."),
        "{text}"
    );
    assert!(
        text.contains("* Saving the final RDB snapshot before exiting."),
        "{text}"
    );
    assert!(text.contains("* DB saved on disk"), "{text}");
    std::fs::read(dir.join("dump.rdb")).expect("SIGTERM saved dump.rdb")
}

/// Starts the binary on the saved file, slowed down so it is still loading while it is
/// asked; returns it with a client once INFO says loading:1.
fn loading_server(dir: &Path, port: u16) -> (Killed, BufReader<TcpStream>) {
    // 20 ms per key and events after each kilobyte: the load takes 40 s unless sped up.
    let server = spawn(
        dir,
        port,
        &[
            "--save",
            "900 1",
            "--key-load-delay",
            "20000",
            "--loading-process-events-interval-bytes",
            "1024",
        ],
    );
    let mut c = connect(port);
    assert_eq!(info_field(&mut c, "loading").as_deref(), Some("1"));
    (server, c)
}

#[test]
fn sigterm_saves_and_the_next_start_loads_while_answering_loading() {
    let dir = scratch("load");
    let port = support::free_port();
    let file = saved_dataset(&dir, port);
    let (mut server, mut c) = loading_server(&dir, port);
    let loading = "-LOADING Redis is loading the dataset in memory";
    assert_eq!(call(&mut c, &["PING"]), loading);
    assert_eq!(call(&mut c, &["GET", "key:1"]), loading);
    assert_eq!(call(&mut c, &["CONFIG", "SET", "dir", "asdf"]), loading);
    assert_eq!(call(&mut c, &["CONFIG", "SET", "loglevel", "debug"]), "+OK");
    assert_eq!(
        call(&mut c, &["CONFIG", "GET", "loglevel"]),
        "loglevel debug"
    );
    assert_eq!(call(&mut c, &["SELECT", "9"]), "+OK");
    assert_eq!(
        info_field(&mut c, "loading_total_bytes"),
        Some(file.len().to_string())
    );
    assert_eq!(info_field(&mut c, "loading").as_deref(), Some("1"));
    assert!(!log(&dir).contains("Done loading RDB"));
    // CONFIG SET works while loading: the rest of the file goes at full speed.
    assert_eq!(
        call(&mut c, &["CONFIG", "SET", "key-load-delay", "0"]),
        "+OK"
    );
    wait_for("the end of the load", || {
        info_field(&mut c, "loading").as_deref() == Some("0")
    });
    assert_eq!(call(&mut c, &["SELECT", "0"]), "+OK");
    assert_eq!(call(&mut c, &["DBSIZE"]), ":2000");
    assert_eq!(
        call(&mut c, &["GETRANGE", "key:1999", "0", "9"]),
        "value:1999"
    );
    assert_eq!(call(&mut c, &["STRLEN", "key:7"]), ":1000");
    assert_eq!(call(&mut c, &["PING"]), "+PONG");
    assert_eq!(
        info_field(&mut c, "rdb_last_load_keys_loaded").as_deref(),
        Some("2000")
    );
    // Ready once loaded, as redis-server says it (the main thread logs it soon after).
    let loaded_then_ready = || {
        let text = log(&dir);
        let done = text.find("Done loading RDB, keys loaded: 2000, keys expired: 0.");
        done.is_some_and(|at| text[at..].contains("Ready to accept connections"))
    };
    wait_for("the ready line after the load", loaded_then_ready);
    let text = log(&dir);
    assert!(
        text.contains("Loading RDB produced by version 7.0.15"),
        "{text}"
    );
    signal(&server.0, 15);
    assert!(wait_exit(&mut server).success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_while_loading_exits_without_saving() {
    let dir = scratch("abort");
    let port = support::free_port();
    let file = saved_dataset(&dir, port);
    let (mut server, _c) = loading_server(&dir, port);
    signal(&server.0, 15);
    assert!(wait_exit(&mut server).success());
    let text = log(&dir);
    assert!(
        text.contains("# Received shutdown signal during loading, scheduling shutdown."),
        "{text}"
    );
    // The half-loaded dataset did not replace the file.
    assert_eq!(std::fs::read(dir.join("dump.rdb")).unwrap(), file);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_save_points_no_file() {
    let dir = scratch("nosave");
    let port = support::free_port();
    let mut server = spawn(&dir, port, &["--save", ""]);
    let mut c = connect(port);
    assert_eq!(call(&mut c, &["SET", "k", "v"]), "+OK");
    signal(&server.0, 15);
    assert!(wait_exit(&mut server).success());
    assert!(!dir.join("dump.rdb").exists());
    // SHUTDOWN SAVE saves all the same, as in Redis.
    let mut server = spawn(&dir, port, &["--save", ""]);
    let mut c = connect(port);
    assert_eq!(call(&mut c, &["SET", "k", "v"]), "+OK");
    // No reply: the server closes the connection (read nothing, it may be reset).
    c.get_mut().write_all(b"SHUTDOWN SAVE\r\n").unwrap();
    assert!(wait_exit(&mut server).success());
    assert!(dir.join("dump.rdb").exists());
    // ... and the next start has the key.
    let mut server = spawn(&dir, port, &["--save", ""]);
    let mut c = connect(port);
    wait_for("the end of the load", || {
        info_field(&mut c, "loading").as_deref() == Some("0")
    });
    assert_eq!(call(&mut c, &["GET", "k"]), "v");
    signal(&server.0, 15);
    assert!(wait_exit(&mut server).success());
    let _ = std::fs::remove_dir_all(&dir);
}
