//! The latency monitor (LATENCY LATEST / HISTORY / RESET): per event class ("command",
//! "fast-command"), the latency of every command whose own execution took at least
//! `latency-monitor-threshold` milliseconds, one sample per second (the worst of that second),
//! the last `HISTORY_LEN` seconds that had one, and the all-time maximum.
//!
//! Durations come from the same monotonic measurement as the slow log's; the sample's time
//! is the engine's "now" in Unix seconds. Besides commands, the active expiry reports its
//! cycles as "expire-cycle" and eviction as "eviction-cycle", as Redis names them.
//!
//! `report.rs` draws LATENCY GRAPH and writes LATENCY DOCTOR from these series;
//! `histogram.rs` and `tracking.rs` are latency-tracking's per-command histograms.

pub mod histogram;
mod report;
pub mod tracking;

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;

use crate::config::Config;
use crate::reply::Reply;

/// Samples kept per event, as Redis keeps.
pub const HISTORY_LEN: usize = 160;

#[derive(Debug, Default)]
struct Series {
    /// (Unix seconds, milliseconds), oldest first.
    samples: VecDeque<(i64, u64)>,
    max_ms: u64,
}

#[derive(Debug, Default)]
pub struct LatencyMonitor {
    /// Sorted by name, so LATEST and DOCTOR list events in a stable order.
    events: BTreeMap<String, Series>,
    /// `Config::generation` the threshold was read at.
    generation: Option<u64>,
    threshold_ms: u64,
}

impl LatencyMonitor {
    /// Whether commands must be timed for the monitor (a threshold of 0 turns it off).
    /// Asked after every command: inline, the threshold re-read out of line.
    #[inline]
    pub fn enabled(&mut self, config: &Config) -> bool {
        if self.generation != Some(config.generation) {
            self.reread(config);
        }
        self.threshold_ms > 0
    }

    #[cold]
    fn reread(&mut self, config: &Config) {
        self.generation = Some(config.generation);
        self.threshold_ms = config
            .stored("latency-monitor-threshold")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0); // its default
    }

    /// latency-monitor-threshold as last read by `enabled`.
    pub fn threshold_ms(&self) -> u64 {
        self.threshold_ms
    }

    /// Adds a sample for `event` if `ms` reaches the threshold.
    #[inline]
    pub fn record(&mut self, config: &Config, event: &str, ms: u64, time_s: i64) {
        if self.enabled(config) && ms >= self.threshold_ms {
            self.add(event, ms, time_s);
        }
    }

    fn add(&mut self, event: &str, ms: u64, time_s: i64) {
        let series = self.events.entry(event.to_string()).or_default();
        series.max_ms = series.max_ms.max(ms);
        match series.samples.back_mut() {
            Some(last) if last.0 == time_s => last.1 = last.1.max(ms),
            _ => {
                series.samples.push_back((time_s, ms));
                if series.samples.len() > HISTORY_LEN {
                    series.samples.pop_front();
                }
            }
        }
    }

    /// LATENCY LATEST: per event, its name, the last sample's time and latency, the maximum.
    pub fn latest(&self) -> Reply {
        Reply::Array(
            self.events
                .iter()
                .filter_map(|(name, s)| {
                    let (t, ms) = *s.samples.back()?;
                    Some(Reply::Array(vec![
                        Reply::Bulk(Bytes::from(name.clone())),
                        Reply::Int(t),
                        Reply::Int(ms as i64),
                        Reply::Int(s.max_ms as i64),
                    ]))
                })
                .collect(),
        )
    }

    /// LATENCY HISTORY event: its samples, oldest first; empty for an unknown event.
    pub fn history(&self, event: &str) -> Reply {
        let samples = self.events.get(event).map(|s| &s.samples);
        Reply::Array(
            samples
                .into_iter()
                .flatten()
                .map(|&(t, ms)| Reply::Array(vec![Reply::Int(t), Reply::Int(ms as i64)]))
                .collect(),
        )
    }

    /// LATENCY RESET [event ...]: how many events had data and lost it.
    pub fn reset(&mut self, events: &[&[u8]]) -> usize {
        if events.is_empty() {
            let n = self.events.len();
            self.events.clear();
            return n;
        }
        events
            .iter()
            .filter(|e| {
                self.events
                    .remove(String::from_utf8_lossy(e).as_ref())
                    .is_some()
            })
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_per_second_and_threshold() {
        let mut c = Config::default();
        let mut m = LatencyMonitor::default();
        m.record(&c, "command", 500, 1);
        assert_eq!(m.latest(), Reply::Array(vec![]));
        c.set_by_name("latency-monitor-threshold", "10").unwrap();
        m.record(&c, "command", 9, 1);
        m.record(&c, "command", 20, 1);
        m.record(&c, "command", 15, 1);
        m.record(&c, "command", 12, 2);
        let pair = |t, ms| Reply::Array(vec![Reply::Int(t), Reply::Int(ms)]);
        assert_eq!(
            m.history("command"),
            Reply::Array(vec![pair(1, 20), pair(2, 12)])
        );
        assert_eq!(m.reset(&[b"nope", b"command"]), 1);
        assert_eq!(m.history("command"), Reply::Array(vec![]));
    }
}
