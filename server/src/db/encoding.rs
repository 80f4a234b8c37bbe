//! The encodings OBJECT ENCODING reports, and the limits that choose them, as Redis 7.0
//! decides them (and Redis 7.2+ for sets, under those profiles). Hashes, sets and sorted sets
//! hold their encoding in their representation (db/hash.rs, db/set.rs, db/zset_value.rs), so
//! it keeps its past as Redis's does: a hashtable or a skiplist never becomes a listpack or
//! an intset again. For the other types the encoding is derived from the value's current
//! contents and the `*-max-*` settings, so it is what Redis reports for a value built by
//! additions; where Redis's answer depends on a string's past, the entry remembers it:
//! strings edited in place stay `raw` (`Entry::raw`, `of_entry`).

use crate::compat::since::SET_LISTPACK;
use crate::config::Config;
use crate::numfmt;

use super::Value;

/// Longest string Redis stores as `embstr` (OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
pub const EMBSTR_LIMIT: usize = 44;
/// Integers 0..10000 are shared objects (OBJ_SHARED_INTEGERS).
pub const SHARED_INTEGERS: i64 = 10000;
/// The refcount OBJECT REFCOUNT shows for a shared object (INT_MAX).
pub const SHARED_REFCOUNT: i64 = i32::MAX as i64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Int,
    Embstr,
    Raw,
    Listpack,
    Quicklist,
    Hashtable,
    Intset,
    Skiplist,
    Stream,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Int => "int",
            Encoding::Embstr => "embstr",
            Encoding::Raw => "raw",
            Encoding::Listpack => "listpack",
            Encoding::Quicklist => "quicklist",
            Encoding::Hashtable => "hashtable",
            Encoding::Intset => "intset",
            Encoding::Stream => "stream",
            Encoding::Skiplist => "skiplist",
        }
    }
}

/// The `*-max-*` settings that bound the compact encodings.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub hash_max_listpack_entries: usize,
    pub hash_max_listpack_value: usize,
    pub set_max_intset_entries: usize,
    /// set-max-listpack-entries and -value (Redis 7.2+ and Valkey; Redis 7.0 has no
    /// listpack sets, and redlab packs its small sets within the defaults, see db/set.rs).
    pub set_max_listpack_entries: usize,
    pub set_max_listpack_value: usize,
    /// Whether the profile reports listpack sets (Redis 7.2+ and Valkey 7.2+); Redis 7.0
    /// calls them hashtables.
    pub set_listpack: bool,
    pub zset_max_listpack_entries: usize,
    pub zset_max_listpack_value: usize,
    /// list-max-listpack-size: negative is a byte limit per node (-1 = 4k .. -5 = 64k),
    /// positive an entry count.
    pub list_max_listpack_size: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            set_max_intset_entries: 512,
            set_max_listpack_entries: 128,
            set_max_listpack_value: 64,
            set_listpack: false,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            list_max_listpack_size: -2,
        }
    }
}

impl Limits {
    /// No limit at all: a value built with these stays in its compact form.
    pub fn unbounded() -> Limits {
        Limits {
            hash_max_listpack_entries: usize::MAX,
            hash_max_listpack_value: usize::MAX,
            set_max_intset_entries: usize::MAX,
            set_max_listpack_entries: usize::MAX,
            set_max_listpack_value: usize::MAX,
            set_listpack: false,
            zset_max_listpack_entries: usize::MAX,
            zset_max_listpack_value: usize::MAX,
            list_max_listpack_size: i64::MAX,
        }
    }

    /// Reads the settings from CONFIG SET values (either the 7.0 name or its ziplist alias).
    pub fn from_config(c: &Config) -> Limits {
        let d = Limits::default();
        let get = |names: &[&str], default: i64| -> i64 {
            names
                .iter()
                .find_map(|n| c.extra.get(*n))
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or(default)
        };
        let size = |names: &[&str], default: usize| get(names, default as i64).max(0) as usize;
        Limits {
            hash_max_listpack_entries: size(
                &["hash-max-listpack-entries", "hash-max-ziplist-entries"],
                d.hash_max_listpack_entries,
            ),
            hash_max_listpack_value: size(
                &["hash-max-listpack-value", "hash-max-ziplist-value"],
                d.hash_max_listpack_value,
            ),
            set_max_intset_entries: size(&["set-max-intset-entries"], d.set_max_intset_entries),
            // Only a 7.2+ profile has these parameters (config/params.rs), so under 7.0 they
            // keep their defaults.
            set_max_listpack_entries: size(
                &["set-max-listpack-entries"],
                d.set_max_listpack_entries,
            ),
            set_max_listpack_value: size(&["set-max-listpack-value"], d.set_max_listpack_value),
            set_listpack: c.compat.has(SET_LISTPACK),
            zset_max_listpack_entries: size(
                &["zset-max-listpack-entries", "zset-max-ziplist-entries"],
                d.zset_max_listpack_entries,
            ),
            zset_max_listpack_value: size(
                &["zset-max-listpack-value", "zset-max-ziplist-value"],
                d.zset_max_listpack_value,
            ),
            list_max_listpack_size: get(
                &["list-max-listpack-size", "list-max-ziplist-size"],
                d.list_max_listpack_size,
            ),
        }
    }
}

