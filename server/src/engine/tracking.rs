//! Client-side caching (CLIENT TRACKING): which clients may hold which keys in a local cache,
//! and the invalidation messages a change sends them.
//!
//! Two modes, as in Redis 7.0:
//! - default: every key a tracking client reads (a read-only command, or a script that ran a
//!   read-only command, for its declared keys) is remembered in one table, key -> client ids.
//!   The first change to the key sends each of those clients an invalidation and forgets the
//!   key. The table is global: keys are not told apart by database.
//! - BCAST: nothing is remembered per client. A client subscribes to key prefixes; changed
//!   keys are collected per prefix and sent, one message per prefix, once the command (or the
//!   network shell's batch) is over.
//!
//! An invalidation goes to the client itself as a RESP3 push (`invalidate`, keys), or to its
//! REDIRECT client: as a push if that one speaks RESP3, as a `__redis__:invalidate` pub/sub
//! message if it speaks RESP2 and is subscribed to anything. A flush sends a null instead of
//! keys. An invalidation meant for the client whose command is running is held until its
//! reply has gone, so the two never interleave (Redis's pending keys); one caused before the
//! command runs (eviction, the table's size limit) goes at once.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use foldhash::fast::FixedState;
use indexmap::{IndexMap, IndexSet};

use super::Engine;
use crate::reply::Reply;
use crate::session::ConnId;

/// The channel a RESP2 redirect client gets invalidations on.
pub const INVALIDATE_CHANNEL: &str = "__redis__:invalidate";

/// One client's tracking mode (`Session::tracking`).
#[derive(Debug, Default, Clone)]
pub struct ClientTracking {
    pub on: bool,
    /// The client invalidations go to; 0 for the client itself.
    pub redirect: ConnId,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// CLIENT CACHING YES (OPTIN) or NO (OPTOUT) applies to the next command or transaction.
    pub caching: bool,
    /// The redirect client went away: invalidations are lost (TRACKINGINFO says so).
    pub broken_redirect: bool,
    /// BCAST prefixes, in the order Redis lists them; None outside BCAST mode.
    pub prefixes: Option<BTreeSet<Vec<u8>>>,
}

/// Options of CLIENT TRACKING ON.
#[derive(Debug, Default, Clone, Copy)]
pub struct TrackingOptions {
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
}

/// Keys changed under one BCAST prefix since the last broadcast, with the client that changed
/// each last (None: expiry, eviction or a script), and the clients subscribed to the prefix.
#[derive(Debug, Default)]
struct Prefix {
    keys: BTreeMap<Vec<u8>, Option<ConnId>>,
    clients: BTreeSet<ConnId>,
}

/// The engine's tracking state (`Engine::tracking`).
#[derive(Debug, Default)]
pub(crate) struct Tracking {
    /// key -> clients that may cache it.
    table: IndexMap<Vec<u8>, IndexSet<ConnId, FixedState>, FixedState>,
    /// Client ids stored across the table (INFO tracking_total_items).
    items: u64,
    prefixes: BTreeMap<Vec<u8>, Prefix>,
    /// Clients with tracking on (INFO tracking_clients).
    pub clients: u64,
    /// The client whose command is being processed (Redis's current_client).
    pub current: Option<ConnId>,
    /// Its command's handler is running (Redis's CLIENT_EXECUTING_COMMAND): invalidations
    /// for it wait until its reply has gone.
    pub executing: bool,
    /// Who makes the changes now, for BCAST's NOLOOP: the client running a command, None
    /// for expiry, eviction and a script's own commands.
    pub modifier: Option<ConnId>,
    /// Invalidations held for `current` (None: a flush).
    pending: Vec<Option<Vec<u8>>>,
    /// Rounds in a row the size limit could not be reached: each tries harder.
    limit_rounds: u32,
    /// The keys a running script declared, remembered when it runs a read-only command.
    pub script_keys: Option<Vec<Bytes>>,
    /// The network shell sends BCAST invalidations after a batch, not after each command.
    pub defer_broadcast: bool,
}

impl Tracking {
    /// Nothing is tracked: a write has nothing to do here.
    fn idle(&self) -> bool {
        self.table.is_empty() && self.prefixes.is_empty()
    }

    pub fn total_keys(&self) -> usize {
        self.table.len()
    }

    pub fn total_items(&self) -> u64 {
        self.items
    }

    pub fn total_prefixes(&self) -> usize {
        self.prefixes.len()
    }
}

/// The tracking context of an outer command, put aside while a blocked client is served.
pub(crate) struct Outer {
    current: Option<ConnId>,
    executing: bool,
    pending: Vec<Option<Vec<u8>>>,
}

