//! The one command table: name, arity, flags and key positions of every command.
//!
//! As in Redis, the dispatcher enforces everything the table says (arity, auth, "allowed in
//! a script", "allowed in MULTI", deny-oom) centrally, so a handler never re-checks it.
//! Each group file exports its own `COMMANDS` slice of handlers; `all()` serves them with
//! Redis's own metadata laid over (`meta`: arity, flags, key specs, captured from Redis
//! 7.0.15) and redlab's dispatch policy (`policy`). `resolve` is the one way from a command
//! line to its entry, for the dispatcher, the busy-script loop and `redis.call`.

use std::collections::HashMap;
use std::sync::OnceLock;

pub mod keyspec;
pub mod meta;
pub mod policy;
mod resolve;

#[cfg(test)]
mod agreement;

pub use resolve::{named_command, resolve, resolve_for, resolve_in_script, ScriptRefusal};

use bytes::Bytes;

use crate::compat::{Profile, Since};
use crate::engine::{Call, Engine};
use crate::reply::Reply;

/// What a handler returns: the reply, or on the error side the error reply, so a handler can
/// use `?` on argument parsing and typed key lookups.
pub type CmdResult = Result<Reply, Reply>;

/// A command handler. It returns its error replies on the `Err` side, so argument parsing
/// and typed key lookups propagate with `?`; the client sees either side as the reply.
#[derive(Clone, Copy)]
pub struct Handler(fn(&mut Engine, &mut Call) -> CmdResult);

impl Handler {
    pub fn run(self, engine: &mut Engine, call: &mut Call) -> Reply {
        (self.0)(engine, call).unwrap_or_else(|e| e)
    }
}

/// Finds the key argument positions of a command whose keys move (EVAL's numkeys, ZUNION's
/// numkeys, ...). Gets the whole argument vector, the command name at 0.
pub type KeysFn = fn(&[Bytes]) -> Vec<usize>;

/// Command flags, as Redis names them in COMMAND INFO.
pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const FAST: u32 = 1 << 9;
    pub const NO_AUTH: u32 = 1 << 10;
    pub const ALLOW_BUSY: u32 = 1 << 11;
    pub const NO_MULTI: u32 = 1 << 12;
    pub const MAY_REPLICATE: u32 = 1 << 13;
    pub const SKIP_MONITOR: u32 = 1 << 14;
    pub const SKIP_SLOWLOG: u32 = 1 << 15;
    pub const NO_MANDATORY_KEYS: u32 = 1 << 16;
    pub const SENTINEL: u32 = 1 << 17;

    /// The names COMMAND INFO prints, in Redis's order. Redis 7.0 never prints may_replicate.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// One command (or one subcommand of a container command such as CLIENT or CONFIG).
#[derive(Clone, Copy)]
pub struct Command {
    /// Lower case, as Redis prints it in errors.
    pub name: &'static str,
    /// Positive: exact argument count including the name; negative: at least -arity.
    pub arity: i32,
    pub flags: u32,
    /// First key, last key (negative counts from the end) and step; 0 when no keys.
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    /// Redis's command group, for COMMAND DOCS.
    pub group: &'static str,
    pub handler: Handler,
    pub subcommands: &'static [Command],
    pub keys_fn: Option<KeysFn>,
    /// What Redis 7.0.15 says about this command; None for redlab's own (REDLAB.*). Set when
    /// the table is built, with `arity`, `flags` and the key positions taken from it.
    pub meta: Option<&'static meta::Meta>,
    /// redlab's dispatch rules for this command (`policy::*`), set when the table is built.
    pub policy: u32,
    /// The release of each family that brought the command (`compat::since::LATER`, set when
    /// the table is built); a profile older than that answers as for an unknown command.
    pub since: Since,
}

impl Command {
    /// A command with no keys.
    pub const fn new(
        name: &'static str,
        arity: i32,
        flags: u32,
        group: &'static str,
        handler: fn(&mut Engine, &mut Call) -> CmdResult,
    ) -> Command {
        Command {
            name,
            arity,
            flags,
            first_key: 0,
            last_key: 0,
            step: 0,
            group,
            handler: Handler(handler),
            subcommands: &[],
            keys_fn: None,
            meta: None,
            policy: 0,
            since: Since::ALWAYS,
        }
    }

    /// Sets the key positions (first, last, step).
    pub const fn keys(mut self, first: i32, last: i32, step: i32) -> Command {
        self.first_key = first;
        self.last_key = last;
        self.step = step;
        self
    }

