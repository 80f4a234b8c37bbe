//! Every configuration parameter Redis 7.0 knows: name, alias, kind, default, mutability.
//!
//! One table so CONFIG GET *, CONFIG SET validation and the command line agree. The kinds,
//! ranges and error texts were read off a real redis-server 7.0.15; only a handful of
//! parameters change redlab's behaviour (see `Config`), the others are kept so clients and
//! config files that set them work.

use crate::compat::{Profile, Since};
use crate::notify;

/// CONFIG SET refuses it ("can't set immutable config"); only the command line sets it.
pub const IMMUTABLE: u8 = 1;
/// CONFIG SET refuses it unless enable-protected-configs ("can't set protected config").
pub const PROTECTED: u8 = 2;
/// redlab's own: answered by CONFIG GET/SET by its exact name, but left out of glob
/// matches (CONFIG GET *) so the listing stays Redis's.
pub const REDLAB: u8 = 4;
/// Redis's hidden debugging parameters (key-load-delay ...): answered by their exact name
/// only, as Redis answers them. key-load-delay and loading-process-events-interval-bytes
/// pace the binary's load at start (`persist::loading`); the others are kept so scripts
/// and suites that set them run unchanged.
pub const HIDDEN: u8 = 8;
/// CONFIG SET refuses it with -LOADING while the RDB file loads (Redis's
/// DENY_LOADING_CONFIG: dir, appendonly, repl-diskless-load).
pub const DENY_LOADING: u8 = 16;

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Bool,
    /// An integer within [min, max].
    Int(i64, i64),
    /// A byte count with an optional unit (k, kb, m, mb, g, gb) within [min, max].
    Mem(i64, i64),
    /// A byte count or a percentage (maxmemory-clients).
    MemOrPercent,
    Enum(&'static [&'static str]),
    Str,
    Octal,
    Save,
    /// shutdown-on-sigint/sigterm: any of save, nosave, now, force together, or default.
    ShutdownFlags,
    Notify,
    Bind,
    ClientOutputBufferLimit,
    OomScoreAdjValues,
    Percentiles,
    ReplicaOf,
}

#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub kind: Kind,
    pub default: &'static str,
    pub flags: u8,
    /// For a parameter newer than Redis 7.0: the versions that have it. Other profiles
    /// answer it as unknown, as the server they stand for does.
    pub since: Option<Since>,
}

impl Param {
    /// Whether a server answering as `profile` knows this parameter.
    pub fn in_profile(&self, profile: Profile) -> bool {
        self.since.is_none_or(|s| profile.has(s))
    }

    /// The same parameter, known only from `since` on.
    const fn since(self, since: Since) -> Param {
        Param {
            since: Some(since),
            ..self
        }
    }

    pub fn is_immutable(&self) -> bool {
        self.flags & IMMUTABLE != 0
    }

    pub fn is_redlab(&self) -> bool {
        self.flags & REDLAB != 0
    }

    /// Left out of glob matches (CONFIG GET *): redlab's own and Redis's hidden parameters.
    pub fn is_unlisted(&self) -> bool {
        self.flags & (REDLAB | HIDDEN) != 0
    }

    pub fn is_protected(&self) -> bool {
        self.flags & PROTECTED != 0
    }

    pub fn denied_while_loading(&self) -> bool {
        self.flags & DENY_LOADING != 0
    }

