//! Starting the built `redlab-server` binary for the standalone tests.
//!
//! A started binary must never outlive its test, whatever the outcome: `Standalone` and
//! `Killed` kill it on drop (pass, fail or panic), and on Linux the child also gets the
//! parent-death signal, so it dies even when the test process is killed.
#![allow(dead_code)]

pub mod cluster;
pub mod tools;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A child process killed (and reaped) on drop.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `redlab-server` process on a free port, killed on drop.
pub struct Standalone {
    child: Killed,
    pub port: u16,
    /// Where the process's stdout and stderr go: printed when the test fails, so a crash or
    /// a refusal to start says why, then removed.
    output: std::path::PathBuf,
}

impl Drop for Standalone {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.kill();
            let text = std::fs::read_to_string(&self.output).unwrap_or_default();
            eprintln!(
                "---- redlab-server on port {}, its output ----\n{text}",
                self.port
            );
        }
        let _ = std::fs::remove_file(&self.output);
    }
}

impl Standalone {
    /// Kills the process now (a node that dies, for the others to notice).
    pub fn kill(&mut self) {
        let _ = self.child.0.kill();
        let _ = self.child.0.wait();
    }
}

/// Spawns `cmd`; on Linux the child is killed when the thread that spawned it ends (the
/// parent-death signal follows the spawning thread). Tests spawn and drop on their own
/// thread, so that is when the test ends at the latest.
pub fn spawn_tied(cmd: &mut Command) -> std::io::Result<Child> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        extern "C" {
            fn prctl(
                option: std::os::raw::c_int,
                arg2: std::os::raw::c_ulong,
                ...
            ) -> std::os::raw::c_int;
            fn getppid() -> std::os::raw::c_int;
        }
        const PR_SET_PDEATHSIG: std::os::raw::c_int = 1;
        const SIGKILL: std::os::raw::c_ulong = 9;
        let parent = std::process::id() as std::os::raw::c_int;
        // SAFETY: the closure runs in the forked child before exec and calls only prctl and
        // getppid, which are async-signal-safe; it allocates nothing and takes no lock.
        unsafe {
            cmd.pre_exec(move || {
                if prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl: then nobody would signal.
                if getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(3)); // ESRCH
                }
                Ok(())
            })
        };
    }
    cmd.spawn()
}

/// A port to hand to a child process, below Linux's ephemeral range (32768-60999). A port
/// the kernel picked for `bind(:0)` and that was released again can be picked again for the
/// next `bind(:0)` of an embedded server in a parallel test before the child binds it; the
/// child then fails to listen and the test waits in vain. Ports here are never picked that way.
/// The port 10000 above it, where a cluster node without `--cluster-port` puts its bus, is
/// below that range too and free when the port is handed out.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    const LOW: u16 = 20_000;
    const SPAN: u16 = 32_768 - 10_000 - LOW;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = std::process::id() % 600 * 20;
    let bindable = |port: u16| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
    loop {
        let step = u32::from(NEXT.fetch_add(1, Ordering::Relaxed));
        let port = LOW + ((base + step) % u32::from(SPAN)) as u16;
        if bindable(port) && bindable(port + 10_000) {
            return port;
        }
    }
}

/// Starts the binary with `--port <free port>` and `extra` options; returns once it accepts
/// connections.
pub fn start(extra: &[&str]) -> Standalone {
    let port = free_port();
    let output =
        std::env::temp_dir().join(format!("redlab-test-{}-{port}.log", std::process::id()));
    let log = std::fs::File::create(&output).expect("create the server's output file");
    let child = spawn_tied(
        Command::new(env!("CARGO_BIN_EXE_redlab-server"))
            .args(["--port", &port.to_string()])
            .args(extra)
            .stdout(log.try_clone().expect("clone the output file"))
            .stderr(log),
    )
    .expect("spawn redlab-server");
    // Owned before the wait: a start that times out still kills it.
    let server = Standalone {
        child: Killed(child),
        port,
        output,
    };
    let t = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "redlab-server did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    server
}

/// Sends one command; the reply as text (bulk strings as their content, arrays joined).
pub fn call(r: &mut BufReader<TcpStream>, args: &[&str]) -> String {
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{}\r\n", a.len(), a));
    }
    r.get_mut().write_all(req.as_bytes()).unwrap();
    read_reply(r)
}

/// One reply frame as text (see `call`).
pub fn read_reply(r: &mut BufReader<TcpStream>) -> String {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let line = line.trim_end().to_string();
    let n = line
        .get(1..)
        .and_then(|n| n.parse::<i64>().ok())
        .unwrap_or(-1);
    match line.as_bytes().first() {
        Some(b'$' | b'=') if n >= 0 => {
            let mut body = vec![0; n as usize + 2];
            r.read_exact(&mut body).unwrap();
            String::from_utf8_lossy(&body[..n as usize]).into_owned()
        }
        Some(b'*') if n >= 0 => (0..n).map(|_| read_reply(r)).collect::<Vec<_>>().join(" "),
        _ => line,
    }
}
