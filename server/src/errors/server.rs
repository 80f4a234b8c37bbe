//! Error texts of the server commands: CONFIG, COMMAND, SHUTDOWN, SWAPDB, FAILOVER,
//! DEBUG, SLOWLOG and redlab's own REDLAB.* controls.

use super::clip;

pub const LFU_NOT_SELECTED: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const LFU_SELECTED: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const NO_SHUTDOWN_IN_PROGRESS: &str = "ERR No shutdown in progress.";
/// SHUTDOWN whose final save failed (without FORCE): the server keeps running.
pub const SHUTDOWN_FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";
/// A command without the `loading` flag, or CONFIG SET of a parameter Redis marks
/// DENY_LOADING_CONFIG, while the RDB file is being loaded at start.
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";
/// BGSAVE CANCEL (Valkey 8.1) with no save running or scheduled: always, in redlab.
pub const NO_BGSAVE_IN_PROGRESS: &str =
    "ERR Background saving is currently not in progress or scheduled";
pub const SWAPDB_FIRST: &str = "ERR invalid first DB index";
pub const SWAPDB_SECOND: &str = "ERR invalid second DB index";
pub const CONFIG_NO_FILE: &str = "ERR The server is running without a config file";
pub const GETKEYS_NO_KEYS: &str = "ERR The command has no key arguments";
pub const GETKEYS_BAD_ARITY: &str = "ERR Invalid number of arguments specified for command";
pub const GETKEYS_BAD_ARGS: &str = "ERR Invalid arguments specified for command";
/// `ERR Unknown option or number of arguments for CONFIG SET - '<name>'`
pub fn config_set_unknown(name: &[u8]) -> String {
    format!(
        "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
        clip(name, 128)
    )
}
/// `ERR CONFIG SET failed (possibly related to argument '<name>') - <reason>`
pub fn config_set_failed(name: &str, reason: &str) -> String {
    format!(
        "ERR CONFIG SET failed (possibly related to argument '{}') - {}",
        name, reason
    )
}
/// CONFIG SET port's reason when the port cannot be listened on: `Unable to listen on this
/// port: <strerror>` (the OS text without Rust's "(os error N)").
pub fn unable_to_listen(err: &std::io::Error) -> String {
    format!("Unable to listen on this port: {}", strerror(err))
}

