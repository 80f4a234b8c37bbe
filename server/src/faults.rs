//! Fault injection: rules that make a command fail, a connection drop, a reply arrive late or
//! torn, the server stall, the script cache vanish or recent writes be lost.
//!
//! The rule table is the control plane: a test thread adds and removes rules while the server
//! runs, so it lives behind an `Arc` (a mutex-guarded map of the rules, a mutex-guarded log
//! that only the test reads). The engine consults it once per command, and only when a rule
//! exists (an atomic count answers that without the lock).
//!
//! The rules are a `BTreeMap` under a `Mutex` rather than a concurrent map: every engine
//! builds an empty table (a test suite makes thousands of engines), and an empty `Mutex` of
//! an empty `BTreeMap` allocates nothing, where a sharded map allocated its shards per engine
//! (issue 17). The lock is only taken while rules exist, and the map keeps them in id order,
//! the order `check` tries them in.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// What a fault does when it fires.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultAction {
    /// Reply with this error (text with its code, e.g. `BUSY ...`) instead of running.
    ReplyError(String),
    /// Close the connection before the command runs.
    CloseBefore,
    /// Run the command, then close the connection instead of replying.
    CloseAfter,
    /// Run the command and hold its reply back this long (network latency).
    Delay(Duration),
    /// Run the command, send only the first N bytes of its reply, then close.
    TruncateReply(usize),
    /// Stop serving everybody for this long, then run the command.
    Stall(Duration),
    /// Empty the script cache (a restart or failover), then run the command.
    FlushScripts,
    /// Roll the dataset back to the last mark (a failover to a replica that missed the
    /// writes since), then run the command.
    Rollback,
}

/// Which connection a rule applies to.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientMatch {
    Name(String),
    Id(u64),
}

/// A fault rule: what it matches, when it fires and what it does.
#[derive(Clone, Debug)]
pub struct Fault {
    pub command: Option<String>,
    pub key: Option<Vec<u8>>,
    pub script: Option<String>,
    pub client: Option<ClientMatch>,
    /// Fire at most this many times.
    pub times: Option<u64>,
    /// Fire on every nth match (1 = every match).
    pub every: u64,
    /// Let the first n matches pass.
    pub after: u64,
    /// Fire with this probability, from a seeded generator (replayable).
    pub probability: Option<(f64, u64)>,
    pub action: FaultAction,
}

impl Fault {
    fn base(action: FaultAction) -> Fault {
        Fault {
            command: None,
            key: None,
            script: None,
            client: None,
            times: None,
            every: 1,
            after: 0,
            probability: None,
            action,
        }
    }

    /// A rule matching every command; choose the action next.
    ///
    /// Until an action is chosen the rule only observes: it matches, counts and is logged
    /// (`Faults::log`, REDLAB.FAULT LOG), and the command runs as if no rule existed (the
    /// action is a zero delay). That is how a test asks "did this command reach the server?"
    /// without changing what happens. `describe` shows such a rule as `action=observe`.
    pub fn on_any() -> Fault {
        Fault::base(FaultAction::Delay(Duration::ZERO))
    }

    /// A rule matching one command by name (case-insensitive, e.g. "EVALSHA").
    pub fn on_command(name: &str) -> Fault {
        let mut f = Fault::on_any();
        f.command = Some(name.to_ascii_lowercase());
        f
    }

    /// A rule matching commands that touch a key matching `glob`.
    pub fn on_key(glob: &str) -> Fault {
        let mut f = Fault::on_any();
        f.key = Some(glob.as_bytes().to_vec());
        f
    }

    /// A rule matching EVAL/EVALSHA of the script with this SHA1, or FCALL of this function.
    pub fn on_script(sha_or_function: &str) -> Fault {
        let mut f = Fault::on_any();
        f.script = Some(sha_or_function.to_string());
        f
    }

    pub fn command(mut self, name: &str) -> Fault {
        self.command = Some(name.to_ascii_lowercase());
        self
    }

    pub fn key(mut self, glob: &str) -> Fault {
        self.key = Some(glob.as_bytes().to_vec());
        self
    }

    /// Only for connections with this CLIENT SETNAME name.
    pub fn client_name(mut self, name: &str) -> Fault {
        self.client = Some(ClientMatch::Name(name.to_string()));
        self
    }

