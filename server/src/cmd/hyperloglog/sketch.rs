//! The HyperLogLog value, byte for byte in Redis's format, and its estimator.
//!
//! A HyperLogLog is an ordinary string, so GET, SET, DUMP and RESTORE carry it unchanged, and a
//! value written by real Redis works here and the other way round. Its layout:
//!
//! ```text
//! "HYLL" | encoding (0 dense, 1 sparse) | 3 unused bytes | cached cardinality, 8 bytes LE
//! ```
//!
//! The top bit of the cache's last byte says the cache is stale. After the 16-byte header:
//!
//! - dense: 16384 registers of 6 bits, packed little-endian-first (register i starts at bit
//!   6i, its low bits in the low bits of the byte), 12288 bytes;
//! - sparse: run-length opcodes. `00xxxxxx` is a run of 1..64 zero registers, `01xxxxxx yyyyyyyy`
//!   a run of 1..16384 zero registers (14 bits), `1vvvvvxx` a run of 1..4 registers holding the
//!   value 1..32.
//!
//! Every edit follows the order in which Redis edits, splits and merges opcodes, because the
//! bytes themselves are what a test compares (GET, DUMP), not only the estimate.

/// Registers are addressed by the low 14 bits of the hash.
pub const P: u32 = 14;
pub const REGISTERS: usize = 1 << P;
/// Bits of the hash left for the run of zeros.
const Q: u32 = 64 - P;
pub const HDR: usize = 16;
/// Bytes of the packed registers.
const REG_BYTES: usize = (REGISTERS * 6).div_ceil(8);
pub const DENSE_LEN: usize = HDR + REG_BYTES;
pub const DENSE: u8 = 0;
pub const SPARSE: u8 = 1;
/// The largest value a sparse VAL opcode holds; a higher register forces the dense form.
const SPARSE_VAL_MAX: u8 = 32;
const SPARSE_VAL_MAX_LEN: usize = 4;
const SPARSE_ZERO_MAX_LEN: usize = 64;
/// Seed of MurmurHash64A as Redis uses it for HyperLogLog.
const SEED: u64 = 0xadc8_3b19;

/// The value of a key that holds no element yet: sparse, one XZERO run over every register.
pub fn new_sparse() -> Vec<u8> {
    let mut v = header(SPARSE);
    let run = REGISTERS - 1;
    v.push(0x40 | (run >> 8) as u8);
    v.push((run & 0xff) as u8);
    v
}

fn header(encoding: u8) -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR + 2);
    v.extend_from_slice(b"HYLL");
    v.push(encoding);
    v.extend_from_slice(&[0; 11]);
    v
}

/// Redis's `isHLLObjectOrReply`: the magic, a known encoding, and the exact dense length.
pub fn is_valid(v: &[u8]) -> bool {
    v.len() >= HDR
        && &v[..4] == b"HYLL"
        && v[4] <= SPARSE
        && (v[4] != DENSE || v.len() == DENSE_LEN)
}

pub fn invalidate_cache(v: &mut [u8]) {
    v[15] |= 0x80;
}

/// The cached cardinality, when it is valid.
pub fn cached(v: &[u8]) -> Option<u64> {
    if v[15] & 0x80 != 0 {
        return None;
    }
    Some(u64::from_le_bytes(v[8..16].try_into().expect("8 bytes")))
}

