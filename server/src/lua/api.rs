//! The `redis` table: call, pcall and the rest of the API scripts see, with Redis's checks
//! and error texts.

use crate::errors;
use std::ffi::c_int;

use bytes::Bytes;

use super::ffi::*;
use super::runtime::{with_ctx, Kind, RunCtx};
use super::texts;
use crate::arg_buffer::ArgBuffer;
use crate::cmd::table::{self, flags};
use crate::engine::{Call, Engine};
use crate::lua_cfn;
use crate::numfmt::format_lua_number_arg;
use crate::reply::Reply;

/// Fills the `redis` table into the globals at `g`.
pub unsafe fn open(l: *mut lua_State, g: c_int, kind: Kind) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_newtable(l);
        let r = lua_gettop(l);
        set_funcs(
            l,
            r,
            &[
                ("call", redis_call),
                ("pcall", redis_pcall),
                ("error_reply", error_reply),
                ("status_reply", status_reply),
                ("sha1hex", sha1hex),
                ("log", log),
                ("setresp", setresp),
                ("set_repl", set_repl),
                ("acl_check_cmd", acl_check_cmd),
            ],
        );
        if kind == Kind::Eval {
            set_funcs(
                l,
                r,
                &[
                    ("replicate_commands", replicate_commands),
                    ("breakpoint", breakpoint),
                    ("debug", debug),
                ],
            );
        }
        constants(l, r);
        for (name, v) in [
            ("REPL_NONE", 0),
            ("REPL_AOF", 1),
            ("REPL_SLAVE", 2),
            ("REPL_REPLICA", 2),
            ("REPL_ALL", 3),
        ] {
            lua_pushnumber(l, v as f64);
            set_field(l, r, name);
        }
        set_field(l, g, "redis");
    }
}

unsafe fn constants(l: *mut lua_State, r: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        for (name, v) in [
            ("LOG_DEBUG", 0),
            ("LOG_VERBOSE", 1),
            ("LOG_NOTICE", 2),
            ("LOG_WARNING", 3),
        ] {
            lua_pushnumber(l, v as f64);
            set_field(l, r, name);
        }
        push_str(l, "7.0.15");
        set_field(l, r, "REDIS_VERSION");
        lua_pushnumber(l, 0x07000f as f64);
        set_field(l, r, "REDIS_VERSION_NUM");
    }
}

/// The `redis` table FUNCTION LOAD code sees.
pub unsafe fn open_load_api(l: *mut lua_State, r: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        set_funcs(
            l,
            r,
            &[
                ("register_function", super::functions::register_function),
                ("log", log),
            ],
        );
        constants(l, r);
    }
}

/// Pushes an error as Redis's luaPushError does: `-CODE msg` keeps its code, anything
/// else gets `ERR `; a trailing CR/LF is trimmed.
///
/// Any Lua call here may raise "not enough memory" and longjmp past the caller, so nothing
/// Rust owns is alive across them: the message is assembled by Lua from borrowed pieces.
/// (A caller that owns `msg` keeps it somewhere that outlives the jump: see `call_body`.)
pub unsafe fn push_redis_error(l: *mut lua_State, msg: &str) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        let (code, text) = match msg.as_bytes().strip_prefix(b"-") {
            Some(rest) => split_code(rest),
            None => (&b"ERR"[..], msg.as_bytes()),
        };
        push_error_parts(l, code, text);
    }
}

/// `CODE rest` split at the first space; without one, the whole is the text of an ERR.
fn split_code(s: &[u8]) -> (&[u8], &[u8]) {
    match s.iter().position(|&c| c == b' ') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (b"ERR", s),
    }
}

unsafe fn push_error_parts(l: *mut lua_State, code: &[u8], text: &[u8]) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        let trimmed = text.len()
            - text
                .iter()
                .rev()
                .take_while(|&&c| c == b'\r' || c == b'\n')
                .count();
        lua_createtable(l, 0, 1);
        push_bytes(l, code);
        push_bytes(l, b" ");
        push_bytes(l, &text[..trimmed]);
        lua_concat(l, 3);
        set_field(l, lua_gettop(l) - 1, "err");
    }
}

/// What redis.call pushes once the script's context is given back.
enum Called {
    NoScript,
    NoArgs,
    BadArgs,
    /// The command ran. Its outcome waits in the context (`RunCtx::outcome`), which outlives a
    /// jump out of this C function, instead of in a local that would never be dropped.
    Ran {
        outcome: *const Result<Reply, String>,
        resp: u8,
        failed: bool,
    },
}

