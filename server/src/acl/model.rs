//! Users and selectors: what ACL SETUSER builds and the permission check reads.
//!
//! A user has a root selector and any number of extra selectors (`(...)`); a command is
//! allowed when one of them allows it. Each selector keeps the commands it allows as a set
//! of full names (`get`, `client|id`), Redis 7.0.15's permission bitmap. Redis 7.0 then
//! forgets the rule: GETUSER and LIST work the rules out again from the set (`describe`), so
//! `+@all +client|id` reads back as `+@all`. Redis 7.2 also keeps the command rules as given
//! (`Selector::rules`) and prints those; `cmd::acl::shown` picks one by profile.

use crate::errors;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use super::commands::{self, CATEGORIES};
use super::sha256;
use crate::compat::Profile;

/// The set of every command's full name, built once per process and shared by every
/// selector given `+@all` until one of them changes its copy.
fn every_command() -> Arc<HashSet<&'static str>> {
    static ALL: LazyLock<Arc<HashSet<&'static str>>> =
        LazyLock::new(|| Arc::new(commands::all_names().collect()));
    Arc::clone(&ALL)
}

/// A key pattern and what it grants: `~p` both, `%R~p` reading, `%W~p` writing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    pub read: bool,
    pub write: bool,
    /// The pattern is this many plain bytes and then one `*` (`app:*`): it matches the keys
    /// that start with them, a comparison instead of the glob walk (`matches`).
    prefix: Option<usize>,
}

impl KeyPattern {
    pub fn new(pattern: Vec<u8>, read: bool, write: bool) -> KeyPattern {
        let prefix = match pattern.split_last() {
            Some((b'*', head)) if !head.iter().any(|c| matches!(c, b'*' | b'?' | b'[' | b'\\')) => {
                Some(head.len())
            }
            _ => None,
        };
        KeyPattern {
            pattern,
            read,
            write,
            prefix,
        }
    }

    /// Whether `key` matches the pattern, as `glob::matches` decides.
    pub fn matches(&self, key: &[u8]) -> bool {
        match self.prefix {
            // The glob walk never matches an empty key, not even with `*`.
            Some(n) => !key.is_empty() && key.starts_with(&self.pattern[..n]),
            None => crate::glob::matches(&self.pattern, key, false),
        }
    }

    fn describe(&self) -> String {
        let p = String::from_utf8_lossy(&self.pattern);
        match (self.read, self.write) {
            (true, true) => format!("~{p}"),
            (true, false) => format!("%R~{p}"),
            _ => format!("%W~{p}"),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Selector {
    pub all_keys: bool,
    pub all_channels: bool,
    /// Every command is allowed: the check skips the command lookup.
    pub all_commands: bool,
    /// Started from `+@all` (commands added later included), as GETUSER and LIST show it;
    /// stays through later removals, unlike `all_commands`.
    pub future: bool,
    pub keys: Vec<KeyPattern>,
    pub channels: Vec<Vec<u8>>,
    /// The full names of the commands allowed. Shared until changed (`Arc::make_mut`): every
    /// engine starts with a `default` user allowed every command, and `+@all` hands out the
    /// one process-wide full set (`every_command`) instead of building or copying ~400 names
    /// per user (issue 17: that copy was a fifth of `Engine::new`).
    pub allowed: Arc<HashSet<&'static str>>,
    /// `+select|0`: first arguments allowed for a command that is otherwise denied.
    pub first_args: HashMap<&'static str, Vec<String>>,
    /// The command rules given since the last `+@all` / `-@all`, lower case, as Redis 7.2
    /// keeps them (its `command_rules`, acl.c ACLUpdateCommandRules): a rule replaces an
    /// earlier one on the same command or category, and a whole command replaces the rules
    /// on its subcommands and first arguments. What GETUSER and LIST print from 7.2 on.
    pub rules: Vec<String>,
    /// Print `rules` (Redis 7.2 and later, Valkey) rather than work rules out from `allowed`
    /// (Redis 7.0). Set only on the copies `cmd::acl::shown` makes for printing.
    pub rules_as_given: bool,
}

/// Why a rule was refused; `text` is Redis's wording after "modifier '...': ".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleError {
    Syntax,
    Unknown,
    Child,
    KeysAfterAll,
    ChannelsAfterAll,
    BadHash,
    NoSuchHash,
}

impl RuleError {
    pub fn text(&self) -> &'static str {
        match self {
            RuleError::Syntax => errors::RULE_SYNTAX,
            RuleError::Unknown => errors::RULE_UNKNOWN,
            RuleError::Child => errors::RULE_CHILD,
            RuleError::KeysAfterAll => errors::RULE_KEYS_AFTER_ALL,
            RuleError::ChannelsAfterAll => errors::RULE_CHANNELS_AFTER_ALL,
            RuleError::BadHash => errors::RULE_BAD_HASH,
            RuleError::NoSuchHash => errors::RULE_NO_SUCH_HASH,
        }
    }
}

impl Selector {
    /// Whether this selector lets everything through (the default user's).
    pub fn unrestricted(&self) -> bool {
        self.all_keys && self.all_channels && self.all_commands
    }