pub fn set_cache(v: &mut [u8], card: u64) {
    v[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Austin Appleby's MurmurHash64A, as Redis compiles it on a little-endian machine.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element lands in and the value it offers: one more than the number of
/// trailing zeros of the hash's upper 50 bits (at most 51).
pub fn pattern(elem: &[u8]) -> (usize, u8) {
    let hash = murmur64a(elem, SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// ---- dense ---------------------------------------------------------------------------------

pub fn dense_get(regs: &[u8], i: usize) -> u8 {
    let bit = i * 6;
    let (byte, fb) = (bit / 8, bit % 8);
    let b0 = regs[byte] as u16;
    let b1 = regs.get(byte + 1).copied().unwrap_or(0) as u16;
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

pub fn dense_set(regs: &mut [u8], i: usize, val: u8) {
    let bit = i * 6;
    let (byte, fb) = (bit / 8, bit % 8);
    let v = val as u16 & 63;
    regs[byte] = (regs[byte] as u16 & !(63u16 << fb) | (v << fb)) as u8;
    if let Some(next) = regs.get_mut(byte + 1) {
        let hi = 63u16 >> (8 - fb);
        *next = (*next as u16 & !hi | (v >> (8 - fb))) as u8;
    }
}

/// Raises register `i` to `val`; true when it changed.
fn dense_raise(regs: &mut [u8], i: usize, val: u8) -> bool {
    if val > dense_get(regs, i) {
        dense_set(regs, i, val);
        true
    } else {
        false
    }
}

// ---- sparse opcodes ------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Zero(usize),
    XZero(usize),
    Val(u8, usize),
}

impl Op {
    /// The opcode at `p`; an XZERO cut short reads its missing byte as 0, as Redis reads the
    /// string's terminator.
    fn at(s: &[u8], p: usize) -> Op {
        let b = s[p];
        if b & 0xc0 == 0 {
            Op::Zero((b & 0x3f) as usize + 1)
        } else if b & 0x80 == 0 {
            let lo = s.get(p + 1).copied().unwrap_or(0) as usize;
            Op::XZero((((b & 0x3f) as usize) << 8 | lo) + 1)
        } else {
            Op::Val(((b >> 2) & 0x1f) + 1, (b & 3) as usize + 1)
        }
    }

    fn size(self) -> usize {
        match self {
            Op::XZero(_) => 2,
            _ => 1,
        }
    }

    fn len(self) -> usize {
        match self {
            Op::Zero(n) | Op::XZero(n) | Op::Val(_, n) => n,
        }
    }

    fn push(self, out: &mut Vec<u8>) {
        match self {
            Op::Zero(n) => out.push((n - 1) as u8),
            Op::XZero(n) => {
                out.push(0x40 | ((n - 1) >> 8) as u8);
                out.push(((n - 1) & 0xff) as u8);
            }
            Op::Val(v, n) => out.push(val_byte(v, n)),
        }
    }
}

/// The one byte of a VAL opcode: value 1..=32, run 1..=4.
fn val_byte(v: u8, n: usize) -> u8 {
    0x80 | ((v - 1) << 2) | (n - 1) as u8
}

/// A zero run of `n` registers in the shortest opcode.
fn zero_run(n: usize) -> Op {
    if n > SPARSE_ZERO_MAX_LEN {
        Op::XZero(n)
    } else {
        Op::Zero(n)
    }
}

/// Calls `f(first_register, op)` for each opcode of the sparse body `s`.
fn walk(s: &[u8], mut f: impl FnMut(usize, Op) -> bool) {
    let (mut p, mut idx) = (HDR, 0usize);
    while p < s.len() {
        let op = Op::at(s, p);
        if !f(idx, op) {
            return;
        }
        idx += op.len();
        p += op.size();
    }
}

/// Walks a sparse body, handing each VAL opcode's registers and value to `each` (zero runs
/// are skipped). None when the opcodes run past the 16384 registers or stop short of them;
/// `each` may have seen some runs by then.
fn val_runs(v: &[u8], mut each: impl FnMut(std::ops::Range<usize>, u8)) -> Option<()> {
    let mut idx = 0usize;
    let mut overflow = false;
    walk(v, |_, op| {
        match op {
            Op::Zero(n) | Op::XZero(n) => idx += n,
            Op::Val(val, n) => {
                if idx + n > REGISTERS {
                    overflow = true;
                    return false;
                }
                each(idx..idx + n, val);
                idx += n;
            }
        }
        true
    });
    (!overflow && idx == REGISTERS).then_some(())
}

/// Redis's `hllSparseToDense`: the dense value with the same header (cache included), or None
/// for a sparse body that does not cover exactly the 16384 registers. A dense value is left
/// as it is.
pub fn to_dense(v: &mut Vec<u8>) -> Option<()> {
    if v[4] == DENSE {
        return Some(());
    }
    let mut out = vec![0u8; DENSE_LEN];
    out[..HDR].copy_from_slice(&v[..HDR]);
    out[4] = DENSE;
    val_runs(v, |run, val| {
        for r in run {
            dense_set(&mut out[HDR..], r, val);
        }
    })?;
    *v = out;
    Some(())
}

/// Redis's `hllSparseSet`: raises register `index` to `count` in a sparse value, splitting
/// the opcode that covers it and merging equal neighbours, or converting the whole value to
/// dense when the count does not fit a VAL opcode or the value would outgrow `max_bytes`.
/// Some(true) when a register changed, None for a corrupt value.
fn sparse_set(v: &mut Vec<u8>, index: usize, count: u8, max_bytes: usize) -> Option<bool> {
    if count > SPARSE_VAL_MAX {
        return promote(v, index, count);
    }
    // Find the opcode covering `index`, and the one before it.
    let (mut p, mut first, mut prev) = (HDR, 0usize, None);
    let mut found = None;
    while p < v.len() {
        let op = Op::at(v, p);
        if index < first + op.len() {
            found = Some(op);
            break;
        }
        prev = Some(p);
        p += op.size();
        first += op.len();
    }
    let op = found?;
    if p + op.size() > v.len() {
        // An XZERO cut short by the end of the value.
        return None;
    }
    let last = first + op.len() - 1;
    let mut seq = Vec::with_capacity(5);
    match op {
        Op::Val(old, _) if old >= count => return Some(false),
        Op::Val(_, 1) | Op::Zero(1) => {
            v[p] = val_byte(count, 1);
            merge_vals(v, prev.unwrap_or(HDR));
            return Some(true);
        }
        Op::Zero(_) | Op::XZero(_) => {
            if index != first {
                zero_run(index - first).push(&mut seq);
            }
            Op::Val(count, 1).push(&mut seq);
            if index != last {
                zero_run(last - index).push(&mut seq);
            }
        }
        Op::Val(cur, _) => {
            if index != first {
                Op::Val(cur, index - first).push(&mut seq);
            }
            Op::Val(count, 1).push(&mut seq);
            if index != last {
                Op::Val(cur, last - index).push(&mut seq);
            }
        }
    }
    let old_size = op.size();
    if seq.len() > old_size && v.len() + seq.len() - old_size > max_bytes {
        return promote(v, index, count);
    }
    v.splice(p..p + old_size, seq);
    merge_vals(v, prev.unwrap_or(HDR));
    Some(true)
}

/// Converts to dense, then sets the register (which the sparse form could not hold).
fn promote(v: &mut Vec<u8>, index: usize, count: u8) -> Option<bool> {
    to_dense(v)?;
    dense_raise(&mut v[HDR..], index, count);
    Some(true)
}

/// Merges adjacent VAL opcodes of equal value whose runs fit one opcode, scanning at most
/// five opcodes from `p` (the opcode before the edited one), as Redis does.
fn merge_vals(v: &mut Vec<u8>, mut p: usize) {
    let mut budget = 5;
    while p < v.len() && budget > 0 {
        budget -= 1;
        match Op::at(v, p) {
            Op::XZero(_) => {
                p += 2;
                continue;
            }
            Op::Zero(_) => {
                p += 1;
                continue;
            }
            Op::Val(v1, l1) => {
                if p + 1 < v.len() {
                    if let Op::Val(v2, l2) = Op::at(v, p + 1) {
                        if v1 == v2 && l1 + l2 <= SPARSE_VAL_MAX_LEN {
                            v[p + 1] = val_byte(v1, l1 + l2);
                            v.remove(p);
                            continue;
                        }
                    }
                }
                p += 1;
            }
        }
    }
}

/// Redis's `hllAdd`: Some(true) when a register changed, None for a corrupt value.
pub fn add(v: &mut Vec<u8>, elem: &[u8], sparse_max_bytes: usize) -> Option<bool> {
    let (index, count) = pattern(elem);
    set_register(v, index, count, sparse_max_bytes)
}

/// Raises one register in either encoding.
pub fn set_register(v: &mut Vec<u8>, index: usize, count: u8, max: usize) -> Option<bool> {
    match v[4] {
        DENSE => Some(dense_raise(&mut v[HDR..], index, count)),
        SPARSE => sparse_set(v, index, count, max),
        _ => None,
    }
}

/// Redis's `hllMerge`: raises each of `max`'s registers to this value's. Err for a sparse
/// body that does not cover exactly the registers.
pub fn merge_into(max: &mut [u8; REGISTERS], v: &[u8]) -> Result<(), ()> {
    if v[4] == DENSE {
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(&v[HDR..], i));
        }
        return Ok(());
    }
    val_runs(v, |run, val| {
        for m in &mut max[run] {
            *m = (*m).max(val);
        }
    })
    .ok_or(())
}

/// Histogram of register values: (histogram, whether the registers were exactly covered).
fn histogram(v: &[u8]) -> ([u32; 64], bool) {
    let mut h = [0u32; 64];
    if v[4] == DENSE {
        for i in 0..REGISTERS {
            h[dense_get(&v[HDR..], i) as usize] += 1;
        }
        return (h, true);
    }
    let mut idx = 0usize;
    walk(v, |_, op| {
        match op {
            Op::Zero(n) | Op::XZero(n) => h[0] = h[0].saturating_add(n as u32),
            Op::Val(val, n) => h[val as usize] = h[val as usize].saturating_add(n as u32),
        }
        idx += op.len();
        true
    });
    (h, idx == REGISTERS)
}

/// The cardinality of a value: None when a sparse body is corrupt. Redis computes the estimate
/// before it looks at the corruption flag, which changes nothing visible.
pub fn count(v: &[u8]) -> Option<u64> {
    let (h, ok) = histogram(v);
    ok.then(|| estimate(&h))
}

/// The cardinality of raw registers (the union PFCOUNT builds over several keys).
pub fn count_raw(regs: &[u8; REGISTERS]) -> u64 {
    let mut h = [0u32; 64];
    for &r in regs.iter() {
        h[r as usize] += 1;
    }
    estimate(&h)
}

/// Otmar Ertl's improved raw estimator ("New cardinality estimation algorithms for
/// HyperLogLog sketches"), the one Redis uses, in the same floating-point order.
fn estimate(h: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - h[Q as usize + 1] as f64) / m);
    for j in (1..=Q as usize).rev() {
        z += h[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(h[0] as f64 / m);
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    (ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z || z.is_nan() {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if before == z || z.is_nan() {
            return z / 3.0;
        }
    }
}

/// PFDEBUG DECODE's text for a sparse value.
pub fn decode(v: &[u8]) -> String {
    let mut parts = Vec::new();
    walk(v, |_, op| {
        parts.push(match op {
            Op::Zero(n) => format!("z:{n}"),
            Op::XZero(n) => format!("Z:{n}"),
            Op::Val(val, n) => format!("v:{val},{n}"),
        });
        true
    });
    parts.join(" ")
}
