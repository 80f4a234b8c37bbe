//! Doubles printed as Redis 7.2+ and Valkey print them: `fpconv_dtoa`, which finds its
//! digits with Florian Loitsch's Grisu2 and lays them out in its own way. Grisu2 does not
//! always find the shortest digits that read back (Ryu does), and where it does not, the
//! text a client sees differs: `-3.13843689e19` prints as `-31384368899999998000`. So
//! redlab runs the same algorithm,
//! with the same cached powers, the same rounded multiply and the same final rounding
//! loop, and checks it against a real valkey-server (tests/valkey_doubles.rs).

/// A double as an unsigned significand times a power of two.
#[derive(Clone, Copy)]
struct Fp {
    frac: u64,
    exp: i32,
}

const FRAC_MASK: u64 = 0x000f_ffff_ffff_ffff;
const HIDDEN_BIT: u64 = 0x0010_0000_0000_0000;
const EXP_BIAS: i32 = 1023 + 52;

/// 10^k for k = -348, -340, ..., 340 as a 64-bit significand (rounded to nearest) and a
/// binary exponent: Grisu's cached powers, computed exactly (the
/// `cached_powers_are_powers_of_ten` test checks every entry).
const POWERS: [(u64, i32); 87] = [
    (0xfa8fd5a0081c0288, -1220),
    (0xbaaee17fa23ebf76, -1193),
    (0x8b16fb203055ac76, -1166),
    (0xcf42894a5dce35ea, -1140),
    (0x9a6bb0aa55653b2d, -1113),
    (0xe61acf033d1a45df, -1087),
    (0xab70fe17c79ac6ca, -1060),
    (0xff77b1fcbebcdc4f, -1034),
    (0xbe5691ef416bd60c, -1007),
    (0x8dd01fad907ffc3c, -980),
    (0xd3515c2831559a83, -954),
    (0x9d71ac8fada6c9b5, -927),
    (0xea9c227723ee8bcb, -901),
    (0xaecc49914078536d, -874),
    (0x823c12795db6ce57, -847),
    (0xc21094364dfb5637, -821),
    (0x9096ea6f3848984f, -794),
    (0xd77485cb25823ac7, -768),
    (0xa086cfcd97bf97f4, -741),
    (0xef340a98172aace5, -715),
    (0xb23867fb2a35b28e, -688),
    (0x84c8d4dfd2c63f3b, -661),
    (0xc5dd44271ad3cdba, -635),
    (0x936b9fcebb25c996, -608),
    (0xdbac6c247d62a584, -582),
    (0xa3ab66580d5fdaf6, -555),
    (0xf3e2f893dec3f126, -529),
    (0xb5b5ada8aaff80b8, -502),
    (0x87625f056c7c4a8b, -475),
    (0xc9bcff6034c13053, -449),
    (0x964e858c91ba2655, -422),
    (0xdff9772470297ebd, -396),
    (0xa6dfbd9fb8e5b88f, -369),
    (0xf8a95fcf88747d94, -343),
    (0xb94470938fa89bcf, -316),
    (0x8a08f0f8bf0f156b, -289),
    (0xcdb02555653131b6, -263),
    (0x993fe2c6d07b7fac, -236),
    (0xe45c10c42a2b3b06, -210),
    (0xaa242499697392d3, -183),
    (0xfd87b5f28300ca0e, -157),
    (0xbce5086492111aeb, -130),
    (0x8cbccc096f5088cc, -103),
    (0xd1b71758e219652c, -77),
    (0x9c40000000000000, -50),
    (0xe8d4a51000000000, -24),
    (0xad78ebc5ac620000, 3),
    (0x813f3978f8940984, 30),
    (0xc097ce7bc90715b3, 56),
    (0x8f7e32ce7bea5c70, 83),
    (0xd5d238a4abe98068, 109),
    (0x9f4f2726179a2245, 136),
    (0xed63a231d4c4fb27, 162),
    (0xb0de65388cc8ada8, 189),
    (0x83c7088e1aab65db, 216),
    (0xc45d1df942711d9a, 242),
    (0x924d692ca61be758, 269),
    (0xda01ee641a708dea, 295),
    (0xa26da3999aef774a, 322),
    (0xf209787bb47d6b85, 348),
    (0xb454e4a179dd1877, 375),
    (0x865b86925b9bc5c2, 402),
    (0xc83553c5c8965d3d, 428),
    (0x952ab45cfa97a0b3, 455),
    (0xde469fbd99a05fe3, 481),
    (0xa59bc234db398c25, 508),
    (0xf6c69a72a3989f5c, 534),
    (0xb7dcbf5354e9bece, 561),
    (0x88fcf317f22241e2, 588),
    (0xcc20ce9bd35c78a5, 614),
    (0x98165af37b2153df, 641),
    (0xe2a0b5dc971f303a, 667),
    (0xa8d9d1535ce3b396, 694),
    (0xfb9b7cd9a4a7443c, 720),
    (0xbb764c4ca7a44410, 747),
    (0x8bab8eefb6409c1a, 774),
    (0xd01fef10a657842c, 800),
    (0x9b10a4e5e9913129, 827),
    (0xe7109bfba19c0c9d, 853),
    (0xac2820d9623bf429, 880),
    (0x80444b5e7aa7cf85, 907),
    (0xbf21e44003acdd2d, 933),
    (0x8e679c2f5e44ff8f, 960),
    (0xd433179d9c8cb841, 986),
    (0x9e19db92b4e31ba9, 1013),
    (0xeb96bf6ebadf77d9, 1039),
    (0xaf87023b9bf0ee6b, 1066),
];

