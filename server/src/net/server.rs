//! `Server`: the engine on a background thread behind a real TCP port.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
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
    /// Engine connection id -> its I/O, to wake a connection that got output. Looked up for
    /// each replicated write (the replica's connection), so with foldhash rather than SipHash.
    attached: RefCell<HashMap<ConnId, Rc<ConnIo>, foldhash::fast::FixedState>>,
    /// Signalled when a client runs SHUTDOWN.
    pub(crate) shutdown: Notify,
    /// Writes the replies of a turn of the event loop together.
    pub(crate) flusher: Rc<Flusher>,
    /// Shared with the `Server`: signals to act on, the load's progress.
    control: Arc<Control>,
}

/// What the standalone binary's main thread and the server thread tell each other: a
/// SIGTERM or SIGINT the process received (Redis's shutdown_asap, acted on by the server
/// thread, which saves the RDB file), and how the RDB file's load at start stands.
#[derive(Default)]
struct Control {
    /// `NO_SIGNAL`, `SIGTERM` or `SIGINT`.
    signal: AtomicU8,
    /// 0 (no file was loaded), `LOAD_RUNNING`, `LOAD_DONE` or `LOAD_FAILED`.
    load: AtomicU8,
}

const NO_SIGNAL: u8 = 0;
const SIGTERM: u8 = 1;
const SIGINT: u8 = 2;
const LOAD_RUNNING: u8 = 1;
const LOAD_DONE: u8 = 2;
const LOAD_FAILED: u8 = 3;

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

    /// Hands the output waiting in the engine for a replica's connection (the replication
    /// stream) straight to its write buffer and the flusher, instead of waking its task to
    /// do the same: on a primary with replicas every write did that wake, a whole turn of
    /// the connection's loop per command. Only the plain case: a replica with its output
    /// small and nothing pending on its socket; otherwise (false) the task is woken as for
    /// any other connection, and checks output limits and closing as usual.
    pub(crate) fn feed_replica(&self, conn: ConnId) -> bool {
        let Some(io) = self.attached.borrow().get(&conn).cloned() else {
            return false;
        };
        let Ok(mut st) = io.state.try_borrow_mut() else {
            return false;
        };
        let Ok(mut engine) = self.engine.try_borrow_mut() else {
            return false;
        };
        let plain = engine.sessions.get(&conn).is_some_and(|s| {
            s.replica && !s.close_requested && !s.close_now && s.outbox_bytes <= SMALL_OUTPUT as u64
        });
        if !plain || st.write_pending || st.closing || st.wbuf.len() > SMALL_OUTPUT {
            return false;
        }
        engine.encode_output(conn, &mut st.wbuf);
        st.meters.set_unsent(st.wbuf.len());
        if !st.queued {
            st.queued = true;
            self.flusher.queue(&io);
        }
        true
    }

    fn wake_all(&self, conns: Vec<ConnId>) {
        for c in conns {
            self.wake(c);
        }
    }
}

/// Output below this never reaches a client-output-buffer-limit (see `conn::UNCOUNTED_OUTPUT`):
/// `Shared::feed_replica` moves no more than twice this, so no limit check is skipped.
const SMALL_OUTPUT: usize = 8 * 1024;

/// Options for a server; `Server::builder()` starts here.
#[derive(Clone, Debug, Default)]
pub struct ServerBuilder {
    config: Config,
    clock: Option<Clock>,
    /// The cluster this server joins as a node once its port is known (`crate::cluster`).
    cluster: Option<crate::cluster::Shared>,
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

