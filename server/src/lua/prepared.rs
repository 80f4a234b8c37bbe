//! Sandboxed EVAL states built ahead of need, so an engine's first script does not wait for
//! one.
//!
//! Building a state (the libraries, redis.*, the read-only globals proxy, the error handler)
//! is most of a fresh engine's first EVAL, and a suite that makes an engine or a server per
//! test pays it per test. States are built ahead in two places:
//!
//! - **Server threads** (`net::workers`) are reused between servers: when a server whose
//!   scripts used an EVAL state has finished and no next server is handed to its thread at
//!   once, the thread builds one spare state while it waits, and the next server's first
//!   script takes it (`set_enabled`, off by default). The spare is built on the thread that
//!   will run it, so its memory comes from that thread's allocator heap, as a state built at
//!   first use would: tests/memory_returns.rs checks a server gives memory back.
//! - **Every engine** (a server's, an in-process `Engine` on a test's thread, the explorer)
//!   takes a state from a small process-wide pool (`set_pool_enabled`, on by default),
//!   after its server thread's spare if it has one. A background
//!   thread refills the pool after each take and exits once nothing was taken for
//!   `BUILDER_IDLE`, so a process that stops making engines goes back to its own threads.
//!   Lua's allocator is mimalloc, which frees a block from any thread and allocates what a
//!   state grows into (a realloc included) in the heap of the thread running it, so a
//!   script's garbage lives and dies in the engine's thread as with a state built there.
//!   The builder runs at the idle scheduling class: it uses a core nobody else wants, and
//!   on a busy machine it does not take the CPU from the engine it builds for (woken at
//!   normal priority it preempted the test that had just taken a state, and an in-process
//!   engine's first EVAL was slower than building inline). When it cannot run, the pool is
//!   empty and engines build their own states, as without it.
//!
//! Server threads take from the pool too. Built at the first EVAL, the state was most of a
//! server-per-test's first script: ~180k of the server thread's ~360k instructions per test
//! (callgrind, `PER_TEST_ONLY=c cargo bench --bench per_test`), on the test's path between
//! its request and its reply. (An earlier measurement at load 17 found a pooled state slower
//! there, 141 us against 121; at that load the idle-class builder hardly runs and the figures
//! are the scheduler's.) What a script allocates after the take comes from the server
//! thread's own heap. Where a state was built does not decide whether a memory bomb's
//! memory returns: mimalloc purges freed pages only a second later, whichever thread freed
//! them, so a script that hits the limit forces a collection (`runtime::run`), and
//! tests/memory_returns.rs checks each bomb's memory is back at once.
//!
//! A state from either place has never run anything: it is the state `Runtime::new` would
//! build at first use, with every sandbox property, and it is used by one engine and dropped
//! with it. When the pool is empty (engines made faster than the builder refills it), the
//! engine builds its own state, as without a pool.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

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
    /// This thread serves servers (`net::workers`): it may keep a spare of its own.
    static SERVER_THREAD: Cell<bool> = const { Cell::new(false) };
    /// The last server this thread served ran a script: see `take_used_last`.
    static USED: Cell<bool> = const { Cell::new(false) };
}

/// Whether engines take their state from the pool.
static POOL_ENABLED: AtomicBool = AtomicBool::new(true);

/// How many states the pool keeps ready: one per engine a test makes, and one more for a
/// test that makes two.
const POOL_SIZE: usize = 2;

/// How long the builder thread waits for a state to be taken before it exits.
const BUILDER_IDLE: Duration = Duration::from_secs(1);

/// A state waiting in the pool. It was built on the builder thread and is handed, whole, to
/// the one engine that takes it.
struct Pooled(Box<Runtime>);

// SAFETY: a Lua state has no tie to the thread that built it: it is reached only through
// this box, by one thread at a time (the builder until it pushes the box into the pool under
// the mutex, then the engine that pops it), and its allocator (mimalloc) frees a block from
// any thread.
unsafe impl Send for Pooled {}

struct Pool {
    ready: Vec<Pooled>,
    /// A builder thread is running (or about to): no other is started.
    builder: bool,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    ready: Vec::new(),
    builder: false,
});
/// Signalled when a state is taken from the pool: the builder refills it.
static TAKEN: Condvar = Condvar::new();

fn lock_pool() -> MutexGuard<'static, Pool> {
    // Nothing panics while the lock is held; recover anyway.
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Turns the process-wide pool of EVAL states on (the default) or off. Off, states already
/// pooled are dropped and every engine builds its own state at its first script (or takes its
/// server thread's spare, `set_enabled`).
pub fn set_pool_enabled(on: bool) {
    POOL_ENABLED.store(on, Ordering::Relaxed);
    if !on {
        let drained = std::mem::take(&mut lock_pool().ready);
        drop(drained);
    }
}

/// Marks the calling thread as a server thread (`net::workers`).
pub(crate) fn mark_server_thread() {
    SERVER_THREAD.with(|s| s.set(true));
}

