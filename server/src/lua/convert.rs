//! Lua values to replies (a script's result) and replies to Lua values (redis.call's
//! result), both ways exactly as Redis 7.0 converts them, under RESP2 and RESP3.

use std::ffi::{c_char, c_int};

use bytes::Bytes;

use super::ffi::*;
use crate::numfmt::format_double;
use crate::reply::Reply;

/// C's `(long long)` cast of a double on x86-64: out of range and NaN give i64::MIN.
pub fn lua_number_to_int(d: f64) -> i64 {
    if d.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// Converts the value at absolute index `idx`. `resp` is the script's protocol
/// (redis.setresp), which decides how booleans come out.
pub unsafe fn lua_to_reply(l: *mut lua_State, idx: c_int, resp: u8) -> Reply {
    // SAFETY: module contract (lua/ffi.rs).
    unsafe { to_reply(l, idx, resp, 0) }
}

/// Nesting past this many tables is cut with Redis's stack-limit error, before the Rust
/// stack can run out (a table that contains itself would otherwise recurse for ever).
const MAX_DEPTH: usize = 1000;

/// Runs after the script's protected call, with the memory limit off: the Vecs built here are
/// never jumped over, since outside protected mode an allocation fails only on a real
/// out-of-memory, where Lua aborts the process.
unsafe fn to_reply(l: *mut lua_State, idx: c_int, resp: u8, depth: usize) -> Reply {
    // SAFETY: module contract (lua/ffi.rs); lua_checkstack makes room for the reads below, and
    // only raw accesses are used, so no Lua code runs.
    unsafe {
        if depth > MAX_DEPTH {
            return Reply::err(crate::errors::REACHED_LUA_STACK_LIMIT);
        }
        match lua_type(l, idx) {
            LUA_TSTRING => Reply::bulk(to_bytes(l, idx).unwrap_or_default()),
            LUA_TBOOLEAN => {
                let b = lua_toboolean(l, idx) != 0;
                if resp == 2 {
                    if b {
                        Reply::Int(1)
                    } else {
                        Reply::Nil
                    }
                } else {
                    Reply::Bool(b)
                }
            }
            LUA_TNUMBER => Reply::Int(lua_number_to_int(lua_tonumber(l, idx))),
            // Only a table pushes anything (its fields, then its items): the stack is made
            // room for here, not for every scalar (a script's usual result is one).
            LUA_TTABLE => {
                if lua_checkstack(l, 4) == 0 {
                    return Reply::err(crate::errors::REACHED_LUA_STACK_LIMIT);
                }
                table_to_reply(l, idx, resp, depth + 1)
            }
            _ => Reply::Nil,
        }
    }
}

unsafe fn table_to_reply(l: *mut lua_State, idx: c_int, resp: u8, depth: usize) -> Reply {
    // SAFETY: module contract; `idx` is a table and `to_reply` made room for these pushes.
    // Every push is popped before the next field is read.
    unsafe {
        if get_field(l, idx, "err") == LUA_TSTRING {
            let msg = Reply::err_bytes(to_bytes(l, -1).unwrap_or_default());
            lua_pop(l, 1);
            return msg;
        }
        lua_pop(l, 1);
        if get_field(l, idx, "ok") == LUA_TSTRING {
            let msg = String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default()).into_owned();
            lua_pop(l, 1);
            return Reply::Status(msg);
        }
        lua_pop(l, 1);
        if get_field(l, idx, "double") == LUA_TNUMBER {
            let d = lua_tonumber(l, -1);
            lua_pop(l, 1);
            return Reply::Double(d);
        }
        lua_pop(l, 1);
        if get_field(l, idx, "big_number") == LUA_TSTRING {
            // The number travels as one line in RESP3 and Redis maps CR and LF to spaces
            // before choosing the protocol, so a RESP2 client sees the same text.
            let s: String = String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default())
                .chars()
                .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
                .collect();
            lua_pop(l, 1);
            return Reply::BigNumber(s);
        }
        lua_pop(l, 1);
        if get_field(l, idx, "map") == LUA_TTABLE {
            let t = lua_gettop(l);
            let mut pairs = Vec::new();
            lua_pushnil(l);
            while lua_next(l, t) != 0 {
                let v = lua_gettop(l);
                lua_pushvalue(l, v - 1);
                let k = to_reply(l, v + 1, resp, depth);
                lua_pop(l, 1);
                let val = to_reply(l, v, resp, depth);
                lua_pop(l, 1);
                pairs.push((k, val));
            }
            lua_pop(l, 1);
            return Reply::Map(pairs);
        }
        lua_pop(l, 1);
        if get_field(l, idx, "set") == LUA_TTABLE {
            let t = lua_gettop(l);
            let mut items = Vec::new();
            lua_pushnil(l);
            while lua_next(l, t) != 0 {
                lua_pop(l, 1);
                lua_pushvalue(l, -1);
                items.push(to_reply(l, lua_gettop(l), resp, depth));
                lua_pop(l, 1);
            }
            lua_pop(l, 1);
            return Reply::Set(items);
        }
        lua_pop(l, 1);
        if get_field(l, idx, "verbatim_string") == LUA_TTABLE {
            let t = lua_gettop(l);
            let fmt = if get_field(l, t, "format") == LUA_TSTRING {
                to_bytes(l, -1).map(|b| b.to_vec())
            } else {
                None
            };
            lua_pop(l, 1);
            let text = if get_field(l, t, "string") == LUA_TSTRING {
                to_bytes(l, -1).map(|b| b.to_vec())
            } else {
                None
            };
            lua_pop(l, 1);
            if let (Some(f), Some(s)) = (fmt, text) {
                lua_pop(l, 1);
                let f: &'static str = match &f[..] {
                    b"mkd" => "mkd",
                    _ => "txt",
                };
                return Reply::Verbatim(f, Bytes::from(s));
            }
        }
        lua_pop(l, 1);
        let mut items = Vec::new();
        let mut j = 1;
        loop {
            lua_rawgeti_(l, idx, j);
            if lua_type(l, -1) == LUA_TNIL {
                lua_pop(l, 1);
                break;
            }
            items.push(to_reply(l, lua_gettop(l), resp, depth));
            lua_pop(l, 1);
            j += 1;
        }
        Reply::Array(items)
    }
}

