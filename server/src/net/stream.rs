//! A client's socket: TCP, or the Unix domain socket Redis also listens on (`unixsocket`).
//!
//! The connection code needs the same few non-blocking calls from both; this enum forwards
//! them, so the rest of the shell does not care which listener a client came through.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd};
use std::task::{Context, Poll};

use bytes::BytesMut;
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

pub(crate) enum NetStream {
    /// A TCP client, and its address as accept returned it (asking the socket again costs a
    /// system call per use, and a connection's setup used it twice).
    Tcp(TcpStream, Option<SocketAddr>),
    /// A Unix socket client, and the path of the socket it came through (Redis shows that
    /// path as the client's address, with port 0).
    Unix(UnixStream, String),
}

impl NetStream {
    pub fn try_read_buf(&self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            NetStream::Tcp(s, _) => s.try_read_buf(buf),
            NetStream::Unix(s, _) => s.try_read_buf(buf),
        }
    }

    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            NetStream::Tcp(s, _) => s.try_write(buf),
            NetStream::Unix(s, _) => s.try_write(buf),
        }
    }

    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        match self {
            NetStream::Tcp(s, _) => s.try_io(interest, f),
            NetStream::Unix(s, _) => s.try_io(interest, f),
        }
    }

    pub async fn readable(&self) -> io::Result<()> {
        match self {
            NetStream::Tcp(s, _) => s.readable().await,
            NetStream::Unix(s, _) => s.readable().await,
        }
    }

    /// Read readiness through the socket's one reader waker slot (the connection's own task
    /// is the only one that waits to read it): no waiter is linked into tokio's list and
    /// unlinked again on every wait, as `readable()` does.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            NetStream::Tcp(s, _) => s.poll_read_ready(cx),
            NetStream::Unix(s, _) => s.poll_read_ready(cx),
        }
    }

    pub async fn writable(&self) -> io::Result<()> {
        match self {
            NetStream::Tcp(s, _) => s.writable().await,
            NetStream::Unix(s, _) => s.writable().await,
        }
    }

    /// The peer's address as CLIENT LIST shows it (`ip:port`, or `path:0`).
    pub fn peer_text(&self) -> String {
        match self {
            NetStream::Tcp(s, peer) => peer
                .map(Ok)
                .unwrap_or_else(|| s.peer_addr())
                .map(|a| a.to_string())
                .unwrap_or_default(),
            NetStream::Unix(_, path) => format!("{}:0", path),
        }
    }

    /// The local address as CLIENT LIST shows it (`laddr`).
    pub fn local_text(&self) -> String {
        match self {
            NetStream::Tcp(s, _) => s.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            NetStream::Unix(_, path) => format!("{}:0", path),
        }
    }

    /// Whether the peer is on another host (protected mode refuses those). A Unix socket
    /// client is always local.
    pub fn is_remote(&self) -> bool {
        match self {
            NetStream::Tcp(s, peer) => peer
                .map(Ok)
                .unwrap_or_else(|| s.peer_addr())
                .is_ok_and(|a| !a.ip().is_loopback() && !a.ip().to_canonical().is_loopback()),
            NetStream::Unix(..) => false,
        }
    }
}

impl AsFd for NetStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            NetStream::Tcp(s, _) => s.as_fd(),
            NetStream::Unix(s, _) => s.as_fd(),
        }
    }
}
