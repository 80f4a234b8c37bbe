//! Starting the built `redlab-server` binary for the standalone tests.
#![allow(dead_code)]

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redlab-server` process on a free port, killed on drop.
pub struct Standalone {
    child: Child,
    pub port: u16,
}

impl Drop for Standalone {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the binary with `--port <free port>` and `extra` options; returns once it accepts
/// connections.
pub fn start(extra: &[&str]) -> Standalone {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(env!("CARGO_BIN_EXE_redlab-server"))
        .args(["--port", &port.to_string()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redlab-server");
    let t = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t.elapsed() < Duration::from_secs(10), "redlab-server did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    Standalone { child, port }
}
