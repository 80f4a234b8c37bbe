//! Engine snapshots: take the state of an engine once (after a test's setup) and put the
//! engine back into it as often as needed, without building a new engine or a new Lua state.
//!
//! The explorer runs thousands of schedules of one scenario; each must start from the same
//! server. Building an engine and compiling the scenario's scripts for every schedule costs
//! more than running the schedule. A snapshot keeps what a schedule can change — the
//! keyspace, the clock, the random generator, the configuration, which scripts and function
//! libraries exist — and `restore` resets exactly that, keeping the compiled Lua.
//!
//! What a restore does:
//! - data, the clock's time, the RNG (math.random's state too), CONFIG and the dirty counter
//!   go back to their snapshot values (the keyspace is cloned; values share nothing);
//! - every connection is closed and connection ids start again from 1, so the connections
//!   a caller opens next get the same ids as on a fresh engine; watches, subscriptions,
//!   blocked clients, MONITOR and INFO's counters go with them;
//! - fault rules are removed;
//! - the script cache holds exactly the snapshot's scripts. A script a schedule added is
//!   set aside with its compiled function, and a later EVAL or SCRIPT LOAD of the same body
//!   takes it back instead of compiling again (sound because Redis's Lua globals are
//!   read-only: a script cannot leave state behind in the Lua VM). When the Lua state was
//!   replaced (SCRIPT FLUSH), the snapshot's scripts are compiled again;
//! - function libraries: kept when they are still the snapshot's, otherwise loaded again
//!   from the snapshot's code in a fresh function runtime.
//!
//! A `Fork` is a state in the middle of a run, for exhaustive search to branch from instead
//! of replaying the prefix: the data, the clock, the RNG, INFO's counters and the open
//! connections. `Engine::fork` gives one only while the run has stayed on plain ground
//! (see `fork`), where that list is the whole state a command can change; elsewhere the
//! explorer replays from the snapshot.

use bytes::Bytes;

use crate::cmd::pubsub::PubSub;
use crate::cmd::table::flags;
use crate::db::Db;
use crate::engine::Engine;
use crate::lua::cache::sha1_hex;
use crate::rng::EngineRng;
use crate::session::{ConnId, Session, DEFAULT_USER, NO_SOCKET_ADDR};
use crate::stats::Stats;
use crate::Config;

/// Closed sessions a restore keeps for the connections opened next (`Session::renew`).
const SPARE_SESSIONS: usize = 16;

/// An engine's state at one moment, to go back to with `Engine::restore`.
pub struct Snapshot {
    /// Tells snapshots apart (`restore_config`): unique in the process.
    id: u64,
    config: Config,
    dbs: Vec<Db>,
    clock_us: i64,
    now_ms: i64,
    rng: EngineRng,
    dirty: u64,
    maybe_expiring: u64,
    /// (sha, body) of every cached script.
    scripts: Vec<([u8; 40], Bytes)>,
    /// (name, code) of every function library, by name.
    libraries: Vec<(String, Bytes)>,
}

/// An engine's state in the middle of a run, taken by `Engine::fork` and put back with
/// `Engine::resume` (with the snapshot the run started from).
///
/// Its first fields repeat `Snapshot`'s on purpose rather than embedding one: a fork leaves
/// out what a run may not change (config, scripts, libraries), and adds the connections,
/// counters and save time a run does change.
pub struct Fork {
    /// The databases up to the last one not empty as in the base snapshot.
    dbs: Vec<Db>,
    clock_us: i64,
    now_ms: i64,
    rng: EngineRng,
    dirty: u64,
    maybe_expiring: u64,
    last_save_s: i64,
    stats: Stats,
    next_conn_id: u64,
    sessions: Vec<PlainSession>,
}

