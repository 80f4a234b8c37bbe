//! `table.insert` that honours the sandbox's read-only tables.
//!
//! Redis 7.0's Lua refuses `lua_rawseti` on a read-only table, so `table.insert(redis, x)`
//! fails there with "Attempt to modify a readonly table". The read-only tables here are
//! proxies (see `sandbox`), and the stock `table.insert` writes into the proxy itself with
//! a raw set, which would let a script stash values in a library table and read them back
//! in a later script. This is Lua 5.1's `tinsert`, step for step through the same C API
//! calls (so its argument errors read as Lua's), refusing proxies where Redis's would fail:
//! at the first raw set, after the argument checks.
//! (`table.remove` and `table.sort` need no such guard: a proxy is empty, so they never
//! write to it, and Redis's versions succeed on library tables for the same reason.)

use std::ffi::c_int;

use super::ffi::*;
use crate::lua_cfn;

unsafe fn insert_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        luaL_checktype(l, 1, LUA_TTABLE);
        let mut e = lua_objlen(l, 1) as c_int + 1;
        let pos = match lua_gettop(l) {
            2 => e,
            3 => {
                let pos = luaL_checkinteger(l, 2) as c_int;
                e = e.max(pos);
                pos
            }
            _ => {
                push_positioned(l, "wrong number of arguments to 'insert'");
                return Err(());
            }
        };
        if super::sandbox::is_proxy(l, 1) {
            push_str(l, super::sandbox::READONLY);
            return Err(());
        }
        if (e as i64) - (pos as i64) > SPARSE_SPAN {
            shift_sparse(l, pos, e);
        } else {
            let mut i = e;
            while i > pos {
                lua_rawgeti_(l, 1, i - 1);
                lua_rawseti_(l, 1, i);
                i -= 1;
            }
        }
        lua_rawseti_(l, 1, pos);
        Ok(0)
    }
}

/// Past this many slots the shift visits only the keys that exist. `table.insert(t, -2^31, v)`
/// asks Lua 5.1 to move about 2^31 slots one by one, inside one C call that SCRIPT KILL cannot
/// interrupt: redis-server 7.0.15 hangs on it. Moving only the present values gives the same
/// table in time proportional to its size.
const SPARSE_SPAN: i64 = 1 << 16;

thread_local! {
    /// The integer keys being shifted. A raw set can raise "not enough memory" and longjmp
    /// past this function, so the list lives here rather than on its stack (see `ffi::push_owned`).
    static KEYS: std::cell::Cell<Vec<i64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// `t[i] = t[i - 1]` for every i in (pos, e], from the top down, as the dense loop does, but
/// touching only slots whose old value or new value is not nil.
unsafe fn shift_sparse(l: *mut lua_State, pos: c_int, e: c_int) {
    let mut keys = KEYS.with(|k| k.take());
    keys.clear();
    // SAFETY: module contract (lua/ffi.rs), the table at slot 1. lua_next, the raw reads and
    // lua_settop neither allocate nor raise, so the `keys` this frame owns is never jumped over.
    unsafe {
        lua_pushnil(l);
        while lua_next(l, 1) != 0 {
            if lua_type(l, -2) == LUA_TNUMBER {
                let k = lua_tonumber(l, -2);
                if k.fract() == 0.0 && k >= pos as f64 && k <= (e - 1) as f64 {
                    keys.push(k as i64);
                }
            }
            lua_settop(l, -2);
        }
    }
    keys.sort_unstable_by(|a, b| b.cmp(a));
    let (ptr, len) = (keys.as_ptr(), keys.len());
    KEYS.with(|k| k.set(keys));
    // SAFETY: the vector now sits in KEYS and is neither touched nor resized until the
    // next call of this function, which cannot start before this one ends (the Lua state runs
    // on one thread and a raw set never calls back into Lua code).
    let present = unsafe { std::slice::from_raw_parts(ptr, len) };
    // SAFETY: module contract; the raw sets may raise "not enough memory", and then only the
    // borrowed `present` is alive in this frame.
    unsafe {
        for (n, &k) in present.iter().enumerate() {
            lua_rawgeti_(l, 1, k as c_int);
            lua_rawseti_(l, 1, k as c_int + 1);
            // The slot below k is empty: what moves into k is nil.
            let below_present = present.get(n + 1) == Some(&(k - 1));
            if k > pos as i64 && !below_present {
                lua_pushnil(l);
                lua_rawseti_(l, 1, k as c_int);
            }
        }
    }
}
lua_cfn!(insert, insert_body);
