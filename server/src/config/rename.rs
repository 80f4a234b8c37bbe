//! `rename-command old new` (config file and command line): the names clients, scripts and
//! COMMAND use for a command, as redis-server 7.0.15 keeps them.
//!
//! Redis removes `old` from its command dictionary and adds the same command under `new`
//! (nowhere when `new` is empty, which disables it). The command keeps its own name
//! everywhere else: ACL rules, COMMAND LIST and the name COMMAND INFO shows are the
//! original's. So redlab keeps the table as it is and records only the names that differ
//! from it; a lookup goes through `table_name` first.

use std::collections::HashMap;

use crate::compat::Profile;

/// The names that differ from the command table's, lower-case: a name mapped to the table
/// command it now stands for, or to None when it was renamed away.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Renames {
    names: HashMap<String, Option<&'static str>>,
}

impl Renames {
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The table name of the command a client calls `name`: None when no command answers
    /// to it any more. A name not renamed is its own table name (whether it exists is the
    /// table's business).
    pub fn table_name<'a>(&self, name: &'a [u8]) -> Option<std::borrow::Cow<'a, [u8]>> {
        if self.names.is_empty() {
            return Some(std::borrow::Cow::Borrowed(name));
        }
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        match self.names.get(&lower) {
            Some(Some(t)) => Some(std::borrow::Cow::Owned(t.as_bytes().to_vec())),
            Some(None) => None,
            None => Some(std::borrow::Cow::Borrowed(name)),
        }
    }

    /// Puts the table name in place of the name a command line calls its command by: the
    /// dispatcher and `redis.call` then resolve (and queue, block, re-resolve) the table's
    /// command. False when no command answers to the name any more.
    pub fn translate(&self, args: &mut [bytes::Bytes]) -> bool {
        if self.names.is_empty() || args.is_empty() {
            return true;
        }
        let lower = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        match self.names.get(&lower) {
            Some(Some(t)) => {
                args[0] = bytes::Bytes::from_static(t.as_bytes());
                true
            }
            Some(None) => false,
            None => true,
        }
    }

    /// Whether a client can still reach the table command `table_name` under some name
    /// (COMMAND, COMMAND LIST and COUNT leave out a command renamed to "").
    pub fn reachable(&self, table_name: &str) -> bool {
        !self.names.contains_key(table_name) || self.names.values().any(|t| *t == Some(table_name))
    }

    /// Applies one `rename-command old new` line, with redis-server's reasons for refusing:
    /// `old` must name a command now (a subcommand cannot be renamed), and `new` must not.
    pub fn rename(&mut self, profile: Profile, old: &str, new: &str) -> Result<(), &'static str> {
        let current = |r: &Renames, name: &str| -> Option<&'static str> {
            if name.contains('|') {
                return None;
            }
            let t = r.table_name(name.as_bytes())?;
            crate::cmd::table::lookup_in(profile, &t).map(|c| c.name)
        };
        let old = old.to_ascii_lowercase();
        let cmd = current(self, &old).ok_or("No such command in rename-command")?;
        self.names.insert(old, None);
        if !new.is_empty() {
            let new = new.to_ascii_lowercase();
            if current(self, &new).is_some() {
                return Err("Target command name already exists");
            }
            self.names.insert(new, Some(cmd));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(lines: &[(&str, &str)]) -> Result<Renames, &'static str> {
        let mut r = Renames::default();
        for (old, new) in lines {
            r.rename(Profile::default(), old, new)?;
        }
        Ok(r)
    }

    fn name(r: &Renames, n: &str) -> Option<String> {
        r.table_name(n.as_bytes())
            .map(|t| String::from_utf8_lossy(&t).into_owned())
    }

    #[test]
    fn a_renamed_command_answers_only_to_its_new_name() {
        let r = renamed(&[("FLUSHDB", "Badger"), ("keys", "")]).unwrap();
        assert_eq!(name(&r, "badger").as_deref(), Some("flushdb"));
        assert_eq!(name(&r, "BADGER").as_deref(), Some("flushdb"));
        assert_eq!(name(&r, "flushdb"), None);
        assert_eq!(name(&r, "keys"), None);
        assert_eq!(name(&r, "get").as_deref(), Some("get"));
        assert!(r.reachable("flushdb") && r.reachable("get"));
        let mut line = [bytes::Bytes::from("BADGER"), bytes::Bytes::from("async")];
        assert!(r.translate(&mut line));
        assert_eq!(line[0], "flushdb");
        assert!(!r.translate(&mut [bytes::Bytes::from("Flushdb")]));
        let mut line = [bytes::Bytes::from("Get")];
        assert!(r.translate(&mut line));
        assert_eq!(line[0], "Get");
        assert!(!r.reachable("keys"));
    }

    /// redis-server 7.0.15's answers: a name freed by a rename may be taken, a renamed name
    /// may be renamed again, the same name is allowed, and taken or unknown names refused.
    #[test]
    fn names_follow_redis_dictionary() {
        let r = renamed(&[("get", "x"), ("set", "get"), ("x", "y"), ("ping", "ping")]).unwrap();
        assert_eq!(name(&r, "get").as_deref(), Some("set"));
        assert_eq!(name(&r, "y").as_deref(), Some("get"));
        assert_eq!((name(&r, "x"), name(&r, "set")), (None, None));
        assert_eq!(name(&r, "ping").as_deref(), Some("ping"));
        assert_eq!(
            renamed(&[("nosuch", "x")]),
            Err("No such command in rename-command")
        );
        assert_eq!(
            renamed(&[("get", "set")]),
            Err("Target command name already exists")
        );
        assert_eq!(
            renamed(&[("get", "x"), ("get", "z")]),
            Err("No such command in rename-command")
        );
        assert_eq!(
            renamed(&[("config|get", "x")]),
            Err("No such command in rename-command")
        );
    }
}
