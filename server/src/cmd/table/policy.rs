//! redlab's own dispatch rules: the ones Redis keeps as hard-coded checks in its dispatcher
//! rather than as command flags, and the ones only redlab has. Every rule that used to be a
//! list of names somewhere in the engine, the network shell or the script path is a bit here,
//! set when the table is built (`of`) and read with `Command::policy`.
//!
//! Redis's own flags (allow-busy, no-auth, noscript, write, denyoom, stale, no-multi, ...)
//! are not here: they come with the captured metadata (`meta`), and redlab's REDLAB.*
//! commands declare theirs in their table entries.

/// Runs in a RESP2 connection that is subscribed (Redis's processCommand allows only these).
pub const SUBSCRIBED_OK: u32 = 1 << 0;
/// Runs at once inside MULTI instead of being queued.
pub const NOT_QUEUED: u32 = 1 << 1;
/// Answered by the network shell while a script is busy, without the engine (see
/// `net::busy`): the kills, SHUTDOWN, and the connection and transaction commands Redis
/// serves meanwhile.
pub const BUSY_NET: u32 = 1 << 2;
/// Never matched by fault rules, so a test can always reach the server.
pub const NEVER_FAULTED: u32 = 1 << 3;
/// A blocked client waits for a list (a ready key of another type does not serve it).
pub const WAITS_LIST: u32 = 1 << 4;
/// A blocked client waits for a sorted set.
pub const WAITS_ZSET: u32 = 1 << 5;
/// A blocked client waits for a stream.
pub const WAITS_STREAM: u32 = 1 << 6;
/// Runs inside MULTI even when memory is over maxmemory (Redis refuses every other command
/// there, since queueing takes memory; EXEC is judged by what it queued).
pub const OOM_OK_IN_MULTI: u32 = 1 << 7;

/// The rules for a command or subcommand by its full name (`get`, `client|id`).
pub fn of(full_name: &str) -> u32 {
    let mut p = 0;
    if matches!(
        full_name,
        "ping"
            | "subscribe"
            | "unsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "ssubscribe"
            | "sunsubscribe"
            | "quit"
            | "reset"
    ) {
        p |= SUBSCRIBED_OK;
    }
    if matches!(
        full_name,
        "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
    ) {
        p |= NOT_QUEUED;
    }
    if matches!(
        full_name,
        "script|kill"
            | "function|kill"
            | "function|stats"
            | "shutdown"
            | "auth"
            | "hello"
            | "quit"
            | "multi"
            | "discard"
            | "watch"
            | "unwatch"
            | "reset"
    ) {
        p |= BUSY_NET;
    }
    if matches!(full_name, "discard" | "quit" | "reset") {
        p |= OOM_OK_IN_MULTI;
    }
    if full_name.starts_with("redlab.") {
        p |= NEVER_FAULTED;
    }
    p |= match full_name {
        "blpop" | "brpop" | "blmove" | "brpoplpush" | "blmpop" => WAITS_LIST,
        "bzpopmin" | "bzpopmax" | "bzmpop" => WAITS_ZSET,
        "xread" | "xreadgroup" => WAITS_STREAM,
        _ => 0,
    };
    p
}
