//! Score and range arguments, parsed by C's `strtod` rules as Redis does.
//!
//! Redis reads scores with `strtod`, so `0x10`, `1e3`, `inf` and `-infinity` are scores,
//! and its two call sites differ: ZADD-style scores refuse leading spaces, the empty
//! string and out-of-range values, while range ends (`ZRANGEBYSCORE k " 1" 5`) take
//! whatever `strtod` takes, the empty string being 0.

use crate::db::zset::{LexBound, LexRange, ScoreRange};
use crate::errors;
use crate::reply::Reply;

/// C's `strtod` over the whole input. Returns the value and whether it over- or
/// underflowed (ERANGE), or None when some of the input is not part of the number.
fn strtod_full(s: &[u8]) -> Option<(f64, bool)> {
    let mut i = 0;
    while i < s.len() && crate::numfmt::is_c_space(s[i]) {
        i += 1;
    }
    let rest = &s[i..];
    if rest.is_empty() {
        // Nothing converted: strtod leaves the end pointer at the start.
        return if s.is_empty() {
            Some((0.0, false))
        } else {
            None
        };
    }
    let (neg, body) = match rest[0] {
        b'-' => (true, &rest[1..]),
        b'+' => (false, &rest[1..]),
        _ => (false, rest),
    };
    let lower = body.to_ascii_lowercase();
    let sign = if neg { -1.0 } else { 1.0 };
    if lower == b"inf" || lower == b"infinity" {
        return Some((sign * f64::INFINITY, false));
    }
    if lower.starts_with(b"nan") {
        let tail = &lower[3..];
        let ok = tail.is_empty()
            || (tail.first() == Some(&b'(')
                && tail.last() == Some(&b')')
                && tail[1..tail.len() - 1]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'_'));
        return ok.then_some((f64::NAN, false));
    }
    if lower.starts_with(b"0x") {
        return parse_hex(&lower[2..]).map(|(v, erange)| (sign * v, erange));
    }
    // Decimal: digits [. digits] [e [sign] digits], at least one mantissa digit.
    let mut j = 0;
    let mut mantissa_digits = 0;
    let mut nonzero = false;
    while j < body.len() && body[j].is_ascii_digit() {
        nonzero |= body[j] != b'0';
        j += 1;
        mantissa_digits += 1;
    }
    if j < body.len() && body[j] == b'.' {
        j += 1;
        while j < body.len() && body[j].is_ascii_digit() {
            nonzero |= body[j] != b'0';
            j += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if j < body.len() && (body[j] == b'e' || body[j] == b'E') {
        let mut k = j + 1;
        if k < body.len() && (body[k] == b'+' || body[k] == b'-') {
            k += 1;
        }
        let start = k;
        while k < body.len() && body[k].is_ascii_digit() {
            k += 1;
        }
        if k == start {
            return None; // strtod would stop before the 'e'; trailing bytes remain
        }
        j = k;
    }
    if j != body.len() {
        return None;
    }
    let text = std::str::from_utf8(body).ok()?;
    let v: f64 = text.parse().ok()?;
    let erange = v.is_infinite() || (v == 0.0 && nonzero);
    Some((sign * v, erange))
}

fn parse_hex(h: &[u8]) -> Option<(f64, bool)> {
    let mut v = 0f64;
    let mut digits = 0;
    let mut scale = 0i32;
    let mut j = 0;
    while j < h.len() && h[j].is_ascii_hexdigit() {
        v = v * 16.0 + (h[j] as char).to_digit(16)? as f64;
        j += 1;
        digits += 1;
    }
    if j < h.len() && h[j] == b'.' {
        j += 1;
        while j < h.len() && h[j].is_ascii_hexdigit() {
            v = v * 16.0 + (h[j] as char).to_digit(16)? as f64;
            scale -= 4;
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if j < h.len() && h[j] == b'p' {
        let exp_text = std::str::from_utf8(&h[j + 1..]).ok()?;
        let exp: i32 = exp_text.parse().ok()?;
        if !exp_text
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == b'-' || c == b'+')
        {
            return None;
        }
        scale = scale.saturating_add(exp);
        j = h.len();
    }
    if j != h.len() {
        return None;
    }
    // 2^scale itself underflows to 0 below 2^-1074 (and overflows above 2^1023) even when
    // v * 2^scale is a representable subnormal such as 0x1p-1074: scale in steps.
    let mut r = v;
    while scale < -1000 && r != 0.0 {
        r *= 2f64.powi(-1000);
        scale += 1000;
    }
    while scale > 1000 && r.is_finite() {
        r *= 2f64.powi(1000);
        scale -= 1000;
    }
    r *= 2f64.powi(scale);
    Some((r, r.is_infinite() || (r == 0.0 && v != 0.0)))
}

/// A score as ZADD, ZINCRBY and WEIGHTS read it (`getDoubleFromObject`).
pub fn score(arg: &[u8]) -> Option<f64> {
    if arg.is_empty() || arg[0].is_ascii_whitespace() || arg[0] == 0x0b {
        return None;
    }
    match strtod_full(arg) {
        Some((v, false)) if !v.is_nan() => Some(v),
        _ => None,
    }
}

/// A score argument with `ERR value is not a valid float`.
pub fn score_or_err(arg: &[u8]) -> Result<f64, Reply> {
    score(arg).ok_or_else(|| Reply::err(errors::NOT_FLOAT))
}

/// One end of a score range: `(` makes it exclusive. C stops at a NUL byte.
fn range_end(arg: &[u8]) -> Option<(f64, bool)> {
    let arg = match arg.iter().position(|&c| c == 0) {
        Some(p) => &arg[..p],
        None => arg,
    };
    let (ex, num) = match arg.first() {
        Some(b'(') => (true, &arg[1..]),
        _ => (false, arg),
    };
    match strtod_full(num) {
        Some((v, _)) if !v.is_nan() => Some((v, ex)),
        _ => None,
    }
}

/// `min max` of ZRANGEBYSCORE and friends (`ERR min or max is not a float`).
pub fn score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, Reply> {
    match (range_end(min), range_end(max)) {
        (Some((min, minex)), Some((max, maxex))) => Ok(ScoreRange {
            min,
            max,
            minex,
            maxex,
        }),
        _ => Err(Reply::err(errors::MIN_MAX_NOT_FLOAT)),
    }
}

fn lex_end(arg: &[u8]) -> Option<(LexBound, bool)> {
    match arg.first()? {
        b'+' if arg.len() == 1 => Some((LexBound::Max, true)),
        b'-' if arg.len() == 1 => Some((LexBound::Min, true)),
        b'(' => Some((LexBound::Str(arg[1..].to_vec()), true)),
        b'[' => Some((LexBound::Str(arg[1..].to_vec()), false)),
        _ => None,
    }
}

/// `min max` of ZRANGEBYLEX and friends (`ERR min or max not valid string range item`).
pub fn lex_range(min: &[u8], max: &[u8]) -> Result<LexRange, Reply> {
    match (lex_end(min), lex_end(max)) {
        (Some((min, minex)), Some((max, maxex))) => Ok(LexRange {
            min,
            max,
            minex,
            maxex,
        }),
        _ => Err(Reply::err(errors::MIN_MAX_NOT_LEX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_strtod() {
        assert_eq!(score(b"1.5"), Some(1.5));
        assert_eq!(score(b"0x10"), Some(16.0));
        assert_eq!(score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(score(b"+Infinity"), Some(f64::INFINITY));
        assert_eq!(score(b"1e400"), None);
        assert_eq!(score(b"1e-400"), None);
        assert_eq!(score(b"nan"), None);
        assert_eq!(score(b" 1"), None);
        assert_eq!(score(b""), None);
        assert_eq!(score(b"1e"), None);
        assert_eq!(score(b".5"), Some(0.5));
        assert_eq!(score(b"5."), Some(5.0));
    }

    #[test]
    fn range_ends_are_lenient_like_strtod() {
        assert_eq!(range_end(b""), Some((0.0, false)));
        assert_eq!(range_end(b"("), Some((0.0, true)));
        assert_eq!(range_end(b" 3"), Some((3.0, false)));
        assert_eq!(range_end(b"(1e400"), Some((f64::INFINITY, true)));
        assert_eq!(range_end(b"nan"), None);
        assert_eq!(range_end(b"abc"), None);
    }
}
