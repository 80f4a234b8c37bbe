//! The functions commands: FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/KILL/STATS/HELP,
//! FCALL and FCALL_RO.

use crate::cmd::table::CmdResult;
use bytes::Bytes;

use super::scripting::{new_ctx, numkeys_keys, preflight};
use super::table::{flags::*, Command};
use crate::db::rdb::{self, FunctionRestoreError};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::lua::functions::{load_library, Library};
use crate::lua::runtime::{self, Args};
use crate::lua::shebang;
use crate::reply::Reply;

/// Loads `code` as a library; `replace` allows replacing one of the same name.
pub(crate) fn install(e: &mut Engine, code: &Bytes, replace: bool) -> Result<String, Reply> {
    let name = shebang::parse_library(code).map_err(Reply::err)?;
    if !replace && e.scripting.libs.libs.contains_key(&name) {
        return Err(Reply::err(errors::library_exists(&name)));
    }
    let limit = e.config.lua_memory_limit;
    let rt = e.scripting.func_runtime(limit);
    let lib = load_library(rt, code)?;
    check_collisions(e, &lib).inspect_err(|_| release(e, &lib))?;
    let rt = e.scripting.func_rt.as_deref();
    e.scripting.libs.remove(&lib.name, rt);
    e.scripting.libs.insert(lib);
    Ok(name)
}

fn check_collisions(e: &Engine, lib: &Library) -> Result<(), Reply> {
    for f in &lib.functions {
        if let Some(owner) = e.scripting.libs.index.get(&f.name.to_ascii_lowercase()) {
            if *owner != lib.name {
                return Err(Reply::err(errors::function_exists(&f.name)));
            }
        }
    }
    Ok(())
}

fn release(e: &Engine, lib: &Library) {
    if let Some(rt) = e.scripting.func_rt.as_deref() {
        for f in &lib.functions {
            rt.unref(f.func);
        }
    }
}

fn function_load(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut replace = false;
    let mut i = 2;
    while i < call.argc() - 1 {
        if call.arg(i).eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else {
            return Err(Reply::err(errors::function_load_option(call.arg(i))));
        }
        i += 1;
    }
    let code = call.args[call.argc() - 1].clone();
    let name = install(e, &code, replace)?;
    Ok(Reply::bulk(name))
}

fn function_list(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut pattern: Option<Bytes> = None;
    let mut with_code = false;
    let mut i = 2;
    while i < call.argc() {
        let a = call.arg(i);
        if a.eq_ignore_ascii_case(b"withcode") && !with_code {
            with_code = true;
        } else if a.eq_ignore_ascii_case(b"libraryname") && pattern.is_none() {
            if i + 1 >= call.argc() {
                return Err(Reply::err(
                    crate::errors::LIBRARY_NAME_ARGUMENT_WAS_NOT_GIVEN,
                ));
            }
            pattern = Some(call.args[i + 1].clone());
            i += 1;
        } else {
            return Err(Reply::err(errors::function_list_argument(a)));
        }
        i += 1;
    }
    let mut out = Vec::new();
    for lib in e.scripting.libs.libs.values() {
        if let Some(p) = &pattern {
            if !crate::glob::matches(p, lib.name.as_bytes(), true) {
                continue;
            }
        }
        let functions = lib
            .functions
            .iter()
            .map(|f| {
                let flags = shebang::NAMES
                    .iter()
                    .filter(|(b, _)| f.flags & b != 0)
                    .map(|(_, n)| Reply::status(n))
                    .collect();
                Reply::Map(vec![
                    (Reply::bulk("name"), Reply::bulk(&f.name)),
                    (
                        Reply::bulk("description"),
                        f.description.clone().map_or(Reply::Nil, Reply::Bulk),
                    ),
                    (Reply::bulk("flags"), Reply::Set(flags)),
                ])
            })
            .collect();
        let mut entry = vec![
            (Reply::bulk("library_name"), Reply::bulk(&lib.name)),
            (Reply::bulk("engine"), Reply::bulk("LUA")),
            (Reply::bulk("functions"), Reply::Array(functions)),
        ];
        if with_code {
            entry.push((Reply::bulk("library_code"), Reply::Bulk(lib.code.clone())));
        }
        out.push(Reply::Map(entry));
    }
    Ok(Reply::Array(out))
}

