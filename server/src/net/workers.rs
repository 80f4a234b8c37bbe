//! Server threads, parked between servers and reused.
//!
//! A test suite that starts a fresh server per test would otherwise pay, per test, for a new
//! thread (an 8 MB stack mapped and faulted in) and a new tokio runtime (an epoll instance,
//! an eventfd, the timer wheel), then join that thread when the server is dropped. Here a
//! server thread that has finished serving parks, with its runtime, and the next
//! `Server::start` in the process hands it the new server. A thread parked longer than
//! `IDLE_FOR` exits, so a process that stops starting servers goes back to the threads and
//! file descriptors it had before.
//!
//! One thread still serves one server at a time, as before: the engine is single-threaded
//! and owned by that thread for the server's whole life.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a thread waits for its next server before it exits.
pub(crate) const IDLE_FOR: Duration = Duration::from_secs(1);

/// What a server thread runs: one server, on the thread's runtime, to its end. Returns
/// whether `stopping` was called for it (its thread is then awaited by `run`).
pub(crate) type Job = Box<dyn FnOnce(&tokio::runtime::Runtime) -> bool + Send>;

/// How long a thread that has just parked waits for a server before it builds a spare Lua
/// state (`lua::prepared`): a server handed over meanwhile does not wait for that build.
const PREPARE_AFTER: Duration = Duration::from_micros(50);

/// How long `run` waits for the thread of a server being stopped before it starts a thread.
const WAIT_FOR_STOPPING: Duration = Duration::from_millis(2);

/// A parked thread and the place its next job is left.
struct Slot {
    job: Mutex<Option<Job>>,
    thread: Thread,
}

/// Threads waiting for a server, the most recently parked last.
static IDLE: Mutex<Vec<Arc<Slot>>> = Mutex::new(Vec::new());
/// Signalled when a thread of a stopping server parks.
static PARKED: Condvar = Condvar::new();
/// Servers dropped whose thread has not parked yet. A suite drops a server and starts the
/// next at once: rather than a new thread, the next server waits (briefly) for that one.
static STOPPING: AtomicUsize = AtomicUsize::new(0);

/// A server was told to stop (its job will return true): its thread is coming back.
pub(crate) fn stopping() {
    STOPPING.fetch_add(1, Ordering::AcqRel);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A job's panic never happens while one of these is held; recover anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job` on a parked server thread, or on a new one when none is parked. Returns once
/// the job is handed over; the job itself reports when it is serving.
pub(crate) fn run(job: Job) -> io::Result<()> {
    // The most recently parked thread: its stack and caches are the warmest.
    let parked = {
        let mut idle = lock(&IDLE);
        let give_up = Instant::now() + WAIT_FOR_STOPPING;
        loop {
            if let Some(slot) = idle.pop() {
                break Some(slot);
            }
            let now = Instant::now();
            if STOPPING.load(Ordering::Acquire) == 0 || now >= give_up {
                break None;
            }
            idle = PARKED
                .wait_timeout(idle, give_up - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    };
    if let Some(slot) = parked {
        *lock(&slot.job) = Some(job);
        slot.thread.unpark();
        return Ok(());
    }
    std::thread::Builder::new()
        .name("redlab-server".into())
        .stack_size(8 << 20) // as large as redis-server's main thread: scripts run here
        .spawn(move || worker(job))?;
    Ok(())
}

/// A server thread: its runtime is built once and serves job after job.
fn worker(first: Job) {
    // Its engines keep their Lua states in this thread's heap (`lua::prepared`).
    crate::lua::prepared::mark_server_thread();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            // The job never runs: dropping it tells its `Server::start` why not.
            tracing::error!("redlab: cannot build the runtime: {}", e);
            drop(first);
            return;
        }
    };
    let slot = Arc::new(Slot {
        job: Mutex::new(None),
        thread: std::thread::current(),
    });
    let mut job = first;
    loop {
        let was_stopping = job(&rt);
        match next_job(&slot, was_stopping) {
            Some(next) => job = next,
            None => {
                crate::lua::prepared::discard_here();
                return;
            }
        }
    }
}

/// Parks until a server is handed over, or `IDLE_FOR` passes without one (then `None`: the
/// thread exits).
fn next_job(slot: &Arc<Slot>, was_stopping: bool) -> Option<Job> {
    {
        let mut idle = lock(&IDLE);
        idle.push(slot.clone());
        if was_stopping {
            STOPPING.fetch_sub(1, Ordering::AcqRel);
        }
        PARKED.notify_one();
    }
    // While no server is waiting for this thread (a test is running its body), it builds the
    // Lua state the next server's first script will take: in this thread's allocator heap, as
    // the server's own would be. A suite that starts the next server at once finds the thread
    // free instead, and that server builds its state at its first script, as without a spare.
    if crate::lua::prepared::wanted_here() {
        std::thread::park_timeout(PREPARE_AFTER);
        if lock(&slot.job).is_none() {
            crate::lua::prepared::prepare_here();
        }
    }
    let deadline = Instant::now() + IDLE_FOR;
    loop {
        if let Some(job) = lock(&slot.job).take() {
            return Some(job);
        }
        let now = Instant::now();
        if now < deadline {
            std::thread::park_timeout(deadline - now);
            continue;
        }
        let mut idle = lock(&IDLE);
        if let Some(i) = idle.iter().position(|s| Arc::ptr_eq(s, slot)) {
            idle.swap_remove(i);
            return None;
        }
        drop(idle);
        // Taken off the list by a `run` that is about to leave its job here.
        loop {
            if let Some(job) = lock(&slot.job).take() {
                return Some(job);
            }
            std::thread::park();
        }
    }
}
