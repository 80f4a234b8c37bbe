//! Redis 7.0.15's own description of its commands, captured from a real redis-server by
//! `scripts/capture_command_metadata.py` into `server/data/commands-7.0.15.json`.
//!
//! The table takes from here everything Redis says about a command that redlab also
//! implements: arity, flags, key specifications, ACL categories, tips and docs. Typing these
//! by hand is how they drift (the previous table derived key flags from WRITE and guessed ACL
//! categories from the group); regenerating the file is how they follow Redis.
//!
//! The file is JSON, which has no sets and no simple strings: the lists under the keys named
//! in its `sets` entry are RESP3 sets, and the strings under the keys named in `statuses` are
//! simple strings. `to_reply` puts both back.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::flags;
use crate::reply::Reply;

const DATA: &str = include_str!("../../../data/commands-7.0.15.json");
/// valkey-server 8.1.8's description, captured by the same script
/// (`--server valkey-server`): what COMMAND INFO and DOCS show under a Valkey 8.1 profile
/// (`shown_in`). Dispatch keeps 7.0's flags and arities either way.
const DATA_VALKEY: &str = include_str!("../../../data/commands-valkey-8.1.8.json");
/// The commands that arrived after Redis 7.0 in releases no server here runs (Redis 8.2's
/// XDELEX, XACKDEL and CLUSTER SLOT-STATS, 8.4's MSETEX), and BITOP's 8.2 docs: written by
/// hand in the captured files' format from the published command reference (`later`).
const DATA_LATER: &str = include_str!("../../../data/commands-later.json");
/// Redis 7.2's COMMAND DOCS (its rewritten summaries, arguments with `display_text`), from
/// redis-doc's table by `scripts/gen_docs_72.py`, with the entries of later releases that
/// changed one (`name@74`...): what the Redis profiles from 7.2 on print (`docs_in`).
const DATA_DOCS_72: &str = include_str!("../../../data/commands-docs-7.2.json");

/// Key-spec flags, as Redis names them, in the order Redis prints them.
pub mod key_flags {
    pub const RO: u32 = 1 << 0;
    pub const RW: u32 = 1 << 1;
    pub const OW: u32 = 1 << 2;
    pub const RM: u32 = 1 << 3;
    pub const ACCESS: u32 = 1 << 4;
    pub const UPDATE: u32 = 1 << 5;
    pub const INSERT: u32 = 1 << 6;
    pub const DELETE: u32 = 1 << 7;
    pub const NOT_KEY: u32 = 1 << 8;
    pub const INCOMPLETE: u32 = 1 << 9;
    pub const VARIABLE_FLAGS: u32 = 1 << 10;

    pub const NAMES: &[(u32, &str)] = &[
        (RO, "RO"),
        (RW, "RW"),
        (OW, "OW"),
        (RM, "RM"),
        (ACCESS, "access"),
        (UPDATE, "update"),
        (INSERT, "insert"),
        (DELETE, "delete"),
        (NOT_KEY, "not_key"),
        (INCOMPLETE, "incomplete"),
        (VARIABLE_FLAGS, "variable_flags"),
    ];
}

/// Where the search for a key spec's keys starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeginSearch {
    /// At this argument index.
    Index(i32),
    /// After the first argument equal to `keyword` (case-insensitively), searching from
    /// `startfrom` (negative: from the end, backwards).
    Keyword { keyword: String, startfrom: i32 },
    /// Redis cannot say where (SORT's BY/GET/STORE keys): the command's own key finder must.
    Unknown,
}

/// How a key spec's keys follow its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindKeys {
    /// Up to `lastkey` after the start (negative: from the end; with `limit`, a fraction of
    /// the rest), every `keystep`.
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// The argument at `keynumidx` after the start counts the keys, which begin `firstkey`
    /// after the start, every `keystep`.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
}

#[derive(Debug, Clone)]
pub struct KeySpec {
    pub flags: u32,
    pub begin: BeginSearch,
    pub find: FindKeys,
}

