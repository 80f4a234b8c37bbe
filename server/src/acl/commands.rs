//! The commands as ACL rules name them: full names (`get`, `client|id`) and the categories
//! Redis 7.0.15 gives each (from the table's metadata; a later command's from its release's
//! reference, server/data/commands-later.json), built once from the command table.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::cmd::table;
use crate::compat::{since, Profile};

/// Redis's categories, in the order ACL CAT lists them.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

struct Registry {
    /// Every full name, in table order (a container before its subcommands).
    names: Vec<&'static str>,
    /// The commands without a parent, in table order.
    top: Vec<&'static str>,
    /// Name -> the names a rule on it covers (a container covers its subcommands).
    covers: HashMap<&'static str, Vec<&'static str>>,
    /// Category (without `@`) -> its commands.
    members: HashMap<&'static str, Vec<&'static str>>,
    containers: Vec<&'static str>,
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut r = Registry {
            names: Vec::new(),
            top: Vec::new(),
            covers: HashMap::new(),
            members: HashMap::new(),
            containers: Vec::new(),
        };
        let add = |r: &mut Registry, cmd: &'static table::Command, full: &'static str| {
            r.names.push(full);
            // A command only Valkey has (SCRIPT SHOW) takes valkey-server 8.1's categories;
            // ACL CAT shows each command only under the profiles that have it.
            let meta = cmd
                .meta
                .or_else(|| table::meta::shown_in(crate::compat::Profile::Valkey81, full));
            if let Some(meta) = meta {
                for cat in meta.acl_categories() {
                    let cat = cat.trim_start_matches('@');
                    if let Some(c) = CATEGORIES.iter().find(|c| **c == cat) {
                        r.members.entry(c).or_default().push(full);
                    }
                }
            }
        };
        for cmd in table::all() {
            add(&mut r, cmd, cmd.name);
            r.top.push(cmd.name);
            let mut covered = vec![cmd.name];
            if !cmd.subcommands.is_empty() {
                r.containers.push(cmd.name);
            }
            for sub in cmd.subcommands {
                let full: &'static str = Box::leak(sub.full_name(Some(cmd)).into_boxed_str());
                add(&mut r, sub, full);
                covered.push(full);
                r.covers.insert(full, vec![full]);
            }
            r.covers.insert(cmd.name, covered);
        }
        r
    })
}

/// Every command and subcommand.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    registry().names.iter().copied()
}

/// The commands without a parent (containers and plain commands), in table order.
pub fn top_level() -> impl Iterator<Item = &'static str> {
    registry().top.iter().copied()
}

/// The names a rule on `name` (lower case) covers, None for an unknown command: `name` and,
/// for a container, its subcommands (a permission given to or taken from a container reaches
/// every subcommand, as Redis's ACLChangeSelectorPerm does).
pub fn covered(name: &str) -> Option<&'static [&'static str]> {
    registry().covers.get(name).map(Vec::as_slice)
}

pub fn has_subcommands(name: &str) -> bool {
    registry().containers.contains(&name)
}

/// The commands of a category (without `@`), containers and subcommands included.
pub fn in_category(cat: &str) -> &'static [&'static str] {
    registry()
        .members
        .get(cat)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The commands of a category (without `@`) as `profile`'s server has it: `in_category`'s,
/// plus the commands a later release put in it (`since::CATEGORIES_ADDED`: WAIT in
/// @blocking from Redis 7.2), in table order.
pub fn in_category_in(profile: Profile, cat: &str) -> Cow<'static, [&'static str]> {
    let base = in_category(cat);
    let joins = |name: &str| since::categories_added(profile, name).any(|c| c == cat);
    if !since::CATEGORIES_ADDED
        .iter()
        .any(|&(name, c, _)| c == cat && joins(name))
    {
        return Cow::Borrowed(base);
    }
    Cow::Owned(
        all_names()
            .filter(|n| base.contains(n) || joins(n))
            .collect(),
    )
}
