//! COMMAND and its subcommands, answered from the one command table.
//!
//! A command Redis 7.0.15 has is described with Redis's own captured metadata (`table::meta`):
//! its flags, ACL categories, tips, key specs and docs exactly as Redis prints them, its
//! subcommands limited to the ones redlab implements. redlab's own commands (REDLAB.*, and the
//! few newer than 7.0) describe themselves from their table entries. Keys are found by the
//! same key-spec walk the dispatcher uses (`table::keyspec`).

use bytes::Bytes;

use super::args;
use crate::cmd::table::meta::{self, key_flags};
use crate::cmd::table::{self, flags, flags::*, keyspec, CmdResult, Command};
use crate::compat::{Family, Profile, Since};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// COMMAND with no subcommand: every command's info.
pub(super) fn command(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let p = e.profile();
    Ok(Reply::Array(
        commands(e).map(|c| info_of(p, c, None)).collect(),
    ))
}

/// The commands a client can call: the profile's, less those renamed to ""
/// (`rename-command`).
fn commands(e: &Engine) -> impl Iterator<Item = &'static Command> + '_ {
    table::all_in(e.profile()).filter(|c| e.config.renames.reachable(c.name))
}

fn count(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(Reply::Int(commands(e).count() as i64))
}

fn info(e: &mut Engine, call: &mut Call) -> CmdResult {
    let p = e.profile();
    if call.argc() == 2 {
        return Ok(Reply::Array(
            commands(e).map(|c| info_of(p, c, None)).collect(),
        ));
    }
    Ok(Reply::Array(
        call.args[2..]
            .iter()
            .map(|name| match find(e, name) {
                Some((c, parent)) => info_of(p, c, parent),
                None => Reply::Nil,
            })
            .collect(),
    ))
}

fn docs(e: &mut Engine, call: &mut Call) -> CmdResult {
    let profile = e.profile();
    let entries: Vec<(Reply, Reply)> = if call.argc() == 2 {
        commands(e)
            .map(|c| (Reply::bulk(c.name), docs_of(profile, c, None)))
            .collect()
    } else {
        call.args[2..]
            .iter()
            .filter_map(|name| {
                find(e, name).map(|(c, p)| (Reply::bulk(c.full_name(p)), docs_of(profile, c, p)))
            })
            .collect()
    };
    Ok(Reply::Map(entries))
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS: the keys of a full command line, in Redis's order of
/// checks (a known command, one that has keys, its arity, then keys found in this line).
fn getkeys_common(e: &Engine, call: &Call) -> Result<Vec<keyspec::KeyRef>, Reply> {
    let p = e.profile();
    let line = &call.args[2..];
    let Some(cmd) = e
        .config
        .renames
        .table_name(&line[0])
        .and_then(|name| table::lookup_in(p, &name))
    else {
        return Err(Reply::err(errors::GETKEYS_INVALID_COMMAND));
    };
    let cmd = match (cmd.subcommands.is_empty(), line.get(1)) {
        (false, Some(sub)) => match table::lookup_sub_in(p, cmd, sub) {
            Some(s) => s,
            None => return Err(Reply::err(errors::GETKEYS_INVALID_COMMAND)),
        },
        _ => cmd,
    };
    if !keyspec::has_keys(cmd) {
        return Err(Reply::err(errors::GETKEYS_NO_KEYS));
    }
    if !cmd.arity_ok_in(p, line.len()) {
        return Err(Reply::err(errors::GETKEYS_BAD_ARITY));
    }
    // The keys are the same in every version; their flags are the profile's server's.
    let shown = cmd
        .meta
        .and_then(|m| meta::shown_in(p, &m.name))
        .or(cmd.meta)
        .map(|m| meta::key_specs_in(p, &m.name, m));
    let keys = keyspec::find_as(cmd, shown, line);
    if keys.is_empty() && !cmd.has(NO_MANDATORY_KEYS) {
        return Err(Reply::err(errors::GETKEYS_BAD_ARGS));
    }
    Ok(keys)
}

fn getkeys(e: &mut Engine, call: &mut Call) -> CmdResult {
    let keys = getkeys_common(e, call)?;
    Ok(Reply::Array(
        keys.into_iter()
            .map(|k| Reply::Bulk(call.args[2 + k.pos].clone()))
            .collect(),
    ))
}

fn getkeysandflags(e: &mut Engine, call: &mut Call) -> CmdResult {
    let keys = getkeys_common(e, call)?;
    Ok(Reply::Array(
        keys.into_iter()
            .map(|k| {
                let names = key_flags::NAMES
                    .iter()
                    .filter(|(bit, _)| k.flags & bit != 0)
                    .map(|(_, n)| Reply::status(n))
                    .collect();
                Reply::Array(vec![
                    Reply::Bulk(call.args[2 + k.pos].clone()),
                    Reply::Set(names),
                ])
            })
            .collect(),
    ))
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
fn list(e: &mut Engine, call: &mut Call) -> CmdResult {
    let profile = e.profile();
    enum Filter {
        None,
        Module,
        AclCat(String),
        Pattern(Bytes),
    }
    let filter = match call.argc() {
        2 => Filter::None,
        5 if args::is(call.arg(2), "filterby") => {
            let v = call.args[4].clone();
            if args::is(call.arg(3), "module") {
                Filter::Module
            } else if args::is(call.arg(3), "aclcat") {
                Filter::AclCat(args::lower(&v))
            } else if args::is(call.arg(3), "pattern") {
                Filter::Pattern(v)
            } else {
                return Err(Reply::err(errors::SYNTAX));
            }
        }
        _ => return Err(Reply::err(errors::SYNTAX)),
    };
    let mut names = Vec::new();
    for c in commands(e) {
        let mut each = vec![(c, c.name.to_string())];
        each.extend(subs_in(profile, c).map(|s| (s, s.full_name(Some(c)))));
        for (cmd, name) in each {
            let keep = match &filter {
                Filter::None => true,
                Filter::Module => false,
                Filter::AclCat(cat) => acl_categories(profile, cmd, &name)
                    .iter()
                    .any(|c| c[1..] == *cat),
                Filter::Pattern(p) => crate::glob::matches(p, name.as_bytes(), true),
            };
            if keep {
                names.push(Reply::bulk(name));
            }
        }
    }
    Ok(Reply::Array(names))
}

fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    ))
}

