//! BITFIELD and BITFIELD_RO: signed and unsigned integers of 1..64 bits at any bit offset,
//! with GET, SET, INCRBY and the OVERFLOW WRAP|SAT|FAIL policy.
//!
//! Every operation is parsed and checked before any runs, as in Redis, so a bad argument late
//! in the list leaves the string untouched.

use super::{bit_offset, string_for_bit_write};
use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::StrValue;

use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

#[derive(Clone, Copy, PartialEq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, PartialEq)]
enum OpKind {
    Get,
    Set,
    IncrBy,
}

struct Op {
    kind: OpKind,
    offset: u64,
    bits: u32,
    signed: bool,
    value: i64,
    overflow: Overflow,
}

/// `i1`..`i64` or `u1`..`u63` (lower case only, as Redis).
fn field_type(arg: &[u8]) -> Result<(bool, u32), Reply> {
    let err = || Reply::err(errors::BITFIELD_TYPE);
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(err()),
    };
    let bits = numfmt::parse_i64(&arg[1..]).ok_or_else(err)?;
    if bits < 1 || (signed && bits > 64) || (!signed && bits > 63) {
        return Err(err());
    }
    Ok((signed, bits as u32))
}

fn parse_ops(e: &Engine, call: &Call) -> Result<Vec<Op>, Reply> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < call.argc() {
        let remaining = call.argc() - j - 1;
        let sub = call.arg(j);
        let kind = if args::is(sub, "get") && remaining >= 2 {
            OpKind::Get
        } else if args::is(sub, "set") && remaining >= 3 {
            OpKind::Set
        } else if args::is(sub, "incrby") && remaining >= 3 {
            OpKind::IncrBy
        } else if args::is(sub, "overflow") && remaining >= 1 {
            let name = call.arg(j + 1);
            overflow = if args::is(name, "wrap") {
                Overflow::Wrap
            } else if args::is(name, "sat") {
                Overflow::Sat
            } else if args::is(name, "fail") {
                Overflow::Fail
            } else {
                return Err(Reply::err(errors::BITFIELD_OVERFLOW));
            };
            j += 2;
            continue;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        };
        let (signed, bits) = field_type(call.arg(j + 1))?;
        let offset = bit_offset(e, call.arg(j + 2), true, bits)?;
        let value = if kind == OpKind::Get {
            0
        } else {
            args::int(call.arg(j + 3))?
        };
        ops.push(Op {
            kind,
            offset,
            bits,
            signed,
            value,
            overflow,
        });
        j += if kind == OpKind::Get { 3 } else { 4 };
    }
    Ok(ops)
}

fn get_unsigned(s: &[u8], offset: u64, bits: u32) -> u64 {
    let mut v = 0u64;
    for i in 0..bits as u64 {
        let pos = offset + i;
        let byte = s.get((pos >> 3) as usize).copied().unwrap_or(0);
        v = (v << 1) | ((byte >> (7 - (pos & 7))) & 1) as u64;
    }
    v
}