    /// Keys found by a function of the arguments (numkeys-style commands).
    pub const fn movable_keys(mut self, f: KeysFn) -> Command {
        self.keys_fn = Some(f);
        self
    }

    pub const fn subcommands(mut self, subs: &'static [Command]) -> Command {
        self.subcommands = subs;
        self
    }

    /// Sets when the command arrived (for a command `compat::since::LATER` does not list).
    pub const fn since(mut self, since: Since) -> Command {
        self.since = since;
        self
    }

    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// The script commands (EVAL, EVALSHA, FCALL and their _RO forms) are flagged skip_monitor
    /// yet show themselves to MONITOR before they run, so that the commands the script runs
    /// follow their line, as Redis's evalCommand and fcallCommand do.
    pub fn feeds_monitors_first(&self) -> bool {
        matches!(
            self.name,
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
        )
    }

    /// Whether one of redlab's dispatch rules (`policy::*`) applies.
    pub fn policy(&self, rule: u32) -> bool {
        self.policy & rule != 0
    }

    /// Whether `argc` arguments (name included) satisfy the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i64;
        let arity = self.arity as i64;
        if arity >= 0 {
            argc == arity
        } else {
            argc >= -arity
        }
    }

    /// Positions of the key arguments in `args` (see `keyspec::find`).
    pub fn key_positions(&self, args: &[Bytes]) -> Vec<usize> {
        keyspec::find(self, args)
            .into_iter()
            .map(|k| k.pos)
            .collect()
    }

    /// The name Redis uses in messages: `get`, or `client|id` for a subcommand.
    pub fn full_name(&self, parent: Option<&Command>) -> String {
        match parent {
            Some(p) => format!("{}|{}", p.name, self.name),
            None => self.name.to_string(),
        }
    }
}

/// Every command of every group as its group file writes it, before the metadata is laid
/// over (for the agreement test and the build below).
pub(crate) fn hand_written() -> impl Iterator<Item = &'static Command> {
    use super::*;
    let groups: [&'static [Command]; 24] = [
        acl::COMMANDS,
        connection::COMMANDS,
        server::COMMANDS,
        keys::COMMANDS,
        string::COMMANDS,
        bitmap::COMMANDS,
        hash::COMMANDS,
        hash::field_ttl::COMMANDS,
        list::COMMANDS,
        set::COMMANDS,
        zset::COMMANDS,
        pubsub::COMMANDS,
        transactions::COMMANDS,
        scripting::COMMANDS,
        functions::COMMANDS,
        debug::COMMANDS,
        redlab::COMMANDS,
        hyperloglog::COMMANDS,
        geo::COMMANDS,
        sort::COMMANDS,
        stream::COMMANDS,
        crate::cluster::commands::COMMANDS,
        crate::repl::commands::COMMANDS,
        crate::compat::command::COMMANDS,
    ];
    groups.into_iter().flat_map(|g| g.iter())
}

/// Every command, as dispatch sees it.
pub fn all() -> impl Iterator<Item = &'static Command> {
    built().iter()
}

/// The table with Redis's metadata and redlab's policy laid over each hand-written entry,
/// built once and kept for the life of the process.
fn built() -> &'static [Command] {
    static BUILT: OnceLock<&'static [Command]> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cmds: Vec<Command> = hand_written().map(|c| build(c, None)).collect();
        Box::leak(cmds.into_boxed_slice())
    })
}

/// The commands Redis 7.0 flags may_replicate (not shown by COMMAND INFO): they may change
/// nothing yet reach replicas, so a read-only script refuses them and CLIENT PAUSE WRITE
/// holds them back. A script's declared flags replace EVAL's and FCALL's (see
/// `engine/pause.rs`).
const MAY_REPLICATE: &[&str] = &["eval", "evalsha", "fcall", "publish", "spublish", "pfcount"];

fn build(c: &Command, parent: Option<&Command>) -> Command {
    let full = c.full_name(parent);
    let mut out = *c;
    if let Some(m) = meta::get(&full) {
        out.meta = Some(m);
        out.arity = m.arity;
        // COMMAND INFO never shows may_replicate, so the captured data cannot carry it: the
        // hand-written entry does (PFCOUNT counts as a write in a read-only script).
        out.flags = m.flags | (c.flags & flags::MAY_REPLICATE);
        if MAY_REPLICATE.contains(&full.as_str()) {
            out.flags |= flags::MAY_REPLICATE;
        }
        out.first_key = m.first_key;
        out.last_key = m.last_key;
        out.step = m.step;
    }
    out.policy = policy::of(&full);
    if c.since == Since::ALWAYS {
        out.since = crate::compat::since::of(&full);
    }
    if !c.subcommands.is_empty() {
        let subs: Vec<Command> = c.subcommands.iter().map(|s| build(s, Some(c))).collect();
        out.subcommands = Box::leak(subs.into_boxed_slice());
    }
    out
}

