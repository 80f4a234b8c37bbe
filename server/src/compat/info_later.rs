//! COMMAND INFO of Redis 7.0's commands as later releases print it: the command tips and key
//! specs that changed after 7.0.15, per release.
//!
//! No server newer than 7.0 but valkey-server 8.1 runs here, so each entry rests on
//! published facts that agree: valkey-server 8.1 prints it, Redis's own command table of 8.4
//! (the generated `commands_core.json` of the redis/docs repository) has it too, and Redis
//! 7.2's table (server/data/commands-docs-7.2.json's source, which keeps COMMAND INFO's fields
//! too) says whether 7.2 had it. Valkey 8 forked from Redis's development branch of March
//! 2024, after 7.2.4: what 7.2's table lacks came in 7.4 (and Valkey 8.0). What valkey-server 8.1 prints and Redis 8.4 does not (MULTI's and WATCH's
//! `no_multi`, `loading` on CLUSTER INFO/MYID/NODES and MEMORY MALLOC-STATS/PURGE, EXEC's
//! `skip_commandlog`) is Valkey's own: the valkey-8.1 profile shows it from its capture, and no
//! entry here gives it to another profile. The flags and arities that changed are in
//! `since` (`FLAGS_ADDED`, `FLAGS_DROPPED`, `LATER_ARITY`), where dispatch reads them too.

use super::{Profile, Since};

/// Redis 7.2, and Valkey 7.2 (Redis 7.2.4 renamed) with it.
const R72: Since = Since::both(72, 72);

/// "Run on every node, answer OK when all did": Redis 7.2 put it on the commands that change a
/// node's own state (users, the config file, statistics, the connection name), so a cluster
/// client sends them everywhere.
const ALL_NODES_ALL_SUCCEEDED: &[&str] =
    &["request_policy:all_nodes", "response_policy:all_succeeded"];

/// Commands whose tips a later release changed: the whole list as that release prints it, in
/// its order (COMMAND INFO's eighth field).
pub const TIPS: &[(&str, &[&str], Since)] = &[
    ("acl|deluser", ALL_NODES_ALL_SUCCEEDED, R72),
    ("acl|save", ALL_NODES_ALL_SUCCEEDED, R72),
    ("acl|setuser", ALL_NODES_ALL_SUCCEEDED, R72),
    ("client|setname", ALL_NODES_ALL_SUCCEEDED, R72),
    ("config|resetstat", ALL_NODES_ALL_SUCCEEDED, R72),
    ("config|rewrite", ALL_NODES_ALL_SUCCEEDED, R72),
    // The number of events reset on each node, summed (7.0: all_succeeded).
    (
        "latency|reset",
        &["request_policy:all_nodes", "response_policy:agg_sum"],
        R72,
    ),
    // A cross-slot MSETNX is refused in a cluster, so it is no longer split across shards.
    ("msetnx", &[], R72),
    (
        "randomkey",
        &[
            "request_policy:all_shards",
            "response_policy:special",
            "nondeterministic_output",
        ],
        R72,
    ),
    (
        "scan",
        &[
            "nondeterministic_output",
            "request_policy:special",
            "response_policy:special",
        ],
        R72,
    ),
];

/// The tips `profile`'s server prints for the command `full`, when a release it has changed
/// them (the latest such release's list); None keeps the captured 7.0 list.
pub fn tips_in(profile: Profile, full: &str) -> Option<&'static [&'static str]> {
    TIPS.iter()
        .filter(|&&(n, _, since)| n == full && profile.has(since))
        .max_by_key(|&&(_, _, since)| since.redis)
        .map(|&(_, tips, _)| tips)
}

/// Commands whose key specs a later release changed, with that release. Their later specs
/// are valkey-server 8.1's captured ones, which Redis 8.4's table repeats: SINTERSTORE's
/// destination is `OW update` from 7.4 (7.0 and 7.2: `RW update`, as Redis 7.2's table has
/// it), as SUNIONSTORE's and SDIFFSTORE's already were, since the command replaces whatever
/// the key held (redis/redis#12917, January 2024; Valkey has it from 8.0, its fork of Redis's
/// development branch).
pub const KEY_SPECS: &[(&str, Since)] = &[("sinterstore", Since::both(74, 80))];

/// Whether `profile`'s server describes the keys of `full` with the later specs (`KEY_SPECS`).
pub fn later_key_specs(profile: Profile, full: &str) -> bool {
    KEY_SPECS
        .iter()
        .any(|&(n, since)| n == full && profile.has(since))
}

/// Command flags in the order Redis prints them (`addReplyCommandFlags`): a flag a later
/// release added (`since::FLAGS_ADDED`) takes its place among the captured ones by it.
pub const FLAG_ORDER: &[&str] = &[
    "write",
    "readonly",
    "denyoom",
    "module",
    "admin",
    "pubsub",
    "noscript",
    "blocking",
    "loading",
    "stale",
    "skip_monitor",
    "skip_slowlog",
    "asking",
    "fast",
    "no_auth",
    "no_mandatory_keys",
    "no_async_loading",
    "no_multi",
    "movablekeys",
    "allow_busy",
];

/// Where `flag` sorts among the printed flags (unknown names last, in their given order).
pub fn flag_rank(flag: &str) -> usize {
    FLAG_ORDER
        .iter()
        .position(|f| *f == flag)
        .unwrap_or(FLAG_ORDER.len())
}