    /// `redlab-busy-poll-us`: how long the server's thread polls its sockets after serving
    /// before it sleeps (100 us by default; zero never). It trades a little CPU for round
    /// trips that do not wait for a sleeping core to wake (`net::busy_poll`).
    pub fn busy_poll(mut self, d: Duration) -> Self {
        self.config.busy_poll_us = d.as_micros().min(1_000_000) as u64;
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

    /// Answers as this server version (`crate::compat`): its commands, and its version in
    /// INFO, HELLO and scripts. `Profile::parse("valkey-8.1")` names one.
    pub fn compat(mut self, profile: crate::compat::Profile) -> Self {
        self.config.set_compat(profile);
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

    /// Joins the cluster whose topology is `shared`: once bound, the server adds itself as a
    /// node owning no slot (`Server::cluster_id` names it). `redlab::Cluster` uses this.
    pub fn cluster(mut self, shared: crate::cluster::Shared) -> Self {
        self.cluster = Some(shared);
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

    /// Chooses a server thread (a parked or finishing thread when the process has one, woken
    /// at once, see `workers`), binds, registers the port with that thread's runtime, hands
    /// the server to the thread and returns without waiting for it: the port accepts from
    /// here on, and a connection made at once is served as soon as the thread has set the
    /// engine up. A cluster-enabled server with its own bus waits until the bus listens, to
    /// report why it cannot.
    pub fn try_start(self) -> io::Result<Server> {
        // Chosen first: a parked thread is woken now and runs by the time the server is
        // handed to it (`workers`), the port bound meanwhile.
        let worker = super::workers::take()?;
        // An empty `bind` listens on no TCP address (Redis 7.0): the Unix socket only.
        let listener = super::listen::bind_addresses(&self.config.bind, self.config.port)?;
        let addr = match &listener {
            Some(l) => l.local_addr()?,
            None => std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, self.config.port)),
        };
        // Kept to stop listening from the test thread when the server is dropped.
        let listening = listener.as_ref().map(|l| l.try_clone()).transpose()?;
        let bus = match self.cluster {
            None => bind_bus(&self.config, addr)?,
            Some(_) => None,
        };
        let unix = bind_unix(&self.config)?;
        if listener.is_none() && unix.is_none() {
            return Err(io::Error::other(
                "Configured to not listen anywhere, exiting.",
            ));
        }
        let unix_path = unix.as_ref().map(|(_, p)| p.clone());
        let unix = unix.map(|(l, _)| l);
        let clock = self.clock.unwrap_or_default();
        let mut config = self.config;
        config.port = addr.port();
        let membership = self.cluster.map(|shared| {
            let host = match addr.ip() {
                ip if ip.is_unspecified() => "127.0.0.1".to_string(),
                ip => ip.to_string(),
            };
            let me = crate::cluster::topology::lock(&shared).add_node(
                crate::cluster::Topology::fresh_id(),
                &host,
                addr.port(),
            );
            crate::cluster::Membership { shared, me }
        });
        let cluster_id = membership.as_ref().map(|m| m.me.clone());
        // Registered from here, so a failure is this call's error, not the thread's.
        let (listener, unix) = {
            let _runtime = worker.handle().enter();
            let tcp = listener.map(TcpListener::from_std).transpose()?;
            (tcp, unix.map(UnixListener::from_std).transpose()?)
        };
        // A cluster bus must be listening, and a load from disk must have begun (the binary
        // says "Ready" once `is_loading` is false), before `start` returns.
        let wait_ready = bus.is_some() || config.rdb_on_disk;
        let faults = Faults::default();
        let compat_report = crate::compat::Report::default();
        let password = config.requirepass.clone();
        let (stop_tx, stop_rx) = oneshot::channel();
        let control = Arc::new(Control::default());
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let done = Arc::new(Done::default());
        let dropped = Arc::new(AtomicU8::new(RUNNING));
        let job = {
            let clock = clock.clone();
            let faults = faults.clone();
            let compat_report = compat_report.clone();
            let done = done.clone();
            let dropped = dropped.clone();
            let dropped_flag = dropped.clone();
            let control = control.clone();
            Box::new(move |rt: &tokio::runtime::Runtime| {
                let dropped_at_end = dropped.clone();
                let running = Running {
                    listener,
                    bus,
                    unix,
                    membership,
                    config,
                    clock,
                    faults,
                    compat_report,
                    stop: stop_rx,
                    ready: ready_tx,
                    dropped,
                    control,
                    dropped_at_end,
                };
                run(rt, running, DoneGuard(done));
                // When the server ended before its loop (the bus could not start), or
                // panicked: marked finished all the same.
                super::workers::finishing(&dropped_flag, false);
            })
        };
        worker.run(job)?;
        if wait_ready {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(io::Error::other("redlab: the server thread stopped")),
            }
        }
        Ok(Server {
            cluster_id,
            addr,
            unix_path,
            clock,
            faults,
            compat_report,
            password,
            stop: Some(stop_tx),
            listening,
            dropped,
            done,
            control,
        })
    }
}

