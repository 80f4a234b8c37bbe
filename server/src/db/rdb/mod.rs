//! DUMP/RESTORE payloads: one value in Redis's RDB serialization, then the RDB version
//! (2 bytes, little endian) and a CRC-64 of everything before it (8 bytes, little endian).
//!
//! `dump` writes what Redis 7.0 (RDB version 10) writes for the encoding it would use
//! (see `db::encoding`): strings as integers when they are small canonical integers,
//! strings longer than 20 bytes LZF-compressed when that saves space, small hashes and
//! sorted sets as listpacks, integer sets as intsets, lists as quicklist nodes. `restore`
//! reads those and the older forms Redis 7.0 still loads.

pub mod crc64;
pub mod file;
mod functions;
pub mod hash_ex;
pub mod listpack;
pub mod lzf;
mod reader;
pub mod stream;
pub mod ziplist;

pub use functions::{dump_functions, restore_functions, FunctionRestoreError};

use super::encoding::{self, Encoding, Limits};
use super::hash_ttl;
use super::{HashValue, ListValue, SetValue, Value, ZSet};
use crate::numfmt;

/// The RDB version Redis 7.0 writes and the newest it accepts.
pub const RDB_VERSION: u16 = 10;

pub mod types {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    /// Redis 7.2's listpack set (RDB version 11).
    pub const SET_LISTPACK: u8 = 20;
}

const QUICKLIST_NODE_PLAIN: u64 = 1;
const QUICKLIST_NODE_PACKED: u64 = 2;
/// Estimated per-entry overhead quicklist adds when deciding if an element fits a node.
const QUICKLIST_ENTRY_OVERHEAD: usize = 8;
/// Elements this large get a node of their own (quicklist packed_threshold, 1 GiB).
const QUICKLIST_PACKED_THRESHOLD: usize = 1 << 30;
const QUICKLIST_OPTIMIZATION_LEVELS: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
const QUICKLIST_SAFETY_LIMIT: usize = 8192;

/// Why a payload was refused; each maps to Redis's RESTORE error.
#[derive(Debug, PartialEq, Eq)]
pub enum RestoreError {
    /// "ERR DUMP payload version or checksum are wrong"
    VersionOrChecksum,
    /// "ERR Bad data format"
    BadFormat,
}

/// The DUMP payload of `v`.
pub fn dump(v: &Value, limits: &Limits) -> Vec<u8> {
    dump_with_field_ttls(v, limits, None)
}

