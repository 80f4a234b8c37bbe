//! Serving the other connections while a script runs past busy-reply-threshold.
//!
//! This is Redis's `processEventsWhileBlocked`, on redlab's one thread: the script runtime
//! calls the hook built here every few milliseconds; it accepts new connections, reads
//! every other connection's pending requests and answers them as Redis does during a busy
//! script. Whether a command may run is decided by `admission::admit`, the same function the
//! engine's dispatcher calls, from the copy of the connection's state kept on its `ConnState`
//! (so an unauthenticated client gets NOAUTH here too). The commands admitted (Redis's
//! allow-busy ones) are answered here as Redis answers them (the table marks them `BUSY_NET`):
//! SCRIPT KILL, FUNCTION KILL, SHUTDOWN, AUTH, QUIT, and the transaction commands MULTI,
//! DISCARD, WATCH, UNWATCH and RESET, whose effect on the session the engine learns from
//! `ConnState::catch_up` once the script is over. Inside MULTI an admitted command is queued
//! the same way. A refused command flags an open transaction, and a refused EXEC answers
//! EXECABORT and discards it, as Redis's rejectCommand does. HELLO is answered here too, so a
//! client connecting meanwhile completes its handshake (the loop gives a connection it accepts
//! its engine id at once). FUNCTION STATS during a function waits for the script to end
//! (`ConnState::deferred`), and so does all that follows it on its connection. A WATCH answered here registers its keys when the script ends, so
//! writes of the running script do not touch it (in Redis they would).

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use super::io::{ConnIo, ConnState, NetConfig, Registry};
use super::parser::Parsed;
use super::stream::NetStream;
use crate::admission::{self, BusyKind, ConnView};
use crate::busy::{BusyHook, BusyScript, BusyVerdict};
use crate::cmd::table::policy;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;
use crate::session::ConnId;

/// What the engine's session must learn of a request the busy loop answered.
#[derive(Debug)]
pub(crate) enum CatchUp {
    /// AUTH as this user succeeded.
    GrantAuth(Bytes),
    /// Run the command in the engine and drop its reply (it was answered already): MULTI,
    /// DISCARD, WATCH, UNWATCH, RESET, or a command to queue in the open transaction.
    Run(Vec<Bytes>),
    /// A command was refused inside MULTI: EXEC will answer EXECABORT.
    FlagMulti,
    /// EXEC was refused: the transaction is discarded and the keys unwatched.
    DiscardMulti,
    /// A refusal Redis writes to ACL LOG (a failed AUTH, a command the user may not run).
    AclLog(crate::cmd::acl::Refusal),
    /// A request refused (BUSY, NOPERM, NOAUTH, an unknown command, EXECABORT...): Redis's
    /// rejectCommand counts the error reply (INFO errorstats, total_error_replies) and, for a
    /// command it knows, the command's rejected_calls.
    Rejected {
        command: Option<Named>,
        error: String,
    },
    /// A command the busy loop ran itself (AUTH, QUIT, SCRIPT KILL, a refused MULTI...):
    /// one call in INFO commandstats, a failed one with its error counted when it answered
    /// an error, as Redis's call() counts it.
    Answered {
        command: Named,
        error: Option<String>,
    },
}

