//! Where a schedule runs: an in-process engine owned by the explorer, or a real
//! redis-server over TCP.
//!
//! In-process, the explorer owns the `Engine` and calls it directly: one `ConnId` per
//! logical client, a manual `Clock` so a clock advance is exact, fault rules added to the
//! engine's shared table. On a real redis-server there is one blocking TcpStream per logical
//! client with one command in flight at a time; a clock advance is a real sleep, and faults
//! cannot be injected.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use redlab_server::faults::Fault;
use redlab_server::{Clock, Config, ConnId, Engine, Fork, Reply, Snapshot};

use crate::codec;
use crate::value::Value;

/// The connection the setup commands and the invariants use.
pub(crate) const OBSERVER: usize = usize::MAX;

/// The server time an in-process schedule starts at (2026-01-01T00:00:00Z): fixed, so
/// replies that show time (TIME, a script's timestamps) are the same on every run.
pub const START_MS: i64 = 1_767_225_600_000;

/// What one command did.
pub(crate) enum Exec {
    Reply(Value),
    /// The connection closed (a fault) or failed; the client sees a connection error.
    Closed(String),
    /// A blocking command is waiting (in-process only); its reply comes later.
    Blocked,
}

pub(crate) trait Target {
    /// A fresh server with `clients` client connections and one observer, after `setup`
    /// (run on the observer connection; a command that closes it fails the reset).
    fn reset(&mut self, clients: usize, setup: &[Vec<Vec<u8>>]) -> Result<(), String>;
    fn exec(&mut self, who: usize, command: &[Vec<u8>]) -> Exec;
    /// GET `key` on the observer connection (`View::get`): an invariant reads after every
    /// step, so a target that can answer without running a command does.
    fn observe_get(&mut self, key: &[u8]) -> Exec {
        self.exec(OBSERVER, &get_command(key))
    }
    /// The late reply of a blocked client, if it has one now.
    fn poll_blocked(&mut self, who: usize) -> Option<Value>;
    fn advance(&mut self, ms: u64);
    /// Server time since the schedule started, in ms.
    fn elapsed_ms(&self) -> i64;
    fn crash(&mut self, who: usize);
    /// Adds a fault rule; false when this target cannot inject faults.
    fn add_fault(&mut self, fault: &Fault) -> bool;
    fn is_real(&self) -> bool;
    /// The server's state now, to branch from with `resume`: None when this target cannot
    /// keep one, or the run has left the ground a fork covers (`Engine::fork`).
    fn fork(&mut self) -> Option<Fork> {
        None
    }
    /// Puts the server back into a state `fork` gave, with the same connections.
    fn resume(&mut self, _fork: &Fork) {}
    /// Units of the primary's replication stream the replica has not applied yet (a target
    /// with a replica, `explore::replica`; 0 for the others).
    fn unreplicated(&self) -> usize {
        0
    }
    /// The replica applies the oldest unit it has not received; its commands, for the
    /// timeline.
    fn replicate(&mut self) -> Result<String, String> {
        Err("this target has no replica".into())
    }
    /// Promotes the replica and moves every connection to it; the units it had not
    /// received are lost. Returns how many.
    fn failover(&mut self) -> Result<usize, String> {
        Err("this target has no replica".into())
    }
}

/// The explorer's own engine. The first reset builds it and runs the setup, then takes a
/// snapshot; every later reset restores that snapshot (data, scripts with their compiled
/// Lua, clock, RNG) instead of building a new engine and running the setup again.
pub(crate) struct InProcessTarget {
    engine: Engine,
    clock: Clock,
    conns: Vec<ConnId>,
    observer: ConnId,
    snapshot: Option<(usize, Snapshot)>,
}

impl InProcessTarget {
    pub fn new(config: Config) -> InProcessTarget {
        let clock = Clock::manual(START_MS);
        let engine = Engine::with_clock(config, clock.clone());
        InProcessTarget {
            engine,
            clock,
            conns: Vec::new(),
            observer: 0,
            snapshot: None,
        }
    }