fn get_signed(s: &[u8], offset: u64, bits: u32) -> i64 {
    let v = get_unsigned(s, offset, bits);
    if bits < 64 && v & (1u64 << (bits - 1)) != 0 {
        (v | (u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

fn set_bits(s: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..bits as u64 {
        let bit = (value >> (bits as u64 - 1 - i)) & 1;
        let pos = offset + i;
        let byte = &mut s[(pos >> 3) as usize];
        let shift = 7 - (pos & 7);
        *byte = (*byte & !(1 << shift)) | ((bit as u8) << shift);
    }
}

/// Redis's `checkUnsignedBitfieldOverflow`: whether `value + incr` leaves the field, and the
/// wrapped or saturated result.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, ow: Overflow) -> (bool, u64) {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let wrap = || value.wrapping_add(incr as u64) & !(u64::MAX << bits);
    if value > max || (incr > 0 && incr > max_incr) {
        (true, if ow == Overflow::Wrap { wrap() } else { max })
    } else if incr < 0 && incr < min_incr {
        (true, if ow == Overflow::Wrap { wrap() } else { 0 })
    } else {
        (false, 0)
    }
}

/// Redis's `checkSignedBitfieldOverflow`.
fn signed_overflow(value: i64, incr: i64, bits: u32, ow: Overflow) -> (bool, i64) {
    let max: i64 = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrap = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1u64 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    if value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)
    {
        (true, if ow == Overflow::Wrap { wrap() } else { max })
    } else if value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        (true, if ow == Overflow::Wrap { wrap() } else { min })
    } else {
        (false, 0)
    }
}

/// Runs one SET or INCRBY on `s`: the reply (None when OVERFLOW FAIL refused it) and whether
/// the stored bits changed.
fn write_op(s: &mut [u8], op: &Op) -> (Option<i64>, bool) {
    if op.signed {
        let old = get_signed(s, op.offset, op.bits);
        let (overflow, new, ret) = if op.kind == OpKind::IncrBy {
            let (ovf, wrapped) = signed_overflow(old, op.value, op.bits, op.overflow);
            let new = if ovf {
                wrapped
            } else {
                old.wrapping_add(op.value)
            };
            (ovf, new, new)
        } else {
            let (ovf, wrapped) = signed_overflow(op.value, 0, op.bits, op.overflow);
            (ovf, if ovf { wrapped } else { op.value }, old)
        };
        if overflow && op.overflow == Overflow::Fail {
            return (None, false);
        }
        set_bits(s, op.offset, op.bits, new as u64);
        (Some(ret), old != new)
    } else {
        let old = get_unsigned(s, op.offset, op.bits);
        let (overflow, new, ret) = if op.kind == OpKind::IncrBy {
            let (ovf, wrapped) = unsigned_overflow(old, op.value, op.bits, op.overflow);
            let new = if ovf {
                wrapped
            } else {
                old.wrapping_add(op.value as u64)
            };
            (ovf, new, new)
        } else {
            let v = op.value as u64;
            let (ovf, wrapped) = unsigned_overflow(v, 0, op.bits, op.overflow);
            (ovf, if ovf { wrapped } else { v }, old)
        };
        if overflow && op.overflow == Overflow::Fail {
            return (None, false);
        }
        set_bits(s, op.offset, op.bits, new);
        (Some(ret as i64), old != new)
    }
}

fn read_op(s: Option<&[u8]>, op: &Op) -> i64 {
    let s = s.unwrap_or(&[]);
    if op.signed {
        get_signed(s, op.offset, op.bits)
    } else {
        get_unsigned(s, op.offset, op.bits) as i64
    }
}

fn run(e: &mut Engine, call: &Call, read_only_cmd: bool) -> Reply {
    let ops = match parse_ops(e, call) {
        Ok(ops) => ops,
        Err(r) => return r,
    };
    let key = call.arg(1);
    let writes = ops.iter().any(|o| o.kind != OpKind::Get);
    if !writes {
        let s = match lookup::<StrValue>(e, call.db, key) {
            Ok(s) => s,
            Err(r) => return r,
        };
        return Reply::Array(
            ops.iter()
                .map(|op| Reply::Int(read_op(s.map(|v| &v[..]), op)))
                .collect(),
        );
    }
    if read_only_cmd {
        return Reply::err(errors::BITFIELD_RO_GET_ONLY);
    }
    let highest = ops
        .iter()
        .filter(|o| o.kind != OpKind::Get)
        .map(|o| o.offset + o.bits as u64 - 1)
        .max()
        .unwrap_or(0);
    let (s, grown) = match string_for_bit_write(e, call.db, key, highest) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let mut changes = false;
    let mut replies = Vec::with_capacity(ops.len());
    for op in &ops {
        if op.kind == OpKind::Get {
            replies.push(Reply::Int(read_op(Some(s), op)));
            continue;
        }
        match write_op(s, op) {
            (Some(v), changed) => {
                changes |= changed || grown;
                replies.push(Reply::Int(v));
            }
            (None, _) => replies.push(Reply::Nil),
        }
    }
    if changes {
        e.modified(call.db, key, notify::STRING, "setbit");
    }
    Reply::Array(replies)
}

pub(super) fn bitfield(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(run(e, call, false))
}

pub(super) fn bitfield_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(run(e, call, true))
}