    /// Validates `value` and returns it in the form CONFIG GET prints; `current` is the
    /// present value, for parameters that merge (client-output-buffer-limit). The error is
    /// the text Redis puts after "CONFIG SET failed (...) - ".
    pub fn normalize(&self, value: &str, current: &str) -> Result<String, String> {
        match self.kind {
            Kind::Bool => match value.to_ascii_lowercase().as_str() {
                "yes" => Ok("yes".into()),
                "no" => Ok("no".into()),
                _ => Err(crate::errors::CONFIG_YES_NO.into()),
            },
            Kind::Int(min, max) => {
                let n = crate::numfmt::parse_i64(value.as_bytes())
                    .ok_or_else(|| crate::errors::CONFIG_NOT_INTEGER.to_string())?;
                check_range(n, min, max)
            }
            Kind::Mem(min, max) => {
                let n = parse_memory(value)
                    .ok_or_else(|| crate::errors::CONFIG_NOT_MEMORY.to_string())?;
                let n = i64::try_from(n).unwrap_or(i64::MAX);
                check_range(n, min, max)
            }
            Kind::MemOrPercent => {
                let bad = || crate::errors::CONFIG_NOT_MEMORY_OR_PERCENT.to_string();
                if let Some(p) = value.strip_suffix('%') {
                    // Redis keeps a percentage as a negative count: 0% reads back as 0.
                    match crate::numfmt::parse_i64(p.as_bytes()) {
                        Some(n) if n > 100 => Err(crate::errors::CONFIG_PERCENT_OVER_100.into()),
                        Some(0) => Ok("0".into()),
                        Some(n) if n > 0 => Ok(format!("{}%", n)),
                        _ => Err(bad()),
                    }
                } else {
                    parse_memory(value).map(|n| n.to_string()).ok_or_else(bad)
                }
            }
            Kind::Enum(names) => names
                .iter()
                .find(|n| n.eq_ignore_ascii_case(value))
                .map(|n| n.to_string())
                .ok_or_else(|| crate::errors::config_enum(names)),
            Kind::Str => Ok(value.to_string()),
            Kind::Octal => i64::from_str_radix(value, 8)
                .map(|n| format!("{:o}", n))
                .map_err(|_| crate::errors::CONFIG_NOT_INTEGER.into()),
            Kind::Save => normalize_save(value),
            Kind::ShutdownFlags => normalize_shutdown_flags(value),
            // Kept as given: the printed form drops `n` next to `A` (as Redis prints it),
            // and the class must stay on.
            Kind::Notify => notify::parse_flags(value)
                .map(|_| value.to_string())
                .ok_or_else(|| crate::errors::CONFIG_EVENT_CLASS.into()),
            Kind::Bind => {
                let addrs: Vec<&str> = value.split_whitespace().collect();
                if addrs.len() > 16 {
                    return Err(crate::errors::CONFIG_TOO_MANY_BINDS.into());
                }
                Ok(addrs.join(" "))
            }
            Kind::ClientOutputBufferLimit => super::client_limits::OutputLimits::parse(current)
                .merge(value)
                .map(|l| l.format()),
            Kind::OomScoreAdjValues => {
                let parts: Vec<&str> = value.split_whitespace().collect();
                if parts.len() != 3 {
                    return Err(crate::errors::WRONG_NUMBER_OF_ARGUMENTS.into());
                }
                let mut out = Vec::new();
                for p in parts {
                    match crate::numfmt::parse_i64(p.as_bytes()) {
                        Some(n) if (-2000..=2000).contains(&n) => out.push(n.to_string()),
                        _ => return Err(crate::errors::CONFIG_OOM_SCORE_ADJ.into()),
                    }
                }
                Ok(out.join(" "))
            }
            Kind::Percentiles => {
                let mut out = Vec::new();
                for p in value.split_whitespace() {
                    let f = crate::numfmt::parse_f64(p.as_bytes())
                        .ok_or_else(|| crate::errors::CONFIG_PERCENTILES_INVALID.to_string())?;
                    if !(0.0..=100.0).contains(&f) {
                        return Err(crate::errors::CONFIG_PERCENTILES_RANGE.into());
                    }
                    out.push(percentile_text(f));
                }
                Ok(out.join(" "))
            }
            Kind::ReplicaOf => {
                let parts: Vec<&str> = value.split_whitespace().collect();
                match parts.as_slice() {
                    [] => Ok(String::new()),
                    [a, b] if a.eq_ignore_ascii_case("no") && b.eq_ignore_ascii_case("one") => {
                        Ok(String::new())
                    }
                    [host, port] if port.parse::<u16>().is_ok() => Ok(format!("{} {}", host, port)),
                    _ => Err(crate::errors::WRONG_NUMBER_OF_ARGUMENTS.into()),
                }
            }
        }
    }
}

