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
//! `Server::start` picks the thread first (`take`), registers the server's listener with that
//! thread's runtime from the caller, then hands the server over (`Worker::run`) and returns
//! without waiting for the thread: a connection made at once waits in the listener's backlog
//! while the thread sets the server up, and the test's own work (connecting, its client's
//! handshake) overlaps the thread's.
//!
//! `take` wakes a parked thread as soon as it is chosen, before `start` binds the port, and
//! the woken thread spins (up to `SPIN_FOR`) until its server is handed over. Waking a thread
//! that has slept a while costs more than a request: its core may be halted (a virtual
//! machine's idle vCPU) or busy with another process. Woken only at the hand-off, the
//! thread started 21-27 us after it (load 3-10 on the 2-core test machine, `PER_TEST_ONLY=b`
//! with a timestamp probe), after the test had connected and sent its first request; woken
//! at `take`, the wake-up overlaps the binding of the port. When both cores are busy the
//! woken thread may still run only once the test thread blocks: then it does not help.
//!
//! A suite drops a server and starts the next at once. The dropped server's thread is
//! `finishing` once it has left its loop and only frees what it held (connections, a small
//! dataset, the Lua state): the next server is handed to it then, and it runs that server as
//! soon as it is done, without parking in between or the test waiting for it. A thread
//! freeing a large dataset does not offer itself; the next server waits for it (at most
//! `WAIT_FOR_STOPPING`) or gets a new thread, as a thread stuck in a script past the drop
//! does.
//!
//! One thread still serves one server at a time, as before: the engine is single-threaded
//! and owned by that thread for the server's whole life.

use std::cell::{Cell, RefCell};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

use tokio::runtime::{Handle, Runtime};

use super::server::{FINISHED, RUNNING, STOP_REQUESTED};

/// How long a thread waits for its next server before it exits.
pub(crate) const IDLE_FOR: Duration = Duration::from_secs(1);

/// What a server thread runs: one server, on the thread's runtime, to its end.
pub(crate) type Job = Box<dyn FnOnce(&Runtime) + Send>;

/// How long a thread that has just parked waits for a server before it builds a spare Lua
/// state (`lua::prepared`): a server handed over meanwhile does not wait for that build.
const PREPARE_AFTER: Duration = Duration::from_micros(50);

/// How long `take` waits for the thread of a server being stopped before it starts a thread.
const WAIT_FOR_STOPPING: Duration = Duration::from_millis(2);

/// How long a thread woken by `take` spins for the server it was chosen for before it parks
/// again: `start` binds its port between the two, some 10-20 us.
const SPIN_FOR: Duration = Duration::from_micros(200);

/// A server thread and the place its next job is left.
struct Slot {
    job: Mutex<Option<Job>>,
    /// Chosen by `take`: a job is on its way, the thread spins for it rather than parks.
    expecting: AtomicBool,
    thread: Thread,
    /// The thread's runtime, to register a new server's listener with from `Server::start`.
    handle: Handle,
}

/// The threads a new server can be handed to, and the servers told to stop whose thread has
/// not become one of them yet.
struct Lists {
    /// Parked, the most recently parked last.
    idle: Vec<Arc<Slot>>,
    /// Freeing what their last server held; each takes the next job left in its slot as soon
    /// as it is done.
    finishing: Vec<Arc<Slot>>,
    /// Servers dropped whose thread is neither finishing nor parked yet.
    stopping: usize,
}

static LISTS: Mutex<Lists> = Mutex::new(Lists {
    idle: Vec::new(),
    finishing: Vec::new(),
    stopping: 0,
});
/// Signalled when a thread parks or starts finishing.
static FREED: Condvar = Condvar::new();