    pub(super) fn set_all_commands(&mut self, on: bool) {
        self.all_commands = on;
        self.future = on;
        self.allowed = if on { every_command() } else { Arc::default() };
        self.first_args.clear();
        self.rules.clear();
    }

    /// Remembers a command rule as given (`get`, `config|get`, `select|0`, `@hash`): drops an
    /// earlier rule on the same name, or on a subcommand or first argument of it, and adds
    /// this one last (Redis 7.2's ACLUpdateCommandRules).
    fn note_rule(&mut self, rule: &str, allow: bool) {
        self.rules.retain(|given| {
            let name = &given[1..];
            let covered = name
                .strip_prefix(rule)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('|'));
            !covered
        });
        self.rules
            .push(format!("{}{rule}", if allow { '+' } else { '-' }));
    }

    /// Allows or denies every command of a category (without `@`) as `profile`'s server
    /// has it (`commands::in_category_in`: `+@blocking` reaches WAIT from Redis 7.2). A
    /// container in the category takes its subcommands with it, whatever their own
    /// categories: `+@slow` allows `client|id`, as in Redis 7.0.15.
    pub(super) fn set_category(&mut self, cat: &str, allow: bool, profile: Profile) {
        for name in commands::in_category_in(profile, cat).iter() {
            self.change_perm(name, allow);
        }
    }

    /// Allows or denies one command and, for a container, all its subcommands; forgets the
    /// first arguments allowed for it (Redis's ACLChangeSelectorPerm).
    pub(super) fn change_perm(&mut self, name: &str, allow: bool) {
        let Some(names) = commands::covered(name) else {
            return;
        };
        let allowed = Arc::make_mut(&mut self.allowed);
        for &n in names {
            if allow {
                allowed.insert(n);
            } else {
                allowed.remove(n);
            }
        }
        self.first_args.remove(names[0]);
        if !allow {
            self.all_commands = false;
        }
    }

    /// Applies one selector rule (keys, channels, commands) as Redis 7.0 reads it.
    pub fn apply(&mut self, op: &str) -> Result<(), RuleError> {
        self.apply_in(op, Profile::Redis70)
    }

