//! `Engine`: the whole server state and the one place a command is executed.
//!
//! The engine is a plain synchronous struct with no I/O and no locks: `execute` takes a
//! connection id and the arguments and returns the reply. Redis's atomicity comes from one
//! thread running every command and script start to finish; here it comes from `&mut self`.
//! The network shell, the in-process client and the explorer all drive this same struct.

use std::borrow::Cow;
use std::collections::HashMap;

use bytes::Bytes;
use foldhash::fast::FixedState;

use crate::clock::Clock;
use crate::cmd::table::{self, flags, Command};
use crate::config::Config;
use crate::db::Db;
use crate::errors;
use crate::faults::{Candidate, FaultAction, Faults};
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
    /// "Now" for expiry and TTLs of the command being executed, in Unix ms; frozen for a
    /// script's duration. TIME does not read it: it reads the clock, as Redis's does.
    pub(crate) now_ms: i64,
    /// Set while a script (or EXEC) runs: expiry's "now" stands still at its start.
    pub(crate) time_frozen: bool,
    pub(crate) stats: Stats,
    /// (db, key) -> connections watching it.
    pub(crate) watched_keys: HashMap<(usize, Vec<u8>), Vec<ConnId>, FixedState>,
    pub(crate) pubsub: crate::cmd::pubsub::PubSub,
    /// (db, key) -> blocked connections in arrival order.
    pub(crate) blocking_keys: HashMap<(usize, Vec<u8>), Vec<ConnId>, FixedState>,
    /// Keys that received data while clients wait on them; served after the command.
    pub(crate) ready_keys: Vec<(usize, Vec<u8>)>,
    /// While a blocked command is re-run for a ready key: that key. Redis 7.0 serves a
    /// client from the key that became ready, not from the first non-empty key it named.
    pub(crate) serving_key: Option<Vec<u8>>,
    /// Connections with new output in their outbox, for the shell to wake.
    pub(crate) wakeups: Vec<ConnId>,
    pub(crate) monitors: Vec<ConnId>,
    pub(crate) scripting: Scripting,
    /// Installed by the network shell; see `busy`. None when the engine is used in-process.
    pub(crate) busy_hook: Option<crate::busy::BusyHook>,
    pub(crate) faults: Faults,
    /// The dataset at the last mark, for the Rollback fault.
    pub(crate) snapshot: Option<Vec<Db>>,
    pub(crate) active_expire: bool,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: let scripts run commands normally refused to them.
    pub(crate) disable_deny_scripts: bool,
    /// notify-keyspace-events, parsed.
    pub(crate) notify_flags: u32,
    pub(crate) shutdown_requested: bool,
    pub(crate) started_ms: i64,
    /// Changes since the last SAVE (INFO rdb_changes_since_last_save).
    pub(crate) dirty: u64,
    pub(crate) last_save_s: i64,
    /// Databases that may hold keys with a deadline or an unsent `expired` notification:
    /// bit i for database i. Set by every access through `db()`, cleared once a database has
    /// no deadline left; databases past 64 are always looked at.
    pub(crate) maybe_expiring: u64,
    /// Some client ever turned CLIENT NO-TOUCH on: only then does a command look it up.
    pub(crate) any_no_touch: bool,
    /// Where the arguments of in-process callers' commands and of redis.call are built.
    pub(crate) arg_buffer: crate::arg_buffer::ArgBuffer,
    /// INFO's client_recent_max_input_buffer / client_recent_max_output_buffer.
    pub(crate) buffer_peaks: crate::session::BufferPeaks,
    /// Every random choice the engine makes; seeded from `config.seed` or afresh.
    pub(crate) rng: crate::rng::EngineRng,
}

impl Engine {
    /// An engine following system time.
    pub fn new(config: Config) -> Engine {
        Engine::with_clock(config, Clock::system())
    }