unsafe fn call_body(l: *mut lua_State, raise: bool) -> CResult {
    let fail = if raise { Err(()) } else { Ok(1) };
    // SAFETY: module contract (lua/ffi.rs): the call's arguments are slots 1..=argc.
    let argc = unsafe { lua_gettop(l) };
    let called = with_ctx(|c| {
        if argc == 0 {
            return Called::NoArgs;
        }
        // SAFETY: reading the argument slots raises nothing (strings are read as they are,
        // numbers with lua_tonumber). The engine pointer is set by `run` to the engine running
        // the script, alive and otherwise unused while the script runs.
        let args = unsafe { command_args(l, argc, &mut (*c.engine).arg_buffer, c.arg_cache) };
        let Some(args) = args else {
            return Called::BadArgs;
        };
        let resp = c.resp;
        let outcome = script_call(c, args);
        let failed = !matches!(&outcome, Ok(reply) if !reply.is_error());
        if failed {
            // SAFETY: as above.
            count_script_error(unsafe { &mut *c.engine }, &outcome);
        }
        Called::Ran {
            outcome: c.outcome.insert(outcome),
            resp,
            failed,
        }
    })
    .unwrap_or(Called::NoScript);
    // SAFETY: module contract. `outcome` points into the RunCtx that `run` keeps alive until
    // its protected call returns, which is after this C function returns or jumps; only
    // call_body writes that field, and no Lua code (so no other redis.call) runs while the
    // reply is converted. Reading the texts (only for the refusals worded differently by
    // Valkey, not on every call) pushes and pops one slot and allocates nothing.
    unsafe {
        let words = || texts::get(l);
        match called {
            Called::NoScript => {
                push_redis_error(l, errors::LUA_CALL_OUTSIDE_SCRIPT);
                fail
            }
            Called::NoArgs => {
                push_redis_error(
                    l,
                    words().pick(errors::LUA_CALL_NO_ARGS, errors::LUA_CALL_NO_ARGS_VALKEY),
                );
                fail
            }
            Called::BadArgs => {
                push_redis_error(
                    l,
                    words().pick(errors::LUA_CALL_BAD_ARGS, errors::LUA_CALL_BAD_ARGS_VALKEY),
                );
                fail
            }
            Called::Ran {
                outcome,
                resp,
                failed,
            } => {
                // The arguments were copied out: drop them, as Redis does, so a call with
                // thousands of them leaves the stack room for its reply.
                lua_settop(l, 0);
                match &*outcome {
                    Ok(reply) => super::convert::push_call_reply(l, reply, resp),
                    Err(msg) => push_redis_error(l, msg),
                }
                with_ctx(|c| c.outcome = None);
                if failed {
                    fail
                } else {
                    Ok(1)
                }
            }
        }
    }
}

/// The arguments at stack slots 1..=argc as the command's arguments: strings as they are,
/// numbers in %.17g; None when one is of another type. Strings go through the running
/// state's `cache` (`arg_cache`) when there is one (not null).
unsafe fn command_args(
    l: *mut lua_State,
    argc: c_int,
    out: &mut ArgBuffer,
    cache: *mut super::arg_cache::ArgCache,
) -> Option<Vec<Bytes>> {
    // SAFETY: module contract (lua/ffi.rs); slots 1..=argc are read with redlab_string_at,
    // lua_type and lua_tonumber, none of which allocates or raises, and `ArgCache::get` raises
    // nothing either. A non-null `cache` is the running state's (`run` set it from the
    // runtime's handles; the runtime outlives the script) and nothing else uses it meanwhile.
    unsafe {
        // A refused call leaves a partial vector behind, which the next `begin` drops.
        out.begin();
        for i in 1..=argc {
            let mut len = 0usize;
            let p = redlab_string_at(l, i, &mut len) as *const u8;
            if !p.is_null() {
                match cache.as_mut() {
                    Some(cache) => out.push_bytes(cache.get(l, i, p, len)),
                    None => out.push(std::slice::from_raw_parts(p, len)),
                }
            } else if lua_type(l, i) == LUA_TNUMBER {
                out.push(format_lua_number_arg(lua_tonumber(l, i)).as_bytes());
            } else {
                return None;
            }
        }
        Some(out.finish())
    }
}