/// What a connection that only ran plain commands has of its own. A user or address that
/// is still what `Session::new` gives is left out (None): the explorer forks at every
/// branch point, and copying them would allocate three strings per connection each time.
struct PlainSession {
    id: ConnId,
    authenticated: bool,
    acl_free: bool,
    user: Option<String>,
    addr: Option<String>,
    laddr: Option<String>,
    db: usize,
    resp: u8,
    created_ms: i64,
    last_interaction_ms: i64,
    last_command: std::borrow::Cow<'static, str>,
    commands_run: u64,
    had_multi_state: bool,
}

impl PlainSession {
    /// The connection's state, if nothing but what this keeps differs from a new one.
    fn of(s: &Session) -> Option<PlainSession> {
        let plain = s.multi.is_none()
            && s.watched.is_empty()
            && !s.watch_dirty
            && s.watched_expired.is_empty()
            && !s.in_pubsub()
            && s.name.is_none()
            && s.lib_name.is_none()
            && s.lib_ver.is_none()
            && s.reply_mode == crate::session::ReplyMode::On
            && !s.no_evict
            && !s.no_touch
            && !s.monitor
            && !s.replica
            && !s.tracking.on
            && s.blocked.is_none()
            && s.outbox.is_empty()
            && s.outbox_bytes == 0
            && s.obuf_soft_since.is_none()
            && !s.close_requested
            && !s.close_now
            && s.fault_delay.is_none()
            && s.fault_truncate.is_none();
        plain.then(|| PlainSession {
            id: s.id,
            authenticated: s.authenticated,
            acl_free: s.acl_free,
            user: unless_default(&s.user, DEFAULT_USER),
            addr: unless_default(&s.addr, NO_SOCKET_ADDR),
            laddr: unless_default(&s.laddr, NO_SOCKET_ADDR),
            db: s.db,
            resp: s.resp,
            created_ms: s.created_ms,
            last_interaction_ms: s.last_interaction_ms,
            last_command: s.last_command.clone(),
            commands_run: s.commands_run,
            had_multi_state: s.had_multi_state,
        })
    }

    /// Gives `s`, a new session (`Engine::new_session`), this connection's state.
    fn apply_to(&self, s: &mut Session) {
        s.acl_free = self.acl_free;
        if let Some(user) = &self.user {
            s.user.clone_from(user);
        }
        if let Some(addr) = &self.addr {
            s.addr.clone_from(addr);
        }
        if let Some(laddr) = &self.laddr {
            s.laddr.clone_from(laddr);
        }
        s.db = self.db;
        s.resp = self.resp;
        s.last_interaction_ms = self.last_interaction_ms;
        s.last_command = self.last_command.clone();
        s.commands_run = self.commands_run;
        s.had_multi_state = self.had_multi_state;
    }
}

/// `value`, unless it is `default` (what a new session has).
fn unless_default(value: &str, default: &str) -> Option<String> {
    (value != default).then(|| value.to_string())
}

/// Whether a command changes nothing but the data and the state a `Fork` keeps: reads and
/// writes of keys, scripts (their inner commands are counted, so checked, too) and
/// transactions; not admin, pub/sub, blocking, CLIENT, CONFIG, SCRIPT or redlab controls.
fn plain_command(name: &str, command_flags: u32) -> bool {
    if command_flags & (flags::ADMIN | flags::PUBSUB | flags::BLOCKING) != 0
        || name.starts_with("redlab")
    {
        return false;
    }
    command_flags & (flags::WRITE | flags::READONLY) != 0
        || matches!(
            name,
            "eval"
                | "evalsha"
                | "eval_ro"
                | "evalsha_ro"
                | "fcall"
                | "fcall_ro"
                | "multi"
                | "exec"
                | "discard"
                | "watch"
                | "unwatch"
                | "ping"
                | "echo"
                | "time"
        )
}

impl Snapshot {
    /// The number of keys across databases, to show what a snapshot holds.
    pub fn keys(&self) -> usize {
        self.dbs.iter().map(|d| d.len()).sum()
    }
}

