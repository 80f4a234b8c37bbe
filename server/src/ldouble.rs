//! The x87 80-bit `long double` that INCRBYFLOAT and HINCRBYFLOAT compute in.
//!
//! Redis parses both operands with `strtold`, adds them as `long double` (64-bit mantissa,
//! 15-bit exponent on x86-64) and prints the sum with `%.17Lf`, trailing zeros removed.
//! An f64 gives other answers for everyday inputs (0.1 + 0.2 is `0.3` in Redis, and
//! 1e308 + 1e308 is a 309-digit integer rather than an overflow), so this module emulates the
//! format exactly: parsing and addition are correctly rounded (ties to even) through exact
//! big-integer arithmetic, and printing is exact as glibc's is.

use num_bigint::BigUint;
use num_traits::{One, Zero};

/// Lowest exponent of the least significant mantissa bit (the smallest subnormal is 2^-16445).
const MIN_LSB_EXP: i64 = -16445;
/// Highest exponent of the top mantissa bit (the largest finite value is just under 2^16384).
const MAX_TOP_EXP: i64 = 16383;
/// Redis's `MAX_LONG_DOUBLE_CHARS`: longer strings are not parsed at all.
const MAX_CHARS: usize = 5 * 1024;

/// A finite or infinite extended-precision value: `(-1)^neg * mant * 2^exp`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LongDouble {
    Finite { neg: bool, mant: u64, exp: i64 },
    Inf { neg: bool },
}

/// Why INCRBYFLOAT refused: a bad operand, or a result that is NaN or infinite.
#[derive(Debug, PartialEq, Eq)]
pub enum IncrFloatError {
    NotAFloat,
    NanOrInfinity,
}

impl LongDouble {
    pub const ZERO: LongDouble = LongDouble::Finite {
        neg: false,
        mant: 0,
        exp: 0,
    };

    /// The exact extended value of an f64 (every f64 is representable).
    pub fn from_f64(d: f64) -> LongDouble {
        if d.is_infinite() {
            return LongDouble::Inf { neg: d < 0.0 };
        }
        let bits = d.to_bits();
        let neg = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (mant, exp) = if biased == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), biased - 1075)
        };
        LongDouble::Finite { neg, mant, exp }
    }

    /// Redis's `string2ld`: `strtold` over the whole string, no leading space, NaN refused,
    /// and overflow or underflow to zero refused.
    pub fn parse(b: &[u8]) -> Option<LongDouble> {
        if b.is_empty() || b.len() >= MAX_CHARS || b[0].is_ascii_whitespace() {
            return None;
        }
        let (neg, rest) = match b[0] {
            b'-' => (true, &b[1..]),
            b'+' => (false, &b[1..]),
            _ => (false, b),
        };
        let lower = rest.to_ascii_lowercase();
        if lower == b"inf" || lower == b"infinity" {
            return Some(LongDouble::Inf { neg });
        }
        let exact = if lower.len() > 2 && lower.starts_with(b"0x") {
            parse_hex(&lower[2..])?
        } else {
            parse_decimal(&lower)?
        };
        match exact {
            Exact::Zero => Some(LongDouble::Finite {
                neg,
                mant: 0,
                exp: 0,
            }),
            Exact::Huge => None,
            Exact::Tiny => None,
            Exact::Value(n, e) => match round(neg, n, e) {
                r @ LongDouble::Finite { mant, .. } if mant != 0 => Some(r),
                _ => None,
            },
        }
    }

    /// The correctly rounded sum. Infinite operands give an infinite (or NaN) result, which
    /// callers refuse anyway, so they are reported as `None`.
    pub fn checked_add(self, other: LongDouble) -> Option<LongDouble> {
        let (
            LongDouble::Finite {
                neg: an,
                mant: am,
                exp: ae,
            },
            LongDouble::Finite {
                neg: bn,
                mant: bm,
                exp: be,
            },
        ) = (self, other)
        else {
            return None;
        };
        if am == 0 && bm == 0 {
            return Some(LongDouble::Finite {
                neg: an && bn,
                mant: 0,
                exp: 0,
            });
        }
        if am == 0 {
            return Some(other);
        }
        if bm == 0 {
            return Some(self);
        }
        let base = ae.min(be);
        let a = BigUint::from(am) << ((ae - base) as usize);
        let b = BigUint::from(bm) << ((be - base) as usize);
        let (neg, mag) = if an == bn {
            (an, a + b)
        } else if a >= b {
            (an, a - b)
        } else {
            (bn, b - a)
        };
        if mag.is_zero() {
            return Some(LongDouble::ZERO);
        }
        match round(neg, mag, base) {
            r @ LongDouble::Finite { .. } => Some(r),
            LongDouble::Inf { .. } => None,
        }
    }

    /// `%.17Lf` with trailing zeros (and a bare `.`) removed, and `-0` printed as `0`: what
    /// Redis's `ld2string(..., LD_STR_HUMAN)` produces.
    pub fn to_human(self) -> String {
        let (neg, mant, exp) = match self {
            LongDouble::Inf { neg } => return if neg { "-inf".into() } else { "inf".into() },
            LongDouble::Finite { neg, mant, exp } => (neg, mant, exp),
        };
        let scale = BigUint::from(10u32).pow(17);
        let scaled = if exp >= 0 {
            (BigUint::from(mant) << (exp as usize)) * scale
        } else {
            let num = BigUint::from(mant) * scale;
            let shift = (-exp) as usize;
            let q = &num >> shift;
            let rem = &num - (&q << shift);
            let half = BigUint::one() << (shift - 1);
            if rem > half || (rem == half && q.bit(0)) {
                q + 1u32
            } else {
                q
            }
        };
        let digits = scaled.to_string();
        let digits = format!("{:0>18}", digits);
        let (int, frac) = digits.split_at(digits.len() - 17);
        let frac = frac.trim_end_matches('0');
        let mut s = String::with_capacity(digits.len() + 2);
        if neg {
            s.push('-');
        }
        s.push_str(int);
        if !frac.is_empty() {
            s.push('.');
            s.push_str(frac);
        }
        if s == "-0" {
            s = "0".into();
        }
        s
    }
}