unsafe fn redis_call_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { call_body(l, true) }
}
unsafe fn redis_pcall_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { call_body(l, false) }
}
lua_cfn!(redis_call, redis_call_body);
lua_cfn!(redis_pcall, redis_pcall_body);

/// Runs one command for the script after Redis's script checks. `Err` is the error text
/// (pushed with luaPushError rules); a command's own error comes back as `Ok(Reply::Error)`.
fn script_call(c: &mut RunCtx, mut args: Vec<Bytes>) -> Result<Reply, String> {
    // SAFETY: the engine outlives the script run that published this context, and no
    // other reference to it is used while redis.call runs.
    let e = unsafe { &mut *c.engine };
    // `rename-command` holds inside scripts too (Redis looks names up in one dictionary).
    if !e.config.renames.translate(&mut args) {
        return Err(table::ScriptRefusal::Unknown
            .text_for(e.profile())
            .to_string());
    }
    let (cmd, parent) =
        table::resolve_in_script(e.profile(), &args, c.read_only, e.disable_deny_scripts).map_err(
            |refusal| {
                if refusal == table::ScriptRefusal::Unknown {
                    e.note_refused_command(&args);
                } else if let Some((cmd, name)) = table::named_command(e.profile(), &args) {
                    e.stats.record_rejected(cmd, &name);
                }
                refusal.text_for(e.profile()).to_string()
            },
        )?;
    if let Err(refused) = script_checks(e, c, cmd, parent, &args) {
        // Redis counts a command a script's checks refuse in its rejected_calls.
        let name = parent.map_or(std::borrow::Cow::Borrowed(cmd.name), |p| {
            std::borrow::Cow::Owned(cmd.full_name(Some(p)))
        });
        e.stats.record_rejected(cmd, &name);
        return Err(refused);
    }
    if cmd.has(flags::WRITE) {
        c.has_written = true;
    }
    let mut call = Call {
        conn: c.conn,
        db: c.db,
        resp: c.resp,
        args,
        in_script: true,
        in_multi: false,
        reprocessing: false,
    };
    // Resolved and checked above: call the handler directly (`Engine::call` counts it).
    let started = crate::clock::monotonic_us();
    let reply = e.call(cmd, &mut call);
    let us = e.elapsed_us(started);
    e.note_slow_in_script(cmd, &call.args, us);
    e.feed_monitors(
        c.conn,
        crate::engine::MonitorFrom::Lua,
        call.db,
        &call.args,
        cmd,
    );
    e.arg_buffer.recycle(call.args);
    e.count_command_run(c.conn);
    match parent {
        None => e.count_call(cmd, cmd.name, reply.is_error(), us),
        Some(p) => {
            let name = cmd.full_name(Some(p));
            e.count_call(cmd, &name, reply.is_error(), us);
        }
    }
    c.db = call.db;
    Ok(reply)
}

/// An error redis.call or redis.pcall met (a refusal or the command's own error reply) is
/// counted where it happens, as Redis counts it, whether or not the script lets it through;
/// the script's own error reply, when it is this one, is not counted again (`Stats`).
fn count_script_error(e: &mut Engine, outcome: &Result<Reply, String>) {
    let text = match outcome {
        Ok(reply) => match reply.error_text() {
            Some(t) => t.into_owned(),
            None => return,
        },
        Err(msg) => match msg.strip_prefix('-') {
            Some(rest) if rest.contains(' ') => rest.to_string(),
            Some(rest) => format!("ERR {rest}"),
            None => format!("ERR {msg}"),
        },
    };
    e.stats.count_script_error(text);
}

/// The checks of Redis's scriptCall after the command is known: ACL, memory, redlab's strict
/// keys, the cluster's slots. `Err` is the error text.
fn script_checks(
    e: &mut Engine,
    c: &RunCtx,
    cmd: &'static table::Command,
    parent: Option<&'static table::Command>,
    args: &[Bytes],
) -> Result<(), String> {
    crate::cmd::acl::script_permission(e, c.conn, cmd, parent, args)?;
    if cmd.has(flags::WRITE) && crate::repl::commands::script_write_refused(e, c.conn) {
        return Err(format!("-{}", errors::READONLY_REPLICA));
    }
    if !c.allow_oom
        && c.oom_at_start
        && !c.has_written
        && cmd.denies_oom_in(e.profile())
        && e.config.maxmemory > 0
    {
        return Err(format!("-{}", errors::OOM));
    }
    // Once the script has written it is not failed on the server's state (Redis's
    // SCRIPT_WRITE_DIRTY).
    if cmd.has(flags::WRITE) && !c.has_written && crate::cmd::scripting::replicas_short(e) {
        return Err(format!("-{}", errors::NOREPLICAS));
    }
    if let Some(declared) = &c.strict_keys {
        for pos in cmd.key_positions(args) {
            let key = &args[pos];
            if !declared.iter().any(|k| k == key) {
                return Err(format!("-{}", errors::script_undeclared_key(key)));
            }
        }
    }
    if e.cluster.is_some() {
        crate::cluster::script_check(e, c.conn, cmd, args)?;
    }
    Ok(())
}