    fn connect_all(&mut self, clients: usize) {
        self.conns.clear();
        for _ in 0..clients {
            self.conns.push(self.engine.connect());
        }
        self.observer = self.engine.connect();
    }
}

impl Target for InProcessTarget {
    fn reset(&mut self, clients: usize, setup: &[Vec<Vec<u8>>]) -> Result<(), String> {
        if let Some((n, snap)) = &self.snapshot {
            if *n == clients {
                self.engine.restore(snap);
                self.connect_all(clients);
                return Ok(());
            }
        }
        // The setup runs before the clients connect, so a restored engine hands out the
        // same connection ids as this first one.
        let conn = self.engine.connect();
        for command in setup {
            let args: Vec<Bytes> = command.iter().map(|a| Bytes::copy_from_slice(a)).collect();
            self.engine.execute_args(conn, args);
            if self.engine.should_close(conn) || !self.engine.is_connected(conn) {
                return Err(format!(
                    "setup closed the connection at {}",
                    super::report::command_text(command)
                ));
            }
        }
        let snap = self.engine.snapshot();
        self.engine.restore(&snap);
        self.snapshot = Some((clients, snap));
        self.connect_all(clients);
        Ok(())
    }

    fn exec(&mut self, who: usize, command: &[Vec<u8>]) -> Exec {
        let conn = if who == OBSERVER {
            self.observer
        } else {
            self.conns[who]
        };
        exec_on(&mut self.engine, conn, command)
    }

    /// Reads the keyspace directly (`Engine::observe_get`: no dispatch, nothing touched or
    /// counted), or runs GET where only the command can answer.
    fn observe_get(&mut self, key: &[u8]) -> Exec {
        match self.engine.observe_get(self.observer, key) {
            Some(reply) => Exec::Reply(to_value(reply, self.engine.resp(self.observer))),
            None => exec_on(&mut self.engine, self.observer, &get_command(key)),
        }
    }

    fn poll_blocked(&mut self, who: usize) -> Option<Value> {
        poll_blocked_on(&mut self.engine, self.conns[who])
    }

    fn advance(&mut self, ms: u64) {
        self.clock.advance(Duration::from_millis(ms));
        self.engine.tick();
    }

    fn elapsed_ms(&self) -> i64 {
        self.clock.now_ms() - START_MS
    }

    fn crash(&mut self, who: usize) {
        self.engine.disconnect(self.conns[who]);
    }

    fn add_fault(&mut self, fault: &Fault) -> bool {
        self.engine.faults().add(fault.clone());
        true
    }

    fn is_real(&self) -> bool {
        false
    }

    fn fork(&mut self) -> Option<Fork> {
        let (_, base) = self.snapshot.as_ref()?;
        self.engine.fork(base)
    }

    fn resume(&mut self, fork: &Fork) {
        if let Some((_, base)) = &self.snapshot {
            self.engine.resume(base, fork);
        }
    }
}

fn get_command(key: &[u8]) -> Vec<Vec<u8>> {
    vec![b"GET".to_vec(), key.to_vec()]
}

/// Runs one command on an in-process engine's connection, as a client of it sees it.
pub(crate) fn exec_on(engine: &mut Engine, conn: ConnId, command: &[Vec<u8>]) -> Exec {
    if !engine.is_connected(conn) {
        return Exec::Closed("connection closed".into());
    }
    // Copied into the engine's reused argument vector: the command's own buffers go back
    // to its connection for the client's next command (`transport::Slot::recycle`).
    let reply = engine.execute(conn, command);
    if reply == Reply::None && engine.is_blocked(conn) {
        return Exec::Blocked;
    }
    if engine.should_close(conn) && reply == Reply::None {
        engine.disconnect(conn);
        return Exec::Closed("the server closed the connection".into());
    }
    let resp = engine.resp(conn);
    let v = to_value(reply, resp);
    if engine.should_close(conn) {
        engine.disconnect(conn);
    }
    Exec::Reply(v)
}

