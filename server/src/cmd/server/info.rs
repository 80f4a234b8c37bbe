//! INFO [section ...]: Redis's layout (`# Section` headers, `field:value` lines ending in
//! CRLF, a blank line between sections), with the fields clients and tools read. Values
//! redlab has no notion of (fork, RSS, replication offsets) are the idle values Redis shows.

use crate::cmd::table::CmdResult;
use std::fmt::Write;

use crate::engine::{Call, Engine};
use crate::reply::Reply;

/// Sections in the order Redis prints them.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];

/// What plain INFO (and `default`) prints: everything but the per-command sections.
fn in_default(s: &str) -> bool {
    !matches!(s, "commandstats" | "latencystats")
}

pub(super) fn info(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut wanted: Vec<&str> = Vec::new();
    if call.argc() == 1 {
        wanted.extend(SECTIONS.iter().copied().filter(|s| in_default(s)));
    }
    for a in &call.args[1..] {
        let a = String::from_utf8_lossy(a).to_ascii_lowercase();
        match a.as_str() {
            "all" | "everything" => wanted.extend(SECTIONS.iter().copied()),
            "default" => wanted.extend(SECTIONS.iter().copied().filter(|s| in_default(s))),
            other => {
                if let Some(s) = SECTIONS.iter().find(|s| **s == other) {
                    wanted.push(s);
                }
            }
        }
    }
    let text = render(e, &wanted);
    Ok(Reply::Verbatim("txt", text.into()))
}

/// The INFO text for `wanted` sections (any order, repeats allowed).
pub(crate) fn render(e: &Engine, wanted: &[&str]) -> String {
    let mut out = String::new();
    for s in SECTIONS.iter().filter(|s| wanted.contains(s)) {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        section(e, s, &mut out);
    }
    out
}

fn title(s: &str) -> &'static str {
    match s {
        "server" => "Server",
        "clients" => "Clients",
        "memory" => "Memory",
        "persistence" => "Persistence",
        "stats" => "Stats",
        "replication" => "Replication",
        "cpu" => "CPU",
        "modules" => "Modules",
        "commandstats" => "Commandstats",
        "errorstats" => "Errorstats",
        "latencystats" => "Latencystats",
        "cluster" => "Cluster",
        _ => "Keyspace",
    }
}

/// Redis's `bytesToHuman`.
pub(crate) fn bytes_to_human(n: u64) -> String {
    let f = n as f64;
    const K: f64 = 1024.0;
    if f < K {
        format!("{}B", n)
    } else if f < K * K {
        format!("{:.2}K", f / K)
    } else if f < K * K * K {
        format!("{:.2}M", f / (K * K))
    } else if f < K * K * K * K {
        format!("{:.2}G", f / (K * K * K))
    } else if f < K * K * K * K * K {
        format!("{:.2}T", f / (K * K * K * K))
    } else {
        format!("{:.2}P", f / (K * K * K * K * K))
    }
}

/// A stable 40-hex-digit id (run_id, master_replid) derived from the engine's start time.
fn hex_id(e: &Engine, salt: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(salt.as_bytes());
    h.update(&e.started_ms.to_le_bytes());
    h.update(&e.config.port.to_le_bytes());
    h.digest().to_string()
}

