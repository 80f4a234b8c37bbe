//! Where fault rules meet a command: which rule fires, and what it does before and after
//! the handler runs.

use bytes::Bytes;

use super::Engine;
use crate::cmd::table::{policy, Command};
use crate::faults::{Candidate, FaultAction};
use crate::reply::Reply;
use crate::session::ConnId;

impl Engine {
    /// The fault rule that fires for this command, if any (REDLAB.* control commands are
    /// never faulted, so a test can always reach the server).
    pub(super) fn check_faults(
        &mut self,
        conn: ConnId,
        cmd: &Command,
        name: &str,
        args: &[Bytes],
    ) -> Option<FaultAction> {
        if self.faults.is_empty() || cmd.policy(policy::NEVER_FAULTED) {
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
    pub(super) fn fault_before(
        &mut self,
        conn: ConnId,
        fault: Option<&FaultAction>,
    ) -> Option<Reply> {
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
    pub(super) fn fault_after(
        &mut self,
        conn: ConnId,
        fault: Option<FaultAction>,
        reply: Reply,
    ) -> Reply {
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
}