/// The late reply of a client blocked on an in-process engine, if it has one now.
pub(crate) fn poll_blocked_on(engine: &mut Engine, conn: ConnId) -> Option<Value> {
    let resp = engine.resp(conn);
    let mut out = engine.take_output(conn);
    if out.is_empty() {
        return None;
    }
    Some(to_value(out.swap_remove(0), resp))
}

/// A reply as a client reading this protocol would decode it (the same values the TCP
/// transport produces, without encoding and decoding bytes).
pub(crate) fn to_value(r: Reply, resp: u8) -> Value {
    let three = resp >= 3;
    match r {
        Reply::Status(s) => Value::Status(s),
        Reply::Error(e) => Value::error(&e),
        Reply::ErrorBytes(e) => Value::error(&String::from_utf8_lossy(&e)),
        Reply::Int(n) => Value::Int(n),
        Reply::Bulk(b) | Reply::Raw(b) => Value::Bulk(b),
        Reply::Nil | Reply::NilArray | Reply::None => Value::Nil,
        Reply::Array(v) | Reply::Multi(v) => {
            Value::Array(v.into_iter().map(|r| to_value(r, resp)).collect())
        }
        Reply::Map(m) if three => Value::Map(
            m.into_iter()
                .map(|(k, v)| (to_value(k, resp), to_value(v, resp)))
                .collect(),
        ),
        Reply::Map(m) => Value::Array(
            m.into_iter()
                .flat_map(|(k, v)| [to_value(k, resp), to_value(v, resp)])
                .collect(),
        ),
        Reply::Set(v) if three => Value::Set(v.into_iter().map(|r| to_value(r, resp)).collect()),
        Reply::Set(v) => Value::Array(v.into_iter().map(|r| to_value(r, resp)).collect()),
        Reply::Double(d) if three => Value::Double(d),
        Reply::Double(d) => resp2_bulk(Reply::Double(d)),
        Reply::Bool(b) if three => Value::Bool(b),
        Reply::Bool(b) => Value::Int(b as i64),
        Reply::BigNumber(s) if three => Value::BigNumber(s),
        Reply::BigNumber(s) => Value::Bulk(Bytes::from(s)),
        Reply::Verbatim(f, t) if three => Value::Verbatim {
            format: f.to_string(),
            text: t,
        },
        Reply::Verbatim(_, t) => Value::Bulk(t),
        Reply::Push(v) if three => Value::Push(v.into_iter().map(|r| to_value(r, resp)).collect()),
        Reply::Push(v) => Value::Array(v.into_iter().map(|r| to_value(r, resp)).collect()),
        Reply::Attribute(_, inner) => to_value(*inner, resp),
    }
}

/// How a RESP2 client reads a reply that RESP2 sends as a bulk string (a double).
fn resp2_bulk(r: Reply) -> Value {
    let mut buf = BytesMut::from(&r.to_bytes(2)[..]);
    codec::decode(&mut buf, 2)
        .ok()
        .flatten()
        .unwrap_or(Value::Nil)
}

/// A real redis-server: one blocking connection per logical client.
pub(crate) struct RealTarget {
    addr: SocketAddr,
    conns: Vec<Option<Conn>>,
    observer: Option<Conn>,
    started: Instant,
    /// The schedule's time so far: clock advances keep real time this far from `started`.
    schedule_ms: u64,
}

struct Conn {
    stream: TcpStream,
    buf: BytesMut,
    out: BytesMut,
}