/// A state from the pool, if one is ready; starts or wakes the builder to replace it.
fn take_pooled() -> Option<Box<Runtime>> {
    // The builder holds the lock a moment at a time, but at idle priority it can be
    // preempted there for long on a busy machine: an engine never waits for it, and builds
    // its own state instead.
    let mut pool = match POOL.try_lock() {
        Ok(pool) => pool,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    let taken = pool.ready.pop().map(|p| p.0);
    if !pool.builder {
        pool.builder = true;
        drop(pool);
        let spawned = std::thread::Builder::new()
            .name("redlab-lua-prep".into())
            .spawn(builder);
        if spawned.is_err() {
            lock_pool().builder = false;
        }
    } else {
        drop(pool);
        TAKEN.notify_one();
    }
    taken
}

/// The builder thread: fills the pool, waits for a take, and exits after `BUILDER_IDLE`
/// without one (or when the pool is turned off).
fn builder() {
    // SAFETY: sched_setscheduler with pid 0 changes only the calling thread's policy, and
    // reads the parameter struct, which lives across the call. Refused, the builder runs at
    // normal priority.
    #[cfg(target_os = "linux")]
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
    let mut pool = lock_pool();
    loop {
        if !POOL_ENABLED.load(Ordering::Relaxed) {
            break;
        }
        if pool.ready.len() < POOL_SIZE {
            drop(pool);
            let rt = fresh_spare();
            pool = lock_pool();
            if POOL_ENABLED.load(Ordering::Relaxed) {
                pool.ready.push(Pooled(rt));
            }
            continue;
        }
        let (next, waited) = TAKEN
            .wait_timeout(pool, BUILDER_IDLE)
            .unwrap_or_else(|e| e.into_inner());
        pool = next;
        if waited.timed_out() && pool.ready.len() >= POOL_SIZE {
            break;
        }
    }
    pool.builder = false;
}

/// A new state ready to be handed over.
fn fresh_spare() -> Box<Runtime> {
    // The limit is set again when the state is taken.
    let rt = Box::new(Runtime::new(Kind::Eval, 1 << 20));
    // The collector was off while the state was built; one full cycle now, off the next
    // engine's path, leaves it as a cycle's end does (next one at twice the heap), instead
    // of running that cycle during the engine's first scripts.
    rt.collect_garbage();
    rt
}

/// An EVAL state with this memory limit: on a server thread its spare when it has one, else
/// one from the pool; else built here.
pub(crate) fn eval_runtime(memory_limit: usize) -> Box<Runtime> {
    if SERVER_THREAD.with(Cell::get) {
        WANTED.with(|w| w.set(true));
        if ENABLED.load(Ordering::Relaxed) {
            if let Some(mut rt) = SPARE.with(Cell::take) {
                rt.set_memory_limit(memory_limit);
                return rt;
            }
        }
    }
    if POOL_ENABLED.load(Ordering::Relaxed) {
        if let Some(mut rt) = take_pooled() {
            rt.set_memory_limit(memory_limit);
            return rt;
        }
    }
    Box::new(Runtime::new(Kind::Eval, memory_limit))
}

/// Whether the last server on this thread ran a script (and forgets it, for the server
/// starting now). A suite runs tests alike: a server whose predecessor ran a script takes its
/// state while it waits for its first connection (`net::server`), not at its first script.
pub(crate) fn take_used_last() -> bool {
    USED.with(|u| u.replace(false))
}

/// Called by a server thread as its server ends: whether that server ran a script (its
/// script cache is not empty), for `take_used_last`.
pub(crate) fn set_used_last(used: bool) {
    USED.with(|u| u.set(used));
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
        let spare = s.take().unwrap_or_else(fresh_spare);
        s.set(Some(spare));
    });
}

/// Drops this thread's spare (a server thread that exits, before its allocator heap goes).
pub(crate) fn discard_here() {
    drop(SPARE.with(Cell::take));
}

#[cfg(test)]
mod tests {
    use super::super::ffi::*;
    use super::*;

    #[test]
    fn a_spare_is_built_only_after_a_state_was_wanted_and_is_taken_once() {
        // Spares belong to server threads; each test runs on a thread of its own.
        mark_server_thread();
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

    #[test]
    fn the_pool_is_refilled_after_a_take_and_its_states_are_sandboxed() {
        // Other tests on this process take from the pool too: only what holds whatever they
        // do is checked.
        let first = eval_runtime(1 << 20);
        let give_up = std::time::Instant::now() + Duration::from_secs(120);
        while lock_pool().ready.is_empty() {
            assert!(
                std::time::Instant::now() < give_up,
                "the pool is never refilled"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let second = eval_runtime(1 << 20);
        assert_ne!(first.l, second.l);
        for rt in [&first, &second] {
            let f = rt.compile(b"x = 1", c"@user_script").expect("compiles");
            // SAFETY: the state is live and used by this thread only; the pushed function is
            // run in protected mode and the stack is reset after.
            let status = unsafe {
                let l = rt.l;
                lua_rawgeti_(l, LUA_REGISTRYINDEX, f);
                let status = lua_pcall(l, 0, 0, 0);
                lua_settop(l, 0);
                status
            };
            assert_ne!(status, 0, "a pooled state lets a script create a global");
        }
    }
}
