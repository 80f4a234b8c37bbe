//! A client's reply buffer as Redis 7.0 sizes it, for CLIENT LIST's rbs/rbp/obl/oll/omem,
//! tot-mem, and the output figure client-output-buffer-limit and maxmemory-clients use.
//!
//! Why a model: Redis 7.0 gives each client a fixed reply buffer (16 KiB when it connects)
//! that holds the first replies waiting to be written; only what overflows it goes to the
//! reply list, and only the list counts as output (omem). The buffer itself is part of the
//! client's memory whether it is used or not. clientsCron resizes it from its recent peak:
//! down to the peak (at least 1 KiB) when the peak is under half of it, doubled (up to
//! 16 KiB) when a reply filled it; the peak is forgotten every 5 s
//! (DEBUG REPLYBUFFER PEAK-RESET-TIME). A new client starts with its peak at the buffer's
//! size, so it keeps 16 KiB for its first 5 seconds.
//!
//! Tests depend on these figures: Redis's unit/client-eviction sets maxmemory-clients to the
//! exact sum of the clients' tot-mem, so a reply that Redis keeps in the buffer must not
//! count as output here either, or one client too many is evicted.
//!
//! The shell records the most output it held (`NetMeters::set_unsent`); the engine's tick
//! runs the cron (`Engine::resize_reply_buffers`).

use std::sync::atomic::Ordering;

use crate::engine::Engine;
use crate::session::{NetMeters, Session};

/// PROTO_REPLY_CHUNK_BYTES: a new client's buffer, and the most the cron grows one to.
pub(crate) const REPLY_CHUNK: u64 = 16 * 1024;
/// PROTO_REPLY_MIN_BYTES: the least the cron shrinks one to.
const REPLY_MIN: u64 = 1024;
/// reply_buffer_peak_reset_time's default, in ms.
pub(crate) const DEFAULT_PEAK_RESET_MS: i64 = 5000;

/// One client's reply buffer, kept by the engine in its session.
#[derive(Debug, Clone)]
pub struct ReplyBuf {
    /// buf_usable_size: the buffer's size (CLIENT LIST rbs).
    pub size: u64,
    /// The peak as of the last reset; the shell's meter holds what was reached since.
    peak_base: u64,
    /// When the peak was last reset, engine clock ms.
    peak_reset_ms: i64,
}

impl ReplyBuf {
    pub fn new(now_ms: i64) -> ReplyBuf {
        ReplyBuf {
            size: REPLY_CHUNK,
            peak_base: REPLY_CHUNK,
            peak_reset_ms: now_ms,
        }
    }

    /// buf_peak (CLIENT LIST rbp): the most the buffer held since the last reset.
    pub fn peak(&self, net: &NetMeters) -> u64 {
        self.peak_base
            .max(net.reply_peak.load(Ordering::Relaxed))
            .min(self.size)
    }
}

/// Redis's knobs for the resize cron, set by DEBUG REPLYBUFFER.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplyBufKnobs {
    /// reply_buffer_resizing_enabled: off, the cron neither resizes nor resets peaks.
    pub resizing: bool,
    /// reply_buffer_peak_reset_time in ms; negative for never.
    pub peak_reset_ms: i64,
}

impl Default for ReplyBufKnobs {
    fn default() -> Self {
        ReplyBufKnobs {
            resizing: true,
            peak_reset_ms: DEFAULT_PEAK_RESET_MS,
        }
    }
}

/// What changed in one look at a client (for INFO's reply_buffer_shrinks/expands).
#[derive(Debug, PartialEq, Eq)]
enum Resize {
    None,
    Shrunk,
    Expanded,
}

/// clientsCronResizeOutputBuffer for one client.
fn cron(buf: &mut ReplyBuf, net: &NetMeters, knobs: ReplyBufKnobs, now_ms: i64) -> Resize {
    if !knobs.resizing {
        return Resize::None;
    }
    let peak = buf.peak(net);
    let (new_size, resize) = if buf.size / 2 >= REPLY_MIN && peak < buf.size / 2 {
        (REPLY_MIN.max(peak + 1), Resize::Shrunk)
    } else if buf.size * 2 < REPLY_CHUNK * 2 && peak == buf.size {
        (REPLY_CHUNK.min(buf.size * 2), Resize::Expanded)
    } else {
        (0, Resize::None)
    };
    if knobs.peak_reset_ms >= 0 && now_ms - buf.peak_reset_ms >= knobs.peak_reset_ms {
        // What the buffer holds now (bufpos) is the new peak.
        buf.peak_base = NetMeters::get(&net.unsent).min(buf.size);
        net.reply_peak.store(0, Ordering::Relaxed);
        buf.peak_reset_ms = now_ms;
    }
    if new_size != 0 {
        buf.size = crate::client_query::jemalloc_class(new_size);
    }
    resize
}