fn function_delete(e: &mut Engine, call: &mut Call) -> CmdResult {
    let name = String::from_utf8_lossy(call.arg(2)).into_owned();
    let rt = e.scripting.func_rt.as_deref();
    Ok(match e.scripting.libs.remove(&name, rt) {
        Some(_) => Reply::ok(),
        None => Reply::err(crate::errors::LIBRARY_NOT_FOUND),
    })
}

pub(crate) fn flush_all(e: &mut Engine) {
    e.scripting.libs = Default::default();
    e.scripting.func_rt = None;
}

fn function_flush(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 3 {
        return Err(Reply::err(errors::subcommand_syntax(
            call.arg(0),
            call.arg(1),
        )));
    }
    if call.argc() == 3
        && !call.arg(2).eq_ignore_ascii_case(b"sync")
        && !call.arg(2).eq_ignore_ascii_case(b"async")
    {
        return Err(Reply::err(
            crate::errors::FUNCTION_FLUSH_ONLY_SUPPORTS_SYNC_ASYNC,
        ));
    }
    flush_all(e);
    Ok(Reply::ok())
}

fn function_kill(_: &mut Engine, _: &mut Call) -> CmdResult {
    Err(Reply::err(errors::NOTBUSY))
}

fn function_stats(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(stats_reply(
        None,
        e.scripting.libs.libs.len(),
        e.scripting.libs.registered_count(),
    ))
}

/// FUNCTION STATS: the running function (name, command, duration), which only the shell
/// can report, while the function holds the engine, and the library counts.
pub(crate) fn stats_reply(
    running: Option<(&crate::busy::RunningFunction, u64)>,
    libraries: usize,
    functions: usize,
) -> Reply {
    let running = match running {
        None => Reply::Nil,
        Some((f, ms)) => Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(f.name.clone())),
            (
                Reply::bulk("command"),
                Reply::Array(f.command.iter().cloned().map(Reply::Bulk).collect()),
            ),
            (Reply::bulk("duration_ms"), Reply::Int(ms as i64)),
        ]),
    };
    Reply::Map(vec![
        (Reply::bulk("running_script"), running),
        (
            Reply::bulk("engines"),
            Reply::Map(vec![(
                Reply::bulk("LUA"),
                Reply::Map(vec![
                    (Reply::bulk("libraries_count"), Reply::Int(libraries as i64)),
                    (Reply::bulk("functions_count"), Reply::Int(functions as i64)),
                ]),
            )]),
        ),
    ])
}

// ---- DUMP / RESTORE: the payload codec is db::rdb's (dump_functions / restore_functions) ---

fn function_dump(e: &mut Engine, _: &mut Call) -> CmdResult {
    let codes = e.scripting.libs.libs.values().map(|lib| &lib.code[..]);
    Ok(Reply::bulk(rdb::dump_functions(codes)))
}

