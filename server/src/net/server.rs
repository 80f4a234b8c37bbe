//! `Server`: the engine on a background thread behind a real TCP port.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{oneshot, Notify};

use super::flush::Flusher;
use super::io::{ConnIo, Registry};
use super::stream::NetStream;

use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::faults::Faults;
use crate::reply::Reply;
use crate::session::ConnId;

/// State shared by the tasks of one server thread. Single-threaded: `RefCell`, never a lock.
pub(crate) struct Shared {
    pub(crate) engine: RefCell<Engine>,
    pub(crate) registry: Rc<Registry>,
    /// Engine connection id -> its I/O, to wake a connection that got output.
    attached: RefCell<HashMap<ConnId, Rc<ConnIo>>>,
    /// Signalled when a client runs SHUTDOWN.
    pub(crate) shutdown: Notify,
    /// Writes the replies of a turn of the event loop together.
    pub(crate) flusher: Rc<Flusher>,
}

impl Shared {
    pub(crate) fn attach(&self, conn: ConnId, io: Rc<ConnIo>) {
        self.attached.borrow_mut().insert(conn, io);
    }

    pub(crate) fn detach(&self, conn: ConnId) {
        self.attached.borrow_mut().remove(&conn);
    }

    pub(crate) fn wake(&self, conn: ConnId) {
        if let Some(io) = self.attached.borrow().get(&conn) {
            io.notify.notify_one();
        }
    }

    fn wake_all(&self, conns: Vec<ConnId>) {
        for c in conns {
            self.wake(c);
        }
    }
}

/// Options for a server; `Server::builder()` starts here.
#[derive(Clone, Debug, Default)]
pub struct ServerBuilder {
    config: Config,
    clock: Option<Clock>,
}

