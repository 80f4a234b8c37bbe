//! One client connection: read, parse, execute on the engine, write.
//!
//! The task never holds the engine or its own state across an `.await`: it borrows them
//! for one read batch, runs every complete request in the batch, and writes all the replies
//! in one go (so a pipeline costs one write). Output produced for this connection by others
//! (pub/sub messages, a blocked command's late reply, CLIENT KILL) arrives through its
//! `Notify`.

use std::rc::Rc;

use super::io::{ConnIo, ConnState};
use super::parser::Parsed;
use super::server::Shared;
use crate::reply::Reply;
use crate::session::ConnId;

pub(crate) async fn serve(shared: Rc<Shared>, io_id: u64, io: Rc<ConnIo>) {
    let addr = io.stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let laddr = io.stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let conn = shared.engine.borrow_mut().connect_from(&addr, &laddr);
    shared.attach(conn, io.clone());
    loop {
        let close = {
            let mut st = io.state.borrow_mut();
            if !st.closing && !io.read_available(&mut st) {
                st.closing = true;
            }
            handle_batch(&shared, conn, &mut st) || st.closing
        };
        if io.flush().await.is_err() || close {
            break;
        }
        tokio::select! {
            r = io.stream.readable() => if r.is_err() { break },
            _ = io.notify.notified() => {}
        }
    }
    shared.engine.borrow_mut().disconnect(conn);
    shared.detach(conn);
    shared.registry.remove(io_id);
}

/// Runs every complete request in the read buffer; returns true when the connection must
/// close once its output is written.
fn handle_batch(shared: &Shared, conn: ConnId, st: &mut ConnState) -> bool {
    let mut engine = shared.engine.borrow_mut();
    let mut close = false;
    drain_output(&mut engine, conn, st);
    while !engine.is_blocked(conn) && !engine.should_close(conn) {
        let max_bulk = engine.config().proto_max_bulk_len;
        let authed = engine.is_authenticated(conn);
        match st.parser.next(&mut st.rbuf, max_bulk, authed) {
            Ok(Parsed::Command(args)) => {
                let reply = engine.execute_args(conn, args);
                drain_output(&mut engine, conn, st);
                reply.encode(engine.resp(conn), &mut st.wbuf);
            }
            Ok(Parsed::Empty) => {}
            Ok(Parsed::Incomplete) => break,
            Err(e) => {
                Reply::Error(e.0).encode(engine.resp(conn), &mut st.wbuf);
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

fn drain_output(engine: &mut crate::Engine, conn: ConnId, st: &mut ConnState) {
    let resp = engine.resp(conn);
    for r in engine.take_output(conn) {
        r.encode(resp, &mut st.wbuf);
    }
}
