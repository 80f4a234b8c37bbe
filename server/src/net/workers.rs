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
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a thread waits for its next server before it exits.
pub(crate) const IDLE_FOR: Duration = Duration::from_secs(1);

/// What a server thread runs: one server, on the thread's runtime, to its end.
pub(crate) type Job = Box<dyn FnOnce(&tokio::runtime::Runtime) + Send>;

/// A parked thread and the place its next job is left.
struct Slot {
    job: Mutex<Option<Job>>,
    thread: Thread,
}

/// Threads waiting for a server, the most recently parked last.
static IDLE: Mutex<Vec<Arc<Slot>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A job's panic never happens while one of these is held; recover anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job` on a parked server thread, or on a new one when none is parked. Returns once
/// the job is handed over; the job itself reports when it is serving.
pub(crate) fn run(job: Job) -> io::Result<()> {
    // The most recently parked thread: its stack and caches are the warmest.
    let parked = lock(&IDLE).pop();
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
        job(&rt);
        match next_job(&slot) {
            Some(next) => job = next,
            None => return,
        }
    }
}

/// Parks until a server is handed over, or `IDLE_FOR` passes without one (then `None`: the
/// thread exits).
fn next_job(slot: &Arc<Slot>) -> Option<Job> {
    lock(&IDLE).push(slot.clone());
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
