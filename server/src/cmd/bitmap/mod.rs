//! Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.
//!
//! A bitmap is a string; bit 0 is the most significant bit of the first byte. Offsets are
//! limited to proto-max-bulk-len bytes, and an offset past it is refused before anything is
//! allocated.

mod bitfield;

#[cfg(test)]
mod tests;

use super::table::{flags::*, Command};
use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::cmd::string::{lookup_str_for_update, wrongtype};
use crate::cmd::table::CmdResult;
use crate::db::StrValue;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::numfmt;
use crate::reply::Reply;

/// Redis's `getBitOffsetFromArgument`: a bit offset, or with `#n` (BITFIELD only) n times
/// the field width.
pub(crate) fn bit_offset(e: &Engine, arg: &[u8], hash_ok: bool, bits: u32) -> Result<u64, Reply> {
    let err = || Reply::err(errors::BIT_OFFSET);
    let use_hash = hash_ok && bits > 0 && arg.first() == Some(&b'#');
    let digits = if use_hash { &arg[1..] } else { arg };
    let mut n = numfmt::parse_i64(digits).ok_or_else(err)?;
    if use_hash {
        n = n.wrapping_mul(bits as i64);
    }
    if n < 0 || (n as u64 >> 3) >= e.config.proto_max_bulk_len {
        return Err(err());
    }
    Ok(n as u64)
}

/// Redis's `lookupStringForBitCommand`: the string at `key`, created or zero-extended so
/// that bit `max_bit` exists. Also says whether it had to create or grow it.
pub(crate) fn string_for_bit_write<'a>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
    max_bit: u64,
) -> Result<(&'a mut Vec<u8>, bool), Reply> {
    let need = (max_bit >> 3) as usize + 1;
    let exists = lookup::<StrValue>(e, db, key)?.is_some();
    if !exists {
        e.db(db).set(key, Value::Str(vec![0u8; need].into()));
    }
    let s = lookup_str_for_update(e, db, key)?.ok_or_else(wrongtype)?;
    let mut grown = !exists;
    if s.len() < need {
        s.resize(need, 0);
        grown = true;
    }
    Ok((s, grown))
}

fn setbit(e: &mut Engine, call: &mut Call) -> CmdResult {
    let key = call.arg(1);
    let offset = bit_offset(e, call.arg(2), false, 0)?;
    let on = match numfmt::parse_i64(call.arg(3)) {
        Some(v @ (0 | 1)) => v as u8,
        _ => return Err(Reply::err(errors::BIT_VALUE)),
    };
    let (s, grown) = string_for_bit_write(e, call.db, key, offset)?;
    let byte = (offset >> 3) as usize;
    let shift = 7 - (offset & 7) as u8;
    let old = (s[byte] >> shift) & 1;
    let changed = grown || old != on;
    if changed {
        s[byte] = (s[byte] & !(1 << shift)) | (on << shift);
        e.modified(call.db, key, notify::STRING, "setbit");
    }
    Ok(Reply::Int(old as i64))
}

fn getbit(e: &mut Engine, call: &mut Call) -> CmdResult {
    let offset = bit_offset(e, call.arg(2), false, 0)?;
    Ok(match lookup::<StrValue>(e, call.db, call.arg(1))? {
        None => Reply::Int(0),
        Some(s) => {
            let byte = (offset >> 3) as usize;
            let bit = s.get(byte).map_or(0, |b| (b >> (7 - (offset & 7))) & 1);
            Reply::Int(bit as i64)
        }
    })
}

/// Parses BITCOUNT/BITPOS's trailing BYTE|BIT.
fn unit_is_bit(arg: &[u8]) -> Result<bool, Reply> {
    if args::is(arg, "bit") {
        Ok(true)
    } else if args::is(arg, "byte") {
        Ok(false)
    } else {
        Err(Reply::err(errors::SYNTAX))
    }
}

