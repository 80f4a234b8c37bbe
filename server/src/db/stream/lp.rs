//! Listpack elements as a stream node holds them: each element is an integer or a string in
//! its smallest encoding, followed by its back-length. A node's entries are kept in exactly
//! the bytes Redis keeps them in, so the node-size limits decide splits as Redis does and a
//! DUMP writes the node as it is.

/// One decoded element: integers stay integers until a reply needs their text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl Elem<'_> {
    /// The element as an integer (stream metadata elements are always integers).
    pub fn int(self) -> Option<i64> {
        match self {
            Elem::Int(v) => Some(v),
            Elem::Str(s) => crate::numfmt::parse_i64(s),
        }
    }

    /// Appends the element's text form (integers in decimal).
    pub fn write_text(self, out: &mut Vec<u8>) {
        match self {
            Elem::Int(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
            Elem::Str(s) => out.extend_from_slice(s),
        }
    }

    pub fn to_vec(self) -> Vec<u8> {
        let mut v = Vec::new();
        self.write_text(&mut v);
        v
    }

    /// Whether the element equals `s` as Redis's `lpCompare` sees it.
    pub fn eq_bytes(self, s: &[u8]) -> bool {
        match self {
            Elem::Str(x) => x == s,
            Elem::Int(v) => crate::numfmt::parse_i64(s) == Some(v),
        }
    }
}

pub use crate::db::rdb::listpack::{backlen_size, push_int, push_str};

/// Bytes an integer element (with back-length) takes.
pub fn int_size(v: i64) -> usize {
    let mut tmp = Vec::with_capacity(10);
    push_int(&mut tmp, v);
    tmp.len()
}

/// Decodes the element at `*pos` of `buf` and moves past it; None if malformed or at the end.
#[inline]
pub fn next<'a>(buf: &'a [u8], pos: &mut usize) -> Option<Elem<'a>> {
    let p = *pos;
    let b = *buf.get(p)?;
    let get = |from: usize, n: usize| buf.get(from..from.checked_add(n)?);
    let (elem, size) = if b & 0x80 == 0 {
        (Elem::Int((b & 0x7f) as i64), 1)
    } else if b & 0xc0 == 0x80 {
        let n = (b & 0x3f) as usize;
        (Elem::Str(get(p + 1, n)?), 1 + n)
    } else if b & 0xe0 == 0xc0 {
        let u = (((b & 0x1f) as i64) << 8) | *buf.get(p + 1)? as i64;
        (Elem::Int(if u >= 4096 { u - 8192 } else { u }), 2)
    } else if b & 0xf0 == 0xe0 {
        let n = (((b & 0x0f) as usize) << 8) | *buf.get(p + 1)? as usize;
        (Elem::Str(get(p + 2, n)?), 2 + n)
    } else {
        match b {
            0xf0 => {
                let n = u32::from_le_bytes(get(p + 1, 4)?.try_into().ok()?) as usize;
                (Elem::Str(get(p + 5, n)?), 5 + n)
            }
            0xf1 => (
                Elem::Int(i16::from_le_bytes(get(p + 1, 2)?.try_into().ok()?) as i64),
                3,
            ),
            0xf2 => {
                let t = get(p + 1, 3)?;
                let v = ((t[0] as i32) | ((t[1] as i32) << 8) | ((t[2] as i32) << 16)) << 8 >> 8;
                (Elem::Int(v as i64), 4)
            }
            0xf3 => (
                Elem::Int(i32::from_le_bytes(get(p + 1, 4)?.try_into().ok()?) as i64),
                5,
            ),
            0xf4 => (
                Elem::Int(i64::from_le_bytes(get(p + 1, 8)?.try_into().ok()?)),
                9,
            ),
            _ => return None,
        }
    };
    let end = p + size + backlen_size(size);
    if end > buf.len() {
        return None;
    }
    *pos = end;
    Some(elem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_round_trip() {
        let long = vec![b'y'; 5000];
        let mid = vec![b'm'; 300];
        let mut buf = Vec::new();
        let ints = [
            0i64,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -32768,
            40000,
            -8_388_608,
            1 << 30,
        ];
        for v in ints {
            push_int(&mut buf, v);
        }
        push_int(&mut buf, i64::MIN);
        push_str(&mut buf, b"abc");
        push_str(&mut buf, b"12");
        push_str(&mut buf, b"012");
        push_str(&mut buf, &mid);
        push_str(&mut buf, &long);
        let mut pos = 0;
        for v in ints {
            assert_eq!(next(&buf, &mut pos), Some(Elem::Int(v)));
        }
        assert_eq!(next(&buf, &mut pos), Some(Elem::Int(i64::MIN)));
        assert_eq!(next(&buf, &mut pos), Some(Elem::Str(b"abc")));
        assert_eq!(next(&buf, &mut pos), Some(Elem::Int(12)));
        assert_eq!(next(&buf, &mut pos), Some(Elem::Str(b"012")));
        assert_eq!(next(&buf, &mut pos), Some(Elem::Str(&mid[..])));
        assert_eq!(next(&buf, &mut pos), Some(Elem::Str(&long[..])));
        assert_eq!(next(&buf, &mut pos), None);
        assert_eq!(pos, buf.len());
    }

    #[test]
    fn truncated_input_is_refused() {
        let mut buf = Vec::new();
        push_str(&mut buf, &[b'z'; 100]);
        for cut in 0..buf.len() {
            let mut pos = 0;
            assert_eq!(next(&buf[..cut], &mut pos), None, "{cut}");
        }
    }
}