unsafe fn error_reply_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) != 1 || lua_type(l, 1) != LUA_TSTRING {
            push_redis_error(l, errors::LUA_WRONG_ARGS_OR_TYPE);
            return Ok(1);
        }
        // Redis prefixes a '-' when the message has none, then reads the code as usual.
        let s = to_bytes(l, 1).unwrap_or_default();
        let (code, text) = split_code(s.strip_prefix(b"-").unwrap_or(s));
        push_error_parts(l, code, text);
        Ok(1)
    }
}
lua_cfn!(error_reply, error_reply_body);

unsafe fn status_reply_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) != 1 || lua_type(l, 1) != LUA_TSTRING {
            push_redis_error(l, errors::LUA_WRONG_ARGS_OR_TYPE);
            return Ok(1);
        }
        lua_createtable(l, 0, 1);
        lua_pushvalue(l, 1);
        set_field(l, 2, "ok");
        Ok(1)
    }
}
lua_cfn!(status_reply, status_reply_body);

unsafe fn sha1hex_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) != 1 {
            push_redis_error(l, errors::WRONG_NUMBER_OF_ARGUMENTS);
            return Err(());
        }
        let data = to_bytes(l, 1).unwrap_or_default();
        let digest = sha1_smol::Sha1::from(data).digest().bytes();
        // On the stack, not in a String: pushing may raise and jump past this frame.
        let mut hex = [0u8; 40];
        for (i, b) in digest.iter().enumerate() {
            hex[2 * i] = b"0123456789abcdef"[(b >> 4) as usize];
            hex[2 * i + 1] = b"0123456789abcdef"[(b & 15) as usize];
        }
        push_bytes(l, &hex);
        Ok(1)
    }
}
lua_cfn!(sha1hex, sha1hex_body);

unsafe fn log_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let argc = lua_gettop(l);
        let words = texts::get(l);
        if argc < 2 {
            push_redis_error(
                l,
                words.pick(errors::LUA_LOG_ARGS, errors::LUA_LOG_ARGS_VALKEY),
            );
            return Err(());
        }
        if lua_type(l, 1) != LUA_TNUMBER {
            push_redis_error(l, errors::LUA_LOG_LEVEL_NOT_NUMBER);
            return Err(());
        }
        let level = lua_tonumber(l, 1) as i64;
        if !(0..=3).contains(&level) {
            push_redis_error(
                l,
                words.pick(
                    errors::LUA_LOG_LEVEL_INVALID,
                    errors::LUA_LOG_LEVEL_INVALID_VALKEY,
                ),
            );
            return Err(());
        }
        // Numbers become strings in place first: converting allocates and may raise, which
        // must happen before `line` owns memory.
        for i in 2..=argc {
            if lua_type(l, i) == LUA_TNUMBER {
                lua_tolstring(l, i, std::ptr::null_mut());
            }
        }
        let mut line = String::new();
        for i in 2..=argc {
            if let Some(b) = str_bytes(l, i) {
                if i > 2 {
                    line.push(' ');
                }
                line.push_str(&String::from_utf8_lossy(b));
            }
        }
        match level {
            0 => tracing::debug!(target: "redlab::script", "{}", line),
            1 | 2 => tracing::info!(target: "redlab::script", "{}", line),
            _ => tracing::warn!(target: "redlab::script", "{}", line),
        }
        Ok(0)
    }
}
lua_cfn!(log, log_body);

