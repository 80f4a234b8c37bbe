//! CONFIG SET port and bind: the engine asks the shell, through its `ListenHook`, to listen
//! on another port or addresses. The hook binds at once (so CONFIG SET can answer Redis's
//! "Unable to listen on this port" or "Failed to bind to specified addresses" and undo
//! itself) and leaves the new socket here; the accept loop, woken by `changed`, takes it and
//! lets the old one go. Port 0 or an empty `bind` stops listening on TCP, as in Redis.

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
                bind_addresses(bind, port)?
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

/// The listener for `bind` (Redis's list of addresses; `-` marks one that may be missing,
/// `*` is every IPv4 address and `::*` every IPv6 one) on `port`, non-blocking; None for an
/// empty list, which listens on no TCP address.
///
/// redis-server listens on every address of the list; redlab accepts on one listener, the
/// first address it could bind (a difference noted in tests/conformance/DIFFERENCES.md).
/// The others are bound too, to check them, and let go: as in Redis, an address that cannot
/// be bound refuses the whole list unless it is marked optional. IPv6 sockets are IPv6-only,
/// as Redis makes them, so `* ::*` on one port is two sockets, not a conflict.
pub(crate) fn bind_addresses(bind: &str, port: u16) -> io::Result<Option<std::net::TcpListener>> {
    let mut first = None;
    for word in bind.split_whitespace() {
        let optional = word.starts_with('-');
        let addr = match word.trim_start_matches('-') {
            "*" => "0.0.0.0",
            "::*" => "::",
            a => a,
        };
        match bind_one(addr, port) {
            Ok(l) if first.is_none() => first = Some(l),
            Ok(_) => {}
            Err(_) if optional => {}
            Err(e) => return Err(e),
        }
    }
    Ok(first)
}

fn bind_one(addr: &str, port: u16) -> io::Result<std::net::TcpListener> {
    use std::net::ToSocketAddrs;
    let sa = (addr, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::from(io::ErrorKind::AddrNotAvailable))?;
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(sa),
        socket2::Type::STREAM,
        None,
    )?;
    if sa.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&sa.into())?;
    // Redis's tcp-backlog default.
    socket.listen(511)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    use super::bind_addresses;

    #[test]
    fn every_address_is_checked_and_the_first_is_listened_on() {
        let l = bind_addresses("127.0.0.1 -::1", 0).unwrap().unwrap();
        assert!(l.local_addr().unwrap().ip().is_loopback());
        // An optional address that is not this machine's is skipped; a required one
        // refuses the list.
        let l = bind_addresses("-10.255.255.254 127.0.0.1", 0)
            .unwrap()
            .unwrap();
        assert_eq!(l.local_addr().unwrap().ip().to_string(), "127.0.0.1");
        assert!(bind_addresses("127.0.0.1 10.255.255.254", 0).is_err());
        assert!(bind_addresses("999.999.999.999", 0).is_err());
        assert!(bind_addresses("", 0).unwrap().is_none());
        // `*` and `::*` on one port are two sockets, as Redis's IPv6-only ones.
        let any = bind_addresses("* -::*", 0).unwrap().unwrap();
        let port = any.local_addr().unwrap().port();
        drop(any);
        let both = bind_addresses("* -::*", port).unwrap().unwrap();
        assert!(both.local_addr().unwrap().ip().is_unspecified());
    }
}
