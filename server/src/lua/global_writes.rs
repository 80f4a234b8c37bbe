//! Whether a compiled chunk can assign a global, read off its Lua 5.1 bytecode.
//!
//! The sandbox makes the globals read-only through a proxy table (see `sandbox`), and every
//! global a script reads (`redis`, `KEYS`, `tonumber`...) then costs three table lookups
//! instead of one. A chunk whose code, nested functions included, has no SETGLOBAL
//! instruction cannot assign a global by name, so it can safely see the real globals table
//! directly: writes through `_G` still reach the proxy (`_G` is the proxy), `loadstring`
//! chunks get the thread's protected globals, and `getfenv`/`setfenv` do not exist. Reading
//! an undeclared global fails the same way, from the real table's own metatable.
//!
//! The dump format is Lua 5.1's `ldump.c` for this build (checked from the header); any
//! surprise answers "may write", which keeps the proxy.

/// Lua 5.1's opcode number for SETGLOBAL (`lopcodes.h`).
const OP_SETGLOBAL: u32 = 7;

/// Verdicts already reached, by the SHA1 of the script's body. Every engine of a process
/// compiles one body to the same bytecode, and a suite that makes an engine per test loads
/// the same scripts in each: dumping the bytecode to read it again was about 4,300
/// instructions of a fresh engine's first EVAL (`cargo bench --bench per_test`, row (a),
/// under callgrind), a lookup here is a few dozen.
type Verdicts = std::collections::HashMap<[u8; 40], bool, foldhash::fast::FixedState>;
static VERDICTS: std::sync::Mutex<Option<Verdicts>> = std::sync::Mutex::new(None);
/// Bodies remembered before the table starts over (it holds 41 bytes a script).
const VERDICTS_KEPT: usize = 4096;

/// `may_write_globals` of the script whose body has SHA1 `sha`, dumping its bytecode
/// (`dump`) only the first time this process sees that body. True when it cannot be dumped.
pub fn may_write_globals_of(sha: &[u8; 40], dump: impl FnOnce() -> Option<Vec<u8>>) -> bool {
    let lock = || VERDICTS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&v) = lock().as_ref().and_then(|m| m.get(sha)) {
        return v;
    }
    let v = dump().is_none_or(|d| may_write_globals(&d));
    let mut m = lock();
    let m = m.get_or_insert_with(Default::default);
    if m.len() >= VERDICTS_KEPT {
        m.clear();
    }
    m.insert(*sha, v);
    v
}

/// Whether the dumped chunk may assign a global. True when the dump cannot be read.
pub fn may_write_globals(dump: &[u8]) -> bool {
    let mut r = Reader { b: dump, at: 0 };
    let expected_header = [0x1b, b'L', b'u', b'a', 0x51, 0, 1, 4, 8, 4, 8, 0];
    if r.take(12) != Some(&expected_header[..]) {
        return true;
    }
    !matches!(function_has_setglobal(&mut r, 0), Some(false)) || r.at != dump.len()
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn int(&mut self) -> Option<usize> {
        let v = i32::from_le_bytes(self.take(4)?.try_into().ok()?);
        usize::try_from(v).ok()
    }

    fn string(&mut self) -> Option<()> {
        let n = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        self.take(usize::try_from(n).ok()?).map(|_| ())
    }

    /// Skips `n` items of `size` bytes each.
    fn skip(&mut self, n: usize, size: usize) -> Option<()> {
        self.take(n.checked_mul(size)?).map(|_| ())
    }
}

/// Reads one function (ldump.c's DumpFunction); Some(true) if it or a nested one has a
/// SETGLOBAL, None if the bytes do not parse.
fn function_has_setglobal(r: &mut Reader, depth: usize) -> Option<bool> {
    if depth > 250 {
        return None;
    }
    r.string()?; // source
    r.skip(2, 4)?; // linedefined, lastlinedefined
    r.skip(4, 1)?; // nups, numparams, is_vararg, maxstacksize
    let ncode = r.int()?;
    let code = r.take(ncode.checked_mul(4)?)?;
    let mut found = code
        .chunks_exact(4)
        .any(|i| u32::from_le_bytes([i[0], i[1], i[2], i[3]]) & 0x3f == OP_SETGLOBAL);
    for _ in 0..r.int()? {
        match r.byte()? {
            0 => {}             // nil
            1 => r.skip(1, 1)?, // boolean
            3 => r.skip(1, 8)?, // number
            4 => r.string()?,   // string
            _ => return None,
        }
    }
    for _ in 0..r.int()? {
        found |= function_has_setglobal(r, depth + 1)?;
    }
    let nlines = r.int()?;
    r.skip(nlines, 4)?; // lineinfo
    for _ in 0..r.int()? {
        r.string()?; // local's name
        r.skip(2, 4)?; // startpc, endpc
    }
    for _ in 0..r.int()? {
        r.string()?; // upvalue's name
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::may_write_globals;
    use crate::lua::runtime::{Kind, Runtime};

    fn writes(code: &str) -> bool {
        let rt = Runtime::new(Kind::Eval, 1 << 24);
        let f = rt
            .compile(code.as_bytes(), c"@user_script")
            .expect("compiles");
        may_write_globals(&rt.dump(f).expect("dumps"))
    }

    #[test]
    fn a_body_is_dumped_once_and_its_verdict_remembered() {
        let rt = Runtime::new(Kind::Eval, 1 << 24);
        // A SHA1 no real body of another test has (the table is process-wide).
        let (writer, reader) = ([b'w'; 40], [b'r'; 40]);
        let w = rt.compile(b"x = 1", c"@user_script").expect("compiles");
        let r = rt.compile(b"return 1", c"@user_script").expect("compiles");
        assert!(super::may_write_globals_of(&writer, || rt.dump(w)));
        assert!(!super::may_write_globals_of(&reader, || rt.dump(r)));
        let again = |sha| super::may_write_globals_of(sha, || panic!("dumped again"));
        assert!(again(&writer));
        assert!(!again(&reader));
        // A body that cannot be dumped keeps the proxy.
        assert!(super::may_write_globals_of(&[b'n'; 40], || None));
    }

    #[test]
    fn assignments_to_globals_are_found_at_any_depth() {
        assert!(writes("x = 1"));
        assert!(writes("local t = {} function t.f() end y = 2"));
        assert!(writes(
            "local function f() return function() z = 3 end end return 1"
        ));
        assert!(writes("function f() end"));
    }

    #[test]
    fn code_that_only_reads_globals_is_recognised() {
        assert!(!writes("return 1"));
        assert!(!writes("local cur = tonumber(redis.call('GET', KEYS[1])) if cur then return {cur, 1.5, true, nil, 'x'} end"));
        assert!(!writes("local t = {} t.x = 1 _G.y = 2 local function f(a, ...) local b = a return b end return f(1)"));
    }

    #[test]
    fn unreadable_bytes_count_as_writing() {
        assert!(may_write_globals(b""));
        assert!(may_write_globals(b"\x1bLua\x51garbage"));
        let rt = Runtime::new(Kind::Eval, 1 << 24);
        let f = rt.compile(b"return 1", c"@user_script").expect("compiles");
        let mut dump = rt.dump(f).expect("dumps");
        dump.push(0);
        assert!(may_write_globals(&dump), "trailing bytes");
        dump.truncate(dump.len() - 3);
        assert!(may_write_globals(&dump), "truncated");
    }
}