/// A command by the name clients call it (`rename-command`), or a subcommand by
/// `container|sub`; with its parent. Only what the server's profile has.
fn find(e: &Engine, name: &[u8]) -> Option<(&'static Command, Option<&'static Command>)> {
    let profile = e.profile();
    let text = String::from_utf8_lossy(name);
    let top = |n: &str| {
        let t = e.config.renames.table_name(n.as_bytes())?;
        table::lookup_in(profile, &t)
    };
    match text.split_once('|') {
        Some((parent, sub)) => {
            let p = top(parent)?;
            table::lookup_sub_in(profile, p, sub.as_bytes()).map(|s| (s, Some(p)))
        }
        None => top(&text).map(|c| (c, None)),
    }
}

/// The subcommands of `c` that `profile` has.
fn subs_in(profile: Profile, c: &'static Command) -> impl Iterator<Item = &'static Command> {
    c.subcommands.iter().filter(move |s| profile.has(s.since))
}

/// The ACL categories as `p`'s server gives them (with `@`, in Redis's category order):
/// the captured list for Redis's commands, with the categories a later release added
/// (`since::CATEGORIES_ADDED`); for redlab's own, the implicit ones from the flags plus the
/// group's.
fn acl_categories(p: Profile, c: &Command, full: &str) -> Vec<&'static str> {
    let shown = match c.meta {
        Some(m) => Some(meta::shown_in(p, &m.name).unwrap_or(m)),
        None => meta::shown_in(p, full),
    };
    if let Some(m) = shown {
        return with_added_categories(p, &m.name, m.acl_categories().collect());
    }
    let group_cat = match c.group {
        "generic" | "keys" => Some("@keyspace"),
        "string" => Some("@string"),
        "list" => Some("@list"),
        "set" => Some("@set"),
        "sorted_set" | "zset" => Some("@sortedset"),
        "hash" => Some("@hash"),
        "bitmap" => Some("@bitmap"),
        "hyperloglog" => Some("@hyperloglog"),
        "geo" => Some("@geo"),
        "stream" => Some("@stream"),
        "transactions" => Some("@transaction"),
        "scripting" => Some("@scripting"),
        "connection" => Some("@connection"),
        _ => None,
    };
    let order: [(&str, bool); 21] = [
        ("@keyspace", group_cat == Some("@keyspace")),
        ("@read", c.has(READONLY)),
        ("@write", c.has(WRITE)),
        ("@set", group_cat == Some("@set")),
        ("@sortedset", group_cat == Some("@sortedset")),
        ("@list", group_cat == Some("@list")),
        ("@hash", group_cat == Some("@hash")),
        ("@string", group_cat == Some("@string")),
        ("@bitmap", group_cat == Some("@bitmap")),
        ("@hyperloglog", group_cat == Some("@hyperloglog")),
        ("@geo", group_cat == Some("@geo")),
        ("@stream", group_cat == Some("@stream")),
        ("@pubsub", c.has(PUBSUB)),
        ("@admin", c.has(ADMIN)),
        ("@fast", c.has(FAST)),
        ("@slow", !c.has(FAST)),
        ("@blocking", c.has(BLOCKING)),
        ("@dangerous", c.has(ADMIN)),
        ("@connection", group_cat == Some("@connection")),
        ("@transaction", group_cat == Some("@transaction")),
        ("@scripting", group_cat == Some("@scripting")),
    ];
    order
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect()
}

