//! Server configuration: the options of the builder, the command line and CONFIG SET.
//!
//! The parameters redlab acts on are typed fields; every other Redis parameter lives in
//! `extra` under its canonical name, validated by the table in `params`, so CONFIG GET
//! answers what was set and CONFIG GET * lists what Redis lists.

pub mod client_limits;
pub(crate) mod derived;
mod dir;
pub mod fd_limit;
pub mod params;
pub mod protected;
pub mod rename;

use std::collections::BTreeMap;

pub use client_limits::{ClientClass, OutputLimit, OutputLimits};
pub use params::{Param, PARAMS};

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
    /// `lfu-log-factor`: how slowly the LFU counter grows (`db::access`).
    pub lfu_log_factor: u32,
    /// `lfu-decay-time`: minutes per step the LFU counter decays; 0 never decays.
    pub lfu_decay_time: u32,
    /// `busy-reply-threshold` (alias `lua-time-limit`) in milliseconds.
    pub busy_reply_threshold_ms: u64,
    /// `notify-keyspace-events`, as the flags string Redis accepts.
    pub notify_keyspace_events: String,
    /// `proto-max-bulk-len` in bytes.
    pub proto_max_bulk_len: u64,
    /// The version INFO, HELLO and scripts report (`redis_version`); `set_compat` sets it to
    /// the profile's.
    pub redis_version: String,
    /// The server and version redlab answers as (`crate::compat`): INFO's and HELLO's version
    /// fields, which commands and options exist.
    pub compat: crate::compat::Profile,
    /// Memory limit for the Lua heap in bytes; a script that needs more fails instead of the
    /// process running out of memory.
    pub lua_memory_limit: usize,
    /// Beyond Redis: refuse script access to keys not declared in KEYS, and cross-slot KEYS.
    pub strict_keys: bool,
    /// Protected mode, as Redis: refuse non-loopback clients when no password is set.
    pub protected_mode: bool,
    /// DEBUG runs whatever `enable-debug-command` says: true for in-process servers, whose
    /// tests use DEBUG as Redis's test suite does; the redlab-server binary sets it false
    /// so the option rules as in redis-server (see DIFFERENCES.md, `protected`).
    pub debug_command_open: bool,
    /// The RDB file lives on disk at `dir`/`dbfilename` (`crate::persist`): loaded at start,
    /// written by SAVE, BGSAVE, DEBUG RELOAD and a shutdown with save points. The
    /// redlab-server binary sets it; in-process servers keep the file in memory only, so a
    /// test never writes dump.rdb into its working directory (DIFFERENCES.md).
    pub rdb_on_disk: bool,
    /// The server is its own process (the redlab-server binary): it sets the process's Linux
    /// OOM score from `oom-score-adj` as redis-server does (`crate::oom_score`). An
    /// in-process server leaves its test process's score alone.
    pub manages_process: bool,
    /// `client-output-buffer-limit`, per client class.
    pub client_output_buffer_limit: OutputLimits,
    /// `client-query-buffer-limit`: a client whose unprocessed input grows past this is
    /// disconnected.
    pub client_query_buffer_limit: u64,
    /// `maxmemory-clients` as CONFIG GET shows it (bytes, or `N%` of maxmemory; `0` is
    /// off), read before every command (`Engine::evict_clients`).
    pub maxmemory_clients: String,
    /// Moved by every `set` to a number no configuration in the process had before
    /// (`Config::changed`): the network shell keeps a copy of what it needs while a script
    /// holds the engine, and caches key values, and both refresh when this changes. Unique
    /// rather than counted up, because a snapshot's restore puts an older configuration
    /// back: counting on from there would give a later change a number an earlier one had.
    #[doc(hidden)]
    pub generation: u64,
    /// `redlab-seed` (redlab's own): the seed of the engine's random generator (SPOP,
    /// SRANDMEMBER, math.random...). None picks a fresh one per engine; the engine then
    /// records the seed it picked here, so CONFIG GET redlab-seed always tells it.
    pub seed: Option<u64>,
    /// `redlab-busy-poll-us` (redlab's own): how long a server thread that has just served
    /// polls its sockets before it sleeps (`net::busy_poll` says why); 0 never.
    pub busy_poll_us: u64,
    /// Every other parameter set by CONFIG SET or the command line, kept verbatim so
    /// CONFIG GET answers with what was set.
    pub extra: BTreeMap<String, String>,
    /// The `user` lines of the config file and command line, each the user's name then its
    /// rules: the server starts with these users (`acl::startup`), as redis-server does.
    pub users: Vec<Vec<String>>,
    /// The config file the server was started with, as an absolute path: CONFIG REWRITE
    /// writes it and INFO shows it.
    pub config_file: Option<String>,
    /// `rename-command` lines of the config file and command line (`rename`).
    pub renames: rename::Renames,
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
            lfu_log_factor: 10,
            lfu_decay_time: 1,
            busy_reply_threshold_ms: 5000,
            notify_keyspace_events: String::new(),
            proto_max_bulk_len: 512 * 1024 * 1024,
            redis_version: "7.0.15".into(),
            compat: crate::compat::Profile::Redis70,
            lua_memory_limit: 1 << 30,
            strict_keys: false,
            protected_mode: true,
            debug_command_open: true,
            rdb_on_disk: false,
            manages_process: false,
            client_output_buffer_limit: OutputLimits::default(),
            client_query_buffer_limit: 1 << 30,
            maxmemory_clients: "0".into(),
            generation: 0,
            seed: None,
            busy_poll_us: 100,
            extra: BTreeMap::new(),
            users: Vec::new(),
            config_file: None,
            renames: rename::Renames::default(),
        }
    }
}

