//! ACL: users, their permissions and the log of refusals, as Redis 7.0.15 has them.
//!
//! `model` is what ACL SETUSER builds, `check` the one permission decision (used by the
//! dispatcher and by `redis.call`), `commands` the command names and categories rules refer
//! to. The commands themselves are in `cmd/acl.rs`. A connection whose user may run anything
//! (the `default` user of a server without ACL rules) carries a flag that skips the check,
//! so the common case costs one branch per command.

pub mod check;
pub mod commands;
mod describe;
pub mod model;
pub mod sha256;
pub mod startup;

use std::collections::{BTreeMap, VecDeque};

pub use check::{check, unrestricted_key_access, Denied, DeniedKind};
pub use model::User;

/// The users by name. The busy-script loop answers AUTH, HELLO and the permission checks
/// from a copy taken when the script first passes busy-reply-threshold: no ACL command can
/// run while the script holds the server, so the copy stays exact until it ends.
pub type Users = BTreeMap<String, User>;

/// One ACL LOG entry.
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub count: u64,
    /// `command`, `key`, `channel` or `auth`.
    pub reason: &'static str,
    /// `toplevel`, `multi` or `lua`.
    pub context: &'static str,
    pub object: String,
    pub username: String,
    /// When it last happened (ACL LOG's age-seconds; timestamp-last-updated from 7.2).
    pub created_ms: i64,
    pub client_info: String,
    /// From Redis 7.2 ACL LOG shows these too: the entry's number, in the order entries were
    /// first logged (from 0, not reset by ACL LOG RESET), and when it first happened. Set by
    /// `Acl::record`.
    pub entry_id: u64,
    pub first_ms: i64,
}

/// Entries this close in time with the same reason, context, object and user are counted
/// as one (Redis's grouping window).
const GROUPING_MS: i64 = 60_000;

#[derive(Debug)]
pub struct Acl {
    /// Users by name; sorted, as ACL USERS and LIST show them.
    pub users: Users,
    /// Newest first.
    pub log: VecDeque<LogEntry>,
    /// The next new entry's `entry_id`.
    next_entry_id: u64,
}

impl Default for Acl {
    fn default() -> Self {
        Acl::new()
    }
}

impl Acl {
    pub fn new() -> Acl {
        let mut users = BTreeMap::new();
        users.insert("default".to_string(), User::default_user());
        Acl {
            users,
            log: VecDeque::new(),
            next_entry_id: 0,
        }
    }

    pub fn user(&self, name: &str) -> Option<&User> {
        self.users.get(name)
    }

    pub fn default_user(&self) -> &User {
        self.users.get("default").expect("the default user exists")
    }

    /// Whether a new connection starts logged in (as `default`): when `default` is enabled
    /// and needs no password.
    pub fn starts_authenticated(&self) -> bool {
        let d = self.default_user();
        d.enabled && d.nopass
    }

    /// `requirepass` is the password of `default`: setting it replaces that user's
    /// passwords, clearing it makes the user `nopass`.
    pub fn set_requirepass(&mut self, pass: Option<&str>) {
        let d = self
            .users
            .get_mut("default")
            .expect("the default user exists");
        match pass.filter(|p| !p.is_empty()) {
            Some(p) => {
                d.apply("resetpass").expect("valid rule");
                d.apply(&format!(">{p}")).expect("valid rule");
            }
            None => d.apply("nopass").expect("valid rule"),
        }
    }

    /// Whether `user`/`pass` log in.
    pub fn authenticate(&self, user: &[u8], pass: &[u8]) -> bool {
        authenticate_in(&self.users, user, pass)
    }

    /// Adds a refusal to the log, counting it into a recent equal entry when there is one.
    pub fn record(&mut self, entry: LogEntry, max_len: usize) {
        let same = self.log.iter().take(10).position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.created_ms - e.created_ms < GROUPING_MS
        });
        let entry = match same.and_then(|i| self.log.remove(i)) {
            Some(old) => LogEntry {
                count: old.count + 1,
                entry_id: old.entry_id,
                first_ms: old.first_ms,
                ..entry
            },
            None => {
                self.next_entry_id += 1;
                LogEntry {
                    entry_id: self.next_entry_id - 1,
                    first_ms: entry.created_ms,
                    ..entry
                }
            }
        };
        self.log.push_front(entry);
        self.log.truncate(max_len);
    }
}

/// Whether `user`/`pass` log in among `users` (the engine's, or the busy loop's copy).
pub fn authenticate_in(users: &Users, user: &[u8], pass: &[u8]) -> bool {
    std::str::from_utf8(user)
        .ok()
        .and_then(|u| users.get(u))
        .is_some_and(|u| u.password_ok(pass))
}

#[cfg(test)]
mod tests;
