//! `Key`: a key as the keyspace stores it. Keys of up to 22 bytes (nearly all real keys:
//! `user:1234`, `lock:order:42`) live inside the hash table's slot itself, so comparing a
//! probed slot with the key looked up reads no other memory; longer keys are boxed.
//!
//! Why: with 100k keys the table is larger than the CPU caches, and a lookup that must follow
//! a pointer to the key's bytes pays a second cache miss on top of the slot's own.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

/// The longest key kept inline: 22 bytes, a length byte and the enum's tag make 24.
const INLINE_MAX: usize = 22;

/// 24 bytes, like the `Vec<u8>` it replaces.
#[derive(Clone)]
pub enum Key {
    Inline { len: u8, bytes: [u8; INLINE_MAX] },
    Heap(Box<[u8]>),
}

impl Key {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..*len as usize],
            Key::Heap(b) => b,
        }
    }
}

impl From<&[u8]> for Key {
    fn from(k: &[u8]) -> Key {
        if k.len() <= INLINE_MAX {
            let mut bytes = [0u8; INLINE_MAX];
            bytes[..k.len()].copy_from_slice(k);
            Key::Inline {
                len: k.len() as u8,
                bytes,
            }
        } else {
            Key::Heap(k.into())
        }
    }
}

impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Hashes exactly as the `[u8]` it holds, so lookups by `&[u8]` find it.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Key {}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn inline_and_heap_keys_hash_and_compare_as_their_bytes() {
        let s = foldhash::fast::FixedState::with_seed(7);
        for len in [0, 1, 16, 21, 22, 23, 24, 100] {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let k = Key::from(&bytes[..]);
            assert_eq!(k.as_bytes(), &bytes[..]);
            assert_eq!(s.hash_one(&k), s.hash_one(&bytes[..]), "len {len}");
            assert_eq!(matches!(k, Key::Inline { .. }), len <= INLINE_MAX);
        }
        assert_eq!(std::mem::size_of::<Key>(), 24);
    }
}
