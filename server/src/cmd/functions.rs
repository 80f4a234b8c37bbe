//! The functions commands: FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/KILL/STATS/HELP,
//! FCALL and FCALL_RO.

use bytes::Bytes;

use super::scripting::{help, new_ctx, numkeys_keys, preflight, NOTBUSY};
use super::table::{flags::*, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::lua::functions::{load_library, Library};
use crate::lua::runtime::{self, Args};
use crate::lua::shebang;
use crate::reply::Reply;

/// Loads `code` as a library; `replace` allows replacing one of the same name.
fn install(e: &mut Engine, code: &Bytes, replace: bool) -> Result<String, Reply> {
    let name = shebang::parse_library(code).map_err(Reply::err)?;
    if !replace && e.scripting.libs.libs.contains_key(&name) {
        return Err(Reply::err(format!("ERR Library '{}' already exists", name)));
    }
    let limit = e.config.lua_memory_limit;
    let rt = e.scripting.func_runtime(limit);
    let lib = load_library(rt, code).map_err(Reply::err)?;
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
                return Err(Reply::err(format!(
                    "ERR Function {} already exists",
                    f.name
                )));
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

fn function_load(e: &mut Engine, call: &mut Call) -> Reply {
    let mut replace = false;
    let mut i = 2;
    while i < call.argc() - 1 {
        if call.arg(i).eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else {
            return Reply::err(format!(
                "ERR Unknown option given: {}",
                errors::clip(call.arg(i), 128)
            ));
        }
        i += 1;
    }
    let code = call.args[call.argc() - 1].clone();
    match install(e, &code, replace) {
        Ok(name) => Reply::bulk(name),
        Err(r) => r,
    }
}

fn function_list(e: &mut Engine, call: &mut Call) -> Reply {
    let mut pattern: Option<Bytes> = None;
    let mut with_code = false;
    let mut i = 2;
    while i < call.argc() {
        let a = call.arg(i);
        if a.eq_ignore_ascii_case(b"withcode") && !with_code {
            with_code = true;
        } else if a.eq_ignore_ascii_case(b"libraryname") && pattern.is_none() {
            if i + 1 >= call.argc() {
                return Reply::err("ERR library name argument was not given");
            }
            pattern = Some(call.args[i + 1].clone());
            i += 1;
        } else {
            return Reply::err(format!("ERR Unknown argument {}", errors::clip(a, 128)));
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
    Reply::Array(out)
}

fn function_delete(e: &mut Engine, call: &mut Call) -> Reply {
    let name = String::from_utf8_lossy(call.arg(2)).into_owned();
    let rt = e.scripting.func_rt.as_deref();
    match e.scripting.libs.remove(&name, rt) {
        Some(_) => Reply::ok(),
        None => Reply::err("ERR Library not found"),
    }
}

fn flush_all(e: &mut Engine) {
    e.scripting.libs = Default::default();
    e.scripting.func_rt = None;
}

fn function_flush(e: &mut Engine, call: &mut Call) -> Reply {
    if call.argc() > 3 {
        return Reply::err(errors::subcommand_syntax(call.arg(0), call.arg(1)));
    }
    if call.argc() == 3
        && !call.arg(2).eq_ignore_ascii_case(b"sync")
        && !call.arg(2).eq_ignore_ascii_case(b"async")
    {
        return Reply::err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    }
    flush_all(e);
    Reply::ok()
}

fn function_kill(_: &mut Engine, _: &mut Call) -> Reply {
    Reply::err(NOTBUSY)
}

fn function_stats(e: &mut Engine, _: &mut Call) -> Reply {
    stats_reply(
        None,
        e.scripting.libs.libs.len(),
        e.scripting.libs.function_count(),
    )
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

// ---- DUMP / RESTORE: Redis's payload (RDB function entries, RDB version, CRC64) ----------

const RDB_OPCODE_FUNCTION2: u8 = 245;
const RDB_VERSION: u16 = 10;

fn crc64(data: &[u8]) -> u64 {
    // CRC-64/Jones as Redis uses it: reflected polynomial 0x95ac9329ac4bc9b5, init 0.
    let mut crc: u64 = 0;
    for &b in data {
        crc ^= b as u64;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x95ac_9329_ac4b_c9b5
            } else {
                crc >> 1
            };
        }
    }
    crc
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    if n < 64 {
        out.push(n as u8);
    } else if n < 16384 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u32::MAX as usize {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
}

fn function_dump(e: &mut Engine, _: &mut Call) -> Reply {
    let mut out = Vec::new();
    for lib in e.scripting.libs.libs.values() {
        out.push(RDB_OPCODE_FUNCTION2);
        put_len(&mut out, lib.code.len());
        out.extend_from_slice(&lib.code);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Reply::bulk(out)
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.s.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let r = self.s.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(r)
    }
    /// (length, is_encoded)
    fn len(&mut self) -> Option<(usize, bool)> {
        let b = self.byte()?;
        match b >> 6 {
            0 => Some(((b & 0x3f) as usize, false)),
            1 => Some(((((b & 0x3f) as usize) << 8) | self.byte()? as usize, false)),
            2 if b == 0x80 => Some((
                u32::from_be_bytes(self.take(4)?.try_into().ok()?) as usize,
                false,
            )),
            2 if b == 0x81 => Some((
                u64::from_be_bytes(self.take(8)?.try_into().ok()?) as usize,
                false,
            )),
            3 => Some(((b & 0x3f) as usize, true)),
            _ => None,
        }
    }
    fn string(&mut self) -> Option<Vec<u8>> {
        let (n, enc) = self.len()?;
        if !enc {
            return Some(self.take(n)?.to_vec());
        }
        match n {
            0 => Some((self.byte()? as i8).to_string().into_bytes()),
            1 => Some(
                i16::from_le_bytes(self.take(2)?.try_into().ok()?)
                    .to_string()
                    .into_bytes(),
            ),
            2 => Some(
                i32::from_le_bytes(self.take(4)?.try_into().ok()?)
                    .to_string()
                    .into_bytes(),
            ),
            3 => {
                let (clen, _) = self.len()?;
                let (ulen, _) = self.len()?;
                lzf_decompress(self.take(clen)?, ulen)
            }
            _ => None,
        }
    }
}

/// LZF decompression (the format Redis compresses RDB strings with).
fn lzf_decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(out_len.min(1 << 26));
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            out.extend_from_slice(input.get(i..i + n)?);
            i += n;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *input.get(i)? as usize;
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(i)? as usize + 1;
            i += 1;
            let start = out.len().checked_sub(back)?;
            for k in 0..n + 2 {
                let b = out[start + k];
                out.push(b);
            }
        }
        if out.len() > out_len {
            return None;
        }
    }
    (out.len() == out_len).then_some(out)
}

fn function_restore(e: &mut Engine, call: &mut Call) -> Reply {
    if call.argc() > 4 {
        return Reply::err(errors::subcommand_syntax(call.arg(0), call.arg(1)));
    }
    let policy = if call.argc() > 3 {
        call.arg(3).to_ascii_lowercase()
    } else {
        b"append".to_vec()
    };
    if !matches!(&policy[..], b"flush" | b"append" | b"replace") {
        return Reply::err(
            "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
        );
    }
    let payload = call.arg(2);
    const BAD: &str = "ERR DUMP payload version or checksum are wrong";
    if payload.len() < 10 {
        return Reply::err(BAD);
    }
    let (body, footer) = payload.split_at(payload.len() - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..10].try_into().unwrap_or_default());
    if version > RDB_VERSION || (crc != 0 && crc != crc64(&payload[..payload.len() - 8])) {
        return Reply::err(BAD);
    }
    let mut r = Reader { s: body, pos: 0 };
    let mut codes = Vec::new();
    while r.pos < body.len() {
        if r.byte() != Some(RDB_OPCODE_FUNCTION2) {
            return Reply::err("ERR given type is not a function");
        }
        match r.string() {
            Some(code) => codes.push(Bytes::from(code)),
            None => return Reply::err("ERR Bad data format"),
        }
    }
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
                    failure = Some(Reply::err(m));
                    break;
                }
            }
        }
    }
    if failure.is_none() {
        let mut names = std::collections::HashSet::new();
        for lib in &staged {
            if !names.insert(lib.name.clone()) {
                failure = Some(Reply::err(format!(
                    "ERR Library '{}' already exists",
                    lib.name
                )));
            }
        }
    }
    if failure.is_none() && &policy[..] == b"append" {
        if let Some(lib) = staged
            .iter()
            .find(|l| e.scripting.libs.libs.contains_key(&l.name))
        {
            failure = Some(Reply::err(format!(
                "ERR Library {} already exists",
                lib.name
            )));
        }
    }
    if let Some(f) = failure {
        for lib in &staged {
            release(e, lib);
        }
        return f;
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
            return r;
        }
    }
    for lib in staged {
        let rt = e.scripting.func_rt.as_deref();
        e.scripting.libs.remove(&lib.name, rt);
        e.scripting.libs.insert(lib);
    }
    Reply::ok()
}

