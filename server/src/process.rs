//! What the binary does as a process, the way redis-server does it: `daemonize`, the
//! `pidfile`, and SIGTERM/SIGINT as a clean shutdown.

use std::sync::atomic::{AtomicI32, Ordering};

/// Where a daemonized server writes its pid when no `pidfile` is configured (Redis's default).
pub const DEFAULT_PIDFILE: &str = "/var/run/redis.pid";

/// The shutdown signal received, 0 while none.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only an atomic store: the one thing a signal handler may safely do here.
    SIGNALLED.store(sig, Ordering::SeqCst);
}

/// Routes SIGTERM and SIGINT to `take_signal` instead of killing the process, so the server
/// stops cleanly (pid and socket files removed, the goodbye line logged).
pub fn catch_shutdown_signals() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installs a handler that only stores into an atomic.
    unsafe {
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGINT, handler);
    }
}

/// The name of the shutdown signal received since the last call, if any.
pub fn take_signal() -> Option<&'static str> {
    match SIGNALLED.swap(0, Ordering::SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        _ => Some("SIGTERM"),
    }
}

/// `daemonize yes`: forks; the parent exits at once with status 0, the child leaves the
/// terminal's session and gets /dev/null as stdin, stdout and stderr (so with no `logfile`
/// its log goes nowhere, as Redis's does). Must run before any thread is started.
pub fn daemonize() -> Result<(), String> {
    // SAFETY: called from main before any other thread exists, so the child is a complete
    // copy of the process.
    match unsafe { libc::fork() } {
        -1 => return Err(std::io::Error::last_os_error().to_string()),
        0 => {}
        _ => std::process::exit(0),
    }
    // SAFETY: plain system calls on descriptors this process owns.
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            if null > 2 {
                libc::close(null);
            }
        }
    }
    Ok(())
}

/// Writes the pid file; a failure is only logged, as Redis does.
pub fn write_pidfile(path: &str) {
    if let Err(e) = std::fs::write(path, format!("{}\n", std::process::id())) {
        tracing::warn!("Failed to write PID file: {}", e);
    }
}
