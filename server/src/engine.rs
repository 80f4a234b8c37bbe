//! `Engine`: the whole server state and the one place a command is executed.
//!
//! The engine is a plain synchronous struct with no I/O and no locks: `execute` takes a
//! connection id and the arguments and returns the reply. Redis's atomicity comes from one
//! thread running every command and script start to finish; here it comes from `&mut self`.
//! The network shell, the in-process client and the explorer all drive this same struct.

use std::collections::HashMap;

use bytes::Bytes;
use foldhash::fast::FixedState;

use crate::clock::Clock;
use crate::cmd::table::{self, flags, Command};
use crate::config::Config;
use crate::db::Db;
use crate::errors;
use crate::faults::Faults;
use crate::lua::Scripting;
use crate::notify;
use crate::reply::Reply;
use crate::session::{Blocked, ConnId, ReplyMode, Session};
use crate::stats::Stats;

/// One command as a handler sees it.
#[derive(Debug)]
pub struct Call {
    pub conn: ConnId,
    /// The database the connection has selected.
    pub db: usize,
    /// The protocol the reply will be encoded in (2 or 3); inside a script, the script's.
    pub resp: u8,
    /// The arguments, the command name at index 0.
    pub args: Vec<Bytes>,
    pub in_script: bool,
    pub in_multi: bool,
    /// A blocked command run again because one of its keys got data: it must not block again.
    pub reprocessing: bool,
}

impl Call {
    pub fn arg(&self, i: usize) -> &[u8] {
        &self.args[i]
    }

    pub fn argc(&self) -> usize {
        self.args.len()
    }
}

/// The Redis-compatible engine. See the module documentation.
pub struct Engine {
    pub(crate) config: Config,
    pub(crate) clock: Clock,
    pub(crate) dbs: Vec<Db>,
    pub(crate) sessions: HashMap<ConnId, Session, FixedState>,
    pub(crate) next_conn_id: ConnId,
    /// "Now" for the command being executed, in Unix ms; frozen for a script's duration.
    pub(crate) now_ms: i64,
    /// Set while a script (or MULTI) runs: time stands still at its start.
    pub(crate) time_frozen: bool,
    pub(crate) stats: Stats,
    /// (db, key) -> connections watching it.
    pub(crate) watched_keys: HashMap<(usize, Vec<u8>), Vec<ConnId>, FixedState>,
    pub(crate) pubsub: crate::cmd::pubsub::PubSub,
    /// (db, key) -> blocked connections in arrival order.
    pub(crate) blocking_keys: HashMap<(usize, Vec<u8>), Vec<ConnId>, FixedState>,
    /// Keys that received data while clients wait on them; served after the command.
    pub(crate) ready_keys: Vec<(usize, Vec<u8>)>,
    /// Connections with new output in their outbox, for the shell to wake.
    pub(crate) wakeups: Vec<ConnId>,
    pub(crate) monitors: Vec<ConnId>,
    pub(crate) scripting: Scripting,
    pub(crate) faults: Faults,
    pub(crate) active_expire: bool,
    /// notify-keyspace-events, parsed.
    pub(crate) notify_flags: u32,
    pub(crate) shutdown_requested: bool,
    pub(crate) started_ms: i64,
    /// Changes since the last SAVE (INFO rdb_changes_since_last_save).
    pub(crate) dirty: u64,
    pub(crate) last_save_s: i64,
}

impl Engine {
    /// An engine following system time.
    pub fn new(config: Config) -> Engine {
        Engine::with_clock(config, Clock::system())
    }