    /// Only for the connection with this CLIENT ID.
    pub fn client_id(mut self, id: u64) -> Fault {
        self.client = Some(ClientMatch::Id(id));
        self
    }

    pub fn times(mut self, n: u64) -> Fault {
        self.times = Some(n);
        self
    }

    pub fn every(mut self, n: u64) -> Fault {
        self.every = n.max(1);
        self
    }

    pub fn after(mut self, n: u64) -> Fault {
        self.after = n;
        self
    }

    pub fn probability(mut self, p: f64, seed: u64) -> Fault {
        self.probability = Some((p.clamp(0.0, 1.0), seed));
        self
    }

    pub fn reply_error(mut self, text: &str) -> Fault {
        self.action = FaultAction::ReplyError(text.to_string());
        self
    }

    pub fn close_before(mut self) -> Fault {
        self.action = FaultAction::CloseBefore;
        self
    }

    pub fn close_after(mut self) -> Fault {
        self.action = FaultAction::CloseAfter;
        self
    }

    pub fn delay(mut self, d: Duration) -> Fault {
        self.action = FaultAction::Delay(d);
        self
    }

    pub fn truncate_reply(mut self, bytes: usize) -> Fault {
        self.action = FaultAction::TruncateReply(bytes);
        self
    }

    pub fn stall(mut self, d: Duration) -> Fault {
        self.action = FaultAction::Stall(d);
        self
    }

    pub fn flush_scripts(mut self) -> Fault {
        self.action = FaultAction::FlushScripts;
        self
    }

    pub fn rollback(mut self) -> Fault {
        self.action = FaultAction::Rollback;
        self
    }

    /// One line describing the rule, as REDLAB.FAULT LIST prints it.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        if let Some(c) = &self.command {
            s.push_str(&format!("command={} ", c));
        }
        if let Some(k) = &self.key {
            s.push_str(&format!("key={} ", String::from_utf8_lossy(k)));
        }
        if let Some(sc) = &self.script {
            s.push_str(&format!("script={} ", sc));
        }
        match &self.client {
            Some(ClientMatch::Name(n)) => s.push_str(&format!("client-name={} ", n)),
            Some(ClientMatch::Id(i)) => s.push_str(&format!("client-id={} ", i)),
            None => {}
        }
        if let Some(t) = self.times {
            s.push_str(&format!("times={} ", t));
        }
        if self.every > 1 {
            s.push_str(&format!("every={} ", self.every));
        }
        if self.after > 0 {
            s.push_str(&format!("after={} ", self.after));
        }
        if let Some((p, seed)) = self.probability {
            s.push_str(&format!("probability={} seed={} ", p, seed));
        }
        s.push_str(&match &self.action {
            FaultAction::ReplyError(e) => format!("action=error:{}", e),
            FaultAction::CloseBefore => "action=close-before".into(),
            FaultAction::CloseAfter => "action=close-after".into(),
            FaultAction::Delay(d) if d.is_zero() => "action=observe".into(),
            FaultAction::Delay(d) => format!("action=delay:{}us", d.as_micros()),
            FaultAction::TruncateReply(n) => format!("action=truncate:{}", n),
            FaultAction::Stall(d) => format!("action=stall:{}us", d.as_micros()),
            FaultAction::FlushScripts => "action=flush-scripts".into(),
            FaultAction::Rollback => "action=rollback".into(),
        });
        s
    }
}

/// A rule with its counters.
#[derive(Clone, Debug)]
struct Rule {
    fault: Fault,
    matched: u64,
    fired: u64,
    rng: u64,
}

/// A fault that fired, for the log.
#[derive(Clone, Debug, PartialEq)]
pub struct Fired {
    pub rule: u64,
    pub conn: u64,
    /// The command it matched, arguments joined by spaces (lossy UTF-8).
    pub command: String,
    pub action: FaultAction,
}

/// What the engine needs to know about a command to match rules against it.
pub struct Candidate<'a> {
    pub conn: u64,
    pub client_name: Option<&'a [u8]>,
    pub command: &'a str,
    pub keys: &'a [&'a [u8]],
    /// SHA1 (lower case) of an EVAL/EVALSHA script, or the function name of FCALL.
    pub script: Option<&'a str>,
    pub args: &'a [bytes::Bytes],
}

