//! Counters INFO reports.

use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Default)]
pub struct CommandStats {
    pub calls: u64,
    pub failed_calls: u64,
}

#[derive(Debug, Default)]
pub struct Stats {
    pub total_commands_processed: u64,
    pub total_connections_received: u64,
    pub total_error_replies: u64,
    pub expired_keys: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub blocked_clients: u64,
    /// Keyed by the command's full name; hashed, since it is updated on every command.
    pub per_command: HashMap<String, CommandStats, foldhash::fast::FixedState>,
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

    pub fn record(&mut self, name: &str, failed: bool) {
        let entry = match self.per_command.get_mut(name) {
            Some(e) => e,
            None => self.per_command.entry(name.to_string()).or_default(),
        };
        entry.calls += 1;
        if failed {
            entry.failed_calls += 1;
        }
    }
}
