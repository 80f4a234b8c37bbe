//! The `struct` library: pack, unpack and size of binary records, with the format language
//! Redis scripts use (`<` `>` `!n` endianness and alignment; `b B h H l L T i I f d` numbers;
//! `x` padding; `s` zero-terminated and `cn` fixed strings).
//!
//! A failing argument check raises a Lua error, which jumps past these functions: the buffer
//! being packed lives in a thread-local and messages are handed to Lua before the jump, so no
//! Rust value that owns memory is skipped.

use std::ffi::{c_char, c_int};

use super::ffi::*;
use crate::lua_cfn;

const MAXINTSIZE: usize = 32;
const MAXALIGN: usize = 8;

struct Header {
    little: bool,
    align: usize,
}

unsafe fn raise(l: *mut lua_State, msg: &str) -> ! {
    // SAFETY: module contract (lua/ffi.rs); `msg` is borrowed.
    unsafe {
        push_positioned(l, msg);
        lua_error(l)
    }
}

unsafe fn raise_owned(l: *mut lua_State, msg: String) -> ! {
    // SAFETY: module contract; the message moves into Lua before anything else can raise.
    unsafe {
        push_positioned_owned(l, msg);
        lua_error(l)
    }
}

unsafe fn argerror(l: *mut lua_State, arg: c_int, msg: &std::ffi::CStr) -> ! {
    // SAFETY: module contract (lua/ffi.rs); `msg` is a static C string and luaL_argerror never
    // returns.
    unsafe {
        luaL_argerror(l, arg, msg.as_ptr());
        unreachable!()
    }
}

unsafe fn getnum(l: *mut lua_State, fmt: &[u8], i: &mut usize, df: usize) -> usize {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        if *i >= fmt.len() || !fmt[*i].is_ascii_digit() {
            return df;
        }
        let mut a: usize = 0;
        while *i < fmt.len() && fmt[*i].is_ascii_digit() {
            let d = (fmt[*i] - b'0') as usize;
            if a > (i32::MAX as usize) / 10 || a * 10 > i32::MAX as usize - d {
                raise(l, "integral size overflow");
            }
            a = a * 10 + d;
            *i += 1;
        }
        a
    }
}

unsafe fn optsize(l: *mut lua_State, opt: u8, fmt: &[u8], i: &mut usize) -> usize {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => getnum(l, fmt, i, 1),
            b'i' | b'I' => {
                let sz = getnum(l, fmt, i, 4);
                if sz > MAXINTSIZE {
                    raise_owned(
                        l,
                        format!(
                            "integral size {} is larger than limit of {}",
                            sz, MAXINTSIZE
                        ),
                    );
                }
                sz
            }
            _ => 0,
        }
    }
}

fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size <= 1 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size - (len & (size - 1))) & (size - 1)
}

unsafe fn controloptions(l: *mut lua_State, opt: u8, fmt: &[u8], i: &mut usize, h: &mut Header) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        match opt {
            b' ' => {}
            b'>' => h.little = false,
            b'<' => h.little = true,
            b'!' => {
                let a = getnum(l, fmt, i, MAXALIGN);
                if a == 0 || a & (a - 1) != 0 {
                    raise_owned(l, format!("alignment {} is not a power of 2", a));
                }
                h.align = a;
            }
            _ => {
                argerror_owned(l, 1, format!("invalid format option '{}'", opt as char));
            }
        }
    }
}

unsafe fn fmt_arg<'a>(l: *mut lua_State) -> &'a [u8] {
    // SAFETY: module contract (lua/ffi.rs); the slice is the format string at slot 1, which stays
    // on the stack for the rest of the C function, as long as its callers use it.
    unsafe {
        let mut len = 0usize;
        let p = luaL_checklstring(l, 1, &mut len);
        std::slice::from_raw_parts(p as *const u8, len)
    }
}

thread_local! {
    /// The string struct.pack is building. The luaL_check* calls between its appends raise
    /// Lua errors on bad arguments, which longjmp past pack_body: a buffer on its stack
    /// would never be freed, so it lives here and each append borrows it only briefly.
    static OUT: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

fn with_out<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    OUT.with(|cell| {
        let mut out = cell.take();
        let r = f(&mut out);
        cell.set(out);
        r
    })
}

unsafe fn pack_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive The packed bytes live in OUT (a thread-local), not here; a string
    // argument's slice is alive on the stack while it is copied.
    unsafe {
        let fmt = fmt_arg(l);
        let mut h = Header {
            little: true,
            align: 1,
        };
        with_out(Vec::clear);
        let mut arg: c_int = 2;
        let mut i = 0;
        while i < fmt.len() {
            let opt = fmt[i];
            i += 1;
            let mut size = optsize(l, opt, fmt, &mut i);
            let pad = gettoalign(with_out(|o| o.len()), &h, opt, size);
            with_out(|o| o.extend(std::iter::repeat_n(0u8, pad)));
            match opt {
                b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                    if lua_gettop(l) < arg {
                        lua_settop(l, arg);
                    }
                    let n = luaL_checknumber(l, arg);
                    arg += 1;
                    let value: u64 = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                    let mut buf = [0u8; MAXINTSIZE];
                    let mut v = value;
                    for k in 0..size {
                        let idx = if h.little { k } else { size - 1 - k };
                        buf[idx] = (v & 0xff) as u8;
                        v = v.checked_shr(8).unwrap_or(0);
                    }
                    with_out(|o| o.extend_from_slice(&buf[..size]));
                }
                b'x' => with_out(|o| o.push(0)),
                b'f' => {
                    let f = luaL_checknumber(l, arg) as f32;
                    arg += 1;
                    with_out(|o| {
                        o.extend_from_slice(&if h.little {
                            f.to_le_bytes()
                        } else {
                            f.to_be_bytes()
                        })
                    });
                }
                b'd' => {
                    let d = luaL_checknumber(l, arg);
                    arg += 1;
                    with_out(|o| {
                        o.extend_from_slice(&if h.little {
                            d.to_le_bytes()
                        } else {
                            d.to_be_bytes()
                        })
                    });
                }
                b'c' | b's' => {
                    let mut len = 0usize;
                    let p = luaL_checklstring(l, arg, &mut len);
                    arg += 1;
                    let s = std::slice::from_raw_parts(p as *const u8, len);
                    if size == 0 {
                        size = len;
                    }
                    if len < size {
                        argerror(l, arg, c"string too short");
                    }
                    with_out(|o| o.extend_from_slice(&s[..size]));
                    if opt == b's' {
                        with_out(|o| o.push(0));
                        size += 1;
                    }
                }
                _ => controloptions(l, opt, fmt, &mut i, &mut h),
            }
            let _ = size;
        }
        push_owned(l, OUT.take());
        Ok(1)
    }
}
lua_cfn!(pack, pack_body);

