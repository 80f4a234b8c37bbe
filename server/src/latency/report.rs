//! The two human-readable views of the latency monitor: LATENCY GRAPH (Redis's ASCII
//! sparkline of one event's samples, laid out as 7.0.15 lays it out) and LATENCY DOCTOR (a
//! report in redlab's own words: per event its spikes, average, spread and worst, and what
//! usually causes that kind of event).

use super::{LatencyMonitor, Series};

/// Columns of the graph; a longer series wraps into another block.
const GRAPH_COLS: usize = 80;
/// Text rows of the graph itself (each has three heights: `_`, `o`, `#`).
const GRAPH_ROWS: usize = 4;
const FILL: [u8; 3] = [b'_', b'o', b'#'];

/// How long ago `then` was, as the graph labels a sample: seconds, minutes, hours or days.
fn ago(now_s: i64, then_s: i64) -> String {
    let d = now_s - then_s;
    match d {
        _ if d < 60 => format!("{d}s"),
        _ if d < 3600 => format!("{}m", d / 60),
        _ if d < 86_400 => format!("{}h", d / 3600),
        _ => format!("{}d", d / 86_400),
    }
}

/// One block of at most GRAPH_COLS samples: the bars, a blank line, then each sample's label
/// written downwards under its bar.
fn render_block(out: &mut String, values: &[u64], labels: &[String], min: u64, max: u64) {
    let steps = (FILL.len() * GRAPH_ROWS) as u64;
    let range = (max - min).max(1);
    let heights: Vec<u64> = values
        .iter()
        .map(|v| ((v - min) * steps / range).min(steps - 1))
        .collect();
    for row in 0..GRAPH_ROWS {
        // The lowest text row shows heights 0-2, the one above 3-5, and so on; a bar taller
        // than a row fills it with `|`.
        let base = ((GRAPH_ROWS - 1 - row) * FILL.len()) as i64;
        for &h in &heights {
            let idx = h as i64 - base;
            out.push(match idx {
                0..=2 => FILL[idx as usize] as char,
                3.. => '|',
                _ => ' ',
            });
        }
        out.push('\n');
    }
    out.push_str(&" ".repeat(values.len()));
    out.push('\n');
    let longest = labels.iter().map(String::len).max().unwrap_or(0);
    for i in 0..longest {
        for l in labels {
            out.push(l.as_bytes().get(i).map_or(' ', |&b| b as char));
        }
        out.push('\n');
    }
}

/// A series' figures for DOCTOR.
struct Figures {
    samples: usize,
    avg: u64,
    mad: u64,
    period_s: f64,
}

fn figures(s: &Series, now_s: i64) -> Figures {
    let n = s.samples.len().max(1) as u64;
    let avg = s.samples.iter().map(|&(_, ms)| ms).sum::<u64>() / n;
    let mad = s
        .samples
        .iter()
        .map(|&(_, ms)| ms.abs_diff(avg))
        .sum::<u64>()
        / n;
    let first = s.samples.front().map_or(now_s, |&(t, _)| t);
    Figures {
        samples: s.samples.len(),
        avg,
        mad,
        period_s: (now_s - first).max(0) as f64 / n as f64,
    }
}

/// What usually makes an event of this class slow, and what to look at.
fn advice(event: &str) -> &'static str {
    match event {
        "command" => {
            "Slow commands: look at SLOWLOG GET for the commands and arguments; commands over \
             large values (SORT, ZUNIONSTORE, KEYS, SMEMBERS of a big set) and long scripts \
             are the usual causes."
        }
        "fast-command" => {
            "Commands flagged O(1) or O(log N) were slow: the process was probably not \
             scheduled (a loaded machine, swapping, or a pause of the whole host)."
        }
        "expire-cycle" => {
            "The active expiry took long: many keys reached their deadline together, or an \
             expired key held a large value. Spreading deadlines helps."
        }
        "eviction-cycle" => {
            "Eviction took long: memory was far over maxmemory, so many keys had to go at \
             once, or the evicted keys held large values."
        }
        _ => "See the event's samples with LATENCY HISTORY.",
    }
}

