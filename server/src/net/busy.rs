//! Serving the other connections while a script runs past busy-reply-threshold.
//!
//! This is Redis's `processEventsWhileBlocked`, on redlab's one thread: the script runtime
//! calls the hook built here every few milliseconds; it accepts new connections, reads
//! every other connection's pending requests and answers them as Redis does during a busy
//! script: -BUSY for everything, except SCRIPT KILL / FUNCTION KILL (matching the kind of
//! script running) and SHUTDOWN NOSAVE, which stop the script.

use std::rc::Rc;

use bytes::Bytes;

use super::io::{ConnIo, ConnState, Registry};
use super::parser::Parsed;
use crate::busy::{BusyHook, BusyScript, BusyVerdict};
use crate::reply::Reply;

const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";

/// Builds the hook for one server. `spawn` starts the task of a connection accepted
/// while the script runs.
pub(crate) fn hook(registry: Rc<Registry>, spawn: Rc<dyn Fn(u64, Rc<ConnIo>)>, max_bulk: u64) -> BusyHook {
    Box::new(move |script: &BusyScript| {
        accept_pending(&registry, &*spawn);
        let mut verdict = BusyVerdict::Continue;
        for io in registry.all() {
            // The connection running the script holds its own state: skip it.
            let Ok(mut st) = io.state.try_borrow_mut() else {
                continue;
            };
            if st.closing {
                continue;
            }
            if !io.read_now(&mut st) {
                st.closing = true;
            }
            let v = answer_requests(&mut st, script, max_bulk);
            if v != BusyVerdict::Continue {
                verdict = v;
            }
            io.write_raw_now(&mut st);
            drop(st);
            io.notify.notify_one();
        }
        verdict
    })
}

fn accept_pending(registry: &Registry, spawn: &dyn Fn(u64, Rc<ConnIo>)) {
    let Some(listener) = registry.listener.borrow().clone() else {
        return;
    };
    loop {
        let accepted = socket2::SockRef::from(&*listener).accept();
        let Ok((socket, _)) = accepted else {
            return;
        };
        let std_stream: std::net::TcpStream = socket.into();
        if std_stream.set_nonblocking(true).is_err() {
            continue;
        }
        if let Ok(stream) = tokio::net::TcpStream::from_std(std_stream) {
            let (id, io) = registry.add(stream);
            spawn(id, io);
        }
    }
}

/// Answers every complete request in the buffer; returns what the script must do.
fn answer_requests(st: &mut ConnState, script: &BusyScript, max_bulk: u64) -> BusyVerdict {
    let mut verdict = BusyVerdict::Continue;
    loop {
        let ConnState { parser, rbuf, wbuf, .. } = st;
        match parser.next(rbuf, max_bulk, true) {
            Ok(Parsed::Command(args)) => {
                let (reply, v) = busy_reply(&args, script);
                // The protocol does not matter here: the replies are errors and +OK.
                reply.encode(2, wbuf);
                if v != BusyVerdict::Continue {
                    verdict = v;
                }
            }
            Ok(Parsed::Empty) => {}
            Ok(Parsed::Incomplete) => return verdict,
            Err(e) => {
                Reply::Error(e.0).encode(2, wbuf);
                st.closing = true;
                return verdict;
            }
        }
    }
}

fn busy_reply(args: &[Bytes], script: &BusyScript) -> (Reply, BusyVerdict) {
    let is = |i: usize, word: &str| args.get(i).is_some_and(|a| a.eq_ignore_ascii_case(word.as_bytes()));
    let kill_matches = args.len() == 2
        && is(1, "kill")
        && ((is(0, "script") && !script.is_function) || (is(0, "function") && script.is_function));
    if kill_matches {
        if script.has_written {
            return (Reply::err(UNKILLABLE), BusyVerdict::Continue);
        }
        return (Reply::ok(), BusyVerdict::Kill);
    }
    if is(0, "shutdown") && args.len() == 2 && is(1, "nosave") {
        return (Reply::None, BusyVerdict::Shutdown);
    }
    let kill = if script.is_function { "FUNCTION" } else { "SCRIPT" };
    (
        Reply::err(format!("BUSY Redis is busy running a script. You can only call {} KILL or SHUTDOWN NOSAVE.", kill)),
        BusyVerdict::Continue,
    )
}
