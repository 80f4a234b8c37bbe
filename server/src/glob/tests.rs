use super::{matches, step};

/// Every key the table below is matched against (the keys set on redis-server 7.0.15).
const KEYS: &[&[u8]] = &[
    b"", b"a", b"b", b"ab", b"abc", b"]", b"^", b"_", b"`", b"-", b"\\", b"[", b"a\\", b"x", b"z",
    b"A", b"\x80", b"\xff", b"a-", b"[a", b"*", b"?",
];

/// `KEYS pattern` on redis-server 7.0.15 with the keys above, sorted bytewise.
const REDIS_KEYS: &[(&[u8], &[&[u8]])] = &[
    (
        b"**",
        &[
            b"*", b"-", b"?", b"A", b"[", b"[a", b"\\", b"]", b"^", b"_", b"`", b"a", b"a-",
            b"a\\", b"ab", b"abc", b"b", b"x", b"z", b"\x80", b"\xff",
        ],
    ),
    (
        b"?",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\\", b"]", b"^", b"_", b"`", b"a", b"b", b"x", b"z",
            b"\x80", b"\xff",
        ],
    ),
    (b"[", &[]),
    (
        b"[^",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\\", b"]", b"^", b"_", b"`", b"a", b"b", b"x", b"z",
            b"\x80", b"\xff",
        ],
    ),
    (b"[]", &[]),
    (
        b"[^]",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\\", b"]", b"^", b"_", b"`", b"a", b"b", b"x", b"z",
            b"\x80", b"\xff",
        ],
    ),
    (b"[a-]", &[b"]", b"^", b"_", b"`", b"a"]),
    (b"[z-a]", &[b"a", b"b", b"x", b"z"]),
    (b"[a-c", &[b"a", b"b"]),
    (b"\\", &[b"\\"]),
    (b"a\\", &[b"a\\"]),
    (b"[\\]", &[b"]"]),
    (b"[\\", &[b"\\"]),
    (b"[a\\-z]", &[b"-", b"a", b"z"]),
    (b"[-a]", &[b"-", b"a"]),
    (
        b"[a-\xff]",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\\", b"]", b"^", b"_", b"`", b"a", b"\xff",
        ],
    ),
    (b"[\x80-\xff]", &[b"\x80", b"\xff"]),
    (
        b"[^a]",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\\", b"]", b"^", b"_", b"`", b"b", b"x", b"z", b"\x80",
            b"\xff",
        ],
    ),
    (
        b"?*",
        &[
            b"*", b"-", b"?", b"A", b"[", b"[a", b"\\", b"]", b"^", b"_", b"`", b"a", b"a-",
            b"a\\", b"ab", b"abc", b"b", b"x", b"z", b"\x80", b"\xff",
        ],
    ),
    (
        b"*?",
        &[
            b"*", b"-", b"?", b"A", b"[", b"[a", b"\\", b"]", b"^", b"_", b"`", b"a", b"a-",
            b"a\\", b"ab", b"abc", b"b", b"x", b"z", b"\x80", b"\xff",
        ],
    ),
    (b"a*", &[b"a", b"a-", b"a\\", b"ab", b"abc"]),
    (b"[]]", &[]),
    (b"[]a]", &[]),
    (b"[!a]", &[b"a"]),
    (b"\\*", &[b"*"]),
    (b"\\?", &[b"?"]),
    (b"[*]", &[b"*"]),
    (b"a[", &[]),
    (b"a[b", &[b"ab"]),
    (b"[a-]]", &[b"]", b"^", b"_", b"`", b"a"]),
];

#[test]
fn keys_match_what_redis_7_0_15_answers() {
    for (pattern, expected) in REDIS_KEYS {
        let mut got: Vec<&[u8]> = KEYS
            .iter()
            .copied()
            .filter(|k| matches(pattern, k, false))
            .collect();
        got.sort();
        assert_eq!(
            &got,
            expected,
            "pattern {:?}",
            String::from_utf8_lossy(pattern)
        );
    }
}

#[test]
fn empty_string_matches_only_the_empty_pattern() {
    assert!(matches(b"", b"", false));
    assert!(!matches(b"*", b"", false));
    assert!(!matches(b"**", b"", false));
    assert!(!matches(b"", b"a", false));
    // A `*` after the last byte is fine: only a string empty from the start is special.
    assert!(matches(b"a*", b"a", false));
    assert!(matches(b"a**", b"a", false));
}

