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
