//! Sandboxed EVAL states built ahead of need, so a server's first script does not wait for one.
//!
//! Building a state (the libraries, redis.*, the read-only globals proxy, the error handler)
//! is most of a fresh server's first EVAL, and a suite that starts a server per test pays it
//! per test. A few states are kept ready in a process-wide pool, refilled by a background
//! thread after each take. Each state is still used by one engine only, from a fresh start:
//! a pooled state has never run anything, so it is the state `Runtime::new` would build, with
//! every sandbox property. The builder thread exits when it has had nothing to build for
//! `IDLE_FOR`, so a process that stops making engines keeps no extra thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::runtime::{Kind, Runtime};

/// States kept ready: enough for the next test's server while the one after is built.
const READY_TARGET: usize = 2;

/// How long the builder waits for a take before it exits.
const IDLE_FOR: Duration = Duration::from_secs(1);

/// A state no thread is using.
struct Idle(Runtime);

// SAFETY: a Lua state is plain memory with no tie to the thread that built it: nothing in it
// refers to a thread-local (the natives read theirs on the thread that calls them, at call
// time), and its allocator (mimalloc) frees blocks allocated on another thread. An `Idle` is
// reachable only through `READY`'s mutex until it is taken, so one thread at a time touches it.
unsafe impl Send for Idle {}

/// Whether states are prepared ahead (see `set_enabled`). Off by default: a state built on
/// the builder thread keeps its blocks in that thread's allocator heap, and after memory
/// bombs the process held 138 MB it no longer used (tests/memory_returns.rs); on two loaded
/// cores the builder also made a whole server-per-test slower, not faster.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns preparing states ahead on or off (the default) for the whole process. Off, every
/// engine builds its state on its own thread at its first script and no builder thread is
/// started: for a process that must not start threads of its own, and to measure the
/// difference (`cargo bench --bench per_test`).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

static READY: Mutex<Vec<Idle>> = Mutex::new(Vec::new());
/// A builder thread exists (building, or waiting for the next take).
static BUILDER: AtomicBool = AtomicBool::new(false);
/// The builder's thread, to wake it after a take.
static BUILDER_THREAD: Mutex<Option<std::thread::Thread>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An EVAL state with this memory limit: a prepared one when the pool has one, else built
/// here. Either way the pool is refilled in the background.
pub(crate) fn eval_runtime(memory_limit: usize) -> Runtime {
    if !ENABLED.load(Ordering::Relaxed) {
        return Runtime::new(Kind::Eval, memory_limit);
    }
    let taken = lock(&READY).pop();
    warm();
    match taken {
        Some(Idle(mut rt)) => {
            rt.set_memory_limit(memory_limit);
            rt
        }
        None => Runtime::new(Kind::Eval, memory_limit),
    }
}

/// Makes sure the pool is being filled: wakes the builder, or starts one.
pub(crate) fn warm() {
    if !ENABLED.load(Ordering::Relaxed) || lock(&READY).len() >= READY_TARGET {
        return;
    }
    if BUILDER.swap(true, Ordering::AcqRel) {
        if let Some(t) = lock(&BUILDER_THREAD).as_ref() {
            t.unpark();
        }
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("redlab-lua-prepare".into())
        .spawn(builder);
    if spawned.is_err() {
        // No thread for it: states are built on first use, as without the pool.
        BUILDER.store(false, Ordering::Release);
    }
}

fn builder() {
    *lock(&BUILDER_THREAD) = Some(std::thread::current());
    loop {
        while lock(&READY).len() < READY_TARGET {
            // The limit is set again when the state is taken.
            let rt = Runtime::new(Kind::Eval, 1 << 20);
            lock(&READY).push(Idle(rt));
        }
        std::thread::park_timeout(IDLE_FOR);
        if lock(&READY).len() >= READY_TARGET {
            // Nothing taken for a while: exit. A take that raced with this sees BUILDER
            // false (or finds a state) and starts a new builder when needed.
            *lock(&BUILDER_THREAD) = None;
            BUILDER.store(false, Ordering::Release);
            // A take between the check and the store saw BUILDER true and only unparked
            // this thread: look once more, and carry on building if it did.
            if lock(&READY).len() >= READY_TARGET || BUILDER.swap(true, Ordering::AcqRel) {
                return;
            }
            *lock(&BUILDER_THREAD) = Some(std::thread::current());
        }
    }
}
