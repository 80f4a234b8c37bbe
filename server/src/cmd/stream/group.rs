//! XGROUP (CREATE, CREATECONSUMER, DELCONSUMER, DESTROY, SETID, HELP), XACK and XPENDING.

use crate::cmd::lookup::{lookup, lookup_mut};
use bytes::Bytes;

use super::{id_reply, no_group, parse_bound, parse_id, IdForm};
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::db::stream::{Group, Stream, StreamId, INVALID_ENTRIES_READ};
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

fn sub_syntax(call: &Call) -> Reply {
    Reply::err(errors::subcommand_syntax(b"XGROUP", call.arg(1)))
}

fn entries_read_arg(arg: &[u8]) -> Result<i64, Reply> {
    let n = args::int(arg)?;
    if n < 0 && n != INVALID_ENTRIES_READ {
        return Err(Reply::err(errors::XGROUP_ENTRIESREAD_RANGE));
    }
    Ok(n)
}

/// The stream an XGROUP subcommand works on: WRONGTYPE first, then (unless MKSTREAM) the
/// key must exist, then SETID/CREATECONSUMER/DELCONSUMER need the group.
fn group_stream<'a>(
    e: &'a mut Engine,
    call: &Call,
    mkstream: bool,
    need_group: bool,
) -> Result<Option<&'a mut Stream>, Reply> {
    let key = &call.args[2];
    let s = lookup_mut::<Stream>(e, call.db, key)?;
    if mkstream {
        return Ok(s);
    }
    let Some(s) = s else {
        return Err(Reply::err(errors::XGROUP_KEY_REQUIRED));
    };
    if need_group && !s.groups.contains_key(&call.args[3][..]) {
        return Err(Reply::err(errors::no_such_group(call.arg(3), key)));
    }
    Ok(Some(s))
}

/// `XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n]`
pub(super) fn create(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut mkstream = false;
    let mut entries_read = INVALID_ENTRIES_READ;
    let mut i = 5;
    while i < call.argc() {
        if args::is(call.arg(i), "mkstream") {
            mkstream = true;
            i += 1;
        } else if args::is(call.arg(i), "entriesread") && i + 1 < call.argc() {
            entries_read = entries_read_arg(call.arg(i + 1))?;
            i += 2;
        } else {
            return Err(sub_syntax(call));
        }
    }
    if call.argc() > 8 {
        return Err(sub_syntax(call));
    }
    let db = call.db;
    let key = call.args[2].clone();
    let s = group_stream(e, call, mkstream, false)?;
    let id = if call.arg(4) == b"$" {
        s.as_ref().map_or(StreamId::MIN, |s| s.last_id)
    } else {
        parse_id(call.arg(4), 0, IdForm::Strict)?
    };
    if s.is_none() {
        e.db(db).set(&key, Value::Stream(Box::new(Stream::new())));
        e.touch_watched(db, &key);
    }
    let s = lookup_mut::<Stream>(e, db, &key)?.expect("exists");
    let name = call.args[3].to_vec();
    if s.groups.contains_key(&name) {
        return Err(Reply::err(
            crate::errors::CONSUMER_GROUP_NAME_ALREADY_EXISTS,
        ));
    }
    s.groups.insert(name, Group::new(id, entries_read));
    e.dirty += 1;
    notify::keyspace_event(e, notify::STREAM, "xgroup-create", db, &key);
    Ok(Reply::ok())
}

/// `XGROUP SETID key group id|$ [ENTRIESREAD n]`
pub(super) fn setid(e: &mut Engine, call: &mut Call) -> CmdResult {
    // Redis reads every ENTRIESREAD pair first, then looks the key and group up, and only
    // then refuses a repeated option (any count but 5 or 7 arguments).
    let mut entries_read = INVALID_ENTRIES_READ;
    let mut i = 5;
    while i < call.argc() {
        if args::is(call.arg(i), "entriesread") && i + 1 < call.argc() {
            entries_read = entries_read_arg(call.arg(i + 1))?;
            i += 2;
        } else {
            return Err(sub_syntax(call));
        }
    }
    let argc = call.argc();
    let syntax = sub_syntax(call);
    let db = call.db;
    let key = call.args[2].clone();
    let s = group_stream(e, call, false, true)?.expect("checked");
    if argc != 5 && argc != 7 {
        return Err(syntax);
    }
    let id = if call.arg(4) == b"$" {
        s.last_id
    } else {
        parse_id(call.arg(4), 0, IdForm::Loose)?
    };
    let g = s.groups.get_mut(call.arg(3)).expect("checked");
    g.last_id = id;
    g.entries_read = entries_read;
    e.dirty += 1;
    notify::keyspace_event(e, notify::STREAM, "xgroup-setid", db, &key);
    Ok(Reply::ok())
}

/// `XGROUP DESTROY key group`: wakes XREADGROUP clients blocked on it with NOGROUP.
pub(super) fn destroy(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = call.db;
    let key = call.args[2].clone();
    let s = group_stream(e, call, false, false)?.expect("checked");
    if s.groups.remove(call.arg(3)).is_none() {
        return Ok(Reply::Int(0));
    }
    e.dirty += 1;
    notify::keyspace_event(e, notify::STREAM, "xgroup-destroy", db, &key);
    e.signal_ready(db, &key);
    Ok(Reply::Int(1))
}

/// `XGROUP CREATECONSUMER key group consumer`
pub(super) fn createconsumer(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = call.db;
    let key = call.args[2].clone();
    let now = e.now_ms;
    let s = group_stream(e, call, false, true)?.expect("checked");
    let g = s.groups.get_mut(call.arg(3)).expect("checked");
    if !g.create_consumer(call.arg(4), now) {
        return Ok(Reply::Int(0));
    }
    e.dirty += 1;
    notify::keyspace_event(e, notify::STREAM, "xgroup-createconsumer", db, &key);
    Ok(Reply::Int(1))
}

