//! The count rules HRANDFIELD, SRANDMEMBER and ZRANDMEMBER share: which elements a count
//! picks, and how a reply of |count| picks with repeats is bounded.
//!
//! Redis writes such a reply into the client's output as it goes, so its size is bounded
//! only by the client's output limit: Redis 7.0 breaks out of the loop once the client is
//! marked to close for its output, and closes it without sending any of it. redlab does the
//! same where a limit can stop the reply (`Engine::output_watch`): the picks are drawn and
//! encoded one by one (`Draws`) and the client is closed when its output would pass the
//! limit. Where none can (no limit for the client's class, a script's or a transaction's
//! command), the reply is built in memory, and a count past `MAX_PICKS` is refused instead
//! (a difference from Redis, listed in tests/conformance/DIFFERENCES.md).

use bytes::BytesMut;

use crate::client_output::OutputWatch;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::{self, Reply};
use crate::rng::EngineRng;
use crate::session::ConnId;

/// The most elements a random-member reply may hold when no output limit can stop it.
/// Redis streams a reply of any length, so an absurd negative count (say -10^12) keeps it
/// busy until it runs out of memory; redlab builds such a reply in memory before sending it
/// and refuses a larger count up front with `too_many_picks` instead. Any count up to this
/// many is answered exactly.
pub(crate) const MAX_PICKS: u64 = 1 << 24;

/// The error for a count past `MAX_PICKS` (checked after the key's type, as Redis checks
/// WRONGTYPE before it starts producing elements).
pub(crate) fn too_many_picks() -> Reply {
    Reply::err(errors::too_many_picks(MAX_PICKS))
}

/// A count parsed as Redis's `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)`.
pub(crate) fn parse_count(arg: &[u8]) -> Result<i64, Reply> {
    match numfmt::parse_i64(arg) {
        None => Err(Reply::err(errors::NOT_INTEGER)),
        Some(i64::MIN) => Err(Reply::err(errors::COUNT_NOT_IN_LONG_RANGE)),
        Some(n) => Ok(n),
    }
}

/// How the elements of a reply with a count are chosen.
pub(crate) enum Picks {
    /// Chosen up front: all of them in order when count >= len, distinct ones (in
    /// collection order) for a smaller positive count, |count| with repeats for a negative
    /// one that no output limit can stop.
    Chosen(Vec<usize>),
    /// |count| with repeats for a client whose output limit can stop the reply.
    Drawn(Draws),
}

/// Which elements `call`'s count picks from a collection of `len` (> 0). Errors when no
/// output limit bounds the reply and it would pass `MAX_PICKS`.
pub(crate) fn picks(e: &mut Engine, call: &Call, len: usize, count: i64) -> Result<Picks, Reply> {
    if count >= 0 && count as u64 >= len as u64 {
        return Ok(Picks::Chosen((0..len).collect()));
    }
    if count < 0 {
        if let Some(watch) = e.output_watch(call) {
            return Ok(Picks::Drawn(Draws {
                rng: e.rng.clone(),
                len,
                n: count.unsigned_abs(),
                watch,
                out: BytesMut::new(),
                ended: Ended::Complete,
            }));
        }
    }
    if count.unsigned_abs() > MAX_PICKS {
        return Err(too_many_picks());
    }
    Ok(Picks::Chosen(if count >= 0 {
        e.rng.distinct(len, count as usize)
    } else {
        e.rng.indices(len, count.unsigned_abs() as usize)
    }))
}

/// |count| picks with repeats, drawn and encoded one at a time under the client's output
/// limit. The draws come from a copy of the engine's generator (the collection they index
/// is borrowed from the engine meanwhile), given back by `finish`: the same picks, in the
/// same order, as `EngineRng::indices` would make.
pub(crate) struct Draws {
    rng: EngineRng,
    len: usize,
    n: u64,
    watch: OutputWatch,
    /// The reply so far, in the client's protocol.
    out: BytesMut,
    ended: Ended,
}

/// How a run of `Draws` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// Every pick was written.
    Complete,
    /// The client went over its output limit: it is to be closed, the reply dropped.
    OverLimit,
    /// `MAX_PICKS` picks were written without reaching the limit (one set far above any
    /// reply redlab builds in memory), and more were asked for.
    TooMany,
}

impl Draws {
    /// Writes the reply: an array header of `items` (the wire count: twice the picks for
    /// RESP2 pairs), then each pick through `write(index, out)`, checking the client's
    /// output limit after each one.
    pub(crate) fn run(&mut self, items: u64, mut write: impl FnMut(usize, &mut BytesMut)) {
        reply::put_array_len(&mut self.out, items);
        let cap = self.n.min(MAX_PICKS);
        for _ in 0..cap {
            let i = self.rng.below(self.len);
            write(i, &mut self.out);
            if self.watch.over(self.out.len()) {
                self.ended = Ended::OverLimit;
                return;
            }
        }
        self.ended = if self.n > cap {
            Ended::TooMany
        } else {
            Ended::Complete
        };
    }

    /// The number of picks asked for.
    pub(crate) fn count(&self) -> u64 {
        self.n
    }

    /// The command's result once `run` is over: the encoded reply; or, for a client that
    /// went over its limit, nothing, the client closed; or the `MAX_PICKS` refusal.
    pub(crate) fn finish(self, e: &mut Engine, conn: ConnId) -> CmdResult {
        e.rng = self.rng;
        match self.ended {
            Ended::Complete => Ok(Reply::Raw(self.out.freeze())),
            Ended::OverLimit => {
                e.close_for_output(conn, self.watch.held_with(self.out.len()));
                Ok(Reply::None)
            }
            Ended::TooMany => Err(too_many_picks()),
        }
    }
}

#[cfg(test)]
mod tests;
