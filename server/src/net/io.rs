//! Per-connection I/O state, registered where the busy-script hook can reach it.
//!
//! Normally a connection's own task reads, parses and writes. While a script runs past
//! busy-reply-threshold that task is not polled (the script holds the one thread), so the
//! busy hook (`busy.rs`) reads and answers the other connections itself, through this same
//! state, with plain non-blocking socket calls. Nothing here is held across an `.await`.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::rc::Rc;
use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use socket2::SockRef;
use tokio::net::{TcpListener, UnixListener};

use super::parser::RequestParser;
use super::stream::NetStream;
use crate::admission::ConnView;
use crate::session::NetMeters;

/// Bytes read from a socket in one go before the requests in them are run.
pub const READ_CHUNK: usize = 64 * 1024;
/// Most bytes written to one socket in one go, so a large backlog is written out in steps
/// between other clients' turns instead of in one long run.
pub const WRITE_STEP: usize = 1 << 20;

pub(crate) struct ConnState {
    pub parser: RequestParser,
    pub rbuf: BytesMut,
    /// Replies not yet written.
    pub wbuf: BytesMut,
    /// The peer closed, or a protocol error means we must close after writing.
    pub closing: bool,
    /// In the flusher's queue (see `flush.rs`).
    pub queued: bool,
    /// The flusher could not write all of `wbuf`: the task writes the rest as the socket
    /// drains, and keeps running the client's requests meanwhile, as Redis does (its output
    /// limits, checked after each reply, and client eviction are what bound the buffer).
    pub write_pending: bool,
    /// The engine's view of this connection after its last command (admission reads it
    /// while a busy script holds the engine).
    pub view: ConnView,
    /// The ACL user the connection runs as, kept with `view` (the busy loop checks its
    /// permissions while the engine is held by the script).
    pub user: String,
    /// What the busy loop answered that the engine's session must learn before this
    /// connection's next command (AUTH, MULTI, WATCH, a transaction flagged...), in order.
    pub catch_up: Vec<super::busy::CatchUp>,
    /// The engine's id of this connection (taken by the busy loop for a connection it
    /// accepts, so its HELLO can name it before the engine has seen it).
    pub conn_id: Option<crate::session::ConnId>,
    /// Commands the busy loop admitted but cannot answer without the engine (HELLO, FUNCTION
    /// STATS during a function): they run, in order, once the script is over; nothing after
    /// them is read until then.
    pub deferred: VecDeque<Vec<Bytes>>,
    /// Sizes reported to the engine (omem, qbuf, client-output-buffer-limit).
    pub meters: Arc<NetMeters>,
    /// The current batch's reads and commands, for the query buffer's model (kept to reuse
    /// its vector).
    pub query_batch: crate::client_query::Batch,
}

impl ConnState {
    /// Reports the buffers' sizes to the engine's copy.
    pub fn report(&self) {
        self.meters.set_unsent(self.wbuf.len());
        NetMeters::set(&self.meters.qbuf, self.qbuf());
        NetMeters::set(
            &self.meters.qbuf_free,
            self.rbuf.capacity() - self.rbuf.len(),
        );
    }

    /// The client's query buffer as Redis counts it: bytes received and not yet run.
    pub fn qbuf(&self) -> usize {
        self.rbuf.len() + self.parser.held_bytes()
    }
}

/// What the network shell needs from the configuration while a script holds the engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct NetConfig {
    /// `Config::generation` this copy was taken at.
    pub generation: u64,
    pub requirepass: Option<String>,
    pub protected_mode: bool,
    pub proto_max_bulk_len: u64,
    pub query_buffer_limit: u64,
    /// For HELLO answered while a script is busy (`Config::hello_server`).
    pub hello_server: &'static str,
    pub hello_version: String,
    /// maxclients: connections beyond it are refused at accept.
    pub maxclients: u64,
}