fn section(e: &Engine, s: &str, out: &mut String) {
    let _ = write!(out, "# {}\r\n", title(s));
    let mut f = |k: &str, v: &dyn std::fmt::Display| {
        let _ = write!(out, "{}:{}\r\n", k, v);
    };
    let c = &e.config;
    let st = &e.stats;
    let now_ms = e.clock.now_ms();
    let uptime = (now_ms - e.started_ms).max(0) / 1000;
    match s {
        "server" => {
            f("redis_version", &c.redis_version);
            let valkey = c.compat.valkey_version();
            if let Some(v) = valkey {
                f("server_name", &c.compat.server_name());
                f("valkey_version", &v);
                f("valkey_release_stage", &"ga");
            }
            f("redis_git_sha1", &"00000000");
            f("redis_git_dirty", &0);
            f("redis_build_id", &crate::config::BUILD_ID);
            // Valkey renamed the field.
            let mode = if valkey.is_some() {
                "server_mode"
            } else {
                "redis_mode"
            };
            f(mode, &"standalone");
            f("os", &format!("{} {}", os_name(), std::env::consts::ARCH));
            f("arch_bits", &64);
            f("monotonic_clock", &"POSIX clock_gettime");
            f("multiplexing_api", &"epoll");
            f("atomicvar_api", &"c11-builtin");
            f("gcc_version", &"0.0.0");
            f("process_id", &std::process::id());
            f("process_supervised", &"no");
            f("run_id", &hex_id(e, "run_id"));
            f("tcp_port", &c.port);
            f("server_time_usec", &e.clock.now_us());
            f("uptime_in_seconds", &uptime);
            f("uptime_in_days", &(uptime / 86400));
            f("hz", &c.get_by_name("hz").unwrap_or_default());
            f("configured_hz", &c.get_by_name("hz").unwrap_or_default());
            f("lru_clock", &((now_ms / 1000) & ((1 << 24) - 1)));
            f(
                "executable",
                &std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            );
            f("config_file", &c.config_file.as_deref().unwrap_or(""));
            f("io_threads_active", &0);
        }
        "clients" => {
            let pubsub = e.sessions.values().filter(|s| s.in_pubsub()).count();
            f("connected_clients", &e.sessions.len());
            f("cluster_connections", &0);
            f(
                "maxclients",
                &c.get_by_name("maxclients").unwrap_or_default(),
            );
            let (input, output) = e.buffer_peaks.recent(e.clock.now_ms());
            f("client_recent_max_input_buffer", &input);
            f("client_recent_max_output_buffer", &output);
            f("blocked_clients", &st.blocked_clients);
            f("tracking_clients", &e.tracking.clients);
            f("clients_in_timeout_table", &st.blocked_clients);
            let _ = pubsub;
        }
        "memory" => {
            let used = e.used_memory();
            let clients = e.clients_memory();
            // Redis's overhead: the startup memory and the clients' buffers.
            let overhead = 900 * 1024 + clients.normal + clients.replicas;
            f("used_memory", &used);
            f("used_memory_human", &bytes_to_human(used));
            f("used_memory_rss", &used);
            f("used_memory_rss_human", &bytes_to_human(used));
            f("used_memory_peak", &used);
            f("used_memory_peak_human", &bytes_to_human(used));
            f("used_memory_peak_perc", &"100.00%");
            f("used_memory_overhead", &overhead);
            f("used_memory_startup", &(900 * 1024));
            f("used_memory_dataset", &used.saturating_sub(overhead));
            f("used_memory_dataset_perc", &"100.00%");
            f("total_system_memory", &0);
            f("total_system_memory_human", &"0B");
            f("used_memory_lua", &32768);
            f("used_memory_vm_eval", &32768);
            f("used_memory_lua_human", &"32.00K");
            let cache = &e.scripting.cache.scripts;
            let scripts_eval =
                super::script_memory::eval_scripts(cache.values().map(|s| s.body.len()));
            f("used_memory_scripts_eval", &scripts_eval);
            f("number_of_cached_scripts", &cache.len());
            f("number_of_functions", &e.scripting.libs.function_count());
            f("number_of_libraries", &e.scripting.libs.libs.len());
            f("used_memory_vm_functions", &32768);
            f("used_memory_vm_total", &65536);
            f("used_memory_vm_total_human", &"64.00K");
            f("used_memory_functions", &0);
            f("used_memory_scripts", &scripts_eval);
            f("used_memory_scripts_human", &bytes_to_human(scripts_eval));
            f("maxmemory", &c.maxmemory);
            f("maxmemory_human", &bytes_to_human(c.maxmemory));
            f("maxmemory_policy", &c.maxmemory_policy);
            f("allocator_frag_ratio", &"1.00");
            f("allocator_frag_bytes", &0);
            f("allocator_rss_ratio", &"1.00");
            f("allocator_rss_bytes", &0);
            f("rss_overhead_ratio", &"1.00");
            f("rss_overhead_bytes", &0);
            f("mem_fragmentation_ratio", &"1.00");
            f("mem_fragmentation_bytes", &0);
            f("mem_not_counted_for_evict", &clients.replicas);
            f("mem_replication_backlog", &0);
            f("mem_total_replication_buffers", &0);
            f("mem_clients_slaves", &clients.replicas);
            f("mem_clients_normal", &clients.normal);
            f("mem_cluster_links", &0);
            f("mem_aof_buffer", &0);
            f("mem_allocator", &crate::global_alloc::allocator_name());
            f("active_defrag_running", &0);
            f("lazyfree_pending_objects", &0);
            f("lazyfreed_objects", &0);
        }
        "persistence" => {
            let aof = c.get_by_name("appendonly").is_some_and(|v| v == "yes");
            f("loading", &u8::from(e.is_loading()));
            f("async_loading", &0);
            f("current_cow_peak", &0);
            f("current_cow_size", &0);
            f("current_cow_size_age", &0);
            f("current_fork_perc", &"0.00");
            f("current_save_keys_processed", &0);
            f("current_save_keys_total", &0);
            f("rdb_changes_since_last_save", &e.dirty);
            f("rdb_bgsave_in_progress", &0);
            f("rdb_last_save_time", &e.last_save_s);
            f("rdb_last_bgsave_status", &"ok");
            f("rdb_last_bgsave_time_sec", &-1);
            f("rdb_current_bgsave_time_sec", &-1);
            f("rdb_saves", &0);
            f("rdb_last_cow_size", &0);
            f("rdb_last_load_keys_expired", &e.load_counts.expired);
            f("rdb_last_load_keys_loaded", &e.load_counts.loaded);
            f("aof_enabled", &(aof as u8));
            f("aof_rewrite_in_progress", &0);
            f("aof_rewrite_scheduled", &0);
            f("aof_last_rewrite_time_sec", &-1);
            f("aof_current_rewrite_time_sec", &-1);
            f("aof_last_bgrewrite_status", &"ok");
            f("aof_rewrites", &0);
            f("aof_rewrites_consecutive_failures", &0);
            f("aof_last_write_status", &"ok");
            f("aof_last_cow_size", &0);
            f("module_fork_in_progress", &0);
            f("module_fork_last_cow_size", &0);
            for (name, value) in e.loading_fields().unwrap_or_default() {
                f(name, &value);
            }
        }
        "stats" => {
            f("total_connections_received", &st.total_connections_received);
            f("total_commands_processed", &st.total_commands_processed);
            f("instantaneous_ops_per_sec", &0);
            f("total_net_input_bytes", &0);
            f("total_net_output_bytes", &0);
            f("total_net_repl_input_bytes", &0);
            f("total_net_repl_output_bytes", &0);
            f("instantaneous_input_kbps", &"0.00");
            f("instantaneous_output_kbps", &"0.00");
            f("instantaneous_input_repl_kbps", &"0.00");
            f("instantaneous_output_repl_kbps", &"0.00");
            f(
                "rejected_connections",
                &e.rejected_connections
                    .load(std::sync::atomic::Ordering::Relaxed),
            );
            f("sync_full", &0);
            f("sync_partial_ok", &0);
            f("sync_partial_err", &0);
            f("expired_keys", &st.expired_keys);
            f("expired_stale_perc", &"0.00");
            f("expired_time_cap_reached_count", &0);
            f("expire_cycle_cpu_milliseconds", &0);
            f("evicted_keys", &st.evicted_keys);
            f("evicted_clients", &st.evicted_clients);
            f("total_eviction_exceeded_time", &0);
            f("current_eviction_exceeded_time", &0);
            f("keyspace_hits", &st.keyspace_hits);
            f("keyspace_misses", &st.keyspace_misses);
            f("pubsub_channels", &e.pubsub.channels.len());
            f("pubsub_patterns", &e.pubsub.patterns.len());
            f("pubsubshard_channels", &0);
            f("latest_fork_usec", &0);
            f("total_forks", &0);
            f("migrate_cached_sockets", &0);
            f("slave_expires_tracked_keys", &0);
            f("active_defrag_hits", &0);
            f("active_defrag_misses", &0);
            f("active_defrag_key_hits", &0);
            f("active_defrag_key_misses", &0);
            f("total_active_defrag_time", &0);
            f("current_active_defrag_time", &0);
            f("tracking_total_keys", &e.tracking.total_keys());
            f("tracking_total_items", &e.tracking.total_items());
            f("tracking_total_prefixes", &e.tracking.total_prefixes());
            f("unexpected_error_replies", &0);
            f("total_error_replies", &st.total_error_replies);
            f("dump_payload_sanitizations", &0);
            f("total_reads_processed", &st.total_commands_processed);
            f("total_writes_processed", &st.total_commands_processed);
            f("io_threaded_reads_processed", &0);
            f("io_threaded_writes_processed", &0);
            f("reply_buffer_shrinks", &st.reply_buffer_shrinks);
            f("reply_buffer_expands", &st.reply_buffer_expands);
        }
        "replication" => {
            for (k, v) in crate::repl::commands::info_fields(e) {
                f(&k, &v);
            }
        }
        "cpu" => {
            for k in [
                "used_cpu_sys",
                "used_cpu_user",
                "used_cpu_sys_children",
                "used_cpu_user_children",
                "used_cpu_sys_main_thread",
                "used_cpu_user_main_thread",
            ] {
                f(k, &"0.000000");
            }
        }
        "commandstats" => {
            let mut rows: Vec<_> = st.per_command.values().collect();
            rows.sort_by(|a, b| a.name.cmp(&b.name));
            for cs in rows {
                let name = &cs.name;
                // Redis divides in single precision (`(float)microseconds/calls`), which
                // shows in the second decimal once the totals are large; 0 with no call.
                let per_call = if cs.calls == 0 {
                    0.0
                } else {
                    cs.usec as f32 / cs.calls as f32
                };
                let v = format!(
                    "calls={},usec={},usec_per_call={:.2},rejected_calls={},failed_calls={}",
                    cs.calls, cs.usec, per_call, cs.rejected_calls, cs.failed_calls
                );
                f(&format!("cmdstat_{}", name), &v);
            }
        }
        "errorstats" => {
            for (code, n) in &st.errors_by_code {
                f(&format!("errorstat_{}", code), &format!("count={}", n));
            }
        }
        "latencystats" => {
            for (k, v) in e.latency_tracking.info_lines(&e.config) {
                f(&k, &v);
            }
        }
        "cluster" => f("cluster_enabled", &u8::from(e.cluster.is_some())),
        "keyspace" => {
            for (i, db) in e.dbs.iter().enumerate() {
                if !db.is_empty() {
                    f(
                        &format!("db{}", i),
                        &format!("keys={},expires={},avg_ttl=0", db.len(), db.expires_len()),
                    );
                }
            }
        }
        _ => {}
    }
}