fn getinteger(buf: &[u8], little: bool, signed: bool) -> f64 {
    let mut v: u64 = 0;
    let size = buf.len();
    for k in 0..size {
        let b = if little { buf[size - 1 - k] } else { buf[k] };
        v = (v << 8) | b as u64;
    }
    if !signed {
        return v as f64;
    }
    let bits = size * 8;
    if bits == 0 || bits > 64 {
        return v as i64 as f64;
    }
    let mask = u64::MAX << (bits - 1);
    if v & mask != 0 {
        v |= mask;
    }
    v as i64 as f64
}

unsafe fn unpack_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive The data slice is the string at slot 2, which stays on the stack for the
    // whole call.
    unsafe {
        let fmt = fmt_arg(l);
        let mut h = Header {
            little: true,
            align: 1,
        };
        let mut ld = 0usize;
        let dp = luaL_checklstring(l, 2, &mut ld);
        let data = std::slice::from_raw_parts(dp as *const u8, ld);
        // As Redis's struct: the offset is converted to size_t first, so only 0 is "not 1 or greater"
        // and a negative offset is a huge one, which the length check below refuses.
        let start = luaL_optinteger(l, 3, 1) as usize;
        if start == 0 {
            argerror(l, 3, c"offset must be 1 or greater");
        }
        let mut pos = start - 1;
        let mut n: c_int = 0;
        let mut i = 0;
        while i < fmt.len() {
            let opt = fmt[i];
            i += 1;
            let mut size = optsize(l, opt, fmt, &mut i);
            pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
            if !(size <= ld && pos <= ld - size) {
                argerror(l, 2, c"data string too short");
            }
            luaL_checkstack_(l, 2, c"too many results".as_ptr());
            match opt {
                b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                    lua_pushnumber(
                        l,
                        getinteger(&data[pos..pos + size], h.little, opt.is_ascii_lowercase()),
                    );
                    n += 1;
                }
                b'x' => {}
                b'f' => {
                    let mut b = [0u8; 4];
                    b.copy_from_slice(&data[pos..pos + 4]);
                    let f = if h.little {
                        f32::from_le_bytes(b)
                    } else {
                        f32::from_be_bytes(b)
                    };
                    lua_pushnumber(l, f as f64);
                    n += 1;
                }
                b'd' => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&data[pos..pos + 8]);
                    lua_pushnumber(
                        l,
                        if h.little {
                            f64::from_le_bytes(b)
                        } else {
                            f64::from_be_bytes(b)
                        },
                    );
                    n += 1;
                }
                b'c' => {
                    if size == 0 {
                        if n == 0 || lua_isnumber(l, -1) == 0 {
                            raise(l, "format 'c0' needs a previous size");
                        }
                        size = lua_tonumber(l, -1) as usize;
                        lua_pop(l, 1);
                        n -= 1;
                        if !(size <= ld && pos <= ld - size) {
                            argerror(l, 2, c"data string too short");
                        }
                    }
                    push_bytes(l, &data[pos..pos + size]);
                    n += 1;
                }
                b's' => {
                    let Some(end) = data[pos..].iter().position(|&c| c == 0) else {
                        raise(l, "unfinished string in data");
                    };
                    size = end + 1;
                    push_bytes(l, &data[pos..pos + end]);
                    n += 1;
                }
                _ => controloptions(l, opt, fmt, &mut i, &mut h),
            }
            pos += size;
        }
        lua_pushinteger(l, (pos + 1) as lua_Integer);
        Ok(n + 1)
    }
}
lua_cfn!(unpack, unpack_body);

unsafe fn size_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let fmt = fmt_arg(l);
        let mut h = Header {
            little: true,
            align: 1,
        };
        let mut pos = 0usize;
        let mut i = 0;
        while i < fmt.len() {
            let opt = fmt[i];
            i += 1;
            let size = optsize(l, opt, fmt, &mut i);
            pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
            if opt == b's' {
                argerror(l, 1, c"option 's' has no fixed size");
            } else if opt == b'c' && size == 0 {
                argerror(l, 1, c"option 'c0' has no fixed size");
            }
            if !opt.is_ascii_alphanumeric() {
                controloptions(l, opt, fmt, &mut i, &mut h);
            }
            pos += size;
        }
        lua_pushinteger(l, pos as lua_Integer);
        Ok(1)
    }
}
lua_cfn!(size, size_body);

pub unsafe fn open(l: *mut lua_State, g: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_newtable(l);
        let t = lua_gettop(l);
        set_funcs(l, t, &[("pack", pack), ("unpack", unpack), ("size", size)]);
        set_field(l, g, "struct");
        let _: *const c_char = std::ptr::null();
    }
}
