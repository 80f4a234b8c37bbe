//! Thin helpers over the Lua 5.1 C API (declared by `mlua-sys`).
//!
//! The runtime talks to Lua through the C API rather than a safe binding: redis.call and
//! the sandbox must raise plain Lua values (Redis's `{err=...}` tables, position-prefixed
//! strings) exactly where Redis's C functions raise them, so that error texts and the
//! `@user_script:N` line match.
//!
//! # The contract of every `unsafe fn` in `lua/` that takes `l: *mut lua_State`
//!
//! - `l` is a live state made by `Runtime::new` (or a thread of it), used on the thread that
//!   owns it; a state is never shared between threads;
//! - the stack indices passed in are valid, and the stack has room for what the function pushes
//!   (Lua gives each C function `LUA_MINSTACK` = 20 free slots; deeper pushes call
//!   `lua_checkstack` or `luaL_checkstack_` first).
//!
//! # Raising
//!
//! Lua 5.1 raises errors with `longjmp`, which skips Rust frames without running their
//! destructors. So every C function follows one rule: the Rust work happens in an inner body
//! (`lua_cfn!`) that returns `CResult`, and the wrapper raises only after the body returned and
//! dropped what it owned. Inside a body, any Lua call that allocates (pushing a string, creating
//! or growing a table, `luaL_checkstack_`, converting a number to a string) can raise "not
//! enough memory" under the script's memory limit; while such a call runs, no Rust value that
//! owns memory is alive on the stack. (`lua_checkstack` is the exception: Lua 5.1.5 grows the
//! stack in protected mode and answers 0 when it cannot.) Owned text is handed to Lua first
//! (`push_owned`, `push_positioned_owned`), values wait on the Lua stack rather than in Rust
//! copies, and a buffer that must grow between raising calls lives in a thread-local
//! (struct.pack's).

use std::ffi::{c_char, c_int};

pub use mlua_sys::*;

// Functions server/build.rs adds to the Lua it compiles.
extern "C-unwind" {
    /// Loads, in protected mode, bytecode that redlab's own `lua_dump` wrote for a chunk its
    /// parser compiled (`lua::chunks`); pushes the function or an error message, as
    /// `luaL_loadbuffer` does. Never to be given bytes from outside the process's own dumps.
    pub fn redlab_load_own_dump(
        l: *mut lua_State,
        buff: *const c_char,
        size: usize,
        name: *const c_char,
    ) -> c_int;
    /// Whether the value at `idx` is a table a fresh `lua_createtable(l, n, 0)` could not be
    /// told from once its `n` slots are refilled: no metatable, exactly `n` array slots, no
    /// hash part in use. Reads only; never raises.
    pub fn redlab_is_plain_array(l: *mut lua_State, idx: c_int, n: c_int) -> c_int;
    /// Refills `t[k]` (the table at `g`, the key at `k`, raw) with the `n` strings at `s`
    /// (`len` bytes each) when it is a plain array of `n` (as `redlab_is_plain_array`), leaving
    /// a slot that holds the same bytes; 0, touching nothing, otherwise. Allocates the new
    /// strings, so it may raise "not enough memory".
    pub fn redlab_refill_field(
        l: *mut lua_State,
        g: c_int,
        k: c_int,
        n: c_int,
        s: *const *const c_char,
        len: *const usize,
    ) -> c_int;
    /// The bytes of the string at `idx` (their length in `len`), or null when the value is
    /// not a string (a number is not converted). Reads only; never raises.
    pub fn redlab_string_at(l: *mut lua_State, idx: c_int, len: *mut usize) -> *const c_char;
    /// Pushes the registry's values at the `n` references `refs`, as `n` lua_rawgeti would;
    /// the caller made room on the stack. Never raises.
    pub fn redlab_push_refs(l: *mut lua_State, n: c_int, refs: *const c_int);
    /// Pushes the table `{ok = s}` of a status reply (`len` bytes at `s`), made as
    /// lua_createtable, lua_pushlstring and a raw set would make it; the caller made room for
    /// two values. May raise "not enough memory".
    pub fn redlab_push_status(l: *mut lua_State, s: *const c_char, len: usize);
}

/// The bytes of the string (or number, converted in place) at `idx`, if it is one. Converting a
/// number allocates, so this can raise.
pub unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    // SAFETY: `l` and `idx` are valid (module contract). A non-null pointer from lua_tolstring
    // points at `len` bytes of a string that stays alive while it is on the stack, which the
    // caller's use of the slice does not outlast.
    unsafe {
        let mut len = 0usize;
        let p = lua_tolstring(l, idx, &mut len);
        if p.is_null() {
            None
        } else {
            Some(std::slice::from_raw_parts(p as *const u8, len))
        }
    }
}

/// The bytes of the value at `idx` only when it really is a string (no number coercion, so
/// this never allocates or raises).
pub unsafe fn str_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    // SAFETY: module contract; see `to_bytes`.
    unsafe {
        if lua_type(l, idx) == LUA_TSTRING {
            to_bytes(l, idx)
        } else {
            None
        }
    }
}

