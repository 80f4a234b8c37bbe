//! Argument parsing with Redis's error replies, shared by every handler.
//!
//! Each parser returns `Result<_, Reply>` so a handler can write `let n = int(&call.args[2])?;`
//! and the error the client sees is exactly the one Redis sends.

use crate::engine::Engine;
use crate::errors;
use crate::ldouble::LongDouble;
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
/// Redis 7.0 parses a long double, rounds `secs * 1000` up to whole milliseconds (`ceill`),
/// converts it to a C `long long` and only then rejects negatives. So `1e-10` is a 1 ms
/// wait, not forever, while `-0.0005` (which rounds up to -0) is forever. A product beyond
/// the `long long` range, `inf` included, converts to LLONG_MIN and so is "negative", which
/// is why `1e300` is an error rather than a very long wait. The arithmetic is done in the
/// emulated x87 long double, since an f64 answers differently near the limits
/// (`9223372036854775.807` blocks in Redis; in f64 it rounds past 2^63 ms).
/// A deadline past the end of time never fires, as Redis's wrapped deadline never does.
#[cfg(test)]
pub fn timeout_deadline(arg: &[u8], now_ms: i64) -> Result<Option<i64>, Reply> {
    timeout_deadline_as(arg, now_ms, false)
}

/// `timeout_deadline` as the engine's profile reads it: Redis 7.2 (redis/redis#11338) and
/// Valkey refuse a positive timeout whose milliseconds pass LLONG_MAX ("timeout is out of
/// range") where Redis 7.0 wraps it to negative.
pub fn block_timeout(e: &Engine, arg: &[u8]) -> Result<Option<i64>, Reply> {
    let refused = e
        .profile()
        .has(crate::compat::since::TIMEOUT_OVERFLOW_REFUSED);
    timeout_deadline_as(arg, e.now_ms, refused)
}

fn timeout_deadline_as(
    arg: &[u8],
    now_ms: i64,
    refuse_overflow: bool,
) -> Result<Option<i64>, Reply> {
    let secs = LongDouble::parse(arg).ok_or_else(|| Reply::err(errors::TIMEOUT_NOT_FLOAT))?;
    let positive = match secs {
        LongDouble::Finite { neg, .. } | LongDouble::Inf { neg } => !neg,
    };
    let ms = match ceil_millis(secs) {
        None if refuse_overflow && positive => {
            return Err(Reply::err(errors::TIMEOUT_OUT_OF_RANGE))
        }
        ms => ms.unwrap_or(i64::MIN),
    };
    if ms < 0 {
        return Err(Reply::err(errors::TIMEOUT_NEGATIVE));
    }
    if ms == 0 {
        return Ok(None);
    }
    Ok(now_ms.checked_add(ms))
}

/// `(long long) ceill(secs * 1000.0L)`, or None where the x87 conversion overflows.
fn ceil_millis(secs: LongDouble) -> Option<i64> {
    let LongDouble::Finite { neg, mant, exp } = secs else {
        return None;
    };
    if mant == 0 {
        return Some(0);
    }
    // The exact product, then rounded to a 64-bit mantissa (ties to even) as the FPU does.
    let mut m = mant as u128 * 1000;
    let mut e = exp;
    let bits = 128 - m.leading_zeros() as i64;
    if bits > 64 {
        let shift = (bits - 64) as u32;
        let rest = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        m >>= shift;
        e += shift as i64;
        if rest > half || (rest == half && m & 1 == 1) {
            m += 1;
        }
    }
    let magnitude: u128 = if e >= 0 {
        if e >= 64 {
            return None;
        }
        m.checked_shl(e as u32).filter(|v| v >> e == m)?
    } else if e <= -128 {
        // Far below one millisecond: rounds up to 1 (or to -0).
        u128::from(!neg)
    } else {
        let whole = m >> (-e) as u32;
        let frac = m & ((1u128 << (-e) as u32) - 1) != 0;
        whole + u128::from(frac && !neg)
    };
    if magnitude >= 1u128 << 63 {
        return None;
    }
    Some(if neg {
        -(magnitude as i64)
    } else {
        magnitude as i64
    })
}

/// A scan's options (what follows the cursor) under the server's profile: NOVALUES and
/// NOSCORES are options only where the version has them (asked, and recorded in the
/// profile's report, when a scan meets one).
pub fn scan_options(
    e: &Engine,
    rest: &[bytes::Bytes],
    scanned: crate::db::scan::Scanned,
) -> Result<crate::db::scan::ScanOptions, Reply> {
    use crate::compat::since;
    crate::db::scan::parse_options(rest, scanned, |option| match option {
        "novalues" => e.has_option(since::HSCAN_NOVALUES, "hscan NOVALUES"),
        _ => e.has_option(since::ZSCAN_NOSCORES, "zscan NOSCORES"),
    })
}

/// C's atoi: optional blanks and sign, then the leading digits (0 when there are none).
pub fn atoi(a: &[u8]) -> i64 {
    let s = a.trim_ascii_start();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for &d in digits.iter().take_while(|d| d.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as i64);
    }
    if neg {
        -n
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What BLPOP answered on redis-server 7.0.15 for each timeout: a wait of some
    /// milliseconds, forever (0), or "timeout is negative".
    #[test]
    fn timeouts_round_up_to_milliseconds_as_redis_does() {
        let now = 1_000;
        let negative = Err(Reply::err(errors::TIMEOUT_NEGATIVE));
        for (arg, ms) in [
            ("1e-10", 1),
            ("1e-300", 1),
            ("0.0009999", 1),
            ("0.001", 1),
            ("0.0015", 2),
            ("0.3", 300),
            ("9223372036853", 9_223_372_036_853_000),
        ] {
            assert_eq!(
                timeout_deadline(arg.as_bytes(), now),
                Ok(Some(now + ms)),
                "{arg}"
            );
        }
        for arg in [
            "0",
            "-0",
            "-1e-300",
            "-0.0005",
            "-0.0009",
            "-0.001",
            "-0.000999999999999999999",
        ] {
            assert_eq!(timeout_deadline(arg.as_bytes(), now), Ok(None), "{arg}");
        }
        for arg in [
            "-0.0010001",
            "-0.001000000000000000001",
            "-1",
            "1e300",
            "1e16",
            "1e4932",
            "inf",
            "-inf",
            "9223372036854775807",
            "9223372036854775.808",
            "9223372036854776",
            "-9223372036854775.808",
        ] {
            assert_eq!(timeout_deadline(arg.as_bytes(), now), negative, "{arg}");
        }
        // Just under 2^63 ms: a valid wait whose deadline is past the end of time (forever).
        for arg in [
            "9223372036854775.807",
            "9223372036854775.2",
            "9223372036854775",
        ] {
            assert_eq!(timeout_deadline(arg.as_bytes(), now), Ok(None), "{arg}");
        }
        let not_float = Err(Reply::err(errors::TIMEOUT_NOT_FLOAT));
        for arg in ["nan", "1e5000", " 1"] {
            assert_eq!(timeout_deadline(arg.as_bytes(), now), not_float, "{arg}");
        }
    }
}
