//! Blocking commands: blocking a client on keys, serving it when a key gets data, timeouts
//! and CLIENT UNBLOCK.

use super::{resolve, Call, Engine};
use crate::cmd::table::{policy, Command};
use crate::compat::since;
use crate::reply::Reply;
use crate::session::{Blocked, ConnId};
use bytes::Bytes;

impl Engine {
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
                postponed: false,
                first_us: 0,
                typed: None,
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
    pub(super) fn serve_ready_keys(&mut self) {
        if !self.ready_keys.is_empty() && !self.time_frozen {
            // As Redis (updateCachedTime before serving): the command that made the keys
            // ready may have taken time (DEBUG SLEEP inside MULTI), and a key that expired
            // meanwhile serves no one; it is expired here and goes to replicas as DEL.
            self.now_ms = self.clock.now_ms();
        }
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
                    // XREADGROUP also runs for a key that is gone or of another type: it answers
                    // the error Redis gives when its stream is deleted.
                    if cmd.name != "xreadgroup" && blocked_type(cmd).is_some_and(|t| t != type_name)
                    {
                        continue;
                    }
                    let args = b.args.clone();
                    let resp = self.sessions[&conn].resp;
                    // Spelt out like dispatch's top-level Call on purpose: each flag is this
                    // path's own decision (a re-run of a blocked command: `reprocessing`).
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
                    // The served client is the one running a command now: invalidations
                    // for it follow its reply.
                    let outer = self.tracking_enter(conn);
                    let started = crate::clock::monotonic_us();
                    let reply = self.call(cmd, &mut call);
                    let us = self.elapsed_us(started);
                    self.serving_key = None;
                    if reply != Reply::None {
                        let (first, typed) = self
                            .unblock(conn)
                            .map_or((0, None), |b| (b.first_us, b.typed));
                        // SLOWLOG shows the name the client typed (`rename-command`).
                        if let Some(t) = typed {
                            call.args[0] = t;
                        }
                        self.finish_blocked(
                            conn,
                            cmd,
                            &name,
                            Some(&call.args),
                            &reply,
                            (first + us, us),
                        );
                        self.push_to(conn, reply);
                    }
                    for m in self.tracking_take_pending(conn) {
                        self.push_to(conn, m);
                    }
                    self.tracking_leave(outer);
                }
            }
            self.drain_expired();
        }
    }

    /// Counts a blocked command once it has its reply (Redis's updateStatsOnUnblock), with
    /// the time of the call that blocked plus that of the call that served it (only the
    /// first for a timeout or CLIENT UNBLOCK), in microseconds: `(total, serving)`. The
    /// command goes to SLOWLOG now (not when it blocked) with `args`, when given.
    pub(super) fn finish_blocked(
        &mut self,
        conn: ConnId,
        cmd: &'static Command,
        name: &str,
        args: Option<&[Bytes]>,
        reply: &Reply,
        (us, serving_us): (u64, u64),
    ) {
        self.count_call(cmd, name, reply.is_error(), us);
        self.note_unblocked(conn, cmd, args, us, serving_us);
        if let Some(text) = reply.error_text() {
            self.stats.total_error_replies += 1;
            self.stats.record_error(&text);
        }
    }

    /// Answers blocked commands whose timeout passed, earliest deadline first. Like Redis, a
    /// deadline is passed once "now" is strictly after it.
    pub(super) fn expire_blocked(&mut self) {
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
            if let Some(mut b) = self.unblock(conn) {
                if let Ok((cmd, name)) = resolve(&b.args) {
                    b.show_as_typed();
                    // Redis 7.0 leaves a timed-out command out of SLOWLOG; from 7.2 it is logged.
                    let logged = self.profile().has(since::UNBLOCKED_LOGGED_AS_SENT);
                    let args = logged.then_some(&b.args[..]);
                    let times = (b.first_us, 0);
                    self.finish_blocked(conn, cmd, &name, args, &b.timeout_reply, times);
                }
                self.push_to(conn, b.timeout_reply);
            }
        }
    }

    /// Ends a blocked command early (CLIENT UNBLOCK): with the timeout reply, or an error.
    pub(crate) fn unblock_with(&mut self, conn: ConnId, error: bool) -> bool {
        match self.unblock(conn) {
            Some(mut b) => {
                let resolved = resolve(&b.args);
                b.show_as_typed();
                let reply = if error {
                    Reply::err(crate::errors::CLIENT_UNBLOCKED_VIA_CLIENT_UNBLOCK)
                } else {
                    b.timeout_reply
                };
                if let Ok((cmd, name)) = resolved {
                    // Redis 7.0 logs a command ended by CLIENT UNBLOCK with no arguments (its
                    // argument vector is gone by then); from 7.2 as it was sent.
                    let args: &[Bytes] = if self.profile().has(since::UNBLOCKED_LOGGED_AS_SENT) {
                        &b.args
                    } else {
                        &[]
                    };
                    self.finish_blocked(conn, cmd, &name, Some(args), &reply, (b.first_us, 0));
                }
                self.push_to(conn, reply);
                true
            }
            None => false,
        }
    }
}

/// The value type a blocked command waits for; a ready key of another type does not serve
/// it (it stays blocked). None: any type (a command the table does not know as blocking).
pub(super) fn blocked_type(cmd: &Command) -> Option<&'static str> {
    if cmd.policy(policy::WAITS_LIST) {
        Some("list")
    } else if cmd.policy(policy::WAITS_ZSET) {
        Some("zset")
    } else if cmd.policy(policy::WAITS_STREAM) {
        Some("stream")
    } else {
        None
    }
}