fn check_range(n: i64, min: i64, max: i64) -> Result<String, String> {
    if n < min || n > max {
        Err(crate::errors::config_int_range(min, max))
    } else {
        Ok(n.to_string())
    }
}

/// Redis's `memtoull`: digits with an optional unit; k/m/g are powers of 1000, kb/mb/gb of 1024.
pub fn parse_memory(s: &str) -> Option<u64> {
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    if num.is_empty() {
        return None;
    }
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// shutdown-on-sig*'s flags, printed as Redis prints them: the set flags in a fixed order
/// (`now nosave` reads back as `nosave now`), or `default` when none is set.
fn normalize_shutdown_flags(value: &str) -> Result<String, String> {
    const NAMES: [&str; 5] = ["default", "save", "nosave", "now", "force"];
    let mut set = [false; 5];
    let mut any = false;
    for word in value.split_whitespace() {
        let i = NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(word))
            .ok_or_else(|| crate::errors::config_enum(&NAMES))?;
        set[i] = true;
        any = true;
    }
    if !any {
        return Err(crate::errors::config_enum(&NAMES));
    }
    if set[1] && set[2] {
        return Err(crate::errors::SHUTDOWN_SAVE_AND_NOSAVE.into());
    }
    let flags: Vec<&str> = (1..5).filter(|&i| set[i]).map(|i| NAMES[i]).collect();
    Ok(if flags.is_empty() {
        "default".to_string()
    } else {
        flags.join(" ")
    })
}

fn normalize_save(value: &str) -> Result<String, String> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let bad = || crate::errors::CONFIG_SAVE_INVALID.to_string();
    if !parts.len().is_multiple_of(2) {
        return Err(bad());
    }
    let mut out = Vec::new();
    for pair in parts.chunks(2) {
        let secs = crate::numfmt::parse_i64(pair[0].as_bytes()).ok_or_else(bad)?;
        let changes = crate::numfmt::parse_i64(pair[1].as_bytes()).ok_or_else(bad)?;
        if secs < 1 || changes < 0 {
            return Err(bad());
        }
        out.push(format!("{} {}", secs, changes));
    }
    Ok(out.join(" "))
}

/// Finds a parameter a server answering as `profile` knows, by its name or alias,
/// case-insensitively (CONFIG SET).
pub fn lookup_in(name: &str, profile: Profile) -> Option<&'static Param> {
    lookup(name).filter(|p| p.in_profile(profile))
}

/// Finds a parameter by its name or alias, case-insensitively, whatever the profile (the
/// command line and the builder, which may set the profile after it).
///
/// Through an index by lower-case name and alias: a fresh engine reads a dozen parameters
/// by name (the cluster, ACL and slowlog settings), and comparing each against the whole
/// table, case-insensitively, was a tenth of `Engine::new`.
pub fn lookup(name: &str) -> Option<&'static Param> {
    type Index =
        std::collections::HashMap<&'static str, &'static Param, foldhash::fast::FixedState>;
    static INDEX: std::sync::LazyLock<Index> = std::sync::LazyLock::new(|| {
        let mut index = Index::default();
        for p in PARAMS {
            for n in std::iter::once(p.name).chain(p.alias) {
                // The first parameter that answers to a name keeps it, as a scan finds it.
                index.entry(n).or_insert(p);
            }
        }
        index
    });
    let mut buf = [0u8; LONGEST_NAME];
    if name.len() > LONGEST_NAME {
        // Longer than any name in the table (checked by a test).
        return None;
    }
    let lower = &mut buf[..name.len()];
    lower.copy_from_slice(name.as_bytes());
    lower.make_ascii_lowercase();
    // Every name in the table is lower-case ASCII (checked by a test), so a name with an
    // upper-case letter outside ASCII matches none, as with the case-insensitive scan.
    let lower = std::str::from_utf8(lower).ok()?;
    INDEX.get(lower).copied()
}

