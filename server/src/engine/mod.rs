//! `Engine`: the whole server state and the one place a command is executed.
//!
//! The engine is a plain synchronous struct with no I/O and no locks: `execute` takes a
//! connection id and the arguments and returns the reply. Redis's atomicity comes from one
//! thread running every command and script start to finish; here it comes from `&mut self`.
//! The network shell, the in-process client and the explorer all drive this same struct.
//!
//! One file per concern: `dispatch` (resolve, checks, handler), `expiry` (the clock and
//! active expiry around each command), `blocking` (blocked clients), `watch` (WATCH
//! bookkeeping) and `fault_hooks` (where fault rules apply); this file holds the state and the
//! connection-facing API.

use std::collections::HashMap;

use bytes::Bytes;
use foldhash::fast::FixedState;

use crate::clock::Clock;
use crate::config::Config;
use crate::db::Db;
use crate::faults::Faults;
use crate::lua::Scripting;
use crate::notify;
use crate::reply::Reply;
use crate::session::{ConnId, ReplyMode, Session};
use crate::stats::Stats;

mod blocking;
mod client_memory;
mod dispatch;
mod evict;
#[cfg(test)]
mod evict_tests;
mod expiry;
mod fault_hooks;
mod field_ttl;
#[cfg(test)]
mod memory_tests;
pub(crate) mod pause;
#[cfg(test)]
mod rename_tests;
pub(crate) mod tracking;
mod watch;

use expiry::all_dbs_mask;

pub(crate) use crate::cmd::table::resolve;
pub(crate) use dispatch::MonitorFrom;

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

/// The shell's way to listen on another TCP port: given the `bind` address and the port,
/// it binds (the error is CONFIG SET's) and swaps the listener the shell accepts on.
pub(crate) type ListenHook = Box<dyn FnMut(&str, u16) -> std::io::Result<()>>;

