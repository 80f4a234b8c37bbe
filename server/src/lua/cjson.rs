//! The `cjson` library as Redis ships it (lua-cjson 2.1.0's behaviour): encode with
//! `%.14g` numbers, `\/` escaping, the sparse-array rule and depth limits; decode with its
//! token errors ("Expected value but found T_END at character 1") and lenient numbers.

use std::cell::RefCell;
use std::ffi::c_int;

use super::ffi::*;
use crate::lua_cfn;
use crate::numfmt::format_g;

#[derive(Clone)]
struct Cfg {
    sparse_convert: bool,
    sparse_ratio: i64,
    sparse_safe: i64,
    encode_max_depth: i64,
    decode_max_depth: i64,
    precision: usize,
    keep_buffer: bool,
    /// 0: error, 1: allow (inf/nan), 2: encode as null.
    encode_invalid: u8,
    decode_invalid: bool,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            precision: 14,
            keep_buffer: true,
            encode_invalid: 0,
            decode_invalid: true,
        }
    }
}

thread_local! {
    static CFG: RefCell<Cfg> = RefCell::new(Cfg::default());
}

/// Back to the defaults, for a thread that starts serving another server.
pub(crate) fn reset_config() {
    CFG.with(|c| *c.borrow_mut() = Cfg::default());
}

fn cfg<R>(f: impl FnOnce(&mut Cfg) -> R) -> R {
    CFG.with(|c| f(&mut c.borrow_mut()))
}

/// An encoding failure: the message, and the Lua type it names.
struct EncErr(String);

unsafe fn type_name(l: *mut lua_State, idx: c_int) -> String {
    // SAFETY: module contract (lua/ffi.rs); lua_typename returns a static NUL-terminated name.
    unsafe {
        std::ffi::CStr::from_ptr(lua_typename(l, lua_type(l, idx)))
            .to_string_lossy()
            .into_owned()
    }
}

fn number(out: &mut Vec<u8>, d: f64, precision: usize, invalid: u8) -> Result<(), &'static str> {
    if d.is_nan() || d.is_infinite() {
        match invalid {
            0 => return Err("must not be NaN or Inf"),
            2 => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {
                let s = if d.is_nan() {
                    "nan"
                } else if d > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                out.extend_from_slice(s.as_bytes());
                return Ok(());
            }
        }
    }
    out.extend_from_slice(format_g(d, precision).as_bytes());
    Ok(())
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            8 => out.extend_from_slice(b"\\b"),
            9 => out.extend_from_slice(b"\\t"),
            10 => out.extend_from_slice(b"\\n"),
            12 => out.extend_from_slice(b"\\f"),
            13 => out.extend_from_slice(b"\\r"),
            0..=31 | 127 => out.extend_from_slice(format!("\\u{:04x}", c).as_bytes()),
            _ => out.push(c),
        }
    }
    out.push(b'"');
}

/// Array length per lua-cjson: Some(max index) for a pure positive-integer-keyed table,
/// None for an object. Errors on an excessively sparse array unless conversion is on.
unsafe fn array_length(l: *mut lua_State, t: c_int, c: &Cfg) -> Result<Option<i64>, EncErr> {
    // SAFETY: module contract (lua/ffi.rs); `t` is a table, read with lua_next (raw, allocates
    // nothing, raises nothing).
    unsafe {
        let mut max: i64 = 0;
        let mut items: i64 = 0;
        lua_pushnil(l);
        while lua_next(l, t) != 0 {
            if lua_type(l, -2) == LUA_TNUMBER {
                let k = lua_tonumber(l, -2);
                if k.floor() == k && k >= 1.0 {
                    if k as i64 > max {
                        max = k as i64;
                    }
                    items += 1;
                    lua_pop(l, 1);
                    continue;
                }
            }
            lua_pop(l, 2);
            return Ok(None);
        }
        if c.sparse_ratio > 0 && max > items.saturating_mul(c.sparse_ratio) && max > c.sparse_safe {
            if !c.sparse_convert {
                return Err(EncErr(format!(
                    "Cannot serialise {}: excessively sparse array",
                    type_name(l, t)
                )));
            }
            return Ok(None);
        }
        Ok(Some(max))
    }
}

