//! A client's query buffer as Redis 7.0-7.4 size it, for CLIENT LIST's qbuf-free, tot-mem and
//! INFO's client memory.
//!
//! Why a model: redlab reads into its own buffer, whose capacity says nothing a Redis user
//! would recognise. Redis 7 gives every client a private sds buffer that its reads grow
//! (16 KiB at a time, doubling past that), that a big argument replaces with one of its own
//! size, and that clientsCron shrinks: to nothing after 2 s idle, or down to the recent peak
//! when it is over 32 KiB and twice that peak. Tools and tests read those numbers (Redis's
//! unit/querybuf watches an idle client's buffer go to 0 and a big one shrink), so redlab
//! keeps them as Redis would have them, with jemalloc's size classes, and reports those.
//! Redis 8.0 and Valkey 8.0 replaced this with a buffer shared between clients
//! (`since::REUSABLE_QUERY_BUFFER`); under those profiles the shell's own figures are shown.
//!
//! The shell tells the model what it read and where the commands ended (`Batch`); the
//! engine's tick runs the cron (`Engine::resize_query_buffers`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::Engine;

/// PROTO_IOBUF_LEN: what one read asks for.
pub(crate) const IOBUF_LEN: u64 = 16 * 1024;
/// PROTO_MBULK_BIG_ARG: an argument this long gets a buffer of its own.
const BIG_ARG: u64 = 32 * 1024;
/// PROTO_RESIZE_THRESHOLD: smaller buffers are never shrunk to their peak.
const RESIZE_THRESHOLD: u64 = 32 * 1024;
/// SDS_MAX_PREALLOC: greedy growth doubles below it and adds it above.
const MAX_PREALLOC: u64 = 1024 * 1024;
/// clientsCronResizeQueryBuffer leaves a buffer alone unless this much of it is unused.
const WASTE_WORTH_RESIZING: u64 = 4 * 1024;
/// It frees an idle buffer after this many whole seconds without a command.
const IDLE_SECONDS: i64 = 2;

/// The modelled buffer of one connection, kept beside the shell's meters (atomics: the shell
/// writes it, the engine's cron and CLIENT LIST read and shrink it, on one thread).
#[derive(Debug, Default)]
pub struct QueryBufModel {
    /// sdsalloc(querybuf): room in the buffer, bytes held included.
    alloc: AtomicU64,
    /// querybuf_peak: the most the buffer held since the cron last looked.
    peak: AtomicU64,
}

/// What one batch of reads brought, for `QueryBufModel::after_batch`.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Query bytes held before the batch's reads.
    pub before: u64,
    /// Bytes the reads added.
    pub arrived: u64,
    /// Where each complete command ended, counted from the start of the held bytes.
    pub command_ends: Vec<u64>,
    /// The last complete command's last argument, when it was a big one and nothing followed
    /// it: Redis hands that buffer to the argument and starts a new one of its size.
    pub big_last_arg: Option<u64>,
    /// A big argument still arriving: the buffer is made room for all of it.
    pub pending_big_arg: Option<u64>,
}

impl Batch {
    /// Starts a batch: `before` bytes were held before its reads, `now` are held after them.
    pub(crate) fn begin(&mut self, before: u64, now: u64) {
        self.before = before.min(now);
        self.arrived = now - self.before;
        self.command_ends.clear();
        self.big_last_arg = None;
        self.pending_big_arg = None;
    }

    /// Notes a command that ended `held_after` bytes before the end of the batch's data, its
    /// last argument `last_arg` bytes long.
    pub(crate) fn command_done(&mut self, held_after: u64, last_arg: Option<u64>) {
        let end = (self.before + self.arrived).saturating_sub(held_after);
        self.command_ends.push(end);
        self.big_last_arg = last_arg.filter(|&l| l >= BIG_ARG && held_after == 0);
    }
}

/// The room jemalloc gives an allocation of `n` bytes: its size class (four per doubling
/// past 128 bytes, multiples of 16 below).
pub(crate) fn jemalloc_class(n: u64) -> u64 {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return n.div_ceil(16) * 16;
    }
    let base = 1u64 << (63 - (n - 1).leading_zeros());
    let step = base / 4;
    n.div_ceil(step) * step
}

/// The room an sds string made for `len` bytes ends up with: the header its length needs,
/// the allocator's size class, capped at what the header can count.
fn sds_room(len: u64) -> u64 {
    let (header, max) = sds_header(len);
    (jemalloc_class(header + len + 1) - header - 1).min(max)
}

