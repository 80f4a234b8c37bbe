//! Argument parsing with Redis's error replies, shared by every handler.
//!
//! Each parser returns `Result<_, Reply>` so a handler can write `let n = int(&call.args[2])?;`
//! and the error the client sees is exactly the one Redis sends.

use crate::errors;
use crate::numfmt;
use crate::reply::Reply;

/// A signed 64-bit integer argument (`ERR value is not an integer or out of range`).
pub fn int(arg: &[u8]) -> Result<i64, Reply> {
    numfmt::parse_i64(arg).ok_or_else(|| Reply::err(errors::NOT_INTEGER))
}

/// A float argument (`ERR value is not a valid float`).
pub fn float(arg: &[u8]) -> Result<f64, Reply> {
    numfmt::parse_f64(arg).ok_or_else(|| Reply::err(errors::NOT_FLOAT))
}

/// A non-negative integer with a custom error text.
pub fn positive_or(arg: &[u8], err: &str) -> Result<i64, Reply> {
    match numfmt::parse_i64(arg) {
        Some(n) if n >= 0 => Ok(n),
        _ => Err(Reply::err(err)),
    }
}

/// Case-insensitive comparison of an argument with an option name.
pub fn is(arg: &[u8], option: &str) -> bool {
    arg.eq_ignore_ascii_case(option.as_bytes())
}

/// Lower-cased argument as a String, for matching options and printing names.
pub fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).to_ascii_lowercase()
}

/// A blocking command's timeout in seconds (float allowed, as Redis 6+), returned as an
/// absolute deadline in milliseconds, or None for "forever" (0).
pub fn timeout_deadline(arg: &[u8], now_ms: i64) -> Result<Option<i64>, Reply> {
    let secs = numfmt::parse_f64(arg).ok_or_else(|| Reply::err(errors::TIMEOUT_NOT_FLOAT))?;
    if secs < 0.0 {
        return Err(Reply::err(errors::TIMEOUT_NEGATIVE));
    }
    if !secs.is_finite() || secs * 1000.0 > (i64::MAX / 2) as f64 {
        return Err(Reply::err(errors::TIMEOUT_OUT_OF_RANGE));
    }
    let ms = (secs * 1000.0) as i64;
    if ms == 0 {
        Ok(None)
    } else {
        Ok(Some(now_ms + ms))
    }
}

/// Redis's glob matching (`stringmatchlen`): `*`, `?`, `[...]` with ranges and `^`, `\` escapes.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    glob_inner(pattern, s, nocase, 0)
}

fn glob_inner(mut p: &[u8], mut s: &[u8], nocase: bool, depth: usize) -> bool {
    // Same guard as Redis against pathological patterns.
    if depth > 1000 {
        return false;
    }
    let eq = |a: u8, b: u8| if nocase { a.eq_ignore_ascii_case(&b) } else { a == b };
    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                for i in 0..s.len() {
                    if glob_inner(&p[1..], &s[i..], nocase, depth + 1) {
                        return true;
                    }
                }
                return false;
            }
            b'?' => {
                s = &s[1..];
                p = &p[1..];
                continue;
            }
            b'[' => {
                p = &p[1..];
                let not = !p.is_empty() && p[0] == b'^';
                if not {
                    p = &p[1..];
                }
                let mut matched = false;
                loop {
                    if p.is_empty() {
                        break;
                    }
                    if p[0] == b'\\' && p.len() >= 2 {
                        p = &p[1..];
                        if eq(p[0], s[0]) {
                            matched = true;
                        }
                    } else if p[0] == b']' {
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        let (mut start, mut end) = (p[0], p[2]);
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        let mut c = s[0];
                        if nocase {
                            start = start.to_ascii_lowercase();
                            end = end.to_ascii_lowercase();
                            c = c.to_ascii_lowercase();
                        }
                        p = &p[2..];
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if eq(p[0], s[0]) {
                        matched = true;
                    }
                    p = &p[1..];
                }
                // Redis treats a missing ']' as if the pattern ended there.
                let matched = if not { !matched } else { matched };
                if !matched {
                    return false;
                }
                s = &s[1..];
                if p.is_empty() {
                    return s.is_empty();
                }
                p = &p[1..];
                continue;
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if !eq(p[0], s[0]) {
                    return false;
                }
            }
            c => {
                if !eq(c, s[0]) {
                    return false;
                }
            }
        }
        s = &s[1..];
        p = &p[1..];
    }
    if s.is_empty() {
        while !p.is_empty() && p[0] == b'*' {
            p = &p[1..];
        }
    }
    p.is_empty() && s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_follows_redis() {
        assert!(glob_match(b"*", b"anything", false));
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"user:*:name", b"user:1:name", false));
        assert!(!glob_match(b"a", b"ab", false));
        assert!(glob_match(b"a\\*", b"a*", false));
        assert!(glob_match(b"MaxMemory*", b"maxmemory-policy", true));
    }
}
