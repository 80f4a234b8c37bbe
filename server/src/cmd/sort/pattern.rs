//! What SORT reads besides the sorted key: `BY` and `GET` patterns (`*` replaced by the
//! element, `->field` reading a hash field, `#` the element itself), and C's `strtod`, whose
//! rules decide which values sort as numbers.

use crate::db::Value;
use crate::engine::Engine;

/// The part of a byte string C sees: up to the first NUL.
pub fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(i) => &s[..i],
        None => s,
    }
}

/// Redis's `lookupKeyByPattern`: the value the pattern names for `elem`, or None when the
/// pattern has no `*`, the key is missing or of the wrong type, or the field is missing.
pub fn lookup(e: &mut Engine, db: usize, pattern: &[u8], elem: &[u8]) -> Option<Vec<u8>> {
    if pattern.first() == Some(&b'#') && pattern.get(1).is_none_or(|&b| b == 0) {
        return Some(elem.to_vec());
    }
    let star = c_str(pattern).iter().position(|&b| b == b'*')?;
    // "->" after the star, with something after it, makes the rest a hash field.
    let after = c_str(&pattern[star + 1..]);
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&i| i + 2 < pattern.len() && pattern[i + 2] != 0);
    let (post_end, field) = match arrow {
        Some(i) => (i, Some(&pattern[i + 2..])),
        None => (pattern.len(), None),
    };
    let mut key = Vec::with_capacity(pattern.len() + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(&pattern[star + 1..post_end]);
    let entry = e.db(db).get(&key)?;
    match (&entry.value, field) {
        (Value::Str(s), None) => Some(s.to_vec()),
        (Value::Hash(h), Some(f)) => h.get(f).cloned(),
        _ => None,
    }
}

/// C's `strtod` as SORT uses it: the number, or None when characters are left over (up to a
/// NUL, where C stops reading), the value overflows or underflows (ERANGE), or is NaN.
pub fn strtod(s: &[u8]) -> Option<f64> {
    let s = c_str(s);
    let mut i = 0;
    while i < s.len() && crate::numfmt::is_c_space(s[i]) {
        i += 1;
    }
    let body = &s[i..];
    let (neg, rest) = match body.first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    let lower: Vec<u8> = rest.iter().map(|b| b.to_ascii_lowercase()).collect();
    let sign = if neg { -1.0 } else { 1.0 };
    if lower.starts_with(b"inf") {
        let n = if lower.starts_with(b"infinity") { 8 } else { 3 };
        return (n == lower.len()).then_some(sign * f64::INFINITY);
    }
    if lower.starts_with(b"nan") {
        return None;
    }
    if lower.starts_with(b"0x") {
        return hex(&lower[2..]).map(|v| sign * v);
    }
    // Decimal: digits, an optional fraction, an optional exponent.
    let mut j = 0;
    let digits = |j: &mut usize| {
        let start = *j;
        while *j < lower.len() && lower[*j].is_ascii_digit() {
            *j += 1;
        }
        *j - start
    };
    let mut mantissa = digits(&mut j);
    if j < lower.len() && lower[j] == b'.' {
        j += 1;
        mantissa += digits(&mut j);
    }
    if mantissa == 0 {
        // No number at all: strtod consumes nothing, which only an empty string survives.
        return s.is_empty().then_some(0.0);
    }
    let num_end = j;
    if j < lower.len() && lower[j] == b'e' {
        let mut k = j + 1;
        if k < lower.len() && (lower[k] == b'+' || lower[k] == b'-') {
            k += 1;
        }
        let exp_digits = digits(&mut k);
        if exp_digits > 0 {
            j = k;
        }
    }
    if j != lower.len() {
        return None;
    }
    let text = std::str::from_utf8(&lower[..j]).ok()?;
    let v: f64 = text.parse().ok()?;
    if v.is_infinite() {
        return None;
    }
    let nonzero_digits = lower[..num_end].iter().any(|&b| (b'1'..=b'9').contains(&b));
    if (v == 0.0 && nonzero_digits) || (v != 0.0 && v.abs() < f64::MIN_POSITIVE) {
        return None;
    }
    Some(sign * v)
}

/// A hexadecimal float body (after `0x`): hex digits, an optional fraction, an optional
/// binary exponent `p`.
fn hex(s: &[u8]) -> Option<f64> {
    let mut v = 0.0f64;
    let mut j = 0;
    let mut any = false;
    while j < s.len() && s[j].is_ascii_hexdigit() {
        v = v * 16.0 + (s[j] as char).to_digit(16)? as f64;
        j += 1;
        any = true;
    }
    let mut scale = 0i32;
    if j < s.len() && s[j] == b'.' {
        j += 1;
        while j < s.len() && s[j].is_ascii_hexdigit() {
            v = v * 16.0 + (s[j] as char).to_digit(16)? as f64;
            scale -= 4;
            j += 1;
            any = true;
        }
    }
    if !any {
        // "0x" alone: strtod reads the "0" and stops at the "x".
        return None;
    }
    if j < s.len() && s[j] == b'p' {
        let mut k = j + 1;
        let neg = match s.get(k) {
            Some(b'-') => {
                k += 1;
                true
            }
            Some(b'+') => {
                k += 1;
                false
            }
            _ => false,
        };
        let start = k;
        let mut e: i32 = 0;
        while k < s.len() && s[k].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add((s[k] - b'0') as i32);
            k += 1;
        }
        if k > start {
            scale = scale.saturating_add(if neg { -e } else { e });
            j = k;
        }
    }
    if j != s.len() {
        return None;
    }
    let r = v * 2f64.powi(scale);
    (r.is_finite() && (r == 0.0 || r.abs() >= f64::MIN_POSITIVE) || v == 0.0).then_some(r)
}