fn function_restore(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 4 {
        return Err(Reply::err(errors::subcommand_syntax(
            call.arg(0),
            call.arg(1),
        )));
    }
    let policy = if call.argc() > 3 {
        call.arg(3).to_ascii_lowercase()
    } else {
        b"append".to_vec()
    };
    if !matches!(&policy[..], b"flush" | b"append" | b"replace") {
        return Err(Reply::err(
            crate::errors::WRONG_RESTORE_POLICY_GIVEN_VALUE_SHOULD,
        ));
    }
    let codes = match rdb::restore_functions(call.arg(2)) {
        Ok(codes) => codes,
        Err(FunctionRestoreError::VersionOrChecksum) => {
            return Err(Reply::err(errors::BAD_DUMP_PAYLOAD))
        }
        Err(FunctionRestoreError::NotAFunction) => {
            return Err(Reply::err(crate::errors::GIVEN_TYPE_IS_NOT_A_FUNCTION))
        }
        Err(FunctionRestoreError::BadFormat) => return Err(Reply::err(errors::BAD_DATA_FORMAT)),
    };
    let codes: Vec<Bytes> = codes.into_iter().map(Bytes::from).collect();
    // Build every library first, so a failure leaves the current ones untouched.
    let limit = e.config.lua_memory_limit;
    let mut staged: Vec<Library> = Vec::new();
    let mut failure = None;
    {
        let rt = e.scripting.func_runtime(limit);
        for code in &codes {
            match load_library(rt, code) {
                Ok(lib) => staged.push(lib),
                Err(m) => {
                    failure = Some(m);
                    break;
                }
            }
        }
    }
    if failure.is_none() {
        let mut names = std::collections::HashSet::new();
        for lib in &staged {
            if !names.insert(lib.name.clone()) {
                failure = Some(Reply::err(errors::library_exists(&lib.name)));
            }
        }
    }
    if failure.is_none() && &policy[..] == b"append" {
        if let Some(lib) = staged
            .iter()
            .find(|l| e.scripting.libs.libs.contains_key(&l.name))
        {
            failure = Some(Reply::err(errors::library_exists_unquoted(&lib.name)));
        }
    }
    if let Some(f) = failure {
        for lib in &staged {
            release(e, lib);
        }
        return Ok(f);
    }
    if &policy[..] == b"flush" {
        let old: Vec<String> = e.scripting.libs.libs.keys().cloned().collect();
        for n in old {
            let rt = e.scripting.func_rt.as_deref();
            e.scripting.libs.remove(&n, rt);
        }
    }
    for lib in &staged {
        if let Err(r) = check_collisions(e, lib) {
            for lib in &staged {
                release(e, lib);
            }
            return Ok(r);
        }
    }
    for lib in staged {
        let rt = e.scripting.func_rt.as_deref();
        e.scripting.libs.remove(&lib.name, rt);
        e.scripting.libs.insert(lib);
    }
    Ok(Reply::ok())
}

fn function_help(e: &mut Engine, _: &mut Call) -> CmdResult {
    let all: &[&str] = &[
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
    ];
    // Valkey 8 dropped the description line (valkey-server 8.1's FUNCTION HELP).
    let valkey = e.profile().has(crate::compat::since::VALKEY_SERVER_API);
    let lines: Vec<&str> = all
        .iter()
        .copied()
        .filter(|l| !(valkey && *l == "    * Library description"))
        .collect();
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "FUNCTION",
        &lines,
    ))
}

fn fcall_generic(e: &mut Engine, call: &mut Call, ro: bool) -> Reply {
    // Redis looks the function up before it reads the number of keys.
    let (func, flags, name) = match e.scripting.libs.function(call.arg(1)) {
        Some(f) => (f.func, f.flags, f.name.clone()),
        None => return Reply::err(crate::errors::FUNCTION_NOT_FOUND),
    };
    let Some(n) = crate::numfmt::parse_i64(call.arg(2)) else {
        return Reply::err(crate::errors::BAD_NUMBER_OF_KEYS_PROVIDED);
    };
    if n > call.argc() as i64 - 3 {
        return Reply::err(errors::NUMKEYS_TOO_BIG);
    }
    if n < 0 {
        return Reply::err(errors::NUMKEYS_NEGATIVE);
    }
    let n = n as usize;
    if let Err(r) = preflight(e, flags, ro) {
        return r;
    }
    let (keys, argv) = call.args[3..].split_at(n);
    let mut rc = match new_ctx(e, call, flags, ro, true, keys) {
        Ok(c) => c,
        Err(r) => return r,
    };
    rc.function = Some(std::sync::Arc::new(crate::busy::RunningFunction {
        name: name.to_string(),
        command: call.args.clone(),
        libraries: e.scripting.libs.libs.len(),
        functions: e.scripting.libs.registered_count(),
    }));
    let h = e
        .scripting
        .func_rt
        .as_mut()
        .expect("functions exist only in a runtime")
        .handles();
    runtime::run(e, h, func, Args::Params { keys, argv }, name.as_bytes(), rc)
}