/// A string Redis would hold as an integer object (`tryObjectEncoding`).
pub fn string_as_int(s: &[u8]) -> Option<i64> {
    if s.len() > 20 {
        return None;
    }
    numfmt::parse_i64(s)
}

pub fn string_encoding(s: &[u8]) -> Encoding {
    if string_as_int(s).is_some() {
        Encoding::Int
    } else if s.len() <= EMBSTR_LIMIT {
        Encoding::Embstr
    } else {
        Encoding::Raw
    }
}

/// The encoding Redis 7.0 reports for a stored entry: its value's, unless the value went to
/// its non-compact encoding earlier and stays there (`Entry::raw`).
pub fn of_entry(entry: &super::Entry, l: &Limits) -> Encoding {
    match &entry.value {
        Value::Str(_) if entry.raw => Encoding::Raw,
        v => of(v, l),
    }
}

/// The encoding of `v`: its representation's for hashes, sets and sorted sets, else the one Redis
/// 7.0 derives from the contents.
pub fn of(v: &Value, l: &Limits) -> Encoding {
    match v {
        Value::Str(s) => string_encoding(s),
        // Redis 7.0 always holds lists in a quicklist (listpack lists came with 7.2).
        Value::List(_) => Encoding::Quicklist,
        Value::Stream(_) => Encoding::Stream,
        // The representation is the encoding (db/hash.rs).
        Value::Hash(h) if h.is_listpack() => Encoding::Listpack,
        Value::Hash(_) => Encoding::Hashtable,
        // The representation is the encoding (db/set.rs).
        Value::Set(s) => s.encoding(l),
        // The representation is the encoding (db/zset_value.rs).
        Value::ZSet(z) if z.is_listpack() => Encoding::Listpack,
        Value::ZSet(_) => Encoding::Skiplist,
    }
}

/// OBJECT REFCOUNT: small integers are shared objects unless maxmemory evicts by LRU/LFU.
pub fn refcount(v: &Value, c: &Config) -> i64 {
    if let Value::Str(s) = v {
        let shares = c.maxmemory == 0
            || !(c.maxmemory_policy.contains("lru") || c.maxmemory_policy.contains("lfu"));
        if shares && string_as_int(s).is_some_and(|n| (0..SHARED_INTEGERS).contains(&n)) {
            return SHARED_REFCOUNT;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{HashValue, SetValue, ZSet};

    #[test]
    fn strings() {
        assert_eq!(string_encoding(b"12345"), Encoding::Int);
        assert_eq!(string_encoding(b"-9223372036854775808"), Encoding::Int);
        assert_eq!(string_encoding(b"9223372036854775808"), Encoding::Embstr);
        assert_eq!(string_encoding(b"012"), Encoding::Embstr);
        assert_eq!(string_encoding(&[b'a'; 44]), Encoding::Embstr);
        assert_eq!(string_encoding(&[b'a'; 45]), Encoding::Raw);
    }

    #[test]
    fn collections_follow_the_limits() {
        let l = Limits::default();
        let mut h = HashValue::default();
        for i in 0..512 {
            h.set(format!("f{i}").as_bytes(), b"v", &l);
        }
        assert_eq!(of(&Value::Hash(h.clone()), &l), Encoding::Listpack);
        h.set(b"one-more", b"v", &l);
        assert_eq!(of(&Value::Hash(h), &l), Encoding::Hashtable);

        let mut s = SetValue::default();
        s.insert(b"1", &l);
        assert_eq!(of(&Value::Set(s.clone()), &l), Encoding::Intset);
        s.insert(b"a", &l);
        assert_eq!(of(&Value::Set(s), &l), Encoding::Hashtable);

        let mut z = ZSet::new();
        z.insert(b"m", 1.0, &l);
        assert_eq!(of(&Value::ZSet(z.clone()), &l), Encoding::Listpack);
        z.insert(&[b'x'; 65], 2.0, &l);
        assert_eq!(of(&Value::ZSet(z), &l), Encoding::Skiplist);
    }
}