impl LatencyMonitor {
    /// LATENCY GRAPH event: None when the event has no samples.
    pub fn graph(&self, event: &str, now_s: i64) -> Option<String> {
        let s = self.events.get(event)?;
        let values: Vec<u64> = s.samples.iter().map(|&(_, ms)| ms).collect();
        let labels: Vec<String> = s.samples.iter().map(|&(t, _)| ago(now_s, t)).collect();
        let min = values.iter().copied().min().unwrap_or(0);
        let max = values.iter().copied().max().unwrap_or(0);
        let mut out = format!(
            "{} - high {} ms, low {} ms (all time high {} ms)\n{}\n",
            event,
            max,
            min,
            s.max_ms,
            "-".repeat(GRAPH_COLS)
        );
        for (i, (v, l)) in values
            .chunks(GRAPH_COLS)
            .zip(labels.chunks(GRAPH_COLS))
            .enumerate()
        {
            if i > 0 {
                out.push('\n');
            }
            render_block(&mut out, v, l, min, max);
        }
        Some(out)
    }

    /// LATENCY DOCTOR: a plain-text analysis of every event recorded so far.
    pub fn doctor(&self, threshold_ms: u64, now_s: i64) -> String {
        if threshold_ms == 0 {
            return "The latency monitor is off, so there is nothing to analyse. Turn it on \
                    with CONFIG SET latency-monitor-threshold <milliseconds>: events that \
                    take at least that long are then recorded.\n"
                .to_string();
        }
        let events: Vec<_> = self
            .events
            .iter()
            .filter(|(_, s)| !s.samples.is_empty())
            .collect();
        if events.is_empty() {
            return format!(
                "No latency event reached the threshold of {threshold_ms} ms since the \
                 monitor was started or reset.\n"
            );
        }
        let mut out = format!(
            "Latency report: {} event class(es) reached the threshold of {} ms.\n\n",
            events.len(),
            threshold_ms
        );
        for (i, (name, s)) in events.iter().enumerate() {
            let f = figures(s, now_s);
            out.push_str(&format!(
                "{}. {}: {} spike(s), average {} ms, mean deviation {} ms, one every {:.2} s; \
                 worst ever {} ms.\n   {}\n",
                i + 1,
                name,
                f.samples,
                f.avg,
                f.mad,
                f.period_s,
                s.max_ms,
                advice(name)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn graph_draws_bars_and_labels() {
        let mut c = Config::default();
        c.set_by_name("latency-monitor-threshold", "1").unwrap();
        let mut m = LatencyMonitor::default();
        m.record(&c, "command", 10, 100);
        m.record(&c, "command", 40, 101);
        assert!(m.graph("nope", 102).is_none());
        let g = m.graph("command", 102).unwrap();
        let lines: Vec<&str> = g.lines().collect();
        assert_eq!(
            lines[0],
            "command - high 40 ms, low 10 ms (all time high 40 ms)"
        );
        assert_eq!(lines[1].len(), 80);
        // The low sample is the lowest mark; the high one reaches the top row.
        assert_eq!(&lines[2..6], &[" #", " |", " |", "_|"]);
        assert_eq!(&lines[6..], &["  ", "21", "ss"]);
    }

    #[test]
    fn doctor_speaks_of_each_event() {
        let mut c = Config::default();
        let m0 = LatencyMonitor::default();
        assert!(m0.doctor(0, 5).contains("off"));
        c.set_by_name("latency-monitor-threshold", "5").unwrap();
        let mut m = LatencyMonitor::default();
        assert!(m.doctor(5, 5).contains("No latency event"));
        m.record(&c, "expire-cycle", 30, 1);
        let d = m.doctor(5, 5);
        assert!(d.contains("1. expire-cycle: 1 spike(s), average 30 ms"));
    }
}
