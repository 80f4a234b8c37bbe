//! The contract between a long-running script and the network shell.
//!
//! Redis keeps serving other clients while a script runs past busy-reply-threshold: they
//! get -BUSY, and SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE get through. The engine
//! cannot do I/O, so the script runtime calls a hook installed by the shell, every so often
//! once the threshold has passed; the hook serves the other connections and says whether
//! the script must stop.

/// The running script, as the shell sees it while answering other clients.
#[derive(Clone, Debug)]
pub struct BusyScript {
    /// Run by FCALL (FUNCTION KILL applies) rather than EVAL (SCRIPT KILL applies).
    pub is_function: bool,
    /// The script has already written: killing it would break atomicity (-UNKILLABLE).
    pub has_written: bool,
    /// Milliseconds since the script started, by the wall clock.
    pub elapsed_ms: u64,
    /// The function FCALL runs, for FUNCTION STATS, which Redis answers while it is busy;
    /// None for EVAL.
    pub function: Option<std::sync::Arc<RunningFunction>>,
    /// The ACL users as they were when the script became busy, for AUTH, HELLO AUTH and the
    /// permission checks of the commands the shell answers meanwhile.
    pub users: std::sync::Arc<crate::acl::Users>,
    /// The server's profile: a command newer than it is unknown while the script runs too,
    /// as it is to the dispatcher (Redis looks the command up before it answers -BUSY).
    pub profile: crate::compat::Profile,
    /// Where such a refusal is recorded (the engine's report, shared).
    pub compat_report: crate::compat::Report,
    /// `rename-command`: a command is looked up by the name clients call it, as the
    /// dispatcher does.
    pub renames: std::sync::Arc<crate::config::rename::Renames>,
}

/// What FUNCTION STATS reports about a running function and the libraries around it.
#[derive(Clone, Debug)]
pub struct RunningFunction {
    /// The function's name.
    pub name: String,
    /// The FCALL command, all its arguments.
    pub command: Vec<bytes::Bytes>,
    /// Libraries and functions loaded when it started (none can load while it runs).
    pub libraries: usize,
    pub functions: usize,
}

/// What the shell wants done with the running script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyVerdict {
    /// Keep running.
    Continue,
    /// SCRIPT KILL or FUNCTION KILL was accepted: abort the script with Redis's error.
    Kill,
    /// SHUTDOWN NOSAVE: abort the script and stop the server.
    Shutdown,
}

/// Called by the script runtime, at least every few milliseconds of script time, once the
/// script has run longer than busy-reply-threshold.
pub type BusyHook = Box<dyn FnMut(&BusyScript) -> BusyVerdict>;
