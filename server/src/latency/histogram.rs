//! The per-command latency histogram Redis 7.0 keeps for latency-tracking: an HDR histogram
//! of nanoseconds from 1 ns to 1 s with two significant digits, which is what LATENCY
//! HISTOGRAM and INFO latencystats read.
//!
//! The layout is fixed by those three parameters, so it is written out as constants rather
//! than computed: 256 sub-buckets (the smallest power of two holding 2 * 10^2 distinct values),
//! each bucket after the first covering twice the range of the one before at half the
//! resolution, and 23 buckets to reach past 10^9. A value's slot is `counts_index`; a slot
//! stands for every value between `lowest_equivalent` and `highest_equivalent` of its value.
//! The two readings (percentiles, the logarithmic walk) give the same figures as the C
//! histogram Redis links, quirks included (see `cdf`).

/// The smallest value recorded: a shorter duration counts as 1 ns.
pub const MIN_VALUE: i64 = 1;
/// The largest value recorded: a longer duration counts as 1 s.
pub const MAX_VALUE: i64 = 1_000_000_000;

/// log2 of half the sub-bucket count.
const HALF_MAGNITUDE: u32 = 7;
const HALF_COUNT: i64 = 1 << HALF_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (1 << (HALF_MAGNITUDE + 1)) - 1;
const BUCKETS: usize = 23;
/// One slot per value of the first bucket, then the upper half of each later bucket.
const COUNTS_LEN: usize = (BUCKETS + 1) << HALF_MAGNITUDE;

/// Where the logarithmic walk reports first (ns), and the factor between reports.
const FIRST_REPORT: i64 = 1024;

/// Slots per chunk of `Histogram::chunks`: half a bucket.
const CHUNK: usize = HALF_COUNT as usize;

/// The counts are kept in chunks of 128 slots, each allocated when a value first lands in
/// it: a server records into a few neighbouring buckets, and zeroing all 24 KiB of slots
/// for each command's first call was most of what a fresh engine's first EVAL cost.
#[derive(Default)]
pub struct Histogram {
    chunks: [Option<Box<[u64; CHUNK]>>; COUNTS_LEN / CHUNK],
    total: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .finish()
    }
}

fn bucket_index(value: i64) -> u32 {
    // The smallest power of two above the value, counted from the first bucket's top.
    (64 - (value as u64 | SUB_BUCKET_MASK).leading_zeros()) - (HALF_MAGNITUDE + 1)
}

fn sub_bucket_index(value: i64, bucket: u32) -> i64 {
    value >> bucket
}

fn counts_index(value: i64) -> usize {
    let bucket = bucket_index(value);
    let sub = sub_bucket_index(value, bucket);
    (((bucket as i64 + 1) << HALF_MAGNITUDE) + (sub - HALF_COUNT)) as usize
}

/// The value a slot stands for (its lowest).
fn value_at_index(index: usize) -> i64 {
    let mut bucket = (index as i64 >> HALF_MAGNITUDE) - 1;
    let mut sub = (index as i64 & (HALF_COUNT - 1)) + HALF_COUNT;
    if bucket < 0 {
        sub -= HALF_COUNT;
        bucket = 0;
    }
    sub << bucket
}

fn lowest_equivalent(value: i64) -> i64 {
    let bucket = bucket_index(value);
    sub_bucket_index(value, bucket) << bucket
}

fn highest_equivalent(value: i64) -> i64 {
    lowest_equivalent(value) + (1i64 << bucket_index(value)) - 1
}

impl Histogram {
    /// Counts one duration of `ns` nanoseconds, clamped to the histogram's range.
    pub fn record(&mut self, ns: i64) {
        let v = ns.clamp(MIN_VALUE, MAX_VALUE);
        let i = counts_index(v);
        self.chunks[i / CHUNK].get_or_insert_with(|| Box::new([0; CHUNK]))[i % CHUNK] += 1;
        self.total += 1;
    }

    /// The count in slot `i`.
    fn count(&self, i: usize) -> u64 {
        self.chunks[i / CHUNK].as_ref().map_or(0, |c| c[i % CHUNK])
    }

