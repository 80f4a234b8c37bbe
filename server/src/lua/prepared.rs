//! A sandboxed EVAL state built ahead of need, on the thread that will use it, so a server's
//! first script does not wait for one.
//!
//! Building a state (the libraries, redis.*, the read-only globals proxy, the error handler)
//! is most of a fresh server's first EVAL, and a suite that starts a server per test pays it
//! per test. Server threads are reused between servers (`net::workers`): when a server whose
//! scripts used an EVAL state has finished and no next server is handed to its thread at once,
//! the thread builds one spare state while it waits, and the next server's first script takes
//! it.
//!
//! The spare is built on the thread that will run it, so its memory comes from that thread's
//! allocator heap, as a state built at first use would (a state built on another thread kept
//! its blocks in that thread's heap, and memory freed by scripts was not given back). It has
//! never run anything, so it is the state `Runtime::new` would build at first use, with every
//! sandbox property; it belongs to one thread and is used by one engine, then dropped with
//! it. A thread keeps at most one spare, and drops it when it exits.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::runtime::{Kind, Runtime};

/// Whether spare states are built and used (see `set_enabled`). Off by default: with it on,
/// a server's first EVAL was faster (75-81 us against 93-96), but a whole server-per-test
/// (`cargo bench --bench per_test`, row (c), on two cores shared with a dozen busy
/// processes) was 1-19% slower in each of four runs: the build takes a core the test and
/// the next server need. Memory is given back with it on (tests/memory_returns.rs passes).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns building spare states between servers on or off (the default), for the whole
/// process. Off, every engine builds its state at its first script, and a spare already built
/// is not used. On suits a machine with a core to spare while tests run their bodies.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

thread_local! {
    /// This thread's spare state, ready for the next engine that needs one here.
    static SPARE: Cell<Option<Box<Runtime>>> = const { Cell::new(None) };
    /// An engine on this thread made an EVAL state since the last `prepare_here`: the next
    /// server here is likely to want one too.
    static WANTED: Cell<bool> = const { Cell::new(false) };
}

/// An EVAL state with this memory limit: this thread's spare when it has one, else built here.
pub(crate) fn eval_runtime(memory_limit: usize) -> Box<Runtime> {
    WANTED.with(|w| w.set(true));
    if ENABLED.load(Ordering::Relaxed) {
        if let Some(mut rt) = SPARE.with(Cell::take) {
            rt.set_memory_limit(memory_limit);
            return rt;
        }
    }
    Box::new(Runtime::new(Kind::Eval, memory_limit))
}

/// Whether `prepare_here` would build a spare now: a state was wanted on this thread since
/// the last one was prepared, the thread has none, and spares are on.
pub(crate) fn wanted_here() -> bool {
    WANTED.with(Cell::get)
        && ENABLED.load(Ordering::Relaxed)
        && SPARE.with(|s| {
            let spare = s.take();
            let none = spare.is_none();
            s.set(spare);
            none
        })
}

/// Called by a server thread between two servers: builds this thread's spare when the server
/// that just finished used an EVAL state and the thread has none.
pub(crate) fn prepare_here() {
    if !WANTED.with(|w| w.replace(false)) || !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    SPARE.with(|s| {
        let spare = s.take().unwrap_or_else(|| {
            // The limit is set again when the state is taken.
            let rt = Box::new(Runtime::new(Kind::Eval, 1 << 20));
            // The collector was off while the state was built; one full cycle now, off the
            // next test's path, leaves it as a cycle's end does (next one at twice the heap),
            // instead of running that cycle during the next server's first scripts.
            rt.collect_garbage();
            rt
        });
        s.set(Some(spare));
    });
}

/// Drops this thread's spare (a server thread that exits, before its allocator heap goes).
pub(crate) fn discard_here() {
    drop(SPARE.with(Cell::take));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spare_is_built_only_after_a_state_was_wanted_and_is_taken_once() {
        set_enabled(true);
        discard_here();
        WANTED.with(|w| w.set(false));
        prepare_here();
        assert!(SPARE.with(|s| {
            let v = s.take();
            let none = v.is_none();
            s.set(v);
            none
        }));
        let first = eval_runtime(1 << 20);
        prepare_here();
        let spare_at = SPARE.with(|s| {
            let v = s.take();
            let at = v.as_deref().map(|r| r.l);
            s.set(v);
            at
        });
        assert!(spare_at.is_some());
        let second = eval_runtime(1 << 20);
        assert_eq!(Some(second.l), spare_at);
        assert_ne!(first.l, second.l);
        // Taken: the next one is built afresh.
        let third = eval_runtime(1 << 20);
        assert_ne!(third.l, second.l);
        discard_here();
    }
}