    /// Applies one selector rule as `profile`'s server reads it (a category's commands are
    /// that version's).
    pub fn apply_in(&mut self, op: &str, profile: Profile) -> Result<(), RuleError> {
        let lower = op.to_ascii_lowercase();
        let bytes = op.as_bytes();
        match lower.as_str() {
            "allkeys" | "~*" => {
                self.all_keys = true;
                self.keys.clear();
                return Ok(());
            }
            "resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
                return Ok(());
            }
            "allchannels" | "&*" => {
                self.all_channels = true;
                self.channels.clear();
                return Ok(());
            }
            "resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
                return Ok(());
            }
            "allcommands" | "+@all" => {
                self.set_all_commands(true);
                return Ok(());
            }
            "nocommands" | "-@all" => {
                self.set_all_commands(false);
                return Ok(());
            }
            _ => {}
        }
        match bytes.first() {
            Some(b'~') | Some(b'%') => self.add_key_pattern(bytes),
            Some(b'&') => {
                if self.all_channels {
                    return Err(RuleError::ChannelsAfterAll);
                }
                let p = bytes[1..].to_vec();
                if !self.channels.contains(&p) {
                    self.channels.push(p);
                }
                Ok(())
            }
            Some(&sign @ (b'+' | b'-')) if bytes.get(1) == Some(&b'@') => {
                let cat = &lower[2..];
                if !CATEGORIES.contains(&cat) {
                    return Err(RuleError::Unknown);
                }
                self.set_category(cat, sign == b'+', profile);
                self.note_rule(&lower[1..], sign == b'+');
                Ok(())
            }
            Some(b'+') => {
                self.allow_command(&lower[1..], &op[1..])?;
                self.note_rule(&lower[1..], true);
                Ok(())
            }
            Some(b'-') => {
                let name = &lower[1..];
                if commands::covered(name).is_none() {
                    return Err(RuleError::Unknown);
                }
                self.change_perm(name, false);
                self.note_rule(name, false);
                Ok(())
            }
            _ => Err(RuleError::Syntax),
        }
    }

    /// `+name`; `given` is the rule as written, whose first argument keeps its case.
    fn allow_command(&mut self, name: &str, given: &str) -> Result<(), RuleError> {
        if !name.contains('|') {
            if commands::covered(name).is_none() {
                return Err(RuleError::Unknown);
            }
            self.change_perm(name, true);
            return Ok(());
        }
        let Some((cmd, sub)) = name.rsplit_once('|') else {
            return Err(RuleError::Unknown);
        };
        let Some(parent) = commands::covered(cmd) else {
            return Err(RuleError::Unknown);
        };
        if cmd.contains('|') {
            return Err(RuleError::Child);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if commands::has_subcommands(cmd) {
            // A container's subcommand is a command of its own; an unknown one is refused.
            if commands::covered(name).is_none() {
                return Err(RuleError::Unknown);
            }
            self.change_perm(name, true);
            return Ok(());
        }
        // `+select|0`, `+debug|object`: a first argument allowed while the command itself
        // is not (Redis's deprecated allowed_firstargs).
        let sub = &given[given.len() - sub.len()..];
        let list = self.first_args.entry(parent[0]).or_default();
        if !list.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
            list.push(sub.to_string());
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeysAfterAll);
        }
        let (read, write, offset) = if op[0] == b'%' {
            let (mut r, mut w) = (false, false);
            let mut i = 1;
            loop {
                match op.get(i) {
                    Some(b'R' | b'r') if !r => r = true,
                    Some(b'W' | b'w') if !w => w = true,
                    Some(b'~') => {
                        i += 1;
                        break;
                    }
                    // `%R` alone is accepted, as the empty pattern (shown as `%R~`).
                    None => break,
                    _ => return Err(RuleError::Syntax),
                }
                i += 1;
            }
            if !r && !w {
                return Err(RuleError::Syntax);
            }
            (r, w, i)
        } else {
            (true, true, 1)
        };
        let pattern = op[offset..].to_vec();
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(k) => {
                k.read |= read;
                k.write |= write;
            }
            None => self.keys.push(KeyPattern::new(pattern, read, write)),
        }
        Ok(())
    }

    /// The command rules as GETUSER and LIST show them: `+@all` or `-@all` and the rules as
    /// given (Redis 7.2), or worked out from the permission set as Redis 7.0.15 does
    /// (`describe`).
    pub fn describe_commands(&self) -> String {
        if !self.rules_as_given {
            return super::describe::command_rules(self);
        }
        let mut out = String::from(if self.future { "+@all" } else { "-@all" });
        for rule in &self.rules {
            out.push(' ');
            out.push_str(rule);
        }
        out
    }

    pub fn describe_keys(&self) -> String {
        if self.all_keys {
            return "~*".into();
        }
        self.keys
            .iter()
            .map(KeyPattern::describe)
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".into();
        }
        self.channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The selector as one line of rules (LIST and the ACL file).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let keys = self.describe_keys();
        if !keys.is_empty() {
            parts.push(keys);
        }
        if self.all_channels {
            parts.push("&*".into());
        } else {
            parts.push("resetchannels".into());
            let ch = self.describe_channels();
            if !ch.is_empty() {
                parts.push(ch);
            }
        }
        parts.push(self.describe_commands());
        parts.join(" ")
    }
}

#[derive(Clone, Debug)]
pub struct User {
    pub name: String,
    pub enabled: bool,
    pub nopass: bool,
    /// SHA-256 of each password, as hex.
    pub passwords: Vec<String>,
    pub root: Selector,
    pub selectors: Vec<Selector>,
    /// RESTORE payload sanitizing as set by `reset`, `sanitize-payload` or
    /// `skip-sanitize-payload`; None until one of them is given.
    pub sanitize: Option<bool>,
}

