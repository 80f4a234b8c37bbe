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
    /// Commands queued since the connection was opened.
    queued: usize,
    /// The first `replayed` commands queued get a recorded reply without being run (the
    /// explorer replays a schedule's prefix): nothing reads their arguments, so `command`
    /// does not build them. Most commands of an exhaustive search are such replays.
    pub replayed: usize,
    /// Buffers of commands that ran or were replayed, for the next commands (`command`).
    spare_commands: Vec<Vec<Vec<u8>>>,
    spare_args: Vec<Vec<u8>>,
    /// Reply vectors of finished single-command batches (`One`).
    spare_replies: Vec<Vec<Option<Value>>>,
}

/// How many buffers of each kind a slot keeps for reuse.
///
/// The explorer replays every client from the start for each schedule, so a client's
/// commands are built and dropped tens of thousands of times: reusing their buffers
/// instead of allocating four to ten blocks per command took about a fifth of the
/// instructions of a scripted exhaustive search. Bounded so a pipeline of thousands of
/// commands does not pin its buffers.
const SPARE: usize = 32;
/// The least room of a new argument buffer: most arguments (names, numbers, SHA1s) fit,
/// so a reused buffer seldom grows.
const MIN_ARG: usize = 48;
/// Larger argument buffers are not kept, so one large value does not stay pinned.
const MAX_KEPT_ARG: usize = 4096;

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

    /// A command made of `parts`, in buffers taken back from earlier commands.
    pub fn command<'x>(&mut self, parts: impl IntoIterator<Item = &'x [u8]>) -> Vec<Vec<u8>> {
        if self.queued < self.replayed {
            return Vec::new();
        }
        let mut command = self.spare_commands.pop().unwrap_or_default();
        for part in parts {
            let mut buf = self
                .spare_args
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(part.len().max(MIN_ARG)));
            buf.extend_from_slice(part);
            command.push(buf);
        }
        command
    }

    /// Takes back the buffers of a command that ran (or was replayed); the next command
    /// gets them in the same order, so a client repeating its commands finds each
    /// argument's buffer large enough.
    pub fn recycle(&mut self, mut command: Vec<Vec<u8>>) {
        for mut buf in command.drain(..).rev() {
            if self.spare_args.len() < SPARE && buf.capacity() <= MAX_KEPT_ARG {
                buf.clear();
                self.spare_args.push(buf);
            }
        }
        if self.spare_commands.len() < SPARE && command.capacity() > 0 {
            self.spare_commands.push(command);
        }
    }

    /// Queues the commands of a new batch; its number.
    fn send(
        &mut self,
        commands: impl ExactSizeIterator<Item = Vec<Vec<u8>>>,
        waker: &Waker,
    ) -> u64 {
        self.batch_no += 1;
        let no = self.batch_no;
        let n = commands.len();
        self.queued += n;
        self.pending
            .extend(commands.enumerate().map(|(i, c)| (no, i, c)));
        let mut replies = self.spare_replies.pop().unwrap_or_default();
        replies.resize_with(n, || None);
        self.open.push(OpenBatch {
            no,
            replies,
            got: 0,
            waker: Some(waker.clone()),
        });
        no
    }

    /// The replies of batch `no` once they are all in; Pending (with the waker kept) before.
    fn collect(&mut self, no: u64, waker: &Waker) -> Poll<Result<Vec<Option<Value>>>> {
        let Some(k) = self.open.iter().position(|b| b.no == no) else {
            return Poll::Ready(Err(Error::Connection("the batch was lost".into())));
        };
        let b = &mut self.open[k];
        if b.got < b.replies.len() {
            if !b.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                b.waker = Some(waker.clone());
            }
            return Poll::Pending;
        }
        Poll::Ready(Ok(self.open.swap_remove(k).replies))
    }

    /// Forgets batch `no`: its waiter stopped waiting.
    fn forget(&mut self, no: u64) {
        self.open.retain(|b| b.no != no);
        let mut k = 0;
        while k < self.pending.len() {
            if self.pending[k].0 == no {
                if let Some((_, _, c)) = self.pending.remove(k) {
                    self.recycle(c);
                }
            } else {
                k += 1;
            }
        }
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
        while let Some((_, _, c)) = self.pending.pop_front() {
            self.recycle(c);
        }
        self.open.clear();
        self.closed = None;
        self.batch_no = 0;
        self.queued = 0;
        self.replayed = 0;
    }

    pub fn close(&mut self, why: &str) {
        self.closed = Some(why.to_string());
        while let Some((_, _, c)) = self.pending.pop_front() {
            self.recycle(c);
        }
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

impl ParkedTransport {
    /// A command made of `parts`, in reused buffers (see `Slot::command`).
    pub(crate) fn command<'x>(&self, parts: impl IntoIterator<Item = &'x [u8]>) -> Vec<Vec<u8>> {
        lock(&self.slot).command(parts)
    }

    /// Sends one command and awaits its reply: `exchange` for a batch of one, without
    /// boxing the future or allocating the batch and reply vectors.
    pub(crate) fn one(&self, command: Vec<Vec<u8>>) -> One<'_> {
        One {
            slot: &self.slot,
            command: Some(command),
            batch_no: None,
        }
    }
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
            lock(self.slot).forget(n);
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
            this.batch_no = Some(s.send(commands.into_iter(), cx.waker()));
            return Poll::Pending;
        }
        let Some(no) = this.batch_no else {
            return Poll::Ready(Err(Error::Connection("polled after completion".into())));
        };
        let replies = std::task::ready!(s.collect(no, cx.waker()));
        this.batch_no = None;
        Poll::Ready(replies.map(|r| r.into_iter().map(|r| r.unwrap_or(Value::Nil)).collect()))
    }
}

/// `Exchange` for a single command (`ParkedTransport::one`).
pub(crate) struct One<'a> {
    slot: &'a Mutex<Slot>,
    command: Option<Vec<Vec<u8>>>,
    batch_no: Option<u64>,
}

impl Drop for One<'_> {
    fn drop(&mut self) {
        let mut s = lock(self.slot);
        if let Some(n) = self.batch_no {
            s.forget(n);
        }
        if let Some(c) = self.command.take() {
            s.recycle(c);
        }
    }
}

impl Future for One<'_> {
    type Output = Result<Value>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut s = lock(this.slot);
        if let Some(why) = &s.closed {
            this.batch_no = None;
            return Poll::Ready(Err(Error::Connection(why.clone())));
        }
        if let Some(command) = this.command.take() {
            this.batch_no = Some(s.send(std::iter::once(command), cx.waker()));
            return Poll::Pending;
        }
        let Some(no) = this.batch_no else {
            return Poll::Ready(Err(Error::Connection("polled after completion".into())));
        };
        let mut replies = match std::task::ready!(s.collect(no, cx.waker())) {
            Ok(r) => r,
            Err(e) => {
                this.batch_no = None;
                return Poll::Ready(Err(e));
            }
        };
        this.batch_no = None;
        let v = replies.pop().flatten().unwrap_or(Value::Nil);
        replies.clear();
        if s.spare_replies.len() < SPARE {
            s.spare_replies.push(replies);
        }
        Poll::Ready(Ok(v))
    }
}
