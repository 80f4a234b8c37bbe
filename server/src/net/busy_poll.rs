//! A server thread that has just served a request polls its sockets for a moment before it
//! sleeps.
//!
//! A test talks to its server in quick succession: a request, the reply, the next request a
//! few microseconds later. A thread that sleeps in `epoll_wait` between the two is woken by
//! the kernel when the next request lands, and on a virtual machine (every CI runner) that
//! wake-up is the dearest part of a round trip: a halted vCPU is woken through the
//! hypervisor. On the 2-core test machine (KVM, cpuidle `haltpoll` with its guest polling
//! off) a round trip to a thread that had slept took 60-70 us, to one that had not 6-7 us,
//! whatever the server; which one a test got depended on its own pace.
//!
//! So, once a thread has served requests (`arm`), its runtime's park hook (`before_park`)
//! polls the server's sockets, without blocking, for up to `redlab-busy-poll-us`
//! (100 us unless configured) and yields the CPU between polls, so whatever else is runnable
//! on that core runs first. The moment a socket is readable it stops and the runtime parks,
//! which then returns at once with the event. It does not poll again until it has served
//! again, so an idle server (woken only by its 100 ms tick) never spins. Wake-ups that do not
//! come through a socket (a timer, another thread's notification) wait at most the budget.
//! The one such wake-up that cannot wait is the server's own stop (a suite drops a server and
//! starts the next at once, on this thread): the polling watches the server's stop flag too.
//!
//! Polling only pays while a core would otherwise halt. On a busy machine, where a yield hands
//! the core to another thread for a while, or the thread gets less than half of its core
//! while it polls (a build on the same core, or other servers' threads polling: an in-process
//! cluster has six), it gives up and sleeps. Measured on the 2-core machine with
//! `cargo bench --bench cluster_start` (`CLUSTER_BUSY_POLL_US` 0 against 100, redlab / redis
//! per-round medians): idle, 0.92-1.07 off and 1.71-1.81 on; with one core kept busy by a
//! loop, 1.09-1.17 off and 1.07-1.28 on. Pausing the polling for a while after a contended
//! poll was tried and dropped: the cluster's own polling threads, yielding to each other and
//! to the client, looked like a busy machine, and its throughput fell back to 0.99-1.05.
//!
//! This is what Linux's `SO_BUSY_POLL` and the guest `haltpoll` driver do, kept to the
//! server's own threads. `redlab-busy-poll-us 0` turns it off.

use std::cell::{Cell, RefCell};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::server::RUNNING;

/// A yield that kept this thread off the CPU longer than this gave the core to someone who
/// needed it: the machine is busy, cores are not halting, and polling only competes.
const CONTENDED: Duration = Duration::from_micros(20);

/// More sockets than this and the thread does not poll: `poll` costs time in proportion to
/// them, and a server with that many clients is not a test waiting on one reply.
const MAX_WATCHED: usize = 64;

thread_local! {
    /// The sockets of the server this thread runs: its listeners and its clients.
    static WATCHED: RefCell<Vec<libc::pollfd>> = const { RefCell::new(Vec::new()) };
    /// How long the next park may poll first; zero once used.
    static ARMED: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    /// The running server's stop flag (`RUNNING` until its `Server` is dropped).
    static STOP: RefCell<Option<Arc<AtomicU8>>> = const { RefCell::new(None) };
}

/// The server this thread runs from now on, by its stop flag; `None` once it has ended.
/// Either way the sockets watched so far are forgotten: a server that ends with clients
/// still connected drops them with its tasks, never through `unwatch`, and their descriptor
/// numbers are soon another server's.
pub(crate) fn serving(stop: Option<Arc<AtomicU8>>) {
    STOP.with(|s| *s.borrow_mut() = stop);
    WATCHED.with(|w| w.borrow_mut().clear());
}

/// Polls `fd` for input before this thread parks.
pub(crate) fn watch(fd: RawFd) {
    WATCHED.with(|w| {
        w.borrow_mut().push(libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
    });
}

/// Stops polling `fd` (closed, or its server ended).
pub(crate) fn unwatch(fd: RawFd) {
    WATCHED.with(|w| {
        let mut w = w.borrow_mut();
        if let Some(i) = w.iter().position(|p| p.fd == fd) {
            w.swap_remove(i);
        }
    });
}

/// This thread has served: its next park polls for up to `budget_us` first.
pub(crate) fn arm(budget_us: u64) {
    ARMED.with(|a| a.set(Duration::from_micros(budget_us)));
}

/// How a park's polling ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Polled {
    /// Nothing served since the last park, nothing to watch or too much: it parks at once.
    NotArmed,
    /// A socket became readable (or was closed under it): the park returns at once.
    Ready,
    /// The budget passed with no socket ready: the thread sleeps.
    Quiet,
    /// The server was told to stop: the park returns at once with the news.
    Stopping,
    /// Another thread took the core during a yield, or has been taking turns with this one
    /// (`shared_core`): the thread sleeps.
    Contended,
}