/// One command or subcommand as Redis describes it.
#[derive(Debug)]
pub struct Meta {
    /// `get`, or `client|id` for a subcommand.
    pub name: String,
    pub arity: i32,
    /// The flags redlab's dispatcher knows (`table::flags`), from the names Redis gives.
    pub flags: u32,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    pub key_specs: Vec<KeySpec>,
    /// The entry as captured, for COMMAND INFO and COMMAND DOCS.
    pub raw: &'static Map<String, Value>,
}

impl Meta {
    /// The flag names in Redis's order (`movablekeys` included).
    #[cfg(test)]
    pub fn flag_names(&self) -> impl Iterator<Item = &'static str> {
        strs(&self.raw["flags"])
    }

    pub fn acl_categories(&self) -> impl Iterator<Item = &'static str> {
        strs(&self.raw["acl_categories"])
    }

    /// The key specs as COMMAND INFO shows them.
    pub fn key_specs_reply(&self) -> Reply {
        to_reply(&self.raw["key_specs"], "key_specs")
    }

    pub fn tips_reply(&self) -> Reply {
        to_reply(&self.raw["tips"], "tips")
    }

    pub fn flags_reply(&self) -> Reply {
        to_reply(&self.raw["flags"], "flags")
    }

    /// The docs map without subcommands, as pairs (the caller adds implemented ones).
    pub fn docs_pairs(&self) -> Vec<(Reply, Reply)> {
        match &self.raw["docs"] {
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| (Reply::bulk(k), to_reply(v, k)))
                .collect(),
            _ => Vec::new(),
        }
    }
}

fn strs(v: &'static Value) -> impl Iterator<Item = &'static str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

struct Data {
    #[cfg(test)]
    version: String,
    sets: HashSet<String>,
    statuses: HashSet<String>,
    commands: HashMap<String, Meta>,
}

fn data() -> &'static Data {
    static DATA_CELL: OnceLock<Data> = OnceLock::new();
    DATA_CELL.get_or_init(|| load(DATA, "server/data/commands-7.0.15.json"))
}

fn valkey_data() -> &'static Data {
    static DATA_CELL: OnceLock<Data> = OnceLock::new();
    DATA_CELL.get_or_init(|| load(DATA_VALKEY, "server/data/commands-valkey-8.1.8.json"))
}

fn load(text: &'static str, file: &str) -> Data {
    {
        let root: &'static Value = Box::leak(Box::new(
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{file} is not valid JSON: {e}")),
        ));
        let names = |key: &str| -> HashSet<String> {
            root[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let mut commands = HashMap::new();
        for (name, entry) in root["commands"].as_object().expect("commands") {
            commands.insert(name.clone(), parse(name, entry));
            if let Some(subs) = entry["subcommands"].as_object() {
                for (sub, sub_entry) in subs {
                    commands.insert(sub.clone(), parse(sub, sub_entry));
                }
            }
        }
        Data {
            #[cfg(test)]
            version: root["redis_version"].as_str().unwrap_or("").to_string(),
            sets: names("sets"),
            statuses: names("statuses"),
            commands,
        }
    }
}