/// `XGROUP DELCONSUMER key group consumer`: answers how many entries it had pending.
pub(super) fn delconsumer(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = call.db;
    let key = call.args[2].clone();
    let s = group_stream(e, call, false, true)?.expect("checked");
    let g = s.groups.get_mut(call.arg(3)).expect("checked");
    let Some(pending) = g.delete_consumer(call.arg(4)) else {
        return Ok(Reply::Int(0));
    };
    e.dirty += 1;
    notify::keyspace_event(e, notify::STREAM, "xgroup-delconsumer", db, &key);
    Ok(Reply::Int(pending as i64))
}

pub(super) fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "XGROUP",
        &[
            "CREATE <key> <groupname> <id|$> [option]",
            "    Create a new consumer group. Options are:",
            "    * MKSTREAM",
            "      Create the empty stream if it does not exist.",
            "    * ENTRIESREAD entries_read",
            "      Set the group's entries_read counter (internal use).",
            "CREATECONSUMER <key> <groupname> <consumer>",
            "    Create a new consumer in the specified group.",
            "DELCONSUMER <key> <groupname> <consumer>",
            "    Remove the specified consumer.",
            "DESTROY <key> <groupname>",
            "    Remove the specified group.",
            "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
            "    Set the current group ID and entries_read counter.",
        ],
    ))
}

/// `XACK key group id [id ...]`: a missing key or group acknowledges nothing; the IDs are
/// all checked before any is acknowledged.
pub(super) fn xack(e: &mut Engine, call: &mut Call) -> CmdResult {
    let Some(s) = lookup_mut::<Stream>(e, call.db, &call.args[1])? else {
        return Ok(Reply::Int(0));
    };
    if !s.groups.contains_key(call.arg(2)) {
        return Ok(Reply::Int(0));
    }
    let ids = call.args[3..]
        .iter()
        .map(|a| parse_id(a, 0, IdForm::Strict))
        .collect::<Result<Vec<_>, _>>()?;
    let g = s.groups.get_mut(call.arg(2)).expect("checked");
    let acked = ids.into_iter().filter(|id| g.ack(*id)).count();
    e.dirty += acked as u64;
    Ok(Reply::Int(acked as i64))
}

/// `XPENDING key group [[IDLE min-idle] start end count [consumer]]`
pub(super) fn xpending(e: &mut Engine, call: &mut Call) -> CmdResult {
    let argc = call.argc();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(Reply::err(errors::SYNTAX));
    }
    let mut range = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if args::is(call.arg(3), "idle") {
            min_idle = args::int(call.arg(4))?;
            if argc < 8 {
                return Err(Reply::err(errors::SYNTAX));
            }
            at += 2;
        }
        let count = args::int(call.arg(at + 2))?.max(0) as u64;
        let (mut start, ex) = parse_bound(call.arg(at), 0)?;
        if ex {
            start = start
                .incr()
                .ok_or_else(|| Reply::err(crate::errors::INVALID_START_ID_FOR_THE_INTERVAL))?;
        }
        let (mut end, ex) = parse_bound(call.arg(at + 1), u64::MAX)?;
        if ex {
            end = end
                .decr()
                .ok_or_else(|| Reply::err(crate::errors::INVALID_END_ID_FOR_THE_INTERVAL))?;
        }
        let consumer = call.args.get(at + 3).cloned();
        range = Some((min_idle, start, end, count, consumer));
    }
    let now = e.now_ms;
    let s = lookup::<Stream>(e, call.db, &call.args[1])?;
    let Some(g) = s.and_then(|s| s.groups.get(call.arg(2))) else {
        return Err(no_group(call.arg(1), call.arg(2)));
    };
    let Some((min_idle, start, end, mut count, consumer)) = range else {
        let (Some(first), Some(last)) = (g.pel.keys().next(), g.pel.keys().next_back()) else {
            return Ok(Reply::Array(vec![
                Reply::Int(0),
                Reply::Nil,
                Reply::Nil,
                Reply::NilArray,
            ]));
        };
        let consumers = g
            .consumers
            .iter()
            .filter(|(_, c)| !c.pel.is_empty())
            .map(|(name, c)| {
                Reply::Array(vec![
                    Reply::bulk(name),
                    Reply::Bulk(Bytes::from(c.pel.len().to_string())),
                ])
            })
            .collect();
        return Ok(Reply::Array(vec![
            Reply::Int(g.pel.len() as i64),
            id_reply(*first),
            id_reply(*last),
            Reply::Array(consumers),
        ]));
    };
    let ids: Box<dyn Iterator<Item = StreamId>> = match &consumer {
        Some(name) => match g.consumers.get(&name[..]) {
            Some(c) => Box::new(c.pel.range(start..).copied()),
            None => return Ok(Reply::Array(Vec::new())),
        },
        None => Box::new(g.pel.range(start..).map(|(id, _)| *id)),
    };
    let mut out = Vec::new();
    for id in ids {
        if count == 0 || id > end {
            break;
        }
        let nack = &g.pel[&id];
        if min_idle != 0 && now - nack.delivery_time < min_idle {
            continue;
        }
        count -= 1;
        out.push(Reply::Array(vec![
            id_reply(id),
            Reply::bulk(&nack.consumer[..]),
            Reply::Int((now - nack.delivery_time).max(0)),
            Reply::Int(nack.delivery_count as i64),
        ]));
    }
    Ok(Reply::Array(out))
}