/// Room in one block of the reply list: a 16 KiB request plus the block's 16-byte header is
/// a 20480-byte jemalloc allocation, and the block takes over the slack.
const BLOCK_ROOM: u64 = 20464;
/// What Redis counts per block (omem): its room, the block's header and its list node.
const BLOCK_COST: u64 = BLOCK_ROOM + 16 + 24;

/// A client's output as Redis holds it: CLIENT LIST's obl, oll and omem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Output {
    /// Bytes in the reply buffer (not counted as output: the buffer is part of the client).
    pub in_buffer: u64,
    /// Blocks of the reply list.
    pub blocks: u64,
    /// What the list costs: the figure output limits and client memory use.
    pub memory: u64,
}

/// Output as Redis splits it: the first bytes in the reply buffer, the rest in list blocks
/// counted whole (redis-server 7.0.15 shows omem = oll x 20504 for a subscriber that does
/// not read). Written as if nothing had been sent yet: once a slow client's socket took part
/// of it, Redis has emptied the buffer first and the list holds all that is left, which this
/// counts up to one buffer short.
pub(crate) fn output(s: &Session) -> Output {
    let pending = s.pending_output();
    let in_buffer = pending.min(s.reply_buf.size);
    let blocks = (pending - in_buffer).div_ceil(BLOCK_ROOM);
    Output {
        in_buffer,
        blocks,
        memory: blocks * BLOCK_COST,
    }
}

impl Engine {
    /// Redis's clientsCron for reply buffers; `resize_query_buffers` runs it at the same pace.
    pub(crate) fn resize_reply_buffers(&mut self) {
        let knobs = self.reply_buf_knobs;
        let now = self.now_ms;
        for s in self.sessions.values_mut() {
            match cron(&mut s.reply_buf, &s.net, knobs, now) {
                Resize::Shrunk => self.stats.reply_buffer_shrinks += 1,
                Resize::Expanded => self.stats.reply_buffer_expands += 1,
                Resize::None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs() -> ReplyBufKnobs {
        ReplyBufKnobs::default()
    }

    #[test]
    fn a_new_client_keeps_16k_until_its_first_peak_reset_then_shrinks_to_1k() {
        let net = NetMeters::default();
        let mut b = ReplyBuf::new(0);
        net.set_unsent(5);
        net.set_unsent(0);
        assert_eq!(cron(&mut b, &net, knobs(), 100), Resize::None);
        assert_eq!(cron(&mut b, &net, knobs(), 4_900), Resize::None);
        assert_eq!(b.size, 16 * 1024);
        // The reset forgets the initial peak; the resize decided in the same pass used it.
        assert_eq!(cron(&mut b, &net, knobs(), 5_000), Resize::None);
        assert_eq!(b.peak(&net), 0);
        assert_eq!(cron(&mut b, &net, knobs(), 5_100), Resize::Shrunk);
        assert_eq!(b.size, 1024);
    }

    #[test]
    fn a_shrink_keeps_room_for_the_peak_in_a_jemalloc_class() {
        let net = NetMeters::default();
        let mut b = ReplyBuf::new(0);
        cron(&mut b, &net, knobs(), 5_000);
        net.set_unsent(3_000);
        net.set_unsent(0);
        assert_eq!(cron(&mut b, &net, knobs(), 5_100), Resize::Shrunk);
        assert_eq!(b.size, 3_072);
    }

    #[test]
    fn a_full_buffer_doubles_up_to_16k() {
        let net = NetMeters::default();
        let mut b = ReplyBuf::new(0);
        cron(&mut b, &net, knobs(), 5_000);
        cron(&mut b, &net, knobs(), 5_100);
        assert_eq!(b.size, 1024);
        net.set_unsent(50_000);
        assert_eq!(cron(&mut b, &net, knobs(), 5_200), Resize::Expanded);
        assert_eq!(b.size, 2048);
        for t in 0..10 {
            cron(&mut b, &net, knobs(), 5_300 + t);
        }
        assert_eq!(b.size, 16 * 1024);
    }

    #[test]
    fn with_resizing_off_nothing_moves_and_peaks_are_kept() {
        let net = NetMeters::default();
        let mut b = ReplyBuf::new(0);
        let off = ReplyBufKnobs {
            resizing: false,
            ..knobs()
        };
        assert_eq!(cron(&mut b, &net, off, 60_000), Resize::None);
        assert_eq!(b.size, 16 * 1024);
        assert_eq!(b.peak(&net), 16 * 1024);
    }

    #[test]
    fn a_peak_reset_time_of_never_keeps_the_first_peak() {
        let net = NetMeters::default();
        let mut b = ReplyBuf::new(0);
        let never = ReplyBufKnobs {
            peak_reset_ms: -1,
            ..knobs()
        };
        cron(&mut b, &net, never, 60_000);
        cron(&mut b, &net, never, 70_000);
        assert_eq!(b.size, 16 * 1024);
    }
}