fn parse(name: &str, entry: &'static Value) -> Meta {
    let int = |k: &str| entry[k].as_i64().unwrap_or(0) as i32;
    let mut bits = 0;
    for f in strs(&entry["flags"]) {
        if let Some((bit, _)) = flags::NAMES.iter().find(|(_, n)| *n == f) {
            bits |= bit;
        }
    }
    let key_specs = entry["key_specs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(parse_key_spec)
        .collect();
    Meta {
        name: name.to_string(),
        arity: int("arity"),
        flags: bits,
        first_key: int("first_key"),
        last_key: int("last_key"),
        step: int("step"),
        key_specs,
        raw: entry.as_object().expect("a command entry is an object"),
    }
}

fn parse_key_spec(v: &Value) -> Option<KeySpec> {
    let mut bits = 0;
    for f in v["flags"].as_array()?.iter().filter_map(Value::as_str) {
        if let Some((bit, _)) = key_flags::NAMES.iter().find(|(_, n)| *n == f) {
            bits |= bit;
        }
    }
    let num = |spec: &Value, k: &str| spec[k].as_i64().map(|n| n as i32);
    let bs = &v["begin_search"]["spec"];
    let begin = match v["begin_search"]["type"].as_str()? {
        "index" => BeginSearch::Index(num(bs, "index")?),
        "keyword" => BeginSearch::Keyword {
            keyword: bs["keyword"].as_str()?.to_string(),
            startfrom: num(bs, "startfrom")?,
        },
        "unknown" => BeginSearch::Unknown,
        _ => return None,
    };
    let fk = &v["find_keys"]["spec"];
    let find = match v["find_keys"]["type"].as_str()? {
        "range" => FindKeys::Range {
            lastkey: num(fk, "lastkey")?,
            keystep: num(fk, "keystep")?,
            limit: num(fk, "limit")?,
        },
        "keynum" => FindKeys::Keynum {
            keynumidx: num(fk, "keynumidx")?,
            firstkey: num(fk, "firstkey")?,
            keystep: num(fk, "keystep")?,
        },
        // Only an unknown start has unknown keys; the walk never reaches them.
        "unknown" => FindKeys::Range {
            lastkey: 0,
            keystep: 1,
            limit: 0,
        },
        _ => return None,
    };
    Some(KeySpec {
        flags: bits,
        begin,
        find,
    })
}

fn later_data() -> &'static Data {
    static DATA_CELL: OnceLock<Data> = OnceLock::new();
    DATA_CELL.get_or_init(|| load(DATA_LATER, "server/data/commands-later.json"))
}

/// The description of a command newer than Redis 7.0 that no capture holds, as its
/// release's command reference gives it (arity, flags, ACL categories, tips, key specs and
/// docs): the table lays it over the hand-written entry as it lays 7.0's over the others.
pub fn later(name: &str) -> Option<&'static Meta> {
    later_data().commands.get(name)
}

/// What Redis says about `name` (`get`, `client|id`), lower case.
pub fn get(name: &str) -> Option<&'static Meta> {
    data().commands.get(name)
}

/// What `profile`'s server says about `name` in COMMAND INFO and COMMAND DOCS: valkey-server
/// 8.1's own entry under a profile that has Valkey 8.1's table
/// (`since::VALKEY_COMMAND_TABLE`), else Redis 7.0.15's. Both files name the same keys as
/// sets and simple strings (the capture script writes them), so `to_reply` serves both.
pub fn shown_in(profile: crate::compat::Profile, name: &str) -> Option<&'static Meta> {
    if profile.has(crate::compat::since::VALKEY_COMMAND_TABLE) {
        if let Some(m) = valkey_data().commands.get(name) {
            return Some(m);
        }
    }
    get(name)
}

/// What `profile`'s server prints for `name` in COMMAND DOCS.
///
/// Under Valkey 8.1 it is valkey-server 8.1's own capture throughout: its entries already
/// carry Valkey's later arguments, in Valkey's words (CLIENT KILL's MAXAGE "since 8.0.0").
/// Under Redis 7.0 it is 7.0.15's capture. From Redis 7.2 on (and under Valkey 7.2, which is
/// Redis 7.2.4 renamed and kept its command table) it is Redis 7.2's table
/// (server/data/commands-docs-7.2.json), as the latest release the profile has changed it
/// (`name@74`, `name@80`... in that file); except that a command whose entry a later release
/// rewrote in a way written by hand (`since::LATER_DOCS`: BITOP 8.2, SET 8.4, CLIENT LIST
/// 8.0...) shows that entry when it is the more recent. A command neither has falls back
/// to `shown_in` (None for one newer than 7.0, such as HEXPIRE, whose entry is then its own
/// `meta`, from `later`). Valkey 7.2's release notes list renamed binaries and INFO fields,
/// no change to the command table; no valkey-server 7.2 here confirms its docs.
pub fn docs_in(profile: crate::compat::Profile, name: &str) -> Option<&'static Meta> {
    if profile.has(crate::compat::since::VALKEY_COMMAND_TABLE) {
        return shown_in(profile, name);
    }
    let family_level = |since: crate::compat::Since| match profile.family() {
        crate::compat::Family::Redis => since.redis,
        crate::compat::Family::Valkey => since.valkey,
    };
    let table = docs_72_in(profile, name);
    if let Some(since) = crate::compat::since::later_docs(profile, name) {
        let level = family_level(since);
        if let Some((table_level, m)) = table {
            if table_level > level {
                return Some(m);
            }
        }
        // The hand-written entries (BITOP 8.2, SET 8.4, CLIENT LIST's 8.0 one as
        // `client|list@80`...) first; HSCAN's 7.4 one is valkey-server 8.1's.
        if let Some(m) = later_data().commands.get(&format!("{name}@{level}")) {
            return Some(m);
        }
        if let Some(m) = later_data().commands.get(name) {
            return Some(m);
        }
        if let Some(m) = valkey_data().commands.get(name) {
            return Some(m);
        }
    }
    if let Some((_, m)) = table {
        return Some(m);
    }
    shown_in(profile, name)
}