unsafe fn encode_value(
    l: *mut lua_State,
    idx: c_int,
    depth: i64,
    out: &mut Vec<u8>,
    c: &Cfg,
) -> Result<(), EncErr> {
    // SAFETY: module contract (lua/ffi.rs). Nothing here raises, so the caller's buffer is never
    // jumped over: reads are raw (no Lua code runs, nothing allocates in Lua), strings are read
    // only when they are strings, and lua_checkstack answers 0 instead of raising.
    unsafe {
        match lua_type(l, idx) {
            LUA_TSTRING => string(out, to_bytes(l, idx).unwrap_or_default()),
            LUA_TNUMBER => number(out, lua_tonumber(l, idx), c.precision, c.encode_invalid)
                .map_err(|r| EncErr(format!("Cannot serialise number: {}", r)))?,
            LUA_TBOOLEAN => out.extend_from_slice(if lua_toboolean(l, idx) != 0 {
                b"true"
            } else {
                b"false"
            }),
            LUA_TNIL => out.extend_from_slice(b"null"),
            LUA_TLIGHTUSERDATA if lua_touserdata(l, idx).is_null() => {
                out.extend_from_slice(b"null")
            }
            LUA_TTABLE => {
                let depth = depth + 1;
                if depth > c.encode_max_depth {
                    return Err(EncErr(format!(
                        "Cannot serialise, excessive nesting ({})",
                        depth
                    )));
                }
                if lua_checkstack(l, 6) == 0 {
                    return Err(EncErr(format!(
                        "Cannot serialise, excessive nesting ({})",
                        depth
                    )));
                }
                match array_length(l, idx, c)? {
                    Some(n) if n > 0 => {
                        out.push(b'[');
                        for i in 1..=n {
                            if i > 1 {
                                out.push(b',');
                            }
                            lua_rawgeti_(l, idx, i as c_int);
                            let r = encode_value(l, lua_gettop(l), depth, out, c);
                            lua_pop(l, 1);
                            r?;
                        }
                        out.push(b']');
                    }
                    _ => {
                        out.push(b'{');
                        let mut first = true;
                        lua_pushnil(l);
                        while lua_next(l, idx) != 0 {
                            if !first {
                                out.push(b',');
                            }
                            first = false;
                            match lua_type(l, -2) {
                                LUA_TSTRING => string(out, to_bytes(l, -2).unwrap_or_default()),
                                LUA_TNUMBER => {
                                    out.push(b'"');
                                    let r = number(
                                        out,
                                        lua_tonumber(l, -2),
                                        c.precision,
                                        c.encode_invalid,
                                    );
                                    if let Err(reason) = r {
                                        lua_pop(l, 2);
                                        return Err(EncErr(format!(
                                            "Cannot serialise number: {}",
                                            reason
                                        )));
                                    }
                                    out.push(b'"');
                                }
                                _ => {
                                    let name = type_name(l, -2);
                                    lua_pop(l, 2);
                                    return Err(EncErr(format!(
                                        "Cannot serialise {}: table key must be a number or string",
                                        name
                                    )));
                                }
                            }
                            out.push(b':');
                            let r = encode_value(l, lua_gettop(l), depth, out, c);
                            if r.is_err() {
                                lua_pop(l, 2);
                                return r;
                            }
                            lua_pop(l, 1);
                        }
                        out.push(b'}');
                    }
                }
            }
            _ => {
                return Err(EncErr(format!(
                    "Cannot serialise {}: type not supported",
                    type_name(l, idx)
                )))
            }
        }
        Ok(())
    }
}

unsafe fn encode_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) != 1 {
            luaL_argerror(l, 1, c"expected 1 argument".as_ptr());
        }
        // Encoding raises nothing (see `encode_value`); pushing the result or the error can
        // raise "not enough memory", so both are handed over with `push_owned`, and no RefCell
        // borrow of the settings is held meanwhile.
        let c = cfg(|c| c.clone());
        let mut out = Vec::new();
        match encode_value(l, 1, 0, &mut out, &c).map(|()| out) {
            Ok(out) => {
                push_owned(l, out);
                Ok(1)
            }
            Err(EncErr(msg)) => {
                push_positioned_owned(l, msg);
                Err(())
            }
        }
    }
}
lua_cfn!(encode, encode_body);

// ---- decode ------------------------------------------------------------------------