#[derive(Debug, Default)]
struct Inner {
    /// The rules by id. `count` is their number, kept under this lock.
    rules: Mutex<BTreeMap<u64, Rule>>,
    count: AtomicUsize,
    next_id: AtomicU64,
    log: Mutex<VecDeque<Fired>>,
}

/// The fault table of one server; clones share it.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    inner: Arc<Inner>,
}

impl Faults {
    /// The rules, locked. Nothing panics while the lock is held; recover anyway.
    fn rules(&self) -> MutexGuard<'_, BTreeMap<u64, Rule>> {
        self.inner.rules.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a rule; returns its id.
    pub fn add(&self, fault: Fault) -> u64 {
        let id = self.inner.next_id.fetch_add(1, Ordering::AcqRel) + 1;
        let seed = fault.probability.map_or(1, |(_, s)| s.max(1));
        let mut rules = self.rules();
        rules.insert(
            id,
            Rule {
                fault,
                matched: 0,
                fired: 0,
                rng: seed,
            },
        );
        self.inner.count.store(rules.len(), Ordering::Release);
        id
    }

    /// Removes a rule; false if there was none with this id.
    pub fn remove(&self, id: u64) -> bool {
        let mut rules = self.rules();
        let removed = rules.remove(&id).is_some();
        self.inner.count.store(rules.len(), Ordering::Release);
        removed
    }

    pub fn clear(&self) {
        let mut rules = self.rules();
        rules.clear();
        self.inner.count.store(0, Ordering::Release);
    }

    pub fn is_empty(&self) -> bool {
        self.inner.count.load(Ordering::Acquire) == 0
    }

    pub fn len(&self) -> usize {
        self.inner.count.load(Ordering::Acquire)
    }

    /// (id, description, times fired) of every rule, by id.
    pub fn list(&self) -> Vec<(u64, String, u64)> {
        self.rules()
            .iter()
            .map(|(id, r)| (*id, r.fault.describe(), r.fired))
            .collect()
    }

