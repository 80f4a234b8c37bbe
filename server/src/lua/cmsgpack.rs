//! The `cmsgpack` library: MessagePack pack/unpack with the choices Redis's version makes
//! (smallest integer form, float32 when lossless, tables with keys 1..n as arrays, nesting
//! past 16 levels packed as nil).

use std::ffi::c_int;

use super::ffi::*;
use crate::lua_cfn;

const MAX_NESTING: usize = 16;

/// Stack slots `encode_value` may use at most: a key and a value per nesting level, and the
/// transient key/value of `array_len` at the deepest one.
const STACK_NEEDED: c_int = 2 * MAX_NESTING as c_int + 8;

fn encode_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        let u = n as u64;
        if u < 128 {
            out.push(u as u8);
        } else if u <= 0xff {
            out.extend_from_slice(&[0xcc, u as u8]);
        } else if u <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(u as u16).to_be_bytes());
        } else if u <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(u as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&u.to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_number(out: &mut Vec<u8>, d: f64) {
    if !d.is_infinite()
        && !d.is_nan()
        && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d)
        && (d as i64) as f64 == d
    {
        encode_int(out, d as i64);
    } else if (d as f32) as f64 == d {
        out.push(0xca);
        out.extend_from_slice(&(d as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&d.to_be_bytes());
    }
}

fn encode_len(
    out: &mut Vec<u8>,
    len: usize,
    fix: u8,
    fixmax: usize,
    op8: Option<u8>,
    op16: u8,
    op32: u8,
) {
    if len < fixmax {
        out.push(fix | len as u8);
    } else if op8.is_some() && len <= 0xff {
        out.extend_from_slice(&[op8.unwrap_or(0), len as u8]);
    } else if len <= 0xffff {
        out.push(op16);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(op32);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

/// Some(n) when the table's keys are exactly 1..n.
unsafe fn array_len(l: *mut lua_State, t: c_int) -> Option<usize> {
    // SAFETY: module contract (lua/ffi.rs); `t` is a table, read with lua_next (raw, allocates
    // nothing, raises nothing).
    unsafe {
        let mut count = 0usize;
        let mut max = 0f64;
        lua_pushnil(l);
        while lua_next(l, t) != 0 {
            lua_pop(l, 1);
            if lua_type(l, -1) != LUA_TNUMBER {
                lua_pop(l, 1);
                return None;
            }
            let n = lua_tonumber(l, -1);
            if n <= 0.0 || n.floor() != n {
                lua_pop(l, 1);
                return None;
            }
            if n > max {
                max = n;
            }
            count += 1;
        }
        (max == count as f64).then_some(count)
    }
}

unsafe fn encode_value(l: *mut lua_State, idx: c_int, level: usize, out: &mut Vec<u8>) {
    // SAFETY: module contract (lua/ffi.rs); `pack_body` reserved the stack slots the nesting cap
    // allows. Nothing here raises, so the caller's buffer is never jumped over: reads are raw (no
    // Lua code runs, nothing allocates in Lua) and strings are read only when they are strings.
    unsafe {
        let mut t = lua_type(l, idx);
        if t == LUA_TTABLE && level == MAX_NESTING {
            t = LUA_TNIL;
        }
        match t {
            LUA_TSTRING => {
                let s = to_bytes(l, idx).unwrap_or_default();
                encode_len(out, s.len(), 0xa0, 32, Some(0xd9), 0xda, 0xdb);
                out.extend_from_slice(s);
            }
            LUA_TBOOLEAN => out.push(if lua_toboolean(l, idx) != 0 {
                0xc3
            } else {
                0xc2
            }),
            LUA_TNUMBER => encode_number(out, lua_tonumber(l, idx)),
            LUA_TTABLE => match array_len(l, idx) {
                Some(n) => {
                    encode_len(out, n, 0x90, 16, None, 0xdc, 0xdd);
                    for i in 1..=n {
                        lua_rawgeti_(l, idx, i as c_int);
                        encode_value(l, lua_gettop(l), level + 1, out);
                        lua_pop(l, 1);
                    }
                }
                None => {
                    let mut n = 0;
                    lua_pushnil(l);
                    while lua_next(l, idx) != 0 {
                        lua_pop(l, 1);
                        n += 1;
                    }
                    encode_len(out, n, 0x80, 16, None, 0xde, 0xdf);
                    lua_pushnil(l);
                    while lua_next(l, idx) != 0 {
                        let v = lua_gettop(l);
                        encode_value(l, v - 1, level + 1, out);
                        encode_value(l, v, level + 1, out);
                        lua_pop(l, 1);
                    }
                }
            },
            _ => out.push(0xc0),
        }
    }
}

unsafe fn pack_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let n = lua_gettop(l);
        if n == 0 {
            luaL_argerror(l, 0, c"MessagePack pack needs input.".as_ptr());
        }
        // Every stack slot the encoder can use (two per nesting level, a few transient), reserved
        // before the buffer exists: growing the stack can raise, and encoding then raises nothing.
        luaL_checkstack_(l, STACK_NEEDED, c"too many nested tables".as_ptr());
        let mut out = Vec::new();
        for i in 1..=n {
            encode_value(l, i, 0, &mut out);
        }
        push_owned(l, out);
        Ok(1)
    }
}
lua_cfn!(pack, pack_body);

#[derive(Debug)]
enum DecErr {
    Eof,
    BadFmt,
}

struct Cur<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Cur<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecErr> {
        if self.s.len() - self.pos < n {
            return Err(DecErr::Eof);
        }
        let r = &self.s[self.pos..self.pos + n];
        self.pos += n;
        Ok(r)
    }
    fn uint(&mut self, n: usize) -> Result<u64, DecErr> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }
}

