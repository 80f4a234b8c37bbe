//! The in-process transport: an engine with no socket.
//!
//! The engine runs on its own thread (it is single-threaded by design and never shared);
//! connections send it batches over a channel. Replies are encoded and decoded exactly as
//! over TCP, so a test sees byte-for-byte the same values with either transport.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use redlab_server::{Clock, Config, ConnId, Engine, Reply};
use tokio::sync::oneshot;

use crate::codec;
use crate::connection::{BoxFuture, Connection, Transport};
use crate::error::{Error, Result};
use crate::value::Value;

enum Request {
    Connect(oneshot::Sender<ConnId>),
    Batch(ConnId, Vec<Vec<Vec<u8>>>, oneshot::Sender<Vec<u8>>),
    Disconnect(ConnId),
}

/// An engine on a background thread; `connect()` opens connections to it. Dropping the
/// last handle stops the thread.
pub struct InProcess {
    tx: mpsc::Sender<Request>,
    clock: Clock,
}

impl InProcess {
    /// An engine with this configuration and a clock following system time.
    pub fn new(config: Config) -> InProcess {
        InProcess::with_clock(config, Clock::system())
    }

    /// An engine with default options answering as `profile` (`redlab_server::compat`).
    pub fn compat(profile: redlab_server::Profile) -> InProcess {
        let mut config = Config::default();
        config.set_compat(profile);
        InProcess::new(config)
    }

    /// An engine reading time from `clock` (keep a clone to move time).
    pub fn with_clock(config: Config, clock: Clock) -> InProcess {
        let (tx, rx) = mpsc::channel();
        let engine_clock = clock.clone();
        std::thread::Builder::new()
            .name("redlab-inprocess".into())
            .spawn(move || run(Engine::with_clock(config, engine_clock), rx))
            .expect("redlab: spawn the in-process engine thread");
        InProcess { tx, clock }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Opens a connection to the engine.
    pub async fn connect(&self) -> Connection {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Request::Connect(tx));
        let conn = rx.await.expect("redlab: the in-process engine stopped");
        Connection::new(std::sync::Arc::new(self.raw_connect(conn)))
    }

    #[cfg(feature = "redis-rs")]
    /// Opens a connection that exchanges raw RESP bytes (for adapters that decode replies
    /// themselves, such as the redis-rs one).
    pub(crate) async fn connect_raw(&self) -> RawConnection {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Request::Connect(tx));
        let conn = rx.await.expect("redlab: the in-process engine stopped");
        RawConnection(self.raw_connect(conn))
    }

    fn raw_connect(&self, conn: ConnId) -> InProcessTransport {
        InProcessTransport {
            tx: std::sync::Mutex::new(self.tx.clone()),
            conn,
        }
    }
}

/// An in-process connection answering with raw RESP bytes.
#[cfg(feature = "redis-rs")]
pub(crate) struct RawConnection(InProcessTransport);

#[cfg(feature = "redis-rs")]
impl RawConnection {
    pub(crate) async fn exchange(&self, commands: Vec<Vec<Vec<u8>>>) -> Result<Vec<u8>> {
        self.0.exchange_raw(commands).await
    }
}

struct InProcessTransport {
    tx: std::sync::Mutex<mpsc::Sender<Request>>,
    conn: ConnId,
}

impl Drop for InProcessTransport {
    fn drop(&mut self) {
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send(Request::Disconnect(self.conn));
        }
    }
}

impl InProcessTransport {
    async fn exchange_raw(&self, commands: Vec<Vec<Vec<u8>>>) -> Result<Vec<u8>> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .lock()
            .map_err(|_| Error::Connection("in-process engine poisoned".into()))?
            .send(Request::Batch(self.conn, commands, tx))
            .map_err(|_| Error::Connection("in-process engine stopped".into()))?;
        rx.await
            .map_err(|_| Error::Connection("connection closed".into()))
    }
}

impl Transport for InProcessTransport {
    fn exchange<'a>(&'a self, commands: Vec<Vec<Vec<u8>>>) -> BoxFuture<'a, Result<Vec<Value>>> {
        Box::pin(async move {
            let n = commands.len();
            let bytes = self.exchange_raw(commands).await?;
            let mut buf = BytesMut::from(&bytes[..]);
            let mut replies = Vec::with_capacity(n);
            while replies.len() < n {
                match codec::decode(&mut buf, 2)? {
                    Some(v) => replies.push(v),
                    None => {
                        return Err(Error::Connection("connection closed by the server".into()))
                    }
                }
            }
            Ok(replies)
        })
    }
}

/// A batch waiting on a blocked command.
struct Waiting {
    conn: ConnId,
    rest: std::vec::IntoIter<Vec<Vec<u8>>>,
    out: BytesMut,
    reply: oneshot::Sender<Vec<u8>>,
}

/// How often the engine's timers run (blocked-command timeouts, active expiry). Redis checks
/// blocked timeouts before every sleep of its event loop; here the tick runs when the channel
/// has been quiet this long and also, when requests keep coming, once this much time has
/// passed since the last one, so a busy neighbour never starves a BLPOP's timeout.
const TICK: Duration = Duration::from_millis(5);

fn run(mut engine: Engine, rx: mpsc::Receiver<Request>) {
    let mut waiting: Vec<Waiting> = Vec::new();
    let mut last_tick = Instant::now();
    loop {
        let request = rx.recv_timeout(TICK);
        if last_tick.elapsed() >= TICK {
            engine.tick();
            last_tick = Instant::now();
        }
        match request {
            Ok(Request::Connect(tx)) => {
                let _ = tx.send(engine.connect());
            }
            Ok(Request::Disconnect(conn)) => engine.disconnect(conn),
            Ok(Request::Batch(conn, commands, reply)) => {
                let w = Waiting {
                    conn,
                    rest: commands.into_iter(),
                    out: BytesMut::new(),
                    reply,
                };
                if let Some(w) = advance(&mut engine, w) {
                    waiting.push(w);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        // A command may have unblocked others (a push woke a BLPOP).
        let mut still = Vec::new();
        for mut w in waiting.drain(..) {
            let late = engine.take_output(w.conn);
            if late.is_empty() && engine.is_blocked(w.conn) {
                still.push(w);
                continue;
            }
            let resp = engine.resp(w.conn);
            for r in late {
                r.encode(resp, &mut w.out);
            }
            if let Some(w) = advance(&mut engine, w) {
                still.push(w);
            }
        }
        waiting = still;
    }
}

/// Runs the batch until it ends (the reply is sent) or a command blocks (returned to wait).
fn advance(engine: &mut Engine, mut w: Waiting) -> Option<Waiting> {
    for command in w.rest.by_ref() {
        let args: Vec<Bytes> = command.into_iter().map(Bytes::from).collect();
        let reply = engine.execute_args(w.conn, args);
        let resp = engine.resp(w.conn);
        for r in engine.take_output(w.conn) {
            r.encode(resp, &mut w.out);
        }
        if reply == Reply::None && engine.is_blocked(w.conn) {
            return Some(w);
        }
        reply.encode(resp, &mut w.out);
        // QUIT, or closed over its output limit (nothing of that reply was produced): the
        // commands after it never run, and the caller sees the connection closed.
        if engine.should_close(w.conn) || engine.must_close_now(w.conn) {
            break;
        }
    }
    let _ = w.reply.send(w.out.to_vec());
    None
}
