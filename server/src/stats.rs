//! Counters INFO reports.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use crate::cmd::table::Command;

#[derive(Debug, Default, Clone)]
pub struct CommandStats {
    /// The full name INFO prints (`client|list` for a subcommand). Borrowed from the command
    /// table when it is the command's own name, so cloning the counters (an explorer `Fork`
    /// takes a copy at every branch point) allocates nothing per command.
    pub name: Cow<'static, str>,
    /// The command's table flags (`cmd::table::flags`), for `Engine::fork`'s check.
    pub flags: u32,
    pub calls: u64,
    /// The calls' own execution time in microseconds (INFO's `usec`), from the clock reads
    /// the dispatcher makes around each handler for SLOWLOG and latency-tracking.
    pub usec: u64,
    pub failed_calls: u64,
    /// Refused before running (arity, a check of the dispatcher or of redis.call).
    pub rejected_calls: u64,
}

#[derive(Debug, Default)]
pub struct Stats {
    pub total_commands_processed: u64,
    pub total_connections_received: u64,
    pub total_error_replies: u64,
    pub expired_keys: u64,
    /// Keys deleted by maxmemory eviction (INFO evicted_keys).
    pub evicted_keys: u64,
    /// Clients closed by maxmemory-clients (INFO evicted_clients).
    pub evicted_clients: u64,
    /// Reply buffers the clients' cron shrank / grew (`client_reply`).
    pub reply_buffer_shrinks: u64,
    pub reply_buffer_expands: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub blocked_clients: u64,
    /// Keyed by the address of the command's table entry (unique per command and
    /// subcommand): it is updated on every command, and hashing an address is cheaper than
    /// hashing a name.
    pub per_command: HashMap<usize, CommandStats, foldhash::fast::FixedState>,
    /// Error replies by their code (the first word: ERR, WRONGTYPE, ...), for INFO errorstats.
    pub errors_by_code: BTreeMap<String, u64>,
    /// Errors counted inside the running script (`count_script_error`): the script's own
    /// error reply that begins with one of them is that error passed on, not a new one.
    pub counted_in_script: Vec<String>,
}

/// Cloned field by field so that `clone_from` keeps the per-command table's allocation: an
/// explorer resume puts a fork's counters back at every schedule.
impl Clone for Stats {
    fn clone(&self) -> Stats {
        let mut s = Stats::default();
        s.clone_from(self);
        s
    }

    fn clone_from(&mut self, source: &Stats) {
        let Stats {
            total_commands_processed,
            total_connections_received,
            total_error_replies,
            expired_keys,
            evicted_keys,
            evicted_clients,
            reply_buffer_shrinks,
            reply_buffer_expands,
            keyspace_hits,
            keyspace_misses,
            blocked_clients,
            per_command,
            errors_by_code,
            counted_in_script,
        } = source;
        self.total_commands_processed = *total_commands_processed;
        self.total_connections_received = *total_connections_received;
        self.total_error_replies = *total_error_replies;
        self.expired_keys = *expired_keys;
        self.evicted_keys = *evicted_keys;
        self.evicted_clients = *evicted_clients;
        self.reply_buffer_shrinks = *reply_buffer_shrinks;
        self.reply_buffer_expands = *reply_buffer_expands;
        self.keyspace_hits = *keyspace_hits;
        self.keyspace_misses = *keyspace_misses;
        self.blocked_clients = *blocked_clients;
        self.per_command.clone_from(per_command);
        self.errors_by_code.clone_from(errors_by_code);
        self.counted_in_script.clone_from(counted_in_script);
    }
}

impl Stats {
    /// Every counter back to zero (`Stats::default()`), keeping the tables' allocations.
    pub fn clear(&mut self) {
        let mut per_command = std::mem::take(&mut self.per_command);
        per_command.clear();
        *self = Stats {
            per_command,
            ..Stats::default()
        };
    }

    /// Counts an error reply under its code, as INFO errorstats shows it.
    pub fn record_error(&mut self, text: &str) {
        let code = text.split(' ').next().unwrap_or("ERR");
        match self.errors_by_code.get_mut(code) {
            Some(n) => *n += 1,
            None => {
                self.errors_by_code.insert(code.to_string(), 1);
            }
        }
    }

    fn entry(&mut self, cmd: &'static Command, name: &str) -> &mut CommandStats {
        self.per_command
            .entry(cmd as *const Command as usize)
            .or_insert_with(|| CommandStats {
                name: if name == cmd.name {
                    Cow::Borrowed(cmd.name)
                } else {
                    Cow::Owned(name.to_string())
                },
                flags: cmd.flags,
                ..Default::default()
            })
    }

    /// Counts a command refused before it ran (Redis's rejected_calls): it is known, so its
    /// row appears in INFO commandstats even with no call.
    pub fn record_rejected(&mut self, cmd: &'static Command, name: &str) {
        self.entry(cmd, name).rejected_calls += 1;
    }

    /// Counts an error a script's redis.call or redis.pcall met (Redis counts it inside the
    /// script), remembering it so the script's reply does not count it twice.
    pub fn count_script_error(&mut self, text: String) {
        self.total_error_replies += 1;
        self.record_error(&text);
        self.counted_in_script.push(text);
    }

    /// Counts a command's error reply unless a script already counted it; forgets the
    /// script's errors either way (the command is over).
    pub fn count_reply_error(&mut self, text: &str) {
        let counted = self
            .counted_in_script
            .iter()
            .any(|t| text.starts_with(t.as_str()));
        if !counted {
            self.total_error_replies += 1;
            self.record_error(text);
        }
        self.counted_in_script.clear();
    }

    /// Counts a call of `cmd`, whose full name is `name`, that ran for `usec` microseconds.
    pub fn record(&mut self, cmd: &'static Command, name: &str, failed: bool, usec: u64) {
        let entry = self.entry(cmd, name);
        entry.calls += 1;
        entry.usec += usec;
        if failed {
            entry.failed_calls += 1;
        }
    }

    /// The counters of the command whose full name is `name` (INFO's view, for tests).
    #[cfg(test)]
    pub fn command(&self, name: &str) -> Option<&CommandStats> {
        self.per_command.values().find(|c| c.name == name)
    }
}