/// Set once a server has stopped: its connections closed and its engine dropped.
#[derive(Default)]
struct Done {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    fn is_set(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait(&self) {
        let mut stopped = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        while !*stopped {
            stopped = self.cv.wait(stopped).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Sets `Done` when the server's run ends, however it ends (a panic included).
struct DoneGuard(Arc<Done>);

impl Drop for DoneGuard {
    fn drop(&mut self) {
        *self.0.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.cv.notify_all();
    }
}

/// What a server thread is handed to run one server.
struct Running {
    /// Registered with the thread's runtime by `try_start`.
    /// None when `bind` is empty (the Unix socket only).
    listener: Option<TcpListener>,
    /// The cluster bus port's listener, for a `cluster-enabled yes` server of its own.
    bus: Option<std::net::TcpListener>,
    /// The `unixsocket` listener, when one is configured.
    unix: Option<UnixListener>,
    membership: Option<crate::cluster::Membership>,
    config: Config,
    clock: Clock,
    faults: Faults,
    compat_report: crate::compat::Report,
    stop: oneshot::Receiver<()>,
    /// Answered once the thread serves the port (or why it cannot); awaited only for a
    /// server with its own cluster bus.
    ready: std::sync::mpsc::SyncSender<io::Result<()>>,
    /// Past `RUNNING` once the `Server` is dropped: a script running then is stopped as by
    /// SHUTDOWN NOSAVE once it passes busy-reply-threshold, so a dropped server never runs on.
    dropped: Arc<AtomicU8>,
    control: Arc<Control>,
    /// The same flag, for `workers::finishing` once the loop ends (`dropped` goes to the busy
    /// hook).
    dropped_at_end: Arc<AtomicU8>,
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

/// A running server. Dropping it stops the server without waiting for it: the port stops
/// accepting at once (and can be bound again), while the server thread closes the
/// connections and frees the dataset on its own, then waits for the next server.
pub struct Server {
    /// This server's node id when it is a cluster node started by `ServerBuilder::cluster`.
    cluster_id: Option<String>,
    addr: SocketAddr,
    /// The Unix socket it listens on, if any (removed when the server stops).
    unix_path: Option<String>,
    clock: Clock,
    faults: Faults,
    /// What the profile refused (`compat_report`), shared with the engine.
    compat_report: crate::compat::Report,
    /// The requirepass the server was built with, so control requests can authenticate.
    password: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    /// The listening socket (a second descriptor of it), shut from here on drop.
    listening: Option<std::net::TcpListener>,
    /// `RUNNING`, `STOP_REQUESTED` or `FINISHED`.
    dropped: Arc<AtomicU8>,
    done: Arc<Done>,
    control: Arc<Control>,
}

/// The life of a server as `Server::stop` and its thread see it.
pub(crate) const RUNNING: u8 = 0;
pub(crate) const STOP_REQUESTED: u8 = 1;
pub(crate) const FINISHED: u8 = 2;

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

    /// The requirepass the server was started with.
    pub(crate) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The node id (CLUSTER MYID) of a server started as a cluster node.
    pub fn cluster_id(&self) -> Option<&str> {
        self.cluster_id.as_deref()
    }

    /// The path of the Unix socket the server listens on, when `unixsocket` was set.
    pub fn unixsocket(&self) -> Option<&str> {
        self.unix_path.as_deref()
    }

    /// `redis://127.0.0.1:<port>/`, for any client library.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    // clock, faults and compat_report read like `Engine`'s accessors on purpose: a Server
    // is driven from a test the way an in-process Engine is, with the same names.

    /// The server's clock: freeze, set and advance it from the test.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The commands and options the server's profile refused because that version lacks
    /// them, with how often (see `crate::compat::report`); empty when the code under test
    /// used nothing its production version lacks.
    pub fn compat_report(&self) -> Vec<crate::compat::Refusal> {
        self.compat_report.entries()
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

    /// Whether the server is still running (false after a client ran SHUTDOWN).
    pub fn is_running(&self) -> bool {
        !self.done.is_set()
    }

    /// For the standalone binary: the process received SIGTERM (or SIGINT, `sigint`). The
    /// server shuts down as redis-server does, on its own thread: with the flags
    /// `shutdown-on-sigterm` / `shutdown-on-sigint` give, saving the RDB file when save
    /// points are set (nothing while loading). It keeps running if that save fails.
    pub fn signal_shutdown(&self, sigint: bool) {
        let sig = if sigint { SIGINT } else { SIGTERM };
        self.control.signal.store(sig, Ordering::SeqCst);
    }

    /// Whether the RDB file read at start (a server with `Config::rdb_on_disk`) is still
    /// loading: the binary logs "Ready to accept connections" once it is not.
    pub fn is_loading(&self) -> bool {
        self.control.load.load(Ordering::SeqCst) == LOAD_RUNNING
    }

    /// Whether that file could not be loaded (the reasons are logged): the binary exits, as
    /// redis-server does.
    pub fn load_failed(&self) -> bool {
        self.control.load.load(Ordering::SeqCst) == LOAD_FAILED
    }

    /// Blocks until the server stops (a client sends SHUTDOWN). For the standalone binary.
    pub fn wait(mut self) {
        self.done.wait();
        self.remove_unix_socket();
    }

    /// Stops the server and waits until its connections are closed and its data freed.
    pub fn shutdown(mut self) {
        self.stop();
        self.done.wait();
    }

    /// Tells the server thread to stop and stops listening; does not wait.
    fn stop(&mut self) {
        // The next server started may wait for this one's thread rather than start one.
        super::workers::request_stop(&self.dropped);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(listening) = self.listening.take() {
            // A listening socket shut for reading refuses new connections and frees its
            // address for a new bind, though the server thread still holds it.
            let _ = socket2::SockRef::from(&listening).shutdown(std::net::Shutdown::Read);
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

/// Binds the cluster bus port of a `cluster-enabled yes` server: cluster-port, else the
/// port + 10000 as Redis does (a port past 55535 has none, and Redis refuses to start). A
/// server asked for any free port (port 0) gets any free bus port too.
fn bind_bus(config: &Config, addr: SocketAddr) -> io::Result<Option<std::net::TcpListener>> {
    if config
        .get_by_name("cluster-enabled")
        .is_none_or(|v| v != "yes")
    {
        return Ok(None);
    }
    let fixed: u16 = config
        .get_by_name("cluster-port")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let port = match (fixed, config.port) {
        (0, 0) => 0,
        (0, p) => p.checked_add(10000).ok_or_else(|| {
            io::Error::other(
                "Redis port number too high. Cluster communication port is 10,000 port numbers \
                 higher than your Redis port. Your Redis port number must be 55535 or less.",
            )
        })?,
        (p, _) => p,
    };
    let listener = std::net::TcpListener::bind((addr.ip(), port))?;
    Ok(Some(listener))
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
        self.stop();
    }
}

/// Serves one server on a server thread's runtime until it is stopped or a client runs
/// SHUTDOWN. `done` is set when everything the server held is dropped.
fn run(rt: &tokio::runtime::Runtime, running: Running, done: DoneGuard) {
    // Every field by name, mirroring where `Running` is built, on purpose: with no `..` a
    // new field must be taken up here, or this does not compile.
    let Running {
        listener,
        bus,
        unix,
        membership,
        config,
        clock,
        faults,
        compat_report,
        mut stop,
        ready,
        dropped,
        control,
        dropped_at_end,
    } = running;
    // cjson's settings belong to the server, and this thread may have served another.
    crate::lua::cjson::reset_config();
    let local = tokio::task::LocalSet::new();
    // The server's own loop is a task like the connections', and `block_on` only awaits
    // it: the future given to `LocalSet::block_on` is polled again on every wake of any
    // task of the set, and a select over five sources polled once per request was ~1k
    // instructions of every request (callgrind, cluster_start's throughput loop). Even the
    // task's `JoinHandle`, polled there, was ~200 more: `block_on` waits for `ended`
    // (a flag) and looks at the handle only once the task is over, panicked or not.
    let ended = Rc::new(super::wake::LocalNotify::new());
    let ended_guard = NotifyOnDrop(ended.clone());
    let served = local.spawn_local(async move {
        let _ended = ended_guard;
        let net_config = super::io::NetConfig::of(&config);
        let mut engine = Engine::with_clock(config, clock);
        engine.faults = faults;
        if let Some(m) = membership {
            engine.join_cluster(m);
        }
        if let Some(bus) = bus {
            let config = engine.config().clone();
            if let Some(node) = engine.cluster.as_mut() {
                if let Err(e) = node.start_bus(bus, &config) {
                    let _ = ready.send(Err(e));
                    return;
                }
            }
        }
        engine.compat_report = compat_report;
        if engine.config().rdb_on_disk {
            start_loading(&mut engine, &control);
        }
        let engine_rejected = engine.rejected_connections.clone();
        let unix = unix.map(Rc::new);
        let unix_path = unix.as_deref().map(super::busy::unix_path);
        let mut listener = listener.map(Rc::new);
        let swap = Rc::new(super::listen::Swap::default());
        engine.set_listen_hook(swap.hook());
        let registry = Rc::new(Registry::default());
        registry.listener.borrow_mut().clone_from(&listener);
        *registry.unix_listener.borrow_mut() = unix.clone();
        *registry.config.borrow_mut() = net_config;
        *registry.rejected.borrow_mut() = engine_rejected;
        let shared = Rc::new(Shared {
            engine: RefCell::new(engine),
            registry: registry.clone(),
            attached: RefCell::new(HashMap::default()),
            shutdown: Notify::new(),
            flusher: Rc::new(Flusher::default()),
            control,
        });
        // The hook holds a weak reference: the engine owns the hook, and the shared state
        // owns the engine.
        let weak = Rc::downgrade(&shared);
        let spawn: Rc<dyn Fn(u64, Rc<ConnIo>)> = Rc::new(move |id, io| {
            if let Some(shared) = weak.upgrade() {
                tokio::task::spawn_local(super::conn::serve(shared, id, io));
            }
        });
        let conn_ids = shared.engine.borrow().conn_id_counter();
        let hook = super::busy::hook(registry.clone(), spawn, conn_ids, dropped);
        shared.engine.borrow_mut().set_busy_hook(hook);
        tokio::task::spawn_local(ticker(shared.clone()));
        tokio::task::spawn_local(shared.flusher.clone().run());
        if shared.engine.borrow().is_loading() {
            tokio::task::spawn_local(load_in_steps(shared.clone()));
        }
        let _ = ready.send(Ok(()));
        if crate::lua::prepared::take_used_last() {
            // The last server here ran a script, so this one likely will: its state is
            // taken now, while the test is still connecting, not between its first EVAL
            // and the reply (the take wakes the pool's builder, a system call).
            let mut engine = shared.engine.borrow_mut();
            let limit = engine.config().lua_memory_limit;
            engine.scripting.eval_runtime(limit);
        }
        // The listeners are polled like the clients (`busy_poll`): a test connects right
        // after `start`, so the thread polls for that first connection before it sleeps.
        let mut listen_fd = listener.as_deref().map(AsRawFd::as_raw_fd);
        let unix_fd = unix.as_deref().map(AsRawFd::as_raw_fd);
        super::busy_poll::serving(Some(dropped_at_end.clone()));
        listen_fd.into_iter().chain(unix_fd).for_each(super::busy_poll::watch);
        super::busy_poll::arm(shared.engine.borrow().config().busy_poll_us);
        // Connections made while the thread was being handed the server.
        for _ in 0..ACCEPT_AT_ONCE {
            let Some((stream, peer)) = super::listen::accept_waiting(listener.as_deref()) else {
                break;
            };
            super::conn::refresh_net_config(&shared.engine.borrow(), &registry);
            if let Some((id, io)) = registry.admit(NetStream::Tcp(stream, Some(peer))) {
                tokio::task::spawn_local(super::conn::serve(shared.clone(), id, io));
            }
        }
        loop {
            tokio::select! {
                _ = swap.changed.notified() => {
                    // CONFIG SET port: accept on the new listener from now on.
                    if let Some(next) = swap.take(listener.as_deref()) {
                        listen_fd.take().into_iter().for_each(super::busy_poll::unwatch);
                        listen_fd = next.as_deref().map(AsRawFd::as_raw_fd);
                        listen_fd.into_iter().for_each(super::busy_poll::watch);
                        listener = next;
                        registry.listener.borrow_mut().clone_from(&listener);
                    }
                }
                accepted = super::listen::accept(listener.as_deref()) => match accepted {
                    Ok((stream, peer)) => {
                        super::conn::refresh_net_config(&shared.engine.borrow(), &registry);
                        if let Some((id, io)) = registry.admit(NetStream::Tcp(stream, Some(peer))) {
                            tokio::task::spawn_local(super::conn::serve(shared.clone(), id, io));
                        }
                    }
                    // Shut from `Server::drop`, which sent the stop first.
                    Err(_) if !matches!(stop.try_recv(), Err(oneshot::error::TryRecvError::Empty)) => break,
                    Err(e) => {
                        tracing::warn!("redlab: accept failed: {}", e);
                        super::timers::sleep(Duration::from_millis(5)).await;
                    }
                },
                accepted = accept_unix(unix.as_deref()) => match accepted {
                    Ok(stream) => {
                        let path = unix_path.clone().unwrap_or_default();
                        super::conn::refresh_net_config(&shared.engine.borrow(), &registry);
                        if let Some((id, io)) = registry.admit(NetStream::Unix(stream, path)) {
                            tokio::task::spawn_local(super::conn::serve(shared.clone(), id, io));
                        }
                    }
                    Err(e) => {
                        tracing::warn!("redlab: accept failed on the unix socket: {}", e);
                        super::timers::sleep(Duration::from_millis(5)).await;
                    }
                },
                _ = &mut stop => break,
                _ = shared.shutdown.notified() => break,
            }
        }
        // Its listeners and the connections still open (closed with the task set, without
        // `Registry::remove`) are no longer this thread's to poll.
        super::busy_poll::serving(None);
        // Replies produced in the last turn (before a SHUTDOWN, say) still go out.
        shared.flusher.flush_queued(&mut Vec::new());
        // Stopped by SHUTDOWN, the port refuses connections now, though the `Server`
        // still holds a descriptor of the socket.
        if let Some(listener) = &listener {
            let _ = socket2::SockRef::from(&**listener).shutdown(std::net::Shutdown::Read);
        }
        // Only freeing is left: a small dataset's thread takes the next server meanwhile.
        let keys: usize = {
            let engine = shared.engine.borrow();
            crate::lua::prepared::set_used_last(!engine.scripting.cache.scripts.is_empty());
            engine.dbs.iter().map(|d| d.len()).sum()
        };
        super::workers::finishing(&dropped_at_end, keys <= LIGHT_KEYS);
    });
    let served = local.block_on(rt, async move {
        ended.notified().await;
        served.await
    });
    if let Err(e) = served {
        if e.is_panic() {
            std::panic::resume_unwind(e.into_panic());
        }
    }
    // The connections' tasks, and with them the sockets and the engine, go here.
    drop(local);
    drop(done);
}

/// At most this many connections waiting when a server starts are accepted before its loop
/// (`listen::accept_waiting`); the rest, if any, through the loop as usual.
const ACCEPT_AT_ONCE: usize = 16;

/// Notifies when dropped: at the end of the server's task, however it ends.
struct NotifyOnDrop(Rc<super::wake::LocalNotify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A stopped server with at most this many keys is freed quickly enough for the next server
/// to be handed to its thread meanwhile (`workers::finishing`); a larger dataset may take
/// milliseconds to free, and the next server then gets another thread.
const LIGHT_KEYS: usize = 10_000;

/// The next client on the Unix socket; never resolves when there is none.
async fn accept_unix(listener: Option<&UnixListener>) -> io::Result<tokio::net::UnixStream> {
    match listener {
        Some(l) => l.accept().await.map(|(s, _)| s),
        None => std::future::pending().await,
    }
}

/// Redis's serverCron, for what time drives: blocked-command timeouts and active expiry.
async fn ticker(shared: Rc<Shared>) {
    let mut interval = super::timers::interval(Duration::from_millis(10));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        take_signal(&shared);
        // Nothing periodic runs on a half-loaded dataset (Redis's whileBlockedCron).
        if shared.engine.borrow().is_loading() {
            continue;
        }
        let woken = {
            let mut e = shared.engine.borrow_mut();
            e.tick();
            e.take_wakeups()
        };
        shared.wake_all(woken);
        crate::repl::link::poll(&shared);
    }
}

/// Reads the RDB file (`persist::rdb_path`) into the engine to be loaded in steps once the
/// server serves its port. No file is no load; a file that cannot be read or is not an RDB
/// file is logged with Redis's lines and marked failed (the binary then exits).
fn start_loading(engine: &mut Engine, control: &Control) {
    let path = crate::persist::rdb_path(engine.config());
    let failed = match std::fs::read(&path) {
        Ok(file) => match engine.begin_loading(file) {
            Ok(()) => {
                control.load.store(LOAD_RUNNING, Ordering::SeqCst);
                return;
            }
            Err(lines) => lines,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => return,
        Err(e) => vec![format!("Fatal error loading the DB: {e}. Exiting.")],
    };
    for line in failed {
        tracing::warn!("{}", line);
    }
    control.load.store(LOAD_FAILED, Ordering::SeqCst);
}

/// The load at start, one step at a time (`Engine::load_step`); between steps the other
/// tasks (the connections, the listener, the ticker) run, as Redis processes events while
/// it loads.
async fn load_in_steps(shared: Rc<Shared>) {
    loop {
        let step = shared.engine.borrow_mut().load_step();
        match step {
            Ok(true) => {}
            Ok(false) => {
                shared.control.load.store(LOAD_DONE, Ordering::SeqCst);
                return;
            }
            Err(lines) => {
                for line in lines {
                    tracing::warn!("{}", line);
                }
                shared.engine.borrow_mut().loading = None;
                shared.control.load.store(LOAD_FAILED, Ordering::SeqCst);
                return;
            }
        }
        take_signal(&shared);
        tokio::task::yield_now().await;
    }
}

/// Acts on a SIGTERM/SIGINT the binary passed on (`Server::signal_shutdown`).
fn take_signal(shared: &Shared) {
    let sig = shared.control.signal.swap(NO_SIGNAL, Ordering::SeqCst);
    if sig == NO_SIGNAL {
        return;
    }
    let stop = crate::persist::shutdown::on_signal(&mut shared.engine.borrow_mut(), sig == SIGINT);
    if stop {
        shared.shutdown.notify_one();
    }
}