impl Engine {
    /// Takes the engine's state now (see the module docs for what it contains).
    pub fn snapshot(&self) -> Snapshot {
        let mut scripts: Vec<([u8; 40], Bytes)> = self
            .scripting
            .cache
            .scripts
            .iter()
            .map(|(sha, s)| (*sha, s.body.clone()))
            .collect();
        scripts.sort_by_key(|s| s.0);
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Snapshot {
            id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            config: self.config.clone(),
            dbs: self.dbs.clone(),
            clock_us: self.clock.now_us(),
            now_ms: self.now_ms,
            rng: self.rng.clone(),
            dirty: self.dirty,
            maybe_expiring: self.maybe_expiring,
            scripts,
            libraries: self
                .scripting
                .libs
                .libs
                .values()
                .map(|l| (l.name.clone(), l.code.clone()))
                .collect(),
        }
    }

    /// Puts the engine back into `snap`'s state (see the module docs).
    pub fn restore(&mut self, snap: &Snapshot) {
        self.restore_all_but_data(snap);
        self.dbs.clone_from(&snap.dbs);
    }

    fn restore_all_but_data(&mut self, snap: &Snapshot) {
        self.close_all_sessions();
        self.next_conn_id
            .store(1, std::sync::atomic::Ordering::Relaxed);
        self.watched_keys.clear();
        self.blocking_keys.clear();
        self.ready_keys.clear();
        self.serving_key = None;
        self.wakeups.clear();
        self.monitors.clear();
        self.pubsub = PubSub::default();
        self.stats.clear();
        self.faults.clear();
        self.snapshot = None;
        self.time_frozen = false;
        self.shutdown_requested = false;

        self.restore_config(snap);
        self.clock.set_unix_us(snap.clock_us);
        self.now_ms = snap.now_ms;
        self.rng = snap.rng.clone();
        self.dirty = snap.dirty;
        self.maybe_expiring = snap.maybe_expiring;

        self.restore_scripts(snap);
        self.restore_libraries(snap);
    }

    /// Closes every connection, keeping up to `SPARE_SESSIONS` of them for reuse.
    ///
    /// A restore clears the watch, blocking, pub/sub and MONITOR tables right after, so of
    /// what `close_session` undoes only client tracking, replication links and cluster
    /// links outlive it. When no connection has tracking on and the engine is no cluster
    /// node, the sessions are taken out directly: the explorer restores at every schedule,
    /// and closing each connection hook by hook was a third of the restore.
    fn close_all_sessions(&mut self) {
        let direct = self.cluster.is_none()
            && self
                .sessions
                .values()
                .all(|s| !s.tracking.on && !s.tracking.bcast);
        if direct {
            let mut sessions = std::mem::take(&mut self.sessions);
            for (id, s) in sessions.drain() {
                self.repl_forget(id);
                if self.spare_sessions.len() < SPARE_SESSIONS {
                    self.spare_sessions.push(s);
                }
            }
            self.sessions = sessions;
            return;
        }
        let ids: Vec<ConnId> = self.sessions.keys().copied().collect();
        for id in ids {
            if let Some(s) = self.close_session(id) {
                if self.spare_sessions.len() < SPARE_SESSIONS {
                    self.spare_sessions.push(s);
                }
            }
        }
        self.sessions.clear();
    }