unsafe fn decode_value(l: *mut lua_State, c: &mut Cur) -> Result<(), DecErr> {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        c.depth += 1;
        let r = decode_inner(l, c);
        c.depth -= 1;
        r
    }
}

unsafe fn decode_inner(l: *mut lua_State, c: &mut Cur) -> Result<(), DecErr> {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        if c.depth > 1000 || lua_checkstack(l, 4) == 0 {
            return Err(DecErr::BadFmt);
        }
        let b = c.take(1)?[0];
        match b {
            0x00..=0x7f => lua_pushnumber(l, b as f64),
            0x80..=0x8f => decode_map(l, c, (b & 0x0f) as usize)?,
            0x90..=0x9f => decode_array(l, c, (b & 0x0f) as usize)?,
            0xa0..=0xbf => {
                let s = c.take((b & 0x1f) as usize)?;
                push_bytes(l, s);
            }
            0xc0 => lua_pushnil(l),
            0xc2 => lua_pushboolean(l, 0),
            0xc3 => lua_pushboolean(l, 1),
            0xd9 => {
                let n = c.uint(1)? as usize;
                let s = c.take(n)?;
                push_bytes(l, s);
            }
            0xda => {
                let n = c.uint(2)? as usize;
                let s = c.take(n)?;
                push_bytes(l, s);
            }
            0xdb => {
                let n = c.uint(4)? as usize;
                let s = c.take(n)?;
                push_bytes(l, s);
            }
            0xca => lua_pushnumber(l, f32::from_bits(c.uint(4)? as u32) as f64),
            0xcb => lua_pushnumber(l, f64::from_bits(c.uint(8)?)),
            0xcc => lua_pushnumber(l, c.uint(1)? as f64),
            0xcd => lua_pushnumber(l, c.uint(2)? as f64),
            0xce => lua_pushnumber(l, c.uint(4)? as f64),
            0xcf => lua_pushnumber(l, c.uint(8)? as f64),
            0xd0 => lua_pushnumber(l, c.uint(1)? as u8 as i8 as f64),
            0xd1 => lua_pushnumber(l, c.uint(2)? as u16 as i16 as f64),
            0xd2 => lua_pushnumber(l, c.uint(4)? as u32 as i32 as f64),
            0xd3 => lua_pushnumber(l, c.uint(8)? as i64 as f64),
            0xdc => {
                let n = c.uint(2)? as usize;
                decode_array(l, c, n)?
            }
            0xdd => {
                let n = c.uint(4)? as usize;
                decode_array(l, c, n)?
            }
            0xde => {
                let n = c.uint(2)? as usize;
                decode_map(l, c, n)?
            }
            0xdf => {
                let n = c.uint(4)? as usize;
                decode_map(l, c, n)?
            }
            0xe0..=0xff => lua_pushnumber(l, b as i8 as f64),
            _ => return Err(DecErr::BadFmt),
        }
        Ok(())
    }
}

unsafe fn decode_array(l: *mut lua_State, c: &mut Cur, n: usize) -> Result<(), DecErr> {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        lua_createtable(l, n.min(1 << 16) as c_int, 0);
        for i in 1..=n {
            decode_value(l, c)?;
            lua_rawseti_(l, -2, i as c_int);
        }
        Ok(())
    }
}