    /// How many durations were counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The duration (ns) at or below which `percentile` percent of the counted ones fall:
    /// the highest value of the slot holding that rank (the lowest, for percentile 0).
    pub fn value_at_percentile(&self, percentile: f64) -> i64 {
        let p = percentile.min(100.0);
        let rank = (((p / 100.0) * self.total as f64) + 0.5) as u64;
        let rank = rank.max(1);
        let mut seen = 0;
        let mut value = 0;
        for (i, c) in (0..COUNTS_LEN).map(|i| (i, self.count(i))) {
            seen += c;
            if seen >= rank {
                value = value_at_index(i);
                break;
            }
        }
        if percentile == 0.0 {
            lowest_equivalent(value)
        } else {
            highest_equivalent(value)
        }
    }

    /// LATENCY HISTOGRAM's `histogram_usec`: (microseconds, cumulative count) at each power
    /// of two from 1024 ns, where the count grew. As in the C histogram's logarithmic walk,
    /// a report is made at the first slot at or past its level, and that slot's own count
    /// and highest value are already included (so 1024 ns reports as "1 µs", the slot
    /// 1024-1031 ns included).
    pub fn cdf(&self) -> Vec<(i64, u64)> {
        let mut out = Vec::new();
        // The walk's position: the slot index (-1 before the first), its value and highest
        // equivalent, and the counts up to it.
        let mut index: i64 = -1;
        let mut value: i64 = 0;
        let mut highest: i64 = 0;
        let mut cumulative: u64 = 0;
        let mut level = FIRST_REPORT;
        let mut level_low = lowest_equivalent(level);
        let mut previous = 0;
        loop {
            let more = cumulative < self.total;
            let next_past_level = ((index + 1) as usize) < COUNTS_LEN
                && value_at_index((index + 1) as usize) > level_low;
            if !more && !next_past_level {
                break;
            }
            loop {
                if value >= level_low {
                    level *= 2;
                    level_low = lowest_equivalent(level);
                    break;
                }
                index += 1;
                if index as usize >= COUNTS_LEN {
                    break;
                }
                cumulative += self.count(index as usize);
                value = value_at_index(index as usize);
                highest = highest_equivalent(value);
            }
            if cumulative > previous {
                out.push((highest / 1000, cumulative));
            }
            previous = cumulative;
            if index as usize >= COUNTS_LEN {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_covers_the_range() {
        assert_eq!(counts_index(0), 0);
        assert_eq!(counts_index(255), 255);
        assert_eq!(counts_index(256), 256);
        assert_eq!(counts_index(511), 383);
        assert!(counts_index(MAX_VALUE) < COUNTS_LEN);
        for i in [0, 1, 200, 256, 300, 1000, 3071] {
            assert_eq!(counts_index(value_at_index(i)), i);
        }
        assert_eq!(lowest_equivalent(1030), 1024);
        assert_eq!(highest_equivalent(1030), 1031);
        assert_eq!(highest_equivalent(6000), 6015);
    }

    #[test]
    fn percentiles_read_slot_tops() {
        // As a real redis-server reported for 50 SETs: 4 at ≤4 µs, 44 more at ≤8, 2 at ≤16.
        let mut h = Histogram::default();
        for _ in 0..4 {
            h.record(3_000);
        }
        for _ in 0..44 {
            h.record(6_000);
        }
        for _ in 0..2 {
            h.record(12_000);
        }
        assert_eq!(h.value_at_percentile(50.0), 6_015);
        assert_eq!(h.value_at_percentile(99.0), 12_031);
        assert_eq!(h.value_at_percentile(99.9), 12_031);
        assert_eq!(h.cdf(), vec![(4, 4), (8, 48), (16, 50)]);
    }

    #[test]
    fn extremes_are_clamped_and_walked_to_the_end() {
        let mut h = Histogram::default();
        h.record(0);
        h.record(i64::MAX);
        assert_eq!(h.total(), 2);
        let cdf = h.cdf();
        assert_eq!(cdf.first(), Some(&(1, 1)));
        assert_eq!(cdf.last().map(|c| c.1), Some(2));
        assert_eq!(h.value_at_percentile(100.0), 1_002_438_655);
    }
}