fn os_name() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Engine};

    fn text(r: Reply) -> String {
        match r {
            Reply::Verbatim("txt", b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("not verbatim: {:?}", other),
        }
    }

    #[test]
    fn sections_and_fields() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["SET", "a", "1"]);
        let all = text(e.execute(1, &["INFO"]));
        assert!(all.starts_with("# Server\r\nredis_version:7.0.15\r\n"));
        assert!(all.contains("\r\n\r\n# Clients\r\n"));
        assert!(all.contains("role:master\r\n"));
        assert!(all.ends_with("# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"));
        assert!(!all.contains("# Commandstats"));
        let two = text(e.execute(1, &["INFO", "keyspace", "SERVER"]));
        assert!(two.starts_with("# Server\r\n") && two.contains("\r\n\r\n# Keyspace\r\n"));
        assert_eq!(text(e.execute(1, &["INFO", "nosuch"])), "");
        assert!(text(e.execute(1, &["INFO", "commandstats"])).contains("cmdstat_set:calls=1,"));
    }

    #[test]
    fn commandstats_count_each_calls_duration() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["DEBUG", "SLEEP", "0.01"]);
        e.execute(1, &["DEBUG", "SLEEP", "0"]);
        e.execute(1, &["GET"]);
        let info = text(e.execute(1, &["INFO", "commandstats"]));
        let row = |name: &str| {
            let prefix = format!("cmdstat_{name}:");
            info.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .unwrap_or_else(|| panic!("no {name} row in {info}"))
                .to_string()
        };
        let debug = row("debug");
        let usec: u64 = debug
            .split(',')
            .find_map(|f| f.strip_prefix("usec="))
            .and_then(|v| v.parse().ok())
            .expect("usec");
        // At least the 10 ms slept; the second call adds its own few microseconds.
        assert!(usec >= 10_000, "{debug}");
        assert!(
            debug.starts_with(&format!(
                "calls=2,usec={usec},usec_per_call={:.2},",
                usec as f32 / 2.0
            )),
            "{debug}"
        );
        // Refused before running: no call, so no time.
        assert_eq!(
            row("get"),
            "calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"
        );
    }

    #[test]
    fn human_sizes_like_redis() {
        assert_eq!(bytes_to_human(916800), "895.31K");
        assert_eq!(bytes_to_human(100), "100B");
        assert_eq!(bytes_to_human(1 << 30), "1.00G");
    }
}
