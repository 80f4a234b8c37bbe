//! CONFIG SET port: the engine asks the shell, through its `ListenHook`, to listen on another
//! port. The hook binds at once (so CONFIG SET can answer Redis's "Unable to listen on this
//! port" and undo itself) and leaves the new socket here; the accept loop, woken by
//! `changed`, takes it and lets the old port go. Port 0 stops listening on TCP, as in Redis.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::engine::ListenHook;

/// The listener waiting to replace the one the accept loop holds.
#[derive(Default)]
pub(crate) struct Swap {
    /// `Some(None)`: stop listening on TCP; `Some(Some(l))`: accept on `l` from now on.
    next: RefCell<Option<Option<std::net::TcpListener>>>,
    pub(crate) changed: Notify,
}

impl Swap {
    /// The hook the engine calls from CONFIG SET port.
    pub(crate) fn hook(self: &Rc<Swap>) -> ListenHook {
        let swap = self.clone();
        Box::new(move |bind: &str, port: u16| {
            let next = if port == 0 {
                None
            } else {
                let l = std::net::TcpListener::bind((bind, port))?;
                l.set_nonblocking(true)?;
                Some(l)
            };
            *swap.next.borrow_mut() = Some(next);
            swap.changed.notify_one();
            Ok(())
        })
    }

    /// The listener to accept on from now on, if the port changed: `Some(None)` when TCP is
    /// off. The old listener stops taking connections here.
    pub(crate) fn take(&self, old: Option<&TcpListener>) -> Option<Option<Rc<TcpListener>>> {
        let next = self.next.borrow_mut().take()?;
        if let Some(old) = old {
            // Its descriptor may live on elsewhere (the `Server` keeps one to stop it);
            // shutting the socket closes the port for every copy.
            let _ = socket2::SockRef::from(old).shutdown(std::net::Shutdown::Read);
        }
        Some(next.and_then(|l| match TcpListener::from_std(l) {
            Ok(l) => Some(Rc::new(l)),
            Err(e) => {
                tracing::warn!("redlab: cannot accept on the new port: {}", e);
                None
            }
        }))
    }
}

/// The next client on the TCP listener; never resolves while there is none.
pub(crate) async fn accept(
    listener: Option<&TcpListener>,
) -> io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// A client already waiting in the listener's backlog, accepted at once; `None` when there is
/// none (or it could not be set up, and the accept loop meets it again).
///
/// A test connects as soon as `Server::start` returns, usually before the server thread has
/// set the server up. Through tokio, such a connection waits for a turn of the runtime to
/// learn that the listener is readable (an `epoll_wait` and a pass over the tasks) before it
/// is accepted, all of it on the test's first request; taken here, it is served in the same
/// turn that set the server up.
pub(crate) fn accept_waiting(
    listener: Option<&TcpListener>,
) -> Option<(tokio::net::TcpStream, std::net::SocketAddr)> {
    let (socket, peer) = socket2::SockRef::from(listener?).accept().ok()?;
    socket.set_nonblocking(true).ok()?;
    let peer = peer.as_socket()?;
    let stream = tokio::net::TcpStream::from_std(std::net::TcpStream::from(socket)).ok()?;
    Some((stream, peer))
}