    /// The state now, to branch from, when the run since `base` was restored has stayed on
    /// plain ground: only plain commands (see `plain_command`; INFO's per-command counters
    /// tell which ran), the configuration, scripts and function libraries still the
    /// snapshot's, no transaction, watch, subscription, block, tracking or fault open, and
    /// the clock not frozen. None otherwise.
    pub fn fork(&self, base: &Snapshot) -> Option<Fork> {
        let plain = self
            .stats
            .per_command
            .values()
            .all(|c| plain_command(&c.name, c.flags))
            && self.config.generation == base.config.generation
            && self.watched_keys.is_empty()
            && self.blocking_keys.is_empty()
            && self.ready_keys.is_empty()
            && self.wakeups.is_empty()
            && self.monitors.is_empty()
            && self.serving_key.is_none()
            && self.tracking.clients == 0
            && self.faults.is_empty()
            && self.hash_ttl.is_empty()
            && self.cluster.is_none()
            && self.snapshot.is_none()
            && !self.time_frozen
            && !self.shutdown_requested
            && self.scripting.cache.scripts.len() == base.scripts.len()
            && self.libraries_are(base);
        if !plain {
            return None;
        }
        let sessions = self
            .sessions
            .values()
            .map(PlainSession::of)
            .collect::<Option<Vec<_>>>()?;
        // Only the databases up to the last one that differs from the snapshot's: the
        // others are empty as in `base`, and `resume` takes them from there.
        let kept = (0..self.dbs.len())
            .rev()
            .find(|&i| {
                base.dbs
                    .get(i)
                    .is_none_or(|b| !self.dbs[i].same_and_bare(b))
            })
            .map_or(0, |i| i + 1);
        Some(Fork {
            dbs: self.dbs[..kept].to_vec(),
            clock_us: self.clock.now_us(),
            now_ms: self.now_ms,
            rng: self.rng.clone(),
            dirty: self.dirty,
            maybe_expiring: self.maybe_expiring,
            last_save_s: self.last_save_s,
            stats: self.stats.clone(),
            next_conn_id: self.next_conn_id.load(std::sync::atomic::Ordering::Relaxed),
            sessions,
        })
    }

    /// Puts the engine into `fork`'s state; `base` is the snapshot `fork` was taken after.
    pub fn resume(&mut self, base: &Snapshot, fork: &Fork) {
        self.restore_all_but_data(base);
        if self.dbs.len() != base.dbs.len() {
            self.dbs.clone_from(&base.dbs);
        }
        for (i, db) in self.dbs.iter_mut().enumerate() {
            db.clone_from(fork.dbs.get(i).unwrap_or(&base.dbs[i]));
        }
        self.clock.set_unix_us(fork.clock_us);
        self.now_ms = fork.now_ms;
        self.rng = fork.rng.clone();
        self.dirty = fork.dirty;
        self.maybe_expiring = fork.maybe_expiring;
        self.last_save_s = fork.last_save_s;
        self.stats.clone_from(&fork.stats);
        for s in &fork.sessions {
            let mut session = self.new_session(s.id, s.created_ms, s.authenticated);
            s.apply_to(&mut session);
            self.sessions.insert(s.id, session);
        }
        self.next_conn_id
            .store(fork.next_conn_id, std::sync::atomic::Ordering::Relaxed);
    }

    /// Copies the snapshot's configuration, unless the engine's is still the copy the last
    /// restore of this snapshot made: every change moves the generation (`Config::set`,
    /// `config_mut`; a failed CONFIG SET puts back the configuration it had, generation
    /// and all), so the same snapshot and the same generation mean the same values. The
    /// explorer restores at every schedule, and copying the configuration's strings and
    /// maps was a third of a restore.
    fn restore_config(&mut self, snap: &Snapshot) {
        if self.config_restored == Some((snap.id, self.config.generation)) {
            return;
        }
        self.config.clone_from(&snap.config);
        self.config_restored = Some((snap.id, self.config.generation));
    }

    /// Whether the function libraries are the snapshot's.
    fn libraries_are(&self, snap: &Snapshot) -> bool {
        let libs = &self.scripting.libs.libs;
        libs.len() == snap.libraries.len()
            && libs
                .values()
                .zip(&snap.libraries)
                .all(|(l, (name, code))| l.name == *name && l.code == *code)
    }