    /// An engine reading time from `clock` (share it to control time from a test).
    pub fn with_clock(config: Config, clock: Clock) -> Engine {
        let now = clock.now_ms();
        let dbs = (0..config.databases.max(1)).map(|_| Db::new()).collect();
        let notify_flags = notify::parse_flags(&config.notify_keyspace_events).unwrap_or(0);
        Engine {
            config,
            clock,
            dbs,
            sessions: HashMap::default(),
            next_conn_id: 1,
            now_ms: now,
            time_frozen: false,
            stats: Stats::default(),
            watched_keys: HashMap::default(),
            pubsub: Default::default(),
            blocking_keys: HashMap::default(),
            ready_keys: Vec::new(),
            wakeups: Vec::new(),
            monitors: Vec::new(),
            scripting: Scripting::default(),
            faults: Faults::default(),
            active_expire: true,
            notify_flags,
            shutdown_requested: false,
            started_ms: now,
            dirty: 0,
            last_save_s: now / 1000,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Opens a connection and returns its id (also its CLIENT ID).
    pub fn connect(&mut self) -> ConnId {
        self.connect_from("127.0.0.1:0", "127.0.0.1:0")
    }

    /// Opens a connection with its peer and local addresses (for CLIENT LIST).
    pub fn connect_from(&mut self, addr: &str, laddr: &str) -> ConnId {
        let id = self.next_conn_id;
        self.next_conn_id += 1;
        let now = self.clock.now_ms();
        let mut s = Session::new(id, now, self.config.requirepass.is_none());
        s.addr = addr.to_string();
        s.laddr = laddr.to_string();
        self.sessions.insert(id, s);
        self.stats.total_connections_received += 1;
        id
    }

    /// Closes a connection: its subscriptions, watches and blocked command go with it.
    pub fn disconnect(&mut self, conn: ConnId) {
        self.unwatch_all(conn);
        self.unblock(conn);
        crate::cmd::pubsub::unsubscribe_all(self, conn);
        self.monitors.retain(|&c| c != conn);
        self.sessions.remove(&conn);
    }

    pub fn is_connected(&self, conn: ConnId) -> bool {
        self.sessions.contains_key(&conn)
    }

    /// The protocol version the connection speaks (2 or 3).
    pub fn resp(&self, conn: ConnId) -> u8 {
        self.sessions.get(&conn).map_or(2, |s| s.resp)
    }

    /// Whether the shell must close the connection once its output is written.
    pub fn should_close(&self, conn: ConnId) -> bool {
        self.sessions.get(&conn).is_none_or(|s| s.close_requested)
    }

    pub fn is_authenticated(&self, conn: ConnId) -> bool {
        self.sessions.get(&conn).is_some_and(|s| s.authenticated)
    }

    /// Whether the connection is waiting in a blocking command.
    pub fn is_blocked(&self, conn: ConnId) -> bool {
        self.sessions.get(&conn).is_some_and(|s| s.blocked.is_some())
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested
    }

    /// Replies produced for this connection outside its own requests (pub/sub messages,
    /// MONITOR lines, the late reply of a blocked command).
    pub fn take_output(&mut self, conn: ConnId) -> Vec<Reply> {
        match self.sessions.get_mut(&conn) {
            Some(s) => s.outbox.drain(..).collect(),
            None => Vec::new(),
        }
    }

    /// Connections that got output since the last call.
    pub fn take_wakeups(&mut self) -> Vec<ConnId> {
        std::mem::take(&mut self.wakeups)
    }

    /// Runs one command for `conn` and returns its reply. Unknown connections are opened on
    /// first use, so in-process callers can pick any id.
    pub fn execute<A: AsRef<[u8]>>(&mut self, conn: ConnId, args: &[A]) -> Reply {
        let args = args.iter().map(|a| Bytes::copy_from_slice(a.as_ref())).collect();
        self.execute_args(conn, args)
    }

    /// `execute` for arguments already in `Bytes` (the network shell's path: no copy).
    pub fn execute_args(&mut self, conn: ConnId, args: Vec<Bytes>) -> Reply {
        if !self.sessions.contains_key(&conn) {
            let mut s = Session::new(conn, self.clock.now_ms(), self.config.requirepass.is_none());
            s.addr = "in-process".into();
            self.sessions.insert(conn, s);
            self.next_conn_id = self.next_conn_id.max(conn + 1);
        }
        if args.is_empty() {
            return Reply::None;
        }
        self.begin_command();
        let reply = self.process(conn, args);
        self.end_command();
        self.apply_reply_mode(conn, reply)
    }

    /// Advances time-driven work: active expiry and blocked-command timeouts. The shell calls
    /// it periodically; in-process users may call it after moving the clock.
    pub fn tick(&mut self) {
        self.begin_command();
        self.expire_blocked();
        self.end_command();
    }

    fn begin_command(&mut self) {
        if !self.time_frozen {
            self.now_ms = self.clock.now_ms();
        }
        if self.active_expire {
            for i in 0..self.dbs.len() {
                if self.dbs[i].next_deadline().is_some_and(|t| t <= self.now_ms) {
                    self.dbs[i].now = self.now_ms;
                    self.dbs[i].purge_expired();
                }
            }
        }
        self.drain_expired();
    }

    fn end_command(&mut self) {
        self.drain_expired();
        self.serve_ready_keys();
    }

    /// The database `idx`, with "now" set for lazy expiry.
    pub(crate) fn db(&mut self, idx: usize) -> &mut Db {
        let now = self.now_ms;
        let db = &mut self.dbs[idx];
        db.now = now;
        db
    }

    /// Sends `expired` notifications and breaks WATCHes for keys expiry removed.
    fn drain_expired(&mut self) {
        for idx in 0..self.dbs.len() {
            if self.dbs[idx].expired_log.is_empty() {
                continue;
            }
            let keys = std::mem::take(&mut self.dbs[idx].expired_log);
            for key in keys {
                self.stats.expired_keys += 1;
                self.touch_watched(idx, &key);
                notify::keyspace_event(self, notify::EXPIRED, "expired", idx, &key);
            }
        }
    }

    /// The dispatcher: every check the command table implies, then the handler.
    fn process(&mut self, conn: ConnId, args: Vec<Bytes>) -> Reply {
        self.stats.total_commands_processed += 1;
        let reply = self.dispatch(conn, args);
        if let Reply::Error(text) = &reply {
            self.stats.total_error_replies += 1;
            self.stats.record_error(text);
        }
        reply
    }

    fn dispatch(&mut self, conn: ConnId, args: Vec<Bytes>) -> Reply {
        let session = self.sessions.get_mut(&conn).expect("session exists");
        session.last_interaction_ms = self.now_ms;
        let in_multi = session.multi.is_some();

        let (cmd, name) = match resolve(&args) {
            Ok(found) => found,
            Err(e) => {
                if let Some(m) = &mut session.multi {
                    m.aborted = true;
                }
                return e;
            }
        };
        session.last_command = name.clone();

        if !session.authenticated && !cmd.has(flags::NO_AUTH) {
            if let Some(m) = &mut session.multi {
                m.aborted = true;
            }
            return Reply::err(errors::NOAUTH);
        }
        if in_multi && cmd.has(flags::NO_MULTI) {
            if let Some(m) = &mut session.multi {
                m.aborted = true;
            }
            return Reply::err("ERR Command not allowed inside a transaction");
        }
        if session.resp == 2 && session.in_pubsub() && !allowed_in_pubsub_context(&name) {
            return Reply::err(format!(
                "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                name
            ));
        }
        if in_multi && !matches!(cmd.name, "exec" | "discard" | "multi" | "watch" | "quit" | "reset") {
            if cmd.has(flags::DENYOOM) && self.over_maxmemory() {
                let s = self.sessions.get_mut(&conn).expect("session exists");
                if let Some(m) = &mut s.multi {
                    m.aborted = true;
                }
                return Reply::err(errors::OOM);
            }
            let s = self.sessions.get_mut(&conn).expect("session exists");
            s.multi.as_mut().expect("in multi").queue.push(args);
            return Reply::Status("QUEUED".into());
        }
        if cmd.has(flags::DENYOOM) && self.over_maxmemory() {
            return Reply::err(errors::OOM);
        }
        self.feed_monitors(conn, &args, cmd);
        let (db, resp) = {
            let s = &self.sessions[&conn];
            (s.db, s.resp)
        };
        let mut call = Call { conn, db, resp, args, in_script: false, in_multi: false, reprocessing: false };
        let reply = self.call(cmd, &mut call);
        self.stats.record(&name, reply.is_error());
        reply
    }

    /// Runs a resolved command's handler with no checks: EXEC and scripts come here after
    /// doing their own.
    pub(crate) fn call(&mut self, cmd: &'static Command, call: &mut Call) -> Reply {
        let no_touch = self.sessions.get(&call.conn).is_some_and(|s| s.no_touch) && cmd.name != "touch";
        self.dbs[call.db].no_touch = no_touch;
        let reply = (cmd.handler)(self, call);
        self.dbs[call.db].no_touch = false;
        reply
    }

    /// Runs a command on behalf of a script or EXEC: resolves it and checks arity, then calls
    /// it with the given context. Returns the command too, so callers can check its flags.
    pub(crate) fn run_nested(&mut self, call: &mut Call) -> Reply {
        match resolve(&call.args) {
            Ok((cmd, name)) => {
                self.stats.total_commands_processed += 1;
                let reply = self.call(cmd, call);
                self.stats.record(&name, reply.is_error());
                reply
            }
            Err(e) => e,
        }
    }

    fn apply_reply_mode(&mut self, conn: ConnId, reply: Reply) -> Reply {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return reply;
        };
        match s.reply_mode {
            ReplyMode::On => reply,
            ReplyMode::Off => Reply::None,
            // CLIENT REPLY SKIP's own reply is skipped; the next one too.
            ReplyMode::Skip => {
                s.reply_mode = ReplyMode::SkipNext;
                Reply::None
            }
            ReplyMode::SkipNext => {
                s.reply_mode = ReplyMode::On;
                Reply::None
            }
        }
    }

    /// Used memory as INFO reports it: a fixed baseline plus the data's approximate size.
    pub(crate) fn used_memory(&self) -> u64 {
        const BASELINE: u64 = 900 * 1024;
        BASELINE + self.dbs.iter().map(|d| d.approx_memory() as u64).sum::<u64>()
    }

    pub(crate) fn over_maxmemory(&self) -> bool {
        self.config.maxmemory > 0 && self.used_memory() > self.config.maxmemory
    }

    // ---- what write handlers call -------------------------------------------------------

    /// Records that a write changed `key`: breaks WATCHes, counts a change, and sends the
    /// keyspace notification `event` of class `class` (see `notify`). Every write handler
    /// calls this once per key it changed.
    pub(crate) fn modified(&mut self, db: usize, key: &[u8], class: u32, event: &str) {
        self.dirty += 1;
        self.touch_watched(db, key);
        notify::keyspace_event(self, class, event, db, key);
    }

    /// Marks every client watching (db, key) dirty.
    pub(crate) fn touch_watched(&mut self, db: usize, key: &[u8]) {
        if self.watched_keys.is_empty() {
            return;
        }
        if let Some(conns) = self.watched_keys.get(&(db, key.to_vec())) {
            for c in conns.clone() {
                if let Some(s) = self.sessions.get_mut(&c) {
                    s.watch_dirty = true;
                }
            }
        }
    }

    /// Marks every watched key of a database dirty (FLUSHDB, SWAPDB).
    pub(crate) fn touch_all_watched(&mut self, db: Option<usize>) {
        let conns: Vec<ConnId> = self
            .watched_keys
            .iter()
            .filter(|((d, _), _)| db.is_none_or(|x| x == *d))
            .flat_map(|(_, c)| c.iter().copied())
            .collect();
        for c in conns {
            if let Some(s) = self.sessions.get_mut(&c) {
                s.watch_dirty = true;
            }
        }
    }

    pub(crate) fn unwatch_all(&mut self, conn: ConnId) {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return;
        };
        let watched = std::mem::take(&mut s.watched);
        s.watch_dirty = false;
        for k in watched {
            if let Some(list) = self.watched_keys.get_mut(&k) {
                list.retain(|&c| c != conn);
                if list.is_empty() {
                    self.watched_keys.remove(&k);
                }
            }
        }
    }