impl ServerBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the whole configuration.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    pub fn port(mut self, port: u16) -> Self {
        self.config.port = port;
        self
    }

    pub fn bind(mut self, addr: &str) -> Self {
        self.config.bind = addr.to_string();
        self
    }

    pub fn requirepass(mut self, password: &str) -> Self {
        self.config.requirepass = Some(password.to_string());
        self
    }

    pub fn databases(mut self, n: usize) -> Self {
        self.config.databases = n;
        self
    }

    pub fn maxmemory(mut self, bytes: u64) -> Self {
        self.config.maxmemory = bytes;
        self
    }

    /// busy-reply-threshold: how long a script runs before others get -BUSY.
    pub fn busy_reply_threshold(mut self, d: Duration) -> Self {
        self.config.busy_reply_threshold_ms = d.as_millis() as u64;
        self
    }

    /// Beyond Redis: fail scripts that touch undeclared keys or cross hash slots.
    pub fn strict_keys(mut self, on: bool) -> Self {
        self.config.strict_keys = on;
        self
    }

    /// Also listens on a Unix domain socket at `path` (`unixsocket`), alongside TCP. A file
    /// left at that path by an earlier server is replaced, as Redis does.
    pub fn unixsocket(mut self, path: &str) -> Self {
        self.config
            .extra
            .insert("unixsocket".into(), path.to_string());
        self
    }

    /// The Unix socket's permission bits (`unixsocketperm`, e.g. `0o700`); 0 leaves the
    /// umask's.
    pub fn unixsocketperm(mut self, mode: u32) -> Self {
        self.config
            .extra
            .insert("unixsocketperm".into(), format!("{:o}", mode & 0o7777));
        self
    }

    pub fn redis_version(mut self, v: &str) -> Self {
        self.config.redis_version = v.to_string();
        self
    }

    /// Seeds the engine's random generator (SPOP, RANDOMKEY, math.random...) so the same
    /// commands get the same replies on every run; without it each server gets a fresh seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = Some(seed);
        self
    }

    /// Uses this clock (keep a clone to control time).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Starts the server; panics if the address cannot be bound (see `try_start`).
    pub fn start(self) -> Server {
        self.try_start()
            .expect("redlab: could not start the server")
    }

    /// Binds, starts the server thread and returns once the port accepts connections.
    pub fn try_start(self) -> io::Result<Server> {
        let listener = std::net::TcpListener::bind((self.config.bind.as_str(), self.config.port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let unix = bind_unix(&self.config)?;
        let unix_path = unix.as_ref().map(|(_, p)| p.clone());
        let unix = unix.map(|(l, _)| l);
        let clock = self.clock.unwrap_or_default();
        let mut config = self.config;
        config.port = addr.port();
        let faults = Faults::default();
        let password = config.requirepass.clone();
        let (stop_tx, stop_rx) = oneshot::channel();
        let thread_clock = clock.clone();
        let thread_faults = faults.clone();
        let thread = std::thread::Builder::new()
            .name(format!("redlab-server:{}", addr.port()))
            .stack_size(8 << 20) // as large as redis-server's main thread: scripts run here
            .spawn(move || run(listener, unix, config, thread_clock, thread_faults, stop_rx))?;
        Ok(Server {
            addr,
            unix_path,
            clock,
            faults,
            password,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }
}

/// A request as a client sends it: an array of bulk strings.
fn request_bytes(args: &[&[u8]]) -> bytes::BytesMut {
    let mut out = bytes::BytesMut::new();
    let parts = args
        .iter()
        .map(|a| Reply::Bulk(bytes::Bytes::copy_from_slice(a)));
    Reply::Array(parts.collect()).encode(2, &mut out);
    out
}

/// How long `Server::mark` waits for its reply: a busy script delays it until the script
/// ends, and a test stuck longer than this is better told so than left hanging.
const CONTROL_WAIT: Duration = Duration::from_secs(30);

/// A running server. Dropping it shuts the server down and joins its thread.
pub struct Server {
    addr: SocketAddr,
    /// The Unix socket it listens on, if any (removed when the server stops).
    unix_path: Option<String>,
    clock: Clock,
    faults: Faults,
    /// The requirepass the server was built with, so control requests can authenticate.
    password: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts a server on 127.0.0.1 and a free port, with default options.
    pub fn start() -> Server {
        ServerBuilder::new().start()
    }

    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The path of the Unix socket the server listens on, when `unixsocket` was set.
    pub fn unixsocket(&self) -> Option<&str> {
        self.unix_path.as_deref()
    }

    /// `redis://127.0.0.1:<port>/`, for any client library.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// The server's clock: freeze, set and advance it from the test.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Marks the point a later `Fault::rollback()` returns the dataset to (a failover to a
    /// replica that has every write up to here and none after). Runs REDLAB.FAULT MARK on a
    /// private connection, so the mark falls exactly between two commands: while a script is
    /// busy, after it ends. Authenticates with the password the server was built with.
    ///
    /// Fails, saying why, when the server refuses (a password changed with CONFIG SET, a fault
    /// rule on the control connection), has stopped, or does not answer within `CONTROL_WAIT`
    /// (a script that runs that long without being killed).
    pub fn mark(&self) -> Result<(), String> {
        let mut request = Vec::new();
        if let Some(pw) = &self.password {
            request.extend_from_slice(&request_bytes(&[b"AUTH", pw.as_bytes()]));
        }
        request.extend_from_slice(&request_bytes(&[b"REDLAB.FAULT", b"MARK"]));
        let lines = self.control(&request, 1 + usize::from(self.password.is_some()))?;
        match lines.iter().find(|l| !l.starts_with('+')) {
            None => Ok(()),
            Some(refused) => Err(format!("redlab: the server refused the mark: {refused}")),
        }
    }

    /// Sends requests on a short-lived control connection and reads `replies` one-line
    /// replies.
    fn control(&self, request: &[u8], replies: usize) -> Result<Vec<String>, String> {
        use std::io::{BufRead, BufReader, Write};
        let fail =
            |what: &str, e: std::io::Error| format!("redlab: control connection, {what}: {e}");
        let mut stream = std::net::TcpStream::connect(self.addr).map_err(|e| fail("connect", e))?;
        stream
            .set_read_timeout(Some(CONTROL_WAIT))
            .map_err(|e| fail("set timeout", e))?;
        stream.write_all(request).map_err(|e| fail("send", e))?;
        let mut reader = BufReader::new(stream);
        let mut lines = Vec::with_capacity(replies);
        for _ in 0..replies {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) => return Err("redlab: control connection closed by the server".into()),
                Ok(_) => lines.push(line.trim_end().to_string()),
                Err(e) => return Err(fail("reply", e)),
            }
        }
        Ok(lines)
    }

    /// Whether the server thread is still running (false after a client ran SHUTDOWN).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Blocks until the server stops (a client sends SHUTDOWN). For the standalone binary.
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.remove_unix_socket();
    }

    /// Stops the server and waits for its thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.remove_unix_socket();
    }

    /// Removes the socket file once nothing listens on it, as Redis does at exit.
    fn remove_unix_socket(&mut self) {
        if let Some(p) = self.unix_path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Binds the `unixsocket` listener, if one is configured, with `unixsocketperm`.
fn bind_unix(config: &Config) -> io::Result<Option<(std::os::unix::net::UnixListener, String)>> {
    let path = config.get_by_name("unixsocket").unwrap_or_default();
    if path.is_empty() {
        return Ok(None);
    }
    // A socket file left behind by a server that is gone would make bind fail.
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path)?;
    listener.set_nonblocking(true)?;
    let perm = config
        .get_by_name("unixsocketperm")
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0);
    if perm != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(perm))?;
    }
    Ok(Some((listener, path)))
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