/// A command from the table with the full name INFO shows (`client|list`).
pub(crate) struct Named(&'static crate::cmd::table::Command, String);

impl std::fmt::Debug for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

/// Applies one `CatchUp` to the engine, before the connection's next command.
pub(crate) fn catch_up(engine: &mut Engine, conn: ConnId, op: CatchUp) {
    match op {
        CatchUp::GrantAuth(user) => engine.grant_auth(conn, &user),
        CatchUp::Run(args) => {
            engine.execute_args(conn, args);
        }
        CatchUp::FlagMulti => engine.flag_transaction(conn),
        CatchUp::DiscardMulti => {
            crate::cmd::transactions::exec_abort(engine, conn, "");
        }
        CatchUp::AclLog(refusal) => crate::cmd::acl::log_refusal(engine, conn, refusal),
        CatchUp::Rejected { command, error } => {
            if let Some(Named(cmd, name)) = command {
                engine.stats.record_rejected(cmd, &name);
            }
            engine.stats.total_error_replies += 1;
            engine.stats.record_error(&error);
        }
        CatchUp::Answered { command, error } => {
            let Named(cmd, name) = command;
            // Answered while the script ran: a call, as Redis's call() counts it.
            engine.stats.total_commands_processed += 1;
            engine.stats.record(cmd, &name, error.is_some(), 0);
            if let Some(error) = error {
                engine.stats.total_error_replies += 1;
                engine.stats.record_error(&error);
            }
        }
    }
}

/// Builds the hook for one server. `spawn` starts the task of a connection accepted
/// while the script runs. `dropped` is set when the `Server` is dropped: the script then
/// stops as by SHUTDOWN NOSAVE, so a dropped server never keeps its thread busy.
pub(crate) fn hook(
    registry: Rc<Registry>,
    spawn: Rc<dyn Fn(u64, Rc<ConnIo>)>,
    conn_ids: Arc<AtomicU64>,
    dropped: Arc<AtomicU8>,
) -> BusyHook {
    Box::new(move |script: &BusyScript| {
        if dropped.load(Ordering::Relaxed) != super::server::RUNNING {
            return BusyVerdict::Shutdown;
        }
        accept_pending(&registry, &*spawn, &conn_ids);
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

fn accept_pending(registry: &Registry, spawn: &dyn Fn(u64, Rc<ConnIo>), conn_ids: &AtomicU64) {
    if let Some(listener) = registry.listener.borrow().clone() {
        while let Ok((socket, peer)) = socket2::SockRef::from(&*listener).accept() {
            let peer = peer.as_socket();
            let std_stream: std::net::TcpStream = socket.into();
            if std_stream.set_nonblocking(true).is_err() {
                continue;
            }
            if let Ok(stream) = tokio::net::TcpStream::from_std(std_stream) {
                admit(registry, spawn, conn_ids, NetStream::Tcp(stream, peer));
            }
        }
    }
    if let Some(listener) = registry.unix_listener.borrow().clone() {
        let path = unix_path(&listener);
        while let Ok((socket, _)) = socket2::SockRef::from(&*listener).accept() {
            let std_stream: std::os::unix::net::UnixStream = socket.into();
            if std_stream.set_nonblocking(true).is_err() {
                continue;
            }
            if let Ok(stream) = tokio::net::UnixStream::from_std(std_stream) {
                admit(
                    registry,
                    spawn,
                    conn_ids,
                    NetStream::Unix(stream, path.clone()),
                );
            }
        }
    }
}

/// The path a Unix listener is bound to, as clients' addresses show it.
pub(crate) fn unix_path(listener: &tokio::net::UnixListener) -> String {
    listener
        .local_addr()
        .ok()
        .and_then(|a| a.as_pathname().map(|p| p.display().to_string()))
        .unwrap_or_default()
}

/// Registers a connection accepted while a script runs and starts its task.
fn admit(
    registry: &Registry,
    spawn: &dyn Fn(u64, Rc<ConnIo>),
    conn_ids: &AtomicU64,
    stream: NetStream,
) {
    let Some((id, io)) = registry.admit(stream) else {
        return;
    };
    // Its engine id now, so a HELLO it sends during the script names it.
    io.state.borrow_mut().conn_id = Some(conn_ids.fetch_add(1, Ordering::Relaxed));
    if registry.config.borrow().refuses(&io.stream) {
        // Refused now, as at any other time; its task only closes it.
        let mut st = io.state.borrow_mut();
        Reply::err(crate::errors::PROTECTED_MODE_DENIED).encode(2, &mut st.wbuf);
        io.write_raw_now(&mut st);
        st.closing = true;
    }
    spawn(id, io);
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
        title: crate::compat::since::busy_title(script.profile),
    };
    let mut denied = None;
    // The profile's view of the table, as the dispatcher's: under redis-7.0 a HEXPIRE sent
    // while a script is busy is an unknown command (Redis looks it up before -BUSY).
    // `rename-command`: looked up by the table's name, as the dispatcher does; the line
    // itself goes on unchanged (what reaches the engine later is translated there).
    let resolved = if script.renames.is_empty() {
        crate::cmd::table::resolve_for(script.profile, &args)
    } else {
        let mut table_line = args.clone();
        if script.renames.translate(&mut table_line) {
            crate::cmd::table::resolve_for(script.profile, &table_line)
        } else {
            Err(Reply::err(errors::unknown_command(&args[0], &args[1..])))
        }
    };
    if resolved.is_err() {
        if let Some((what, since)) = crate::compat::gate::lacking(script.profile, &args) {
            script.compat_report.record(&what, since);
        }
    }
    let admitted = resolved.and_then(|(cmd, name)| {
        // The connection's user's permissions, checked from the users as they were when
        // the script became busy (Redis checks them before -BUSY: a command the user may
        // not run answers NOPERM, one it may run answers BUSY).
        let perm = || {
            let d = match script.users.get(&st.user) {
                Some(u) => crate::acl::check(u, cmd, &name, &args),
                None => Err(crate::acl::Denied {
                    kind: crate::acl::DeniedKind::Command,
                    pos: 0,
                }),
            };
            d.map_err(|d| {
                denied = Some((d, name.clone()));
                crate::cmd::acl::noperm_as(script.profile, &st.user, d, &name)
            })
        };
        admission::admit(cmd, &name, &st.view, Some(kind), false, false, perm).map(|()| (cmd, name))
    });
    let (cmd, name) = match admitted {
        Ok(found) => found,
        Err(e) => {
            if let Some((d, name)) = denied {
                let context = if st.view.in_multi {
                    "multi"
                } else {
                    "toplevel"
                };
                let refusal = crate::cmd::acl::Refusal::denied(d, context, &name, &args);
                st.catch_up.push(CatchUp::AclLog(refusal));
            }
            let reply = refuse(st, &args, e);
            if let Some(error) = reply.error_text() {
                let command = crate::cmd::table::named_command(script.profile, &args)
                    .map(|(cmd, name)| Named(cmd, name.into_owned()));
                let error = error.into_owned();
                st.catch_up.push(CatchUp::Rejected { command, error });
            }
            reply.encode(st.view.resp, &mut st.wbuf);
            return BusyVerdict::Continue;
        }
    };
    if st.view.in_multi && !cmd.policy(policy::NOT_QUEUED) {
        st.catch_up.push(CatchUp::Run(args));
        Reply::Status("QUEUED".into()).encode(st.view.resp, &mut st.wbuf);
        return BusyVerdict::Continue;
    }
    // Admitted but needing the engine (REDLAB.CLOCK, REDLAB.FAULT): after the script.
    if !cmd.policy(policy::BUSY_NET) {
        st.deferred.push_back(args);
        return BusyVerdict::Continue;
    }
    let before = st.catch_up.len();
    let (reply, verdict) = match &*name {
        "hello" if st.conn_id.is_some() => (
            hello(st, args, config, &script.users),
            BusyVerdict::Continue,
        ),
        "multi" | "discard" | "watch" | "unwatch" | "reset" => (
            transaction_command(st, &name, args, &script.users),
            BusyVerdict::Continue,
        ),
        "script|kill" | "function|kill" => {
            if (name == "function|kill") != script.is_function {
                // Redis answers a KILL of the other kind of script with -BUSY.
                (admission::busy_error(kind), BusyVerdict::Continue)
            } else if script.has_written {
                (Reply::err(errors::UNKILLABLE), BusyVerdict::Continue)
            } else {
                (Reply::ok(), BusyVerdict::Kill)
            }
        }
        "shutdown" if args.len() == 2 && args[1].eq_ignore_ascii_case(b"nosave") => {
            (Reply::None, BusyVerdict::Shutdown)
        }
        // No shutdown can be in progress while the script holds the server.
        "shutdown" if args.len() == 2 && args[1].eq_ignore_ascii_case(b"abort") => (
            Reply::err(errors::NO_SHUTDOWN_IN_PROGRESS),
            BusyVerdict::Continue,
        ),
        // Any other SHUTDOWN would have to save, or wait for the script: Redis refuses it.
        "shutdown" => (admission::busy_error(kind), BusyVerdict::Continue),
        "function|stats" => match &script.function {
            Some(f) => (
                crate::cmd::functions::stats_reply(
                    Some((f, script.elapsed_ms)),
                    f.libraries,
                    f.functions,
                ),
                BusyVerdict::Continue,
            ),
            None => (admission::busy_error(kind), BusyVerdict::Continue),
        },
        "auth" => match crate::cmd::connection::check_auth(&script.users, &args) {
            Ok(user) => {
                let user = Bytes::copy_from_slice(user);
                log_in(st, &user, &script.users);
                st.catch_up.push(CatchUp::GrantAuth(user));
                (Reply::ok(), BusyVerdict::Continue)
            }
            Err(text) => {
                if text == errors::WRONGPASS {
                    let user: &[u8] = if args.len() == 3 {
                        &args[1]
                    } else {
                        b"default"
                    };
                    let refusal = crate::cmd::acl::Refusal::auth(&args[0], user, st.view.in_multi);
                    st.catch_up.push(CatchUp::AclLog(refusal));
                }
                (Reply::err(text), BusyVerdict::Continue)
            }
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
    // What the engine runs again afterwards (CatchUp::Run) is counted there.
    if !st.catch_up[before..]
        .iter()
        .any(|c| matches!(c, CatchUp::Run(_)))
    {
        let error = reply.error_text().map(|e| e.into_owned());
        let command = Named(cmd, name.into_owned());
        st.catch_up.push(CatchUp::Answered { command, error });
    }
    reply.encode(st.view.resp, &mut st.wbuf);
    verdict
}

/// The connection's copy of its state after logging in as `user` (AUTH or HELLO AUTH while
/// the script runs), as the engine's login sets the session.
fn log_in(st: &mut ConnState, user: &[u8], users: &crate::acl::Users) {
    let name = String::from_utf8_lossy(user).into_owned();
    st.view.authenticated = true;
    st.view.acl_free = users.get(&name).is_some_and(crate::acl::User::unrestricted);
    st.user = name;
}

/// A request refused during the busy script (Redis's rejectCommand): an open transaction is
/// flagged; a refused EXEC answers EXECABORT and discards the transaction.
fn refuse(st: &mut ConnState, args: &[Bytes], err: Reply) -> Reply {
    if args[0].eq_ignore_ascii_case(b"exec") {
        let Reply::Error(text) = &err else {
            return err;
        };
        st.view.in_multi = false;
        st.catch_up.push(CatchUp::DiscardMulti);
        return Reply::err(errors::execabort_because(text));
    }
    if st.view.in_multi {
        st.catch_up.push(CatchUp::FlagMulti);
    }
    err
}

/// MULTI, DISCARD, WATCH, UNWATCH and RESET while the script runs: answered from the
/// connection's view as the engine would answer them, and run in the engine afterwards.
fn transaction_command(
    st: &mut ConnState,
    name: &str,
    args: Vec<Bytes>,
    users: &crate::acl::Users,
) -> Reply {
    let view = &mut st.view;
    let reply = match name {
        "multi" if view.in_multi => return Reply::err(errors::MULTI_NESTED),
        "multi" => {
            view.in_multi = true;
            Reply::ok()
        }
        "discard" if !view.in_multi => return Reply::err(errors::DISCARD_WITHOUT_MULTI),
        "discard" => {
            view.in_multi = false;
            Reply::ok()
        }
        "watch" if view.in_multi => return Reply::err(errors::WATCH_IN_MULTI),
        "reset" => {
            // RESET leaves the connection as a new one: RESP2, no transaction, the
            // `default` user, and authenticated only if that user needs no password.
            let default = users.get("default");
            *view = ConnView::fresh(default.is_some_and(|d| d.enabled && d.nopass));
            view.acl_free = default.is_some_and(crate::acl::User::unrestricted);
            st.user = "default".into();
            Reply::Status("RESET".into())
        }
        _ => Reply::ok(),
    };
    st.catch_up.push(CatchUp::Run(args));
    reply
}

/// HELLO while the script runs: decided as the engine decides it (`plan_hello`), answered in
/// the protocol it switches to, and run in the engine afterwards for its effects.
fn hello(
    st: &mut ConnState,
    args: Vec<Bytes>,
    config: &NetConfig,
    users: &crate::acl::Users,
) -> Reply {
    let plan = match crate::cmd::connection::plan_hello(
        &args,
        |u, p| crate::acl::authenticate_in(users, u, p),
        st.view.authenticated,
    ) {
        Ok(plan) => plan,
        Err(e) => {
            if e == Reply::err(errors::WRONGPASS) {
                let refusal = crate::cmd::connection::hello_auth_refusal(&args, st.view.in_multi);
                st.catch_up.push(CatchUp::AclLog(refusal));
            }
            return e;
        }
    };
    if let (true, Some(u)) = (plan.authenticates, plan.user) {
        log_in(st, &args[u], users);
    }
    if let Some(v) = plan.version {
        st.view.resp = v;
    }
    let id = st.conn_id.unwrap_or_default();
    st.catch_up.push(CatchUp::Run(args));
    crate::cmd::connection::hello_reply(
        (config.hello_server, &config.hello_version),
        st.view.resp,
        id,
    )
}
