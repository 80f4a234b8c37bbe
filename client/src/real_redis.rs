//! Starting a real `redis-server` for comparison and replay.
//!
//! redlab's behaviour is checked against real Redis; its tests (and users replaying a
//! schedule) start their own redis-server on a free port with persistence off. The binary
//! is found through `REDIS_SERVER_BIN` or on PATH.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server child process, killed on drop.
pub struct RealRedis {
    child: Child,
    port: u16,
    dir: PathBuf,
}

/// Why a real Redis is not available.
#[derive(Debug)]
pub enum RealRedisError {
    /// No redis-server binary on PATH or in REDIS_SERVER_BIN.
    NotInstalled,
    /// It was found but did not start or answer.
    Failed(String),
}

impl std::fmt::Display for RealRedisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RealRedisError::NotInstalled => write!(f, "redis-server not found on PATH (set REDIS_SERVER_BIN)"),
            RealRedisError::Failed(why) => write!(f, "redis-server did not start: {}", why),
        }
    }
}

/// The redis-server binary: `REDIS_SERVER_BIN`, else the first `redis-server` on PATH.
pub fn redis_server_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("REDIS_SERVER_BIN") {
        let p = PathBuf::from(p);
        return p.exists().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("redis-server")).find(|p| p.is_file())
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl RealRedis {
    /// Starts redis-server on a free loopback port with persistence off, extra
    /// `--name value` arguments appended. Returns once it answers PING.
    pub fn start_with(extra: &[&str]) -> Result<RealRedis, RealRedisError> {
        let bin = redis_server_bin().ok_or(RealRedisError::NotInstalled)?;
        let mut last_err = String::new();
        // A free port can be taken between the probe and the bind; try a few.
        for _ in 0..5 {
            let port = free_port().map_err(|e| RealRedisError::Failed(e.to_string()))?;
            let dir = std::env::temp_dir().join(format!("redlab-real-redis-{}-{}", std::process::id(), port));
            std::fs::create_dir_all(&dir).map_err(|e| RealRedisError::Failed(e.to_string()))?;
            let mut cmd = Command::new(&bin);
            cmd.arg("--port")
                .arg(port.to_string())
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"])
                .args(["--protected-mode", "no", "--enable-debug-command", "yes", "--dir"])
                .arg(&dir)
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let child = cmd.spawn().map_err(|e| RealRedisError::Failed(e.to_string()))?;
            let mut server = RealRedis { child, port, dir };
            match server.wait_ready(Duration::from_secs(10)) {
                Ok(()) => return Ok(server),
                Err(e) => last_err = e,
            }
        }
        Err(RealRedisError::Failed(last_err))
    }

    /// Starts redis-server with default options.
    pub fn start() -> Result<RealRedis, RealRedisError> {
        RealRedis::start_with(&[])
    }

    /// Starts redis-server, or explains loudly why not. Under CI (`CI=true`) a missing
    /// redis-server is a failure, not a skip, so a comparison can never pass by not running.
    pub fn start_or_skip(test: &str) -> Option<RealRedis> {
        match RealRedis::start() {
            Ok(r) => Some(r),
            Err(e) => {
                if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                    panic!("{}: {} and CI=true: a comparison with real Redis cannot be skipped", test, e);
                }
                eprintln!("\n!!!! {}: SKIPPED, {} !!!!\n", test, e);
                None
            }
        }
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited with {}", status));
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                if s.write_all(b"PING\r\n").is_ok() {
                    let mut buf = [0u8; 64];
                    if let Ok(n) = s.read(&mut buf) {
                        if buf[..n].starts_with(b"+PONG") {
                            return Ok(());
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        Err("did not answer PING".into())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RealRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