fn run(
    listener: std::net::TcpListener,
    unix: Option<std::os::unix::net::UnixListener>,
    config: Config,
    clock: Clock,
    faults: Faults,
    mut stop: oneshot::Receiver<()>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("redlab: cannot build the runtime: {}", e);
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = match TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("redlab: cannot listen: {}", e);
                return;
            }
        };
        let net_config = super::io::NetConfig::of(&config);
        let mut engine = Engine::with_clock(config, clock);
        engine.faults = faults;
        let unix = match unix.map(UnixListener::from_std).transpose() {
            Ok(u) => u.map(Rc::new),
            Err(e) => {
                tracing::error!("redlab: cannot listen on the unix socket: {}", e);
                return;
            }
        };
        let unix_path = unix.as_deref().map(super::busy::unix_path);
        let listener = Rc::new(listener);
        let registry = Rc::new(Registry::default());
        *registry.listener.borrow_mut() = Some(listener.clone());
        *registry.unix_listener.borrow_mut() = unix.clone();
        *registry.config.borrow_mut() = net_config;
        let shared = Rc::new(Shared {
            engine: RefCell::new(engine),
            registry: registry.clone(),
            attached: RefCell::new(HashMap::new()),
            shutdown: Notify::new(),
            flusher: Rc::new(Flusher::default()),
        });
        // The hook holds a weak reference: the engine owns the hook, and the shared state
        // owns the engine.
        let weak = Rc::downgrade(&shared);
        let spawn: Rc<dyn Fn(u64, Rc<ConnIo>)> = Rc::new(move |id, io| {
            if let Some(shared) = weak.upgrade() {
                tokio::task::spawn_local(super::conn::serve(shared, id, io));
            }
        });
        let hook = super::busy::hook(registry.clone(), spawn);
        shared.engine.borrow_mut().set_busy_hook(hook);
        tokio::task::spawn_local(ticker(shared.clone()));
        tokio::task::spawn_local(shared.flusher.clone().run());
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let (id, io) = registry.add(NetStream::Tcp(stream));
                        tokio::task::spawn_local(super::conn::serve(shared.clone(), id, io));
                    }
                    Err(e) => {
                        tracing::warn!("redlab: accept failed: {}", e);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                },
                accepted = accept_unix(unix.as_deref()) => match accepted {
                    Ok(stream) => {
                        let path = unix_path.clone().unwrap_or_default();
                        let (id, io) = registry.add(NetStream::Unix(stream, path));
                        tokio::task::spawn_local(super::conn::serve(shared.clone(), id, io));
                    }
                    Err(e) => {
                        tracing::warn!("redlab: accept failed on the unix socket: {}", e);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                },
                _ = &mut stop => break,
                _ = shared.shutdown.notified() => break,
            }
        }
        // Replies produced in the last turn (before a SHUTDOWN, say) still go out.
        shared.flusher.flush_queued(&mut Vec::new());
    });
}

/// The next client on the Unix socket; never resolves when there is none.
async fn accept_unix(listener: Option<&UnixListener>) -> io::Result<tokio::net::UnixStream> {
    match listener {
        Some(l) => l.accept().await.map(|(s, _)| s),
        None => std::future::pending().await,
    }
}

/// Redis's serverCron, for what time drives: blocked-command timeouts and active expiry.
async fn ticker(shared: Rc<Shared>) {
    let mut interval = tokio::time::interval(Duration::from_millis(10));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let woken = {
            let mut e = shared.engine.borrow_mut();
            e.tick();
            e.take_wakeups()
        };
        shared.wake_all(woken);
    }
}
