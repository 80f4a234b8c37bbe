//! Server configuration: the options of the builder, the command line and CONFIG SET.

use std::collections::BTreeMap;

/// Options a server starts with. Every field can also be changed at run time with
/// CONFIG SET under its Redis name.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to bind (`bind`); the loopback address unless told otherwise.
    pub bind: String,
    /// TCP port (`port`); 0 picks a free one.
    pub port: u16,
    /// `requirepass`: when set, clients must AUTH first.
    pub requirepass: Option<String>,
    /// `databases`: number of logical databases.
    pub databases: usize,
    /// `maxmemory` in bytes; 0 means no limit.
    pub maxmemory: u64,
    /// `maxmemory-policy`.
    pub maxmemory_policy: String,
    /// `busy-reply-threshold` (alias `lua-time-limit`) in milliseconds.
    pub busy_reply_threshold_ms: u64,
    /// `notify-keyspace-events`, as the flags string Redis accepts.
    pub notify_keyspace_events: String,
    /// `proto-max-bulk-len` in bytes.
    pub proto_max_bulk_len: u64,
    /// The version INFO, HELLO and scripts report (`redis_version`).
    pub redis_version: String,
    /// Memory limit for the Lua heap in bytes; a script that needs more fails instead of the
    /// process running out of memory.
    pub lua_memory_limit: usize,
    /// Beyond Redis: refuse script access to keys not declared in KEYS, and cross-slot KEYS.
    pub strict_keys: bool,
    /// Protected mode, as Redis: refuse non-loopback clients when no password is set.
    pub protected_mode: bool,
    /// Every other parameter set by CONFIG SET or the command line, kept verbatim so
    /// CONFIG GET answers with what was set.
    pub extra: BTreeMap<String, String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: "127.0.0.1".into(),
            port: 0,
            requirepass: None,
            databases: 16,
            maxmemory: 0,
            maxmemory_policy: "noeviction".into(),
            busy_reply_threshold_ms: 5000,
            notify_keyspace_events: String::new(),
            proto_max_bulk_len: 512 * 1024 * 1024,
            redis_version: "7.0.15".into(),
            lua_memory_limit: 1 << 30,
            strict_keys: false,
            protected_mode: true,
            extra: BTreeMap::new(),
        }
    }
}
