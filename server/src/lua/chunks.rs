//! The bytecode of EVAL bodies this process has compiled, shared by every engine of it.
//!
//! A suite that makes an engine (or a server) per test loads the same scripts in each, and
//! parsing a short script was about a third of a fresh engine's first EVAL (17,500 of 49,600
//! instructions, `cargo bench --bench per_test` row (a) under callgrind). So the first state
//! that compiles a body dumps the function (`lua_dump`) and keeps the bytes here, and every
//! later state loads them (`redlab_load_own_dump`, added by server/build.rs) instead of
//! parsing the text again. The function loaded is the one the parser made: same constants,
//! same `@user_script` source and line numbers, so errors and results cannot differ.
//!
//! Only this module's own dumps are ever loaded as bytecode. A script or client has no way to
//! put bytes here: `loadstring` and every body sent to EVAL still go to the text parser, where
//! a binary chunk is a syntax error, as in Redis.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A body by its SHA1 and how many of its bytes a shebang line took (the text compiled is
/// what follows them).
type Key = ([u8; 40], usize);

#[derive(Default)]
struct Dumps {
    by_body: HashMap<Key, Arc<[u8]>, foldhash::fast::FixedState>,
    /// Bytes held in `by_body`.
    bytes: usize,
}

static DUMPS: Mutex<Option<Dumps>> = Mutex::new(None);

/// Bytes of bytecode kept before the table starts over: a process that compiles endless
/// distinct scripts (a fuzzer) holds at most this much.
const BUDGET: usize = 8 << 20;

fn lock() -> std::sync::MutexGuard<'static, Option<Dumps>> {
    // Nothing panics while the lock is held; recover anyway.
    DUMPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The bytecode dumped for the body with SHA1 `sha` compiled from byte `skip` on, if this
/// process compiled it before.
pub fn get(sha: &[u8; 40], skip: usize) -> Option<Arc<[u8]>> {
    lock().as_ref()?.by_body.get(&(*sha, skip)).cloned()
}

/// Keeps the bytecode `dump` of the body with SHA1 `sha` compiled from byte `skip` on.
pub fn put(sha: &[u8; 40], skip: usize, dump: Vec<u8>) {
    if dump.len() > BUDGET / 8 {
        return;
    }
    let mut guard = lock();
    let dumps = guard.get_or_insert_with(Dumps::default);
    if dumps.bytes + dump.len() > BUDGET {
        *dumps = Dumps::default();
    }
    dumps.bytes += dump.len();
    if let Some(old) = dumps.by_body.insert((*sha, skip), dump.into()) {
        dumps.bytes -= old.len();
    }
}

#[cfg(test)]
mod tests {
    use super::super::ffi::*;
    use super::super::runtime::{Kind, Runtime};
    use crate::lua::cache::sha1_hex;

    /// Runs the compiled function at `f` in `rt` and gives back its string result or error.
    fn run(rt: &Runtime, f: std::ffi::c_int) -> Result<String, String> {
        // SAFETY: the state is live and used by this thread only; the function is run in
        // protected mode and the stack is reset after its result is copied out.
        unsafe {
            let l = rt.l;
            lua_rawgeti_(l, LUA_REGISTRYINDEX, f);
            let status = lua_pcall(l, 0, 1, 0);
            let text = to_bytes(l, -1)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            lua_settop(l, 0);
            if status == 0 {
                Ok(text)
            } else {
                Err(text)
            }
        }
    }

    #[test]
    fn a_body_compiled_once_is_loaded_elsewhere_and_behaves_the_same() {
        // A body no other test compiles, so the first state here is the one that parses it.
        let body = b"local t = {}\nfor i = 1, 3 do t[#t + 1] = tostring(i * 7) end\n\
                     if #t == 3 then error('line three: ' .. table.concat(t, ',')) end\n\
                     return 'unreached'\n-- chunks test";
        let sha = sha1_hex(body);
        assert!(super::get(&sha, 0).is_none());
        let first = Runtime::new(Kind::Eval, 1 << 24);
        let parsed = first.compile_eval(body, 0, &sha).expect("compiles");
        assert!(super::get(&sha, 0).is_some(), "the dump is kept");
        let second = Runtime::new(Kind::Eval, 1 << 24);
        let before = super::super::runtime::loaded_from_dump();
        let loaded = second.compile_eval(body, 0, &sha).expect("loads");
        assert_eq!(super::super::runtime::loaded_from_dump(), before + 1);
        let want = "user_script:3: line three: 7,14,21";
        assert_eq!(run(&first, parsed), Err(want.to_string()));
        assert_eq!(run(&second, loaded), Err(want.to_string()));
    }

    #[test]
    fn scripts_still_cannot_load_bytecode() {
        let rt = Runtime::new(Kind::Eval, 1 << 24);
        let f = rt
            .compile(
                b"local f = loadstring('\\27Lua\\81\\0\\1\\4\\8\\4\\8\\0') return tostring(f)",
                c"@user_script",
            )
            .expect("compiles");
        assert_eq!(run(&rt, f), Ok("nil".to_string()));
        let refused = rt.compile(b"\x1bLua\x51\x00\x01\x04\x08\x04\x08\x00", c"@user_script");
        assert!(refused.is_err(), "a binary body is a syntax error");
    }
}