    /// An engine reading time from `clock` (share it to control time from a test).
    pub fn with_clock(mut config: Config, clock: Clock) -> Engine {
        let now = clock.now_ms();
        let dbs_len = config.databases.max(1);
        let dbs = (0..dbs_len).map(|_| Db::new()).collect();
        let notify_flags = notify::parse_flags(&config.notify_keyspace_events).unwrap_or(0);
        let seed = *config.seed.get_or_insert_with(crate::rng::fresh_seed);
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
            serving_key: None,
            wakeups: Vec::new(),
            monitors: Vec::new(),
            scripting: Scripting::default(),
            busy_hook: None,
            faults: Faults::default(),
            snapshot: None,
            active_expire: true,
            disable_deny_scripts: false,
            notify_flags,
            shutdown_requested: false,
            started_ms: now,
            dirty: 0,
            last_save_s: now / 1000,
            maybe_expiring: all_dbs_mask(dbs_len),
            any_no_touch: false,
            arg_buffer: Default::default(),
            buffer_peaks: Default::default(),
            rng: crate::rng::EngineRng::new(seed),
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

    /// Lets the network shell serve other connections while a script runs long.
    pub fn set_busy_hook(&mut self, hook: crate::busy::BusyHook) {
        self.busy_hook = Some(hook);
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
        let mut s = Session::new(id, now, crate::cmd::connection::starts_authenticated(self));
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

    /// What admission needs of this connection, for the network shell's copy.
    pub(crate) fn conn_view(&self, conn: ConnId) -> Option<crate::admission::ConnView> {
        self.sessions.get(&conn).map(view_of)
    }

    /// AUTH succeeded while a script held the engine (the busy loop checked the password).
    pub(crate) fn grant_auth(&mut self, conn: ConnId) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.authenticated = true;
        }
    }

    /// Whether the connection is waiting in a blocking command.
    pub fn is_blocked(&self, conn: ConnId) -> bool {
        self.sessions
            .get(&conn)
            .is_some_and(|s| s.blocked.is_some())
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested
    }

