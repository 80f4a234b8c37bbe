//! Redis's glob matching (`stringmatchlen` of Redis 7.0.15), the one matcher behind KEYS, the
//! SCAN family's MATCH, pub/sub patterns, CONFIG GET, COMMAND LIST, FUNCTION LIST and fault rules.
//!
//! Redis matches recursively, one frame per `*`, and since 7.0.9 stops as soon as the part
//! after the innermost `*` has failed at every remaining position (nothing an earlier `*`
//! could swallow would help it). That rule is exactly the classic iterative matcher that only
//! ever backtracks to the latest `*`, so this one keeps a single resume point instead of a
//! stack: O(pattern × string) time, constant space, and no recursion whatever the pattern.
//!
//! Redis's quirks are kept on purpose, since a test user compares against them:
//! - an empty string matches only the empty pattern (`*` included: the loop never starts);
//! - after 1000 `*` groups the match fails (Redis's nesting guard), unless that `*` ends
//!   the pattern;
//! - `[` without `]` runs to the end of the pattern; `[]` matches nothing, `[^]` anything;
//! - in a class, `x-y` is a range even when `y` is the closing `]` (`[a-]` is `]`..`a`),
//!   reversed ranges are swapped, and bounds compare as C's signed `char` (so `[a-\xff]`
//!   holds `\xff`, which is -1, and not `\x80`);
//! - `\` escapes the next byte (compared exactly, even under nocase, inside a class); a
//!   trailing `\` is a literal backslash;
//! - nocase folds ASCII letters only.

/// Redis gives up on a pattern nested deeper than this many `*` groups.
const MAX_STAR_GROUPS: usize = 1000;

/// Whether `string` matches the glob `pattern`, as Redis's `stringmatchlen` decides.
pub fn matches(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    let (plen, slen) = (pattern.len(), string.len());
    let (mut p, mut s) = (0usize, 0usize);
    // The pattern index just after the latest `*`, and where in the string that `*` stops.
    let mut resume: Option<(usize, usize)> = None;
    let mut star_groups = 0usize;
    loop {
        let mut failed = false;
        while p < plen && s < slen {
            if pattern[p] == b'*' {
                while p + 1 < plen && pattern[p + 1] == b'*' {
                    p += 1;
                }
                if p + 1 == plen {
                    return true;
                }
                star_groups += 1;
                if star_groups > MAX_STAR_GROUPS {
                    return false;
                }
                p += 1;
                resume = Some((p, s));
                continue;
            }
            match step(pattern, p, string[s], nocase) {
                Some(next) => {
                    p = next;
                    s += 1;
                }
                None => {
                    failed = true;
                    break;
                }
            }
            if s == slen {
                while p < plen && pattern[p] == b'*' {
                    p += 1;
                }
                break;
            }
        }
        if !failed && p == plen && s == slen {
            return true;
        }
        // Let the latest `*` swallow one more byte; once it has tried every position that
        // leaves a non-empty rest, no earlier `*` can help either.
        match resume {
            Some((rp, rs)) if rs + 1 < slen => {
                resume = Some((rp, rs + 1));
                p = rp;
                s = rs + 1;
            }
            _ => return false,
        }
    }
}

/// Matches the one pattern element at `p` (not a `*`) against `c`; returns the index of the
/// next element, or None on a mismatch.
fn step(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> Option<usize> {
    let plen = pattern.len();
    match pattern[p] {
        b'?' => {}
        b'[' => {
            p += 1;
            let not = p < plen && pattern[p] == b'^';
            if not {
                p += 1;
            }
            let mut hit = false;
            loop {
                if p < plen && pattern[p] == b'\\' && plen - p >= 2 {
                    p += 1;
                    hit |= pattern[p] == c;
                } else if p < plen && pattern[p] == b']' {
                    break;
                } else if p == plen {
                    // No closing bracket: the class ends with the pattern.
                    p -= 1;
                    break;
                } else if plen - p >= 3 && pattern[p + 1] == b'-' {
                    hit |= in_range(pattern[p], pattern[p + 2], c, nocase);
                    p += 2;
                } else {
                    hit |= same(pattern[p], c, nocase);
                }
                p += 1;
            }
            if hit == not {
                return None;
            }
        }
        b'\\' if plen - p >= 2 => {
            p += 1;
            if !same(pattern[p], c, nocase) {
                return None;
            }
        }
        b => {
            if !same(b, c, nocase) {
                return None;
            }
        }
    }
    Some(p + 1)
}

fn same(a: u8, b: u8, nocase: bool) -> bool {
    a == b || (nocase && a.eq_ignore_ascii_case(&b))
}

/// A class range as Redis compares it: bytes as C's signed `char`, bounds swapped if reversed,
/// and only then folded under nocase (so `[Z-a]` is empty under nocase: `z`..`a`).
fn in_range(a: u8, b: u8, c: u8, nocase: bool) -> bool {
    let (a, b, c) = (a as i8, b as i8, c as i8);
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let fold = |x: i8| {
        if nocase {
            (x as u8).to_ascii_lowercase() as i8
        } else {
            x
        }
    };
    let (lo, hi, c) = (fold(lo), fold(hi), fold(c));
    lo <= c && c <= hi
}

#[cfg(test)]
mod tests;
