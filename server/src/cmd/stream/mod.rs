//! The stream commands, as Redis 7.0's `t_stream.c` answers them: appending and trimming
//! (`add`), reading ranges (`range`), XREAD and XREADGROUP with their blocking forms
//! (`read`), consumer groups and their pending entries (`group`, `claim`), and XINFO
//! (`info`).
//!
//! Every time a stream command reads ("now" for auto IDs, delivery and idle times, BLOCK
//! deadlines) comes from the engine's clock, so a test with a manual clock gets
//! deterministic IDs and can make a pending entry idle by moving time.

mod add;
mod claim;
mod delete_ex;
mod group;
mod info;
mod propagate;
mod range;
mod read;
mod read_claim;

pub(crate) use read::{unblock_lost_groups, wake_idle_claims};
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_active;
#[cfg(test)]
mod tests_claim;

use bytes::Bytes;

use super::table::{flags::*, Command};
use crate::db::stream::{lp::Elem, Node, RawEntry, Stream, StreamId};
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;

/// Redis's `string2ull`: a canonical signed integer that is not negative, or what C's
/// `strtoull` accepts in full (leading spaces, a sign, leading zeros, up to 2^64-1).
fn parse_u64(s: &[u8]) -> Option<u64> {
    if let Some(v) = crate::numfmt::parse_i64(s) {
        return (v >= 0).then_some(v as u64);
    }
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    if i >= s.len() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in &s[i..] {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// How an ID argument may be written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdForm {
    /// `-` and `+` allowed (XRANGE bounds, XPENDING, XGROUP SETID).
    Loose,
    /// Only `ms[-seq]` (XADD, XREAD IDs, XCLAIM ...).
    Strict,
}

/// Parses a stream ID as `streamGenericParseIDOrReply`: `ms-seq`, or `ms` with
/// `missing_seq` as the sequence. Returns the ID and whether the sequence was given (false
/// for XADD's `ms-*` when `allow_star`).
pub(crate) fn parse_id_ext(
    arg: &[u8],
    missing_seq: u64,
    form: IdForm,
    allow_star: bool,
) -> Result<(StreamId, bool), Reply> {
    let invalid = || Reply::err(errors::STREAM_INVALID_ID);
    if arg.len() > 127 {
        return Err(invalid());
    }
    // The C code works on a NUL-terminated copy: anything after a NUL byte is unseen.
    let arg = match arg.iter().position(|&b| b == 0) {
        Some(n) => &arg[..n],
        None => arg,
    };
    if arg == b"-" || arg == b"+" {
        if form == IdForm::Strict {
            return Err(invalid());
        }
        return Ok((
            if arg == b"-" {
                StreamId::MIN
            } else {
                StreamId::MAX
            },
            true,
        ));
    }
    let (ms, seq) = match arg.iter().position(|&b| b == b'-') {
        Some(d) => (&arg[..d], Some(&arg[d + 1..])),
        None => (arg, None),
    };
    let ms = parse_u64(ms).ok_or_else(invalid)?;
    match seq {
        None => Ok((StreamId::new(ms, missing_seq), true)),
        Some(b"*") if allow_star => Ok((StreamId::new(ms, 0), false)),
        Some(s) => Ok((StreamId::new(ms, parse_u64(s).ok_or_else(invalid)?), true)),
    }
}

pub(crate) fn parse_id(arg: &[u8], missing_seq: u64, form: IdForm) -> Result<StreamId, Reply> {
    parse_id_ext(arg, missing_seq, form, false).map(|(id, _)| id)
}

/// An interval bound of XRANGE/XPENDING: `(` makes it exclusive (then strict).
pub(crate) fn parse_bound(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), Reply> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_id(&arg[1..], missing_seq, IdForm::Strict)?, true))
    } else {
        Ok((parse_id(arg, missing_seq, IdForm::Loose)?, false))
    }
}

/// The `stream-node-max-entries` and `stream-node-max-bytes` settings.
pub(crate) fn node_limits(e: &Engine) -> (u64, u64) {
    let get = |name: &str, default: u64| {
        e.config
            .extra
            .get(name)
            .and_then(|v| crate::config::params::parse_memory(v))
            .unwrap_or(default)
    };
    (
        get("stream-node-max-entries", 100),
        get("stream-node-max-bytes", 4096),
    )
}

pub(crate) fn id_reply(id: StreamId) -> Reply {
    // Every entry of an XRANGE or XREADGROUP reply has one: itoa, not the formatter.
    let (mut ms, mut seq) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (ms, seq) = (ms.format(id.ms), seq.format(id.seq));
    let mut text = Vec::with_capacity(ms.len() + 1 + seq.len());
    text.extend_from_slice(ms.as_bytes());
    text.push(b'-');
    text.extend_from_slice(seq.as_bytes());
    Reply::Bulk(Bytes::from(text))
}

/// An entry as Redis replies it: `[id, [field, value, ...]]`.
pub(crate) fn entry_reply(node: &Node, e: &RawEntry) -> Reply {
    let mut fields = Vec::with_capacity(node.nfields(e) * 2);
    node.fields(e, |f, v| {
        fields.push(elem_reply(f));
        fields.push(elem_reply(v));
    });
    Reply::Array(vec![id_reply(e.id), Reply::Array(fields)])
}

