//! C's `strtod`, which Redis uses where its own stricter parsers are not (SORT's scores, and
//! through `string2d` the GEO arguments): hexadecimal floats, `inf`/`infinity`, leading
//! white space, and `ERANGE` on overflow and underflow.

/// What `strtod` gives for `s` read as a C string: the value, how many bytes it consumed (0
/// when there is no number), and whether it set `ERANGE`.
pub struct Strtod {
    pub value: f64,
    pub consumed: usize,
    pub erange: bool,
}

/// The part of a byte string C sees: up to the first NUL.
pub fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(i) => &s[..i],
        None => s,
    }
}

pub fn strtod(s: &[u8]) -> Strtod {
    let none = Strtod {
        value: 0.0,
        consumed: 0,
        erange: false,
    };
    let s = c_str(s);
    let mut i = 0;
    while i < s.len() && crate::numfmt::is_c_space(s[i]) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let sign = if neg { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let starts =
        |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    if starts(b"inf") {
        let n = if starts(b"infinity") { 8 } else { 3 };
        return Strtod {
            value: sign * f64::INFINITY,
            consumed: i + n,
            erange: false,
        };
    }
    if starts(b"nan") {
        let mut n = 3;
        // "nan(chars)" is consumed whole when the parenthesis closes.
        if rest.get(3) == Some(&b'(') {
            if let Some(close) = rest[4..].iter().position(|&b| b == b')') {
                if rest[4..4 + close]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    n = 4 + close + 1;
                }
            }
        }
        // glibc keeps the sign of "-nan" (Lua prints it as "-nan"). Negation sets the sign
        // bit; a product with -1.0 would not (x86 passes the NaN operand through).
        return Strtod {
            value: if neg { -f64::NAN } else { f64::NAN },
            consumed: i + n,
            erange: false,
        };
    }
    if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((v, n, erange)) = hex(&rest[2..]) {
            return Strtod {
                value: sign * v,
                consumed: i + 2 + n,
                erange,
            };
        }
        // "0x" without hex digits: the "0" is the number.
        return Strtod {
            value: sign * 0.0,
            consumed: i + 1,
            erange: false,
        };
    }
    let digits = |j: &mut usize| {
        let start = *j;
        while *j < rest.len() && rest[*j].is_ascii_digit() {
            *j += 1;
        }
        *j - start
    };
    let mut j = 0;
    let mut mantissa = digits(&mut j);
    if j < rest.len() && rest[j] == b'.' {
        j += 1;
        mantissa += digits(&mut j);
    }
    if mantissa == 0 {
        return none;
    }
    let num_end = j;
    if j < rest.len() && (rest[j] | 0x20) == b'e' {
        let mut k = j + 1;
        if k < rest.len() && (rest[k] == b'+' || rest[k] == b'-') {
            k += 1;
        }
        if digits(&mut k) > 0 {
            j = k;
        }
    }
    let text = std::str::from_utf8(&rest[..j]).unwrap_or("0");
    let v: f64 = text.parse().unwrap_or(0.0);
    let nonzero = rest[..num_end].iter().any(|b| (b'1'..=b'9').contains(b));
    let erange = v.is_infinite() || (nonzero && v.abs() < f64::MIN_POSITIVE);
    Strtod {
        value: sign * v,
        consumed: i + j,
        erange,
    }
}

/// A hexadecimal float body after `0x`: (value, bytes consumed, ERANGE), None without digits.
fn hex(s: &[u8]) -> Option<(f64, usize, bool)> {
    let digit = |b: u8| (b as char).to_digit(16);
    let (mut v, mut j, mut any, mut scale) = (0.0f64, 0, false, 0i64);
    while let Some(d) = s.get(j).and_then(|&b| digit(b)) {
        v = v * 16.0 + d as f64;
        j += 1;
        any = true;
    }
    if s.get(j) == Some(&b'.') {
        let mut k = j + 1;
        let mut frac = false;
        while let Some(d) = s.get(k).and_then(|&b| digit(b)) {
            v = v * 16.0 + d as f64;
            scale -= 4;
            k += 1;
            frac = true;
        }
        if any || frac {
            j = k;
            any = true;
        }
    }
    if !any {
        return None;
    }
    if matches!(s.get(j), Some(b'p' | b'P')) {
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
        let mut e: i64 = 0;
        while k < s.len() && s[k].is_ascii_digit() {
            e = (e * 10 + (s[k] - b'0') as i64).min(1 << 20);
            k += 1;
        }
        if k > start {
            scale += if neg { -e } else { e };
            j = k;
        }
    }
    let r = if v == 0.0 {
        0.0
    } else {
        // Two steps, so that a large scale does not overflow the intermediate power.
        let half = (scale / 2).clamp(-2000, 2000) as i32;
        let other = (scale - scale / 2).clamp(-2000, 2000) as i32;
        v * 2f64.powi(half) * 2f64.powi(other)
    };
    let erange = r.is_infinite() || (v != 0.0 && r.abs() < f64::MIN_POSITIVE);
    Some((r, j, erange))
}

/// Redis's `string2d`: the whole string is a number (no leading space, no NUL), not NaN, and
/// not out of range unless it merely underflowed to a subnormal.
pub fn string2d(s: &[u8]) -> Option<f64> {
    if s.is_empty() || crate::numfmt::is_c_space(s[0]) {
        return None;
    }
    let r = strtod(s);
    let overflowed = r.erange && (r.value.is_infinite() || r.value == 0.0);
    (r.consumed == s.len() && !overflowed && !r.value.is_nan()).then_some(r.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_c_reads() {
        assert_eq!(string2d(b"0x10"), Some(16.0));
        assert_eq!(string2d(b"0x1.8p1"), Some(3.0));
        assert_eq!(string2d(b"-0x1p-1074"), Some(-5e-324));
        assert_eq!(string2d(b"1e309"), None);
        assert_eq!(string2d(b"1e-400"), None);
        assert_eq!(string2d(b"INF"), Some(f64::INFINITY));
        assert_eq!(string2d(b"-nan"), None);
        assert_eq!(string2d(b" 1"), None);
        assert_eq!(string2d(b"1 "), None);
        assert_eq!(string2d(b""), None);
        assert_eq!(string2d(b"1\0"), None);
        assert_eq!(string2d(b".5"), Some(0.5));
        assert_eq!(string2d(b"5."), Some(5.0));
        assert_eq!(string2d(b"0x"), None);
        assert_eq!(strtod(b"0x").consumed, 1);
        assert_eq!(strtod(b"1e").consumed, 1);
    }
}
