//! The scripting commands: EVAL, EVALSHA, their _RO forms, and SCRIPT.

use crate::cmd::table::CmdResult;

use bytes::Bytes;

use super::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::lua::cache::{normalize_sha, sha1_hex, Script};
use crate::lua::runtime::{self, Args, RunCtx};
use crate::lua::shebang;
use crate::reply::Reply;

/// Key positions of numkeys-style commands (EVAL, FCALL): numkeys at 2, keys from 3.
pub fn numkeys_keys(args: &[Bytes]) -> Vec<usize> {
    crate::cmd::table::keyspec::numkeys_keys(args, 2, false)
}

/// Parses numkeys with Redis's errors; returns how many arguments after it are keys.
pub(crate) fn split_keys(call: &Call) -> Result<usize, Reply> {
    let Some(n) = crate::numfmt::parse_i64(call.arg(2)) else {
        return Err(Reply::err(errors::NOT_INTEGER));
    };
    if n > call.argc() as i64 - 3 {
        return Err(Reply::err(errors::NUMKEYS_TOO_BIG));
    }
    if n < 0 {
        return Err(Reply::err(errors::NUMKEYS_NEGATIVE));
    }
    Ok(n as usize)
}

/// Compiles `body` into the EVAL runtime's cache (SCRIPT LOAD and EVAL); returns its SHA1.
fn load_script(e: &mut Engine, body: &Bytes) -> Result<[u8; 40], Reply> {
    let sha = sha1_hex(body);
    if e.scripting.cache.get(&sha).is_some() {
        return Ok(sha);
    }
    if let Some(script) = e.scripting.set_aside.remove(&sha) {
        e.scripting.cache.scripts.insert(sha, script);
        return Ok(sha);
    }
    let engines = e.profile().has(crate::compat::since::VALKEY_SCRIPT_ENGINES);
    let (flags, skip) = shebang::parse_eval(body, engines).map_err(Reply::err)?;
    let limit = e.config.lua_memory_limit;
    let rt = e.scripting.eval_runtime(limit);
    let func = rt
        .compile_eval(body, skip, &sha)
        .map_err(|m| Reply::err_bytes(errors::script_compile(&m)))?;
    rt.read_globals_directly(func, &sha);
    e.scripting.cache.scripts.insert(
        sha,
        Script {
            body: body.clone(),
            func,
            flags,
        },
    );
    Ok(sha)
}

/// Checks shared by EVAL and FCALL before a script with `flags` runs.
pub(crate) fn preflight(e: &Engine, flags: u32, read_only_cmd: bool) -> Result<(), Reply> {
    if flags & shebang::EVAL_COMPAT != 0 {
        return Ok(());
    }
    if flags & shebang::NO_CLUSTER != 0 && e.cluster.is_some() {
        return Err(Reply::err(crate::errors::CAN_NOT_RUN_SCRIPT_ON_CLUSTER));
    }
    if flags & shebang::NO_WRITES == 0 {
        if read_only_cmd {
            return Err(Reply::err(crate::errors::CAN_NOT_EXECUTE_A_SCRIPT_WITH));
        }
        // The dispatcher refuses such a script before it gets here; this is the check Redis
        // makes again at the script's start, reached when memory went over inside EXEC.
        if flags & shebang::ALLOW_OOM == 0 && e.over_maxmemory() {
            return Err(Reply::err(errors::OOM_SCRIPT_START));
        }
    }
    Ok(())
}