thread_local! {
    /// This server thread's slot.
    static CURRENT: RefCell<Option<Arc<Slot>>> = const { RefCell::new(None) };
    /// This thread put itself on the finishing list for the server it is ending.
    static OFFERED: Cell<bool> = const { Cell::new(false) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A job's panic never happens while one of these is held; recover anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A server's `dropped` flag goes from `RUNNING` to `STOP_REQUESTED` (its `Server` was
/// dropped); false when the server had already finished. Under the lists' lock, so the
/// thread's `finishing` sees either both this and the count or neither.
pub(crate) fn request_stop(dropped: &AtomicU8) -> bool {
    let mut lists = lock(&LISTS);
    let asked = dropped
        .compare_exchange(RUNNING, STOP_REQUESTED, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if asked {
        // The next server started may wait for this one's thread rather than start one.
        lists.stopping += 1;
    }
    asked
}

/// Called on a server thread once its server has stopped serving (and again, harmlessly,
/// when everything is freed): marks the server `FINISHED` and, when `light` (what is left to
/// free is small), offers the thread for the next server before it frees it.
pub(crate) fn finishing(dropped: &AtomicU8, light: bool) {
    let mut lists = lock(&LISTS);
    let was = dropped.swap(FINISHED, Ordering::AcqRel);
    if was == FINISHED {
        return;
    }
    if was == STOP_REQUESTED {
        lists.stopping = lists.stopping.saturating_sub(1);
    }
    if light {
        if let Some(slot) = CURRENT.with(|c| c.borrow().clone()) {
            lists.finishing.push(slot);
            OFFERED.with(|o| o.set(true));
        }
    }
    drop(lists);
    FREED.notify_all();
}

/// A server thread chosen for a new server: a parked or finishing one, or a new one (its
/// runtime already built). Dropped without `run`, a chosen thread goes back to waiting.
pub(crate) struct Worker {
    slot: Option<Arc<Slot>>,
    fresh: Option<FreshRuntime>,
    /// A new thread's hold on the timer thread (`timers`), kept for the thread's life.
    timers: Option<Arc<super::timers::Timers>>,
}

/// The runtime of a thread not spawned yet. Dropped on the caller's thread without being
/// handed over (the server could not start), it shuts down without waiting, which is allowed
/// even where blocking is not (a test inside a tokio runtime).
struct FreshRuntime(Option<Runtime>);

impl Drop for FreshRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

impl Worker {
    /// The runtime the server will run on.
    pub(crate) fn handle(&self) -> Handle {
        match (&self.slot, &self.fresh) {
            (Some(slot), _) => slot.handle.clone(),
            (None, Some(FreshRuntime(Some(rt)))) => rt.handle().clone(),
            _ => unreachable!("a worker has a slot or a runtime until it runs"),
        }
    }

    /// Hands `job` to the thread; returns at once (a finishing thread runs it once done).
    pub(crate) fn run(mut self, job: Job) -> io::Result<()> {
        if let Some(slot) = self.slot.take() {
            *lock(&slot.job) = Some(job);
            slot.thread.unpark();
            return Ok(());
        }
        let mut fresh = self.fresh.take().expect("a worker has a runtime");
        let rt = fresh.0.take().expect("a worker has a runtime");
        let handle = rt.handle().clone();
        let timers = self.timers.take();
        let started = std::thread::Builder::new()
            .name("redlab-server".into())
            .stack_size(8 << 20) // as large as redis-server's main thread: scripts run here
            .spawn(move || worker(rt, handle, job, timers));
        started.map(drop)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            // Chosen but not used: a job that does nothing sends the thread back to waiting.
            *lock(&slot.job) = Some(Box::new(|_: &Runtime| {}));
            slot.thread.unpark();
        }
    }
}

/// A server thread for a new server: a parked one (the most recently parked: its stack and
/// caches are the warmest), else one finishing its last server, else, after waiting briefly
/// for the thread of a server being stopped, a new one.
pub(crate) fn take() -> io::Result<Worker> {
    let chosen = {
        let mut lists = lock(&LISTS);
        let give_up = Instant::now() + WAIT_FOR_STOPPING;
        loop {
            if let Some(slot) = lists.idle.pop().or_else(|| lists.finishing.pop()) {
                break Some(slot);
            }
            let now = Instant::now();
            if lists.stopping == 0 || now >= give_up {
                break None;
            }
            lists = FREED
                .wait_timeout(lists, give_up - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    };
    if let Some(slot) = chosen {
        // Woken now, the thread is running by the time `start` hands it the server.
        slot.expecting.store(true, Ordering::Release);
        slot.thread.unpark();
        return Ok(Worker {
            slot: Some(slot),
            fresh: None,
            timers: None,
        });
    }
    // No time driver: the thread parks straight on its I/O driver, and its timers are the
    // timer thread's (`timers` says why).
    let timers = super::timers::acquire()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .on_thread_park(super::busy_poll::before_park)
        .build()?;
    Ok(Worker {
        slot: None,
        fresh: Some(FreshRuntime(Some(rt))),
        timers: Some(timers),
    })
}

/// A server thread: its runtime serves job after job.
fn worker(rt: Runtime, handle: Handle, first: Job, timers: Option<Arc<super::timers::Timers>>) {
    // Its engines keep their Lua states in this thread's heap (`lua::prepared`).
    crate::lua::prepared::mark_server_thread();
    super::timers::hold(timers);
    let slot = Arc::new(Slot {
        job: Mutex::new(None),
        expecting: AtomicBool::new(false),
        thread: std::thread::current(),
        handle,
    });
    CURRENT.with(|c| *c.borrow_mut() = Some(slot.clone()));
    let mut job = first;
    loop {
        job(&rt);
        match next_job(&slot) {
            Some(next) => job = next,
            None => {
                CURRENT.with(|c| c.borrow_mut().take());
                crate::lua::prepared::discard_here();
                // The runtime first: nothing of it may outlive the timers it registered with.
                drop(rt);
                super::timers::hold(None);
                return;
            }
        }
    }
}

/// Waits for the job a `take` that chose this thread leaves in its slot.
fn handed_job(slot: &Slot) -> Job {
    loop {
        if let Some(job) = job_now(slot) {
            return job;
        }
        std::thread::park();
    }
}

/// The job left in the slot, if any; while the thread is expected to get one soon (chosen by
/// `take`), it spins for it up to `SPIN_FOR` first.
fn job_now(slot: &Slot) -> Option<Job> {
    let give_up = Instant::now() + SPIN_FOR;
    loop {
        if let Some(job) = lock(&slot.job).take() {
            slot.expecting.store(false, Ordering::Release);
            return Some(job);
        }
        if !slot.expecting.load(Ordering::Acquire) || Instant::now() >= give_up {
            return None;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
}

/// The next server: the one already handed to this thread while it was finishing, or one
/// handed over while it is parked; `None` when `IDLE_FOR` passes without one (the thread
/// exits).
fn next_job(slot: &Arc<Slot>) -> Option<Job> {
    {
        let mut lists = lock(&LISTS);
        if OFFERED.with(|o| o.replace(false)) {
            match lists.finishing.iter().position(|s| Arc::ptr_eq(s, slot)) {
                Some(i) => {
                    lists.finishing.swap_remove(i);
                }
                None => {
                    // Chosen while finishing: its job is here or on its way.
                    drop(lists);
                    return Some(handed_job(slot));
                }
            }
        }
        lists.idle.push(slot.clone());
    }
    FREED.notify_all();
    // While no server is waiting for this thread (a test is running its body), it builds the
    // Lua state the next server's first script will take: in this thread's allocator heap, as
    // the server's own would be. A suite that starts the next server at once finds the thread
    // free instead, and that server builds its state at its first script, as without a spare.
    if crate::lua::prepared::wanted_here() {
        std::thread::park_timeout(PREPARE_AFTER);
        if lock(&slot.job).is_none() && !slot.expecting.load(Ordering::Acquire) {
            crate::lua::prepared::prepare_here();
        }
    }
    let deadline = Instant::now() + IDLE_FOR;
    loop {
        if let Some(job) = job_now(slot) {
            return Some(job);
        }
        let now = Instant::now();
        if now < deadline {
            std::thread::park_timeout(deadline - now);
            continue;
        }
        let mut lists = lock(&LISTS);
        if let Some(i) = lists.idle.iter().position(|s| Arc::ptr_eq(s, slot)) {
            lists.idle.swap_remove(i);
            return None;
        }
        drop(lists);
        // Taken off the list by a `take` that is about to leave its job here.
        return Some(handed_job(slot));
    }
}