/// No parameter's name or alias is longer.
const LONGEST_NAME: usize = 64;

const fn p(
    name: &'static str,
    alias: Option<&'static str>,
    kind: Kind,
    default: &'static str,
    flags: u8,
) -> Param {
    Param {
        name,
        alias,
        kind,
        default,
        flags,
        since: None,
    }
}

use Kind::*;

/// The parameters, sorted by name. CONFIG GET * lists each under its name and its alias.
pub static PARAMS: &[Param] = &[
    p(
        "acl-pubsub-default",
        None,
        Enum(&["allchannels", "resetchannels"]),
        "resetchannels",
        0,
    ),
    p("aclfile", None, Str, "", IMMUTABLE),
    p("acllog-max-len", None, Int(0, i64::MAX), "128", 0),
    p(
        "key-load-delay",
        None,
        Int(i32::MIN as i64, i32::MAX as i64),
        "0",
        HIDDEN,
    ),
    // Hidden as in Redis; how often the binary's load at start serves clients.
    p(
        "loading-process-events-interval-bytes",
        None,
        Int(1024, i32::MAX as i64),
        "2097152",
        HIDDEN,
    ),
    p(
        "rdb-key-save-delay",
        None,
        Int(i32::MIN as i64, i32::MAX as i64),
        "0",
        HIDDEN,
    ),
    p("active-defrag-cycle-max", None, Int(1, 99), "25", 0),
    p("active-defrag-cycle-min", None, Int(1, 99), "1", 0),
    p(
        "active-defrag-ignore-bytes",
        None,
        Mem(1, i64::MAX),
        "104857600",
        0,
    ),
    p(
        "active-defrag-max-scan-fields",
        None,
        Int(1, i64::MAX),
        "1000",
        0,
    ),
    p("active-defrag-threshold-lower", None, Int(0, 1000), "10", 0),
    p(
        "active-defrag-threshold-upper",
        None,
        Int(0, 1000),
        "100",
        0,
    ),
    p("active-expire-effort", None, Int(1, 10), "1", 0),
    p("activedefrag", None, Bool, "no", 0),
    p("activerehashing", None, Bool, "yes", 0),
    p("always-show-logo", None, Bool, "no", IMMUTABLE),
    p("aof-disable-auto-gc", None, Bool, "no", 0),
    p("aof-load-truncated", None, Bool, "yes", 0),
    p("aof-rewrite-incremental-fsync", None, Bool, "yes", 0),
    p("aof-timestamp-enabled", None, Bool, "no", 0),
    p("aof-use-rdb-preamble", None, Bool, "yes", 0),
    p("aof_rewrite_cpulist", None, Str, "", IMMUTABLE),
    p("appenddirname", None, Str, "appendonlydir", IMMUTABLE),
    p("appendfilename", None, Str, "appendonly.aof", IMMUTABLE),
    p(
        "appendfsync",
        None,
        Enum(&["everysec", "always", "no"]),
        "everysec",
        0,
    ),
    p("appendonly", None, Bool, "no", DENY_LOADING),
    p(
        "auto-aof-rewrite-min-size",
        None,
        Mem(0, i64::MAX),
        "67108864",
        0,
    ),
    p(
        "auto-aof-rewrite-percentage",
        None,
        Int(0, 2147483647),
        "100",
        0,
    ),
    p("bgsave_cpulist", None, Str, "", IMMUTABLE),
    p("bind", None, Bind, "* -::*", 0),
    p("bind-source-addr", None, Str, "", 0),
    p("bio_cpulist", None, Str, "", IMMUTABLE),
    p(
        "busy-reply-threshold",
        Some("lua-time-limit"),
        Int(0, i64::MAX),
        "5000",
        0,
    ),
    p(
        "client-output-buffer-limit",
        None,
        ClientOutputBufferLimit,
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        0,
    ),
    p(
        "client-query-buffer-limit",
        None,
        Mem(1048576, i64::MAX),
        "1073741824",
        0,
    ),
    p("cluster-allow-pubsubshard-when-down", None, Bool, "yes", 0),
    p("cluster-allow-reads-when-down", None, Bool, "no", 0),
    p("cluster-allow-replica-migration", None, Bool, "yes", 0),
    p("cluster-announce-bus-port", None, Int(0, 65535), "0", 0),
    p("cluster-announce-hostname", None, Str, "", 0),
    p("cluster-announce-ip", None, Str, "", 0),
    p("cluster-announce-port", None, Int(0, 65535), "0", 0),
    p("cluster-announce-tls-port", None, Int(0, 65535), "0", 0),
    p("cluster-config-file", None, Str, "nodes.conf", IMMUTABLE),
    p("cluster-enabled", None, Bool, "no", IMMUTABLE),
    p("cluster-link-sendbuf-limit", None, Mem(0, i64::MAX), "0", 0),
    p(
        "cluster-migration-barrier",
        None,
        Int(0, 2147483647),
        "1",
        0,
    ),
    p("cluster-node-timeout", None, Int(0, i64::MAX), "15000", 0),
    p("cluster-port", None, Int(0, 65535), "0", IMMUTABLE),
    p(
        "cluster-preferred-endpoint-type",
        None,
        Enum(&["ip", "hostname", "unknown-endpoint"]),
        "ip",
        0,
    ),
    p(
        "cluster-replica-no-failover",
        Some("cluster-slave-no-failover"),
        Bool,
        "no",
        0,
    ),
    p(
        "cluster-replica-validity-factor",
        Some("cluster-slave-validity-factor"),
        Int(0, 2147483647),
        "10",
        0,
    ),
    p("cluster-require-full-coverage", None, Bool, "yes", 0),
    p("cluster-slot-stats-enabled", None, Bool, "no", 0)
        .since(crate::compat::since::CLUSTER_SLOT_STATS),
    p("crash-log-enabled", None, Bool, "yes", 0),
    p("crash-memcheck-enabled", None, Bool, "yes", 0),
    p("daemonize", None, Bool, "no", IMMUTABLE),
    p("databases", None, Int(1, 2147483647), "16", IMMUTABLE),
    p("dbfilename", None, Str, "dump.rdb", PROTECTED),
    p("dir", None, Str, "", PROTECTED | DENY_LOADING),
    p("disable-thp", None, Bool, "yes", IMMUTABLE),
    p("dynamic-hz", None, Bool, "yes", 0),
    p(
        "enable-debug-command",
        None,
        Enum(&["no", "yes", "local"]),
        "no",
        IMMUTABLE,
    ),
    p(
        "enable-module-command",
        None,
        Enum(&["no", "yes", "local"]),
        "no",
        IMMUTABLE,
    ),
    p(
        "enable-protected-configs",
        None,
        Enum(&["no", "yes", "local"]),
        "no",
        IMMUTABLE,
    ),
    p(
        "hash-max-listpack-entries",
        Some("hash-max-ziplist-entries"),
        Int(0, i64::MAX),
        "512",
        0,
    ),
    p(
        "hash-max-listpack-value",
        Some("hash-max-ziplist-value"),
        Mem(0, i64::MAX),
        "64",
        0,
    ),
    p("hll-sparse-max-bytes", None, Mem(0, i64::MAX), "3000", 0),
    p("hz", None, Int(0, 2147483647), "10", 0),
    p("ignore-warnings", None, Str, "", 0),
    p("io-threads", None, Int(1, 128), "1", IMMUTABLE),
    p("io-threads-do-reads", None, Bool, "no", IMMUTABLE),
    p("jemalloc-bg-thread", None, Bool, "yes", 0),
    p("latency-monitor-threshold", None, Int(0, i64::MAX), "0", 0),
    p("latency-tracking", None, Bool, "yes", 0),
    p(
        "latency-tracking-info-percentiles",
        None,
        Percentiles,
        "50 99 99.9",
        0,
    ),
    p("lazyfree-lazy-eviction", None, Bool, "no", 0),
    p("lazyfree-lazy-expire", None, Bool, "no", 0),
    p("lazyfree-lazy-server-del", None, Bool, "no", 0),
    p("lazyfree-lazy-user-del", None, Bool, "no", 0),
    p("lazyfree-lazy-user-flush", None, Bool, "no", 0),
    p("lfu-decay-time", None, Int(0, 2147483647), "1", 0),
    p("lfu-log-factor", None, Int(0, 2147483647), "10", 0),
    p("list-compress-depth", None, Int(0, 2147483647), "0", 0),
    p(
        "list-max-listpack-size",
        Some("list-max-ziplist-size"),
        Int(i32::MIN as i64, 2147483647),
        "-2",
        0,
    ),
    p("logfile", None, Str, "", IMMUTABLE),
    p(
        "loglevel",
        None,
        Enum(&["debug", "verbose", "notice", "warning"]),
        "notice",
        0,
    ),
    p("masterauth", None, Str, "", 0),
    p("masteruser", None, Str, "", 0),
    p("maxclients", None, Int(1, 4294967295), "10000", 0),
    p("maxmemory", None, Mem(0, i64::MAX), "0", 0),
    p("maxmemory-clients", None, MemOrPercent, "0", 0),
    p("maxmemory-eviction-tenacity", None, Int(0, 100), "10", 0),
    p(
        "maxmemory-policy",
        None,
        Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
        "noeviction",
        0,
    ),
    p("maxmemory-samples", None, Int(1, 2147483647), "5", 0),
    p(
        "min-replicas-max-lag",
        Some("min-slaves-max-lag"),
        Int(0, 2147483647),
        "10",
        0,
    ),
    p(
        "min-replicas-to-write",
        Some("min-slaves-to-write"),
        Int(0, 2147483647),
        "0",
        0,
    ),
    p("no-appendfsync-on-rewrite", None, Bool, "no", 0),
    p("notify-keyspace-events", None, Notify, "", 0),
    p(
        "oom-score-adj",
        None,
        Enum(&["no", "yes", "relative", "absolute"]),
        "no",
        0,
    ),
    p(
        "oom-score-adj-values",
        None,
        OomScoreAdjValues,
        "0 200 800",
        0,
    ),
    p("pidfile", None, Str, "", IMMUTABLE),
    p("port", None, Int(0, 65535), "6379", 0),
    p(
        "proc-title-template",
        None,
        Str,
        "{title} {listen-addr} {server-mode}",
        0,
    ),
    p(
        "propagation-error-behavior",
        None,
        Enum(&["ignore", "panic", "panic-on-replicas"]),
        "ignore",
        0,
    ),
    p("protected-mode", None, Bool, "yes", 0),
    p(
        "proto-max-bulk-len",
        None,
        Mem(1048576, i64::MAX),
        "536870912",
        0,
    ),
    p("rdb-del-sync-files", None, Bool, "no", 0),
    p("rdb-save-incremental-fsync", None, Bool, "yes", 0),
    p("rdbchecksum", None, Bool, "yes", IMMUTABLE),
    p("rdbcompression", None, Bool, "yes", 0),
    p(
        "redlab-busy-poll-us",
        None,
        Int(0, 1_000_000),
        "100",
        REDLAB,
    ),
    p("redlab-seed", None, Int(0, i64::MAX), "0", REDLAB),
    p("repl-backlog-size", None, Mem(1, i64::MAX), "1048576", 0),
    p("repl-backlog-ttl", None, Int(0, i64::MAX), "3600", 0),
    p("repl-disable-tcp-nodelay", None, Bool, "no", 0),
    p(
        "repl-diskless-load",
        None,
        Enum(&["disabled", "on-empty-db", "swapdb"]),
        "disabled",
        DENY_LOADING,
    ),
    p("repl-diskless-sync", None, Bool, "yes", 0),
    p("repl-diskless-sync-delay", None, Int(0, 2147483647), "5", 0),
    p(
        "repl-diskless-sync-max-replicas",
        None,
        Int(0, 2147483647),
        "0",
        0,
    ),
    p(
        "repl-ping-replica-period",
        Some("repl-ping-slave-period"),
        Int(1, 2147483647),
        "10",
        0,
    ),
    p("repl-timeout", None, Int(1, 2147483647), "60", 0),
    p("replica-announce-ip", Some("slave-announce-ip"), Str, "", 0),
    p(
        "replica-announce-port",
        Some("slave-announce-port"),
        Int(0, 65535),
        "0",
        0,
    ),
    p("replica-announced", None, Bool, "yes", 0),
    p("replica-ignore-disk-write-errors", None, Bool, "no", 0),
    p(
        "replica-ignore-maxmemory",
        Some("slave-ignore-maxmemory"),
        Bool,
        "yes",
        0,
    ),
    p(
        "replica-lazy-flush",
        Some("slave-lazy-flush"),
        Bool,
        "no",
        0,
    ),
    p(
        "replica-priority",
        Some("slave-priority"),
        Int(0, 2147483647),
        "100",
        0,
    ),
    p("replica-read-only", Some("slave-read-only"), Bool, "yes", 0),
    p(
        "replica-serve-stale-data",
        Some("slave-serve-stale-data"),
        Bool,
        "yes",
        0,
    ),
    p("replicaof", Some("slaveof"), ReplicaOf, "", IMMUTABLE),
    p("requirepass", None, Str, "", 0),
    p(
        "sanitize-dump-payload",
        None,
        Enum(&["no", "yes", "clients"]),
        "no",
        0,
    ),
    p("save", None, Save, "", 0),
    p("server_cpulist", None, Str, "", IMMUTABLE),
    p("set-max-intset-entries", None, Int(0, i64::MAX), "512", 0),
    p("set-max-listpack-entries", None, Int(0, i64::MAX), "128", 0)
        .since(crate::compat::since::SET_LISTPACK),
    p("set-max-listpack-value", None, Int(0, i64::MAX), "64", 0)
        .since(crate::compat::since::SET_LISTPACK),
    p("set-proc-title", None, Bool, "yes", IMMUTABLE),
    p("shutdown-on-sigint", None, ShutdownFlags, "default", 0),
    p("shutdown-on-sigterm", None, ShutdownFlags, "default", 0),
    p("shutdown-timeout", None, Int(0, 2147483647), "10", 0),
    p(
        "slowlog-log-slower-than",
        None,
        Int(-1, i64::MAX),
        "10000",
        0,
    ),
    p("slowlog-max-len", None, Int(0, i64::MAX), "128", 0),
    p("socket-mark-id", None, Int(0, 2147483647), "0", IMMUTABLE),
    p("stop-writes-on-bgsave-error", None, Bool, "yes", 0),
    p("stream-node-max-bytes", None, Mem(0, i64::MAX), "4096", 0),
    p("stream-node-max-entries", None, Int(0, i64::MAX), "100", 0),
    p(
        "supervised",
        None,
        Enum(&["upstart", "systemd", "auto", "no"]),
        "no",
        IMMUTABLE,
    ),
    p("syslog-enabled", None, Bool, "no", IMMUTABLE),
    p(
        "syslog-facility",
        None,
        Enum(&[
            "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
        ]),
        "local0",
        IMMUTABLE,
    ),
    p("syslog-ident", None, Str, "redis", IMMUTABLE),
    p("tcp-backlog", None, Int(0, 2147483647), "511", IMMUTABLE),
    p("tcp-keepalive", None, Int(0, 2147483647), "300", 0),
    p("timeout", None, Int(0, 2147483647), "0", 0),
    p(
        "tls-auth-clients",
        None,
        Enum(&["no", "yes", "optional"]),
        "yes",
        0,
    ),
    p("tls-ca-cert-dir", None, Str, "", 0),
    p("tls-ca-cert-file", None, Str, "", 0),
    p("tls-cert-file", None, Str, "", 0),
    p("tls-ciphers", None, Str, "", 0),
    p("tls-ciphersuites", None, Str, "", 0),
    p("tls-client-cert-file", None, Str, "", 0),
    p("tls-client-key-file", None, Str, "", 0),
    p("tls-client-key-file-pass", None, Str, "", 0),
    p("tls-cluster", None, Bool, "no", 0),
    p("tls-dh-params-file", None, Str, "", 0),
    p("tls-key-file", None, Str, "", 0),
    p("tls-key-file-pass", None, Str, "", 0),
    p("tls-port", None, Int(0, 65535), "0", 0),
    p("tls-prefer-server-ciphers", None, Bool, "no", 0),
    p("tls-protocols", None, Str, "", 0),
    p("tls-replication", None, Bool, "no", 0),
    p(
        "tls-session-cache-size",
        None,
        Int(0, 2147483647),
        "20480",
        0,
    ),
    p(
        "tls-session-cache-timeout",
        None,
        Int(0, 2147483647),
        "300",
        0,
    ),
    p("tls-session-caching", None, Bool, "yes", 0),
    p(
        "tracking-table-max-keys",
        None,
        Int(0, i64::MAX),
        "1000000",
        0,
    ),
    p("unixsocket", None, Str, "", IMMUTABLE),
    p("unixsocketperm", None, Octal, "0", IMMUTABLE),
    p(
        "zset-max-listpack-entries",
        Some("zset-max-ziplist-entries"),
        Int(0, i64::MAX),
        "128",
        0,
    ),
    p(
        "zset-max-listpack-value",
        Some("zset-max-ziplist-value"),
        Mem(0, i64::MAX),
        "64",
        0,
    ),
];