/// INCRBYFLOAT's arithmetic: the stored string plus the increment, printed as Redis stores it.
/// The current value is checked first, as Redis does (both give the same error text).
pub fn incr_by_float(current: &[u8], incr: &[u8]) -> Result<String, IncrFloatError> {
    let value = LongDouble::parse(current).ok_or(IncrFloatError::NotAFloat)?;
    let incr = LongDouble::parse(incr).ok_or(IncrFloatError::NotAFloat)?;
    let sum = value
        .checked_add(incr)
        .ok_or(IncrFloatError::NanOrInfinity)?;
    Ok(sum.to_human())
}

/// An exactly parsed number before rounding: `n * 2^e`, or a magnitude so far out of range
/// that only its direction matters.
enum Exact {
    Zero,
    Value(BigUint, i64),
    Huge,
    Tiny,
}

/// The exponent that starts at `s[j]`, after its `e` or `p`: an optional sign and at least
/// one decimal digit. Returns it, signed, with the index just past it. Its size is capped at
/// 1,000,000, far past where any value overflows or underflows, so it cannot wrap.
fn exponent(s: &[u8], mut j: usize) -> Option<(i64, usize)> {
    let negative = match s.get(j) {
        Some(b'-') => {
            j += 1;
            true
        }
        Some(b'+') => {
            j += 1;
            false
        }
        _ => false,
    };
    if !s.get(j).is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut e: i64 = 0;
    while let Some(&c) = s.get(j).filter(|c| c.is_ascii_digit()) {
        e = (e * 10 + (c - b'0') as i64).min(1_000_000);
        j += 1;
    }
    Some((if negative { -e } else { e }, j))
}

