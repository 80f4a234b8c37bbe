//! Listpack, Redis 7's compact encoding of small hashes, sorted sets and list nodes. DUMP
//! stores it byte for byte as Redis holds it in memory, so the writer follows Redis's
//! choices exactly: integers in the smallest integer form, strings in the smallest string
//! form, each entry followed by its back-length.

use crate::numfmt;

pub const EOF: u8 = 0xff;
const HEADER: usize = 6;

/// Builds a listpack entry by entry.
pub struct Writer {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Writer {
    fn default() -> Self {
        Writer::new()
    }
}

impl Writer {
    pub fn new() -> Writer {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&[0; HEADER]);
        Writer { buf, count: 0 }
    }

    /// Size the finished listpack would have (what quicklist compares with its node limit).
    pub fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    pub fn len(&self) -> usize {
        self.count
    }

    /// Appends an element; as `lpAppend`, a string that is a canonical integer is stored as one.
    pub fn push(&mut self, s: &[u8]) {
        push_str(&mut self.buf, s);
        self.count += 1;
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        let n = if self.count < 65535 {
            self.count as u16
        } else {
            65535
        };
        self.buf[4..6].copy_from_slice(&n.to_le_bytes());
        self.buf
    }
}

/// Appends one integer element with its back-length: the one listpack element encoder, for
/// RDB payloads and for the stream nodes that keep Redis's listpack bytes.
pub fn push_int(out: &mut Vec<u8>, v: i64) {
    let start = out.len();
    encode_int(out, v);
    encode_backlen(out, (out.len() - start) as u64);
}

/// Appends one string element with its back-length; as `lpAppend`, a string that is a
/// canonical integer is stored as one.
pub fn push_str(out: &mut Vec<u8>, s: &[u8]) {
    if let Some(v) = numfmt::parse_i64(s) {
        return push_int(out, v);
    }
    let start = out.len();
    encode_str(out, s);
    encode_backlen(out, (out.len() - start) as u64);
}

fn encode_int(out: &mut Vec<u8>, v: i64) {
    if (0..=127).contains(&v) {
        out.push(v as u8);
    } else if (-4096..=4095).contains(&v) {
        let u = if v < 0 {
            ((1i64 << 13) + v) as u64
        } else {
            v as u64
        };
        out.push(((u >> 8) as u8) | 0xc0);
        out.push(u as u8);
    } else if (-32768..=32767).contains(&v) {
        out.push(0xf1);
        out.extend_from_slice(&(v as i16).to_le_bytes());
    } else if (-8388608..=8388607).contains(&v) {
        out.push(0xf2);
        out.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
    } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        out.push(0xf3);
        out.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        out.push(0xf4);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn encode_str(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n < 64 {
        out.push(0x80 | n as u8);
    } else if n < 4096 {
        out.push(0xe0 | (n >> 8) as u8);
        out.push(n as u8);
    } else {
        out.push(0xf0);
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    out.extend_from_slice(s);
}

fn encode_backlen(out: &mut Vec<u8>, l: u64) {
    if l <= 127 {
        out.push(l as u8);
    } else if l < 16383 {
        out.push((l >> 7) as u8);
        out.push(((l & 127) | 128) as u8);
    } else if l < 2097151 {
        out.push((l >> 14) as u8);
        out.push((((l >> 7) & 127) | 128) as u8);
        out.push(((l & 127) | 128) as u8);
    } else if l < 268435455 {
        out.push((l >> 21) as u8);
        out.push((((l >> 14) & 127) | 128) as u8);
        out.push((((l >> 7) & 127) | 128) as u8);
        out.push(((l & 127) | 128) as u8);
    } else {
        out.push((l >> 28) as u8);
        out.push((((l >> 21) & 127) | 128) as u8);
        out.push((((l >> 14) & 127) | 128) as u8);
        out.push((((l >> 7) & 127) | 128) as u8);
        out.push(((l & 127) | 128) as u8);
    }
}

/// Bytes the back-length of an element of `l` bytes takes.
pub fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// Reads every element of a listpack (integers as their decimal text); None if malformed.
pub fn parse(lp: &[u8]) -> Option<Vec<Vec<u8>>> {
    if lp.len() < HEADER + 1 {
        return None;
    }
    let total = u32::from_le_bytes(lp[0..4].try_into().ok()?) as usize;
    if total != lp.len() || lp[lp.len() - 1] != EOF {
        return None;
    }
    let declared = u16::from_le_bytes(lp[4..6].try_into().ok()?) as usize;
    let mut out = Vec::new();
    let mut p = HEADER;
    let end = lp.len() - 1;
    while p < end {
        let start = p;
        let b = lp[p];
        let take = |p: usize, n: usize| -> Option<&[u8]> {
            lp.get(p..p.checked_add(n)?).filter(|_| p + n <= end)
        };
        let (value, size): (Vec<u8>, usize) = if b & 0x80 == 0 {
            (int_text((b & 0x7f) as i64), 1)
        } else if b & 0xc0 == 0x80 {
            let n = (b & 0x3f) as usize;
            (take(p + 1, n)?.to_vec(), 1 + n)
        } else if b & 0xe0 == 0xc0 {
            let lo = *take(p + 1, 1)?.first()? as u64;
            let u = (((b & 0x1f) as u64) << 8) | lo;
            let v = if u >= 1 << 12 {
                u as i64 - (1 << 13)
            } else {
                u as i64
            };
            (int_text(v), 2)
        } else if b & 0xf0 == 0xe0 {
            let lo = *take(p + 1, 1)?.first()? as usize;
            let n = (((b & 0x0f) as usize) << 8) | lo;
            (take(p + 2, n)?.to_vec(), 2 + n)
        } else {
            match b {
                0xf0 => {
                    let n = u32::from_le_bytes(take(p + 1, 4)?.try_into().ok()?) as usize;
                    (take(p + 5, n)?.to_vec(), 5 + n)
                }
                0xf1 => (
                    int_text(i16::from_le_bytes(take(p + 1, 2)?.try_into().ok()?) as i64),
                    3,
                ),
                0xf2 => {
                    let t = take(p + 1, 3)?;
                    let v =
                        ((t[0] as i32) | ((t[1] as i32) << 8) | ((t[2] as i32) << 16)) << 8 >> 8;
                    (int_text(v as i64), 4)
                }
                0xf3 => (
                    int_text(i32::from_le_bytes(take(p + 1, 4)?.try_into().ok()?) as i64),
                    5,
                ),
                0xf4 => (
                    int_text(i64::from_le_bytes(take(p + 1, 8)?.try_into().ok()?)),
                    9,
                ),
                _ => return None,
            }
        };
        p = start + size + backlen_size(size);
        if p > end {
            return None;
        }
        out.push(value);
    }
    if declared != 65535 && declared != out.len() {
        return None;
    }
    Some(out)
}

fn int_text(v: i64) -> Vec<u8> {
    itoa::Buffer::new().format(v).as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_encoding() {
        let long = vec![b'x'; 5000];
        let items: Vec<Vec<u8>> = vec![
            b"0".to_vec(),
            b"127".to_vec(),
            b"-1".to_vec(),
            b"4095".to_vec(),
            b"-4096".to_vec(),
            b"30000".to_vec(),
            b"-8000000".to_vec(),
            b"2000000000".to_vec(),
            b"-9223372036854775808".to_vec(),
            b"abc".to_vec(),
            vec![b'y'; 100],
            long,
            b"007".to_vec(),
        ];
        let mut w = Writer::new();
        for i in &items {
            w.push(i);
        }
        let lp = w.finish();
        assert_eq!(parse(&lp).unwrap(), items);
    }
}