    /// The last `LOG_LEN` faults that fired, oldest first.
    pub fn log(&self) -> Vec<Fired> {
        self.inner
            .log
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Finds the first rule (by id) that matches and fires for this command, updates its
    /// counters and logs it.
    pub(crate) fn check(&self, c: &Candidate) -> Option<FaultAction> {
        if self.is_empty() {
            return None;
        }
        let mut rules = self.rules();
        let fired = rules.iter_mut().find_map(|(&id, rule)| {
            if !matches(&rule.fault, c) {
                return None;
            }
            rule.matched += 1;
            if !fires(rule) {
                return None;
            }
            rule.fired += 1;
            Some((id, rule.fault.action.clone()))
        });
        drop(rules);
        let (id, action) = fired?;
        let command = log_line(c.args);
        if let Ok(mut log) = self.inner.log.lock() {
            if log.len() == LOG_LEN {
                log.pop_front();
            }
            log.push_back(Fired {
                rule: id,
                conn: c.conn,
                command,
                action: action.clone(),
            });
        }
        Some(action)
    }
}

/// How many firings the log keeps. A long test with a delay rule on every command fires
/// millions of times; the log is for reading the recent ones, so it is a ring.
pub const LOG_LEN: usize = 1024;

/// How a logged command is shortened, as SLOWLOG shortens its entries: at most this many
/// arguments, each at most this many bytes.
const LOG_ARGS: usize = 32;
const LOG_ARG_BYTES: usize = 128;

/// The command as the log shows it: arguments joined by spaces (lossy UTF-8), cut as SLOWLOG
/// cuts them, so one huge argument does not make every log entry huge.
fn log_line(args: &[bytes::Bytes]) -> String {
    let mut parts: Vec<String> = args
        .iter()
        .take(LOG_ARGS)
        .map(|a| {
            if a.len() > LOG_ARG_BYTES {
                format!(
                    "{}... ({} more bytes)",
                    String::from_utf8_lossy(&a[..LOG_ARG_BYTES]),
                    a.len() - LOG_ARG_BYTES
                )
            } else {
                String::from_utf8_lossy(a).into_owned()
            }
        })
        .collect();
    if args.len() > LOG_ARGS {
        parts.push(format!("... ({} more arguments)", args.len() - LOG_ARGS));
    }
    parts.join(" ")
}

fn matches(f: &Fault, c: &Candidate) -> bool {
    if f.command.as_deref().is_some_and(|want| want != c.command) {
        return false;
    }
    if let Some(glob) = &f.key {
        if !c.keys.iter().any(|k| crate::glob::matches(glob, k, false)) {
            return false;
        }
    }
    if let Some(s) = &f.script {
        if !c.script.is_some_and(|x| x.eq_ignore_ascii_case(s)) {
            return false;
        }
    }
    match &f.client {
        Some(ClientMatch::Id(id)) => *id == c.conn,
        Some(ClientMatch::Name(n)) => c.client_name == Some(n.as_bytes()),
        None => true,
    }
}

fn fires(rule: &mut Rule) -> bool {
    let f = &rule.fault;
    if rule.matched <= f.after {
        return false;
    }
    if f.times.is_some_and(|t| rule.fired >= t) {
        return false;
    }
    if !(rule.matched - f.after - 1).is_multiple_of(f.every) {
        return false;
    }
    if let Some((p, _)) = f.probability {
        // xorshift64: small, seeded, the same sequence every run.
        let mut x = rule.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rule.rng = x;
        return ((x >> 11) as f64 / (1u64 << 53) as f64) < p;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand<'a>(cmd: &'a str, keys: &'a [&'a [u8]]) -> Candidate<'a> {
        Candidate {
            conn: 1,
            client_name: None,
            command: cmd,
            keys,
            script: None,
            args: &[],
        }
    }

    #[test]
    fn times_every_after() {
        let f = Faults::default();
        f.add(
            Fault::on_command("get")
                .reply_error("ERR x")
                .after(1)
                .every(2)
                .times(2),
        );
        let fired: Vec<bool> = (0..8)
            .map(|_| f.check(&cand("get", &[])).is_some())
            .collect();
        assert_eq!(
            fired,
            [false, true, false, true, false, false, false, false]
        );
        assert_eq!(f.log().len(), 2);
    }

    #[test]
    fn key_glob_and_seeded_probability_are_repeatable() {
        let run = || {
            let f = Faults::default();
            f.add(Fault::on_key("lock:*").close_after().probability(0.5, 42));
            (0..64)
                .map(|_| f.check(&cand("set", &[b"lock:1"])).is_some())
                .collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        assert!(a.iter().any(|&x| x) && a.iter().any(|&x| !x));
        let f = Faults::default();
        f.add(Fault::on_key("lock:*").close_after());
        assert!(f.check(&cand("set", &[b"other"])).is_none());
    }

    #[test]
    fn the_log_keeps_the_last_firings_with_short_arguments() {
        let f = Faults::default();
        f.add(Fault::on_any());
        let huge = bytes::Bytes::from(vec![b'x'; 10_000]);
        let many: Vec<bytes::Bytes> = (0..40).map(|i| bytes::Bytes::from(i.to_string())).collect();
        for n in 0..(LOG_LEN + 10) {
            let args = [
                bytes::Bytes::from("SET"),
                bytes::Bytes::from(n.to_string()),
                huge.clone(),
            ];
            let mut c = cand("set", &[]);
            c.args = &args;
            assert!(f.check(&c).is_some(), "an observing rule fires");
        }
        let mut c = cand("mset", &[]);
        c.args = &many;
        f.check(&c);
        let log = f.log();
        assert_eq!(log.len(), LOG_LEN, "a ring, not a growing list");
        assert_eq!(
            log[0].command.split(' ').nth(1),
            Some("11"),
            "the oldest went first"
        );
        let x128 = "x".repeat(128);
        assert_eq!(
            log[LOG_LEN - 2].command,
            format!("SET {} {x128}... (9872 more bytes)", LOG_LEN + 9)
        );
        assert!(log[LOG_LEN - 1]
            .command
            .ends_with("30 31 ... (8 more arguments)"));
        assert_eq!(f.list()[0].1, "action=observe");
    }
}