    fn restore_scripts(&mut self, snap: &Snapshot) {
        let cache = &mut self.scripting.cache.scripts;
        let intact = snap.scripts.iter().all(|(sha, _)| cache.contains_key(sha));
        if intact {
            if cache.len() != snap.scripts.len() {
                let extra: Vec<[u8; 40]> = cache
                    .keys()
                    .filter(|sha| snap.scripts.binary_search_by(|s| s.0.cmp(sha)).is_err())
                    .copied()
                    .collect();
                for sha in extra {
                    if let Some(s) = cache.remove(&sha) {
                        self.scripting.set_aside.insert(sha, s);
                    }
                }
            }
            return;
        }
        // The Lua state was flushed during the run: compile the snapshot's scripts again.
        self.scripting.flush_scripts();
        let conn = self.connect();
        for (sha, body) in &snap.scripts {
            debug_assert_eq!(sha1_hex(body), *sha);
            let _ = self.execute(conn, &[&b"SCRIPT"[..], b"LOAD", body]);
        }
        self.disconnect(conn);
        self.next_conn_id
            .store(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn restore_libraries(&mut self, snap: &Snapshot) {
        if self.libraries_are(snap) {
            return;
        }
        self.scripting.libs = Default::default();
        self.scripting.func_rt = None;
        if snap.libraries.is_empty() {
            return;
        }
        let conn = self.connect();
        for (_, code) in &snap.libraries {
            let _ = self.execute(conn, &[&b"FUNCTION"[..], b"LOAD", code]);
        }
        self.disconnect(conn);
        self.next_conn_id
            .store(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Clock, Reply};

    fn bulk(s: &str) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
    }

    fn engine() -> Engine {
        let config = Config {
            seed: Some(7),
            ..Config::default()
        };
        Engine::with_clock(config, Clock::manual(1_000_000))
    }

    #[test]
    fn restore_brings_back_data_clock_and_ids() {
        let mut e = engine();
        let c = e.connect();
        e.execute(c, &["SET", "k", "1"]);
        e.execute(c, &["SET", "t", "x", "PX", "100"]);
        let snap = e.snapshot();
        e.execute(c, &["SET", "k", "2"]);
        e.execute(c, &["SET", "other", "y"]);
        e.clock().advance(std::time::Duration::from_millis(500));
        assert_eq!(e.execute(c, &["EXISTS", "t"]), Reply::Int(0));
        e.restore(&snap);
        let c = e.connect();
        assert_eq!(c, 1);
        assert_eq!(e.execute(c, &["GET", "k"]), bulk("1"));
        assert_eq!(e.execute(c, &["EXISTS", "other", "t"]), Reply::Int(1));
        assert_eq!(e.clock().now_ms(), 1_000_000);
    }

    /// A restore keeps closed sessions' allocations for the next connections: nothing
    /// else of them may show.
    #[test]
    fn a_connection_after_a_restore_is_a_new_one() {
        let info = |e: &mut Engine| {
            let c = e.connect();
            (c, e.execute(c, &["CLIENT", "INFO"]))
        };
        let fresh = info(&mut engine());
        let mut e = engine();
        let snap = e.snapshot();
        for _ in 0..2 {
            let c = e.connect();
            for cmd in [
                &["SELECT", "3"][..],
                &["CLIENT", "SETNAME", "worker"],
                &["HELLO", "3"],
                &["CLIENT", "TRACKING", "on"],
                &["WATCH", "k"],
                &["MULTI"],
                &["SET", "k", "v"],
            ] {
                e.execute(c, cmd);
            }
            e.restore(&snap);
            assert_eq!(info(&mut e), fresh);
        }
        // And a fork's connections after a resume are the ones forked. (Restored first: the
        // CLIENT INFO above is a command a fork refuses to cover.)
        e.restore(&snap);
        let c = e.connect();
        e.execute(c, &["GET", "k"]);
        let fork = e.fork(&snap).expect("plain so far");
        let before = e.execute(c, &["CLIENT", "INFO"]);
        e.execute(c, &["SELECT", "5"]);
        e.execute(c, &["CLIENT", "SETNAME", "other"]);
        e.resume(&snap, &fork);
        assert_eq!(e.execute(c, &["CLIENT", "INFO"]), before);
    }

    /// A fork keeps only the databases up to the last one with data; a resume takes the
    /// others from the snapshot, so data written there after the fork is gone, and data
    /// the fork holds in a later database comes back.
    #[test]
    fn a_resume_brings_back_every_database_as_forked() {
        let mut e = engine();
        let c = e.connect();
        e.execute(c, &["SET", "k", "0"]);
        let snap = e.snapshot();
        e.restore(&snap);
        let c = e.connect();
        e.execute(c, &["SET", "k", "1"]);
        let only_db0 = e.fork(&snap).expect("plain so far");
        // Written without SELECT, which a fork does not cover.
        e.execute(c, &["SET", "in3", "3"]);
        e.execute(c, &["MOVE", "in3", "3"]);
        let with_db3 = e.fork(&snap).expect("plain so far");
        e.execute(c, &["SET", "in5", "5"]);
        e.execute(c, &["MOVE", "in5", "5"]);
        let get = |e: &mut Engine, db: &str, key: &str| {
            e.execute(c, &["SELECT", db]);
            e.execute(c, &["GET", key])
        };
        e.resume(&snap, &only_db0);
        assert_eq!(get(&mut e, "0", "k"), bulk("1"));
        assert_eq!(get(&mut e, "3", "in3"), Reply::Nil);
        assert_eq!(get(&mut e, "5", "in5"), Reply::Nil);
        e.resume(&snap, &with_db3);
        assert_eq!(get(&mut e, "0", "k"), bulk("1"));
        assert_eq!(get(&mut e, "3", "in3"), bulk("3"));
        assert_eq!(get(&mut e, "5", "in5"), Reply::Nil);
        assert_eq!(only_db0.dbs.len(), 1);
        assert_eq!(
            with_db3.dbs.len(),
            4,
            "databases past the last with data are left out"
        );
    }

    /// A restore skips copying a configuration that is still its own copy: any change
    /// since, by CONFIG SET or `config_mut`, is undone all the same, and a restore of
    /// another snapshot brings that one's.
    #[test]
    fn restore_brings_back_the_configuration_however_it_changed() {
        let mut e = engine();
        let c = e.connect();
        let get = |e: &mut Engine| {
            let c = e.connect();
            e.execute(c, &["CONFIG", "GET", "maxmemory"])
        };
        let snap = e.snapshot();
        let original = get(&mut e);
        e.execute(c, &["CONFIG", "SET", "maxmemory", "1000"]);
        let changed = get(&mut e);
        assert_ne!(changed, original);
        let other = e.snapshot();
        for _ in 0..2 {
            e.restore(&snap);
            assert_eq!(get(&mut e), original);
        }
        let c = e.connect();
        e.execute(c, &["CONFIG", "SET", "maxmemory", "2000"]);
        e.restore(&snap);
        assert_eq!(get(&mut e), original);
        e.config_mut().maxmemory = 3000;
        e.restore(&snap);
        assert_eq!(get(&mut e), original);
        e.restore(&other);
        assert_eq!(get(&mut e), changed);
        e.restore(&snap);
        assert_eq!(get(&mut e), original);
    }

    #[test]
    fn restore_repeats_random_replies() {
        let mut e = engine();
        let c = e.connect();
        e.execute(c, &["SADD", "s", "a", "b", "c", "d", "e", "f"]);
        let snap = e.snapshot();
        let first = e.execute(c, &["SRANDMEMBER", "s"]);
        let lua = e.execute(c, &["EVAL", "return tostring(math.random())", "0"]);
        for _ in 0..5 {
            e.restore(&snap);
            let c = e.connect();
            assert_eq!(e.execute(c, &["SRANDMEMBER", "s"]), first);
            assert_eq!(
                e.execute(c, &["EVAL", "return tostring(math.random())", "0"]),
                lua
            );
        }
    }

    #[test]
    fn scripts_added_later_are_forgotten_then_reused() {
        let mut e = engine();
        let c = e.connect();
        let Reply::Bulk(kept) = e.execute(c, &["SCRIPT", "LOAD", "return 1"]) else {
            panic!("no sha");
        };
        let snap = e.snapshot();
        let Reply::Bulk(later) = e.execute(c, &["SCRIPT", "LOAD", "return 2"]) else {
            panic!("no sha");
        };
        e.restore(&snap);
        let c = e.connect();
        assert_eq!(
            e.execute(c, &[&b"SCRIPT"[..], b"EXISTS", &kept, &later]),
            Reply::Array(vec![Reply::Int(1), Reply::Int(0)])
        );
        assert_eq!(
            e.execute(c, &[&b"EVALSHA"[..], &later, b"0"]),
            Reply::Error(crate::errors::NOSCRIPT.into())
        );
        assert_eq!(e.execute(c, &["EVAL", "return 2", "0"]), Reply::Int(2));
        assert_eq!(
            e.execute(c, &[&b"EVALSHA"[..], &later, b"0"]),
            Reply::Int(2)
        );
        // A flush in the run: the snapshot's script comes back compiled in a new state.
        e.execute(c, &["SCRIPT", "FLUSH"]);
        e.restore(&snap);
        let c = e.connect();
        assert_eq!(e.execute(c, &[&b"EVALSHA"[..], &kept, b"0"]), Reply::Int(1));
        assert_eq!(
            e.execute(c, &[&b"EVALSHA"[..], &later, b"0"]),
            Reply::Error(crate::errors::NOSCRIPT.into())
        );
    }

    #[test]
    fn function_libraries_come_back() {
        let mut e = engine();
        let c = e.connect();
        let lib = "#!lua name=l\nredis.register_function('f', function() return 5 end)";
        e.execute(c, &["FUNCTION", "LOAD", lib]);
        let snap = e.snapshot();
        e.execute(c, &["FUNCTION", "DELETE", "l"]);
        e.restore(&snap);
        let c = e.connect();
        assert_eq!(e.execute(c, &["FCALL", "f", "0"]), Reply::Int(5));
        e.execute(
            c,
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=m\nredis.register_function('g', function() return 6 end)",
            ],
        );
        e.restore(&snap);
        let c = e.connect();
        assert_eq!(e.execute(c, &["FCALL", "f", "0"]), Reply::Int(5));
        assert!(matches!(
            e.execute(c, &["FCALL", "g", "0"]),
            Reply::Error(_)
        ));
    }

    /// A change made after a restore is never mistaken for one made before it: values cached
    /// by configuration generation (encoding limits here) follow the new setting, not the
    /// setting an earlier run had under the same count of changes.
    #[test]
    fn a_change_after_a_restore_is_not_read_from_a_cache_of_an_earlier_run() {
        let mut e = engine();
        let snap = e.snapshot();
        let limit = |e: &mut Engine, v: &str| {
            e.config_mut()
                .set_by_name("hash-max-listpack-entries", v)
                .unwrap();
        };
        limit(&mut e, "1");
        let c = e.connect();
        e.execute(c, &["HSET", "h", "a", "1", "b", "2"]);
        assert_eq!(
            e.execute(c, &["OBJECT", "ENCODING", "h"]),
            Reply::Bulk(b"hashtable".to_vec().into())
        );
        e.restore(&snap);
        // The same number of changes as the run before, to another value.
        limit(&mut e, "100");
        let c = e.connect();
        e.execute(c, &["HSET", "h", "a", "1", "b", "2"]);
        assert_eq!(
            e.execute(c, &["OBJECT", "ENCODING", "h"]),
            Reply::Bulk(b"listpack".to_vec().into())
        );
    }
}
