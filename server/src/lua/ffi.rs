//! Thin helpers over the Lua 5.1 C API (declared by `mlua-sys`).
//!
//! The runtime talks to Lua through the C API rather than mlua's safe layer: redis.call and
//! the sandbox must raise plain Lua values (Redis's `{err=...}` tables, position-prefixed
//! strings) exactly where Redis's C functions raise them, so that error texts and the
//! `@user_script:N` line match. Every C function here follows one rule: the Rust work happens
//! in an inner function that has dropped everything it owned before `lua_error` longjmps.

use std::ffi::{c_char, c_int};

pub use mlua_sys::*;

/// The bytes of the string (or number, converted in place) at `idx`, if it is one.
pub unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    let mut len = 0usize;
    let p = lua_tolstring(l, idx, &mut len);
    if p.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(p as *const u8, len))
    }
}

/// The bytes of the value at `idx` only when it really is a string (no number coercion).
pub unsafe fn str_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    if lua_type(l, idx) == LUA_TSTRING {
        to_bytes(l, idx)
    } else {
        None
    }
}

pub unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
    lua_pushlstring_(l, b.as_ptr() as *const c_char, b.len());
}

thread_local! {
    /// The buffer `push_owned` is pushing; see there.
    static PUSHING: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Pushes a buffer the caller built, as a Lua string. Pushing allocates in Lua, which can
/// raise "not enough memory" and longjmp past the caller, whose locals would then never be
/// dropped; so the buffer waits in a thread-local (freed by the next push at the latest)
/// instead of on the caller's stack.
pub unsafe fn push_owned(l: *mut lua_State, bytes: Vec<u8>) {
    let (ptr, len) = (bytes.as_ptr(), bytes.len());
    drop(PUSHING.with(|p| p.replace(bytes)));
    lua_pushlstring_(l, ptr as *const c_char, len);
    drop(PUSHING.with(|p| p.take()));
}

pub unsafe fn push_str(l: *mut lua_State, s: &str) {
    push_bytes(l, s.as_bytes());
}

/// Sets `t[name] = <top>` (raw) for the table at `t` (absolute index), popping the value.
pub unsafe fn set_field(l: *mut lua_State, t: c_int, name: &str) {
    push_str(l, name);
    lua_insert(l, -2);
    lua_rawset(l, t);
}

/// Pushes `t[name]` (raw) for the table at absolute index `t`.
pub unsafe fn get_field(l: *mut lua_State, t: c_int, name: &str) -> c_int {
    push_str(l, name);
    lua_rawget(l, t);
    lua_type(l, -1)
}

/// Registers C functions into the table at absolute index `t`.
pub unsafe fn set_funcs(l: *mut lua_State, t: c_int, funcs: &[(&str, lua_CFunction)]) {
    for (name, f) in funcs {
        lua_pushcfunction(l, *f);
        set_field(l, t, name);
    }
}

/// Pushes `{err = msg}`: how Redis represents an error reply inside Lua.
pub unsafe fn push_error_table(l: *mut lua_State, msg: &[u8]) {
    lua_createtable(l, 0, 1);
    let t = lua_gettop(l);
    push_bytes(l, msg);
    set_field(l, t, "err");
}

/// Pushes a message prefixed with the caller's position ("user_script:1: "), as
/// `luaL_error` does.
pub unsafe fn push_positioned(l: *mut lua_State, msg: &str) {
    luaL_where(l, 1);
    push_str(l, msg);
    lua_concat(l, 2);
}

/// Absolute form of a possibly relative stack index.
pub unsafe fn abs_index(l: *mut lua_State, idx: c_int) -> c_int {
    if idx > 0 || idx <= LUA_REGISTRYINDEX {
        idx
    } else {
        lua_gettop(l) + idx + 1
    }
}

/// Outcome of a C function's inner body: `Ok(n)` returns n values; `Err` raises the value
/// the body left on top of the stack.
pub type CResult = Result<c_int, ()>;

/// Finishes a C function: returns or raises. Nothing owned by Rust is alive here.
pub unsafe fn finish(l: *mut lua_State, r: CResult) -> c_int {
    match r {
        Ok(n) => n,
        Err(()) => lua_error(l),
    }
}

/// Declares `extern "C-unwind" fn $name(L)` calling `$body(L) -> CResult`.
#[macro_export]
macro_rules! lua_cfn {
    ($name:ident, $body:path) => {
        pub unsafe extern "C-unwind" fn $name(
            l: *mut $crate::lua::ffi::lua_State,
        ) -> std::ffi::c_int {
            let r = $body(l);
            $crate::lua::ffi::finish(l, r)
        }
    };
}