fn docs_72_data() -> &'static Data {
    static DATA_CELL: OnceLock<Data> = OnceLock::new();
    DATA_CELL.get_or_init(|| load(DATA_DOCS_72, "server/data/commands-docs-7.2.json"))
}

/// The releases after 7.2 whose changes the 7.2 table's file carries as `name@<level>`.
const DOCS_LATER_LEVELS: [u16; 4] = [84, 82, 80, 74];

/// `name`'s entry in Redis 7.2's table as the latest release `profile` has left it, with
/// that release's level (72 for 7.2's own entry); None before 7.2 or for a command the
/// table has not.
fn docs_72_in(profile: crate::compat::Profile, name: &str) -> Option<(u16, &'static Meta)> {
    if !profile.has(crate::compat::since::DOCS_72) {
        return None;
    }
    let data = docs_72_data();
    if profile.family() == crate::compat::Family::Redis {
        for level in DOCS_LATER_LEVELS {
            if profile.level() >= level {
                if let Some(m) = data.commands.get(&format!("{name}@{level}")) {
                    return Some((level, m));
                }
            }
        }
    }
    data.commands.get(name).map(|m| (72, m))
}

/// The description whose key specs `profile`'s server prints for `name` (COMMAND INFO,
/// GETKEYSANDFLAGS), given the one it shows otherwise: valkey-server 8.1's captured specs for
/// a command whose specs changed in a release the profile has (`info_later::KEY_SPECS`, where
/// Valkey kept Redis 7.2's), else `shown`.
pub fn key_specs_in(
    profile: crate::compat::Profile,
    name: &str,
    shown: &'static Meta,
) -> &'static Meta {
    if crate::compat::info_later::later_key_specs(profile, name) {
        if let Some(m) = valkey_data().commands.get(name) {
            return m;
        }
    }
    shown
}

/// The Redis version the data was captured from.
#[cfg(test)]
pub fn version() -> &'static str {
    &data().version
}

/// A captured value as a reply: objects as maps, lists as arrays or (under a key the file
/// names in `sets`) sets, strings as bulk or (under a key named in `statuses`) simple strings.
pub fn to_reply(v: &Value, key: &str) -> Reply {
    let d = data();
    match v {
        Value::Object(m) => Reply::Map(
            m.iter()
                .map(|(k, v)| (Reply::bulk(k), to_reply(v, k)))
                .collect(),
        ),
        Value::Array(items) => {
            let inner = format!("{key}[]");
            let items = items
                .iter()
                .map(|x| match x {
                    Value::String(_) => to_reply(x, key),
                    _ => to_reply(x, &inner),
                })
                .collect();
            if d.sets.contains(key) {
                Reply::Set(items)
            } else {
                Reply::Array(items)
            }
        }
        Value::String(s) if d.statuses.contains(key) => Reply::Status(s.clone()),
        Value::String(s) => Reply::bulk(s),
        Value::Number(n) => Reply::Int(n.as_i64().unwrap_or(0)),
        Value::Bool(b) => Reply::Int(*b as i64),
        Value::Null => Reply::Nil,
    }
}
