//! What SORT reads besides the sorted key: `BY` and `GET` patterns (`*` replaced by the
//! element, `->field` reading a hash field, `#` the element itself), and which values sort
//! as numbers.

use crate::db::Value;
use crate::engine::Engine;

pub use crate::cmd::cfloat::c_str;

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
        (Value::Hash(h), Some(f)) => h.get(f).map(<[u8]>::to_vec),
        _ => None,
    }
}

/// A SORT score: C's `strtod` must read the whole C string (an empty one is 0), without
/// ERANGE (overflow or underflow) and not NaN.
pub fn strtod(s: &[u8]) -> Option<f64> {
    // The common case first: a short decimal integer, which strtod reads exactly (below
    // 2^53 every integer is a double) and which has no NUL, space, dot or exponent.
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let n = digits
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64;
        return Some(if digits.len() < s.len() { -n } else { n });
    }
    let c = c_str(s);
    let r = crate::cmd::cfloat::strtod(c);
    let whole = r.consumed == c.len();
    (whole && !r.erange && !r.value.is_nan()).then_some(r.value)
}
