//! One client connection: read, parse, execute on the engine, write.
//!
//! The task never holds the engine across an `.await`: it borrows it for one read batch,
//! runs every complete request in the batch, and writes all the replies in one go (so a
//! pipeline costs one write). Output produced for this connection by others (pub/sub
//! messages, a blocked command's late reply, CLIENT KILL) arrives through its `Notify`.

use std::rc::Rc;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::parser::{Parsed, RequestParser};
use super::server::Shared;
use crate::reply::Reply;
use crate::session::ConnId;

pub(crate) async fn serve(shared: Rc<Shared>, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let addr = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let laddr = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let conn = shared.engine.borrow_mut().connect_from(&addr, &laddr);
    let notify = shared.register(conn);
    let mut parser = RequestParser::new();
    let mut rbuf = BytesMut::with_capacity(16 * 1024);
    let mut wbuf = BytesMut::with_capacity(16 * 1024);
    loop {
        let mut eof = false;
        tokio::select! {
            r = stream.read_buf(&mut rbuf) => match r {
                Ok(0) | Err(_) => eof = true,
                Ok(_) => {}
            },
            _ = notify.notified() => {}
        }
        if rbuf.capacity() - rbuf.len() < 4096 {
            rbuf.reserve(16 * 1024);
        }
        let close = handle_batch(&shared, conn, &mut parser, &mut rbuf, &mut wbuf);
        if !wbuf.is_empty() {
            if stream.write_all(&wbuf).await.is_err() {
                break;
            }
            wbuf.clear();
            if wbuf.capacity() > 1 << 20 {
                wbuf = BytesMut::with_capacity(16 * 1024);
            }
        }
        if close || eof {
            break;
        }
    }
    shared.engine.borrow_mut().disconnect(conn);
    shared.unregister(conn);
}

/// Runs every complete request in `rbuf`; returns true when the connection must close.
fn handle_batch(shared: &Shared, conn: ConnId, parser: &mut RequestParser, rbuf: &mut BytesMut, wbuf: &mut BytesMut) -> bool {
    let mut engine = shared.engine.borrow_mut();
    let mut close = false;
    drain_output(&mut engine, conn, wbuf);
    while !engine.is_blocked(conn) && !engine.should_close(conn) {
        let max_bulk = engine.config().proto_max_bulk_len;
        let authed = engine.is_authenticated(conn);
        match parser.next(rbuf, max_bulk, authed) {
            Ok(Parsed::Command(args)) => {
                let reply = engine.execute_args(conn, args);
                drain_output(&mut engine, conn, wbuf);
                reply.encode(engine.resp(conn), wbuf);
            }
            Ok(Parsed::Empty) => {}
            Ok(Parsed::Incomplete) => break,
            Err(e) => {
                Reply::Error(e.0).encode(engine.resp(conn), wbuf);
                close = true;
                break;
            }
        }
    }
    close |= engine.should_close(conn);
    if engine.shutdown_requested() {
        shared.shutdown.notify_one();
    }
    let woken = engine.take_wakeups();
    drop(engine);
    for c in woken {
        if c != conn {
            shared.wake(c);
        }
    }
    close
}

fn drain_output(engine: &mut crate::Engine, conn: ConnId, wbuf: &mut BytesMut) {
    let resp = engine.resp(conn);
    for r in engine.take_output(conn) {
        r.encode(resp, wbuf);
    }
}