/// The header an sds string of `len` bytes gets, and the most that header can count.
fn sds_header(len: u64) -> (u64, u64) {
    match len {
        0..=255 => (3, 255),
        256..=65_535 => (5, 65_535),
        65_536..=0xFFFF_FFFF => (9, 0xFFFF_FFFF),
        _ => (17, u64::MAX),
    }
}

/// What an sds string with `room` bytes of room takes from the allocator (sdsZmallocSize):
/// an empty buffer still costs its smallest class.
pub(crate) fn sds_malloc_size(room: u64) -> u64 {
    jemalloc_class(sds_header(room).0 + room + 1)
}

impl QueryBufModel {
    pub(crate) fn alloc(&self) -> u64 {
        self.alloc.load(Ordering::Relaxed)
    }

    /// The room the buffer of a client in the middle of a command has: at least one read's
    /// worth, since reading the command made room for it.
    pub(crate) fn alloc_while_running(&self) -> u64 {
        self.alloc().max(sds_room(IOBUF_LEN))
    }

    /// Replays the batch's reads as readQueryFromClient would have made them: each read asks
    /// for 16 KiB (non-greedy growth while the buffer is smaller than that, greedy after),
    /// and the commands complete by the end of a read leave the buffer before the next.
    pub(crate) fn after_batch(&self, b: &Batch) {
        let mut alloc = self.alloc();
        let mut peak = self.peak.load(Ordering::Relaxed);
        let (mut read_to, end) = (b.before, b.before + b.arrived);
        let mut start = b
            .command_ends
            .iter()
            .copied()
            .filter(|&e| e <= read_to)
            .max()
            .unwrap_or(0);
        while read_to < end {
            let held = read_to - start;
            let avail = alloc.saturating_sub(held);
            let readlen = if alloc < IOBUF_LEN {
                if avail < IOBUF_LEN {
                    alloc = sds_room(held + IOBUF_LEN);
                }
                // Room made to measure counts as used, so the cron does not take it back
                // before the read fills it.
                peak = peak.max(held + IOBUF_LEN);
                IOBUF_LEN
            } else {
                if avail < IOBUF_LEN {
                    let want = held + IOBUF_LEN;
                    let want = if want < MAX_PREALLOC {
                        want * 2
                    } else {
                        want + MAX_PREALLOC
                    };
                    alloc = sds_room(want);
                }
                alloc - held
            };
            read_to = (read_to + readlen).min(end);
            peak = peak.max(read_to - start);
            start = b
                .command_ends
                .iter()
                .copied()
                .filter(|&e| e <= read_to)
                .max()
                .unwrap_or(start)
                .max(start);
        }
        // A big argument is read into room made for exactly it (and counted in the peak),
        // then handed over whole, the client getting a new buffer of the same size.
        if let Some(len) = b.big_last_arg {
            alloc = sds_room(len + 2);
            peak = peak.max(len + 2);
        } else if let Some(len) = b.pending_big_arg.filter(|&l| l >= BIG_ARG) {
            if alloc < len + 2 {
                alloc = sds_room(len + 2);
            }
            peak = peak.max(len + 2);
        }
        self.alloc.store(alloc, Ordering::Relaxed);
        self.peak.store(peak, Ordering::Relaxed);
    }

    /// clientsCronResizeQueryBuffer for one client holding `held` bytes, `idle_s` whole
    /// seconds since its last command, with a bulk of `pending_bulk` bytes being read.
    pub(crate) fn cron(&self, held: u64, idle_s: i64, pending_bulk: u64) {
        let alloc = self.alloc();
        let peak = self.peak.load(Ordering::Relaxed);
        if alloc.saturating_sub(held) > WASTE_WORTH_RESIZING {
            if idle_s > IDLE_SECONDS {
                self.alloc.store(held, Ordering::Relaxed);
            } else if alloc > RESIZE_THRESHOLD && alloc / 2 > peak {
                let size = held.max(peak).max(pending_bulk);
                self.alloc.store(size, Ordering::Relaxed);
            }
        }
        self.peak.store(held.max(pending_bulk), Ordering::Relaxed);
    }
}

