//! `StrValue`: a string value. Up to 22 bytes live inside the keyspace's slot, past that on
//! the heap; Redis's embstr and raw encodings, for the same reason.
//!
//! Why: most values are small (counters, tokens, flags, timestamps). Kept inline, a SET that
//! overwrites one frees nothing and a GET reads no memory beyond the slot, where a heap
//! buffer would cost a cache miss each time once the keyspace outgrows the CPU caches.
//! A value changed in place (APPEND, SETRANGE, SETBIT, INCR's digits) goes to the heap
//! through `make_mut`, and stays there, as Redis's raw strings do.

use std::ops::Deref;

/// The longest value kept inline: 22 bytes, a length byte and the enum's tag make 24, the
/// size of a `Value` (the unused tag values of this enum tell `Value`'s variants apart).
const INLINE_MAX: usize = 22;

/// The heap form is boxed so the whole enum stays 24 bytes (a bare `Vec` is 24 alone).
#[allow(clippy::box_collection)]
#[derive(Clone)]
pub enum StrValue {
    Inline { len: u8, bytes: [u8; INLINE_MAX] },
    Heap(Box<Vec<u8>>),
}

impl StrValue {
    pub fn from_slice(s: &[u8]) -> StrValue {
        if s.len() <= INLINE_MAX {
            let mut bytes = [0u8; INLINE_MAX];
            bytes[..s.len()].copy_from_slice(s);
            StrValue::Inline {
                len: s.len() as u8,
                bytes,
            }
        } else {
            StrValue::Heap(Box::new(s.to_vec()))
        }
    }

    /// The value as a growable buffer, for a change in place; moves an inline value to the heap.
    pub fn make_mut(&mut self) -> &mut Vec<u8> {
        if let StrValue::Inline { len, bytes } = self {
            *self = StrValue::Heap(Box::new(bytes[..*len as usize].to_vec()));
        }
        match self {
            StrValue::Heap(v) => v,
            StrValue::Inline { .. } => unreachable!("moved to the heap above"),
        }
    }

    #[cfg(test)]
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            StrValue::Heap(v) => *v,
            inline => inline.to_vec(),
        }
    }
}

impl From<Vec<u8>> for StrValue {
    fn from(v: Vec<u8>) -> StrValue {
        if v.len() <= INLINE_MAX {
            StrValue::from_slice(&v)
        } else {
            StrValue::Heap(Box::new(v))
        }
    }
}

impl From<&[u8]> for StrValue {
    fn from(s: &[u8]) -> StrValue {
        StrValue::from_slice(s)
    }
}

impl Deref for StrValue {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            StrValue::Inline { len, bytes } => &bytes[..*len as usize],
            StrValue::Heap(v) => v,
        }
    }
}

impl AsRef<[u8]> for StrValue {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq for StrValue {
    fn eq(&self, other: &StrValue) -> bool {
        **self == **other
    }
}

impl Eq for StrValue {}

impl std::fmt::Debug for StrValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_inline_large_on_the_heap_same_bytes() {
        for len in [0, 1, 3, 21, 22, 23, 100] {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let v = StrValue::from_slice(&bytes);
            assert_eq!(&*v, &bytes[..]);
            assert_eq!(matches!(v, StrValue::Inline { .. }), len <= INLINE_MAX);
            assert_eq!(StrValue::from(bytes.clone()), v);
            assert_eq!(v.into_vec(), bytes);
        }
        assert_eq!(std::mem::size_of::<StrValue>(), 24);
        assert_eq!(std::mem::size_of::<crate::db::Value>(), 24);
    }

    #[test]
    fn make_mut_keeps_the_bytes() {
        let mut v = StrValue::from_slice(b"abc");
        v.make_mut().extend_from_slice(b"def");
        assert_eq!(&*v, b"abcdef");
        assert!(matches!(v, StrValue::Heap(_)));
    }
}