impl Config {
    /// The LFU parameters when an LFU policy is selected (Redis's MAXMEMORY_FLAG_LFU).
    pub fn lfu(&self) -> Option<crate::db::access::Lfu> {
        self.maxmemory_policy
            .ends_with("-lfu")
            .then_some(crate::db::access::Lfu {
                log_factor: self.lfu_log_factor,
                decay_time: self.lfu_decay_time,
            })
    }

    /// Marks the configuration changed: a generation never used before.
    pub(crate) fn changed(&mut self) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.generation = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Answers as `profile`: its commands, and its version in INFO, HELLO and scripts.
    pub fn set_compat(&mut self, profile: crate::compat::Profile) {
        self.compat = profile;
        self.redis_version = profile.redis_version().to_string();
        self.changed();
    }

    /// HELLO's `server` and `version`: Valkey names itself and its own version there.
    pub fn hello_server(&self) -> (&'static str, &str) {
        match self.compat.valkey_version() {
            Some(v) => (self.compat.server_name(), v),
            None => ("redis", &self.redis_version),
        }
    }

    /// A parameter's value as CONFIG GET prints it.
    pub fn get(&self, p: &Param) -> String {
        match p.name {
            "port" => self.port.to_string(),
            "bind" => self.bind.clone(),
            "requirepass" => self.requirepass.clone().unwrap_or_default(),
            "databases" => self.databases.to_string(),
            "maxmemory" => self.maxmemory.to_string(),
            "maxmemory-policy" => self.maxmemory_policy.clone(),
            "lfu-log-factor" => self.lfu_log_factor.to_string(),
            "lfu-decay-time" => self.lfu_decay_time.to_string(),
            "busy-reply-threshold" => self.busy_reply_threshold_ms.to_string(),
            "notify-keyspace-events" => crate::notify::flags_to_string(
                crate::notify::parse_flags(&self.notify_keyspace_events).unwrap_or(0),
            ),
            "proto-max-bulk-len" => self.proto_max_bulk_len.to_string(),
            "protected-mode" => if self.protected_mode { "yes" } else { "no" }.into(),
            "client-output-buffer-limit" => self.client_output_buffer_limit.format(),
            "client-query-buffer-limit" => self.client_query_buffer_limit.to_string(),
            "maxmemory-clients" => self.maxmemory_clients.clone(),
            "redlab-seed" => self.seed.unwrap_or(0).to_string(),
            "redlab-busy-poll-us" => self.busy_poll_us.to_string(),
            "dir" => match self.extra.get("dir") {
                Some(d) => d.clone(),
                // Redis reports its working directory.
                None => std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
            },
            name => self
                .extra
                .get(name)
                .cloned()
                .unwrap_or_else(|| p.default.to_string()),
        }
    }