/// The context a script starts with.
pub(crate) fn new_ctx(
    e: &Engine,
    call: &Call,
    flags: u32,
    read_only_cmd: bool,
    is_function: bool,
    keys: &[Bytes],
) -> Result<RunCtx, Reply> {
    let strict_keys = if e.config.strict_keys {
        if flags & shebang::ALLOW_CROSS_SLOT == 0 {
            if let Some(first) = keys.first() {
                let slot = key_slot(first);
                if let Some(other) = keys.iter().find(|k| key_slot(k) != slot) {
                    return Err(Reply::err(errors::script_crossslot(other, first)));
                }
            }
        }
        Some(keys.to_vec())
    } else {
        None
    };
    Ok(RunCtx {
        engine: std::ptr::null_mut(),
        conn: call.conn,
        db: call.db,
        resp: 2,
        read_only: read_only_cmd || flags & shebang::NO_WRITES != 0,
        allow_oom: flags & shebang::EVAL_COMPAT == 0 && flags & shebang::ALLOW_OOM != 0,
        oom_at_start: e.over_maxmemory(),
        is_function,
        has_written: false,
        strict_keys,
        // The dispatcher read the clock as the command started: the same instant.
        start: e.call_started.unwrap_or_else(crate::clock::monotonic_us),
        threshold_ms: e.config.busy_reply_threshold_ms,
        busy_hook: None,
        function: None,
        busy_view: None,
        stop: None,
        outcome: None,
        arg_cache: std::ptr::null_mut(),
    })
}

/// Redis Cluster's hash slot of a key (one definition, in `crate::cluster::slot`).
pub use crate::cluster::slot::key_slot;

/// EVALSHA's NOSCRIPT: Valkey 8 dropped the advice to use EVAL (`crate::compat`).
fn noscript(e: &Engine) -> &'static str {
    match e.profile().family() {
        crate::compat::Family::Valkey => errors::NOSCRIPT_VALKEY,
        crate::compat::Family::Redis => errors::NOSCRIPT,
    }
}

fn eval_generic(e: &mut Engine, call: &mut Call, by_sha: bool, ro: bool) -> Reply {
    // A digest of the wrong length can name no script: Redis answers NOSCRIPT before it
    // reads numkeys.
    if by_sha && call.arg(1).len() != 40 {
        return Reply::err(noscript(e));
    }
    let numkeys = match split_keys(call) {
        Ok(n) => n,
        Err(r) => return r,
    };
    let sha = if by_sha {
        match normalize_sha(call.arg(1)) {
            Some(s) => s,
            None => return Reply::err(noscript(e)),
        }
    } else {
        match load_script(e, &call.args[1]) {
            Ok(s) => s,
            Err(r) => return r,
        }
    };
    let (func, flags) = match e.scripting.cache.get(&sha) {
        Some(s) => (s.func, s.flags),
        None => return Reply::err(noscript(e)),
    };
    if let Err(r) = preflight(e, flags, ro) {
        return r;
    }
    let (keys, argv) = call.args[3..].split_at(numkeys);
    let rc = match new_ctx(e, call, flags, ro, false, keys) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let h = e
        .scripting
        .eval_rt
        .as_mut()
        .expect("runtime exists once a script is cached")
        .handles();
    runtime::run(e, h, func, Args::Globals { keys, argv }, &sha, rc)
}

fn eval(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(eval_generic(e, call, false, false))
}

fn evalsha(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(eval_generic(e, call, true, false))
}

fn eval_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(eval_generic(e, call, false, true))
}

fn evalsha_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(eval_generic(e, call, true, true))
}

fn script_load(e: &mut Engine, call: &mut Call) -> CmdResult {
    let sha = load_script(e, &call.args[2])?;
    Ok(Reply::bulk(sha))
}

fn script_exists(e: &mut Engine, call: &mut Call) -> CmdResult {
    let found = call.args[2..]
        .iter()
        .map(|a| {
            Reply::Int(normalize_sha(a).is_some_and(|s| e.scripting.cache.get(&s).is_some()) as i64)
        })
        .collect();
    Ok(Reply::Array(found))
}

fn script_flush(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 3
        || (call.argc() == 3
            && !call.arg(2).eq_ignore_ascii_case(b"sync")
            && !call.arg(2).eq_ignore_ascii_case(b"async"))
    {
        return Err(Reply::err(
            crate::errors::SCRIPT_FLUSH_ONLY_SUPPORT_SYNC_ASYNC,
        ));
    }
    e.scripting.flush_scripts();
    Ok(Reply::ok())
}