/// Pushes a command's reply as the Lua value a script receives, for protocol `resp`.
///
/// Called by redis.call with the reply borrowed from the script's context, so a "not enough
/// memory" raised by any push here leaks nothing.
pub unsafe fn push_reply(l: *mut lua_State, r: &Reply, resp: u8) {
    // SAFETY: module contract (lua/ffi.rs). A scalar takes one slot, which its caller made
    // room for: a container's level checks for its own pushes and one item's, and a C
    // function (redis.call) starts with LUA_MINSTACK free slots. Checking the stack for every
    // scalar was about 40 instructions per redis.call (`cargo bench --bench eval`, callgrind).
    unsafe {
        match r {
            Reply::Int(n) => lua_pushnumber(l, *n as f64),
            Reply::Bulk(b) | Reply::Raw(b) => push_bytes(l, b),
            _ => push_checked(l, r, resp),
        }
    }
}

/// `push_reply` of a reply the script's C function pushes on an otherwise empty stack
/// (redis.call's, after it dropped its arguments): a status table takes two of the
/// LUA_MINSTACK slots every C function starts with, so it needs no check either. It is made
/// in one call into Lua (`redlab_push_status`; through the C API, the table, two strings and
/// a field store cost about 100 instructions more, for every SET a script runs).
pub unsafe fn push_call_reply(l: *mut lua_State, r: &Reply, resp: u8) {
    // SAFETY: module contract; the caller's stack is empty, inside a C function. `s` is only
    // borrowed (from the script's context, which outlives a jump out of this frame), and Lua
    // copies its bytes.
    unsafe {
        match r {
            Reply::Status(s) => redlab_push_status(l, s.as_ptr() as *const c_char, s.len()),
            _ => push_reply(l, r, resp),
        }
    }
}