/// Clamps a start/end pair (negative from the end) to `[0, total)`, Redis's way; returns
/// None when the range is empty.
fn clamp_range(total: i64, mut start: i64, mut end: i64) -> Option<(u64, u64)> {
    if start < 0 {
        start = start.saturating_add(total);
    }
    if end < 0 {
        end = end.saturating_add(total);
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    if start > end {
        None
    } else {
        Some((start as u64, end as u64))
    }
}

/// Set bits of `s` between bit positions `first` and `last`, inclusive.
fn count_bits(s: &[u8], first: u64, last: u64) -> i64 {
    let (fb, lb) = ((first >> 3) as usize, (last >> 3) as usize);
    let head_mask = 0xffu8 >> (first & 7);
    let tail_mask = 0xffu8 << (7 - (last & 7));
    if fb == lb {
        return (s[fb] & head_mask & tail_mask).count_ones() as i64;
    }
    let middle: u64 = s[fb + 1..lb].iter().map(|b| b.count_ones() as u64).sum();
    ((s[fb] & head_mask).count_ones() as u64 + middle + (s[lb] & tail_mask).count_ones() as u64)
        as i64
}

/// BITCOUNT. Redis looks the key up before parsing the range, so a missing key answers 0
/// whatever the other arguments are.
/// Valkey 8 reads BITCOUNT's and BITPOS's arguments before it looks the key up (so a missing
/// key with bad arguments is an error), and takes BITCOUNT key start without an end.
/// Redis 7.0 answers a missing key first.
fn args_first(e: &Engine) -> bool {
    e.profile().family() == crate::compat::Family::Valkey && e.profile().level() >= 80
}

/// A BITCOUNT/BITPOS range as given: start, end (None: to the end), in bits rather than bytes.
type GivenRange = Option<(i64, Option<i64>, bool)>;

/// BITCOUNT's range from its arguments; `start_alone`: a start without an end is allowed.
fn bitcount_range(call: &Call, start_alone: bool) -> Result<GivenRange, Reply> {
    match call.argc() {
        2 => Ok(None),
        3 if start_alone => Ok(Some((args::int(call.arg(2))?, None, false))),
        4 | 5 => {
            let start = args::int(call.arg(2))?;
            let end = args::int(call.arg(3))?;
            let is_bit = if call.argc() == 5 {
                unit_is_bit(call.arg(4))?
            } else {
                false
            };
            Ok(Some((start, Some(end), is_bit)))
        }
        _ => Err(Reply::err(errors::SYNTAX)),
    }
}

fn bitcount(e: &mut Engine, call: &mut Call) -> CmdResult {
    let early = if args_first(e) {
        Some(bitcount_range(call, true)?)
    } else {
        None
    };
    let s = match lookup::<StrValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Int(0)),
        Some(s) => s,
    };
    let range = match early {
        Some(r) => r,
        None => bitcount_range(call, false)?,
    };
    let len = s.len() as i64;
    let (first, last) = match range {
        None => match clamp_range(len * 8, 0, -1) {
            Some(r) => r,
            None => return Ok(Reply::Int(0)),
        },
        Some((start, end, is_bit)) => {
            let end = end.unwrap_or(-1);
            if start < 0 && end < 0 && start > end {
                return Ok(Reply::Int(0));
            }
            let total = if is_bit { len * 8 } else { len };
            match clamp_range(total, start, end) {
                None => return Ok(Reply::Int(0)),
                Some((a, b)) if is_bit => (a, b),
                Some((a, b)) => (a * 8, b * 8 + 7),
            }
        }
    };
    Ok(Reply::Int(count_bits(s, first, last)))
}