fn info_of(p: Profile, c: &'static Command, parent: Option<&Command>) -> Reply {
    let shown = match c.meta {
        Some(m) => Some(meta::shown_in(p, &m.name).unwrap_or(m)),
        None => meta::shown_in(p, &c.full_name(parent)),
    };
    if let Some(m) = shown {
        // The captured description is 7.0's (or Valkey 8.1's); an arity that changed later
        // is the profile's.
        let arity = match c.later_arity {
            Some(_) => c.arity_in(p),
            None => m.arity,
        };
        return Reply::Array(vec![
            Reply::bulk(&m.name),
            Reply::Int(arity as i64),
            flags_in(p, &m.name, m.flags_reply()),
            Reply::Int(m.first_key as i64),
            Reply::Int(m.last_key as i64),
            Reply::Int(m.step as i64),
            Reply::Set(
                with_added_categories(p, &m.name, m.acl_categories().collect())
                    .into_iter()
                    .map(Reply::status)
                    .collect(),
            ),
            tips_in(p, m),
            meta::key_specs_in(p, &m.name, m).key_specs_reply(),
            subcommands_reply(p, c),
        ]);
    }
    let flag_names: Vec<Reply> = flags::NAMES
        .iter()
        .filter(|(bit, _)| c.flags & bit != 0)
        .map(|(_, n)| Reply::status(n))
        .collect();
    let mut flag_names = flag_names;
    if c.keys_fn.is_some() {
        flag_names.push(Reply::status("movablekeys"));
    }
    let cats = acl_categories(p, c, &c.full_name(parent))
        .into_iter()
        .map(Reply::status)
        .collect();
    let specs = if c.first_key > 0 || c.keys_fn.is_some() {
        vec![key_spec(c)]
    } else {
        Vec::new()
    };
    Reply::Array(vec![
        Reply::bulk(c.full_name(parent)),
        Reply::Int(c.arity_in(p) as i64),
        Reply::Set(flag_names),
        Reply::Int(c.first_key as i64),
        Reply::Int(c.last_key as i64),
        Reply::Int(c.step as i64),
        Reply::Set(cats),
        Reply::Set(Vec::new()),
        Reply::Array(specs),
        subcommands_reply(p, c),
    ])
}

