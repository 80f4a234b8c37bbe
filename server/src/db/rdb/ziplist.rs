//! Ziplist, the compact encoding before Redis 7: read only, so RESTORE accepts payloads
//! DUMPed by Redis 6 (and older RDB versions) as Redis 7.0 does.

/// Every element of a ziplist (integers as decimal text); None if malformed.
pub fn parse(z: &[u8]) -> Option<Vec<Vec<u8>>> {
    if z.len() < 11 {
        return None;
    }
    let total = u32::from_le_bytes(z[0..4].try_into().ok()?) as usize;
    if total != z.len() || z[z.len() - 1] != 0xff {
        return None;
    }
    let mut out = Vec::new();
    let mut p = 10usize;
    let end = z.len() - 1;
    let get = |from: usize, n: usize| -> Option<&[u8]> {
        let to = from.checked_add(n)?;
        if to > end {
            return None;
        }
        z.get(from..to)
    };
    while p < end {
        // prevlen: 1 byte, or 0xfe and 4 bytes.
        p += if z[p] == 0xfe { 5 } else { 1 };
        let b = *get(p, 1)?.first()?;
        let (value, size): (Vec<u8>, usize) = match b >> 6 {
            0 => {
                let n = (b & 0x3f) as usize;
                (get(p + 1, n)?.to_vec(), 1 + n)
            }
            1 => {
                let n = (((b & 0x3f) as usize) << 8) | *get(p + 1, 1)?.first()? as usize;
                (get(p + 2, n)?.to_vec(), 2 + n)
            }
            2 => {
                let n = u32::from_be_bytes(get(p + 1, 4)?.try_into().ok()?) as usize;
                (get(p + 5, n)?.to_vec(), 5 + n)
            }
            _ => {
                let (v, n): (i64, usize) = match b {
                    0xc0 => (
                        i16::from_le_bytes(get(p + 1, 2)?.try_into().ok()?) as i64,
                        2,
                    ),
                    0xd0 => (
                        i32::from_le_bytes(get(p + 1, 4)?.try_into().ok()?) as i64,
                        4,
                    ),
                    0xe0 => (i64::from_le_bytes(get(p + 1, 8)?.try_into().ok()?), 8),
                    0xf0 => {
                        let t = get(p + 1, 3)?;
                        (
                            (((t[0] as i32) | ((t[1] as i32) << 8) | ((t[2] as i32) << 16)) << 8
                                >> 8) as i64,
                            3,
                        )
                    }
                    0xfe => (get(p + 1, 1)?[0] as i8 as i64, 1),
                    0xf1..=0xfd => ((b & 0x0f) as i64 - 1, 0),
                    _ => return None,
                };
                (itoa::Buffer::new().format(v).as_bytes().to_vec(), 1 + n)
            }
        };
        p += size;
        if p > end {
            return None;
        }
        out.push(value);
    }
    Some(out)
}