/// The exponent of the first cached power and the step between two.
const FIRST_POWER: i32 = -348;
const POWER_STEP: i32 = 8;

/// Powers of ten that fit in a u64, largest first.
const TENS: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 19;
    while i > 0 {
        t[i - 1] = t[i] * 10;
        i -= 1;
    }
    t
};

fn build_fp(d: f64) -> Fp {
    let bits = d.to_bits();
    let frac = bits & FRAC_MASK;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp != 0 {
        Fp {
            frac: frac + HIDDEN_BIT,
            exp: exp - EXP_BIAS,
        }
    } else {
        Fp {
            frac,
            exp: -EXP_BIAS + 1,
        }
    }
}

fn normalize(fp: &mut Fp) {
    while fp.frac & HIDDEN_BIT == 0 {
        fp.frac <<= 1;
        fp.exp -= 1;
    }
    fp.frac <<= 11;
    fp.exp -= 11;
}

/// The neighbours' midpoints, as normalized numbers sharing the upper one's exponent.
fn boundaries(fp: Fp) -> (Fp, Fp) {
    let mut upper = Fp {
        frac: (fp.frac << 1) + 1,
        exp: fp.exp - 1,
    };
    while upper.frac & (HIDDEN_BIT << 1) == 0 {
        upper.frac <<= 1;
        upper.exp -= 1;
    }
    upper.frac <<= 10;
    upper.exp -= 10;
    let shift = if fp.frac == HIDDEN_BIT { 2 } else { 1 };
    let mut lower = Fp {
        frac: (fp.frac << shift) - 1,
        exp: fp.exp - shift,
    };
    lower.frac <<= lower.exp - upper.exp;
    lower.exp = upper.exp;
    (lower, upper)
}

/// The high 64 bits of the 128-bit product, rounded half up on the bit below.
fn multiply(a: Fp, b: Fp) -> Fp {
    const LO: u64 = 0xffff_ffff;
    let ah_bl = (a.frac >> 32) * (b.frac & LO);
    let al_bh = (a.frac & LO) * (b.frac >> 32);
    let al_bl = (a.frac & LO) * (b.frac & LO);
    let ah_bh = (a.frac >> 32) * (b.frac >> 32);
    let mut tmp = (ah_bl & LO) + (al_bh & LO) + (al_bl >> 32);
    tmp += 1 << 31;
    Fp {
        frac: ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (tmp >> 32),
        exp: a.exp + b.exp + 64,
    }
}

/// The cached power that brings a number with binary exponent `exp` into Grisu's window,
/// and its decimal exponent.
fn cached_power(exp: i32) -> (Fp, i32) {
    let approx = (-(exp + 87) as f64 * 0.301_029_995_663_981_14) as i32;
    let mut idx = (approx - FIRST_POWER) / POWER_STEP;
    loop {
        let (frac, pexp) = POWERS[idx as usize];
        let current = exp + pexp + 64;
        if current < -60 {
            idx += 1;
        } else if current > -32 {
            idx -= 1;
        } else {
            return (Fp { frac, exp: pexp }, FIRST_POWER + idx * POWER_STEP);
        }
    }
}

/// Moves the last digit down while that brings it closer to the true value and stays
/// inside the safe interval (Grisu's "weed").
fn round_digit(digits: &mut [u8], delta: u64, mut rem: u64, kappa: u64, frac: u64) {
    let Some(last) = digits.last_mut() else {
        return;
    };
    while rem < frac
        && delta - rem >= kappa
        && (rem + kappa < frac || frac - rem > rem + kappa - frac)
    {
        *last -= 1;
        rem += kappa;
    }
}