unsafe fn push_checked(l: *mut lua_State, r: &Reply, resp: u8) {
    // SAFETY: module contract (lua/ffi.rs). Each level makes room for its own pushes (a table,
    // a nested table, a key and a value) first; luaL_checkstack_ raises a Lua error when the
    // stack cannot grow, and nothing owned is alive (the only owned text goes through
    // `push_owned`).
    unsafe {
        luaL_checkstack_(l, 4, c"reply nested too deeply".as_ptr());
        match r {
            Reply::Status(s) => {
                lua_createtable(l, 0, 1);
                push_str(l, s);
                set_field(l, lua_gettop(l) - 1, "ok");
            }
            Reply::Error(s) => push_error_table(l, s.as_bytes()),
            Reply::ErrorBytes(b) => push_error_table(l, b),
            Reply::Int(n) => lua_pushnumber(l, *n as f64),
            Reply::Bulk(b) | Reply::Raw(b) => push_bytes(l, b),
            Reply::Nil | Reply::NilArray | Reply::None => {
                if resp == 2 {
                    lua_pushboolean(l, 0)
                } else {
                    lua_pushnil(l)
                }
            }
            Reply::Array(items) | Reply::Push(items) => push_array(l, items, resp),
            // Attributes annotate a reply; a script sees only the reply (as Redis does).
            Reply::Attribute(_, inner) => push_reply(l, inner, resp),
            Reply::Multi(items) => match items.first() {
                Some(first) => push_reply(l, first, resp),
                None => lua_pushboolean(l, 0),
            },
            Reply::Set(items) => {
                if resp == 2 {
                    push_array(l, items, resp);
                } else {
                    lua_createtable(l, 0, 1);
                    lua_createtable(l, 0, items.len().min(1 << 16) as c_int);
                    let t = lua_gettop(l);
                    for it in items {
                        push_reply(l, it, resp);
                        lua_pushboolean(l, 1);
                        lua_rawset(l, t);
                    }
                    set_field(l, t - 1, "set");
                }
            }
            Reply::Map(pairs) => {
                if resp == 2 {
                    lua_createtable(l, (pairs.len() * 2).min(1 << 20) as c_int, 0);
                    let mut j = 1;
                    for (k, v) in pairs {
                        push_reply(l, k, resp);
                        lua_rawseti_(l, -2, j);
                        push_reply(l, v, resp);
                        lua_rawseti_(l, -2, j + 1);
                        j += 2;
                    }
                } else {
                    lua_createtable(l, 0, 1);
                    lua_createtable(l, 0, pairs.len().min(1 << 16) as c_int);
                    let t = lua_gettop(l);
                    for (k, v) in pairs {
                        push_reply(l, k, resp);
                        push_reply(l, v, resp);
                        lua_rawset(l, t);
                    }
                    set_field(l, t - 1, "map");
                }
            }
            Reply::Double(d) => {
                if resp == 2 {
                    push_owned(l, format_double(*d).into_bytes());
                } else {
                    lua_createtable(l, 0, 1);
                    lua_pushnumber(l, *d);
                    set_field(l, lua_gettop(l) - 1, "double");
                }
            }
            Reply::Bool(b) => {
                if resp == 2 {
                    lua_pushnumber(l, if *b { 1.0 } else { 0.0 });
                } else {
                    lua_pushboolean(l, *b as c_int);
                }
            }
            Reply::BigNumber(s) => {
                if resp == 2 {
                    push_str(l, s);
                } else {
                    lua_createtable(l, 0, 1);
                    push_str(l, s);
                    set_field(l, lua_gettop(l) - 1, "big_number");
                }
            }
            Reply::Verbatim(fmt, text) => {
                if resp == 2 {
                    push_bytes(l, text);
                } else {
                    lua_createtable(l, 0, 1);
                    lua_createtable(l, 0, 2);
                    let t = lua_gettop(l);
                    push_str(l, fmt);
                    set_field(l, t, "format");
                    push_bytes(l, text);
                    set_field(l, t, "string");
                    set_field(l, t - 1, "verbatim_string");
                }
            }
        }
    }
}

unsafe fn push_array(l: *mut lua_State, items: &[Reply], resp: u8) {
    // SAFETY: as in `push_reply`, which checks the stack for each item.
    unsafe {
        lua_createtable(l, items.len().min(1 << 20) as c_int, 0);
        for (i, it) in items.iter().enumerate() {
            push_reply(l, it, resp);
            lua_rawseti_(l, -2, (i + 1) as c_int);
        }
    }
}