    /// Queues `reply` for a connection outside its request/reply cycle and wakes it.
    pub(crate) fn push_to(&mut self, conn: ConnId, reply: Reply) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.outbox.push_back(reply);
            self.wakeups.push(conn);
        }
    }

    // ---- blocking commands ----------------------------------------------------------------

    /// Blocks the calling connection on `keys` until one gets data or `deadline` passes.
    /// Handlers return this when they would otherwise wait. Inside MULTI or a script, or
    /// when re-run for a ready key, a blocking command does not block: the handler's
    /// `nonblocking_reply` (the timeout reply) is returned instead.
    pub(crate) fn block(&mut self, call: &Call, keys: Vec<Vec<u8>>, deadline: Option<i64>, timeout_reply: Reply) -> Reply {
        if call.in_multi || call.in_script {
            return timeout_reply;
        }
        if call.reprocessing {
            return Reply::None;
        }
        for k in &keys {
            self.blocking_keys.entry((call.db, k.clone())).or_default().push(call.conn);
        }
        self.stats.blocked_clients += 1;
        if let Some(s) = self.sessions.get_mut(&call.conn) {
            s.blocked = Some(Blocked { db: call.db, keys, deadline, args: call.args.clone(), timeout_reply });
        }
        Reply::None
    }

    /// Signals that `key` got data; blocked clients waiting on it are served after the
    /// current command. List and sorted-set pushes call it.
    pub(crate) fn signal_ready(&mut self, db: usize, key: &[u8]) {
        if self.blocking_keys.contains_key(&(db, key.to_vec())) {
            self.ready_keys.push((db, key.to_vec()));
        }
    }

    /// Removes a connection from every blocking list; returns what it was blocked on.
    pub(crate) fn unblock(&mut self, conn: ConnId) -> Option<Blocked> {
        let blocked = self.sessions.get_mut(&conn)?.blocked.take()?;
        self.stats.blocked_clients = self.stats.blocked_clients.saturating_sub(1);
        for k in &blocked.keys {
            let slot = (blocked.db, k.clone());
            if let Some(list) = self.blocking_keys.get_mut(&slot) {
                list.retain(|&c| c != conn);
                if list.is_empty() {
                    self.blocking_keys.remove(&slot);
                }
            }
        }
        Some(blocked)
    }

    /// Serves clients blocked on keys that got data, in the order they blocked, by running
    /// their command again (as Redis 7 does).
    fn serve_ready_keys(&mut self) {
        while !self.ready_keys.is_empty() {
            let ready = std::mem::take(&mut self.ready_keys);
            for slot in ready {
                let waiters = match self.blocking_keys.get(&slot) {
                    Some(w) => w.clone(),
                    None => continue,
                };
                for conn in waiters {
                    if !self.db(slot.0).contains(&slot.1) {
                        break;
                    }
                    let Some(b) = self.sessions.get(&conn).and_then(|s| s.blocked.as_ref()) else {
                        continue;
                    };
                    let (db, args) = (b.db, b.args.clone());
                    let resp = self.sessions[&conn].resp;
                    let mut call = Call { conn, db, resp, args, in_script: false, in_multi: false, reprocessing: true };
                    let reply = self.run_nested(&mut call);
                    if reply != Reply::None {
                        self.unblock(conn);
                        self.push_to(conn, reply);
                    }
                }
            }
            self.drain_expired();
        }
    }

    /// Answers blocked commands whose timeout passed.
    fn expire_blocked(&mut self) {
        let now = self.now_ms;
        let due: Vec<ConnId> = self
            .sessions
            .values()
            .filter(|s| s.blocked.as_ref().is_some_and(|b| b.deadline.is_some_and(|d| d <= now)))
            .map(|s| s.id)
            .collect();
        for conn in due {
            if let Some(b) = self.unblock(conn) {
                self.push_to(conn, b.timeout_reply);
            }
        }
    }

    /// Ends a blocked command early (CLIENT UNBLOCK): with the timeout reply, or an error.
    pub(crate) fn unblock_with(&mut self, conn: ConnId, error: bool) -> bool {
        match self.unblock(conn) {
            Some(b) => {
                let reply = if error {
                    Reply::err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
                } else {
                    b.timeout_reply
                };
                self.push_to(conn, reply);
                true
            }
            None => false,
        }
    }

    fn feed_monitors(&mut self, conn: ConnId, args: &[Bytes], cmd: &Command) {
        if self.monitors.is_empty() || cmd.has(flags::SKIP_MONITOR) || cmd.has(flags::ADMIN) {
            return;
        }
        let (db, addr) = {
            let s = &self.sessions[&conn];
            (s.db, s.addr.clone())
        };
        let line = crate::cmd::server::monitor_line(self.clock.now_us(), db, &addr, args);
        for m in self.monitors.clone() {
            if m != conn {
                self.push_to(m, Reply::Status(line.clone()));
            }
        }
    }
}

