//! The differential fuzzer: commands generated from Redis's argument specifications, sent
//! to redlab and to a real redis-server side by side over TCP. A crash (the connection
//! closes), a hang (no reply within the timeout) or a reply of another type is a finding;
//! a reply of the same type with other content is recorded as a value difference, for a
//! report (error texts, orderings and encodings differ in ways worth reading, not failing).
//!
//! Each case starts from an empty server (FLUSHALL, SCRIPT FLUSH, FUNCTION FLUSH) on fresh
//! connections, fills a few keys with values of every type and encoding, then runs
//! generated commands. Once a write's replies differ, the two keyspaces may differ too and
//! every later comparison would be noise, so the case ends there.

use std::net::SocketAddr;
use std::time::Duration;

use super::argspec::CommandSpec;
use super::generate::{self, Choices};
use super::resp::{Conn, Frame, ReadError};

/// Commands never sent, and why. Each would break the side-by-side comparison rather than
/// reveal anything about redlab (other suites cover them).
pub const EXCLUDED: &[(&str, &str)] = &[
    ("shutdown", "stops the server"),
    ("debug", "DEBUG SLEEP/SEGFAULT/RELOAD stall or crash Redis on purpose; redlab's DEBUG is its own subset"),
    ("monitor", "turns the connection into a push stream"),
    ("subscribe", "push mode: replies stop being one per command"),
    ("psubscribe", "push mode"),
    ("ssubscribe", "push mode"),
    ("unsubscribe", "one reply per channel (but one QUEUED in MULTI): the reply count depends on state"),
    ("punsubscribe", "as UNSUBSCRIBE"),
    ("sunsubscribe", "as UNSUBSCRIBE"),
    ("sync", "replication stream"),
    ("psync", "replication stream"),
    ("replconf", "replication handshake"),
    ("replicaof", "would make the real Redis connect to a master"),
    ("slaveof", "same as REPLICAOF"),
    ("failover", "replication"),
    ("migrate", "connects to another server"),
    ("quit", "closes the connection, which would read as a crash"),
    ("hello", "switches protocol and auth mid-case; RESP3 is compared by the conformance cases"),
    ("client|kill", "can kill the fuzzer's own connection, which would read as a crash"),
    ("client|pause", "pauses the whole server for up to i64::MAX ms"),
    ("client|reply", "OFF and SKIP suppress replies, which would read as a hang"),
    ("client|tracking", "invalidation pushes arrive out of band"),
    ("config|set", "server-wide settings outlive the case (maxmemory 1 would fail everything after)"),
    ("save", "writes files; timing-dependent"),
    ("bgsave", "background save: replies depend on timing"),
    ("bgrewriteaof", "background rewrite: replies depend on timing"),
    ("acl|setuser", "could disable or re-password the default user, locking the fuzzer out"),
    ("acl|deluser", "changes users for later cases"),
    ("acl|load", "reads files"),
    ("acl|save", "writes files"),
    ("module|load", "loads shared objects"),
    ("module|loadex", "loads shared objects"),
    ("script|debug", "YES/SYNC hand the connection to the Lua debugger; redlab has no debugger by design"),
    ("pfselftest", "Redis's own HLL self test, nothing to compare"),
];

/// How two replies of the same type are compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Compare {
    Full,
    /// Arrays compared with their elements sorted: the order is unspecified.
    Sorted,
    /// Only the type: the content depends on time, randomness or the implementation.
    TypeOnly,
}

