//! Virtual time for the clients: a paused tokio clock that only the scheduler moves, tied to
//! the server's clock.
//!
//! Client futures are polled inside a current-thread tokio runtime whose clock is paused
//! (tokio's `test-util`), so `tokio::time::sleep`, `timeout`, `interval` and
//! `tokio::time::Instant` work in client code but never wait for real time. Time moves only
//! when the scheduler says so: a clock step or the end of a pause moves it by a set amount,
//! and a timer step lets it run to the next timer (tokio's auto-advance of a paused clock
//! when nothing else can run). Every move is applied to the server clock too, so a client
//! that sleeps past a key's TTL finds the key gone.
//!
//! Each client is polled with a waker of its own: a timer that fires marks its client, and
//! the scheduler polls that client again. A client never runs on its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::time::Instant;

/// How long a timer step waits for a timer when nothing else bounds it: a client that waits
/// longer than this (in virtual time) awaits something other than a timer.
pub(crate) const NO_TIMER_LIMIT: Duration = Duration::from_secs(365 * 24 * 3600);

/// The waker of one client.
pub(crate) struct ClientWake {
    woken: AtomicBool,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Timer firings since the start, across clients.
    fires: AtomicU64,
    /// The timer step waiting for a firing.
    waiting: Mutex<Option<Waker>>,
}

impl Wake for ClientWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.shared.fires.fetch_add(1, Ordering::AcqRel);
        let w = self
            .shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(w) = w {
            w.wake();
        }
    }
}

/// The runtime, the clients' wakers, and where the current schedule started in virtual time.
pub(crate) struct VirtualClock {
    rt: Runtime,
    shared: Arc<Shared>,
    wakes: Vec<Arc<ClientWake>>,
    wakers: Vec<Waker>,
    base: Instant,
    /// Virtual ms since `base`, as of the last move (only the moves below change it).
    now_ms: i64,
}

impl VirtualClock {
    pub fn new() -> VirtualClock {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread tokio runtime");
        let base = {
            let _g = rt.enter();
            Instant::now()
        };
        VirtualClock {
            rt,
            shared: Arc::default(),
            wakes: Vec::new(),
            wakers: Vec::new(),
            base,
            now_ms: 0,
        }
    }

    /// Tasks a client spawned (`tokio::spawn`) that are still alive.
    pub fn spawned_tasks(&self) -> usize {
        self.rt.metrics().num_alive_tasks()
    }

    /// A new schedule with `clients` clients starts now.
    pub fn reset(&mut self, clients: usize) {
        if self.spawned_tasks() > 0 {
            // A client of the last schedule spawned a task: drop it with its runtime.
            let fresh = VirtualClock::new();
            self.rt = fresh.rt;
        }
        while self.wakes.len() < clients {
            let w = Arc::new(ClientWake {
                woken: AtomicBool::new(false),
                shared: self.shared.clone(),
            });
            self.wakers.push(Waker::from(w.clone()));
            self.wakes.push(w);
        }
        for w in &self.wakes {
            w.woken.store(false, Ordering::Release);
        }
        let _g = self.rt.enter();
        self.base = Instant::now();
        self.now_ms = 0;
    }

    /// Runs `f` (a poll of client `i`) inside the runtime, with client `i`'s waker.
    pub fn poll_in<R>(&self, i: usize, f: impl FnOnce(&mut Context<'_>) -> R) -> R {
        let _g = self.rt.enter();
        self.wakes[i].woken.store(false, Ordering::Release);
        let mut cx = Context::from_waker(&self.wakers[i]);
        f(&mut cx)
    }

    /// Whether a timer of client `i` fired since it was last polled.
    pub fn woken(&self, i: usize) -> bool {
        self.wakes[i].woken.load(Ordering::Acquire)
    }

    /// Virtual time since the schedule started, in ms.
    pub fn elapsed_ms(&self) -> i64 {
        self.now_ms
    }

    fn read_now(&mut self) {
        let _g = self.rt.enter();
        self.now_ms = (Instant::now() - self.base).as_millis() as i64;
    }

    /// Moves virtual time forward by `ms`; the timers due fire.
    pub fn advance(&mut self, ms: u64) {
        self.rt
            .block_on(tokio::time::advance(Duration::from_millis(ms)));
        self.read_now();
    }

    /// Lets virtual time run until a client's timer fires, or for `limit` at most; true if
    /// a timer fired.
    pub fn run_to_next_timer(&mut self, limit: Duration) -> bool {
        let wait = WaitFire {
            shared: self.shared.clone(),
            start: self.shared.fires.load(Ordering::Acquire),
        };
        let fired = self
            .rt
            .block_on(async { tokio::time::timeout(limit, wait).await.is_ok() });
        self.read_now();
        fired
    }
}

/// Ready once any client's timer fires.
struct WaitFire {
    shared: Arc<Shared>,
    start: u64,
}

impl Future for WaitFire {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.shared.fires.load(Ordering::Acquire) != self.start {
            return Poll::Ready(());
        }
        *self
            .shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        if self.shared.fires.load(Ordering::Acquire) != self.start {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}
