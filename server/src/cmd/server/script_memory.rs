//! INFO memory's `used_memory_scripts_eval`, as Redis 7.0.15 counts it.
//!
//! Redis adds up, per cached script, the allocator's size for the SHA1 string, for the body
//! string (an embedded string object up to 44 bytes, a plain one beyond) and for the dict
//! entry and script record; and on top, the buckets of the scripts dict. Sizes are jemalloc's
//! size classes, so the figure moves in the same steps as Redis's. The one thing not modelled
//! is the short window of an incremental rehash, when Redis holds the old bucket table too:
//! that window depends on Redis's random hash seed, so Redis itself does not repeat it.

/// The size jemalloc hands out for a request of `n` bytes (its small and large classes:
/// 8, then steps of 16 up to 128, then four classes per doubling).
pub fn jemalloc_class(n: u64) -> u64 {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return n.div_ceil(16) * 16;
    }
    let k = 63 - (n - 1).leading_zeros() as u64; // 2^k < n <= 2^(k+1)
    let spacing = 1u64 << (k - 2);
    n.div_ceil(spacing) * spacing
}

/// The header of an sds string of `len` bytes (sdsReqType: 8, 16 or 32 bit lengths).
fn sds_header(len: u64) -> u64 {
    match len {
        0..=255 => 3,
        256..=65535 => 5,
        _ => 9,
    }
}

/// What one script of `body_len` bytes adds: its SHA1 string, its body, the dict entry (24
/// bytes) and the script record (16 bytes).
fn per_script(body_len: u64) -> u64 {
    const ROBJ: u64 = 16;
    const EMBSTR_MAX: u64 = 44;
    let sha = jemalloc_class(sds_header(40) + 40 + 1);
    let body = if body_len <= EMBSTR_MAX {
        jemalloc_class(ROBJ + 3 + body_len + 1) - ROBJ
    } else {
        jemalloc_class(sds_header(body_len) + body_len + 1)
    };
    sha + body + 24 + 16
}

/// The bucket table of a Redis dict holding `n` entries: none when empty, 4 slots at first,
/// doubled when an insert finds it full.
fn dict_buckets(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut size = 4u64;
    while size < n {
        size *= 2;
    }
    size * 8
}

/// `used_memory_scripts_eval` for cached scripts with these body lengths.
pub fn eval_scripts(bodies: impl Iterator<Item = usize>) -> u64 {
    let (mut n, mut sum) = (0u64, 0u64);
    for len in bodies {
        n += 1;
        sum += per_script(len as u64);
    }
    sum + dict_buckets(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures read from redis-server 7.0.15 (INFO memory after SCRIPT LOAD).
    #[test]
    fn matches_redis_figures() {
        for (len, want) in [
            (1, 136),
            (8, 136),
            (13, 152),
            (29, 168),
            (44, 168),
            (45, 184),
            (61, 200),
            (108, 232),
            (120, 248),
        ] {
            assert_eq!(eval_scripts([len].into_iter()), want, "body of {len} bytes");
        }
        // Twenty scripts `return 101` .. `return 120` once the rehash is over.
        assert_eq!(eval_scripts(std::iter::repeat_n(10, 4)), 448);
        assert_eq!(eval_scripts(std::iter::repeat_n(10, 8)), 896);
        assert_eq!(eval_scripts(std::iter::repeat_n(10, 12)), 1376);
        assert_eq!(eval_scripts(std::iter::empty()), 0);
    }

    #[test]
    fn size_classes() {
        assert_eq!(jemalloc_class(129), 160);
        assert_eq!(jemalloc_class(256), 256);
        assert_eq!(jemalloc_class(10014), 10240);
    }
}