impl NetConfig {
    /// Redis's protected mode: with no password set, only loopback clients are served.
    pub fn refuses(&self, stream: &NetStream) -> bool {
        self.protected_mode && self.requirepass.is_none() && stream.is_remote()
    }

    pub fn of(c: &crate::Config) -> NetConfig {
        NetConfig {
            generation: c.generation,
            requirepass: c.requirepass.clone().filter(|p| !p.is_empty()),
            protected_mode: c.protected_mode,
            proto_max_bulk_len: c.proto_max_bulk_len,
            query_buffer_limit: c.client_query_buffer_limit,
            hello_server: c.hello_server().0,
            hello_version: c.hello_server().1.to_string(),
            maxclients: c
                .get_by_name("maxclients")
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX),
        }
    }
}

pub(crate) struct ConnIo {
    pub stream: NetStream,
    pub state: RefCell<ConnState>,
    pub notify: super::wake::LocalNotify,
}

impl ConnIo {
    fn new(stream: NetStream, authenticated: bool) -> ConnIo {
        ConnIo {
            stream,
            state: RefCell::new(ConnState {
                parser: RequestParser::new(),
                rbuf: BytesMut::with_capacity(16 * 1024),
                wbuf: BytesMut::with_capacity(16 * 1024),
                closing: false,
                queued: false,
                write_pending: false,
                view: ConnView::fresh(authenticated),
                user: "default".into(),
                catch_up: Vec::new(),
                conn_id: None,
                deferred: VecDeque::new(),
                meters: Arc::default(),
                query_batch: Default::default(),
            }),
            notify: super::wake::LocalNotify::new(),
        }
    }

    /// Reads what the socket has right now, bypassing tokio's readiness cache (which is
    /// stale while a script blocks the runtime). Returns false at end of stream or error.
    pub fn read_now(&self, st: &mut ConnState) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        let mut total = 0;
        while total < READ_CHUNK {
            match (&*SockRef::from(&self.stream)).read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    st.rbuf.extend_from_slice(&chunk[..n]);
                    NetMeters::add(&st.meters.bytes_in, n);
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        true
    }

