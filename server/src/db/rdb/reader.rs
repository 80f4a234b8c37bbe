//! A bounds-checked cursor over an RDB body: every read returns None past the end, so a
//! corrupt payload becomes "Bad data format" and never a panic or a huge allocation.

use super::lzf;
use crate::numfmt;

pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// How many bytes are left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// A length, or the special-encoding marker: Ok(len) / Err(encoding kind).
    fn len_or_enc(&mut self) -> Option<Result<u64, u8>> {
        let b = self.byte()?;
        Some(match b >> 6 {
            0 => Ok((b & 0x3f) as u64),
            1 => Ok((((b & 0x3f) as u64) << 8) | self.byte()? as u64),
            2 => match b {
                0x80 => Ok(u32::from_be_bytes(self.take(4)?.try_into().ok()?) as u64),
                0x81 => Ok(u64::from_be_bytes(self.take(8)?.try_into().ok()?)),
                _ => return None,
            },
            _ => Err(b & 0x3f),
        })
    }

    /// A plain length; bounded by the bytes left so a count can never over-allocate.
    pub fn len(&mut self) -> Option<usize> {
        let n = self.len_or_enc()?.ok()?;
        if n > (self.buf.len() - self.pos) as u64 {
            return None;
        }
        Some(n as usize)
    }

    /// A length field holding any 64-bit number (stream IDs, counters, times).
    pub fn u64_len(&mut self) -> Option<u64> {
        self.len_or_enc()?.ok()
    }

    pub fn string(&mut self) -> Option<Vec<u8>> {
        match self.len_or_enc()? {
            Ok(n) => Some(self.take(usize::try_from(n).ok()?)?.to_vec()),
            Err(0) => Some(itoa_vec(self.byte()? as i8 as i64)),
            Err(1) => Some(itoa_vec(
                i16::from_le_bytes(self.take(2)?.try_into().ok()?) as i64
            )),
            Err(2) => Some(itoa_vec(
                i32::from_le_bytes(self.take(4)?.try_into().ok()?) as i64
            )),
            Err(3) => {
                let clen = self.len_or_enc()?.ok()?;
                let len = self.len_or_enc()?.ok()?;
                let c = self.take(usize::try_from(clen).ok()?)?;
                // LZF expands at most ~ 8 + 264/3 times; refuse lengths no stream can reach.
                if len > (c.len() as u64).saturating_mul(100) + 64 {
                    return None;
                }
                lzf::decompress(c, len as usize)
            }
            Err(_) => None,
        }
    }

    pub fn binary_double(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// The old ZSET score form: a length byte (253 nan, 254 +inf, 255 -inf) then ASCII.
    pub fn text_double(&mut self) -> Option<f64> {
        let n = self.byte()?;
        match n {
            253 => Some(f64::NAN),
            254 => Some(f64::INFINITY),
            255 => Some(f64::NEG_INFINITY),
            _ => numfmt::parse_f64(self.take(n as usize)?),
        }
    }
}

fn itoa_vec(v: i64) -> Vec<u8> {
    itoa::Buffer::new().format(v).as_bytes().to_vec()
}
