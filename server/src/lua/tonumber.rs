//! `tonumber`, with a fast path for the strings scripts convert most: the decimal integers
//! that GET, INCR, HGET and ARGV hand them.
//!
//! Lua 5.1 converts every string through C's `strtod`, which in glibc is a general
//! arbitrary-precision parser and took about 8% of an EVALSHA of the monotonic-max script.
//! A plain decimal integer of at most 15 digits is exactly representable as a double, so
//! reading its digits gives the very value `strtod` would. Anything else (signs other than a
//! leading '-', spaces, hex, exponents, fractions, a second argument) takes the general path,
//! which follows Lua 5.1's `luaB_tonumber` step by step through the same C API calls, so its
//! results and error messages ("bad argument #2 to 'tonumber' (base out of range)") are
//! Lua's own.

use std::ffi::{c_char, c_int, c_ulong};

use super::ffi::*;
use crate::numfmt::is_c_space;

extern "C" {
    fn strtoul(s: *const c_char, end: *mut *mut c_char, base: c_int) -> c_ulong;
}

/// The value of `s` when it is `-?[0-9]{1,15}` and nothing else.
fn plain_decimal(s: &[u8]) -> Option<f64> {
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(c - b'0');
    }
    let v = n as f64;
    Some(if negative { -v } else { v })
}

pub unsafe extern "C-unwind" fn tonumber(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this C function with a live state and its arguments on the stack (module
    // contract, lua/ffi.rs); nothing here owns memory, so a raise in `general` skips nothing that
    // needs dropping.
    unsafe {
        if lua_gettop(l) == 1 {
            // The string read in one call (`redlab_string_at`), not a type check and then
            // lua_tolstring: about 30 of this path's 160 instructions (callgrind, eval bench).
            let mut len = 0usize;
            let p = redlab_string_at(l, 1, &mut len) as *const u8;
            if !p.is_null() {
                if let Some(v) = plain_decimal(std::slice::from_raw_parts(p, len)) {
                    lua_pushnumber(l, v);
                    return 1;
                }
            } else if lua_type(l, 1) == LUA_TNUMBER {
                return 1;
            }
        }
        general(l)
    }
}

/// Lua 5.1's luaB_tonumber. The luaL_* checks raise Lua errors (a longjmp over this frame),
/// which is safe because nothing here owns anything that needs dropping.
unsafe fn general(l: *mut lua_State) -> c_int {
    // SAFETY: module contract (lua/ffi.rs). The C string from luaL_checklstring is NUL-terminated
    // and stays on the stack while strtoul and the space scan read it; the luaL_* checks may raise,
    // and nothing here owns memory.
    unsafe {
        let base = luaL_optinteger(l, 2, 10) as c_int;
        if base == 10 {
            luaL_checkany(l, 1);
            if lua_isnumber(l, 1) != 0 {
                lua_pushnumber(l, lua_tonumber(l, 1));
                return 1;
            }
        } else {
            let s1 = luaL_checklstring(l, 1, std::ptr::null_mut());
            if !(2..=36).contains(&base) {
                luaL_argerror(l, 2, c"base out of range".as_ptr());
            }
            let mut s2: *mut c_char = std::ptr::null_mut();
            let n = strtoul(s1, &mut s2, base);
            if !std::ptr::eq(s2, s1) {
                while is_c_space(*s2 as u8) {
                    s2 = s2.add(1);
                }
                if *s2 == 0 {
                    lua_pushnumber(l, n as f64);
                    return 1;
                }
            }
        }
        lua_pushnil(l);
        1
    }
}

#[cfg(test)]
mod tests {
    use super::plain_decimal;

    #[test]
    fn plain_decimals_read_as_strtod_would() {
        for s in ["0", "-0", "7", "007", "123456789012345", "-999999999999999"] {
            let want: f64 = s.parse().unwrap();
            let got = plain_decimal(s.as_bytes()).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{s}");
        }
    }

    #[test]
    fn everything_else_takes_the_general_path() {
        for s in [
            "",
            "-",
            "+1",
            " 1",
            "1 ",
            "1.5",
            "1e3",
            "0x10",
            "1234567890123456",
            "12a",
            "--1",
        ] {
            assert_eq!(plain_decimal(s.as_bytes()), None, "{s:?}");
        }
    }
}