/// Pushes a copy of `b` (may raise "not enough memory"; `b` is only borrowed).
pub unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
    // SAFETY: module contract; Lua copies the `b.len()` bytes `b` points at before returning.
    unsafe { lua_pushlstring_(l, b.as_ptr() as *const c_char, b.len()) };
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
    // SAFETY: module contract; `ptr..ptr+len` is the vector now owned by PUSHING, which
    // nothing touches until the next `push_owned`, so it is alive while Lua copies it.
    unsafe { lua_pushlstring_(l, ptr as *const c_char, len) };
    drop(PUSHING.with(|p| p.take()));
}

pub unsafe fn push_str(l: *mut lua_State, s: &str) {
    // SAFETY: module contract.
    unsafe { push_bytes(l, s.as_bytes()) };
}

/// Sets `t[name] = <top>` (raw) for the table at `t` (absolute index), popping the value.
pub unsafe fn set_field(l: *mut lua_State, t: c_int, name: &str) {
    // SAFETY: module contract; the caller pushed the value and `t` is a table.
    unsafe {
        push_str(l, name);
        lua_insert(l, -2);
        lua_rawset(l, t);
    }
}

/// Pushes `t[name]` (raw) for the table at absolute index `t`.
pub unsafe fn get_field(l: *mut lua_State, t: c_int, name: &str) -> c_int {
    // SAFETY: module contract; `t` is a table (the caller checked or made it).
    unsafe {
        push_str(l, name);
        lua_rawget(l, t);
        lua_type(l, -1)
    }
}

/// Registers C functions into the table at absolute index `t`.
pub unsafe fn set_funcs(l: *mut lua_State, t: c_int, funcs: &[(&str, lua_CFunction)]) {
    for (name, f) in funcs {
        // SAFETY: module contract; each push is popped by `set_field` before the next.
        unsafe {
            lua_pushcfunction(l, *f);
            set_field(l, t, name);
        }
    }
}

/// Pushes `{err = msg}`: how Redis represents an error reply inside Lua.
pub unsafe fn push_error_table(l: *mut lua_State, msg: &[u8]) {
    // SAFETY: module contract; two slots are pushed at a time at most.
    unsafe {
        lua_createtable(l, 0, 1);
        let t = lua_gettop(l);
        push_bytes(l, msg);
        set_field(l, t, "err");
    }
}

/// Pushes a message prefixed with the caller's position ("user_script:1: "), as
/// `luaL_error` does.
pub unsafe fn push_positioned(l: *mut lua_State, msg: &str) {
    // SAFETY: module contract; `msg` is borrowed, so a raise here leaks nothing.
    unsafe {
        luaL_where(l, 1);
        push_str(l, msg);
        lua_concat(l, 2);
    }
}

/// `push_positioned` for a message the caller built: the text moves into Lua before anything
/// else can raise.
pub unsafe fn push_positioned_owned(l: *mut lua_State, msg: String) {
    // SAFETY: module contract; `msg` is consumed by `push_owned` before luaL_where and
    // lua_concat (which allocate) run.
    unsafe {
        push_owned(l, msg.into_bytes());
        luaL_where(l, 1);
        lua_insert(l, -2);
        lua_concat(l, 2);
    }
}

/// Raises Lua's "bad argument #idx" error with the message the caller built. The text is
/// handed to Lua before the jump, so nothing Rust owns is left behind.
pub unsafe fn argerror_owned(l: *mut lua_State, idx: c_int, msg: String) -> ! {
    // SAFETY: module contract; the message string is on the stack (so alive) while
    // luaL_argerror formats it, and luaL_argerror never returns.
    unsafe {
        push_owned(l, msg.into_bytes());
        luaL_argerror(l, idx, lua_tolstring(l, -1, std::ptr::null_mut()));
    }
    unreachable!("luaL_argerror raises")
}

/// Absolute form of a possibly relative stack index.
pub unsafe fn abs_index(l: *mut lua_State, idx: c_int) -> c_int {
    if idx > 0 || idx <= LUA_REGISTRYINDEX {
        idx
    } else {
        // SAFETY: module contract.
        unsafe { lua_gettop(l) + idx + 1 }
    }
}

/// Outcome of a C function's inner body: `Ok(n)` returns n values; `Err` raises the value
/// the body left on top of the stack.
pub type CResult = Result<c_int, ()>;

/// Finishes a C function: returns or raises. Nothing owned by Rust is alive here.
pub unsafe fn finish(l: *mut lua_State, r: CResult) -> c_int {
    match r {
        Ok(n) => n,
        // SAFETY: module contract; the body left the error value on top of the stack.
        Err(()) => unsafe { lua_error(l) },
    }
}

/// Declares `extern "C-unwind" fn $name(L)` calling `$body(L) -> CResult`.
#[macro_export]
macro_rules! lua_cfn {
    ($name:ident, $body:path) => {
        pub unsafe extern "C-unwind" fn $name(
            l: *mut $crate::lua::ffi::lua_State,
        ) -> std::ffi::c_int {
            // SAFETY: Lua calls a C function with a live state and its arguments on the stack,
            // which is the module contract of `$body`; `finish` raises only after the body
            // returned, so no Rust frame with owned values is jumped over.
            unsafe {
                let r = $body(l);
                $crate::lua::ffi::finish(l, r)
            }
        }
    };
}
