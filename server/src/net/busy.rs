//! Serving the other connections while a script runs past busy-reply-threshold.
//!
//! This is Redis's `processEventsWhileBlocked`, on redlab's one thread: the script runtime
//! calls the hook built here every few milliseconds; it accepts new connections, reads
//! every other connection's pending requests and answers them as Redis does during a busy
//! script. Whether a command may run is decided by `admission::admit`, the same function the
//! engine's dispatcher calls, from the copy of the connection's state kept on its `ConnState`
//! (so an unauthenticated client gets NOAUTH here too). Of the commands admitted, the ones
//! that only need the network side run here (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE,
//! AUTH, QUIT); the others wait for the script to end (`ConnState::deferred`).

use std::rc::Rc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use super::io::{ConnIo, ConnState, NetConfig, Registry};
use super::parser::Parsed;
use crate::admission::{self, BusyKind};
use crate::busy::{BusyHook, BusyScript, BusyVerdict};
use crate::reply::Reply;

const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";

/// Builds the hook for one server. `spawn` starts the task of a connection accepted
/// while the script runs. `dropped` is set when the `Server` is dropped: the script then
/// stops as by SHUTDOWN NOSAVE, so a dropped server never keeps its thread busy.
pub(crate) fn hook(
    registry: Rc<Registry>,
    spawn: Rc<dyn Fn(u64, Rc<ConnIo>)>,
    dropped: Arc<AtomicU8>,
) -> BusyHook {
    Box::new(move |script: &BusyScript| {
        if dropped.load(Ordering::Relaxed) != super::server::RUNNING {
            return BusyVerdict::Shutdown;
        }
        accept_pending(&registry, &*spawn);
        let config = registry.config.borrow().clone();
        let mut verdict = BusyVerdict::Continue;
        for io in registry.all() {
            // The connection running the script holds its own state: skip it.
            let Ok(mut st) = io.state.try_borrow_mut() else {
                continue;
            };
            if st.closing {
                continue;
            }
            // A connection waiting for the script to end is not read further.
            if st.deferred.is_empty() && !io.read_now(&mut st) {
                st.closing = true;
            }
            if super::conn::over_query_limit(&st, &config) {
                st.closing = true;
                st.rbuf.clear();
            }
            let v = answer_requests(&mut st, script, &config);
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
            if registry.config.borrow().refuses(&io.stream) {
                // Refused now, as at any other time; its task only closes it.
                let mut st = io.state.borrow_mut();
                Reply::err(crate::errors::PROTECTED_MODE_DENIED).encode(2, &mut st.wbuf);
                io.write_raw_now(&mut st);
                st.closing = true;
            }
            spawn(id, io);
        }
    }
}

/// Answers every complete request in the buffer; returns what the script must do.
fn answer_requests(st: &mut ConnState, script: &BusyScript, config: &NetConfig) -> BusyVerdict {
    let mut verdict = BusyVerdict::Continue;
    // Once a command waits for the engine, everything after it waits too (replies stay in order).
    while st.deferred.is_empty() {
        let ConnState {
            parser,
            rbuf,
            wbuf,
            view,
            ..
        } = st;
        match parser.next(rbuf, config.proto_max_bulk_len, view.authenticated) {
            Ok(Parsed::Command(args)) => {
                let v = run(st, args, script, config);
                if v != BusyVerdict::Continue {
                    verdict = v;
                }
            }
            Ok(Parsed::Empty) => {}
            Ok(Parsed::Incomplete) => return verdict,
            Err(e) => {
                Reply::Error(e.0).encode(st.view.resp, wbuf);
                st.closing = true;
                return verdict;
            }
        }
        if st.closing {
            break;
        }
    }
    verdict
}

/// One request during the busy script: resolved and admitted as the engine would, then run
/// here when it needs no engine, or deferred.
fn run(
    st: &mut ConnState,
    args: Vec<Bytes>,
    script: &BusyScript,
    config: &NetConfig,
) -> BusyVerdict {
    let kind = BusyKind {
        is_function: script.is_function,
    };
    let admitted = crate::engine::resolve(&args).and_then(|(cmd, name)| {
        admission::admit(cmd, &name, &st.view, Some(kind), false).map(|()| name)
    });
    let name = match admitted {
        Ok(name) => name,
        Err(e) => {
            e.encode(st.view.resp, &mut st.wbuf);
            return BusyVerdict::Continue;
        }
    };
    let (reply, verdict) = match &*name {
        "script|kill" | "function|kill" => {
            if (name == "function|kill") != script.is_function {
                // Redis answers a KILL of the other kind of script with -BUSY.
                (admission::busy_error(kind), BusyVerdict::Continue)
            } else if script.has_written {
                (Reply::err(UNKILLABLE), BusyVerdict::Continue)
            } else {
                (Reply::ok(), BusyVerdict::Kill)
            }
        }
        "shutdown" if args.len() == 2 && args[1].eq_ignore_ascii_case(b"nosave") => {
            (Reply::None, BusyVerdict::Shutdown)
        }
        // Any other SHUTDOWN would have to save, or wait for the script: Redis refuses it.
        "shutdown" => (admission::busy_error(kind), BusyVerdict::Continue),
        "function|stats" if !script.is_function => {
            (admission::busy_error(kind), BusyVerdict::Continue)
        }
        "auth" => match crate::cmd::connection::check_auth(config.requirepass.as_deref(), &args) {
            Ok(()) => {
                st.view.authenticated = true;
                st.auth_granted = true;
                (Reply::ok(), BusyVerdict::Continue)
            }
            Err(text) => (Reply::err(text), BusyVerdict::Continue),
        },
        "quit" => {
            st.closing = true;
            (Reply::ok(), BusyVerdict::Continue)
        }
        _ => {
            st.deferred.push_back(args);
            return BusyVerdict::Continue;
        }
    };
    reply.encode(st.view.resp, &mut st.wbuf);
    verdict
}