#[derive(Debug)]
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Tok {
    fn name(&self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(m) => m,
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    decode_invalid: bool,
    max_depth: i64,
}

/// C's strtod on a prefix of `s`: returns the value and the bytes used (0 when none).
///
/// Redis's cjson reads numbers with the C library's `strtod`, so this is the one emulation of
/// it that SORT and GEO use too (`cmd::cfloat`), hexadecimal floats and `nan(...)` included.
pub fn strtod(s: &[u8]) -> (f64, usize) {
    let r = crate::cmd::cfloat::strtod(s);
    (r.value, r.consumed)
}

impl Parser<'_> {
    fn is_invalid_number(&self) -> bool {
        let p = &self.s[self.pos..];
        let Some(&c) = p.first() else { return false };
        if c == b'+' {
            return true;
        }
        let lower: Vec<u8> = p.iter().take(3).map(|c| c.to_ascii_lowercase()).collect();
        if lower.starts_with(b"0x") || lower == b"inf" || lower == b"nan" {
            return true;
        }
        c == b'0' && p.get(1).is_some_and(|d| d.is_ascii_digit())
    }

    /// The next token and the index it starts at.
    fn next(&mut self) -> (Tok, usize) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = self.s.get(self.pos) else {
            return (Tok::End, start);
        };
        let single = match c {
            b'{' => Some(Tok::ObjBegin),
            b'}' => Some(Tok::ObjEnd),
            b'[' => Some(Tok::ArrBegin),
            b']' => Some(Tok::ArrEnd),
            b':' => Some(Tok::Colon),
            b',' => Some(Tok::Comma),
            _ => None,
        };
        if let Some(t) = single {
            self.pos += 1;
            return (t, start);
        }
        if c == b'"' {
            let t = self.string();
            if let Tok::Error(_) = t {
                return (t, self.pos);
            }
            return (t, start);
        }
        if c == b'-' || c.is_ascii_digit() || (self.decode_invalid && self.is_invalid_number()) {
            let (v, used) = strtod(&self.s[self.pos..]);
            if used == 0 {
                return (Tok::Error("invalid number"), start);
            }
            self.pos += used;
            return (Tok::Num(v), start);
        }
        for (word, tok) in [
            (&b"true"[..], Tok::Bool(true)),
            (b"false", Tok::Bool(false)),
            (b"null", Tok::Null),
        ] {
            if self.s[self.pos..].starts_with(word) {
                self.pos += word.len();
                return (tok, start);
            }
        }
        (Tok::Error("invalid token"), start)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.s.get(at..at + 4)?;
        let s = std::str::from_utf8(h).ok()?;
        if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(s, 16).ok()
    }

    fn string(&mut self) -> Tok {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Tok::Error("unexpected end of string");
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    return Tok::Str(out);
                }
                b'\\' => {
                    let Some(&e) = self.s.get(self.pos + 1) else {
                        return Tok::Error("unexpected end of string");
                    };
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        _ => None,
                    };
                    if let Some(ch) = simple {
                        out.push(ch);
                        self.pos += 2;
                        continue;
                    }
                    if e != b'u' {
                        return Tok::Error("invalid escape code");
                    }
                    let Some(mut cp) = self.hex4(self.pos + 2) else {
                        return Tok::Error("invalid unicode escape code");
                    };
                    let mut used = 6;
                    if (0xD800..0xDC00).contains(&cp) {
                        let low = if self.s.get(self.pos + 6) == Some(&b'\\')
                            && self.s.get(self.pos + 7) == Some(&b'u')
                        {
                            self.hex4(self.pos + 8)
                        } else {
                            None
                        };
                        match low {
                            Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                used = 12;
                            }
                            _ => return Tok::Error("invalid unicode escape code"),
                        }
                    } else if (0xDC00..0xE000).contains(&cp) {
                        return Tok::Error("invalid unicode escape code");
                    }
                    let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    self.pos += used;
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }
}

/// A decoding failure message (without position prefix).
type DecResult = Result<(), String>;

fn expected(what: &str, t: &Tok, at: usize) -> String {
    format!(
        "Expected {} but found {} at character {}",
        what,
        t.name(),
        at + 1
    )
}