/// Reached only when no script runs: while one runs, the network shell answers SCRIPT KILL
/// itself from the busy hook.
fn script_kill(_: &mut Engine, _: &mut Call) -> CmdResult {
    Err(Reply::err(errors::NOTBUSY))
}

fn script_debug(_: &mut Engine, call: &mut Call) -> CmdResult {
    let mode = call.arg(2).to_ascii_lowercase();
    Ok(match &mode[..] {
        b"no" => Reply::ok(),
        b"yes" | b"sync" => Reply::err(crate::errors::SCRIPT_DEBUG_IS_NOT_SUPPORTED_BY),
        _ => Reply::err(crate::errors::USE_SCRIPT_DEBUG_YES_SYNC_NO),
    })
}

fn script_help(e: &mut Engine, _: &mut Call) -> CmdResult {
    let valkey = e.profile().has(crate::compat::since::of("script|show"));
    let mut lines = vec![
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
    ];
    // Valkey 8 breaks the flush line one word earlier (valkey-server 8.1's text, its
    // leading blanks included).
    lines.extend(if valkey {
        [
            "    When called without the optional mode argument, the behavior is determined",
            "     by the lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        ]
    } else {
        [
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        ]
    });
    lines.extend([
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
    ]);
    if valkey {
        lines.extend(["SHOW <sha1>", "    Show a script from the scripts cache."]);
    }
    Ok(crate::cmd::help::help_reply(e.profile(), "SCRIPT", &lines))
}

/// SCRIPT SHOW sha1 (Valkey 8.0): the body of a cached script; anything but the 40-character
/// SHA1 of one (in any case) is NOSCRIPT, as valkey-server 8.1 answers.
fn script_show(e: &mut Engine, call: &mut Call) -> CmdResult {
    let sha = call.arg(2);
    let script = normalize_sha(sha).and_then(|sha| e.scripting.cache.get(&sha));
    match script {
        Some(s) => Ok(Reply::Bulk(s.body.clone())),
        None => Err(Reply::err(errors::NOSCRIPT_VALKEY)),
    }
}

fn container(_: &mut Engine, _: &mut Call) -> CmdResult {
    Err(Reply::err(crate::errors::UNKNOWN_SUBCOMMAND))
}

static SCRIPT_SUBCOMMANDS: &[Command] = &[
    Command::new("debug", 3, NOSCRIPT, "scripting", script_debug),
    Command::new("exists", -3, NOSCRIPT, "scripting", script_exists),
    Command::new("flush", -2, NOSCRIPT, "scripting", script_flush),
    Command::new("help", 2, LOADING | STALE, "scripting", script_help),
    Command::new("kill", 2, NOSCRIPT | ALLOW_BUSY, "scripting", script_kill),
    Command::new("load", 3, NOSCRIPT | STALE, "scripting", script_load),
    Command::new("show", 3, NOSCRIPT, "scripting", script_show),
];

const EVAL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS;

pub static COMMANDS: &[Command] = &[
    Command::new("eval", -3, EVAL_FLAGS, "scripting", eval).movable_keys(numkeys_keys),
    Command::new("evalsha", -3, EVAL_FLAGS, "scripting", evalsha).movable_keys(numkeys_keys),
    Command::new("eval_ro", -3, READONLY | EVAL_FLAGS, "scripting", eval_ro)
        .movable_keys(numkeys_keys),
    Command::new(
        "evalsha_ro",
        -3,
        READONLY | EVAL_FLAGS,
        "scripting",
        evalsha_ro,
    )
    .movable_keys(numkeys_keys),
    Command::new("script", -2, 0, "scripting", container).subcommands(SCRIPT_SUBCOMMANDS),
];

mod oom;
mod replicas;
pub(crate) use oom::{declared_flags, refused_when_over};
pub(crate) use replicas::{is_write, replicas_short};

#[cfg(test)]
mod tests;