/// The OS's text for an I/O error, without Rust's " (os error N)", as C's strerror gives it.
pub(crate) fn strerror(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// CONFIG REWRITE could not write the file.
pub fn config_rewrite_failed(err: &std::io::Error) -> String {
    format!("ERR Rewriting config file: {}", strerror(err))
}
pub const SHUTDOWN_SAVE_AND_NOSAVE: &str =
    "shutdown options SAVE and NOSAVE can't be used simultaneously";
/// DEBUG CONFIG-REWRITE-FORCE-ALL's failure; without a config file Redis hands fopen a null
/// path and reports EFAULT.
pub fn debug_rewrite_failed(err: Option<&std::io::Error>) -> String {
    let reason = err.map_or_else(|| "Bad address".to_string(), strerror);
    format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {reason}")
}
pub const THE_CLOCK_ONLY_MOVES_FORWARD_WITH: &str =
    "ERR the clock only moves forward with ADVANCE; use SET to jump back";
pub const REDLAB_FAULT_ADD_NEEDS_AN_ACTION: &str = "ERR REDLAB.FAULT ADD needs an action: ERROR, CLOSE-BEFORE, CLOSE-AFTER, DELAY, DELAY-US, TRUNCATE, STALL, FLUSH-SCRIPTS or ROLLBACK";
pub const NO_FAILOVER_IN_PROGRESS: &str = "ERR No failover in progress.";
pub const FAILOVER_TIMEOUT_MUST_BE_GREATER_THAN: &str =
    "ERR FAILOVER timeout must be greater than 0";
pub const FAILOVER_REQUIRES_CONNECTED_REPLICAS: &str = "ERR FAILOVER requires connected replicas.";
pub const FAILOVER_ALREADY_IN_PROGRESS: &str = "ERR FAILOVER already in progress.";
pub const FAILOVER_ON_REPLICA: &str = "ERR FAILOVER is not valid when server is a replica.";
pub const FAILOVER_IN_CLUSTER: &str = "ERR FAILOVER not allowed in cluster mode.";
pub const FAILOVER_FORCE_NEEDS_TIMEOUT_AND_TARGET: &str =
    "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
pub const FAILOVER_TARGET_NOT_A_REPLICA: &str =
    "ERR FAILOVER target HOST and PORT is not a replica.";
pub const RESP2_IS_NOT_SUPPORTED_BY_THIS: &str = "ERR RESP2 is not supported by this command";
pub const WRONG_PROTOCOL_TYPE_NAME_PLEASE_USE: &str = "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false";
pub const GETKEYS_INVALID_COMMAND: &str = "ERR Invalid command specified";

pub const SLOWLOG_COUNT_RANGE: &str = "ERR count should be greater than or equal to -1";
pub const DEBUG_QUICKLIST_THRESHOLD: &str =
    "ERR argument must be a memory value bigger than 1 and smaller than 4gb";

// ---- why CONFIG SET refused a value (the `<reason>` of config_set_failed) ----
pub const CONFIG_YES_NO: &str = "argument must be 'yes' or 'no'";
pub const CONFIG_NOT_INTEGER: &str = "argument couldn't be parsed into an integer";
pub const CONFIG_NOT_MEMORY: &str = "argument must be a memory value";
pub const CONFIG_NOT_MEMORY_OR_PERCENT: &str = "argument must be a memory or percent value";
pub const CONFIG_PERCENT_OVER_100: &str = "percentage argument must be less or equal to 100";
pub const CONFIG_EVENT_CLASS: &str = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
pub const CONFIG_TOO_MANY_BINDS: &str = "Too many bind addresses specified.";
pub const CONFIG_OOM_SCORE_ADJ: &str =
    "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
/// CONFIG SET bind when a required address cannot be bound.
pub const FAILED_TO_BIND: &str = "Failed to bind to specified addresses.";
/// CONFIG SET of oom-score-adj(-values) when the process's score could not be written.
pub const OOM_SCORE_NOT_SET: &str = "Failed to set current oom_score_adj. Check server logs.";
pub const CONFIG_PERCENTILES_INVALID: &str = "Invalid latency-tracking-info-percentiles parameters";
pub const CONFIG_PERCENTILES_RANGE: &str =
    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
pub const CONFIG_SAVE_INVALID: &str = "Invalid save parameters";
pub const CONFIG_BUFFER_LIMIT_ARGS: &str =
    "Wrong number of arguments in buffer limit configuration.";
pub const CONFIG_BUFFER_LIMIT_CLASS: &str =
    "Invalid client class specified in buffer limit configuration.";
pub const CONFIG_BUFFER_LIMIT_VALUES: &str =
    "Error in hard, soft or soft_seconds setting in buffer limit configuration.";

pub fn config_enum(names: &[&str]) -> String {
    format!(
        "argument(s) must be one of the following: {}",
        names.join(", ")
    )
}

pub fn config_int_range(min: i64, max: i64) -> String {
    format!("argument must be between {} and {} inclusive", min, max)
}

/// DEBUG RELOAD with an option it does not know.
pub const DEBUG_RELOAD_OPTIONS: &str =
    "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.";
/// DEBUG RELOAD could not load the saved dataset (none saved, or a library or key in the way).
pub const RDB_LOAD_FAILED: &str = "ERR Error trying to load the RDB dump";
pub const RDB_LOAD_FAILED_VALKEY: &str =
    "ERR Error trying to load the RDB dump, check server logs.";

/// LATENCY GRAPH of an event the monitor has no samples of.
pub fn latency_no_samples(event: &[u8]) -> String {
    format!(
        "ERR No samples available for event '{}'",
        super::c_str(event)
    )
}

/// CONFIG SET maxclients beyond what the open-file limit can hold.
pub fn maxclients_over_fd_limit(fits: u64) -> String {
    format!("The operating system is not able to handle the specified number of clients, try with {fits}")
}