unsafe fn push_value(
    l: *mut lua_State,
    p: &mut Parser,
    tok: Tok,
    at: usize,
    depth: i64,
) -> DecResult {
    // SAFETY: module contract (lua/ffi.rs). The pushes and table stores may raise; then the parser
    // (which only borrows the input) is all that is alive: a string token goes to Lua through
    // `push_owned` as soon as it is read, and error texts are built only on the way out, after
    // the last Lua call.
    unsafe {
        match tok {
            Tok::Str(s) => push_owned(l, s),
            Tok::Num(n) => lua_pushnumber(l, n),
            Tok::Bool(b) => lua_pushboolean(l, b as c_int),
            Tok::Null => lua_pushlightuserdata(l, std::ptr::null_mut()),
            Tok::ObjBegin | Tok::ArrBegin => {
                let depth = depth + 1;
                if depth > p.max_depth || lua_checkstack(l, 4) == 0 {
                    return Err(format!(
                        "Found too many nested data structures ({}) at character {}",
                        depth,
                        at + 1
                    ));
                }
                lua_newtable(l);
                let t = lua_gettop(l);
                if matches!(tok, Tok::ArrBegin) {
                    let (mut tok, mut at) = p.next();
                    if matches!(tok, Tok::ArrEnd) {
                        return Ok(());
                    }
                    let mut i = 1;
                    loop {
                        push_value(l, p, tok, at, depth)?;
                        lua_rawseti_(l, t, i);
                        i += 1;
                        let (sep, sat) = p.next();
                        match sep {
                            Tok::ArrEnd => return Ok(()),
                            Tok::Comma => {}
                            other => return Err(expected("comma or array end", &other, sat)),
                        }
                        (tok, at) = p.next();
                    }
                } else {
                    let (mut tok, mut at) = p.next();
                    if matches!(tok, Tok::ObjEnd) {
                        return Ok(());
                    }
                    loop {
                        let Tok::Str(key) = tok else {
                            return Err(expected("object key string", &tok, at));
                        };
                        let (colon, cat) = p.next();
                        if !matches!(colon, Tok::Colon) {
                            return Err(expected("colon", &colon, cat));
                        }
                        push_owned(l, key);
                        let (vt, vat) = p.next();
                        push_value(l, p, vt, vat, depth)?;
                        lua_rawset(l, t);
                        let (sep, sat) = p.next();
                        match sep {
                            Tok::ObjEnd => return Ok(()),
                            Tok::Comma => {}
                            other => return Err(expected("comma or object end", &other, sat)),
                        }
                        (tok, at) = p.next();
                    }
                }
            }
            other => return Err(expected("value", &other, at)),
        }
        Ok(())
    }
}

unsafe fn decode_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive The input slice is the string at slot 1, which stays on the stack for
    // the whole call.
    unsafe {
        if lua_gettop(l) != 1 {
            luaL_argerror(l, 1, c"expected 1 argument".as_ptr());
        }
        let mut len = 0usize;
        let s = luaL_checklstring(l, 1, &mut len);
        let s = std::slice::from_raw_parts(s as *const u8, len);
        let (decode_invalid, max_depth) = cfg(|c| (c.decode_invalid, c.decode_max_depth));
        // The pushes and table stores below can raise "not enough memory" and jump past this
        // frame: a decoded string goes to Lua through `push_owned`, and no other frame owns one
        // meanwhile (a token is pushed as soon as it is read).
        let mut p = Parser {
            s,
            pos: 0,
            decode_invalid,
            max_depth,
        };
        let (tok, at) = p.next();
        let mut r = push_value(l, &mut p, tok, at, 0);
        if r.is_ok() {
            let (t, at) = p.next();
            if !matches!(t, Tok::End) {
                r = Err(expected("the end", &t, at));
            }
        }
        match r {
            Ok(()) => Ok(1),
            Err(msg) => {
                push_positioned_owned(l, msg);
                Err(())
            }
        }
    }
}
lua_cfn!(decode, decode_body);

// ---- configuration -----------------------------------------------------------------

/// lua-cjson's enum option: absent or nil keeps the setting, a boolean picks "off"/"on", and
/// anything else must name one of `opts` (Lua's "invalid option" argument error otherwise).
unsafe fn opt_enum(l: *mut lua_State, idx: c_int, opts: &[&[u8]]) -> Option<usize> {
    // SAFETY: module contract (lua/ffi.rs); the option slice is the string at `idx`, alive on the
    // stack while it is compared; the error text is owned by Lua before the raise.
    unsafe {
        match lua_type(l, idx) {
            LUA_TNONE | LUA_TNIL => None,
            LUA_TBOOLEAN => Some((lua_toboolean(l, idx) != 0) as usize),
            _ => {
                let mut len = 0usize;
                let p = luaL_checklstring(l, idx, &mut len);
                let given = std::slice::from_raw_parts(p as *const u8, len);
                match opts.iter().position(|o| *o == given) {
                    Some(i) => Some(i),
                    None => argerror_owned(
                        l,
                        idx,
                        format!("invalid option '{}'", String::from_utf8_lossy(given)),
                    ),
                }
            }
        }
    }
}

unsafe fn opt_bool(l: *mut lua_State, idx: c_int) -> Option<bool> {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe { opt_enum(l, idx, &[b"off", b"on"]).map(|i| i == 1) }
}

/// lua-cjson's integer option: C converts the number to int (keeping its low 32 bits) before the
/// range check, and names argument #1 whichever argument is wrong.
unsafe fn opt_int(l: *mut lua_State, idx: c_int, lo: i64, hi: i64) -> Option<i64> {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        if lua_type(l, idx) == LUA_TNONE || lua_type(l, idx) == LUA_TNIL {
            return None;
        }
        let v = luaL_checkinteger(l, idx) as i32 as i64;
        if v < lo || v > hi {
            argerror_owned(l, 1, format!("expected integer between {lo} and {hi}"));
        }
        Some(v)
    }
}