    /// Replies produced for this connection outside its own requests (pub/sub messages,
    /// MONITOR lines, the late reply of a blocked command).
    pub fn take_output(&mut self, conn: ConnId) -> Vec<Reply> {
        match self.sessions.get_mut(&conn) {
            Some(s) => {
                s.outbox_bytes = 0;
                s.outbox.drain(..).collect()
            }
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
        self.arg_buffer.begin();
        for a in args {
            self.arg_buffer.push(a.as_ref());
        }
        let args = self.arg_buffer.finish();
        self.execute_args(conn, args)
    }

    /// `execute` for arguments already in `Bytes` (the network shell's path: no copy).
    pub fn execute_args(&mut self, conn: ConnId, args: Vec<Bytes>) -> Reply {
        if !self.sessions.contains_key(&conn) {
            let mut s = Session::new(
                conn,
                self.clock.now_ms(),
                crate::cmd::connection::starts_authenticated(self),
            );
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
        self.begin(EXPIRE_SLICE_PER_TICK);
        self.expire_blocked();
        self.end_command();
    }

    /// Reads the clock and expires what is due, in the databases that may hold keys with a
    /// deadline or keys lazy expiry removed since the last command. This runs before every
    /// command, so it looks only at the databases `maybe_expiring` names, not all sixteen.
    fn begin_command(&mut self) {
        self.begin(EXPIRE_SLICE_PER_COMMAND);
    }

    /// `begin_command` with a budget of keys the active expiry may remove per database.
    fn begin(&mut self, budget: usize) {
        if !self.time_frozen {
            self.now_ms = self.clock.now_ms();
        }
        let now = self.now_ms;
        for idx in self.maybe_expiring_dbs() {
            let db = &mut self.dbs[idx];
            db.now = now;
            db.count_due = !self.active_expire;
            if self.active_expire && db.next_deadline().is_some_and(|t| t <= now) {
                db.purge_expired(budget);
            }
            if !db.expired_log.is_empty() {
                self.drain_db(idx);
            }
            if self.dbs[idx].next_deadline().is_none() && idx < 64 {
                self.maybe_expiring &= !(1 << idx);
            }
        }
    }

    fn end_command(&mut self) {
        self.drain_expired();
        crate::cmd::stream::unblock_lost_groups(self);
        self.serve_ready_keys();
    }

    /// The database `idx`, with "now" set for lazy expiry.
    pub(crate) fn db(&mut self, idx: usize) -> &mut Db {
        if idx < 64 {
            self.maybe_expiring |= 1 << idx;
        }
        let now = self.now_ms;
        let db = &mut self.dbs[idx];
        db.now = now;
        db
    }

    /// After databases changed places or contents wholesale (SWAPDB, a rollback): look at
    /// every one again.
    pub(crate) fn recheck_all_dbs(&mut self) {
        self.maybe_expiring = all_dbs_mask(self.dbs.len());
    }

    /// The databases `maybe_expiring` names, and every one past the 64 it can name.
    fn maybe_expiring_dbs(&self) -> impl Iterator<Item = usize> + use<> {
        let mut bits = self.maybe_expiring;
        let n = self.dbs.len();
        std::iter::from_fn(move || {
            let i = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            (i < 64).then_some(i)
        })
        .chain(64.min(n)..n)
    }

    /// Sends `expired` notifications for keys expiry removed. It does not break WATCHes:
    /// in Redis 7.0 a watched key that expires leaves EXEC free to run.
    fn drain_expired(&mut self) {
        for idx in self.maybe_expiring_dbs() {
            if !self.dbs[idx].expired_log.is_empty() {
                self.drain_db(idx);
            }
        }
    }

    fn drain_db(&mut self, idx: usize) {
        let keys = std::mem::take(&mut self.dbs[idx].expired_log);
        for key in keys {
            self.stats.expired_keys += 1;
            notify::keyspace_event(self, notify::EXPIRED, "expired", idx, &key);
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
        // Nothing before the handler changes these; read them while the session is at hand.
        let (db, resp) = (session.db, session.resp);

        let (cmd, name) = match resolve(&args) {
            Ok(found) => found,
            Err(e) => return self.reject(conn, &args[0], e),
        };
        session.last_command = name.clone();

        let view = view_of(session);
        // Redis refuses on memory after the MULTI check and before the pub/sub context check.
        let oom = self.config.maxmemory > 0
            && crate::cmd::scripting::refused_when_over(self, conn, cmd, &args)
            && self.over_maxmemory();
        if let Err(e) = crate::admission::admit(cmd, &name, &view, None, oom) {
            return self.reject(conn, &args[0], e);
        }
        if in_multi
            && !matches!(
                cmd.name,
                "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
            )
        {
            let s = self.sessions.get_mut(&conn).expect("session exists");
            s.multi.as_mut().expect("in multi").queue.push(args);
            return Reply::Status("QUEUED".into());
        }
        self.feed_monitors(conn, &args, cmd);
        let fault = self.check_faults(conn, cmd, &name, &args);
        if let Some(early) = self.fault_before(conn, fault.as_ref()) {
            return early;
        }
        let mut call = Call {
            conn,
            db,
            resp,
            args,
            in_script: false,
            in_multi: false,
            reprocessing: false,
        };
        let reply = self.call(cmd, &mut call);
        self.arg_buffer.recycle(call.args);
        // A command that blocked is counted when it is served or times out, as in Redis.
        if !(reply == Reply::None && self.is_blocked(conn)) {
            self.stats.record(cmd, &name, reply.is_error());
        }
        self.fault_after(conn, fault, reply)
    }

    /// The fault rule that fires for this command, if any (REDLAB.* control commands are
    /// never faulted, so a test can always reach the server).
    fn check_faults(
        &mut self,
        conn: ConnId,
        cmd: &Command,
        name: &str,
        args: &[Bytes],
    ) -> Option<FaultAction> {
        if self.faults.is_empty() || name.starts_with("redlab.") {
            return None;
        }
        let key_slices: Vec<&[u8]> = cmd
            .key_positions(args)
            .into_iter()
            .map(|i| &args[i][..])
            .collect();
        let script = match name {
            "eval" | "eval_ro" => args
                .get(1)
                .map(|body| sha1_smol::Sha1::from(&body[..]).digest().to_string()),
            "evalsha" | "evalsha_ro" | "fcall" | "fcall_ro" => args
                .get(1)
                .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase()),
            _ => None,
        };
        let client_name = self.sessions.get(&conn).and_then(|s| s.name.as_deref());
        let candidate = Candidate {
            conn,
            client_name,
            command: name,
            keys: &key_slices,
            script: script.as_deref(),
            args,
        };
        self.faults.check(&candidate)
    }

    /// Applies the part of a fault that happens before the command runs; Some(reply) when
    /// the command must not run at all.
    fn fault_before(&mut self, conn: ConnId, fault: Option<&FaultAction>) -> Option<Reply> {
        match fault? {
            FaultAction::ReplyError(text) => Some(Reply::Error(text.clone())),
            FaultAction::CloseBefore => {
                self.request_close(conn);
                Some(Reply::None)
            }
            FaultAction::Stall(d) => {
                std::thread::sleep(*d);
                if self.clock.is_frozen() {
                    self.clock.advance(*d);
                }
                self.now_ms = self.clock.now_ms();
                None
            }
            FaultAction::FlushScripts => {
                self.scripting.flush_scripts();
                None
            }
            FaultAction::Rollback => {
                if let Some(snapshot) = &self.snapshot {
                    self.dbs = snapshot.clone();
                    self.recheck_all_dbs();
                    self.touch_all_watched(None);
                }
                None
            }
            FaultAction::CloseAfter | FaultAction::Delay(_) | FaultAction::TruncateReply(_) => None,
        }
    }

    /// Applies the part of a fault that happens to the reply of a command that ran.
    fn fault_after(&mut self, conn: ConnId, fault: Option<FaultAction>, reply: Reply) -> Reply {
        if fault.is_none() {
            return reply;
        }
        let Some(s) = self.sessions.get_mut(&conn) else {
            return reply;
        };
        match fault {
            Some(FaultAction::CloseAfter) => {
                s.close_requested = true;
                Reply::None
            }
            Some(FaultAction::Delay(d)) => {
                s.fault_delay = Some(s.fault_delay.map_or(d, |x| x.max(d)));
                reply
            }
            Some(FaultAction::TruncateReply(n)) => {
                s.fault_truncate = Some(n);
                s.close_requested = true;
                reply
            }
            _ => reply,
        }
    }

    /// Asks the shell to close a connection once its pending output is written.
    pub(crate) fn request_close(&mut self, conn: ConnId) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.close_requested = true;
            self.wakeups.push(conn);
        }
    }