impl Engine {
    /// A blocked client's command runs again: it is the current, executing client until
    /// `tracking_leave`.
    pub(crate) fn tracking_enter(&mut self, conn: ConnId) -> Outer {
        let t = &mut self.tracking;
        Outer {
            current: t.current.replace(conn),
            executing: std::mem::replace(&mut t.executing, true),
            pending: std::mem::take(&mut t.pending),
        }
    }

    pub(crate) fn tracking_leave(&mut self, outer: Outer) {
        let t = &mut self.tracking;
        t.current = outer.current;
        t.executing = outer.executing;
        t.pending = outer.pending;
    }

    /// CLIENT TRACKING ON: enables (or changes) tracking for `conn`. The caller checked the
    /// options against each other and the client's current mode.
    pub(crate) fn enable_tracking(
        &mut self,
        conn: ConnId,
        redirect: ConnId,
        opts: TrackingOptions,
        prefixes: &[Bytes],
    ) {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return;
        };
        let t = &mut s.tracking;
        if !t.on {
            self.tracking.clients += 1;
        }
        t.on = true;
        t.broken_redirect = false;
        t.redirect = redirect;
        t.optin = opts.optin;
        t.optout = opts.optout;
        t.noloop = opts.noloop;
        t.bcast = opts.bcast;
        if opts.bcast {
            let mine = t.prefixes.get_or_insert_with(BTreeSet::new);
            let wanted: Vec<Vec<u8>> = if prefixes.is_empty() {
                vec![Vec::new()]
            } else {
                prefixes.iter().map(|p| p.to_vec()).collect()
            };
            for p in wanted {
                let entry = self.tracking.prefixes.entry(p.clone()).or_default();
                if entry.clients.insert(conn) {
                    mine.insert(p);
                }
            }
        }
    }

    /// CLIENT TRACKING OFF, RESET and disconnection. The table keeps the client's id: it is
    /// skipped when a key changes (Redis cleans up lazily too).
    pub(crate) fn disable_tracking(&mut self, conn: ConnId) {
        let Some(s) = self.sessions.get_mut(&conn) else {
            return;
        };
        let t = &mut s.tracking;
        if t.bcast {
            for p in t.prefixes.take().unwrap_or_default() {
                if let Some(entry) = self.tracking.prefixes.get_mut(&p) {
                    entry.clients.remove(&conn);
                    if entry.clients.is_empty() {
                        self.tracking.prefixes.remove(&p);
                    }
                }
            }
        }
        if t.on {
            self.tracking.clients -= 1;
            let redirect = t.redirect;
            *t = ClientTracking {
                redirect,
                ..ClientTracking::default()
            };
        }
    }

    /// After a read-only command of `conn`: remembers `keys` as possibly cached by it
    /// (unless OPTIN/OPTOUT and CLIENT CACHING say otherwise).
    pub(crate) fn tracking_remember<'a>(
        &mut self,
        conn: ConnId,
        keys: impl IntoIterator<Item = &'a [u8]>,
    ) {
        let Some(s) = self.sessions.get(&conn) else {
            return;
        };
        let t = &s.tracking;
        if !t.on || t.bcast || (t.optin && !t.caching) || (t.optout && t.caching) {
            return;
        }
        for key in keys {
            if !self.tracking.table.contains_key(key) {
                self.tracking
                    .table
                    .insert(key.to_vec(), IndexSet::default());
            }
            let ids = self.tracking.table.get_mut(key).expect("inserted above");
            if ids.insert(conn) {
                self.tracking.items += 1;
            }
        }
    }

    /// A key changed (a write, expiry, eviction): invalidates it for every client that may
    /// cache it, and queues it for the BCAST prefixes it falls under when `bcast`.
    pub(crate) fn tracking_invalidate(&mut self, key: &[u8], bcast: bool) {
        if self.tracking.idle() {
            return;
        }
        if bcast {
            let modifier = self.tracking.modifier;
            for (prefix, state) in self.tracking.prefixes.iter_mut() {
                if key.starts_with(prefix) {
                    state.keys.insert(key.to_vec(), modifier);
                }
            }
        }
        let Some(ids) = self.tracking.table.swap_remove(key) else {
            return;
        };
        self.tracking.items -= ids.len() as u64;
        let (current, executing) = (self.tracking.current, self.tracking.executing);
        for id in ids {
            let Some(s) = self.sessions.get(&id) else {
                continue;
            };
            // A client that switched to BCAST does not get what it tracked before.
            if !s.tracking.on || s.tracking.bcast {
                continue;
            }
            if s.tracking.noloop && current == Some(id) {
                continue;
            }
            if current == Some(id) && executing {
                self.tracking.pending.push(Some(key.to_vec()));
            } else {
                self.send_tracking(id, Reply::Array(vec![Reply::bulk(key)]));
            }
        }
    }

    /// FLUSHALL / FLUSHDB (any database): every tracking client is told that all its keys are
    /// invalid (a null), and the table is emptied.
    pub(crate) fn tracking_flush(&mut self) {
        if self.tracking.clients > 0 {
            let mut ids: Vec<ConnId> = self
                .sessions
                .values()
                .filter(|s| s.tracking.on)
                .map(|s| s.id)
                .collect();
            ids.sort_unstable();
            for id in ids {
                if self.tracking.current == Some(id) {
                    self.tracking.pending.push(None);
                } else {
                    self.send_tracking(id, Reply::Nil);
                }
            }
        }
        self.tracking.table = IndexMap::default();
        self.tracking.items = 0;
    }

    /// The invalidations held for `conn` while its command ran, as the messages that follow
    /// its reply: those for `conn` itself are returned, those for its redirect client are
    /// queued there.
    pub(crate) fn tracking_take_pending(&mut self, conn: ConnId) -> Vec<Reply> {
        if self.tracking.pending.is_empty() {
            return Vec::new();
        }
        let pending = std::mem::take(&mut self.tracking.pending);
        let mut own = Vec::new();
        for key in pending {
            let payload = match key {
                Some(k) => Reply::Array(vec![Reply::Bulk(k.into())]),
                None => Reply::Nil,
            };
            if let Some((to, msg)) = self.tracking_message(conn, payload) {
                if to == conn {
                    own.push(msg);
                } else {
                    self.push_to(to, msg);
                }
            }
        }
        own
    }

    /// Sends the keys changed under each BCAST prefix to its clients, one message per prefix
    /// (Redis does this before its event loop sleeps).
    pub(crate) fn tracking_broadcast(&mut self) {
        if self.tracking.clients == 0 || self.tracking.prefixes.values().all(|p| p.keys.is_empty())
        {
            return;
        }
        let mut out: Vec<(ConnId, Vec<Vec<u8>>)> = Vec::new();
        for state in self.tracking.prefixes.values_mut() {
            if state.keys.is_empty() {
                continue;
            }
            let keys = std::mem::take(&mut state.keys);
            for &client in &state.clients {
                let noloop = self
                    .sessions
                    .get(&client)
                    .is_some_and(|s| s.tracking.noloop);
                let list: Vec<Vec<u8>> = keys
                    .iter()
                    .filter(|(_, by)| !(noloop && **by == Some(client)))
                    .map(|(k, _)| k.clone())
                    .collect();
                if !list.is_empty() {
                    out.push((client, list));
                }
            }
        }
        for (client, keys) in out {
            let payload = Reply::Array(keys.into_iter().map(|k| Reply::Bulk(k.into())).collect());
            self.send_tracking(client, payload);
        }
    }

    /// tracking-table-max-keys: over the limit, forgets random keys (invalidating them for
    /// their clients) until under it, trying harder each round that falls short.
    pub(crate) fn tracking_limit(&mut self) {
        if self.tracking.table.is_empty() {
            return;
        }
        let max = self
            .config
            .extra
            .get("tracking-table-max-keys")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1_000_000);
        if max == 0 || self.tracking.table.len() <= max {
            self.tracking.limit_rounds = 0;
            return;
        }
        let mut effort = 100 * (self.tracking.limit_rounds as usize + 1);
        let modifier = self.tracking.modifier.take();
        while effort > 0 && !self.tracking.table.is_empty() {
            effort -= 1;
            let i = self.rng.below(self.tracking.table.len());
            let key = self
                .tracking
                .table
                .get_index(i)
                .expect("in range")
                .0
                .clone();
            self.tracking_invalidate(&key, false);
            if self.tracking.table.len() <= max {
                self.tracking.limit_rounds = 0;
                self.tracking.modifier = modifier;
                return;
            }
        }
        self.tracking.modifier = modifier;
        self.tracking.limit_rounds += 1;
    }

    /// Sends one invalidation (`payload`: the keys, or a null) on behalf of `conn`.
    pub(crate) fn send_tracking(&mut self, conn: ConnId, payload: Reply) {
        if let Some((to, msg)) = self.tracking_message(conn, payload) {
            self.push_to(to, msg);
        }
    }

    /// Where an invalidation for `conn` goes and in what form; None when it cannot be
    /// delivered (RESP2 without a redirect, or a RESP2 redirect client not subscribed).
    /// A redirect client that is gone marks the redirect broken and tells `conn` (RESP3).
    fn tracking_message(&mut self, conn: ConnId, payload: Reply) -> Option<(ConnId, Reply)> {
        let s = self.sessions.get_mut(&conn)?;
        let redirect = s.tracking.redirect;
        let mut to = conn;
        if redirect != 0 {
            if !self.sessions.contains_key(&redirect) {
                let s = self.sessions.get_mut(&conn)?;
                s.tracking.broken_redirect = true;
                return (s.resp > 2).then(|| {
                    (
                        conn,
                        Reply::Push(vec![
                            Reply::bulk("tracking-redir-broken"),
                            Reply::Int(redirect as i64),
                        ]),
                    )
                });
            }
            to = redirect;
        }
        let target = self.sessions.get(&to)?;
        if target.resp > 2 {
            Some((to, Reply::Push(vec![Reply::bulk("invalidate"), payload])))
        } else if to != conn && target.in_pubsub() {
            Some((
                to,
                Reply::Push(vec![
                    Reply::bulk("message"),
                    Reply::bulk(INVALIDATE_CHANNEL),
                    payload,
                ]),
            ))
        } else {
            None
        }
    }

    /// After a command ran through `call`: what tracking learns from it. A read-only command
    /// (not EVAL_RO & co., whose own commands count) remembers its keys for the client; one
    /// run by a script remembers the keys the script declared.
    pub(super) fn tracking_after_call(
        &mut self,
        cmd: &'static crate::cmd::table::Command,
        call: &super::Call,
    ) {
        use crate::cmd::table::flags::READONLY;
        if self.tracking.clients == 0
            || !cmd.has(READONLY)
            || matches!(cmd.name, "eval_ro" | "evalsha_ro" | "fcall_ro")
        {
            return;
        }
        if call.in_script {
            if let Some(keys) = self.tracking.script_keys.take() {
                self.tracking_remember(call.conn, keys.iter().map(|k| &k[..]));
                self.tracking.script_keys = Some(keys);
            }
            return;
        }
        if cmd.has(crate::cmd::table::flags::PUBSUB) {
            return;
        }
        let positions = cmd.key_positions(&call.args);
        if positions.is_empty() {
            return;
        }
        let args = call.args.clone();
        self.tracking_remember(call.conn, positions.iter().map(|&p| &args[p][..]));
    }

    /// Before a script command runs: its declared keys, for `tracking_after_call`.
    pub(super) fn tracking_before_script(
        &mut self,
        cmd: &'static crate::cmd::table::Command,
        call: &super::Call,
    ) -> bool {
        if self.tracking.clients == 0
            || call.in_script
            || !matches!(
                cmd.name,
                "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
            )
        {
            return false;
        }
        let tracked = self
            .sessions
            .get(&call.conn)
            .is_some_and(|s| s.tracking.on && !s.tracking.bcast);
        if !tracked {
            return false;
        }
        let keys = cmd
            .key_positions(&call.args)
            .into_iter()
            .map(|p| call.args[p].clone())
            .collect();
        self.tracking.script_keys = Some(keys);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::config::Config;
    use crate::engine::Engine;
    use crate::reply::Reply;

    fn run(e: &mut Engine, conn: u64, line: &str) -> Reply {
        let args: Vec<&str> = line.split(' ').collect();
        e.execute(conn, &args)
    }

    fn info_field(e: &mut Engine, name: &str) -> String {
        let text = match run(e, 99, "INFO") {
            Reply::Verbatim(_, text) | Reply::Bulk(text) => text,
            other => panic!("INFO is text, not {other:?}"),
        };
        let text = String::from_utf8_lossy(&text).into_owned();
        let prefix = format!("{name}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
            .unwrap_or_else(|| panic!("no {name} in INFO"))
    }

    fn invalidation(keys: &[&str]) -> Reply {
        Reply::Push(vec![
            Reply::bulk("invalidate"),
            Reply::Array(keys.iter().map(Reply::bulk).collect()),
        ])
    }

    #[test]
    fn own_invalidation_follows_the_reply() {
        let mut e = Engine::new(Config::default());
        run(&mut e, 1, "HELLO 3");
        run(&mut e, 1, "CLIENT TRACKING on");
        run(&mut e, 1, "GET k");
        assert_eq!(
            run(&mut e, 1, "SET k v"),
            Reply::Multi(vec![Reply::ok(), invalidation(&["k"])])
        );
        // Forgotten once invalidated: the next write sends nothing.
        assert_eq!(run(&mut e, 1, "SET k w"), Reply::ok());
        assert!(e.take_output(1).is_empty());
    }

    #[test]
    fn another_clients_write_reaches_the_outbox() {
        let mut e = Engine::new(Config::default());
        run(&mut e, 1, "HELLO 3");
        run(&mut e, 1, "CLIENT TRACKING on");
        run(&mut e, 1, "MGET a b");
        assert_eq!(info_field(&mut e, "tracking_total_keys"), "2");
        assert_eq!(info_field(&mut e, "tracking_total_items"), "2");
        assert_eq!(info_field(&mut e, "tracking_clients"), "1");
        run(&mut e, 2, "MSET a 1 b 1");
        assert_eq!(
            e.take_output(1),
            vec![invalidation(&["a"]), invalidation(&["b"])]
        );
        assert_eq!(info_field(&mut e, "tracking_total_keys"), "0");
        run(&mut e, 1, "CLIENT TRACKING off");
        assert_eq!(info_field(&mut e, "tracking_clients"), "0");
    }

    #[test]
    fn the_table_limit_forgets_keys_on_tick() {
        let mut e = Engine::new(Config::default());
        run(&mut e, 1, "HELLO 3");
        run(&mut e, 1, "CLIENT TRACKING on");
        run(&mut e, 1, "MGET a b c d");
        run(&mut e, 2, "CONFIG SET tracking-table-max-keys 1");
        e.tick();
        assert_eq!(e.take_output(1).len(), 3, "three keys invalidated");
        assert_eq!(info_field(&mut e, "tracking_total_keys"), "1");
    }

    #[test]
    fn bcast_sends_one_message_per_prefix_after_the_command() {
        let mut e = Engine::new(Config::default());
        run(&mut e, 1, "HELLO 3");
        run(&mut e, 1, "CLIENT TRACKING on BCAST PREFIX a PREFIX b");
        assert_eq!(info_field(&mut e, "tracking_total_prefixes"), "2");
        run(&mut e, 2, "MSET b2 1 a1 1 c1 1 a0 1");
        assert_eq!(
            e.take_output(1),
            vec![invalidation(&["a0", "a1"]), invalidation(&["b2"])]
        );
        run(&mut e, 1, "RESET");
        assert_eq!(info_field(&mut e, "tracking_total_prefixes"), "0");
    }

    #[test]
    fn expiry_on_the_engine_clock_invalidates() {
        let clock = Clock::manual(1_700_000_000_000);
        let mut e = Engine::with_clock(Config::default(), clock.clone());
        run(&mut e, 1, "HELLO 3");
        run(&mut e, 1, "CLIENT TRACKING on");
        run(&mut e, 2, "SET k v PX 100");
        run(&mut e, 1, "GET k");
        clock.advance(std::time::Duration::from_millis(200));
        e.tick();
        assert_eq!(e.take_output(1), vec![invalidation(&["k"])]);
    }

    #[test]
    fn pause_holds_writes_until_its_end_on_the_engine_clock() {
        let clock = Clock::manual(1_700_000_000_000);
        let mut e = Engine::with_clock(Config::default(), clock.clone());
        assert_eq!(run(&mut e, 1, "CLIENT PAUSE 1000 WRITE"), Reply::ok());
        assert_eq!(run(&mut e, 2, "SET k 1"), Reply::None);
        assert!(e.is_blocked(2));
        assert_eq!(run(&mut e, 3, "GET k"), Reply::Nil);
        assert_eq!(run(&mut e, 4, "SET k 2"), Reply::None);
        clock.advance(std::time::Duration::from_millis(999));
        e.tick();
        assert!(e.is_blocked(2));
        clock.advance(std::time::Duration::from_millis(1));
        e.tick();
        assert_eq!(e.take_output(2), vec![Reply::ok()]);
        assert_eq!(e.take_output(4), vec![Reply::ok()]);
        assert_eq!(run(&mut e, 3, "GET k"), Reply::bulk("2"), "run in order");
    }

    #[test]
    fn eviction_counts_and_spares_keys_without_deadline() {
        let mut e = Engine::new(Config::default());
        run(&mut e, 1, "SET keep 1");
        run(&mut e, 1, "SET v1 1 EX 100");
        run(&mut e, 1, "SET v2 1 EX 100");
        run(&mut e, 1, "CONFIG SET maxmemory-policy volatile-lru");
        run(&mut e, 1, "CONFIG SET maxmemory 1");
        assert_eq!(info_field(&mut e, "evicted_keys"), "2");
        assert_eq!(run(&mut e, 1, "DBSIZE"), Reply::Int(1));
        assert!(run(&mut e, 1, "SET x 1").is_error(), "still over: -OOM");
    }
}
