//! maxclients against the process's open-file limit, as Redis checks it: each client is a
//! descriptor, and 32 more are kept for the server's own files. Redis raises the soft limit
//! when it can; when the limit cannot reach what maxclients needs, CONFIG SET fails with the
//! largest maxclients the limit allows, and at start the server lowers maxclients to it.

/// Descriptors Redis keeps beyond one per client (CONFIG_MIN_RESERVED_FDS).
pub const RESERVED_FDS: u64 = 32;
/// How far Redis steps down when a limit cannot be set.
const STEP: u64 = 16;

/// What happened when the limit was fitted to a maxclients.
#[derive(Debug, PartialEq, Eq)]
pub enum Fit {
    /// The limit already allowed it, or was raised to.
    Fits { raised_from: Option<u64> },
    /// The limit could not reach `needed`: only `best - 32` clients fit.
    Short {
        needed: u64,
        best: u64,
        os_error: String,
    },
}

fn nofile() -> Option<libc::rlimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a valid pointer to a local.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (rc == 0).then_some(lim)
}

/// Sets the soft limit to `n`, raising the hard limit with it only if it must (a process
/// without the privilege cannot, which is the usual failure); the OS's reason on failure.
fn set_nofile(n: u64, hard: u64) -> Result<(), String> {
    let lim = libc::rlimit {
        rlim_cur: n,
        rlim_max: hard.max(n),
    };
    // SAFETY: setrlimit reads one rlimit through a valid pointer to a local.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error()
            .to_string()
            .split(" (os error")
            .next()
            .unwrap_or_default()
            .to_string())
    }
}

/// Makes the open-file limit hold `maxclients` clients if it can (Redis's
/// adjustOpenFilesLimit): the soft limit is raised to what is needed, or to the highest
/// value in steps of 16 below it that the OS accepts, and never lowered.
pub fn fit(maxclients: u64) -> Fit {
    let needed = maxclients.saturating_add(RESERVED_FDS);
    let Some(lim) = nofile() else {
        return Fit::Short {
            needed,
            best: 1024,
            os_error: "getrlimit failed".into(),
        };
    };
    let (old, hard): (u64, u64) = (lim.rlim_cur, lim.rlim_max);
    if old >= needed {
        return Fit::Fits { raised_from: None };
    }
    let mut best = needed;
    let mut os_error = String::new();
    while best > old {
        match set_nofile(best, hard) {
            Ok(()) => break,
            Err(e) => os_error = e,
        }
        if best < STEP {
            best = old;
            break;
        }
        // Without the privilege to raise the hard limit, every value above it fails the
        // same way: skip straight to the first step at or below it.
        if best > hard {
            let steps = (best - hard).div_ceil(STEP);
            best -= steps * STEP;
        } else {
            best -= STEP;
        }
    }
    let best = best.max(old);
    if best >= needed {
        Fit::Fits {
            raised_from: Some(old),
        }
    } else {
        Fit::Short {
            needed,
            best,
            os_error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_limit_holds_fits() {
        let lim = nofile().expect("getrlimit");
        let cur: u64 = lim.rlim_cur;
        assert_eq!(fit(cur - RESERVED_FDS), Fit::Fits { raised_from: None });
        if lim.rlim_max != libc::RLIM_INFINITY {
            // Past the hard limit an unprivileged process stops at it, 32 short.
            match fit(lim.rlim_max * 2) {
                Fit::Short { best, .. } => assert!(best >= cur),
                Fit::Fits { .. } => {} // privileged: the hard limit was raised
            }
        }
    }
}