impl User {
    /// A user as ACL SETUSER creates it: off, no password, no permissions.
    pub fn new(name: &str) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            passwords: Vec::new(),
            root: Selector::default(),
            selectors: Vec::new(),
            sanitize: None,
        }
    }

    /// The `default` user of a server without an ACL file. Every engine starts with one, and
    /// filling its command set rule by rule was most of `Engine::new`: the user is built once
    /// per process and copied.
    pub fn default_user() -> User {
        static DEFAULT: std::sync::LazyLock<User> = std::sync::LazyLock::new(|| {
            let mut u = User::new("default");
            for op in ["on", "nopass", "~*", "&*", "+@all"] {
                u.apply(op).expect("valid rule");
            }
            u
        });
        DEFAULT.clone()
    }

    /// Whether the user may run anything: the check is skipped for its connections.
    pub fn unrestricted(&self) -> bool {
        self.root.unrestricted()
    }

    /// Whether `pass` logs in as this user.
    pub fn password_ok(&self, pass: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let h = sha256::hex(pass);
        self.passwords.contains(&h)
    }

    fn add_hash(&mut self, h: String) {
        if !self.passwords.contains(&h) {
            self.passwords.push(h);
        }
        self.nopass = false;
    }

    /// Applies one rule of ACL SETUSER (a selector `(...)` included) as Redis 7.0 reads it.
    pub fn apply(&mut self, op: &str) -> Result<(), RuleError> {
        self.apply_in(op, Profile::Redis70)
    }

    /// Applies one rule as `profile`'s server reads it (`Selector::apply_in`).
    pub fn apply_in(&mut self, op: &str, profile: Profile) -> Result<(), RuleError> {
        let lower = op.to_ascii_lowercase();
        match lower.as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            "skip-sanitize-payload" => self.sanitize = Some(false),
            "sanitize-payload" => self.sanitize = Some(true),
            "clearselectors" => self.selectors.clear(),
            "reset" => {
                let name = std::mem::take(&mut self.name);
                *self = User::new(&name);
                self.sanitize = Some(true);
            }
            _ => return self.apply_other(op, profile),
        }
        Ok(())
    }

    fn apply_other(&mut self, op: &str, profile: Profile) -> Result<(), RuleError> {
        let b = op.as_bytes();
        match b.first() {
            Some(b'>') => {
                self.add_hash(sha256::hex(&b[1..]));
                Ok(())
            }
            Some(b'#') => {
                let h = &op[1..];
                if !valid_hash(h) {
                    return Err(RuleError::BadHash);
                }
                self.add_hash(h.to_string());
                Ok(())
            }
            Some(b'<') => {
                let h = sha256::hex(&b[1..]);
                let before = self.passwords.len();
                self.passwords.retain(|p| *p != h);
                if before == self.passwords.len() {
                    return Err(RuleError::NoSuchHash);
                }
                Ok(())
            }
            Some(b'!') => {
                let h = &op[1..];
                if !valid_hash(h) {
                    return Err(RuleError::BadHash);
                }
                let before = self.passwords.len();
                self.passwords.retain(|p| p != h);
                if before == self.passwords.len() {
                    return Err(RuleError::NoSuchHash);
                }
                Ok(())
            }
            Some(b'(') if b.last() == Some(&b')') && b.len() >= 2 => {
                let mut sel = Selector::default();
                for part in op[1..op.len() - 1].split_ascii_whitespace() {
                    sel.apply_in(part, profile)?;
                }
                self.selectors.push(sel);
                Ok(())
            }
            _ => self.root.apply_in(op, profile),
        }
    }

    /// The flags GETUSER lists.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        f.extend(self.sanitize_flag());
        f
    }

    fn sanitize_flag(&self) -> Option<&'static str> {
        self.sanitize.map(|on| {
            if on {
                "sanitize-payload"
            } else {
                "skip-sanitize-payload"
            }
        })
    }

    /// The user as one line of rules, as ACL LIST and the ACL file write it.
    pub fn describe(&self) -> String {
        let mut out = format!("user {}", self.name);
        out.push_str(if self.enabled { " on" } else { " off" });
        if self.nopass {
            out.push_str(" nopass");
        }
        if let Some(flag) = self.sanitize_flag() {
            out.push(' ');
            out.push_str(flag);
        }
        for p in &self.passwords {
            out.push_str(" #");
            out.push_str(p);
        }
        out.push(' ');
        out.push_str(&self.root.describe());
        for s in &self.selectors {
            out.push_str(" (");
            out.push_str(&s.describe());
            out.push(')');
        }
        out
    }
}

fn valid_hash(h: &str) -> bool {
    h.len() == 64
        && h.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// Splits SETUSER's arguments into rules, joining a selector written across several
/// arguments (`(~x` `+get)`) back into one. Err carries the argument where an unclosed
/// selector starts.
pub fn split_rules(args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.starts_with('(') && !a.ends_with(')') {
            let mut joined = a.clone();
            let mut j = i + 1;
            loop {
                let Some(next) = args.get(j) else {
                    return Err(a.clone());
                };
                joined.push(' ');
                joined.push_str(next);
                j += 1;
                if next.ends_with(')') {
                    break;
                }
            }
            out.push(joined);
            i = j;
        } else {
            out.push(a.clone());
            i += 1;
        }
    }
    Ok(out)
}