pub fn compare_mode(name: &str) -> Compare {
    match name {
        "keys"
        | "smembers"
        | "sunion"
        | "sinter"
        | "sdiff"
        | "hkeys"
        | "hvals"
        | "hgetall"
        | "sort"
        | "sort_ro"
        | "pubsub|channels"
        | "pubsub|shardchannels"
        | "acl|users"
        | "acl|cat"
        | "function|list" => Compare::Sorted,
        "time" | "randomkey" | "srandmember" | "hrandfield" | "zrandmember" | "spop" | "info"
        | "client|list" | "client|info" | "client|id" | "lastsave" | "object|freq"
        | "object|idletime" | "lolwut" | "ttl" | "pttl" | "expiretime" | "pexpiretime" | "scan"
        | "sscan" | "hscan" | "zscan" | "dump" | "function|dump" | "function|stats"
        | "config|get" | "command" | "command|docs" | "command|info" | "command|list"
        | "command|count" | "acl|log" | "acl|genpass" | "acl|list" | "acl|getuser"
        | "acl|whoami" => Compare::TypeOnly,
        n if n.starts_with("memory") || n.starts_with("slowlog") || n.starts_with("latency") => {
            Compare::TypeOnly
        }
        n if n.ends_with("|help") => Compare::TypeOnly,
        _ => Compare::Full,
    }
}

/// Writes with a random outcome: the keyspaces diverge after them.
fn random_write(name: &str) -> bool {
    matches!(name, "spop")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingKind {
    /// redlab closed the connection.
    Crash,
    /// redlab did not answer within the timeout (Redis did).
    Hang,
    /// Both answered, with replies of different types.
    TypeDifference,
    /// redlab answered with bytes that are not RESP.
    Garbage,
    /// Redis itself crashed or hung: the generator made something it must not.
    RedisFailed,
}

/// One finding, with the whole case up to it so it can be replayed.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: FindingKind,
    pub command: Vec<Vec<u8>>,
    pub redis: String,
    pub redlab: String,
    /// The commands of the case before this one.
    pub before: Vec<Vec<Vec<u8>>>,
}

/// A reply of the same type but other content.
#[derive(Debug, Clone)]
pub struct ValueDifference {
    pub name: String,
    pub command: Vec<Vec<u8>>,
    pub redis: String,
    pub redlab: String,
    /// The commands of the case before this one.
    pub before: Vec<Vec<Vec<u8>>>,
}

/// Everything one run saw.
#[derive(Debug, Default)]
pub struct Outcome {
    pub cases: usize,
    pub commands: usize,
    pub findings: Vec<Finding>,
    pub value_differences: Vec<ValueDifference>,
    /// Commands sent, by name, to see the coverage.
    pub sent: std::collections::BTreeMap<String, usize>,
}

