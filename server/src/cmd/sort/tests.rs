//! strtod's corners and pattern lookups, which the conformance cases touch only in part.

use super::pattern::{c_str, strtod};

#[test]
fn strtod_reads_what_c_reads() {
    assert_eq!(strtod(b""), Some(0.0));
    assert_eq!(strtod(b"  12"), Some(12.0));
    assert_eq!(strtod(b"12 "), None);
    assert_eq!(strtod(b"1.5e3"), Some(1500.0));
    assert_eq!(strtod(b"1e"), None);
    assert_eq!(strtod(b"-.5"), Some(-0.5));
    assert_eq!(strtod(b"."), None);
    assert_eq!(strtod(b"0x10"), Some(16.0));
    assert_eq!(strtod(b"0x1p4"), Some(16.0));
    assert_eq!(strtod(b"-inf"), Some(f64::NEG_INFINITY));
    assert_eq!(strtod(b"nan"), None);
    assert_eq!(strtod(b"1e400"), None);
    assert_eq!(strtod(b"1e-400"), None);
    assert_eq!(strtod(b"5\0junk"), Some(5.0));
    assert_eq!(strtod(b"abc"), None);
    assert_eq!(c_str(b"ab\0cd"), b"ab");
}

#[test]
fn short_integers_read_as_strtod_reads_them() {
    assert_eq!(strtod(b"123456789012345"), Some(123456789012345.0));
    assert_eq!(strtod(b"-42"), Some(-42.0));
    assert_eq!(strtod(b"007"), Some(7.0));
    assert!(strtod(b"-0").is_some_and(|v| v == 0.0 && v.is_sign_negative()));
    assert_eq!(strtod(b"-"), None);
    assert_eq!(strtod(b"1234567890123456789"), Some(1234567890123456789.0));
}
