//! CLIENT PAUSE and UNPAUSE: holding clients' commands back for a while.
//!
//! While a pause is in effect (until its end on the engine's clock, or CLIENT UNPAUSE), a
//! command it covers is not run: the client is postponed, counted as blocked (INFO
//! blocked_clients, the `b` flag), and reads nothing more. A WRITE pause covers what may
//! change the dataset or be replicated (write commands, PUBLISH, PFCOUNT, EVAL of a script
//! that may write, EXEC of a transaction holding any of these); an ALL pause covers every
//! command. When the pause ends, postponed clients run their command again, in the order
//! they were postponed, as if it had just arrived. Expiry stands still meanwhile (Redis
//! neither expires keys actively nor deletes them lazily during a pause).

use std::collections::VecDeque;

use bytes::Bytes;

use super::Engine;
use crate::cmd::table::{flags, Command};
use crate::reply::Reply;
use crate::session::{Blocked, ConnId};

/// What a pause holds back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum PauseKind {
    #[default]
    Off,
    Write,
    All,
}

/// The engine's pause state (`Engine::pause`).
#[derive(Debug, Default)]
pub(crate) struct Pause {
    kind: PauseKind,
    /// When the pause ends, engine ms.
    end_ms: i64,
    /// Clients whose command waits, in the order they were postponed.
    postponed: VecDeque<ConnId>,
    /// A FAILOVER holds writes until it ends (Redis's PAUSE_DURING_FAILOVER), whatever
    /// CLIENT PAUSE and UNPAUSE do.
    failover: bool,
}

impl Engine {
    /// CLIENT PAUSE: pauses for `timeout_ms` more (a pause in effect keeps the later end)
    /// with the new kind.
    pub(crate) fn pause_clients(&mut self, timeout_ms: i64, kind: PauseKind) {
        let end = self.clock.now_ms().saturating_add(timeout_ms);
        self.pause.kind = kind;
        self.pause.end_ms = self.pause.end_ms.max(end);
    }

    /// CLIENT UNPAUSE: postponed clients run at the end of this command.
    pub(crate) fn unpause_clients(&mut self) {
        self.pause.kind = PauseKind::Off;
        self.pause.end_ms = 0;
    }

    /// FAILOVER's own write pause, on while it waits and hands over.
    pub(crate) fn set_failover_pause(&mut self, on: bool) {
        self.pause.failover = on;
    }

    /// The pause in effect now, ending it when its time is up.
    pub(crate) fn pause_in_effect(&mut self) -> PauseKind {
        if self.pause.kind != PauseKind::Off && self.clock.now_ms() >= self.pause.end_ms {
            self.unpause_clients();
        }
        if self.pause.failover {
            return self.pause.kind.max(PauseKind::Write);
        }
        self.pause.kind
    }

    /// Whether expiry must leave keys alone: any pause is in effect.
    pub(crate) fn expiry_paused(&self) -> bool {
        self.pause.failover
            || self.pause.kind != PauseKind::Off && self.clock.now_ms() < self.pause.end_ms
    }

    /// At dispatch: postpones the command if the pause covers it. Returns true when it did
    /// (the client gets its reply once the command runs after the pause).
    /// `typed`: under `rename-command`, the name the client typed; the command is held as
    /// typed, since it goes through the dispatcher again (which translates it again: the
    /// table's own name may be renamed away).
    pub(super) fn postpone_if_paused(
        &mut self,
        conn: ConnId,
        cmd: &'static Command,
        args: &[Bytes],
        typed: Option<&Bytes>,
    ) -> bool {
        let held = match self.pause_in_effect() {
            PauseKind::Off => false,
            PauseKind::All => true,
            PauseKind::Write => self.may_replicate(conn, cmd, args),
        };
        if !held {
            return false;
        }
        let Some(s) = self.sessions.get_mut(&conn) else {
            return false;
        };
        let mut held = args.to_vec();
        if let Some(t) = typed {
            held[0] = t.clone();
        }
        s.blocked = Some(Blocked {
            db: s.db,
            keys: Vec::new(),
            deadline: None,
            args: held,
            timeout_reply: Reply::None,
            postponed: true,
            first_us: 0,
            typed: None,
        });
        self.stats.blocked_clients += 1;
        self.pause.postponed.push_back(conn);
        true
    }

    /// Redis's "may replicate" test for a WRITE pause: the command's flags, with a script's
    /// declared flags in place of EVAL's and FCALL's, and for EXEC those of what it queued.
    fn may_replicate(&self, conn: ConnId, cmd: &'static Command, args: &[Bytes]) -> bool {
        if cmd.name == "exec" {
            let Some(m) = self.sessions.get(&conn).and_then(|s| s.multi.as_ref()) else {
                return false;
            };
            return m.queue.iter().any(|q| {
                crate::cmd::table::resolve(q).is_ok_and(|(c, _)| self.may_replicate_one(c, q))
            });
        }
        self.may_replicate_one(cmd, args)
    }

    fn may_replicate_one(&self, cmd: &Command, args: &[Bytes]) -> bool {
        use crate::lua::shebang;
        if let Some(f) = crate::cmd::scripting::declared_flags(self, cmd, args) {
            if f & shebang::EVAL_COMPAT == 0 {
                return f & shebang::NO_WRITES == 0;
            }
        }
        cmd.has(flags::WRITE) || cmd.has(flags::MAY_REPLICATE)
    }

    /// After a command and on every tick: once no pause is in effect, runs the postponed
    /// clients' commands in order; their replies go through their outboxes. One postponed
    /// again (a pause came back) stays, with the ones after it.
    pub(crate) fn serve_postponed(&mut self) {
        if self.pause.postponed.is_empty() || self.pause_in_effect() != PauseKind::Off {
            return;
        }
        while let Some(conn) = self.pause.postponed.pop_front() {
            let Some(s) = self.sessions.get_mut(&conn) else {
                continue;
            };
            if !s.blocked.as_ref().is_some_and(|b| b.postponed) {
                continue;
            }
            let args = s.blocked.take().map(|b| b.args).unwrap_or_default();
            self.stats.blocked_clients = self.stats.blocked_clients.saturating_sub(1);
            let reply = self.execute_args(conn, args);
            if reply != Reply::None {
                self.push_to(conn, reply);
            }
            if self.pause.kind != PauseKind::Off || self.pause.failover {
                break;
            }
        }
    }
}