/// Shows a command the way redis-cli would take it back.
pub fn show_command(args: &[Vec<u8>]) -> String {
    let more = if args.len() > 16 {
        format!(" ...({} more arguments)", args.len() - 16)
    } else {
        String::new()
    };
    args.iter()
        .take(16)
        .map(|a| {
            let s = String::from_utf8_lossy(&a[..a.len().min(80)]).into_owned();
            let cut = if a.len() > 80 {
                format!("...({} bytes)", a.len())
            } else {
                String::new()
            };
            if !a.is_empty()
                && a.iter()
                    .all(|&b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
            {
                format!("{s}{cut}")
            } else {
                format!("{s:?}{cut}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
        + &more
}

/// Ties the generator to the two servers.
pub struct Differential {
    specs: Vec<CommandSpec>,
    redis: SocketAddr,
    redlab: SocketAddr,
    pub timeout: Duration,
    /// Print every command and both replies to stderr.
    pub trace: bool,
}

impl Differential {
    /// `spec_text` is `tests/data/command_args.txt`. Only commands redlab has (by its
    /// command table) and that are not `EXCLUDED` are generated.
    pub fn new(spec_text: &str, redis: SocketAddr, redlab: SocketAddr) -> Differential {
        let mut ours = std::collections::HashSet::new();
        for c in crate::cmd::table::all() {
            ours.insert(c.name.to_string());
            for s in c.subcommands {
                ours.insert(format!("{}|{}", c.name, s.name));
            }
        }
        let specs = super::argspec::parse(spec_text)
            .expect("tests/data/command_args.txt parses")
            .into_iter()
            .filter(|s| ours.contains(&s.name) && !EXCLUDED.iter().any(|(n, _)| *n == s.name))
            .collect();
        Differential {
            specs,
            redis,
            redlab,
            timeout: Duration::from_secs(5),
            trace: false,
        }
    }

    pub fn command_names(&self) -> Vec<&str> {
        self.specs.iter().map(|s| s.name.as_str()).collect()
    }

    /// One case of up to `max_commands` commands (fewer when byte-driven choices run out).
    /// Returns false when a server stopped answering, so no further case can run.
    pub fn run_case(&self, c: &mut Choices, max_commands: usize, out: &mut Outcome) -> bool {
        out.cases += 1;
        let (mut redis, mut redlab) = match (
            Conn::connect(self.redis, self.timeout),
            Conn::connect(self.redlab, self.timeout),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                let which = if a.is_err() {
                    FindingKind::RedisFailed
                } else {
                    FindingKind::Crash
                };
                out.findings.push(Finding {
                    kind: which,
                    command: vec![b"(connect)".to_vec()],
                    redis: format!("{:?}", a.err()),
                    redlab: format!("{:?}", b.err()),
                    before: Vec::new(),
                });
                return false;
            }
        };
        for reset in [
            &["FLUSHALL"][..],
            &["SCRIPT", "FLUSH"],
            &["FUNCTION", "FLUSH"],
        ] {
            let args: Vec<Vec<u8>> = reset.iter().map(|s| s.as_bytes().to_vec()).collect();
            if redis.call(&args).is_err() || redlab.call(&args).is_err() {
                return self.step(&mut redis, &mut redlab, args, &[], out).is_some();
            }
        }
        let mut before: Vec<Vec<Vec<u8>>> = Vec::new();
        for args in prefill(c) {
            match self.step(&mut redis, &mut redlab, args.clone(), &before, out) {
                None => return false,
                Some(false) => return true,
                Some(true) => before.push(args),
            }
        }
        for _ in 0..max_commands {
            if c.done() {
                break;
            }
            let spec = c.pick(&self.specs);
            let args = generate::command(c, spec);
            match self.step(&mut redis, &mut redlab, args.clone(), &before, out) {
                None => return false,
                Some(false) => return true,
                Some(true) => before.push(args),
            }
        }
        true
    }

    /// Sends one command to both. None: a server stopped answering; Some(false): the case
    /// cannot go on (the keyspaces diverged); Some(true): next command.
    fn step(
        &self,
        redis: &mut Conn,
        redlab: &mut Conn,
        args: Vec<Vec<u8>>,
        before: &[Vec<Vec<u8>>],
        out: &mut Outcome,
    ) -> Option<bool> {
        let name = command_name(&args);
        out.commands += 1;
        *out.sent.entry(name.clone()).or_default() += 1;
        let theirs = redis.call(&args);
        let ours = redlab.call(&args);
        if self.trace {
            let show = |r: &Result<Frame, ReadError>| match r {
                Ok(f) => f.show(),
                Err(e) => format!("{e:?}"),
            };
            eprintln!(
                "{}\n  redis:  {}\n  redlab: {}",
                show_command(&args),
                show(&theirs),
                show(&ours)
            );
        }
        let finding = |kind, t: String, o: String| Finding {
            kind,
            command: args.clone(),
            redis: t,
            redlab: o,
            before: before.to_vec(),
        };
        let (t, o) = match (theirs, ours) {
            (Ok(t), Ok(o)) => (t, o),
            (Err(e), o) => {
                // Redis failing is the generator's bug (or Redis's); redlab is not to blame.
                out.findings.push(finding(
                    FindingKind::RedisFailed,
                    format!("{e:?}"),
                    format!("{o:?}"),
                ));
                return None;
            }
            (Ok(t), Err(e)) => {
                let kind = match e {
                    ReadError::Closed => FindingKind::Crash,
                    ReadError::Timeout => FindingKind::Hang,
                    ReadError::Garbage(_) => FindingKind::Garbage,
                };
                out.findings.push(finding(kind, t.show(), format!("{e:?}")));
                return None;
            }
        };
        if t.type_name() != o.type_name() {
            out.findings
                .push(finding(FindingKind::TypeDifference, t.show(), o.show()));
            // The replies say the keyspaces (or connection states) differ: stop the case.
            return Some(false);
        }
        let mode = compare_mode(&name);
        let same = match mode {
            Compare::Full => t == o,
            Compare::Sorted => t.sorted() == o.sorted(),
            Compare::TypeOnly => true,
        };
        if !same {
            out.value_differences.push(ValueDifference {
                name: name.clone(),
                command: args.clone(),
                redis: t.show(),
                redlab: o.show(),
                before: before.to_vec(),
            });
            let both_errors = matches!((&t, &o), (Frame::Error(_), Frame::Error(_)));
            if !both_errors {
                return Some(false);
            }
        }
        Some(!random_write(&name))
    }
}

/// The command's table name: "get", or "config|get" for a container's subcommand.
fn command_name(args: &[Vec<u8>]) -> String {
    let first = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let containers = [
        "acl", "client", "command", "config", "function", "latency", "memory", "module", "object",
        "pubsub", "script", "slowlog", "cluster", "xinfo", "xgroup",
    ];
    match args.get(1) {
        Some(sub) if containers.contains(&first.as_str()) => format!(
            "{first}|{}",
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        ),
        _ => first,
    }
}

/// Commands that give each of the keys a value of some type and encoding (or none).
fn prefill(c: &mut Choices) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for key in ["k0", "k1", "k2", "{k}3"] {
        let k = key.to_string();
        let many =
            |prefix: &str, n: usize| (0..n).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>();
        let cmd: Vec<String> = match c.below(14) {
            0..=2 => continue,
            3 => vec!["SET".into(), k, "abc".into()],
            4 => vec!["SET".into(), k, "12".into()],
            5 => vec!["SET".into(), k, "x".repeat(100)],
            6 => [
                vec!["RPUSH".into(), k],
                many("", 3),
                vec!["a".into(), "b".into()],
            ]
            .concat(),
            7 => [vec!["RPUSH".into(), k], many("e", 200)].concat(),
            8 => [vec!["SADD".into(), k], many("", 5)].concat(),
            9 => [vec!["SADD".into(), k, "a".into(), "b".into()], many("", 3)].concat(),
            10 => [vec!["SADD".into(), k], many("m", 200)].concat(),
            11 => {
                let mut v = vec!["ZADD".into(), k];
                let n = if c.chance(128) { 3 } else { 200 };
                for i in 0..n {
                    v.push(format!("{}", i as f64 / 2.0));
                    v.push(if i % 3 == 0 {
                        "a".to_string()
                    } else {
                        format!("m{i}")
                    });
                }
                v
            }
            _ => {
                let mut v = vec!["HSET".into(), k];
                let n = if c.chance(128) { 3 } else { 200 };
                for i in 0..n {
                    v.push(format!("f{i}"));
                    v.push(if i == 1 {
                        "y".repeat(65)
                    } else {
                        i.to_string()
                    });
                }
                v
            }
        };
        out.push(cmd.into_iter().map(String::into_bytes).collect());
    }
    out
}

/// Differences of reply type that are known and allowed, with why: (command name, a text
/// both replies must contain to match, reason). Kept short: a new difference is a bug to
/// report and fix, not to list here.
pub const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    // SET k2 v PXAT 4102444800 (a moment in 1970), then MEMORY USAGE k2: Redis answers :112,
    // redlab (nil). Redis's MEMORY USAGE looks the key up without expiring it, so a key past
    // its deadline keeps a size until the active expiry cycle happens to remove it.
    (
        "memory|usage",
        "(nil bulk)",
        "Redis sizes a key already past its deadline",
    ),
];

/// The reason a finding is allowed, if it is.
pub fn known_difference(f: &Finding) -> Option<&'static str> {
    if f.kind != FindingKind::TypeDifference {
        return None;
    }
    let name = command_name(&f.command);
    KNOWN_DIFFERENCES
        .iter()
        .find(|(n, text, _)| *n == name && (f.redis.contains(text) || f.redlab.contains(text)))
        .map(|(_, _, why)| *why)
}