    /// Reads what the socket has, through tokio. One `read` per batch, as Redis does: a read
    /// that did not fill the buffer space offered has drained the socket, so tokio's
    /// readiness is cleared right there instead of paying a second `read` that fails with
    /// WouldBlock. Returns false at end of stream or error.
    pub fn read_available(&self, st: &mut ConnState) -> bool {
        let mut total = 0;
        while total < READ_CHUNK {
            st.rbuf.reserve(16 * 1024);
            let offered = st.rbuf.capacity() - st.rbuf.len();
            match self.stream.try_read_buf(&mut st.rbuf) {
                Ok(0) => return false,
                Ok(n) if n < offered => {
                    NetMeters::add(&st.meters.bytes_in, n);
                    self.clear_read_readiness();
                    return true;
                }
                Ok(n) => {
                    NetMeters::add(&st.meters.bytes_in, n);
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        true
    }

    /// Marks the socket not readable in tokio's cache after a short read, so the task's next
    /// `readable().await` waits for the next epoll edge. This is what tokio's own `poll_read`
    /// does after a short read, and it cannot lose a wakeup: a TCP read returns less than
    /// asked only when the receive queue is empty, bytes that arrive later raise a new
    /// edge-triggered event, and tokio clears only if no event came in since it looked (its
    /// readiness tick); on this one thread the driver cannot run in between anyway. A peer's
    /// close is not cleared (tokio keeps READ_CLOSED), so end of stream is still seen.
    fn clear_read_readiness(&self) {
        let _ = self.stream.try_io(tokio::io::Interest::READABLE, || {
            Err::<(), _>(io::ErrorKind::WouldBlock.into())
        });
    }

    /// Writes as much of the pending output as the socket takes now, up to `WRITE_STEP`.
    /// Ok(true) when the socket would block (wait for it), Ok(false) when it took everything
    /// or the step is done.
    pub fn write_now(&self, st: &mut ConnState) -> io::Result<bool> {
        let mut written = 0;
        let mut blocked = false;
        while !st.wbuf.is_empty() && written < WRITE_STEP {
            match self
                .stream
                .try_write(&st.wbuf[..st.wbuf.len().min(WRITE_STEP - written)])
            {
                Ok(n) => {
                    st.wbuf.advance(n);
                    NetMeters::add(&st.meters.bytes_out, n);
                    written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    blocked = true;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        st.meters.set_unsent(st.wbuf.len());
        Ok(blocked)
    }

    /// `write_now` without tokio's readiness cache, for the busy hook (a connection
    /// accepted during a script has never been polled, so tokio believes it unwritable).
    pub fn write_raw_now(&self, st: &mut ConnState) {
        while !st.wbuf.is_empty() {
            match (&*SockRef::from(&self.stream)).write(&st.wbuf) {
                Ok(n) => {
                    st.wbuf.advance(n);
                    NetMeters::add(&st.meters.bytes_out, n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        st.meters.set_unsent(st.wbuf.len());
    }

    /// Writes all pending output, waiting for the socket as needed.
    pub async fn flush(&self) -> io::Result<()> {
        loop {
            let blocked = {
                let mut st = self.state.borrow_mut();
                let blocked = self.write_now(&mut st)?;
                if st.wbuf.is_empty() {
                    shrink(&mut st);
                    return Ok(());
                }
                blocked
            };
            if blocked {
                self.stream.writable().await?;
            } else {
                tokio::task::yield_now().await;
            }
        }
    }
}

/// A write buffer that held a large backlog gives its memory back once written.
pub(crate) fn shrink(st: &mut ConnState) {
    if st.wbuf.is_empty() && st.wbuf.capacity() > 1 << 20 {
        st.wbuf = BytesMut::with_capacity(16 * 1024);
    }
}

/// Every open connection of one server, by an I/O id (connections accepted during a busy
/// script have no engine session yet).
#[derive(Default)]
pub(crate) struct Registry {
    conns: RefCell<HashMap<u64, Rc<ConnIo>>>,
    next_id: Cell<u64>,
    pub listener: RefCell<Option<Rc<TcpListener>>>,
    /// The `unixsocket` listener, when one is configured.
    pub unix_listener: RefCell<Option<Rc<UnixListener>>>,
    pub config: RefCell<NetConfig>,
    /// Connections refused at maxclients (INFO rejected_connections); the engine holds the
    /// same counter.
    pub rejected: RefCell<Arc<std::sync::atomic::AtomicU64>>,
}

impl Registry {
    /// A connection just accepted: registered, or, with maxclients connections already open,
    /// told so and closed, as Redis does before it creates the client (best effort: the
    /// error is written only if the socket takes it at once).
    pub fn admit(&self, stream: NetStream) -> Option<(u64, Rc<ConnIo>)> {
        if self.conns.borrow().len() as u64 >= self.config.borrow().maxclients {
            let _ = stream.try_write(crate::errors::MAX_CLIENTS_REACHED_WIRE);
            self.rejected
                .borrow()
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
        Some(self.add(stream))
    }

    pub fn add(&self, stream: NetStream) -> (u64, Rc<ConnIo>) {
        if let NetStream::Tcp(s, _) = &stream {
            let _ = s.set_nodelay(true);
        }
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        let authenticated = self.config.borrow().requirepass.is_none();
        super::busy_poll::watch(stream.as_fd().as_raw_fd());
        let io = Rc::new(ConnIo::new(stream, authenticated));
        self.conns.borrow_mut().insert(id, io.clone());
        (id, io)
    }

    pub fn remove(&self, id: u64) {
        if let Some(io) = self.conns.borrow_mut().remove(&id) {
            super::busy_poll::unwatch(io.stream.as_fd().as_raw_fd());
        }
    }

    pub fn all(&self) -> Vec<Rc<ConnIo>> {
        self.conns.borrow().values().cloned().collect()
    }
}