#[test]
fn nocase_folds_ascii_letters_only() {
    assert!(matches(b"MaxMemory*", b"maxmemory-policy", true));
    assert!(!matches(b"MaxMemory*", b"maxmemory-policy", false));
    assert!(matches(b"[A-C]x", b"bX", true));
    assert!(matches(b"M?LIB", b"MyLib", true));
    assert!(!matches(b"\xc9", b"\xe9", true));
    // The bounds are swapped before folding, as Redis does: `Z`..`a` folds to `z`..`a`.
    assert!(!matches(b"[Z-a]", b"b", true));
    assert!(matches(b"[Z-a]", b"_", false));
    // An escaped byte inside a class compares exactly.
    assert!(!matches(b"[\\A]", b"a", true));
    assert!(matches(b"\\A", b"a", true));
}

#[test]
fn stars_backtrack_and_anchor() {
    assert!(matches(b"user:*:name", b"user:1:name", false));
    assert!(matches(b"*a*b*c", b"xxaxxbxxc", false));
    assert!(!matches(b"*a*b*c", b"xxaxxbxxcd", false));
    assert!(matches(b"*ab", b"aab", false));
    assert!(matches(b"a*b?d", b"abbbcd", false));
    assert!(!matches(b"a", b"ab", false));
    assert!(matches(b"*\\*", b"x*", false));
}

#[test]
fn nesting_stops_after_1000_star_groups_as_in_redis() {
    // Measured on redis-server 7.0.15 with KEYS: n groups of `a*` then `b` against n+1 `a`s
    // and a `b` match up to n = 1000 and not beyond; a final `*` is never counted.
    for (n, expected) in [(999, true), (1000, true), (1001, false), (5000, false)] {
        let pattern = [b"a*".repeat(n), b"b".to_vec()].concat();
        let key = [b"a".repeat(n + 1), b"b".to_vec()].concat();
        assert_eq!(matches(&pattern, &key, false), expected, "{n} groups");
    }
    assert!(matches(&b"a*".repeat(1001), &b"a".repeat(1002), false));
}

#[test]
fn pathological_patterns_are_linear_not_exponential() {
    // Each would take longer than the age of the universe with naive backtracking.
    let key = b"a".repeat(30);
    assert!(!matches(
        &[b"a*".repeat(20), b"b".to_vec()].concat(),
        &key,
        false
    ));
    assert!(!matches(
        &[b"*?".repeat(12), b"x".to_vec()].concat(),
        b"active-defrag-cycle-maximum",
        true
    ));
    let long = b"a".repeat(100_000);
    assert!(!matches(
        &[b"*a".repeat(500), b"b".to_vec()].concat(),
        &long,
        false
    ));
    // A million `*` groups: no recursion, so no stack to run out of.
    assert!(!matches(&b"*a".repeat(1_000_000), &long, false));
}

/// A plain exhaustive backtracker with Redis's element rules: tries every split for every
/// `*`, never stops early. Slow, but obviously right for small inputs, so the fast matcher
/// (and the early stop Redis added in 7.0.9) is checked against it.
fn reference(p: &[u8], s: &[u8], nocase: bool, top: bool) -> bool {
    if top && s.is_empty() {
        return p.is_empty();
    }
    if p.is_empty() {
        return s.is_empty();
    }
    if s.is_empty() {
        return p.iter().all(|&c| c == b'*');
    }
    if p[0] == b'*' {
        let rest = &p[p.iter().take_while(|&&c| c == b'*').count()..];
        if rest.is_empty() {
            return true;
        }
        return (0..s.len()).any(|i| reference(rest, &s[i..], nocase, false));
    }
    match step(p, 0, s[0], nocase) {
        Some(next) => reference(&p[next..], &s[1..], nocase, false),
        None => false,
    }
}

#[test]
fn agrees_with_an_exhaustive_backtracker_on_random_inputs() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    const PATTERN_BYTES: &[u8] = b"ab*?*[]^-\\A";
    const STRING_BYTES: &[u8] = b"abA-]^\\*";
    for _ in 0..300_000 {
        let p: Vec<u8> = (0..next(9))
            .map(|_| PATTERN_BYTES[next(PATTERN_BYTES.len())])
            .collect();
        let s: Vec<u8> = (0..next(8))
            .map(|_| STRING_BYTES[next(STRING_BYTES.len())])
            .collect();
        let nocase = next(2) == 1;
        assert_eq!(
            matches(&p, &s, nocase),
            reference(&p, &s, nocase, true),
            "pattern {:?} string {:?} nocase {nocase}",
            String::from_utf8_lossy(&p),
            String::from_utf8_lossy(&s)
        );
    }
}