fn elem_reply(x: Elem<'_>) -> Reply {
    match x {
        Elem::Str(s) => Reply::Bulk(Bytes::copy_from_slice(s)),
        Elem::Int(_) => Reply::Bulk(Bytes::from(x.to_vec())),
    }
}

pub(crate) fn owned_entry_reply(id: StreamId, fields: Vec<(Vec<u8>, Vec<u8>)>) -> Reply {
    let mut out = Vec::with_capacity(fields.len() * 2);
    for (f, v) in fields {
        out.push(Reply::Bulk(Bytes::from(f)));
        out.push(Reply::Bulk(Bytes::from(v)));
    }
    Reply::Array(vec![id_reply(id), Reply::Array(out)])
}

/// Replies with the entries in `start..=end`, at most `count` (0 = all).
pub(crate) fn range_reply(
    s: &Stream,
    start: StreamId,
    end: StreamId,
    count: usize,
    rev: bool,
) -> Reply {
    let mut out = Vec::new();
    s.visit(start, end, rev, |node, e| {
        out.push(entry_reply(node, e));
        count == 0 || out.len() < count
    });
    Reply::Array(out)
}

/// The NOGROUP error of commands that name a key and a group.
pub(crate) fn no_group(key: &[u8], group: &[u8]) -> Reply {
    Reply::err(errors::no_group(key, group))
}

fn xread_keys(args: &[Bytes]) -> Vec<usize> {
    // Keys are the first half of what follows STREAMS.
    let Some(pos) = args
        .iter()
        .skip(1)
        .position(|a| a.eq_ignore_ascii_case(b"streams"))
    else {
        return Vec::new();
    };
    let first = pos + 2;
    let n = (args.len() - first) / 2;
    (first..first + n).collect()
}

pub static XGROUP_SUBCOMMANDS: &[Command] = &[
    Command::new("create", -5, WRITE | DENYOOM, "stream", group::create).keys(2, 2, 1),
    Command::new(
        "createconsumer",
        5,
        WRITE | DENYOOM,
        "stream",
        group::createconsumer,
    )
    .keys(2, 2, 1),
    Command::new("delconsumer", 5, WRITE, "stream", group::delconsumer).keys(2, 2, 1),
    Command::new("destroy", 4, WRITE, "stream", group::destroy).keys(2, 2, 1),
    Command::new("help", 2, LOADING | STALE, "stream", group::help),
    Command::new("setid", -5, WRITE, "stream", group::setid).keys(2, 2, 1),
];

pub static XINFO_SUBCOMMANDS: &[Command] = &[
    Command::new("consumers", 4, READONLY, "stream", info::consumers).keys(2, 2, 1),
    Command::new("groups", 3, READONLY, "stream", info::groups).keys(2, 2, 1),
    Command::new("help", 2, LOADING | STALE, "stream", info::help),
    Command::new("stream", -3, READONLY, "stream", info::stream).keys(2, 2, 1),
];

fn container(_e: &mut Engine, call: &mut crate::engine::Call) -> super::table::CmdResult {
    Err(Reply::err(errors::wrong_arity(&super::args::lower(
        call.arg(0),
    ))))
}

pub static COMMANDS: &[Command] = &[
    Command::new("xadd", -5, WRITE | DENYOOM | FAST, "stream", add::xadd).keys(1, 1, 1),
    Command::new("xtrim", -4, WRITE, "stream", add::xtrim).keys(1, 1, 1),
    Command::new("xdel", -3, WRITE | FAST, "stream", add::xdel).keys(1, 1, 1),
    Command::new("xdelex", -5, WRITE | FAST, "stream", delete_ex::xdelex).keys(1, 1, 1),
    Command::new("xackdel", -6, WRITE | FAST, "stream", delete_ex::xackdel).keys(1, 1, 1),
    Command::new("xlen", 2, READONLY | FAST, "stream", add::xlen).keys(1, 1, 1),
    Command::new("xsetid", -3, WRITE | DENYOOM | FAST, "stream", add::xsetid).keys(1, 1, 1),
    Command::new("xrange", -4, READONLY, "stream", range::xrange).keys(1, 1, 1),
    Command::new("xrevrange", -4, READONLY, "stream", range::xrevrange).keys(1, 1, 1),
    Command::new("xread", -4, READONLY | BLOCKING, "stream", read::xread).movable_keys(xread_keys),
    Command::new(
        "xreadgroup",
        -7,
        WRITE | BLOCKING,
        "stream",
        read::xreadgroup,
    )
    .movable_keys(xread_keys),
    Command::new("xack", -4, WRITE | FAST, "stream", group::xack).keys(1, 1, 1),
    Command::new("xpending", -3, READONLY, "stream", group::xpending).keys(1, 1, 1),
    Command::new("xclaim", -6, WRITE | FAST, "stream", claim::xclaim).keys(1, 1, 1),
    Command::new("xautoclaim", -6, WRITE | FAST, "stream", claim::xautoclaim).keys(1, 1, 1),
    Command::new("xgroup", -2, 0, "stream", container).subcommands(XGROUP_SUBCOMMANDS),
    Command::new("xinfo", -2, 0, "stream", container).subcommands(XINFO_SUBCOMMANDS),
];
