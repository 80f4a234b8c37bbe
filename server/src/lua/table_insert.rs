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
    let mut i = e;
    while i > pos {
        lua_rawgeti_(l, 1, i - 1);
        lua_rawseti_(l, 1, i);
        i -= 1;
    }
    lua_rawseti_(l, 1, pos);
    Ok(0)
}
lua_cfn!(insert, insert_body);
