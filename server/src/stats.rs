//! Counters INFO reports.

use std::collections::{BTreeMap, HashMap};

use crate::cmd::table::Command;

#[derive(Debug, Default, Clone)]
pub struct CommandStats {
    /// The full name INFO prints (`client|list` for a subcommand).
    pub name: String,
    /// The command's table flags (`cmd::table::flags`), for `Engine::fork`'s check.
    pub flags: u32,
    pub calls: u64,
    pub failed_calls: u64,
}

#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub total_commands_processed: u64,
    pub total_connections_received: u64,
    pub total_error_replies: u64,
    pub expired_keys: u64,
    /// Keys deleted by maxmemory eviction (INFO evicted_keys).
    pub evicted_keys: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub blocked_clients: u64,
    /// Keyed by the address of the command's table entry (unique per command and
    /// subcommand): it is updated on every command, and hashing an address is cheaper than
    /// hashing a name.
    pub per_command: HashMap<usize, CommandStats, foldhash::fast::FixedState>,
    /// Error replies by their code (the first word: ERR, WRONGTYPE, ...), for INFO errorstats.
    pub errors_by_code: BTreeMap<String, u64>,
}

impl Stats {
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

    /// Counts a call of `cmd`, whose full name is `name`.
    pub fn record(&mut self, cmd: &'static Command, name: &str, failed: bool) {
        let entry = self
            .per_command
            .entry(cmd as *const Command as usize)
            .or_insert_with(|| CommandStats {
                name: name.to_string(),
                flags: cmd.flags,
                ..Default::default()
            });
        entry.calls += 1;
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