unsafe fn decode_map(l: *mut lua_State, c: &mut Cur, n: usize) -> Result<(), DecErr> {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        lua_createtable(l, 0, n.min(1 << 16) as c_int);
        for _ in 0..n {
            decode_value(l, c)?;
            decode_value(l, c)?;
            if lua_type(l, -2) == LUA_TNIL {
                lua_pop(l, 2);
            } else {
                lua_rawset(l, -3);
            }
        }
        Ok(())
    }
}

/// Decodes up to `limit` objects (0: all) from `offset`; pushes them and returns their count
/// and the offset after them (-1 at the end of input).
unsafe fn unpack_full(
    l: *mut lua_State,
    limit: i64,
    offset: usize,
) -> Result<(c_int, i64), DecErr> {
    // SAFETY: module contract (lua/ffi.rs); the input slice is the string at slot 1, which stays on
    // the stack for the whole call, and decoding pushes only borrowed bytes.
    unsafe {
        let mut len = 0usize;
        let p = luaL_checklstring(l, 1, &mut len);
        let s = std::slice::from_raw_parts(p as *const u8, len);
        let mut c = Cur {
            s,
            pos: offset.min(len),
            depth: 0,
        };
        let mut count: c_int = 0;
        while c.pos < len && (limit == 0 || (count as i64) < limit) {
            decode_value(l, &mut c)?;
            count += 1;
        }
        let next = if c.pos >= len { -1 } else { c.pos as i64 };
        Ok((count, next))
    }
}

unsafe fn raise_dec(l: *mut lua_State, e: DecErr) -> CResult {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        push_positioned(
            l,
            match e {
                DecErr::Eof => "Missing bytes in input.",
                DecErr::BadFmt => "Bad data format in input.",
            },
        );
        Err(())
    }
}

unsafe fn unpack_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let base = lua_gettop(l);
        match unpack_full(l, 0, 0) {
            Ok(_) => Ok(lua_gettop(l) - base),
            Err(e) => raise_dec(l, e),
        }
    }
}

unsafe fn unpack_n(l: *mut lua_State, limit: i64, offset_arg: c_int) -> CResult {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        let offset = luaL_optinteger(l, offset_arg, 0) as i64;
        let mut len = 0usize;
        luaL_checklstring(l, 1, &mut len);
        // Redis formats these 64-bit values with %d, so it prints their low 32 bits, and it names
        // the input's length "limit".
        if offset < 0 || limit < 0 {
            let msg = format!(
                "Invalid request to unpack with offset of {} and limit of {}.",
                offset as i32, len as i32
            );
            push_positioned_owned(l, msg);
            return Err(());
        }
        if offset as u64 > len as u64 {
            let msg = format!(
                "Start offset {} greater than input length {}.",
                offset as i32, len as i32
            );
            push_positioned_owned(l, msg);
            return Err(());
        }
        if limit == 0 && offset == 0 {
            // Redis decodes everything then, without the leading next-offset, as cmsgpack.unpack.
            return unpack_body(l);
        }
        let base = lua_gettop(l);
        lua_pushnil(l);
        match unpack_full(l, limit, offset as usize) {
            Ok((n, next)) => {
                lua_pushnumber(l, next as f64);
                lua_replace(l, base + 1);
                Ok(n + 1)
            }
            Err(e) => raise_dec(l, e),
        }
    }
}

unsafe fn unpack_one_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { unpack_n(l, 1, 2) }
}

unsafe fn unpack_limit_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let limit = luaL_checkinteger(l, 2) as i64;
        unpack_n(l, limit, 3)
    }
}

lua_cfn!(unpack, unpack_body);
lua_cfn!(unpack_one, unpack_one_body);
lua_cfn!(unpack_limit, unpack_limit_body);

pub unsafe fn open(l: *mut lua_State, g: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_newtable(l);
        let t = lua_gettop(l);
        set_funcs(
            l,
            t,
            &[
                ("pack", pack),
                ("unpack", unpack),
                ("unpack_one", unpack_one),
                ("unpack_limit", unpack_limit),
            ],
        );
        for (k, v) in [
            ("_NAME", "cmsgpack"),
            ("_VERSION", "lua-cmsgpack 0.4.0"),
            ("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"),
            ("_DESCRIPTION", "MessagePack C implementation for Lua"),
        ] {
            push_str(l, v);
            set_field(l, t, k);
        }
        set_field(l, g, "cmsgpack");
    }
}