    /// Takes a snapshot of the whole dataset for a later `Rollback` fault.
    pub fn mark(&mut self) {
        self.snapshot = Some(self.dbs.clone());
    }

    /// How long the shell must hold this connection's pending replies (a Delay fault).
    pub fn take_fault_delay(&mut self, conn: ConnId) -> Option<std::time::Duration> {
        self.sessions
            .get_mut(&conn)
            .and_then(|s| s.fault_delay.take())
    }

    /// How many bytes of the last reply the shell may send before closing (a Truncate fault).
    pub fn take_fault_truncate(&mut self, conn: ConnId) -> Option<usize> {
        self.sessions
            .get_mut(&conn)
            .and_then(|s| s.fault_truncate.take())
    }

    /// A command the dispatcher refuses (Redis's rejectCommand): an open transaction is
    /// flagged so EXEC answers EXECABORT; a refused EXEC discards the transaction at once.
    fn reject(&mut self, conn: ConnId, name: &[u8], err: Reply) -> Reply {
        if name.eq_ignore_ascii_case(b"exec") {
            if let Reply::Error(text) = &err {
                return crate::cmd::transactions::exec_abort(self, conn, text);
            }
        }
        if let Some(m) = self.sessions.get_mut(&conn).and_then(|s| s.multi.as_mut()) {
            m.aborted = true;
        }
        err
    }