impl Engine {
    /// Redis's clientsCron for query buffers, at its pace (hz times a second of the engine's
    /// clock); the tick calls it.
    pub(crate) fn resize_query_buffers(&mut self) {
        let hz: i64 = self
            .config
            .stored("hz")
            .and_then(|v| v.parse().ok())
            .unwrap_or(10);
        let every_ms = (1000 / hz.max(1)).max(1);
        if self.now_ms - self.query_cron_ms < every_ms {
            return;
        }
        self.query_cron_ms = self.now_ms;
        let now_s = self.now_ms.div_euclid(1000);
        for s in self.sessions.values() {
            let idle_s = now_s - s.last_interaction_ms.div_euclid(1000);
            let held = crate::session::NetMeters::get(&s.net.qbuf);
            s.net.query.cron(held, idle_s, 0);
        }
        self.resize_reply_buffers();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures redis-server 7.0.15 (jemalloc) showed in CLIENT LIST for the same steps.
    #[test]
    fn rooms_are_those_redis_reports() {
        assert_eq!(sds_room(IOBUF_LEN), 20474);
        assert_eq!(sds_room(40_002), 40954);
        assert_eq!(sds_room(400_002), 458742);
        assert_eq!(jemalloc_class(160), 160);
        assert_eq!(jemalloc_class(161), 192);
        // CLIENT LIST tot-mem counts these for an idle buffer and a 16 KiB one.
        assert_eq!(sds_malloc_size(0), 8);
        assert_eq!(sds_malloc_size(20474), 20480);
    }

    fn batch(before: u64, arrived: u64, ends: &[u64]) -> Batch {
        Batch {
            before,
            arrived,
            command_ends: ends.to_vec(),
            ..Batch::default()
        }
    }

    #[test]
    fn a_small_command_leaves_one_read_of_room_then_idleness_frees_it() {
        let m = QueryBufModel::default();
        m.after_batch(&batch(0, 33, &[33]));
        assert_eq!(m.alloc(), 20474);
        m.cron(0, 1, 0);
        assert_eq!(m.alloc(), 20474, "under 32 KiB: not shrunk to its peak");
        m.cron(0, 3, 0);
        assert_eq!(m.alloc(), 0, "idle over 2 s: freed");
    }

    #[test]
    fn a_big_argument_gets_its_own_buffer_which_shrinks_to_the_next_peak() {
        let m = QueryBufModel::default();
        let cmd = 400_000 + 31;
        let mut b = batch(0, cmd, &[]);
        b.command_done(0, Some(400_000));
        m.after_batch(&b);
        assert_eq!(m.alloc(), 458742);
        m.cron(0, 0, 0);
        assert_eq!(
            m.alloc(),
            458742,
            "the peak of the big read is still recent"
        );
        m.after_batch(&batch(0, 128, &[128]));
        m.cron(0, 0, 0);
        assert_eq!(m.alloc(), 128, "shrunk to the small command's peak");
        assert_eq!(
            m.alloc_while_running(),
            20474,
            "reading a command makes room for 16 KiB"
        );
        m.after_batch(&batch(0, 33, &[33]));
        assert_eq!(
            m.alloc(),
            20474,
            "the next read makes room for 16 KiB again"
        );
    }

    /// redis-server 7.0.15: a 20 KB SET right after a 40 KB one, with no cron run between,
    /// leaves the 40 KB peak standing; the first cron keeps the buffer, the second frees it.
    #[test]
    fn a_big_arguments_peak_holds_off_the_first_shrink() {
        let m = QueryBufModel::default();
        let mut b = batch(0, 40_031, &[]);
        b.command_done(0, Some(40_000));
        m.after_batch(&b);
        assert_eq!(m.alloc(), 40954);
        m.after_batch(&batch(0, 20_030, &[20_030]));
        assert_eq!(m.alloc(), 40954);
        m.cron(0, 0, 0);
        assert_eq!(m.alloc(), 40954);
        m.cron(0, 0, 0);
        assert_eq!(m.alloc(), 0);
    }

    #[test]
    fn a_command_longer_than_one_read_grows_the_buffer_greedily() {
        let m = QueryBufModel::default();
        m.after_batch(&batch(0, 20_030, &[20_030]));
        assert_eq!(m.alloc(), 81910);
        m.cron(0, 0, 0);
        assert_eq!(m.alloc(), 20030);
    }

    #[test]
    fn commands_done_between_reads_leave_the_buffer() {
        let m = QueryBufModel::default();
        // 100 commands of 1 KiB arrive together: each read's commands are run before the
        // next read, so the buffer never needs more than one read's room.
        let ends: Vec<u64> = (1..=100).map(|i| i * 1024).collect();
        m.after_batch(&batch(0, 100 * 1024, &ends));
        assert_eq!(m.alloc(), 20474);
    }
}