/// The Redis-compatible engine. See the module documentation.
pub struct Engine {
    pub(crate) config: Config,
    pub(crate) clock: Clock,
    pub(crate) dbs: Vec<Db>,
    pub(crate) sessions: HashMap<ConnId, Session, FixedState>,
    /// Sessions a snapshot restore or fork resume closed, whose allocations the next
    /// connections reuse (`Session::renew`): the explorer reconnects its clients at every
    /// schedule. At most `SPARE_SESSIONS`.
    pub(crate) spare_sessions: Vec<Session>,
    /// The configuration is still the one the last restore copied: (the snapshot's id, the
    /// configuration's generation then). See `snapshot::restore_config`.
    pub(crate) config_restored: Option<(u64, u64)>,
    /// Users, permissions and the ACL log.
    pub(crate) acl: crate::acl::Acl,
    /// The next connection id. Shared with the network shell, which takes ids for the
    /// connections it accepts while a script holds the engine (their HELLO names its id).
    pub(crate) next_conn_id: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// "Now" for expiry and TTLs of the command being executed, in Unix ms; frozen for a
    /// script's duration. TIME does not read it: it reads the clock, as Redis's does.
    pub(crate) now_ms: i64,
    /// Set while a script (or EXEC) runs: expiry's "now" stands still at its start.
    pub(crate) time_frozen: bool,
    /// What TIME answers while `time_frozen`, under a profile that freezes it too (Redis 7.2,
    /// redis/redis#10300): read from the clock at the first TIME, dropped when the script or
    /// transaction ends.
    pub(crate) frozen_time_us: Option<i64>,
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
    /// DEBUG QUICKLIST-PACKED-THRESHOLD: the element size from which Redis stores a list
    /// element in a plain node of its own.
    pub(crate) quicklist_packed_threshold: u64,
    pub(crate) monitors: Vec<ConnId>,
    /// MONITOR lines of a monitoring connection's own command: they follow its reply.
    pub(crate) own_monitor_lines: Vec<Reply>,
    pub(crate) scripting: Scripting,
    /// Installed by the network shell; see `busy`. None when the engine is used in-process.
    pub(crate) busy_hook: Option<crate::busy::BusyHook>,
    /// Installed by the network shell: listens on a new TCP port (CONFIG SET port). None
    /// when the engine is used in-process, where the port is only a number.
    pub(crate) listen_hook: Option<ListenHook>,
    pub(crate) faults: Faults,
    /// Hash field deadlines (`db::hash_ttl`, Redis 7.4's field expiration).
    pub(crate) hash_ttl: crate::db::hash_ttl::FieldTtls,
    /// What the compatibility profile refused (`crate::compat::report`).
    pub(crate) compat_report: crate::compat::Report,
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
    /// The RDB file SAVE and DEBUG RELOAD wrote (kept in memory; the binary also writes it
    /// to disk, see `persist`).
    pub(crate) saved_image: Option<Vec<u8>>,
    /// The RDB file being loaded at start (`persist::loading`); None once loaded.
    pub(crate) loading: Option<Box<crate::persist::loading::Loading>>,
    /// Keys the last load loaded and dropped as expired (INFO rdb_last_load_keys_*).
    pub(crate) load_counts: crate::persist::loading::LoadCounts,
    /// Databases that may hold keys with a deadline or an unsent `expired` notification:
    /// bit i for database i. Set by every access through `db()`, cleared once a database has
    /// no deadline left; databases past 64 are always looked at.
    pub(crate) maybe_expiring: u64,
    /// Some client ever turned CLIENT NO-TOUCH on: only then does a command look it up.
    pub(crate) any_no_touch: bool,
    /// Some client ever turned CLIENT REPLY OFF or SKIP on: only then does a reply look up
    /// its connection's reply mode.
    pub(crate) any_reply_mode: bool,
    /// Where the arguments of in-process callers' commands and of redis.call are built.
    pub(crate) arg_buffer: crate::arg_buffer::ArgBuffer,
    /// INFO's client_recent_max_input_buffer / client_recent_max_output_buffer.
    pub(crate) buffer_peaks: crate::session::BufferPeaks,
    /// Every random choice the engine makes; seeded from `config.seed` or afresh.
    pub(crate) rng: crate::rng::EngineRng,
    /// maxmemory eviction's pool of candidates and the random policies' next database
    /// (`evict.rs`).
    pub(crate) evict_pool: evict::EvictionPool,
    pub(crate) evict_next_db: usize,
    /// The latency monitor is on (latency-monitor-threshold > 0), as read before this
    /// command: deletions by expiry are timed for its `expire-del` event.
    pub(crate) latency_on: bool,
    /// Counts command calls (redis.call's too): a key counts one LFU access per call
    /// however often the handler looks it up (`db::access::Touch::epoch`).
    pub(crate) call_epoch: u64,
    /// SLOWLOG's entries and parameters.
    pub(crate) slowlog: crate::slowlog::SlowLog,
    /// LATENCY's samples and threshold.
    pub(crate) latency: crate::latency::LatencyMonitor,
    /// latency-tracking's per-command histograms (LATENCY HISTOGRAM, INFO latencystats).
    pub(crate) latency_tracking: crate::latency::tracking::CommandLatencies,
    /// Connections the network shell refused at maxclients (INFO rejected_connections);
    /// shared with the shell, which counts them even while a script holds the engine.
    pub(crate) rejected_connections: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Cluster mode: this node's membership (`crate::cluster`); None for a standalone server.
    pub(crate) cluster: Option<crate::cluster::NodeState>,
    /// Client-side caching: the tracking table, BCAST prefixes, held invalidations.
    pub(crate) tracking: tracking::Tracking,
    /// CLIENT PAUSE: what is paused until when, and the clients waiting for it to end.
    pub(crate) pause: pause::Pause,
    /// A pause is in effect: expiry leaves keys in place (set at each command's start).
    pub(crate) expiry_hold: bool,
    /// DEBUG PAUSE-CRON: `tick` leaves out the periodic work (active expiry, the tracking
    /// table's limit); blocked clients' timeouts and pauses still end.
    pub(crate) cron_paused: bool,
    /// When the clients' query buffers were last looked at (`client_query`), engine clock ms.
    pub(crate) query_cron_ms: i64,
    /// DEBUG REPLYBUFFER's settings for the reply buffers' cron (`client_reply`).
    pub(crate) reply_buf_knobs: crate::client_reply::ReplyBufKnobs,
    /// Replication: the stream, the backlog, attached replicas, the primary followed.
    pub(crate) repl: crate::repl::Repl,
    /// The last `settle_memory` ran with maxmemory set (the databases track their sizes).
    pub(crate) memory_tracked: bool,
    /// When the handler the dispatcher (or EXEC) is running started (`clock::monotonic_us`):
    /// a script's run starts its busy clock there instead of reading the clock again.
    pub(crate) call_started: Option<u64>,
    /// Settings read by every command or write, parsed once per configuration change.
    pub(crate) derived: crate::config::derived::Derived,
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
        let mut dbs: Vec<Db> = dbs;
        crate::db::access::seed_dbs(&mut dbs, seed);
        let mut acl = crate::acl::Acl::new();
        acl.set_requirepass(config.requirepass.as_deref());
        // redlab-server checks this before it starts and exits as Redis does; an engine
        // built in-process logs why and keeps the users set up so far.
        if let Err(lines) = crate::acl::startup::load(&mut acl, &config) {
            for line in lines {
                tracing::warn!("{}", line);
            }
        }
        let cluster = crate::cluster::NodeState::if_enabled(&config);
        let valkey = config.compat.family() == crate::compat::Family::Valkey;
        let scripting = Scripting {
            server_version: (config.redis_version != "7.0.15" || valkey)
                .then(|| (config.redis_version.clone(), config.compat)),
            ..Scripting::default()
        };
        Engine {
            config,
            clock,
            dbs,
            sessions: HashMap::default(),
            spare_sessions: Vec::new(),
            config_restored: None,
            acl,
            next_conn_id: std::sync::Arc::new(std::sync::atomic::AtomicU64::new(1)),
            now_ms: now,
            time_frozen: false,
            frozen_time_us: None,
            stats: Stats::default(),
            watched_keys: HashMap::default(),
            pubsub: Default::default(),
            blocking_keys: HashMap::default(),
            ready_keys: Vec::new(),
            serving_key: None,
            wakeups: Vec::new(),
            quicklist_packed_threshold: crate::cmd::debug::DEFAULT_PACKED_THRESHOLD,
            monitors: Vec::new(),
            own_monitor_lines: Vec::new(),
            scripting,
            busy_hook: None,
            listen_hook: None,
            faults: Faults::default(),
            compat_report: crate::compat::Report::default(),
            hash_ttl: Default::default(),
            snapshot: None,
            active_expire: true,
            disable_deny_scripts: false,
            notify_flags,
            shutdown_requested: false,
            started_ms: now,
            dirty: 0,
            last_save_s: now / 1000,
            saved_image: None,
            loading: None,
            load_counts: Default::default(),
            maybe_expiring: all_dbs_mask(dbs_len),
            any_no_touch: false,
            any_reply_mode: false,
            arg_buffer: Default::default(),
            buffer_peaks: Default::default(),
            rng: crate::rng::EngineRng::new(seed),
            evict_pool: Default::default(),
            evict_next_db: 0,
            latency_on: false,
            call_epoch: 0,
            slowlog: Default::default(),
            latency: Default::default(),
            latency_tracking: Default::default(),
            rejected_connections: Default::default(),
            cluster,
            tracking: Default::default(),
            pause: Default::default(),
            expiry_hold: false,
            cron_paused: false,
            query_cron_ms: 0,
            reply_buf_knobs: Default::default(),
            repl: Default::default(),
            memory_tracked: false,
            call_started: None,
            derived: Default::default(),
        }
    }

    /// Makes this engine a node of a cluster (`crate::cluster`), replacing any membership.
    pub fn join_cluster(&mut self, membership: crate::cluster::Membership) {
        self.cluster = Some(crate::cluster::NodeState::new(membership));
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The configuration, to change in place. Its generation moves as a CONFIG SET moves
    /// it, so what caches by generation (derived values, a snapshot restore) sees the change.
    pub fn config_mut(&mut self) -> &mut Config {
        self.config.changed();
        &mut self.config
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// What the compatibility profile refused so far (see `Server::compat_report`).
    pub fn compat_report(&self) -> Vec<crate::compat::Refusal> {
        self.compat_report.entries()
    }

    /// Lets the network shell serve other connections while a script runs long.
    pub(crate) fn set_listen_hook(&mut self, hook: ListenHook) {
        self.listen_hook = Some(hook);
    }

    pub fn set_busy_hook(&mut self, hook: crate::busy::BusyHook) {
        self.busy_hook = Some(hook);
    }

    /// Opens a connection and returns its id (also its CLIENT ID).
    pub fn connect(&mut self) -> ConnId {
        self.connect_from(
            crate::session::NO_SOCKET_ADDR,
            crate::session::NO_SOCKET_ADDR,
        )
    }

    /// Opens a connection with its peer and local addresses (for CLIENT LIST).
    pub fn connect_from(&mut self, addr: &str, laddr: &str) -> ConnId {
        let id = self
            .next_conn_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.connect_with_id(id, addr, laddr)
    }

    /// The counter connection ids come from, for the network shell.
    pub(crate) fn conn_id_counter(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        self.next_conn_id.clone()
    }

    /// Opens a connection under an id the network shell took from `conn_id_counter`.
    pub(crate) fn connect_with_id(&mut self, id: ConnId, addr: &str, laddr: &str) -> ConnId {
        let now = self.clock.now_ms();
        let authenticated = crate::cmd::connection::starts_authenticated(self);
        let mut s = self.new_session(id, now, authenticated);
        s.acl_free = self.acl.default_user().unrestricted();
        s.addr.clear();
        s.addr.push_str(addr);
        s.laddr.clear();
        s.laddr.push_str(laddr);
        self.sessions.insert(id, s);
        self.stats.total_connections_received += 1;
        id
    }

    /// `Session::new`, in a spare session's allocations when there is one.
    pub(crate) fn new_session(&mut self, id: ConnId, now_ms: i64, authenticated: bool) -> Session {
        match self.spare_sessions.pop() {
            Some(old) => Session::renew(old, id, now_ms, authenticated),
            None => Session::new(id, now_ms, authenticated),
        }
    }

    /// Closes a connection: its subscriptions, watches and blocked command go with it.
    pub fn disconnect(&mut self, conn: ConnId) {
        drop(self.close_session(conn));
    }

    /// `disconnect`, handing back the closed connection's session.
    pub(crate) fn close_session(&mut self, conn: ConnId) -> Option<Session> {
        self.unwatch_all(conn);
        self.unblock(conn);
        crate::cmd::pubsub::unsubscribe_all(self, conn);
        self.monitors.retain(|&c| c != conn);
        self.disable_tracking(conn);
        let session = self.sessions.remove(&conn);
        self.repl_forget(conn);
        if let Some(node) = self.cluster.as_mut() {
            node.forget_conn(conn);
        }
        session
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

    /// Copies the connection's ACL user name into `into` when it differs (a compare per
    /// command, a copy only after AUTH), for the network shell's copy next to `conn_view`.
    pub(crate) fn copy_conn_user(&self, conn: ConnId, into: &mut String) {
        if let Some(s) = self.sessions.get(&conn) {
            if s.user != *into {
                into.clone_from(&s.user);
            }
        }
    }

    /// AUTH as `user` succeeded while a script held the engine (the busy loop checked the
    /// password against the users as they were when the script became busy).
    pub(crate) fn grant_auth(&mut self, conn: ConnId, user: &[u8]) {
        crate::cmd::acl::login(self, conn, user);
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
        crate::numfmt::set_shortest_doubles(self.config.compat.shortest_doubles());
        if !self.sessions.contains_key(&conn) {
            let mut s = Session::new(
                conn,
                self.clock.now_ms(),
                crate::cmd::connection::starts_authenticated(self),
            );
            s.addr = "in-process".into();
            s.acl_free = self.acl.default_user().unrestricted();
            self.sessions.insert(conn, s);
            self.next_conn_id
                .fetch_max(conn + 1, std::sync::atomic::Ordering::Relaxed);
        }
        if args.is_empty() {
            return Reply::None;
        }
        self.begin_command();
        self.tracking.current = Some(conn);
        // Only read where a tracking client may have CLIENT CACHING on (`after_command`): no
        // client tracked before this command means none has it on after.
        let client_cmd = self.tracking.clients > 0 && args[0].eq_ignore_ascii_case(b"client");
        let mut reply = self.process(conn, args);
        if !self.own_monitor_lines.is_empty() {
            let mut all = vec![reply];
            all.append(&mut self.own_monitor_lines);
            reply = Reply::Multi(all);
        }
        self.end_command();
        let reply = self.apply_reply_mode(conn, reply);
        let reply = self.after_command(conn, client_cmd, reply);
        self.serve_postponed();
        if self.repl.feeding() {
            self.repl_flush();
        }
        reply
    }

    /// What follows a command's reply: invalidations held while it ran (they come after the
    /// reply, never inside it), and the BCAST broadcast unless the shell sends it after its
    /// batch. Also where CLIENT CACHING's one-command effect ends (any CLIENT subcommand and
    /// the commands of a transaction keep it).
    fn after_command(&mut self, conn: ConnId, client_cmd: bool, reply: Reply) -> Reply {
        self.tracking.current = None;
        self.tracking.executing = false;
        if self.tracking.clients > 0 {
            if let Some(s) = self.sessions.get_mut(&conn) {
                if s.tracking.caching && !client_cmd && s.multi.is_none() {
                    s.tracking.caching = false;
                }
            }
        }
        let after = self.tracking_take_pending(conn);
        if !self.tracking.defer_broadcast {
            self.tracking_broadcast();
        }
        if after.is_empty() {
            return reply;
        }
        if self.is_blocked(conn) {
            // Its reply comes later: these go first, through the outbox.
            for m in after {
                self.push_to(conn, m);
            }
            return reply;
        }
        let mut all = Vec::with_capacity(after.len() + 1);
        all.push(reply);
        all.extend(after);
        Reply::Multi(all)
    }

    /// The network shell runs a batch of requests: BCAST invalidations are sent once, after
    /// it (`end_batch`), as Redis sends them once per turn of its event loop.
    pub(crate) fn begin_batch(&mut self) {
        self.tracking.defer_broadcast = true;
    }

    pub(crate) fn end_batch(&mut self) {
        self.tracking.defer_broadcast = false;
        self.tracking_broadcast();
    }

    /// CLIENT REPLY OFF/SKIP: the reply is dropped, except its push frames (the (P|S)SUBSCRIBE
    /// and UNSUBSCRIBE confirmations), which Redis sends whatever the reply mode.
    fn apply_reply_mode(&mut self, conn: ConnId, reply: Reply) -> Reply {
        if !self.any_reply_mode {
            return reply;
        }
        let Some(s) = self.sessions.get_mut(&conn) else {
            return reply;
        };
        match s.reply_mode {
            ReplyMode::On => return reply,
            ReplyMode::Off => {}
            // CLIENT REPLY SKIP's own reply is skipped; the next one too.
            ReplyMode::Skip => s.reply_mode = ReplyMode::SkipNext,
            ReplyMode::SkipNext => s.reply_mode = ReplyMode::On,
        }
        pushes_only(reply)
    }

    /// Used memory as INFO reports it: a fixed baseline, the data's approximate size (each
    /// database's running total, `Db::memory`, so reading it costs no walk over the keys
    /// while maxmemory is set: `settle_memory` runs after every command then) and the
    /// clients' buffers (`client_memory`).
    pub(crate) fn used_memory(&self) -> u64 {
        let clients = self.clients_memory();
        self.data_memory() + clients.normal + clients.replicas
    }

    /// The baseline and the data.
    fn data_memory(&self) -> u64 {
        const BASELINE: u64 = 900 * 1024;
        BASELINE + self.dbs.iter().map(|d| d.memory()).sum::<u64>()
    }

    /// What eviction compares with maxmemory: used_memory without the replicas' output
    /// (Redis's mem_not_counted_for_evict).
    pub(crate) fn memory_for_eviction(&self) -> u64 {
        self.data_memory() + self.clients_memory().normal
    }

    /// Brings each database's running total up to date with the values changed in place
    /// by the command that ran (see `Db::settle_memory`).
    pub(crate) fn settle_memory(&mut self) {
        let track = self.config.maxmemory > 0;
        // Untracked, there is nothing to settle: each database only marks its total stale
        // (`Db::settle_memory`), once it has been told tracking is off.
        if !track && !self.memory_tracked {
            return;
        }
        self.memory_tracked = track;
        for d in &mut self.dbs {
            d.settle_memory(track);
        }
    }

    /// The encoding limits (`*-max-listpack-*`) as the configuration sets them now.
    pub(crate) fn encoding_limits(&self) -> crate::db::encoding::Limits {
        self.derived.get(&self.config).limits
    }

    pub(crate) fn over_maxmemory(&self) -> bool {
        self.config.maxmemory > 0 && self.memory_for_eviction() > self.config.maxmemory
    }

    /// Queues `reply` for a connection outside its request/reply cycle and wakes it.
    pub(crate) fn push_to(&mut self, conn: ConnId, reply: Reply) {
        if self.queue_output(conn, reply) {
            self.wakeups.push(conn);
        }
    }
}

/// The part of a session that admission (`admission::admit`) looks at.
/// What of a suppressed reply still goes out: its push frames.
fn pushes_only(reply: Reply) -> Reply {
    match reply {
        Reply::Push(_) => reply,
        Reply::Multi(frames) => {
            let kept: Vec<Reply> = frames
                .into_iter()
                .filter(|f| matches!(f, Reply::Push(_)))
                .collect();
            if kept.is_empty() {
                Reply::None
            } else {
                Reply::Multi(kept)
            }
        }
        _ => Reply::None,
    }
}

pub(crate) fn view_of(s: &Session) -> crate::admission::ConnView {
    crate::admission::ConnView {
        authenticated: s.authenticated,
        acl_free: s.acl_free,
        resp: s.resp,
        subscribed: s.in_pubsub(),
        in_multi: s.multi.is_some(),
        monitor: s.monitor,
    }
}
