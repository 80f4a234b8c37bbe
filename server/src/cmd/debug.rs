//! DEBUG: the subcommands test suites use to steer a server.

use std::time::Duration;

use super::args;
use super::table::{flags::*, CmdResult, Command};
use crate::db::{digest, Value};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn unknown(sub: &[u8]) -> Reply {
    Reply::err(errors::subcommand_syntax(b"DEBUG", sub))
}

/// The longest DEBUG SLEEP redlab honours. Redis sleeps as long as asked, but redlab runs
/// inside a test process: a sleep meant to make the server look slow for a moment must not
/// freeze a whole test suite because of a unit slip (`DEBUG SLEEP 3600` for 3.6 s). Ten
/// seconds is longer than any client timeout a test simulates, and short enough to notice.
pub const MAX_SLEEP: Duration = Duration::from_secs(10);

/// DEBUG SLEEP's argument as Redis reads it: `strtod` on a prefix (`abc` is 0, `0.5x` is
/// 0.5, `0x10` is 16), times a million into a C `long long` of microseconds, where NaN,
/// infinities and anything out of range become LLONG_MIN, so `nanosleep` refuses them and
/// the command returns at once; a negative value returns at once too. Then capped at
/// [`MAX_SLEEP`].
pub fn sleep_duration(arg: &[u8]) -> Duration {
    let start = arg
        .iter()
        .position(|&c| !crate::numfmt::is_c_space(c))
        .unwrap_or(arg.len());
    let (secs, _) = crate::lua::cjson::strtod(&arg[start..]);
    let micros = secs * 1_000_000.0;
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if !(micros > 0.0 && micros < LIMIT) {
        return Duration::ZERO;
    }
    Duration::from_micros(micros as u64).min(MAX_SLEEP)
}

/// DEBUG HELP: Redis's lines for the subcommands redlab has, in Redis's order (the crash,
/// allocator and AOF ones are left out because redlab does not answer them).
const HELP: &[&str] = &[
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
];

fn debug(e: &mut Engine, call: &mut Call) -> CmdResult {
    let sub = args::lower(call.arg(1));
    let argc = call.argc();
    Ok(match (sub.as_str(), argc) {
        ("set-active-expire", 3) => {
            e.active_expire = call.arg(2) != b"0";
            Reply::ok()
        }
        ("pause-cron", 3) => {
            // Stops the periodic work (active expiry, the tracking table's size limit).
            e.cron_paused = call.arg(2) != b"0";
            Reply::ok()
        }
        ("sleep", 3) => {
            // Like Redis, this blocks the whole server: nobody is served meanwhile.
            std::thread::sleep(sleep_duration(call.arg(2)));
            Reply::ok()
        }
        ("object", 3) => object(e, call),
        ("digest", 2) => Reply::Status(digest::hex(&digest::of_dataset(&e.dbs))),
        ("digest-value", _) => {
            // Reads keys as stored, expired or not, and touches nothing, as Redis does.
            let db = &e.dbs[call.db];
            Reply::Array(
                (2..argc)
                    .map(|i| {
                        let d = digest::of_value(db.stored_entry(call.arg(i)));
                        Reply::Status(digest::hex(&d))
                    })
                    .collect(),
            )
        }
        ("populate", 3..=5) => super::debug_populate::populate(e, call)?,
        ("reload", _) => super::debug_reload::reload(e, &call.args[2..])?,
        ("loadaof", 2) => super::debug_reload::loadaof(e)?,
        ("jmap", 2) | ("change-repl-id", 2) => Reply::ok(),
        ("log", 3) => {
            tracing::warn!("DEBUG LOG: {}", String::from_utf8_lossy(call.arg(2)));
            Reply::ok()
        }
        ("config-rewrite-force-all", 2) => rewrite_force_all(e)?,
        ("set-disable-deny-scripts", 3) => {
            e.disable_deny_scripts = call.arg(2) != b"0";
            Reply::ok()
        }
        ("protocol", 3) => protocol(call),
        ("quicklist-packed-threshold", 3) => quicklist_packed_threshold(e, call.arg(2))?,
        ("replybuffer", 4) => reply_buffer(e, call)?,
        ("help", 2) => super::help::help_reply(e.profile(), "DEBUG", HELP),
        _ => unknown(call.arg(1)),
    })
}

/// DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE writing every parameter.
fn rewrite_force_all(e: &mut Engine) -> CmdResult {
    let Some(path) = e.config.config_file.clone() else {
        return Err(Reply::err(errors::debug_rewrite_failed(None)));
    };
    crate::cmd::server::config_rewrite::rewrite(e, &path, true)
        .map_err(|err| Reply::err(errors::debug_rewrite_failed(Some(&err))))?;
    Ok(Reply::ok())
}

/// DEBUG REPLYBUFFER: Redis's knobs for its reply-buffer resize cron (`client_reply`), which
/// tests turn off so CLIENT LIST's figures stay put.
fn reply_buffer(e: &mut Engine, call: &Call) -> CmdResult {
    let knobs = &mut e.reply_buf_knobs;
    match args::lower(call.arg(2)).as_str() {
        "peak-reset-time" => {
            knobs.peak_reset_ms = match args::lower(call.arg(3)).as_str() {
                "never" => -1,
                "reset" => crate::client_reply::DEFAULT_PEAK_RESET_MS,
                _ => args::int(call.arg(3))?,
            };
        }
        // Redis reads the flag with atoi: leading digits, anything else 0.
        "resizing" => knobs.resizing = args::atoi(call.arg(3)) != 0,
        _ => return Err(unknown(call.arg(1))),
    }
    Ok(Reply::ok())
}

/// The largest element a quicklist node packs with others (Redis's packed_threshold): a
/// memory value up to 1 MB under 4 GB; 0 restores the default of 1 GB.
pub const DEFAULT_PACKED_THRESHOLD: u64 = 1 << 30;

fn quicklist_packed_threshold(e: &mut Engine, arg: &[u8]) -> CmdResult {
    let size = std::str::from_utf8(arg)
        .ok()
        .and_then(crate::config::params::parse_memory)
        .ok_or_else(|| Reply::err(errors::DEBUG_QUICKLIST_THRESHOLD))?;
    if size > (1u64 << 32) - (1 << 20) {
        return Err(Reply::err(errors::DEBUG_QUICKLIST_THRESHOLD));
    }
    e.quicklist_packed_threshold = if size == 0 {
        DEFAULT_PACKED_THRESHOLD
    } else {
        size
    };
    Ok(Reply::ok())
}

fn object(e: &mut Engine, call: &mut Call) -> Reply {
    let now = e.now_ms;
    let limits = e.encoding_limits();
    // As stored: Redis looks the key up in its dict directly, so a key past its deadline that
    // nothing has expired yet is still shown.
    let Some(entry) = e.dbs[call.db].stored_entry(call.arg(2)) else {
        return Reply::err(errors::NO_SUCH_KEY);
    };
    // The encoding OBJECT ENCODING reports, from the same rules.
    let encoding = crate::db::encoding::of_entry(entry, &limits).name();
    let len = match &entry.value {
        Value::Str(s) => s.len(),
        Value::List(l) => l.len(),
        Value::Hash(h) => h.len(),
        Value::Set(s) => s.len(),
        Value::ZSet(z) => z.len(),
        Value::Stream(s) => s.len() as usize,
    };
    let idle = entry.access.idle_ms(now) / 1000;
    Reply::Status(format!(
        "Value at:0x7f0000000000 refcount:1 encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        encoding,
        len + 1,
        entry.access.raw(),
        idle
    ))
}