/// A percentile as CONFIG GET prints it: six decimals, then trailing zeros and a bare point
/// dropped (Redis's "%f" and trimDoubleString), so 99.9 reads "99.9" and 50.0 reads "50".
fn percentile_text(f: f64) -> String {
    let mut s = format!("{:.6}", f);
    if s.contains('.') {
        let kept = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(kept);
    }
    s
}

#[cfg(test)]
mod lookup_tests {
    use super::*;

    #[test]
    fn lookup_finds_every_parameter_by_name_and_alias_in_any_case() {
        for p in PARAMS {
            for n in std::iter::once(p.name).chain(p.alias) {
                assert!(n.len() <= LONGEST_NAME, "{n}");
                assert!(
                    n.bytes().all(|b| !b.is_ascii_uppercase()) && n.is_ascii(),
                    "{n}"
                );
                // The first parameter answering to the name, as a scan of the table finds it.
                let first = PARAMS
                    .iter()
                    .find(|q| q.name == n || q.alias == Some(n))
                    .expect("listed");
                for spelled in [n.to_string(), n.to_ascii_uppercase()] {
                    let found = lookup(&spelled).expect("found");
                    assert!(std::ptr::eq(found, first), "{spelled}");
                }
            }
        }
        assert!(lookup("slave-read-only").is_some_and(|p| p.name == "replica-read-only"));
        assert!(lookup("MaxMemory").is_some_and(|p| p.name == "maxmemory"));
        for unknown in [
            "",
            "maxmemory ",
            "no-such-param",
            &"x".repeat(200),
            "maxmemoryé",
        ] {
            assert!(lookup(unknown).is_none(), "{unknown}");
        }
    }
}
