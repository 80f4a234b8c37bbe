//! Deferred writes: the replies of every connection served in one turn of the event loop go
//! out together, after all of them ran, as Redis's `handleClientsWithPendingWrites` does
//! before it sleeps.
//!
//! Why: a write that reaches an idle client wakes it (a cross-CPU wakeup, the costliest part
//! of a small request). Written one by one between requests, each reply found the load
//! generator asleep; written back to back, the first wakes it and the rest reach a client
//! that is already running. The flusher is a task: a connection that has output queues
//! itself and wakes the flusher, whose turn comes after every connection task already woken
//! (the scheduler's queue is first in, first out).
//!
//! A write the socket does not take in full is handed back to the connection's own task,
//! which writes the rest as the socket drains (and still runs the client's requests).

use std::cell::RefCell;
use std::rc::Rc;

use super::io::ConnIo;
use super::wake::LocalNotify;

#[derive(Default)]
pub(crate) struct Flusher {
    queued: RefCell<Vec<Rc<ConnIo>>>,
    wanted: LocalNotify,
}

impl Flusher {
    /// Queues a connection whose `wbuf` has output (once: `ConnState::queued` says if it is).
    pub fn queue(&self, io: &Rc<ConnIo>) {
        let mut q = self.queued.borrow_mut();
        if q.is_empty() {
            self.wanted.notify_one();
        }
        q.push(io.clone());
    }

    /// Writes every queued connection's output now, as far as each socket takes it.
    pub fn flush_queued(&self, spare: &mut Vec<Rc<ConnIo>>) {
        std::mem::swap(&mut *self.queued.borrow_mut(), spare);
        for io in spare.drain(..) {
            let mut st = io.state.borrow_mut();
            st.queued = false;
            let done = io.write_now(&mut st).is_ok() && st.wbuf.is_empty();
            if !done {
                // The task finishes the write (or meets the error) itself.
                st.write_pending = true;
                drop(st);
                io.notify.notify_one();
            }
        }
    }

    /// The flusher task of one server.
    pub async fn run(self: Rc<Self>) {
        let mut spare = Vec::new();
        loop {
            self.wanted.notified().await;
            self.flush_queued(&mut spare);
        }
    }
}
