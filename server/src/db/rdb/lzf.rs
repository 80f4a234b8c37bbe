//! LZF, as Redis uses it for strings longer than 20 bytes in RDB/DUMP payloads.
//!
//! The compressor follows liblzf 3.6 as Redis 7.0 ships it (HLOG 16, VERY_FAST) step for
//! step, because DUMP must produce the same bytes as Redis: a different but valid
//! compression would still restore, yet compare unequal. The hash table starts empty here;
//! Redis leaves it uninitialised, which can only ever find fewer matches through stale
//! slots that fail the bounds checks.

const HLOG: u32 = 16;
const HSIZE: usize = 1 << HLOG;
const MAX_LIT: usize = 1 << 5;
const MAX_OFF: usize = 1 << 13;
const MAX_REF: usize = (1 << 8) + (1 << 3);

#[inline]
fn first(p: &[u8], i: usize) -> u32 {
    ((p[i] as u32) << 8) | p[i + 1] as u32
}

#[inline]
fn next(v: u32, p: &[u8], i: usize) -> u32 {
    (v << 8) | p[i + 2] as u32
}

#[inline]
fn idx(h: u32) -> usize {
    ((h >> (3 * 8 - HLOG)).wrapping_sub(h.wrapping_mul(5)) as usize) & (HSIZE - 1)
}

/// The compressor's hash table for one call: slots hold `base + position`; anything not
/// above `base` was written by an earlier call and reads as 0, "empty".
struct Slots<'a> {
    table: &'a mut [u64],
    base: u64,
}

impl Slots<'_> {
    #[inline]
    fn get(&self, slot: usize) -> usize {
        let v = self.table[slot];
        if v > self.base {
            (v - self.base) as usize
        } else {
            0
        }
    }

    #[inline]
    fn set(&mut self, slot: usize, pos: usize) {
        self.table[slot] = self.base + pos as u64;
    }
}

thread_local! {
    /// The table and the base the next call numbers its positions from.
    static TABLE: std::cell::RefCell<(Vec<u64>, u64)> = const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// Compresses `input` into at most `out_len` bytes; None when it does not fit (Redis then
/// stores the string verbatim).
pub fn compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let in_len = input.len();
    if in_len < 3 || out_len == 0 {
        return None;
    }
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let (table, next_base) = &mut *t;
        if table.is_empty() {
            table.resize(HSIZE, 0);
        }
        let base = *next_base;
        // Positions of this call are base+0 .. base+in_len; the next call starts above.
        *next_base = base + in_len as u64 + 1;
        compress_into(input, out_len, &mut Slots { table, base })
    })
}

fn compress_into(input: &[u8], out_len: usize, htab: &mut Slots<'_>) -> Option<Vec<u8>> {
    let in_len = input.len();
    // Slot value 0 means empty: position 0 can never be a reference (`ref > in_data`).
    let mut out = vec![0u8; out_len + 8];
    let in_end = in_len;
    let out_end = out_len;
    let mut ip = 0usize;
    let mut op = 1usize; // start run
    let mut lit = 0usize;

    let mut hval = first(input, ip);
    while ip + 2 < in_end {
        hval = next(hval, input, ip);
        let slot = idx(hval);
        let r = htab.get(slot);
        htab.set(slot, ip);
        if r > 0
            && r < ip
            && ip - r - 1 < MAX_OFF
            && input[r] == input[ip]
            && input[r + 1] == input[ip + 1]
            && input[r + 2] == input[ip + 2]
        {
            let off = ip - r - 1;
            let mut len = 2usize;
            let maxlen = (in_end - ip - len).min(MAX_REF);
            if op + 3 + 1 >= out_end && op - usize::from(lit == 0) + 3 + 1 >= out_end {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1);
            if lit == 0 {
                op -= 1;
            }
            let mut done = false;
            if maxlen > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[r + len] != input[ip + len] {
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                loop {
                    len += 1;
                    if !(len < maxlen && input[r + len] == input[ip + len]) {
                        break;
                    }
                }
            }
            len -= 2;
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1;
            ip += len + 1;
            if ip + 2 >= in_end {
                break;
            }
            ip -= 2;
            hval = first(input, ip);
            hval = next(hval, input, ip);
            htab.set(idx(hval), ip);
            ip += 1;
            hval = next(hval, input, ip);
            htab.set(idx(hval), ip);
            ip += 1;
        } else {
            if op >= out_end {
                return None;
            }
            push_literal(&mut out, &mut op, &mut lit, input[ip]);
            ip += 1;
        }
    }
    if op + 3 > out_end {
        return None;
    }
    while ip < in_end {
        push_literal(&mut out, &mut op, &mut lit, input[ip]);
        ip += 1;
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1);
    if lit == 0 {
        op -= 1;
    }
    out.truncate(op);
    Some(out)
}

/// Appends one byte to the literal run being written at `op`. A run that reaches MAX_LIT
/// gets its length in the byte reserved before it, and a byte is reserved for the next run.
fn push_literal(out: &mut [u8], op: &mut usize, lit: &mut usize, byte: u8) {
    *lit += 1;
    out[*op] = byte;
    *op += 1;
    if *lit == MAX_LIT {
        out[*op - *lit - 1] = (*lit - 1) as u8;
        *lit = 0;
        *op += 1;
    }
}

/// Decompresses into exactly `out_len` bytes; None on a corrupt stream.
pub fn decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(out_len);
    let mut ip = 0usize;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < (1 << 5) {
            let n = ctrl + 1;
            if out.len() + n > out_len || ip + n > input.len() {
                return None;
            }
            out.extend_from_slice(&input[ip..ip + n]);
            ip += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += *input.get(ip)? as usize;
                ip += 1;
            }
            let lo = *input.get(ip)? as usize;
            ip += 1;
            let back = ((ctrl & 0x1f) << 8) + lo + 1;
            let n = len + 2;
            if back > out.len() || out.len() + n > out_len {
                return None;
            }
            let start = out.len() - back;
            for i in 0..n {
                let b = out[start + i];
                out.push(b);
            }
        }
    }
    (out.len() == out_len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let data = b"hello hello hello hello hello world world world world".repeat(7);
        let c = compress(&data, data.len() - 4).expect("compressible");
        assert!(c.len() < data.len());
        assert_eq!(decompress(&c, data.len()).unwrap(), data);
    }

    #[test]
    fn incompressible_data_does_not_fit() {
        let data: Vec<u8> = (0..40u8).collect();
        assert!(compress(&data, data.len() - 4).is_none());
    }
}
