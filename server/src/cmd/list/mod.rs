//! The list commands: pushes and pops at both ends, indexed access, LPOS/LREM/LTRIM/LINSERT,
//! the moves between lists, and the blocking forms (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
//! BLMPOP) that wait for data in `Engine::block`.
//!
//! Behaviour, error texts and keyspace events follow Redis 7.0's `t_list.c`: arguments are
//! checked in the order Redis checks them (some before the key lookup, some after), so a
//! wrong-type key or a missing key wins or loses against a bad argument exactly as it does
//! there. An emptied list is deleted, with a `del` event after the command's own event.

mod access;
mod blocking;
mod moves;
mod push_pop;
#[cfg(test)]
mod tests;

use bytes::Bytes;

use super::table::{flags::*, Command};
use crate::db::{ListValue, Value};
use crate::engine::Engine;
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// Which end of a list an operation works on (Redis's LIST_HEAD / LIST_TAIL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Left,
    Right,
}

impl End {
    /// `LEFT` / `RIGHT`, case-insensitively; anything else is a syntax error.
    fn parse(arg: &[u8]) -> Result<End, Reply> {
        if arg.eq_ignore_ascii_case(b"left") {
            Ok(End::Left)
        } else if arg.eq_ignore_ascii_case(b"right") {
            Ok(End::Right)
        } else {
            Err(Reply::err(errors::SYNTAX))
        }
    }

    fn pop_event(self) -> &'static str {
        match self {
            End::Left => "lpop",
            End::Right => "rpop",
        }
    }

    fn push_event(self) -> &'static str {
        match self {
            End::Left => "lpush",
            End::Right => "rpush",
        }
    }
}

fn pop_end(list: &mut ListValue, end: End) -> Option<Vec<u8>> {
    match end {
        End::Left => list.pop_front(),
        End::Right => list.pop_back(),
    }
}

fn push_end(list: &mut ListValue, value: Vec<u8>, end: End) {
    match end {
        End::Left => list.push_front(value),
        End::Right => list.push_back(value),
    }
}

/// Pops up to `count` elements from one end, in pop order (RPOP 2 on a b c gives c b).
fn pop_many(list: &mut ListValue, end: End, count: usize) -> Vec<Vec<u8>> {
    let n = count.min(list.len());
    match end {
        End::Left => list.drain(..n).collect(),
        End::Right => {
            let start = list.len() - n;
            list.drain(start..).rev().collect()
        }
    }
}

/// Whether `key` exists and holds another type than a list.
fn is_wrong_type(e: &mut Engine, db: usize, key: &[u8]) -> bool {
    matches!(e.db(db).peek(key), Some(entry) if !matches!(entry.value, Value::List(_)))
}

/// Records a change to `key` (WATCH, keyspace event `event`) that Redis counts as `dirty`
/// changes (one per element pushed or removed).
fn changed(e: &mut Engine, db: usize, key: &[u8], event: &str, dirty: u64) {
    e.modified(db, key, notify::LIST, event);
    // `modified` counted one change; Redis counts per element.
    e.dirty = e.dirty.saturating_sub(1).saturating_add(dirty);
}

/// Deletes `key` if its list became empty, with Redis's `del` event; true if deleted.
fn delete_if_empty(e: &mut Engine, db: usize, key: &[u8]) -> bool {
    if e.db(db).remove_if_empty(key) {
        notify::keyspace_event(e, notify::GENERIC, "del", db, key);
        true
    } else {
        false
    }
}

/// The reply to a pop of several elements: an array of bulk strings.
fn bulk_array(items: Vec<Vec<u8>>) -> Reply {
    Reply::Array(
        items
            .into_iter()
            .map(|v| Reply::Bulk(Bytes::from(v)))
            .collect(),
    )
}

/// Key positions of LMPOP (`numkeys` at 1) and BLMPOP (`numkeys` at 2).
fn mpop_keys(args: &[Bytes], numkeys_idx: usize) -> Vec<usize> {
    crate::cmd::table::keyspec::numkeys_keys(args, numkeys_idx, false)
}

fn lmpop_keys(args: &[Bytes]) -> Vec<usize> {
    mpop_keys(args, 1)
}

fn blmpop_keys(args: &[Bytes]) -> Vec<usize> {
    mpop_keys(args, 2)
}

pub static COMMANDS: &[Command] = &[
    Command::new("lpush", -3, WRITE | DENYOOM | FAST, "list", push_pop::lpush).keys(1, 1, 1),
    Command::new("rpush", -3, WRITE | DENYOOM | FAST, "list", push_pop::rpush).keys(1, 1, 1),
    Command::new(
        "lpushx",
        -3,
        WRITE | DENYOOM | FAST,
        "list",
        push_pop::lpushx,
    )
    .keys(1, 1, 1),
    Command::new(
        "rpushx",
        -3,
        WRITE | DENYOOM | FAST,
        "list",
        push_pop::rpushx,
    )
    .keys(1, 1, 1),
    Command::new("lpop", -2, WRITE | FAST, "list", push_pop::lpop).keys(1, 1, 1),
    Command::new("rpop", -2, WRITE | FAST, "list", push_pop::rpop).keys(1, 1, 1),
    Command::new("llen", 2, READONLY | FAST, "list", access::llen).keys(1, 1, 1),
    Command::new("lrange", 4, READONLY, "list", access::lrange).keys(1, 1, 1),
    Command::new("lindex", 3, READONLY, "list", access::lindex).keys(1, 1, 1),
    Command::new("lset", 4, WRITE | DENYOOM, "list", access::lset).keys(1, 1, 1),
    Command::new("linsert", 5, WRITE | DENYOOM, "list", access::linsert).keys(1, 1, 1),
    Command::new("lrem", 4, WRITE, "list", access::lrem).keys(1, 1, 1),
    Command::new("ltrim", 4, WRITE, "list", access::ltrim).keys(1, 1, 1),
    Command::new("lpos", -3, READONLY, "list", access::lpos).keys(1, 1, 1),
    Command::new("lmove", 5, WRITE | DENYOOM, "list", moves::lmove).keys(1, 2, 1),
    Command::new("rpoplpush", 3, WRITE | DENYOOM, "list", moves::rpoplpush).keys(1, 2, 1),
    Command::new("lmpop", -4, WRITE, "list", moves::lmpop).movable_keys(lmpop_keys),
    Command::new(
        "blpop",
        -3,
        WRITE | NOSCRIPT | BLOCKING,
        "list",
        blocking::blpop,
    )
    .keys(1, -2, 1),
    Command::new(
        "brpop",
        -3,
        WRITE | NOSCRIPT | BLOCKING,
        "list",
        blocking::brpop,
    )
    .keys(1, -2, 1),
    Command::new(
        "blmove",
        6,
        WRITE | DENYOOM | NOSCRIPT | BLOCKING,
        "list",
        blocking::blmove,
    )
    .keys(1, 2, 1),
    Command::new(
        "brpoplpush",
        4,
        WRITE | DENYOOM | NOSCRIPT | BLOCKING,
        "list",
        blocking::brpoplpush,
    )
    .keys(1, 2, 1),
    Command::new("blmpop", -5, WRITE | BLOCKING, "list", blocking::blmpop)
        .movable_keys(blmpop_keys),
];