fn fcall(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(fcall_generic(e, call, false))
}

fn fcall_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(fcall_generic(e, call, true))
}

fn container(_: &mut Engine, _: &mut Call) -> CmdResult {
    Err(Reply::err(crate::errors::UNKNOWN_SUBCOMMAND))
}

static FUNCTION_SUBCOMMANDS: &[Command] = &[
    Command::new("delete", 3, WRITE | NOSCRIPT, "scripting", function_delete),
    Command::new("dump", 2, NOSCRIPT, "scripting", function_dump),
    Command::new("flush", -2, WRITE | NOSCRIPT, "scripting", function_flush),
    Command::new("help", 2, LOADING | STALE, "scripting", function_help),
    Command::new("kill", 2, NOSCRIPT | ALLOW_BUSY, "scripting", function_kill),
    Command::new("list", -2, NOSCRIPT, "scripting", function_list),
    Command::new(
        "load",
        -3,
        WRITE | DENYOOM | NOSCRIPT,
        "scripting",
        function_load,
    ),
    Command::new(
        "restore",
        -3,
        WRITE | DENYOOM | NOSCRIPT,
        "scripting",
        function_restore,
    ),
    Command::new(
        "stats",
        2,
        NOSCRIPT | ALLOW_BUSY,
        "scripting",
        function_stats,
    ),
];

const FCALL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS;

pub static COMMANDS: &[Command] = &[
    Command::new("fcall", -3, FCALL_FLAGS, "scripting", fcall).movable_keys(numkeys_keys),
    Command::new(
        "fcall_ro",
        -3,
        READONLY | FCALL_FLAGS,
        "scripting",
        fcall_ro,
    )
    .movable_keys(numkeys_keys),
    Command::new("function", -2, 0, "scripting", container).subcommands(FUNCTION_SUBCOMMANDS),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_looping_library_is_stopped_by_the_load_timeout_even_with_a_frozen_clock() {
        // The manual clock never moves here: the timeout must still fire (real time).
        let mut e = Engine::with_clock(
            crate::config::Config::default(),
            crate::clock::Clock::manual(1_700_000_000_000),
        );
        let timeout = Reply::err("ERR Error registering functions: ERR FUNCTION LOAD timeout");
        let looping = "#!lua name=x\n while true do end";
        assert_eq!(e.execute(1, &["FUNCTION", "LOAD", looping]), timeout);
        let after_register = "#!lua name=y\nredis.register_function('f', function() return 1 end)\nwhile true do end";
        assert_eq!(e.execute(1, &["FUNCTION", "LOAD", after_register]), timeout);
        let restore = rdb::dump_functions([after_register.as_bytes()]);
        assert_eq!(
            e.execute(1, &[&b"FUNCTION"[..], b"RESTORE", &restore]),
            timeout
        );
        assert_eq!(e.execute(1, &["FUNCTION", "LIST"]), Reply::Array(vec![]));
        assert_eq!(
            e.execute(1, &["FCALL", "f", "0"]),
            Reply::err("ERR Function not found")
        );
        // The runtime is usable afterwards, with its own busy hook back in place.
        let ok = "#!lua name=z\nredis.register_function('g', function() return 7 end)";
        assert_eq!(e.execute(1, &["FUNCTION", "LOAD", ok]), Reply::bulk("z"));
        assert_eq!(e.execute(1, &["FCALL", "g", "0"]), Reply::Int(7));
    }
}