/// `dump` for a hash whose fields may have deadlines (Redis 7.4): with any, the hash is
/// written as RDB_TYPE_HASH_LISTPACK_EX or RDB_TYPE_HASH_METADATA (`hash_ex`), which only
/// payloads of RDB version 12 carry (the profiles from redis-7.4 write that version).
pub fn dump_with_field_ttls(
    v: &Value,
    limits: &Limits,
    deadlines: Option<&hash_ttl::Deadlines>,
) -> Vec<u8> {
    let mut out = Vec::new();
    match (v, deadlines) {
        (Value::Hash(h), Some(d)) if !d.is_empty() => {
            let packed = encoding::of(v, limits) == Encoding::Listpack;
            hash_ex::write(&mut out, h, d, packed);
        }
        _ => write_object(&mut out, v, limits),
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// `payload` (a DUMP payload) stamped with RDB version `version` instead, its checksum
/// recomputed: what a server writing that version answers for the same encoding.
pub fn restamp(mut payload: Vec<u8>, version: u16) -> Vec<u8> {
    let n = payload.len();
    if n < 10 {
        return payload;
    }
    payload.truncate(n - 10);
    payload.extend_from_slice(&version.to_le_bytes());
    let crc = crc64::crc64(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    payload
}

/// Checks the footer of a payload (version and checksum), as `verifyDumpPayload`.
pub fn verify(payload: &[u8]) -> Result<&[u8], RestoreError> {
    verify_up_to(payload, RDB_VERSION)
}

/// `verify` for a server that accepts RDB versions up to `newest`.
pub fn verify_up_to(payload: &[u8], newest: u16) -> Result<&[u8], RestoreError> {
    if payload.len() < 10 {
        return Err(RestoreError::VersionOrChecksum);
    }
    let n = payload.len();
    let version = u16::from_le_bytes([payload[n - 10], payload[n - 9]]);
    if version > newest {
        return Err(RestoreError::VersionOrChecksum);
    }
    let crc = crc64::crc64(0, &payload[..n - 8]);
    if crc.to_le_bytes() != payload[n - 8..] {
        return Err(RestoreError::VersionOrChecksum);
    }
    Ok(&payload[..n - 10])
}

/// Decodes a payload into a value, as Redis 7.0 reads it.
#[cfg(test)]
pub fn restore(payload: &[u8]) -> Result<Value, RestoreError> {
    restore_with_field_ttls(payload, RDB_VERSION).map(|(v, _)| v)
}

/// Decodes a payload for a server that accepts RDB versions up to `newest` (the payload's
/// encodings are the ones redlab reads either way), with a hash's field deadlines (RDB
/// types 24 and 25, for a server that reads RDB version 12; empty for every other value).
pub fn restore_with_field_ttls(
    payload: &[u8],
    newest: u16,
) -> Result<(Value, hash_ttl::Deadlines), RestoreError> {
    let body = verify_up_to(payload, newest)?;
    let mut r = reader::Reader::new(body);
    let t = r.byte().ok_or(RestoreError::BadFormat)?;
    let (v, deadlines) = match t {
        hash_ex::HASH_METADATA | hash_ex::HASH_LISTPACK_EX if newest >= 12 => {
            hash_ex::read(&mut r, t).ok_or(RestoreError::BadFormat)?
        }
        _ => (
            read_object(&mut r, t).ok_or(RestoreError::BadFormat)?,
            hash_ttl::Deadlines::new(),
        ),
    };
    if v.is_empty_collection() {
        return Err(RestoreError::BadFormat);
    }
    Ok((v, deadlines))
}

// ---- writing ------------------------------------------------------------------------------

fn write_len(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// `rdbEncodeInteger`: the 1, 2 or 4 byte forms; None for larger values.
fn encode_integer(out: &mut Vec<u8>, v: i64) -> bool {
    if (-(1 << 7)..(1 << 7)).contains(&v) {
        out.push(0xc0);
        out.push(v as i8 as u8);
    } else if (-(1 << 15)..(1 << 15)).contains(&v) {
        out.push(0xc1);
        out.extend_from_slice(&(v as i16).to_le_bytes());
    } else if (-(1i64 << 31)..(1i64 << 31)).contains(&v) {
        out.push(0xc2);
        out.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        return false;
    }
    true
}

/// `rdbSaveRawString`: integer form, else LZF when it pays, else verbatim.
fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 11 {
        if let Some(v) = numfmt::parse_i64(s) {
            if encode_integer(out, v) {
                return;
            }
        }
    }
    if s.len() > 20 {
        if let Some(c) = lzf::compress(s, s.len() - 4) {
            out.push(0xc3);
            write_len(out, c.len() as u64);
            write_len(out, s.len() as u64);
            out.extend_from_slice(&c);
            return;
        }
    }
    write_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

fn write_object(out: &mut Vec<u8>, v: &Value, limits: &Limits) {
    match v {
        Value::Str(s) => {
            out.push(types::STRING);
            write_string(out, s);
        }
        Value::List(l) => {
            out.push(types::LIST_QUICKLIST_2);
            write_quicklist(out, l, limits.list_max_listpack_size);
        }
        Value::Hash(h) => match encoding::of(v, limits) {
            Encoding::Listpack => {
                out.push(types::HASH_LISTPACK);
                let mut w = listpack::Writer::new();
                for (k, val) in h.iter() {
                    w.push(k);
                    w.push(val);
                }
                write_string(out, &w.finish());
            }
            _ => {
                out.push(types::HASH);
                write_len(out, h.len() as u64);
                for (k, val) in h.iter() {
                    write_string(out, k);
                    write_string(out, val);
                }
            }
        },
        // A listpack set exists only under the profiles from Redis 7.2, whose payloads carry
        // RDB version 11 or later (`Profile::rdb_version`), as RDB_TYPE_SET_LISTPACK needs.
        Value::Set(s) => match s.encoding(limits) {
            Encoding::Intset => {
                out.push(types::SET_INTSET);
                write_string(out, &intset(s));
            }
            Encoding::Listpack => {
                out.push(types::SET_LISTPACK);
                let mut w = listpack::Writer::new();
                for m in s.iter() {
                    w.push(m);
                }
                write_string(out, &w.finish());
            }
            _ => {
                out.push(types::SET);
                write_len(out, s.len() as u64);
                for m in s.iter() {
                    write_string(out, m);
                }
            }
        },
        Value::ZSet(z) => match encoding::of(v, limits) {
            Encoding::Listpack => {
                out.push(types::ZSET_LISTPACK);
                let mut w = listpack::Writer::new();
                for (m, score) in z.iter() {
                    w.push(m);
                    w.push(score_text(score).as_bytes());
                }
                write_string(out, &w.finish());
            }
            _ => {
                out.push(types::ZSET_2);
                write_len(out, z.len() as u64);
                // Redis saves a skiplist from the tail, so loading inserts at the head.
                for (m, score) in z.iter().rev() {
                    write_string(out, m);
                    out.extend_from_slice(&score.to_le_bytes());
                }
            }
        },
        Value::Stream(s) => stream::write(out, s),
    }
}

/// How a listpack sorted set stores a score (`d2string`).
fn score_text(d: f64) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    if d.is_finite() && d > -4503599627370495.0 && d < 4503599627370496.0 && d == (d as i64) as f64
    {
        return (d as i64).to_string();
    }
    numfmt::format_g(d, 17)
}

/// An intset blob: encoding width, length, then the values sorted, little endian.
fn intset(s: &SetValue) -> Vec<u8> {
    let mut vals: Vec<i64> = s.iter().filter_map(numfmt::parse_i64).collect();
    vals.sort_unstable();
    let width: usize = if vals
        .iter()
        .any(|&v| v < i32::MIN as i64 || v > i32::MAX as i64)
    {
        8
    } else if vals
        .iter()
        .any(|&v| v < i16::MIN as i64 || v > i16::MAX as i64)
    {
        4
    } else {
        2
    };
    let mut out = Vec::with_capacity(8 + width * vals.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(vals.len() as u32).to_le_bytes());
    for v in vals {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

/// Whether one more element of `sz` bytes fits a quicklist node (`_quicklistNodeAllowInsert`).
fn node_allows(node_bytes: usize, node_count: usize, sz: usize, fill: i64) -> bool {
    let new_sz = node_bytes + sz + QUICKLIST_ENTRY_OVERHEAD;
    if fill < 0 {
        let offset = (-fill - 1) as usize;
        if let Some(&limit) = QUICKLIST_OPTIMIZATION_LEVELS.get(offset) {
            if new_sz <= limit {
                return true;
            }
        }
    }
    if new_sz > QUICKLIST_SAFETY_LIMIT {
        return false;
    }
    (node_count as i64) < fill
}

/// The list as a quicklist filled by tail pushes, the way RPUSH builds it.
fn write_quicklist(out: &mut Vec<u8>, l: &ListValue, fill: i64) {
    enum Node {
        Packed(Vec<u8>),
        Plain(Vec<u8>),
    }
    let mut nodes: Vec<Node> = Vec::new();
    let mut cur: Option<listpack::Writer> = None;
    for e in l {
        if e.len() >= QUICKLIST_PACKED_THRESHOLD {
            if let Some(w) = cur.take() {
                nodes.push(Node::Packed(w.finish()));
            }
            nodes.push(Node::Plain(e.clone()));
            continue;
        }
        let fits = cur
            .as_ref()
            .is_some_and(|w| node_allows(w.bytes(), w.len(), e.len(), fill));
        if !fits {
            if let Some(w) = cur.take() {
                nodes.push(Node::Packed(w.finish()));
            }
            cur = Some(listpack::Writer::new());
        }
        if let Some(w) = cur.as_mut() {
            w.push(e);
        }
    }
    if let Some(w) = cur.take() {
        nodes.push(Node::Packed(w.finish()));
    }
    write_len(out, nodes.len() as u64);
    for n in nodes {
        match n {
            Node::Packed(lp) => {
                write_len(out, QUICKLIST_NODE_PACKED);
                write_string(out, &lp);
            }
            Node::Plain(e) => {
                write_len(out, QUICKLIST_NODE_PLAIN);
                write_string(out, &e);
            }
        }
    }
}

// ---- reading ------------------------------------------------------------------------------

fn read_object(r: &mut reader::Reader, t: u8) -> Option<Value> {
    match t {
        types::STRING => Some(Value::Str(r.string()?.into())),
        types::LIST => {
            let n = r.len()?;
            let mut l = ListValue::new();
            for _ in 0..n {
                l.push_back(r.string()?);
            }
            Some(Value::List(Box::new(l)))
        }
        types::SET => {
            let n = r.len()?;
            let mut s = SetValue::new_table();
            for _ in 0..n {
                if !s.insert(&r.string()?, &Limits::unbounded()) {
                    return None;
                }
            }
            Some(Value::Set(s))
        }
        types::ZSET | types::ZSET_2 => {
            let n = r.len()?;
            let mut z = ZSet::new_unpacked();
            for _ in 0..n {
                let m = r.string()?;
                let score = if t == types::ZSET_2 {
                    r.binary_double()?
                } else {
                    r.text_double()?
                };
                if score.is_nan() || z.push(&m, score).is_some() {
                    return None;
                }
            }
            Some(Value::ZSet(z))
        }
        types::HASH => {
            let n = r.len()?;
            let mut h = HashValue::new_table();
            for _ in 0..n {
                let k = r.string()?;
                let v = r.string()?;
                if !h.set(&k, &v, &Limits::default()) {
                    return None;
                }
            }
            Some(Value::Hash(h))
        }
        types::SET_INTSET => {
            let blob = r.string()?;
            Some(Value::Set(parse_intset(&blob)?))
        }
        types::LIST_ZIPLIST => Some(Value::List(Box::new(
            ziplist::parse(&r.string()?)?.into_iter().collect(),
        ))),
        types::HASH_ZIPLIST => hash_from_pairs(ziplist::parse(&r.string()?)?),
        types::HASH_LISTPACK => hash_from_pairs(listpack::parse(&r.string()?)?),
        types::ZSET_ZIPLIST => zset_from_pairs(ziplist::parse(&r.string()?)?),
        types::ZSET_LISTPACK => zset_from_pairs(listpack::parse(&r.string()?)?),
        types::SET_LISTPACK => Some(Value::Set(SetValue::from_listpack(listpack::parse(
            &r.string()?,
        )?)?)),
        types::LIST_QUICKLIST | types::LIST_QUICKLIST_2 => {
            let nodes = r.len()?;
            let mut l = ListValue::new();
            for _ in 0..nodes {
                let container = if t == types::LIST_QUICKLIST_2 {
                    r.len()? as u64
                } else {
                    QUICKLIST_NODE_PACKED
                };
                let blob = r.string()?;
                match container {
                    QUICKLIST_NODE_PLAIN => l.push_back(blob),
                    QUICKLIST_NODE_PACKED => {
                        let items = if t == types::LIST_QUICKLIST_2 {
                            listpack::parse(&blob)?
                        } else {
                            ziplist::parse(&blob)?
                        };
                        l.extend(items);
                    }
                    _ => return None,
                }
            }
            Some(Value::List(Box::new(l)))
        }
        stream::STREAM_LISTPACKS | stream::STREAM_LISTPACKS_2 => stream::read(r, t),
        _ => None,
    }
}

fn hash_from_pairs(items: Vec<Vec<u8>>) -> Option<Value> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    let mut h = HashValue::new_table();
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        if !h.set(&k, &v, &Limits::default()) {
            return None;
        }
    }
    Some(Value::Hash(h))
}

fn zset_from_pairs(items: Vec<Vec<u8>>) -> Option<Value> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    let mut z = ZSet::new_unpacked();
    let mut it = items.into_iter();
    while let (Some(m), Some(s)) = (it.next(), it.next()) {
        let score = numfmt::parse_f64(&s)?;
        if z.push(&m, score).is_some() {
            return None;
        }
    }
    Some(Value::ZSet(z))
}

fn parse_intset(b: &[u8]) -> Option<SetValue> {
    if b.len() < 8 {
        return None;
    }
    let width = u32::from_le_bytes(b[0..4].try_into().ok()?) as usize;
    let n = u32::from_le_bytes(b[4..8].try_into().ok()?) as usize;
    if !matches!(width, 2 | 4 | 8) || b.len() != 8 + n.checked_mul(width)? {
        return None;
    }
    let mut s = SetValue::new_table();
    for chunk in b[8..].chunks_exact(width) {
        let v = match width {
            2 => i16::from_le_bytes(chunk.try_into().ok()?) as i64,
            4 => i32::from_le_bytes(chunk.try_into().ok()?) as i64,
            _ => i64::from_le_bytes(chunk.try_into().ok()?),
        };
        if !s.insert(
            itoa::Buffer::new().format(v).as_bytes(),
            &Limits::unbounded(),
        ) {
            return None;
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests;