unsafe fn push_bool(l: *mut lua_State, b: bool) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        if b {
            lua_pushboolean(l, 1)
        } else {
            lua_pushboolean(l, 0)
        }
    }
}

unsafe fn int_option(
    l: *mut lua_State,
    lo: i64,
    hi: i64,
    get: fn(&mut Cfg) -> &mut i64,
) -> CResult {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        if let Some(v) = opt_int(l, 1, lo, hi) {
            cfg(|c| *get(c) = v);
        }
        let v = cfg(|c| *get(c));
        lua_pushnumber(l, v as f64);
        Ok(1)
    }
}

unsafe fn encode_max_depth_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { int_option(l, 1, i32::MAX as i64, |c| &mut c.encode_max_depth) }
}
unsafe fn decode_max_depth_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe { int_option(l, 1, i32::MAX as i64, |c| &mut c.decode_max_depth) }
}
unsafe fn encode_number_precision_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if let Some(v) = opt_int(l, 1, 1, 14) {
            cfg(|c| c.precision = v as usize);
        }
        lua_pushnumber(l, cfg(|c| c.precision) as f64);
        Ok(1)
    }
}
unsafe fn encode_sparse_array_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if let Some(b) = opt_bool(l, 1) {
            cfg(|c| c.sparse_convert = b);
        }
        if let Some(v) = opt_int(l, 2, 0, i32::MAX as i64) {
            cfg(|c| c.sparse_ratio = v);
        }
        if let Some(v) = opt_int(l, 3, 0, i32::MAX as i64) {
            cfg(|c| c.sparse_safe = v);
        }
        let (b, r, s) = cfg(|c| (c.sparse_convert, c.sparse_ratio, c.sparse_safe));
        push_bool(l, b);
        lua_pushnumber(l, r as f64);
        lua_pushnumber(l, s as f64);
        Ok(3)
    }
}
unsafe fn encode_keep_buffer_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if let Some(b) = opt_bool(l, 1) {
            cfg(|c| c.keep_buffer = b);
        }
        push_bool(l, cfg(|c| c.keep_buffer));
        Ok(1)
    }
}
unsafe fn encode_invalid_numbers_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if let Some(i) = opt_enum(l, 1, &[b"off", b"on", b"null"]) {
            cfg(|c| c.encode_invalid = i as u8);
        }
        match cfg(|c| c.encode_invalid) {
            2 => push_str(l, "null"),
            v => push_bool(l, v == 1),
        }
        Ok(1)
    }
}
unsafe fn decode_invalid_numbers_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if let Some(b) = opt_bool(l, 1) {
            cfg(|c| c.decode_invalid = b);
        }
        push_bool(l, cfg(|c| c.decode_invalid));
        Ok(1)
    }
}
unsafe fn new_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        lua_newtable(l);
        fill(l, lua_gettop(l));
        Ok(1)
    }
}

lua_cfn!(encode_max_depth, encode_max_depth_body);
lua_cfn!(decode_max_depth, decode_max_depth_body);
lua_cfn!(encode_number_precision, encode_number_precision_body);
lua_cfn!(encode_sparse_array, encode_sparse_array_body);
lua_cfn!(encode_keep_buffer, encode_keep_buffer_body);
lua_cfn!(encode_invalid_numbers, encode_invalid_numbers_body);
lua_cfn!(decode_invalid_numbers, decode_invalid_numbers_body);
lua_cfn!(new, new_body);

unsafe fn fill(l: *mut lua_State, t: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        set_funcs(
            l,
            t,
            &[
                ("encode", encode),
                ("decode", decode),
                ("encode_max_depth", encode_max_depth),
                ("decode_max_depth", decode_max_depth),
                ("encode_number_precision", encode_number_precision),
                ("encode_sparse_array", encode_sparse_array),
                ("encode_keep_buffer", encode_keep_buffer),
                ("encode_invalid_numbers", encode_invalid_numbers),
                ("decode_invalid_numbers", decode_invalid_numbers),
                ("new", new),
            ],
        );
        lua_pushlightuserdata(l, std::ptr::null_mut());
        set_field(l, t, "null");
        push_str(l, "cjson");
        set_field(l, t, "_NAME");
        push_str(l, "2.1.0");
        set_field(l, t, "_VERSION");
    }
}

pub unsafe fn open(l: *mut lua_State, g: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_newtable(l);
        fill(l, lua_gettop(l));
        set_field(l, g, "cjson");
    }
}
