//! The server threads' timers live on a thread of their own, so that a server thread's
//! runtime has no time driver and parks straight on its I/O driver.
//!
//! Why: a tokio runtime built with timers parks through its time driver on every turn of
//! its loop: it locks the timer wheel, finds the next deadline, reads the clock, parks the
//! I/O driver, then reads the clock again and locks the wheel again to fire what is due.
//! A server thread parks once per request it serves, and that was ~2.3k instructions of
//! every request (callgrind, cluster_start's throughput loop), for timers that fire a
//! hundred times a second at most (the 10 ms ticker, the replication link's retries and
//! acknowledgements). Here those timers are registered with one process-wide runtime that
//! does nothing else: when one fires, its thread wakes the server thread's task through the
//! runtime's ordinary cross-thread wake-up (the I/O driver's eventfd), which is what the
//! server thread's own epoll timeout did before.
//!
//! The timer thread lives as long as a server thread holds it (`Timers` is counted): a
//! process that stops starting servers gets back to the threads it had, as `workers` wants.
//! Code that runs outside a server thread (a unit test with its own runtime) gets its own
//! runtime's timers.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::time::{Interval, Sleep};

/// The timer thread's runtime, and what stops it.
pub(crate) struct Timers {
    handle: Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The timer thread, while some server thread holds it.
static SHARED: Mutex<Weak<Timers>> = Mutex::new(Weak::new());

thread_local! {
    /// The timers this server thread's tasks register with (`hold`).
    static HELD: RefCell<Option<Arc<Timers>>> = const { RefCell::new(None) };
}

impl Timers {
    fn start() -> std::io::Result<Timers> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        let handle = rt.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("redlab-timers".into())
            .spawn(move || {
                let _ = rt.block_on(stopped);
            })?;
        Ok(Timers {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Timers {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The process's timer thread, started if no server thread holds one.
pub(crate) fn acquire() -> std::io::Result<Arc<Timers>> {
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = shared.upgrade() {
        return Ok(t);
    }
    let t = Arc::new(Timers::start()?);
    *shared = Arc::downgrade(&t);
    Ok(t)
}

/// Makes this thread's timers those of `timers` (a server thread, for its whole life);
/// `None` lets them go (the last holder stops the timer thread).
pub(crate) fn hold(timers: Option<Arc<Timers>>) {
    let old = HELD.with(|h| std::mem::replace(&mut *h.borrow_mut(), timers));
    drop(old);
}

/// Runs `make` where tokio registers timers with the timer thread (on a server thread), or
/// with the caller's own runtime (elsewhere).
fn on_timers<T>(make: impl FnOnce() -> T) -> T {
    let handle = HELD.with(|h| h.borrow().as_ref().map(|t| t.handle.clone()));
    match handle {
        Some(handle) => {
            let _entered = handle.enter();
            make()
        }
        None => make(),
    }
}

/// `tokio::time::sleep`, on the timer thread.
pub(crate) fn sleep(d: Duration) -> Sleep {
    on_timers(|| tokio::time::sleep(d))
}

/// `tokio::time::interval`, on the timer thread.
pub(crate) fn interval(period: Duration) -> Interval {
    on_timers(|| tokio::time::interval(period))
}
