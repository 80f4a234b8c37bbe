//! The explorer's transport: `exchange` parks the batch and waits for the scheduler.
//!
//! A logical client's future runs until it sends a batch, then returns Pending; the
//! scheduler takes the commands out of the slot one at a time, whenever it decides this
//! client goes next, and puts each reply back in its batch. A pipeline of n commands is n scheduling
//! points, because on a real server other connections' commands interleave inside a
//! pipeline: only MULTI/EXEC and scripts are atomic.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::connection::{BoxFuture, Transport};
use crate::error::{Error, Result};
use crate::value::Value;

/// What the scheduler and one logical client share: the connection's commands in flight.
///
/// The connection is multiplexed, like redis-rs's `MultiplexedConnection`: clones of it
/// (the futures of a `join!` or `select!` inside one client: a watchdog beside the work)
/// may each have a batch out at once. Commands go to the server in the order they were
/// sent, one per scheduling step; each reply goes back to the batch it belongs to.
#[derive(Default)]
pub(crate) struct Slot {
    /// Commands sent and not run yet, oldest first: (batch, index in it, command).
    pub pending: VecDeque<(u64, usize, Vec<Vec<u8>>)>,
    /// Batches not fully answered.
    pub open: Vec<OpenBatch>,
    /// The connection failed (a crash or a fault closed it): why.
    pub closed: Option<String>,
    /// Counts the batches sent.
    pub batch_no: u64,
}

pub(crate) struct OpenBatch {
    no: u64,
    replies: Vec<Option<Value>>,
    got: usize,
    waker: Option<Waker>,
}

impl Slot {
    /// Whether a command is waiting to be sent.
    pub fn has_next(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Takes the next command to send: (batch, index, command).
    pub fn take_next(&mut self) -> Option<(u64, usize, Vec<Vec<u8>>)> {
        self.pending.pop_front()
    }

    /// Delivers the reply of command `index` of batch `no`: Some(true) if that completed
    /// the batch (its waiter is woken), Some(false) if more are due, None if nobody awaits
    /// it any more (the client stopped waiting: the reply is dropped).
    pub fn reply(&mut self, no: u64, index: usize, v: Value) -> Option<bool> {
        let b = self.open.iter_mut().find(|b| b.no == no)?;
        let r = b.replies.get_mut(index)?;
        if r.is_none() {
            b.got += 1;
        }
        *r = Some(v);
        let done = b.got == b.replies.len();
        if done {
            if let Some(w) = b.waker.take() {
                w.wake();
            }
        }
        Some(done)
    }

    /// Whether batch `no` still awaits replies.
    pub fn is_open(&self, no: u64) -> bool {
        self.open.iter().any(|b| b.no == no)
    }

    /// Back to a new connection's state, keeping the queues' allocations.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.open.clear();
        self.closed = None;
        self.batch_no = 0;
    }

    pub fn close(&mut self, why: &str) {
        self.closed = Some(why.to_string());
        self.pending.clear();
        for b in &mut self.open {
            if let Some(w) = b.waker.take() {
                w.wake();
            }
        }
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
    /// The batch this exchange sent, while it waits for its replies.
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
            s.open.retain(|b| b.no != n);
            s.pending.retain(|c| c.0 != n);
        }
    }
}

impl Future for Exchange<'_> {
    type Output = Result<Vec<Value>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut s = lock(this.slot);
        if let Some(why) = &s.closed {
            this.batch_no = None;
            return Poll::Ready(Err(Error::Connection(why.clone())));
        }
        if let Some(commands) = this.commands.take() {
            if commands.is_empty() {
                return Poll::Ready(Ok(Vec::new()));
            }
            s.batch_no += 1;
            let no = s.batch_no;
            this.batch_no = Some(no);
            let n = commands.len();
            s.pending
                .extend(commands.into_iter().enumerate().map(|(i, c)| (no, i, c)));
            s.open.push(OpenBatch {
                no,
                replies: (0..n).map(|_| None).collect(),
                got: 0,
                waker: Some(cx.waker().clone()),
            });
            return Poll::Pending;
        }
        let Some(no) = this.batch_no else {
            return Poll::Ready(Err(Error::Connection("polled after completion".into())));
        };
        let Some(k) = s.open.iter().position(|b| b.no == no) else {
            this.batch_no = None;
            return Poll::Ready(Err(Error::Connection("the batch was lost".into())));
        };
        if s.open[k].got < s.open[k].replies.len() {
            s.open[k].waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let b = s.open.swap_remove(k);
        this.batch_no = None;
        Poll::Ready(Ok(b
            .replies
            .into_iter()
            .map(|r| r.unwrap_or(Value::Nil))
            .collect()))
    }
}