/// A command name lower-cased and zero-padded into three words, its length in the last
/// byte: every lookup (one per command, one per redis.call) hashes and compares three
/// integers instead of a string, and "get\0" cannot pass for "get".
#[derive(PartialEq, Eq)]
struct Packed([u64; 3]);

impl std::hash::Hash for Packed {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let [a, b, c] = self.0;
        state.write_u64(a ^ b.rotate_left(21) ^ c.rotate_left(42));
    }
}

/// Longest name a packed key holds; no Redis command name comes near it.
const MAX_NAME: usize = 23;

fn pack(name: &[u8]) -> Option<Packed> {
    if name.len() > MAX_NAME {
        return None;
    }
    // Assembled in registers: copying the name into a byte buffer and reading words back
    // stalled on store forwarding, which made this the costliest step of a lookup.
    let mut words = [0u64; 3];
    for (i, &b) in name.iter().enumerate() {
        words[i / 8] |= u64::from(b) << (8 * (i % 8));
    }
    words[2] |= (name.len() as u64) << 56;
    Some(Packed(words.map(lower_ascii_word)))
}

/// ASCII-lowercases the eight bytes of `w` at once: each byte in 'A'..='Z' gets 0x20.
fn lower_ascii_word(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low7 = w & !HIGH;
    // A byte's high bit is set when its low seven bits are >= 'A', and when they are > 'Z'.
    let ge_a = low7 + (0x80 - b'A' as u64) * ONES;
    let gt_z = low7 + (0x7f - b'Z' as u64) * ONES;
    let upper = ge_a & !gt_z & !w & HIGH;
    w | (upper >> 2)
}

type Index = HashMap<Packed, &'static Command, foldhash::fast::FixedState>;

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        built()
            .iter()
            .map(|c| (pack(c.name.as_bytes()).expect("command names are short"), c))
            .collect()
    })
}

/// Finds a command by name, case-insensitively.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    index().get(&pack(name)?).copied()
}

/// Finds a subcommand of a container command, case-insensitively.
pub fn lookup_sub(parent: &'static Command, name: &[u8]) -> Option<&'static Command> {
    parent
        .subcommands
        .iter()
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

/// The commands a profile has (COMMAND, COMMAND LIST/INFO/DOCS/COUNT under that profile).
pub fn all_in(profile: Profile) -> impl Iterator<Item = &'static Command> {
    all().filter(move |c| profile.has(c.since))
}

/// A command by name, if the profile has it.
pub fn lookup_in(profile: Profile, name: &[u8]) -> Option<&'static Command> {
    lookup(name).filter(|c| profile.has(c.since))
}

/// A subcommand by name, if the profile has it.
pub fn lookup_sub_in(
    profile: Profile,
    parent: &'static Command,
    name: &[u8],
) -> Option<&'static Command> {
    lookup_sub(parent, name).filter(|c| profile.has(c.since))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_ignores_case_and_nothing_else() {
        assert_eq!(lookup(b"GeT").map(|c| c.name), Some("get"));
        assert_eq!(
            lookup(b"ZREMRANGEBYSCORE").map(|c| c.name),
            Some("zremrangebyscore")
        );
        for bad in [
            &b"get\0"[..],
            b"ge",
            b"get ",
            b"",
            b"getgetgetgetgetgetgetgetget",
        ] {
            assert!(lookup(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn words_lowercase_like_bytes() {
        for c in 0..=255u8 {
            let w = u64::from_le_bytes([c, b'A', b'z', b'@', b'[', c, 0x80 | b'A', b'Z']);
            let want = u64::from_le_bytes(
                [c, b'A', b'z', b'@', b'[', c, 0x80 | b'A', b'Z'].map(|b| b.to_ascii_lowercase()),
            );
            assert_eq!(lower_ascii_word(w), want, "{c}");
        }
    }

    #[test]
    fn names_are_unique_and_lower_case() {
        let mut seen = std::collections::HashSet::new();
        for c in all() {
            assert_eq!(c.name, c.name.to_ascii_lowercase(), "{}", c.name);
            assert!(seen.insert(c.name), "duplicate command {}", c.name);
            for s in c.subcommands {
                assert_eq!(s.name, s.name.to_ascii_lowercase());
            }
        }
    }
}