/// The runtime's park hook (`on_thread_park`).
pub(crate) fn before_park() {
    let _ = poll_before_park();
}

fn poll_before_park() -> Polled {
    let budget = ARMED.with(|a| a.replace(Duration::ZERO));
    if budget.is_zero() {
        return Polled::NotArmed;
    }
    poll_for(budget)
}

fn poll_for(budget: Duration) -> Polled {
    let stop = STOP.with(|s| s.borrow().clone());
    let stopping = || {
        stop.as_ref()
            .is_some_and(|f| f.load(Ordering::Acquire) != RUNNING)
    };
    WATCHED.with(|w| {
        let mut fds = w.borrow_mut();
        if fds.is_empty() || fds.len() > MAX_WATCHED {
            return Polled::NotArmed;
        }
        let start = Instant::now();
        let until = start + budget;
        let cpu_at_start = thread_cpu();
        let mut polls = 0u32;
        loop {
            // SAFETY: `fds` is a live array of that many pollfd; a timeout of 0 never blocks.
            // A descriptor closed meanwhile only answers POLLNVAL, which ends the polling.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
            if n != 0 {
                return Polled::Ready;
            }
            if stopping() {
                return Polled::Stopping;
            }
            let before = Instant::now();
            if before >= until {
                return Polled::Quiet;
            }
            std::thread::yield_now();
            if before.elapsed() > CONTENDED {
                return Polled::Contended;
            }
            polls += 1;
            if polls.is_multiple_of(16) && shared_core(start.elapsed(), thread_cpu() - cpu_at_start)
            {
                return Polled::Contended;
            }
        }
    })
}

/// This thread ran less than half the time it has been polling: others on its core (another
/// polling thread, a build) take turns with it, and the core is not going to halt anyway.
fn shared_core(wall: Duration, cpu: Duration) -> bool {
    wall > CONTENDED && cpu < wall / 2
}

/// CPU time this thread has used (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write into; the clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_park_polls_only_after_the_thread_served() {
        let (a, _b) = UnixStream::pair().unwrap();
        watch(a.as_raw_fd());
        assert_eq!(poll_before_park(), Polled::NotArmed);
        arm(0);
        assert_eq!(poll_before_park(), Polled::NotArmed, "0 turns it off");
        arm(200);
        let slept = poll_before_park();
        assert!(
            matches!(slept, Polled::Quiet | Polled::Contended),
            "nothing came: {slept:?}"
        );
        assert_eq!(
            poll_before_park(),
            Polled::NotArmed,
            "armed for one park only"
        );
        unwatch(a.as_raw_fd());
    }

    #[test]
    fn a_server_with_many_clients_does_not_poll() {
        let pairs: Vec<_> = (0..=MAX_WATCHED)
            .map(|_| UnixStream::pair().unwrap())
            .collect();
        pairs.iter().for_each(|(a, _)| watch(a.as_raw_fd()));
        // A request waiting: polling would find it (`Ready`); the thread must not poll.
        (&pairs[0].1).write_all(b"PING\r\n").unwrap();
        arm(3_600_000_000);
        assert_eq!(poll_before_park(), Polled::NotArmed);
        pairs.iter().for_each(|(a, _)| unwatch(a.as_raw_fd()));
    }

    #[test]
    fn a_thread_sharing_its_core_stops_polling() {
        let us = Duration::from_micros;
        assert!(!shared_core(us(10), us(1)), "too soon to tell");
        assert!(!shared_core(us(100), us(90)), "the core is its own");
        assert!(shared_core(us(100), us(40)), "it ran 40% of the time");
    }

    #[test]
    fn the_servers_stop_ends_the_polling_at_once() {
        let (a, _b) = UnixStream::pair().unwrap();
        let flag = Arc::new(AtomicU8::new(RUNNING));
        serving(Some(flag.clone()));
        watch(a.as_raw_fd());
        flag.store(RUNNING + 1, Ordering::Release);
        arm(3_600_000_000);
        assert_eq!(poll_before_park(), Polled::Stopping);
        serving(None);
    }

    #[test]
    fn a_server_that_ends_leaves_no_socket_watched() {
        let (a, mut b) = UnixStream::pair().unwrap();
        serving(Some(Arc::new(AtomicU8::new(RUNNING))));
        watch(a.as_raw_fd());
        serving(None);
        b.write_all(b"PING\r\n").unwrap();
        arm(200);
        assert_eq!(
            poll_before_park(),
            Polled::NotArmed,
            "its client is not watched"
        );
    }

    #[test]
    fn a_readable_socket_ends_the_polling_at_once() {
        let (a, mut b) = UnixStream::pair().unwrap();
        watch(a.as_raw_fd());
        b.write_all(b"PING\r\n").unwrap();
        // An hour's budget: only the socket can end it.
        arm(3_600_000_000);
        assert_eq!(poll_before_park(), Polled::Ready);
        unwatch(a.as_raw_fd());
        arm(200);
        assert_eq!(
            poll_before_park(),
            Polled::NotArmed,
            "nothing watched any more"
        );
    }
}
