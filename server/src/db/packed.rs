//! Byte strings packed one after another in a single heap buffer, each behind its length.
//!
//! Why: a small hash, set or sorted set held as separate heap strings inside a hash table
//! costs several times what Redis's listpacks and intsets cost (issue 17: memory per key at
//! most Redis's). Packed, ten short fields take one allocation of about their own size. The
//! buffer is a `Box<[u8]>` sized exactly (16 bytes in the value, no spare capacity), grown by
//! one reallocation per change, as Redis reallocates a listpack; lookups scan it, which is
//! what Redis does too, and the owners keep it short (the `*-max-*` limits).
//!
//! A length is LEB128: one byte below 128, so a short item costs one byte more than itself.

/// Appends `n` as LEB128.
pub fn push_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The bytes `push_item` appends for an item of `n` bytes.
pub fn item_size(n: usize) -> usize {
    let mut prefix = 1;
    let mut rest = n >> 7;
    while rest > 0 {
        prefix += 1;
        rest >>= 7;
    }
    prefix + n
}

/// Appends one item: its length, then its bytes.
pub fn push_item(out: &mut Vec<u8>, item: &[u8]) {
    push_len(out, item.len());
    out.extend_from_slice(item);
}

/// Reads the item at `pos`; returns it and the position after it. The buffer is only ever
/// written by `push_item`, so it is well formed.
pub fn read_item(buf: &[u8], pos: usize) -> (&[u8], usize) {
    let mut n = 0usize;
    let mut shift = 0;
    let mut p = pos;
    loop {
        let b = buf[p];
        p += 1;
        n |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    (&buf[p..p + n], p + n)
}

/// The items of a buffer, in order, each with its start position.
#[derive(Clone)]
pub struct Items<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Items<'a> {
    pub fn new(buf: &'a [u8]) -> Items<'a> {
        Items { buf, pos: 0 }
    }

    /// Where the next item starts.
    pub fn pos(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let (item, next) = read_item(self.buf, self.pos);
        self.pos = next;
        Some(item)
    }
}

/// Replaces bytes `range` of `buf` with `with`, reallocating to the exact new size.
pub fn splice(buf: &mut Box<[u8]>, range: std::ops::Range<usize>, with: &[u8]) {
    let mut v = Vec::with_capacity(buf.len() - range.len() + with.len());
    v.extend_from_slice(&buf[..range.start]);
    v.extend_from_slice(with);
    v.extend_from_slice(&buf[range.end..]);
    *buf = v.into_boxed_slice();
}

/// Appends `with` to `buf`, reallocating to the exact new size.
pub fn append(buf: &mut Box<[u8]>, with: &[u8]) {
    let end = buf.len();
    let mut v = std::mem::take(buf).into_vec();
    v.reserve_exact(with.len());
    v.extend_from_slice(with);
    debug_assert_eq!(v.len(), end + with.len());
    *buf = v.into_boxed_slice();
}

/// The heap bytes an exactly sized buffer of `n` bytes occupies, allocator overhead included
/// (a 16-byte size class and an 8-byte header, as glibc's malloc), for used_memory.
pub fn heap_size(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        (n + 8 + 15) & !15
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_round_trip_with_long_lengths() {
        let items: Vec<Vec<u8>> = [0usize, 1, 127, 128, 300, 20_000]
            .iter()
            .map(|&n| vec![b'x'; n])
            .collect();
        let mut out = Vec::new();
        for it in &items {
            push_item(&mut out, it);
        }
        let expected: usize = items.iter().map(|i| item_size(i.len())).sum();
        assert_eq!(out.len(), expected);
        let back: Vec<&[u8]> = Items::new(&out).collect();
        assert_eq!(back.len(), items.len());
        for (a, b) in back.iter().zip(&items) {
            assert_eq!(*a, &b[..]);
        }
    }

    #[test]
    fn splice_and_append_size_exactly() {
        let mut b: Box<[u8]> = Box::new([1, 2, 3, 4]);
        splice(&mut b, 1..3, &[9]);
        assert_eq!(&*b, &[1, 9, 4]);
        append(&mut b, &[7, 7]);
        assert_eq!(&*b, &[1, 9, 4, 7, 7]);
    }
}
