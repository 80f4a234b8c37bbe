//! latency-tracking: a histogram of each command's own execution time (`histogram.rs`), kept
//! from its first call after start or CONFIG RESETSTAT, read by LATENCY HISTOGRAM and INFO
//! latencystats. Redis 7.0 turns it on by default, so every command the dispatcher, EXEC,
//! a script or a served blocked client runs is timed.

use std::collections::HashMap;

use bytes::Bytes;

use super::histogram::Histogram;
use crate::cmd::table::Command;
use crate::config::Config;
use crate::reply::Reply;

#[derive(Debug)]
struct Entry {
    /// The full name (`client|id` for a subcommand).
    name: String,
    histogram: Histogram,
}

#[derive(Debug, Default)]
pub struct CommandLatencies {
    /// Keyed by the address of the command's table entry, as `Stats::per_command` is.
    by_command: HashMap<usize, Entry, foldhash::fast::FixedState>,
    /// `Config::generation` the parameters were read at.
    generation: Option<u64>,
    enabled: bool,
}

/// latency-tracking, `yes` by default.
fn tracking_on(config: &Config) -> bool {
    config.stored("latency-tracking").is_none_or(|v| v == "yes")
}

fn key(cmd: &'static Command) -> usize {
    cmd as *const Command as usize
}

impl CommandLatencies {
    /// Whether commands are timed for the histograms (latency-tracking).
    #[inline]
    pub fn enabled(&mut self, config: &Config) -> bool {
        if self.generation != Some(config.generation) {
            self.generation = Some(config.generation);
            self.enabled = tracking_on(config);
        }
        self.enabled
    }

    /// Counts one execution of `cmd` (full name `name`) that ran `us` microseconds.
    pub fn record(&mut self, config: &Config, cmd: &'static Command, name: &str, us: u64) {
        if !self.enabled(config) {
            return;
        }
        // Redis measures in whole microseconds and records nanoseconds.
        let ns = (us.min(i64::MAX as u64) as i64).saturating_mul(1000);
        // Looked up first, the entry made only for a command's first call.
        if let Some(e) = self.by_command.get_mut(&key(cmd)) {
            e.histogram.record(ns);
            return;
        }
        self.by_command
            .entry(key(cmd))
            .or_insert_with(|| Entry {
                name: name.to_string(),
                histogram: Histogram::default(),
            })
            .histogram
            .record(ns);
    }

    /// CONFIG RESETSTAT: every histogram goes.
    pub fn reset(&mut self) {
        self.by_command.clear();
    }

    /// INFO latencystats: one line per command with a histogram, by name, with the
    /// percentiles latency-tracking-info-percentiles asks for; none when latency-tracking is
    /// off.
    pub fn info_lines(&self, config: &Config) -> Vec<(String, String)> {
        if !tracking_on(config) {
            return Vec::new();
        }
        // Stored as INFO labels them (`50`, `99.9`).
        let percentiles: Vec<(String, f64)> = config
            .get_by_name("latency-tracking-info-percentiles")
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| Some((p.to_string(), p.parse().ok()?)))
            .collect();
        let mut rows: Vec<&Entry> = self.by_command.values().collect();
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        rows.into_iter()
            .map(|e| {
                let values: Vec<String> = percentiles
                    .iter()
                    .map(|(label, p)| {
                        let ns = e.histogram.value_at_percentile(*p);
                        format!("p{}={:.3}", label, ns as f64 / 1000.0)
                    })
                    .collect();
                (
                    format!("latency_percentiles_usec_{}", e.name),
                    values.join(","),
                )
            })
            .collect()
    }

    /// LATENCY HISTOGRAM with no names: every command that has a histogram, by name.
    pub fn all_reply(&self) -> Reply {
        let mut rows: Vec<&Entry> = self.by_command.values().collect();
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        Reply::Map(rows.into_iter().map(entry_reply).collect())
    }

    /// LATENCY HISTOGRAM name ...: for each name that is a command, its histogram if it has
    /// one and its subcommands' that have one. Unknown names are skipped and a name given
    /// twice is answered twice, as Redis does.
    pub fn some_reply(&self, commands: &[Option<&'static Command>]) -> Reply {
        let mut out = Vec::new();
        for cmd in commands.iter().flatten() {
            if let Some(e) = self.by_command.get(&key(cmd)) {
                out.push(entry_reply(e));
            }
            for sub in cmd.subcommands {
                if let Some(e) = self.by_command.get(&key(sub)) {
                    out.push(entry_reply(e));
                }
            }
        }
        Reply::Map(out)
    }
}

fn entry_reply(e: &Entry) -> (Reply, Reply) {
    let cdf = e
        .histogram
        .cdf()
        .into_iter()
        .map(|(us, n)| (Reply::Int(us), Reply::Int(n as i64)))
        .collect();
    (
        Reply::Bulk(Bytes::from(e.name.clone())),
        Reply::Map(vec![
            (
                Reply::Bulk(Bytes::from_static(b"calls")),
                Reply::Int(e.histogram.total() as i64),
            ),
            (
                Reply::Bulk(Bytes::from_static(b"histogram_usec")),
                Reply::Map(cdf),
            ),
        ]),
    )
}