/// `cats` (a captured list, with `@`) with the categories `p`'s server added to `full`
/// later, each at its place in ACL CAT's order (the order Redis prints them in).
fn with_added_categories(p: Profile, full: &str, mut cats: Vec<&'static str>) -> Vec<&'static str> {
    use crate::acl::commands::CATEGORIES;
    let added: Vec<&'static str> = crate::compat::since::categories_added(p, full)
        .filter_map(|c| ALL_AT.iter().find(|k| k[1..] == *c).copied())
        .filter(|c| !cats.contains(c))
        .collect();
    if added.is_empty() {
        return cats;
    }
    cats.extend(added);
    let rank = |c: &str| {
        CATEGORIES
            .iter()
            .position(|k| *k == &c[1..])
            .unwrap_or(usize::MAX)
    };
    cats.sort_by_key(|c| rank(c));
    cats
}

/// Every category with its `@`, in ACL CAT's order (static names for `with_added_categories`).
const ALL_AT: [&str; 21] = [
    "@keyspace",
    "@read",
    "@write",
    "@set",
    "@sortedset",
    "@list",
    "@hash",
    "@string",
    "@bitmap",
    "@hyperloglog",
    "@geo",
    "@stream",
    "@pubsub",
    "@admin",
    "@fast",
    "@slow",
    "@blocking",
    "@dangerous",
    "@connection",
    "@transaction",
    "@scripting",
];

/// A command's tips as `p`'s server prints them: the captured list, or the one a later
/// release gave it (`info_later::TIPS`).
fn tips_in(p: Profile, m: &meta::Meta) -> Reply {
    match crate::compat::info_later::tips_in(p, &m.name) {
        Some(tips) => Reply::Set(tips.iter().map(|t| Reply::bulk(*t)).collect()),
        None => m.tips_reply(),
    }
}

/// A command's flags as `p`'s server prints them: from Redis 7.2 the blocking commands a
/// script may run (`since::SCRIPTABLE_BLOCKING`) no longer say `noscript`, as
/// valkey-server 8.1's COMMAND INFO shows, and CLUSTER SHARDS and SLOTS say `loading`; from
/// 7.4 WAIT and WAITAOF say `blocking` (`since::FLAGS_ADDED`, each at its place in Redis's
/// order) and WAITAOF no longer `noscript`; from Redis 8.0 HEXPIRE and its kin no longer say
/// `denyoom` (`since::FLAGS_DROPPED`).
fn flags_in(p: Profile, name: &str, flags: Reply) -> Reply {
    use crate::compat::since;
    let scriptable =
        p.has(since::BLOCKING_IN_SCRIPTS) && since::SCRIPTABLE_BLOCKING.contains(&name);
    let dropped = |f: &str| (scriptable && f == "noscript") || since::flag_dropped(p, name, f);
    match flags {
        Reply::Set(items) => {
            let mut kept: Vec<Reply> = items
                .into_iter()
                .filter(|f| !matches!(f, Reply::Status(s) if dropped(s)))
                .collect();
            let mut added = false;
            for f in since::flags_added(p, name) {
                if !kept.iter().any(|k| matches!(k, Reply::Status(s) if s == f)) {
                    kept.push(Reply::status(f));
                    added = true;
                }
            }
            if added {
                // In Redis's order (CLUSTER SLOTS: loading, stale); a stable sort keeps the
                // captured order of anything the order does not name.
                kept.sort_by_key(|f| match f {
                    Reply::Status(s) => crate::compat::info_later::flag_rank(s),
                    _ => usize::MAX,
                });
            }
            Reply::Set(kept)
        }
        other => other,
    }
}

/// A container's subcommands as an array of their infos; no subcommands is an empty set, as
/// Redis sends it.
fn subcommands_reply(p: Profile, c: &'static Command) -> Reply {
    if c.subcommands.is_empty() {
        return Reply::Set(Vec::new());
    }
    Reply::Array(subs_in(p, c).map(|s| info_of(p, s, Some(c))).collect())
}

fn key_spec(c: &Command) -> Reply {
    let kv = |k: &str, v: Reply| (Reply::bulk(k), v);
    let names: &[&str] = if c.has(WRITE) {
        &["RW", "update"]
    } else {
        &["RO", "access"]
    };
    let flags = Reply::Set(names.iter().map(|f| Reply::status(f)).collect());
    let find_keys = if c.keys_fn.is_some() {
        Reply::Map(vec![
            kv("type", Reply::bulk("unknown")),
            kv("spec", Reply::Map(Vec::new())),
        ])
    } else {
        let last = if c.last_key < 0 {
            c.last_key
        } else {
            c.last_key - c.first_key
        };
        Reply::Map(vec![
            kv("type", Reply::bulk("range")),
            kv(
                "spec",
                Reply::Map(vec![
                    kv("lastkey", Reply::Int(last as i64)),
                    kv("keystep", Reply::Int(c.step as i64)),
                    kv("limit", Reply::Int(0)),
                ]),
            ),
        ])
    };
    Reply::Map(vec![
        kv("flags", flags),
        kv(
            "begin_search",
            Reply::Map(vec![
                kv("type", Reply::bulk("index")),
                kv(
                    "spec",
                    Reply::Map(vec![kv("index", Reply::Int(c.first_key.max(1) as i64))]),
                ),
            ]),
        ),
        kv("find_keys", find_keys),
    ])
}

fn docs_of(p: Profile, c: &'static Command, parent: Option<&Command>) -> Reply {
    let shown = match c.meta {
        Some(m) => Some(meta::docs_in(p, &m.name).unwrap_or(m)),
        None => meta::docs_in(p, &c.full_name(parent)),
    };
    let mut m = match shown {
        Some(meta) => meta.docs_pairs(),
        None => {
            let mut m = Vec::new();
            // A command newer than 7.0 says when it arrived in this profile's family.
            let since = match p.family() {
                Family::Redis => c.since.redis,
                Family::Valkey => c.since.valkey,
            };
            if since > 0 && since != Since::NEVER {
                let text = format!("{}.{}.0", since / 10, since % 10);
                m.push((Reply::bulk("since"), Reply::bulk(text)));
            }
            m.push((Reply::bulk("group"), Reply::bulk(c.group)));
            m
        }
    };
    if !c.subcommands.is_empty() {
        m.push((
            Reply::bulk("subcommands"),
            Reply::Map(
                subs_in(p, c)
                    .map(|s| (Reply::bulk(s.full_name(Some(c))), docs_of(p, s, Some(c))))
                    .collect(),
            ),
        ));
    }
    Reply::Map(m)
}

pub(super) static SUBCOMMANDS: &[Command] = &[
    Command::new("count", 2, LOADING | STALE, "server", count),
    Command::new("getkeys", -4, LOADING | STALE, "server", getkeys),
    Command::new(
        "getkeysandflags",
        -4,
        LOADING | STALE,
        "server",
        getkeysandflags,
    ),
    Command::new("list", -2, LOADING | STALE, "server", list),
    Command::new("help", 2, LOADING | STALE, "server", help),
    Command::new("info", -2, LOADING | STALE, "server", info),
    Command::new("docs", -2, LOADING | STALE, "server", docs),
];

#[cfg(test)]
mod tests {
    use crate::{Config, Engine, Reply};

    #[test]
    fn getkeys_uses_the_table() {
        let mut e = Engine::new(Config::default());
        assert_eq!(
            e.execute(1, &["COMMAND", "GETKEYS", "SET", "k", "v"]),
            Reply::Array(vec![Reply::bulk("k")])
        );
        assert_eq!(
            e.execute(1, &["COMMAND", "GETKEYS", "ping", "x"]),
            Reply::err("ERR The command has no key arguments")
        );
        assert_eq!(
            e.execute(1, &["COMMAND", "GETKEYS", "get", "a", "b"]),
            Reply::err("ERR Invalid number of arguments specified for command")
        );
        assert_eq!(
            e.execute(1, &["COMMAND", "GETKEYS", "nosuch", "a"]),
            Reply::err("ERR Invalid command specified")
        );
        assert!(
            matches!(e.execute(1, &["COMMAND"]), Reply::Array(v) if v.len() == crate::cmd::table::all_in(Default::default()).count())
        );
    }

    /// `rename-command flushdb badger` and `rename-command keys ""` as redis-server 7.0.15
    /// answers them: the new name runs the command (from scripts and MULTI too), the old one
    /// is unknown, COMMAND knows the command by the new name and shows its own name, ACL
    /// rules keep the original name, and a command renamed to "" is gone from COMMAND.
    #[test]
    fn renamed_commands() {
        let mut config = Config::default();
        let p = config.compat;
        config.renames.rename(p, "flushdb", "badger").unwrap();
        config.renames.rename(p, "keys", "").unwrap();
        config.renames.rename(p, "get", "fetch").unwrap();
        let count = |e: &mut Engine| match e.execute(1, &["COMMAND", "COUNT"]) {
            Reply::Int(n) => n,
            other => panic!("{other:?}"),
        };
        let before = count(&mut Engine::new(Config::default()));
        let mut e = Engine::new(config);
        assert_eq!(count(&mut e), before - 1);
        assert_eq!(e.execute(1, &["SET", "k", "v"]), Reply::ok());
        assert_eq!(
            e.execute(1, &["FLUSHDB"]),
            Reply::err("ERR unknown command 'FLUSHDB', with args beginning with: ")
        );
        assert_eq!(
            e.execute(1, &["keys", "*"]),
            Reply::err("ERR unknown command 'keys', with args beginning with: '*' ")
        );
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(1));
        assert_eq!(e.execute(1, &["FETCH", "k"]), Reply::bulk("v"));
        assert_eq!(
            e.execute(1, &["fetch"]),
            Reply::err("ERR wrong number of arguments for 'get' command")
        );
        assert_eq!(
            e.execute(1, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]),
            Reply::ok()
        );
        assert_eq!(e.execute(1, &["Badger"]), Reply::ok());
        // SLOWLOG shows the name the client typed.
        let Reply::Array(log) = e.execute(1, &["SLOWLOG", "GET", "1"]) else {
            panic!()
        };
        assert!(
            matches!(&log[0], Reply::Array(f) if f[3] == Reply::Array(vec![Reply::bulk("Badger")])),
            "{log:?}"
        );
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(0));

        // Inside MULTI and scripts.
        e.execute(1, &["SET", "k", "v"]);
        assert_eq!(e.execute(1, &["MULTI"]), Reply::ok());
        assert_eq!(e.execute(1, &["badger"]), Reply::status("QUEUED"));
        assert_eq!(e.execute(1, &["EXEC"]), Reply::Array(vec![Reply::ok()]));
        e.execute(1, &["SET", "k", "v"]);
        assert_eq!(
            e.execute(1, &["EVAL", "return redis.call('badger')", "0"]),
            Reply::ok()
        );
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(0));
        assert!(matches!(
            e.execute(1, &["EVAL", "return redis.call('flushdb')", "0"]),
            Reply::Error(m) if m.starts_with("ERR Unknown Redis command called from script")
        ));
        // COMMAND INFO / DOCS / LIST.
        let Reply::Array(info) = e.execute(1, &["COMMAND", "INFO", "badger", "flushdb"]) else {
            panic!()
        };
        assert!(matches!(&info[0], Reply::Array(f) if f[0] == Reply::bulk("flushdb")));
        assert_eq!(info[1], Reply::Nil);
        let Reply::Array(names) = e.execute(1, &["COMMAND", "LIST"]) else {
            panic!()
        };
        assert!(names.contains(&Reply::bulk("flushdb")));
        assert!(!names.contains(&Reply::bulk("badger")) && !names.contains(&Reply::bulk("keys")));
        assert!(matches!(
            e.execute(1, &["COMMAND", "DOCS", "badger"]),
            Reply::Map(m) if m.len() == 1 && m[0].0 == Reply::bulk("flushdb")
        ));
        assert_eq!(
            e.execute(1, &["COMMAND", "GETKEYS", "keys", "*"]),
            Reply::err("ERR Invalid command specified")
        );
        // ACL rules name the command as the table does.
        assert_eq!(
            e.execute(1, &["ACL", "SETUSER", "u", "+flushdb"]),
            Reply::ok()
        );
        assert_eq!(
            e.execute(1, &["ACL", "SETUSER", "u", "+badger"]),
            Reply::err("ERR Error in ACL SETUSER modifier '+badger': Unknown command or category name in ACL")
        );
    }
}