    /// Validates and stores a parameter (no mutability check: the command line sets
    /// immutable ones too). The error is Redis's text for the value.
    pub fn set(&mut self, p: &Param, value: &str) -> Result<(), String> {
        let current = self.get(p);
        let mut v = p.normalize(value, &current)?;
        if p.name == "hz" {
            // Redis clamps hz to [1, 500].
            v = v.parse::<i64>().map_or(10, |n| n.clamp(1, 500)).to_string();
        }
        if p.name == "dir" {
            v = dir::resolve(self.extra.get("dir").map(String::as_str), &v)?;
        }
        let num = || v.parse::<u64>().unwrap_or(0);
        self.changed();
        match p.name {
            "port" => self.port = v.parse().unwrap_or(0),
            "bind" => self.bind = v,
            "requirepass" => self.requirepass = if v.is_empty() { None } else { Some(v) },
            "databases" => self.databases = num() as usize,
            "maxmemory" => self.maxmemory = num(),
            "maxmemory-policy" => self.maxmemory_policy = v,
            "lfu-log-factor" => self.lfu_log_factor = v.parse().unwrap_or(10),
            "lfu-decay-time" => self.lfu_decay_time = v.parse().unwrap_or(1),
            "busy-reply-threshold" => self.busy_reply_threshold_ms = num(),
            "notify-keyspace-events" => self.notify_keyspace_events = v,
            "proto-max-bulk-len" => self.proto_max_bulk_len = num(),
            "protected-mode" => self.protected_mode = v == "yes",
            "client-output-buffer-limit" => {
                self.client_output_buffer_limit = OutputLimits::parse(&v)
            }
            "client-query-buffer-limit" => self.client_query_buffer_limit = num(),
            "maxmemory-clients" => self.maxmemory_clients = v,
            "redlab-seed" => self.seed = Some(num()),
            "redlab-busy-poll-us" => self.busy_poll_us = num(),
            name => {
                self.extra.insert(name.to_string(), v);
            }
        }
        Ok(())
    }

    /// Sets a parameter by name or alias (the builder's and command line's way in).
    pub fn set_by_name(&mut self, name: &str, value: &str) -> Result<(), String> {
        let p = params::lookup(name)
            .ok_or_else(|| "Bad directive or wrong number of arguments".to_string())?;
        self.set(p, value)
    }

    /// A parameter's value by name or alias.
    pub fn get_by_name(&self, name: &str) -> Option<String> {
        params::lookup(name).map(|p| self.get(p))
    }

    /// The value set for a parameter that has no field of its own (kept in `extra` under its
    /// name, not an alias), None while it was never set and its default applies. What the
    /// slow log and the latency monitors read at an engine's first command: no name lookup
    /// and no copy, where `get_by_name` cost a few thousand instructions per engine (issue 17).
    pub(crate) fn stored(&self, name: &'static str) -> Option<&str> {
        self.extra.get(name).map(String::as_str)
    }
}

/// The build id `redlab-server -v` and INFO's redis_build_id print (16 hex digits, as Redis).
pub const BUILD_ID: &str = "7265646c61620000";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units_and_aliases() {
        let mut c = Config::default();
        c.set_by_name("maxmemory", "100mb").unwrap();
        assert_eq!(c.maxmemory, 100 * 1024 * 1024);
        c.set_by_name("lua-time-limit", "300").unwrap();
        assert_eq!(c.get_by_name("busy-reply-threshold").unwrap(), "300");
        assert_eq!(c.busy_reply_threshold_ms, 300);
        assert_eq!(
            c.set_by_name("maxmemory", "-1").unwrap_err(),
            "argument must be a memory value"
        );
        c.set_by_name("hz", "0").unwrap();
        assert_eq!(c.get_by_name("hz").unwrap(), "1");
        c.set_by_name("notify-keyspace-events", "KEA").unwrap();
        assert_eq!(c.get_by_name("notify-keyspace-events").unwrap(), "AKE");
    }

    #[test]
    fn stored_is_what_was_set_under_the_name_or_an_alias() {
        let mut c = Config::default();
        assert_eq!(c.stored("slowlog-max-len"), None);
        c.set_by_name("SLOWLOG-MAX-LEN", "7").unwrap();
        assert_eq!(c.stored("slowlog-max-len"), Some("7"));
        c.set_by_name("latency-tracking", "no").unwrap();
        assert_eq!(c.stored("latency-tracking"), Some("no"));
    }

    #[test]
    fn every_parameter_default_is_valid() {
        for p in PARAMS {
            p.normalize(p.default, p.default)
                .unwrap_or_else(|e| panic!("{}: {}", p.name, e));
        }
        let names: usize = PARAMS
            .iter()
            .filter(|p| !p.is_unlisted() && p.in_profile(crate::compat::Profile::Redis70))
            .map(|p| 1 + p.alias.is_some() as usize)
            .sum();
        assert_eq!(names, 192, "Redis 7.0.15 lists 192 names in CONFIG GET *");
    }
}