/// The first bit equal to `bit` between positions `first` and `last` inclusive.
fn find_bit(s: &[u8], first: u64, last: u64, bit: u8) -> Option<u64> {
    let skip = if bit == 1 { 0x00 } else { 0xff };
    let mut pos = first;
    while pos <= last {
        let byte = s[(pos >> 3) as usize];
        if pos & 7 == 0 && last - pos >= 7 && byte == skip {
            pos += 8;
            continue;
        }
        if (byte >> (7 - (pos & 7))) & 1 == bit {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

/// BITPOS. Without an explicit end, a search for a clear bit in a string of set bits answers
/// the first bit past the string (it is "padded with zeros"); with an end, -1.
/// BITPOS's range from its arguments (after the bit).
fn bitpos_range(call: &Call) -> Result<GivenRange, Reply> {
    match call.argc() {
        3 => Ok(None),
        4..=6 => {
            let start = args::int(call.arg(3))?;
            let is_bit = if call.argc() == 6 {
                unit_is_bit(call.arg(5))?
            } else {
                false
            };
            let end = if call.argc() >= 5 {
                Some(args::int(call.arg(4))?)
            } else {
                None
            };
            Ok(Some((start, end, is_bit)))
        }
        _ => Err(Reply::err(errors::SYNTAX)),
    }
}

fn bitpos(e: &mut Engine, call: &mut Call) -> CmdResult {
    let bit = match args::int(call.arg(2))? {
        b @ (0 | 1) => b as u8,
        _ => return Err(Reply::err(errors::BITPOS_BIT)),
    };
    let early = if args_first(e) {
        Some(bitpos_range(call)?)
    } else {
        None
    };
    let s = match lookup::<StrValue>(e, call.db, call.arg(1))? {
        None => return Ok(Reply::Int(if bit == 1 { -1 } else { 0 })),
        Some(s) => s,
    };
    let given = match early {
        Some(r) => r,
        None => bitpos_range(call)?,
    };
    let len = s.len() as i64;
    let end_given = given.is_some_and(|(_, end, _)| end.is_some());
    let range = match given {
        None => clamp_range(len, 0, len - 1).map(|(a, b)| (a * 8, b * 8 + 7)),
        Some((start, end, is_bit)) => {
            let end = end.unwrap_or(len - 1);
            if is_bit {
                clamp_range(len * 8, start, end)
            } else {
                clamp_range(len, start, end).map(|(a, b)| (a * 8, b * 8 + 7))
            }
        }
    };
    let Some((first, last)) = range else {
        return Ok(Reply::Int(-1));
    };
    Ok(match find_bit(s, first, last, bit) {
        Some(p) => Reply::Int(p as i64),
        None if bit == 0 && !end_given => Reply::Int(((last >> 3) + 1) as i64 * 8),
        None => Reply::Int(-1),
    })
}

#[derive(Clone, Copy, PartialEq)]
enum BitOp {
    And,
    Or,
    Xor,
    Not,
    /// Redis 8.2: the first source without any bit of the others (`X & !(A1 | ... | An)`).
    Diff,
    /// Redis 8.2: the bits of the others missing from the first (`!X & (A1 | ... | An)`).
    Diff1,
    /// Redis 8.2: the first source's bits also in one of the others (`X & (A1 | ... | An)`).
    AndOr,
    /// Redis 8.2: the bits set in exactly one source.
    One,
}

impl BitOp {
    /// The operations that compare the first source with the union of the others, which
    /// Redis 8.2 refuses with fewer than two sources.
    fn first_against_rest(self) -> bool {
        matches!(self, BitOp::Diff | BitOp::Diff1 | BitOp::AndOr)
    }
}

/// BITOP's operation, named as the profile's server knows it: DIFF, DIFF1, ANDOR and ONE are
/// Redis 8.2's (`since::BITOP_82`); before, they are the syntax error of an unknown name.
fn bitop_op(e: &Engine, name: &[u8]) -> Result<BitOp, Reply> {
    let op = match args::lower(name).as_str() {
        "and" => BitOp::And,
        "or" => BitOp::Or,
        "xor" => BitOp::Xor,
        "not" => return Ok(BitOp::Not),
        "diff" => BitOp::Diff,
        "diff1" => BitOp::Diff1,
        "andor" => BitOp::AndOr,
        "one" => BitOp::One,
        _ => return Err(Reply::err(errors::SYNTAX)),
    };
    let newer = !matches!(op, BitOp::And | BitOp::Or | BitOp::Xor);
    let what = format!(
        "bitop {}",
        String::from_utf8_lossy(name).to_ascii_uppercase()
    );
    if newer && !e.has_option(crate::compat::since::BITOP_82, &what) {
        return Err(Reply::err(errors::SYNTAX));
    }
    Ok(op)
}

/// One byte of the result from the sources' bytes at the same offset.
fn bitop_byte(op: BitOp, first: u8, rest: impl Iterator<Item = u8>) -> u8 {
    match op {
        BitOp::Not => !first,
        BitOp::And => rest.fold(first, |acc, b| acc & b),
        BitOp::Or => rest.fold(first, |acc, b| acc | b),
        BitOp::Xor => rest.fold(first, |acc, b| acc ^ b),
        BitOp::Diff | BitOp::Diff1 | BitOp::AndOr => {
            let union = rest.fold(0, |acc, b| acc | b);
            match op {
                BitOp::Diff => first & !union,
                BitOp::Diff1 => !first & union,
                _ => first & union,
            }
        }
        BitOp::One => {
            // Bits seen in two sources or more are cleared for good.
            let (once, _) = rest.fold((first, 0u8), |(once, many), b| {
                let many = many | (once & b);
                ((once ^ b) & !many, many)
            });
            once
        }
    }
}

/// BITOP: the result is as long as the longest source (missing keys are empty strings); an
/// empty result deletes the destination.
fn bitop(e: &mut Engine, call: &mut Call) -> CmdResult {
    let op = bitop_op(e, call.arg(1))?;
    if op == BitOp::Not && call.argc() != 4 {
        return Err(Reply::err(errors::BITOP_NOT_ONE_KEY));
    }
    if op.first_against_rest() && call.argc() < 5 {
        return Err(Reply::err(errors::bitop_two_sources(call.arg(1))));
    }
    let mut sources: Vec<Vec<u8>> = Vec::with_capacity(call.argc() - 3);
    for k in &call.args[3..] {
        let v = lookup::<StrValue>(e, call.db, k)?;
        sources.push(v.map(|s| s.to_vec()).unwrap_or_default())
    }
    let max_len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    let dest = call.arg(2);
    if max_len == 0 {
        if e.db(call.db).contains(dest) {
            e.db(call.db).remove(dest);
            e.modified(call.db, dest, notify::GENERIC, "del");
        }
        return Ok(Reply::Int(0));
    }
    let byte_at = |s: &Vec<u8>, i: usize| s.get(i).copied().unwrap_or(0);
    let mut out = vec![0u8; max_len];
    for (i, o) in out.iter_mut().enumerate() {
        let rest = sources[1..].iter().map(|s| byte_at(s, i));
        *o = bitop_byte(op, byte_at(&sources[0], i), rest);
    }
    e.db(call.db).set(dest, Value::Str(out.into()));
    e.db(call.db).mark_raw(dest);
    e.modified(call.db, dest, notify::STRING, "set");
    Ok(Reply::Int(max_len as i64))
}

pub static COMMANDS: &[Command] = &[
    Command::new("setbit", 4, WRITE | DENYOOM, "bitmap", setbit).keys(1, 1, 1),
    Command::new("getbit", 3, READONLY | FAST, "bitmap", getbit).keys(1, 1, 1),
    Command::new("bitcount", -2, READONLY, "bitmap", bitcount).keys(1, 1, 1),
    Command::new("bitpos", -3, READONLY, "bitmap", bitpos).keys(1, 1, 1),
    Command::new("bitop", -4, WRITE | DENYOOM, "bitmap", bitop).keys(2, -1, 1),
    Command::new(
        "bitfield",
        -2,
        WRITE | DENYOOM,
        "bitmap",
        bitfield::bitfield,
    )
    .keys(1, 1, 1),
    Command::new(
        "bitfield_ro",
        -2,
        READONLY | FAST,
        "bitmap",
        bitfield::bitfield_ro,
    )
    .keys(1, 1, 1),
];