fn parse_decimal(s: &[u8]) -> Option<Exact> {
    let mut i = 0;
    let mut digits: Vec<u8> = Vec::new();
    let mut frac_digits: i64 = 0;
    let mut seen_digit = false;
    while i < s.len() && s[i].is_ascii_digit() {
        digits.push(s[i]);
        seen_digit = true;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            digits.push(s[i]);
            frac_digits += 1;
            seen_digit = true;
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    let mut exp10: i64 = 0;
    if s.get(i) == Some(&b'e') {
        (exp10, i) = exponent(s, i + 1)?;
    }
    if i != s.len() {
        return None;
    }
    let first = digits.iter().position(|&c| c != b'0');
    let Some(first) = first else {
        return Some(Exact::Zero);
    };
    let digits = &digits[first..];
    let exp10 = exp10 - frac_digits;
    // The value is in [10^(len-1+exp10), 10^(len+exp10)): far outside the format either way.
    let magnitude = digits.len() as i64 + exp10;
    if magnitude > 4934 {
        return Some(Exact::Huge);
    }
    if magnitude < -4952 {
        return Some(Exact::Tiny);
    }
    let n = BigUint::parse_bytes(digits, 10)?;
    if exp10 >= 0 {
        return Some(Exact::Value(n * BigUint::from(10u32).pow(exp10 as u32), 0));
    }
    let den = BigUint::from(10u32).pow((-exp10) as u32);
    // Enough quotient bits for the rounding decision, plus a sticky bit for the remainder.
    let k = (70 + den.bits() as i64 - n.bits() as i64).max(0) as usize;
    let scaled = n << k;
    let q = &scaled / &den;
    let exact = &q * &den == scaled;
    let q = (q << 1usize) | BigUint::from(u32::from(!exact));
    Some(Exact::Value(q, -(k as i64) - 1))
}

fn parse_hex(s: &[u8]) -> Option<Exact> {
    let mut i = 0;
    let mut n = BigUint::zero();
    let mut exp2: i64 = 0;
    let mut seen_digit = false;
    let mut significant = 0usize;
    let hex = |c: u8| (c as char).to_digit(16);
    while let Some(d) = s.get(i).and_then(|&c| hex(c)) {
        if significant < 4096 {
            n = (n << 4usize) | BigUint::from(d);
            if !n.is_zero() {
                significant += 1;
            }
        } else {
            exp2 += 4;
        }
        seen_digit = true;
        i += 1;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = s.get(i).and_then(|&c| hex(c)) {
            if significant < 4096 {
                n = (n << 4usize) | BigUint::from(d);
                if !n.is_zero() {
                    significant += 1;
                }
                exp2 -= 4;
            }
            seen_digit = true;
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    if s.get(i) == Some(&b'p') {
        let (e, end) = exponent(s, i + 1)?;
        exp2 += e;
        i = end;
    }
    if i != s.len() {
        return None;
    }
    if n.is_zero() {
        return Some(Exact::Zero);
    }
    let top = n.bits() as i64 - 1 + exp2;
    if top > MAX_TOP_EXP + 1 {
        return Some(Exact::Huge);
    }
    if top < MIN_LSB_EXP - 2 {
        return Some(Exact::Tiny);
    }
    Some(Exact::Value(n, exp2))
}

/// Rounds `n * 2^e` (n > 0) to the format, ties to even, with subnormals and overflow to
/// infinity as the hardware does.
fn round(neg: bool, n: BigUint, e: i64) -> LongDouble {
    let top = n.bits() as i64 - 1 + e;
    let lsb = (top - 63).max(MIN_LSB_EXP);
    let shift = lsb - e;
    let (mut mant, mut lsb) = if shift <= 0 {
        let m = n << ((-shift) as usize);
        (u64::try_from(&m).unwrap_or(u64::MAX), lsb)
    } else {
        let shift_u = shift as usize;
        let q = &n >> shift_u;
        let rem = &n - (&q << shift_u);
        let half = BigUint::one() << (shift_u - 1);
        let up = rem > half || (rem == half && q.bit(0));
        let q = if up { q + 1u32 } else { q };
        // Rounding up can carry into a 65th bit: 2^64 is 2^63 one exponent higher.
        match u64::try_from(&q) {
            Ok(m) => (m, lsb),
            Err(_) => (1u64 << 63, lsb + 1),
        }
    };
    if mant == 0 {
        return LongDouble::Finite {
            neg,
            mant: 0,
            exp: 0,
        };
    }
    // Normalise so a value's representation is unique.
    while mant & 1 == 0 && lsb < MAX_TOP_EXP {
        mant >>= 1;
        lsb += 1;
    }
    let top = 63 - mant.leading_zeros() as i64 + lsb;
    if top > MAX_TOP_EXP {
        return LongDouble::Inf { neg };
    }
    LongDouble::Finite {
        neg,
        mant,
        exp: lsb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(a: &str, b: &str) -> String {
        incr_by_float(a.as_bytes(), b.as_bytes()).unwrap()
    }

    /// Each expected string was printed by redis-server 7.0.15 on x86-64.
    #[test]
    fn matches_redis_long_double_output() {
        assert_eq!(incr("0.1", "0.2"), "0.3");
        assert_eq!(incr("0", "1e20"), "100000000000000000000");
        assert_eq!(incr("0", "1e-20"), "0");
        assert_eq!(incr("0", "-0.0"), "0");
        assert_eq!(incr("0", "1.23456789012345678901"), "1.23456789012345679");
        assert_eq!(incr("0", "2.5e-17"), "0.00000000000000002");
        assert_eq!(incr("0", "0x10"), "16");
        assert_eq!(incr("0", "0x1p-2"), "0.25");
        assert_eq!(incr("0", "+.5e1"), "5");
        assert_eq!(incr("0", "5."), "5");
        assert_eq!(incr("-1.5", "1.5"), "0");
        assert_eq!(incr("1e-4940", "0"), "0");
        assert_eq!(incr("0", "5e-324"), "0");
        let big = incr("0", "1e308");
        assert_eq!(big.len(), 308);
        assert!(big.starts_with(
            "99999999999999999996685879655845645660560099847415567207797047994921734868838"
        ));
        let sum = incr(&big, "1e308");
        assert_eq!(sum.len(), 309);
        assert!(sum.starts_with(
            "199999999999999999993371759311691291321120199694831134415594095989843469737676"
        ));
    }

    #[test]
    fn refuses_what_strtold_refuses() {
        for bad in [
            "", " 1", "1 ", "nan", "1e", "-.", "1e-5000", "1e5000", "abc", "0x", "1e+",
        ] {
            assert_eq!(
                incr_by_float(b"0", bad.as_bytes()),
                Err(IncrFloatError::NotAFloat),
                "{bad:?}"
            );
        }
        assert_eq!(
            incr_by_float(b"0", b"inf"),
            Err(IncrFloatError::NanOrInfinity)
        );
        assert_eq!(
            incr_by_float(b"inf", b"-inf"),
            Err(IncrFloatError::NanOrInfinity)
        );
        assert_eq!(
            incr_by_float(b"1e4932", b"1e4932"),
            Err(IncrFloatError::NanOrInfinity)
        );
    }

    #[test]
    fn f64_values_print_like_long_doubles() {
        assert_eq!(LongDouble::from_f64(10.5).to_human(), "10.5");
        assert_eq!(LongDouble::from_f64(0.1).to_human(), "0.10000000000000001");
        assert_eq!(LongDouble::from_f64(-0.0).to_human(), "0");
    }
}
