//! Number formatting and parsing the way Redis does it in C.
//!
//! Redis prints doubles with `printf("%.17g")` and parses integers with its own strict
//! `string2ll` (no spaces, no `+`, no leading zeros). Rust's standard formatting differs in
//! both, so the rules live here once and every command and the Lua bridge share them.

/// C's `%.<prec>g` for a finite or non-finite double, as glibc prints it.
pub fn format_g(d: f64, prec: usize) -> String {
    if d.is_nan() {
        return if d.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let prec = prec.max(1);
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.*e}", prec - 1, d);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent digits");
    if exp < -4 || exp >= prec as i32 {
        let mantissa = strip_fraction_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", mantissa, sign, exp.abs())
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        strip_fraction_zeros(&format!("{:.*}", decimals, d)).to_string()
    }
}

/// C's `isspace` in the "C" locale: what strtod, strtoul and Lua's conversions skip.
pub fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `%.17g`: how Redis 7.0 replies with a double (ZSCORE, RESP3 doubles, Lua number arguments).
pub fn format_double(d: f64) -> String {
    if SHORTEST_DOUBLES.get() {
        format_double_shortest(d)
    } else {
        format_g(d, 17)
    }
}

thread_local! {
    /// Whether this thread's engine prints doubles as Redis 7.2 and Valkey do. Set by
    /// `Engine::execute_args` from its profile, so every path that prints a double while a
    /// command runs (replies, their RESP encoding right after, Lua's view of replies, Lua
    /// numbers passed to `redis.call`) follows the profile without threading it through.
    static SHORTEST_DOUBLES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Chooses how `format_double` prints on this thread (see `SHORTEST_DOUBLES`).
pub fn set_shortest_doubles(on: bool) {
    SHORTEST_DOUBLES.set(on);
}

/// A double as Redis 7.2+ and Valkey reply with it (their `d2string`): nan, inf and a
/// signed zero by name, an integral value within ±2^62 as an integer, otherwise
/// `fpconv_dtoa` (`crate::fpconv`).
pub fn format_double_shortest(d: f64) -> String {
    if d.is_nan() || d.is_infinite() || d == 0.0 {
        return crate::fpconv::dtoa(d);
    }
    integral(d).unwrap_or_else(|| crate::fpconv::dtoa(d))
}

/// A Lua number passed to `redis.call`, as the profile's server turns it into an argument:
/// Redis 7.0 with `%.17g`; 7.2+ and Valkey as an integer when it is one (so -0 is "0"),
/// else with `fpconv_dtoa`.
pub fn format_lua_number_arg(d: f64) -> String {
    if !SHORTEST_DOUBLES.get() {
        return format_g(d, 17);
    }
    integral(d).unwrap_or_else(|| crate::fpconv::dtoa(d))
}

/// Redis's `double2ll`: the integer text of an integral double within ±2^62.
fn integral(d: f64) -> Option<String> {
    const LIMIT: f64 = 4_611_686_018_427_387_904.0;
    (d.fract() == 0.0 && (-LIMIT..=LIMIT).contains(&d))
        .then(|| itoa::Buffer::new().format(d as i64).to_string())
}

/// How INCRBYFLOAT and HINCRBYFLOAT print their result: Redis's `%.17Lf` of a `long double`,
/// trailing zeros removed (see `ldouble`, which also does the arithmetic as Redis does).
pub fn format_human_float(d: f64) -> String {
    crate::ldouble::LongDouble::from_f64(d).to_human()
}

fn strip_fraction_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Redis's `string2ll`: an optional `-`, then digits with no leading zero; nothing else.
pub fn parse_i64(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    if b == b"0" {
        return Some(0);
    }
    let (neg, digits) = match b[0] {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits[0] == b'0' {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((-(v as i128)) as i64)
        }
    } else if v > i64::MAX as u64 {
        None
    } else {
        Some(v as i64)
    }
}

/// Redis's `string2ld`/`strtod` rules for float arguments: the whole string must parse, no
/// leading space, NaN refused. `inf`/`-inf`/`+inf` are accepted as C's strtod does.
pub fn parse_f64(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let v = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => {
            if lower.contains("inf")
                || lower.contains("nan")
                || lower.starts_with("0x")
                || lower.starts_with("-0x")
            {
                return None;
            }
            s.parse::<f64>().ok()?
        }
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::format_double_shortest as shortest;

    /// Each pair was read off valkey-server 8.1.8 (ZADD then ZSCORE).
    #[test]
    fn shortest_doubles_print_as_valkey_and_redis_7_2_do() {
        for (d, text) in [
            (-0.0, "-0"),
            (1e18, "1000000000000000000"),
            (4.6e18, "4600000000000000000"),
            (4_611_686_018_427_387_904.0, "4611686018427387904"),
            (4.7e18, "4.7e+18"),
            (-9e18, "-9e+18"),
            (1e19, "1e+19"),
            (1e22, "1e+22"),
            (0.1, "0.1"),
            (0.001, "0.001"),
            (1e-5, "0.00001"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.234e-7, "1.234e-7"),
            (1.5e-10, "1.5e-10"),
            (12345.678, "12345.678"),
            (-1e300, "-1e+300"),
            (1e-300, "1e-300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.30000000000000004, "0.30000000000000004"),
            (0.6000000000000001, "0.6000000000000001"),
            (123e-5, "0.00123"),
            (1.2345678901234567e-5, "1.2345678901234568e-5"),
            (56.4412578701582, "56.4412578701582"),
            (34.16008997803567, "34.16008997803567"),
            (123456789.5, "123456789.5"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(shortest(d), text, "{d:e}");
        }
    }

    use super::*;

    #[test]
    fn g17_matches_printf() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(123456789.0), "123456789");
        assert_eq!(format_double(0.0001), "0.0001");
        assert_eq!(format_double(0.00001), "1.0000000000000001e-05");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_g(3.14159265358979, 14), "3.1415926535898");
        assert_eq!(format_g(100.0, 14), "100");
    }

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"01"), None);
        assert_eq!(parse_i64(b"+1"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"-0"), None);
    }
}