/// The digits of `upper` down to the precision the interval allows; `k` gets the decimal
/// exponent of the last digit.
fn generate_digits(fp: Fp, upper: Fp, lower: Fp, digits: &mut Vec<u8>, k: &mut i32) {
    let wfrac = upper.frac - fp.frac;
    let mut delta = upper.frac - lower.frac;
    let shift = (-upper.exp) as u32;
    let one = 1u64 << shift;
    let mut part1 = upper.frac >> shift;
    let mut part2 = upper.frac & (one - 1);
    let mut kappa = 10;
    for &div in &TENS[10..] {
        let digit = part1 / div;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part1 -= digit * div;
        kappa -= 1;
        let tmp = (part1 << shift) + part2;
        if tmp <= delta {
            *k += kappa;
            round_digit(digits, delta, tmp, div << shift, wfrac);
            return;
        }
        if kappa == 0 {
            break;
        }
    }
    let mut unit = 18;
    loop {
        part2 = part2.wrapping_mul(10);
        delta = delta.wrapping_mul(10);
        kappa -= 1;
        let digit = part2 >> shift;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part2 &= one - 1;
        if part2 < delta {
            *k += kappa;
            round_digit(digits, delta, part2, one, wfrac.wrapping_mul(TENS[unit]));
            return;
        }
        unit -= 1;
    }
}

/// Grisu2's digits of a finite, nonzero |d| and the decimal exponent of the last one.
fn grisu2(d: f64) -> (Vec<u8>, i32) {
    let mut w = build_fp(d.abs());
    let (mut lower, mut upper) = boundaries(w);
    normalize(&mut w);
    let (cp, k) = cached_power(upper.exp);
    let w = multiply(w, cp);
    upper = multiply(upper, cp);
    lower = multiply(lower, cp);
    lower.frac += 1;
    upper.frac -= 1;
    let mut digits = Vec::with_capacity(18);
    let mut exp = -k;
    generate_digits(w, upper, lower, &mut digits, &mut exp);
    (digits, exp)
}

/// `fpconv_dtoa`: zero and the specials first, then Grisu2's digits laid out plain while
/// the exponent stays near them, else as `d.ddde+X` (the exponent unpadded).
pub fn dtoa(d: f64) -> String {
    let mut out = String::with_capacity(26);
    if d.is_sign_negative() {
        out.push('-');
    }
    if d.is_nan() {
        out.push_str("nan");
        return out;
    }
    if d.is_infinite() {
        out.push_str("inf");
        return out;
    }
    if d == 0.0 {
        out.push('0');
        return out;
    }
    let (digits, k) = grisu2(d);
    let digits = std::str::from_utf8(&digits).unwrap_or("0");
    let n = digits.len() as i32;
    let exp = (k + n - 1).abs();
    if k >= 0 && exp < n + 7 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', k as usize));
    } else if k < 0 && (k > -7 || exp < 4) {
        let whole = n + k;
        if whole <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-whole) as usize));
            out.push_str(digits);
        } else {
            out.push_str(&digits[..whole as usize]);
            out.push('.');
            out.push_str(&digits[whole as usize..]);
        }
    } else {
        let n = n.min(if d < 0.0 { 17 } else { 18 });
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..n as usize]);
        }
        out.push('e');
        out.push(if k + n - 1 < 0 { '-' } else { '+' });
        out.push_str(itoa::Buffer::new().format(exp));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    /// Every cached power is 10^k rounded to nearest in 64 bits: |frac * 2^exp - 10^k| is at
    /// most half a unit of the significand's last place, checked in exact integers.
    #[test]
    fn cached_powers_are_powers_of_ten() {
        let ten = BigUint::from(10u8);
        for (i, &(frac, exp)) in POWERS.iter().enumerate() {
            let k = FIRST_POWER + i as i32 * POWER_STEP;
            assert_eq!(frac >> 63, 1, "10^{k} is normalized");
            let a = BigUint::from(frac);
            let (twice_diff, unit) = if exp >= 0 {
                let v = a << exp as u32;
                let t = ten.pow(k as u32);
                let d = if v > t { v - t } else { t - v };
                (d << 1u32, BigUint::from(1u8) << exp as u32)
            } else {
                let m = (-exp) as u32;
                let (num, den) = if k >= 0 {
                    (ten.pow(k as u32), BigUint::from(1u8))
                } else {
                    (BigUint::from(1u8), ten.pow((-k) as u32))
                };
                let v = (a * &den) << 1u32;
                let t = num << (m + 1);
                (if v > t { v - t } else { t - v }, den)
            };
            assert!(twice_diff <= unit, "10^{k}");
        }
    }

    #[test]
    fn digits_as_fpconv_prints_them() {
        for (d, text) in [
            (0.1, "0.1"),
            (0.30000000000000004, "0.30000000000000004"),
            (-0.0, "-0"),
            (1e21, "1e+21"),
            (-3.13843689e19, "-31384368899999998000"),
            (1e-7, "1e-7"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(dtoa(d), text, "{d:e}");
        }
    }
}