fn function_help(_: &mut Engine, _: &mut Call) -> Reply {
    help(&[
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
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
        "HELP",
        "    Prints this help.",
    ])
}

fn fcall_generic(e: &mut Engine, call: &mut Call, ro: bool) -> Reply {
    // Redis looks the function up before it reads the number of keys.
    let (func, flags, name) = match e.scripting.libs.function(call.arg(1)) {
        Some(f) => (f.func, f.flags, f.name.clone()),
        None => return Reply::err("ERR Function not found"),
    };
    let Some(n) = crate::numfmt::parse_i64(call.arg(2)) else {
        return Reply::err("ERR Bad number of keys provided");
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
        functions: e.scripting.libs.function_count(),
    }));
    let h = e
        .scripting
        .func_rt
        .as_ref()
        .expect("functions exist only in a runtime")
        .handles();
    runtime::run(e, h, func, Args::Params { keys, argv }, &name, rc)
}

fn fcall(e: &mut Engine, call: &mut Call) -> Reply {
    fcall_generic(e, call, false)
}

fn fcall_ro(e: &mut Engine, call: &mut Call) -> Reply {
    fcall_generic(e, call, true)
}

fn container(_: &mut Engine, _: &mut Call) -> Reply {
    Reply::err("ERR unknown subcommand")
}