/// DEBUG PROTOCOL <type>: Redis's sample of each reply type.
fn protocol(call: &Call) -> Reply {
    match args::lower(call.arg(2)).as_str() {
        "string" => Reply::bulk("Hello World"),
        "integer" => Reply::Int(12345),
        "double" => Reply::Double(3.141),
        "bignum" => Reply::BigNumber("1234567999999999999999999999999999999".into()),
        "null" => Reply::Nil,
        "array" => Reply::Array((0..3).map(Reply::Int).collect()),
        "set" => Reply::Set((0..3).map(Reply::Int).collect()),
        "map" => Reply::Map(
            (0..3)
                .map(|i| (Reply::Int(i), Reply::Bool(i == 1)))
                .collect(),
        ),
        "attrib" => Reply::Attribute(
            vec![(
                Reply::bulk("key-popularity"),
                Reply::Array(vec![Reply::bulk("key:123"), Reply::Int(90)]),
            )],
            Box::new(Reply::bulk("Some real reply following the attribute")),
        ),
        "push" if call.resp < 3 => Reply::err(crate::errors::RESP2_IS_NOT_SUPPORTED_BY_THIS),
        "push" => Reply::Push(vec![Reply::bulk("server-cpu-usage"), Reply::Int(42)]),
        "verbatim" => Reply::Verbatim(
            "txt",
            bytes::Bytes::from_static(b"This is a verbatim\nstring"),
        ),
        "true" => Reply::Bool(true),
        "false" => Reply::Bool(false),
        _ => Reply::err(crate::errors::WRONG_PROTOCOL_TYPE_NAME_PLEASE_USE),
    }
}

pub static COMMANDS: &[Command] = &[Command::new(
    "debug",
    -2,
    ADMIN | NOSCRIPT | LOADING | STALE,
    "server",
    debug,
)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_reads_its_argument_as_redis_and_is_bounded() {
        // Measured on redis-server 7.0.15: these return OK at once.
        for arg in ["inf", "-inf", "nan", "-1", "1e300", "abc", "", "1e-300"] {
            assert_eq!(sleep_duration(arg.as_bytes()), Duration::ZERO, "{arg:?}");
        }
        assert_eq!(sleep_duration(b"0.01"), Duration::from_millis(10));
        assert_eq!(sleep_duration(b" 1"), Duration::from_secs(1));
        assert_eq!(sleep_duration(b"0.5x"), Duration::from_millis(500));
        // Redis would sleep 16 s and 292,000 years; redlab stops at MAX_SLEEP.
        assert_eq!(sleep_duration(b"0x10"), MAX_SLEEP);
        assert_eq!(sleep_duration(b"9223372036854"), MAX_SLEEP);
    }

    #[test]
    fn debug_object_names_the_encoding_object_encoding_names() {
        use crate::test_support::{engine, run};
        let (mut e, _clock) = engine();
        for setup in [
            &["SET", "k", "123"][..],
            &["APPEND", "k", "4"][..],
            &["SET", "k", "x"][..],
            &["SETRANGE", "k", "0", "y"][..],
            &["DEL", "k"][..],
            &["SADD", "k", "1", "2"][..],
            &["SADD", "k", "a"][..],
            &["SREM", "k", "a"][..],
            &["DEL", "k"][..],
            &["HSET", "k", "f", "v"][..],
        ] {
            run(&mut e, setup);
            let Reply::Bulk(enc) = run(&mut e, &["OBJECT", "ENCODING", "k"]) else {
                continue;
            };
            let Reply::Status(line) = run(&mut e, &["DEBUG", "OBJECT", "k"]) else {
                panic!("DEBUG OBJECT answers a status line");
            };
            if setup[0] == "SREM" {
                // A set that held a non-integer stays a hashtable.
                assert_eq!(&enc[..], b"hashtable");
            }
            let want = format!(" encoding:{} ", String::from_utf8_lossy(&enc));
            assert!(line.contains(&want), "{setup:?}: {line} lacks {want}");
        }
    }

    #[test]
    fn quicklist_packed_threshold_takes_a_memory_value_under_4gb() {
        use crate::test_support::{engine, run};
        let (mut e, _clock) = engine();
        assert_eq!(
            run(&mut e, &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1k"]),
            Reply::ok()
        );
        assert_eq!(e.quicklist_packed_threshold, 1000);
        assert_eq!(
            run(&mut e, &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]),
            Reply::ok()
        );
        assert_eq!(e.quicklist_packed_threshold, DEFAULT_PACKED_THRESHOLD);
        assert!(run(&mut e, &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4gb"]).is_error());
        assert_eq!(e.quicklist_packed_threshold, DEFAULT_PACKED_THRESHOLD);
    }
}
