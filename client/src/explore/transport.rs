//! The explorer's transport: `exchange` parks the batch and waits for the scheduler.
//!
//! A logical client's future runs until it sends a batch, then returns Pending; the
//! scheduler takes the commands out of the slot one at a time, whenever it decides this
//! client goes next, and puts each reply back. A pipeline of n commands is n scheduling
//! points, because on a real server other connections' commands interleave inside a
//! pipeline: only MULTI/EXEC and scripts are atomic.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use crate::connection::{BoxFuture, Transport};
use crate::error::{Error, Result};
use crate::value::Value;

/// What the scheduler and one logical client share.
#[derive(Default)]
pub(crate) struct Slot {
    /// The batch the client sent; commands are taken out as they run.
    pub batch: Vec<Vec<Vec<u8>>>,
    /// Index of the next command of `batch` to run.
    pub next: usize,
    pub replies: Vec<Value>,
    /// A batch is parked and not fully answered.
    pub waiting: bool,
    /// The connection failed (a crash or a fault closed it): why.
    pub closed: Option<String>,
    /// Counts the batches sent; a reply held back for an earlier batch (one the client gave
    /// up on, its timeout having fired) is dropped when it arrives.
    pub batch_no: u64,
}

impl Slot {
    /// Takes the next command of the parked batch, if any.
    pub fn take_next(&mut self) -> Option<Vec<Vec<u8>>> {
        if !self.waiting || self.next >= self.batch.len() {
            return None;
        }
        let c = std::mem::take(&mut self.batch[self.next]);
        self.next += 1;
        Some(c)
    }

    /// Delivers the reply of the command taken last; the batch completes with its last one.
    pub fn reply(&mut self, v: Value) {
        self.replies.push(v);
        if self.next >= self.batch.len() {
            self.waiting = false;
        }
    }

    pub fn close(&mut self, why: &str) {
        self.closed = Some(why.to_string());
        self.waiting = false;
    }
}

pub(crate) type SharedSlot = Arc<Mutex<Slot>>;

pub(crate) fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    // One thread drives everything; a poisoned slot only means a client panicked, and its
    // state is still what the scheduler left there.
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct ParkedTransport {
    pub slot: SharedSlot,
}

impl Transport for ParkedTransport {
    fn exchange<'a>(&'a self, commands: Vec<Vec<Vec<u8>>>) -> BoxFuture<'a, Result<Vec<Value>>> {
        Box::pin(Exchange {
            slot: &self.slot,
            commands: Some(commands),
            batch_no: None,
        })
    }
}

struct Exchange<'a> {
    slot: &'a Mutex<Slot>,
    commands: Option<Vec<Vec<Vec<u8>>>>,
    /// The batch this exchange parked, while it waits for its replies.
    batch_no: Option<u64>,
}

/// A client that stops waiting (its `timeout` fired, a `select!` took another branch)
/// drops the exchange: the commands not sent yet are never sent, and a reply still on its
/// way is dropped when it arrives, as a multiplexed connection drops the reply of a
/// request nobody awaits any more.
impl Drop for Exchange<'_> {
    fn drop(&mut self) {
        if let Some(n) = self.batch_no {
            let mut s = lock(self.slot);
            if s.batch_no == n && s.waiting {
                s.waiting = false;
                s.batch.clear();
                s.next = 0;
                s.replies.clear();
            }
        }
    }
}

impl Future for Exchange<'_> {
    type Output = Result<Vec<Value>>;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut s = lock(this.slot);
        if let Some(why) = &s.closed {
            return Poll::Ready(Err(Error::Connection(why.clone())));
        }
        if let Some(commands) = this.commands.take() {
            s.batch_no += 1;
            this.batch_no = Some(s.batch_no);
            s.replies.clear();
            s.replies.reserve(commands.len());
            s.batch = commands;
            s.next = 0;
            s.waiting = true;
            return Poll::Pending;
        }
        if s.waiting {
            return Poll::Pending;
        }
        this.batch_no = None;
        Poll::Ready(Ok(std::mem::take(&mut s.replies)))
    }
}