impl Conn {
    fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map_err(|e| format!("connect {}: {}", addr, e))?;
        let _ = stream.set_nodelay(true);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        Ok(Conn {
            stream,
            buf: BytesMut::with_capacity(4096),
            out: BytesMut::with_capacity(256),
        })
    }

    fn call(&mut self, command: &[Vec<u8>]) -> Result<Value, String> {
        self.out.clear();
        codec::encode_command(command, &mut self.out);
        self.stream
            .write_all(&self.out)
            .map_err(|e| e.to_string())?;
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(v) = codec::decode(&mut self.buf, 2).map_err(|e| e.to_string())? {
                return Ok(v);
            }
            let n = self.stream.read(&mut chunk).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the server closed the connection".into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

impl RealTarget {
    /// Opens a fresh connection per logical client, and a fresh observer, without touching
    /// the data (the clients move here after a failover).
    pub(crate) fn open_clients(&mut self, clients: usize) -> Result<(), String> {
        self.conns.clear();
        for _ in 0..clients {
            self.conns.push(Some(Conn::open(self.addr)?));
        }
        self.observer = Some(Conn::open(self.addr)?);
        Ok(())
    }

    pub fn new(addr: SocketAddr) -> RealTarget {
        RealTarget {
            addr,
            conns: Vec::new(),
            observer: None,
            started: Instant::now(),
            schedule_ms: 0,
        }
    }
}

fn args(a: &[&str]) -> Vec<Vec<u8>> {
    a.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// Waits for the system clock to tick over a millisecond and returns that moment: a
/// schedule started there reads whole milliseconds on the server the way it does in-process.
fn just_after_a_millisecond() -> Instant {
    let ms_of = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    };
    let first = ms_of(std::time::SystemTime::now());
    let give_up = Instant::now() + Duration::from_millis(5);
    loop {
        let now = Instant::now();
        if ms_of(std::time::SystemTime::now()) != first || now > give_up {
            return now;
        }
        std::hint::spin_loop();
    }
}

impl Target for RealTarget {
    fn reset(&mut self, clients: usize, setup: &[Vec<Vec<u8>>]) -> Result<(), String> {
        self.conns.clear();
        let mut observer = Conn::open(self.addr)?;
        // The same starting state as a fresh engine: no data, no cached scripts.
        for c in [&["FLUSHALL"][..], &["SCRIPT", "FLUSH"]] {
            if let Value::Error { code, message } = observer.call(&args(c))? {
                return Err(format!("{} {}", code, message));
            }
        }
        for c in setup {
            observer.call(c)?;
        }
        self.observer = Some(observer);
        for _ in 0..clients {
            self.conns.push(Some(Conn::open(self.addr)?));
        }
        self.started = just_after_a_millisecond();
        self.schedule_ms = 0;
        Ok(())
    }

    fn exec(&mut self, who: usize, command: &[Vec<u8>]) -> Exec {
        let conn = if who == OBSERVER {
            &mut self.observer
        } else {
            &mut self.conns[who]
        };
        let Some(c) = conn else {
            return Exec::Closed("connection closed".into());
        };
        match c.call(command) {
            Ok(v) => Exec::Reply(v),
            Err(e) => {
                *conn = None;
                Exec::Closed(e)
            }
        }
    }

    fn poll_blocked(&mut self, _who: usize) -> Option<Value> {
        None
    }

    /// Sleeps until the schedule's time since the start, not for `ms` more: the time the
    /// commands themselves took does not pile up, so the server's clock stays within a
    /// fraction of a millisecond of the explorer's and TTLs read the same.
    fn advance(&mut self, ms: u64) {
        self.schedule_ms += ms;
        let due = self.started + Duration::from_millis(self.schedule_ms);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }

    fn elapsed_ms(&self) -> i64 {
        self.started.elapsed().as_millis() as i64
    }

    fn crash(&mut self, who: usize) {
        if let Some(c) = self.conns[who].take() {
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
        }
    }

    fn add_fault(&mut self, _fault: &Fault) -> bool {
        false
    }

    fn is_real(&self) -> bool {
        true
    }
}