unsafe fn setresp_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) != 1 {
            push_redis_error(
                l,
                texts::get(l).pick(errors::LUA_SETRESP_ARGS, errors::LUA_SETRESP_ARGS_VALKEY),
            );
            return Err(());
        }
        let v = lua_tonumber(l, 1);
        if v != 2.0 && v != 3.0 {
            push_redis_error(l, errors::LUA_SETRESP_VERSION);
            return Err(());
        }
        with_ctx(|c| c.resp = v as u8);
        Ok(0)
    }
}
lua_cfn!(setresp, setresp_body);

unsafe fn set_repl_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) != 1 {
            push_redis_error(
                l,
                texts::get(l).pick(errors::LUA_SET_REPL_ARGS, errors::LUA_SET_REPL_ARGS_VALKEY),
            );
            return Err(());
        }
        let v = lua_tonumber(l, 1) as i64;
        if !(0..=3).contains(&v) {
            push_redis_error(l, errors::LUA_SET_REPL_FLAGS);
            return Err(());
        }
        Ok(0)
    }
}
lua_cfn!(set_repl, set_repl_body);

unsafe fn replicate_commands_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        lua_pushboolean(l, 1);
        Ok(1)
    }
}
lua_cfn!(replicate_commands, replicate_commands_body);

unsafe fn breakpoint_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        lua_pushboolean(l, 0);
        Ok(1)
    }
}
lua_cfn!(breakpoint, breakpoint_body);

unsafe fn debug_body(_l: *mut lua_State) -> CResult {
    Ok(0)
}
lua_cfn!(debug, debug_body);

unsafe fn acl_check_cmd_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let argc = lua_gettop(l);
        let words = texts::get(l);
        if argc == 0 {
            push_redis_error(
                l,
                words.pick(errors::LUA_CALL_NO_ARGS, errors::LUA_CALL_NO_ARGS_VALKEY),
            );
            return Err(());
        }
        // Whether the user of the client running the script may run this command line
        // (arguments and keys included), as Redis asks ACLCheckAllUserCommandPerm.
        enum Verdict {
            BadArgs,
            Unknown,
            Allowed(bool),
        }
        let verdict = with_ctx(|c| {
            // SAFETY: as in `call_body`: the engine outlives the run and is otherwise unused.
            let e = &mut *c.engine;
            let Some(args) = command_args(l, argc, &mut e.arg_buffer, c.arg_cache) else {
                return Verdict::BadArgs;
            };
            match table::named_command(e.profile(), &args) {
                None => Verdict::Unknown,
                Some((cmd, name)) => Verdict::Allowed(
                    crate::cmd::acl::permission(e, c.conn, cmd, &name, &args).is_ok(),
                ),
            }
        });
        match verdict {
            None => {
                push_redis_error(l, errors::LUA_ACL_CHECK_OUTSIDE_SCRIPT);
                Err(())
            }
            Some(Verdict::BadArgs) => {
                push_redis_error(
                    l,
                    words.pick(errors::LUA_CALL_BAD_ARGS, errors::LUA_CALL_BAD_ARGS_VALKEY),
                );
                Err(())
            }
            Some(Verdict::Unknown) => {
                push_redis_error(
                    l,
                    words.pick(
                        errors::LUA_ACL_CHECK_CMD_INVALID,
                        errors::LUA_ACL_CHECK_CMD_INVALID_VALKEY,
                    ),
                );
                Err(())
            }
            Some(Verdict::Allowed(allowed)) => {
                lua_pushboolean(l, c_int::from(allowed));
                Ok(1)
            }
        }
    }
}
lua_cfn!(acl_check_cmd, acl_check_cmd_body);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lua::runtime::Runtime;

    /// What push_redis_error leaves in the `err` field for `msg`.
    fn pushed(msg: &str) -> String {
        let rt = Runtime::new(Kind::Eval, 1 << 24);
        // SAFETY: `rt` owns a live state for the test's length; the pushes fit in LUA_MINSTACK.
        unsafe {
            push_redis_error(rt.l, msg);
            get_field(rt.l, lua_gettop(rt.l), "err");
            String::from_utf8_lossy(to_bytes(rt.l, -1).unwrap_or_default()).into_owned()
        }
    }

    #[test]
    fn error_codes_as_redis_derives_them() {
        assert_eq!(pushed("-WRONGTYPE x y"), "WRONGTYPE x y");
        assert_eq!(pushed("-abc"), "ERR abc");
        assert_eq!(pushed("-"), "ERR ");
        assert_eq!(pushed("plain"), "ERR plain");
        assert_eq!(pushed("-OOM no\r\n"), "OOM no");
    }
}