/// Finds the command (or subcommand) for `args`, with Redis's unknown-command, unknown-
/// subcommand and arity errors.
pub(crate) fn resolve(args: &[Bytes]) -> Result<(&'static Command, String), Reply> {
    let Some(cmd) = table::lookup(&args[0]) else {
        return Err(Reply::err(errors::unknown_command(&args[0], &args[1..])));
    };
    if cmd.subcommands.is_empty() {
        if !cmd.arity_ok(args.len()) {
            return Err(Reply::err(errors::wrong_arity(cmd.name)));
        }
        return Ok((cmd, cmd.name.to_string()));
    }
    if args.len() < 2 {
        // A container that also runs on its own (COMMAND) has an arity that allows it.
        if cmd.arity_ok(args.len()) {
            return Ok((cmd, cmd.name.to_string()));
        }
        return Err(Reply::err(errors::wrong_arity(cmd.name)));
    }
    let Some(sub) = table::lookup_sub(cmd, &args[1]) else {
        return Err(Reply::err(errors::unknown_subcommand(cmd.name, &args[1])));
    };
    let full = sub.full_name(Some(cmd));
    if !sub.arity_ok(args.len()) {
        return Err(Reply::err(errors::wrong_arity(&full)));
    }
    Ok((sub, full))
}

fn allowed_in_pubsub_context(name: &str) -> bool {
    matches!(
        name,
        "ping" | "subscribe" | "unsubscribe" | "psubscribe" | "punsubscribe" | "ssubscribe" | "sunsubscribe" | "quit" | "reset"
    )
}
