//! The `bit` library (LuaBitOp's API): 32-bit operations on Lua numbers.
//!
//! Numbers become 32-bit integers the way LuaBitOp does it: add 2^52 + 2^51 and keep the low
//! 32 bits of the double's representation, which rounds halves to even and wraps modulo 2^32.
//! Results are signed 32-bit values.

use std::ffi::c_int;

use super::ffi::*;
use crate::lua_cfn;

fn to_bits(d: f64) -> u32 {
    (d + 6_755_399_441_055_744.0).to_bits() as u32
}

unsafe fn arg(l: *mut lua_State, i: c_int) -> u32 {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe { to_bits(luaL_checknumber(l, i)) }
}

unsafe fn ret(l: *mut lua_State, v: u32) -> CResult {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        lua_pushnumber(l, v as i32 as f64);
        Ok(1)
    }
}

unsafe fn tobit_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { ret(l, arg(l, 1)) }
}
unsafe fn bnot_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { ret(l, !arg(l, 1)) }
}
unsafe fn fold(l: *mut lua_State, f: fn(u32, u32) -> u32) -> CResult {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        let mut v = arg(l, 1);
        for i in 2..=lua_gettop(l) {
            v = f(v, arg(l, i));
        }
        ret(l, v)
    }
}
unsafe fn band_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { fold(l, |a, b| a & b) }
}
unsafe fn bor_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { fold(l, |a, b| a | b) }
}
unsafe fn bxor_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { fold(l, |a, b| a ^ b) }
}
unsafe fn shift(l: *mut lua_State, f: fn(u32, u32) -> u32) -> CResult {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        let v = arg(l, 1);
        let n = arg(l, 2) & 31;
        ret(l, f(v, n))
    }
}
unsafe fn lshift_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { shift(l, |v, n| v << n) }
}
unsafe fn rshift_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { shift(l, |v, n| v >> n) }
}
unsafe fn arshift_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { shift(l, |v, n| ((v as i32) >> n) as u32) }
}
unsafe fn rol_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { shift(l, |v, n| v.rotate_left(n)) }
}
unsafe fn ror_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { shift(l, |v, n| v.rotate_right(n)) }
}
unsafe fn bswap_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { ret(l, arg(l, 1).swap_bytes()) }
}
unsafe fn tohex_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let v = arg(l, 1);
        let mut n: i32 = if lua_isnoneornil(l, 2) != 0 {
            8
        } else {
            arg(l, 2) as i32
        };
        let upper = n < 0;
        if upper {
            n = n.wrapping_neg();
        }
        let n = (n as u32).min(8) as usize;
        let digits: &[u8; 16] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut buf = [0u8; 8];
        let mut x = v;
        for i in (0..n).rev() {
            buf[i] = digits[(x & 15) as usize];
            x >>= 4;
        }
        push_bytes(l, &buf[..n]);
        Ok(1)
    }
}

lua_cfn!(tobit, tobit_body);
lua_cfn!(bnot, bnot_body);
lua_cfn!(band, band_body);
lua_cfn!(bor, bor_body);
lua_cfn!(bxor, bxor_body);
lua_cfn!(lshift, lshift_body);
lua_cfn!(rshift, rshift_body);
lua_cfn!(arshift, arshift_body);
lua_cfn!(rol, rol_body);
lua_cfn!(ror, ror_body);
lua_cfn!(bswap, bswap_body);
lua_cfn!(tohex, tohex_body);

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
                ("tobit", tobit),
                ("bnot", bnot),
                ("band", band),
                ("bor", bor),
                ("bxor", bxor),
                ("lshift", lshift),
                ("rshift", rshift),
                ("arshift", arshift),
                ("rol", rol),
                ("ror", ror),
                ("bswap", bswap),
                ("tohex", tohex),
            ],
        );
        set_field(l, g, "bit");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn conversion_wraps_and_rounds_like_luabitop() {
        assert_eq!(super::to_bits(4294967297.0), 1);
        assert_eq!(super::to_bits(-1.0) as i32, -1);
        assert_eq!(super::to_bits(2.5), 2);
        assert_eq!(super::to_bits(3.5), 4);
    }
}
