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
///
/// Redis 7.0 parses a long double, converts `secs * 1000` to a C `long long` (truncating:
/// `0.0001` and `-0.0001` both mean 0, forever) and only then rejects negatives; a value
/// beyond the `long long` range, `inf` included, converts to LLONG_MIN and so is "negative".
/// A deadline past the end of time never fires, as Redis's wrapped deadline never does.
pub fn timeout_deadline(arg: &[u8], now_ms: i64) -> Result<Option<i64>, Reply> {
    let secs = parse_long_double(arg).ok_or_else(|| Reply::err(errors::TIMEOUT_NOT_FLOAT))?;
    let ms = secs * 1000.0;
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let ms = if ms > -LIMIT && ms < LIMIT { ms.trunc() as i64 } else { i64::MIN };
    if ms < 0 {
        return Err(Reply::err(errors::TIMEOUT_NEGATIVE));
    }
    if ms == 0 {
        return Ok(None);
    }
    Ok(now_ms.checked_add(ms))
}

/// Redis's `string2ld` (strtold on the whole argument): decimal or hex floats, `inf` and
/// `infinity`; no spaces, no NaN, nothing left over, nothing outside long double's range.
fn parse_long_double(arg: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(arg).ok()?;
    if s.is_empty() || s.len() >= 5 * 1024 || s.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let (neg, body) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex)?
    } else {
        if !body.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) {
            return None;
        }
        let v: f64 = body.parse().ok()?;
        // f64 overflows or underflows long before long double (about 1e±4932) does.
        if v.is_infinite() || (v == 0.0 && body.bytes().any(|c| (b'1'..=b'9').contains(&c))) {
            let exp = decimal_exponent(body.as_bytes())?;
            if !(-4950..=4932).contains(&exp) {
                return None;
            }
        }
        v
    };
    Some(if neg { -magnitude } else { magnitude })
}

/// The power of ten of a decimal number's leading digit (`123.4e5` is 7), or None when
/// it has no non-zero digit.
fn decimal_exponent(body: &[u8]) -> Option<i64> {
    let (mantissa, exp) = match body.iter().position(|&c| c == b'e' || c == b'E') {
        Some(i) => (&body[..i], std::str::from_utf8(&body[i + 1..]).ok()?.parse::<i64>().unwrap_or(i64::MAX)),
        None => (body, 0),
    };
    let point = mantissa.iter().position(|&c| c == b'.').unwrap_or(mantissa.len());
    let first = mantissa.iter().position(|&c| (b'1'..=b'9').contains(&c))?;
    let lead = if first < point { (point - first - 1) as i64 } else { point as i64 - first as i64 };
    Some(exp.saturating_add(lead))
}

/// The digits of a C hex float after `0x`: `h[.h][p[+-]d]`.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mantissa, exp) = match s.find('p') {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0.0f64;
    for c in int_part.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
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
