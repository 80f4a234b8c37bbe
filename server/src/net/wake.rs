//! A wake-up for the one task that waits on it, on the server's own thread.
//!
//! Each connection task waits for its socket or for this, once per request, and the flusher
//! waits for it once per turn. tokio's `Notify` is made for many waiters on many threads: a
//! waiter is put on a list behind a lock when its future is first polled and taken off it
//! when the future is dropped, which a connection's `select!` does on every request its
//! socket (not the notification) woke it for. Here there is one waiter and one thread, so
//! a flag and the waiter's waker do.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
pub(crate) struct LocalNotify {
    /// Set by `notify_one`, taken by the `notified` it lets through (as `Notify`'s permit:
    /// a notification with no one waiting is kept for the next wait).
    permit: Cell<bool>,
    /// The waker of the last wait that did not complete.
    waiter: RefCell<Option<Waker>>,
}

impl LocalNotify {
    pub(crate) fn new() -> LocalNotify {
        LocalNotify::default()
    }

    /// Wakes the waiting task, or lets its next wait return at once.
    pub(crate) fn notify_one(&self) {
        self.permit.set(true);
        let waiter = self.waiter.borrow_mut().take();
        if let Some(w) = waiter {
            w.wake();
        }
    }

    /// Returns once `notify_one` was called since the last wait that returned. Dropped
    /// before it returns, it leaves its waker behind: the next notification then polls the
    /// task once more than needed, which a task must bear anyway.
    pub(crate) async fn notified(&self) {
        poll_fn(|cx| self.poll_notified(cx)).await
    }

    /// `notified` as a poll, to wait for it beside something else in one `poll_fn`.
    pub(crate) fn poll_notified(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.permit.replace(false) {
            return Poll::Ready(());
        }
        let mut waiter = self.waiter.borrow_mut();
        match &*waiter {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *waiter = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::LocalNotify;
    use std::future::Future;
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_notification_wakes_the_waiter_or_waits_for_the_next_wait() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let n = LocalNotify::new();
        {
            let mut wait = pin!(n.notified());
            assert_eq!(wait.as_mut().poll(&mut cx), Poll::Pending);
            n.notify_one();
            assert_eq!(count.0.load(Ordering::SeqCst), 1);
            assert_eq!(wait.as_mut().poll(&mut cx), Poll::Ready(()));
        }
        // Taken: the next wait waits.
        assert_eq!(pin!(n.notified()).poll(&mut cx), Poll::Pending);
        // Notified with the waiter gone (its future dropped): kept for the next wait.
        n.notify_one();
        assert_eq!(pin!(n.notified()).poll(&mut cx), Poll::Ready(()));
        assert_eq!(pin!(n.notified()).poll(&mut cx), Poll::Pending);
    }
}