static FUNCTION_SUBCOMMANDS: &[Command] = &[
    Command::legacy("delete", 3, WRITE | NOSCRIPT, "scripting", function_delete),
    Command::legacy("dump", 2, NOSCRIPT, "scripting", function_dump),
    Command::legacy("flush", -2, WRITE | NOSCRIPT, "scripting", function_flush),
    Command::legacy("help", 2, LOADING | STALE, "scripting", function_help),
    Command::legacy("kill", 2, NOSCRIPT | ALLOW_BUSY, "scripting", function_kill),
    Command::legacy("list", -2, NOSCRIPT, "scripting", function_list),
    Command::legacy(
        "load",
        -3,
        WRITE | DENYOOM | NOSCRIPT,
        "scripting",
        function_load,
    ),
    Command::legacy(
        "restore",
        -3,
        WRITE | DENYOOM | NOSCRIPT,
        "scripting",
        function_restore,
    ),
    Command::legacy(
        "stats",
        2,
        NOSCRIPT | ALLOW_BUSY,
        "scripting",
        function_stats,
    ),
];

const FCALL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS;

pub static COMMANDS: &[Command] = &[
    Command::legacy("fcall", -3, FCALL_FLAGS, "scripting", fcall).movable_keys(numkeys_keys),
    Command::legacy(
        "fcall_ro",
        -3,
        READONLY | FCALL_FLAGS,
        "scripting",
        fcall_ro,
    )
    .movable_keys(numkeys_keys),
    Command::legacy("function", -2, 0, "scripting", container).subcommands(FUNCTION_SUBCOMMANDS),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lzf_round_trip_of_a_back_reference() {
        // literal "abc" then a back reference copying 3 bytes from offset 3.
        let compressed = [2u8, b'a', b'b', b'c', 0x20, 2];
        assert_eq!(
            lzf_decompress(&compressed, 6).as_deref(),
            Some(&b"abcabc"[..])
        );
    }

    /// A FUNCTION DUMP payload holding one library with `code`, as Redis writes it.
    fn dump_of(code: &[u8]) -> Vec<u8> {
        let mut out = vec![RDB_OPCODE_FUNCTION2];
        put_len(&mut out, code.len());
        out.extend_from_slice(code);
        out.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = crc64(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

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
        let restore = dump_of(after_register.as_bytes());
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

    #[test]
    fn crc64_is_redis_jones() {
        assert_eq!(crc64(b"123456789"), 0xe9c6d914c4b8d9ca);
    }
}