    /// Runs a resolved command's handler with no checks: EXEC and scripts come here after
    /// doing their own.
    pub(crate) fn call(&mut self, cmd: &'static Command, call: &mut Call) -> Reply {
        let no_touch = self.any_no_touch
            && cmd.name != "touch"
            && self.sessions.get(&call.conn).is_some_and(|s| s.no_touch);
        self.dbs[call.db].no_touch = no_touch;
        let reply = cmd.handler.run(self, call);
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
                self.stats.record(cmd, &name, reply.is_error());
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
        BASELINE
            + self
                .dbs
                .iter()
                .map(|d| d.approx_memory() as u64)
                .sum::<u64>()
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

    /// FLUSHDB / FLUSHALL (`db` None: every database): call before emptying. Marks dirty
    /// the clients watching a key that exists there; as in Redis, a watched key that did not
    /// exist is not changed by a flush.
    pub(crate) fn touch_all_watched(&mut self, db: Option<usize>) {
        let slots: Vec<(usize, Vec<u8>)> = self
            .watched_keys
            .keys()
            .filter(|(d, _)| db.is_none_or(|x| x == *d))
            .cloned()
            .collect();
        for (d, key) in slots {
            if d < self.dbs.len() && self.db(d).contains(&key) {
                self.touch_watched(d, &key);
            }
        }
    }

    /// SWAPDB a b: call before swapping. A watched key changes if it exists on either side.
    pub(crate) fn touch_watched_swapdb(&mut self, a: usize, b: usize) {
        let slots: Vec<(usize, Vec<u8>)> = self
            .watched_keys
            .keys()
            .filter(|(d, _)| *d == a || *d == b)
            .cloned()
            .collect();
        for (d, key) in slots {
            if a < self.dbs.len()
                && b < self.dbs.len()
                && (self.db(a).contains(&key) || self.db(b).contains(&key))
            {
                self.touch_watched(d, &key);
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
        if self.queue_output(conn, reply) {
            self.wakeups.push(conn);
        }
    }

    // ---- blocking commands ----------------------------------------------------------------

    /// Blocks the calling connection on `keys` until one gets data or `deadline` passes
    /// (`None`: forever); the client then gets its reply through its outbox. Handlers return
    /// this when they would otherwise wait. Inside MULTI or a script a command cannot block:
    /// `timeout_reply` is returned at once. When re-run for a ready key that turned out not
    /// to serve it, the client stays blocked (`Reply::None`).
    pub(crate) fn block(
        &mut self,
        call: &Call,
        mut keys: Vec<Vec<u8>>,
        deadline: Option<i64>,
        timeout_reply: Reply,
    ) -> Reply {
        if call.in_multi || call.in_script {
            return timeout_reply;
        }
        if call.reprocessing {
            return Reply::None;
        }
        // A key named twice waits once, as Redis's per-client key dict does.
        let mut seen = std::collections::HashSet::with_capacity(keys.len());
        keys.retain(|k| seen.insert(k.clone()));
        for k in &keys {
            self.blocking_keys
                .entry((call.db, k.clone()))
                .or_default()
                .push(call.conn);
        }
        self.stats.blocked_clients += 1;
        if let Some(s) = self.sessions.get_mut(&call.conn) {
            s.blocked = Some(Blocked {
                db: call.db,
                keys,
                deadline,
                args: call.args.clone(),
                timeout_reply,
            });
        }
        Reply::None
    }

    /// Signals that `key` got data; blocked clients waiting on it are served after the
    /// current command (or MULTI/EXEC, or script). List and sorted-set pushes call it.
    pub(crate) fn signal_ready(&mut self, db: usize, key: &[u8]) {
        if self.blocking_keys.is_empty() {
            return;
        }
        let slot = (db, key.to_vec());
        if self.blocking_keys.contains_key(&slot) && !self.ready_keys.contains(&slot) {
            self.ready_keys.push(slot);
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

    /// Serves clients blocked on keys that got data (Redis 7.0's handleClientsBlockedOnKeys):
    /// keys in the order they became ready; for each, the clients waiting for that key's
    /// type, in the order they blocked, until the key is gone. Each is served by re-running
    /// its command with `reprocessing` set and `serving_key` naming the ready key. Keys made
    /// ready while serving (BLMOVE's push) are handled in a further round.
    fn serve_ready_keys(&mut self) {
        while !self.ready_keys.is_empty() {
            let ready = std::mem::take(&mut self.ready_keys);
            for (db, key) in ready {
                let waiters = match self.blocking_keys.get(&(db, key.clone())) {
                    Some(w) => w.clone(),
                    None => continue,
                };
                for conn in waiters {
                    // XREADGROUP is also run for a key that is gone or of another type: it
                    // answers the error Redis gives when its stream is deleted.
                    let type_name = match self.db(db).peek(&key) {
                        Some(entry) => entry.value.type_name(),
                        None => "none",
                    };
                    let Some(b) = self.sessions.get(&conn).and_then(|s| s.blocked.as_ref()) else {
                        continue;
                    };
                    if b.db != db || !b.keys.contains(&key) {
                        continue;
                    }
                    let Ok((cmd, name)) = resolve(&b.args) else {
                        continue;
                    };
                    if cmd.name != "xreadgroup"
                        && blocked_type(cmd.name).is_some_and(|t| t != type_name)
                    {
                        continue;
                    }
                    let args = b.args.clone();
                    let resp = self.sessions[&conn].resp;
                    let mut call = Call {
                        conn,
                        db,
                        resp,
                        args,
                        in_script: false,
                        in_multi: false,
                        reprocessing: true,
                    };
                    self.serving_key = Some(key.clone());
                    let reply = self.call(cmd, &mut call);
                    self.serving_key = None;
                    if reply != Reply::None {
                        self.unblock(conn);
                        self.finish_blocked(cmd, &name, &reply);
                        self.push_to(conn, reply);
                    }
                }
            }
            self.drain_expired();
        }
    }

    /// Counts a blocked command once it has its reply (Redis's updateStatsOnUnblock).
    fn finish_blocked(&mut self, cmd: &'static Command, name: &str, reply: &Reply) {
        self.stats.record(cmd, name, reply.is_error());
        if let Reply::Error(text) = reply {
            self.stats.total_error_replies += 1;
            self.stats.record_error(text);
        }
    }

    /// Answers blocked commands whose timeout passed, earliest deadline first. Like Redis, a
    /// deadline is passed once "now" is strictly after it.
    fn expire_blocked(&mut self) {
        let now = self.now_ms;
        let mut due: Vec<(i64, ConnId)> = self
            .sessions
            .values()
            .filter_map(|s| {
                let d = s.blocked.as_ref()?.deadline?;
                (d < now).then_some((d, s.id))
            })
            .collect();
        due.sort_unstable();
        for (_, conn) in due {
            if let Some(b) = self.unblock(conn) {
                if let Ok((cmd, name)) = resolve(&b.args) {
                    self.finish_blocked(cmd, &name, &b.timeout_reply);
                }
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
                if let Ok((cmd, name)) = resolve(&b.args) {
                    self.finish_blocked(cmd, &name, &reply);
                }
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

/// How many due keys the active expiry removes per database before each command: about
/// 2 ms of work (a key and its `expired` notification cost under 2 µs), so a mass expiry
/// never stalls another client for long; before, a million keys expiring at once held the
/// next command for 1.75 s. A fixed count rather than a time budget keeps runs repeatable.
/// Lookups expire a due key themselves, so nothing depends on how far the purge has got.
const EXPIRE_SLICE_PER_COMMAND: usize = 1_000;
/// The same on every tick (each 10 ms in the shell), so an idle server still drains a mass
/// expiry steadily: a million keys in a few seconds, under 10 ms at a time.
const EXPIRE_SLICE_PER_TICK: usize = 5_000;

/// `maybe_expiring` with a bit for each of the first `n` databases (at most 64).
fn all_dbs_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Finds the command (or subcommand) for `args`, with Redis's unknown-command, unknown-
/// subcommand and arity errors.
pub(crate) fn resolve(args: &[Bytes]) -> Result<(&'static Command, Cow<'static, str>), Reply> {
    let Some(cmd) = table::lookup(&args[0]) else {
        return Err(Reply::err(errors::unknown_command(&args[0], &args[1..])));
    };
    if cmd.subcommands.is_empty() {
        if !cmd.arity_ok(args.len()) {
            return Err(Reply::err(errors::wrong_arity(cmd.name)));
        }
        return Ok((cmd, Cow::Borrowed(cmd.name)));
    }
    if args.len() < 2 {
        // A container that also runs on its own (COMMAND) has an arity that allows it.
        if cmd.arity_ok(args.len()) {
            return Ok((cmd, Cow::Borrowed(cmd.name)));
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
    Ok((sub, Cow::Owned(full)))
}

/// The value type a blocked command waits for; a ready key of another type does not serve
/// it (it stays blocked). None: any type (a command this table does not know as blocking).
fn blocked_type(name: &str) -> Option<&'static str> {
    if crate::cmd::list::is_list_blocking(name) {
        Some("list")
    } else if matches!(name, "bzpopmin" | "bzpopmax" | "bzmpop") {
        Some("zset")
    } else if matches!(name, "xread" | "xreadgroup") {
        Some("stream")
    } else {
        None
    }
}

/// The part of a session that admission (`admission::admit`) looks at.
pub(crate) fn view_of(s: &Session) -> crate::admission::ConnView {
    crate::admission::ConnView {
        authenticated: s.authenticated,
        resp: s.resp,
        subscribed: s.in_pubsub(),
        in_multi: s.multi.is_some(),
    }
}
