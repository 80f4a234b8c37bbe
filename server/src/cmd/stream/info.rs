//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP. Replies are maps
//! (flat arrays in RESP2) with Redis 7.0's fields in its order.

use super::{id_reply, range_reply};
use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::cmd::table::CmdResult;
use crate::db::stream::{Group, Stream, StreamId, INVALID_ENTRIES_READ};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn field(name: &str, v: Reply) -> (Reply, Reply) {
    (Reply::bulk(name), v)
}

/// The stream named by argument 2; `ERR no such key` when missing.
fn stream_arg<'a>(e: &'a mut Engine, call: &Call) -> Result<&'a Stream, Reply> {
    lookup::<Stream>(e, call.db, &call.args[2])?.ok_or_else(|| Reply::err(errors::NO_SUCH_KEY))
}

fn entries_read(g: &Group) -> Reply {
    if g.entries_read == INVALID_ENTRIES_READ {
        Reply::Nil
    } else {
        Reply::Int(g.entries_read)
    }
}

fn lag(s: &Stream, g: &Group) -> Reply {
    s.lag(g).map_or(Reply::Nil, Reply::Int)
}

/// Whether XINFO shows a consumer's active time (`since::CONSUMER_ACTIVE_TIME`): CONSUMERS'
/// `inactive` and STREAM FULL's `active-time`.
fn shows_active_time(e: &Engine) -> bool {
    e.profile().has(crate::compat::since::CONSUMER_ACTIVE_TIME)
}

/// `XINFO CONSUMERS key group`
pub(super) fn consumers(e: &mut Engine, call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let active = shows_active_time(e);
    let s = stream_arg(e, call)?;
    let Some(g) = s.groups.get(call.arg(3)) else {
        return Err(Reply::err(errors::no_such_group(call.arg(3), call.arg(2))));
    };
    Ok(Reply::Array(
        g.consumers
            .iter()
            .map(|(name, c)| {
                let mut m = vec![
                    field("name", Reply::bulk(name)),
                    field("pending", Reply::Int(c.pel.len() as i64)),
                    field("idle", Reply::Int((now - c.seen_time).max(0))),
                ];
                if active {
                    let inactive = match c.active_time {
                        -1 => -1,
                        t => (now - t).max(0),
                    };
                    m.push(field("inactive", Reply::Int(inactive)));
                }
                Reply::Map(m)
            })
            .collect(),
    ))
}

/// `XINFO GROUPS key`
pub(super) fn groups(e: &mut Engine, call: &mut Call) -> CmdResult {
    let s = stream_arg(e, call)?;
    Ok(Reply::Array(
        s.groups
            .iter()
            .map(|(name, g)| {
                Reply::Map(vec![
                    field("name", Reply::bulk(name)),
                    field("consumers", Reply::Int(g.consumers.len() as i64)),
                    field("pending", Reply::Int(g.pel.len() as i64)),
                    field("last-delivered-id", id_reply(g.last_id)),
                    field("entries-read", entries_read(g)),
                    field("lag", lag(s, g)),
                ])
            })
            .collect(),
    ))
}

/// `XINFO STREAM key [FULL [COUNT n]]`: COUNT (default 10, 0 for all) bounds the entries
/// and each PEL listed.
pub(super) fn stream(e: &mut Engine, call: &mut Call) -> CmdResult {
    let active = shows_active_time(e);
    let s = stream_arg(e, call)?;
    let extra = call.argc() - 3;
    let mut count: i64 = 10;
    let full = extra > 0;
    // Every malformed option list gets the subcommand error, with the name as typed.
    let bad = || Reply::err(errors::subcommand_syntax(b"XINFO", call.arg(1)));
    if full {
        if (extra != 1 && extra != 3) || !args::is(call.arg(3), "full") {
            return Err(bad());
        }
        if extra == 3 {
            if !args::is(call.arg(4), "count") {
                return Err(bad());
            }
            count = args::int(call.arg(5))?;
            if count < 0 {
                count = 10;
            }
        }
    }
    let mut m = vec![
        field("length", Reply::Int(s.len() as i64)),
        field("radix-tree-keys", Reply::Int(s.node_count() as i64)),
        field("radix-tree-nodes", Reply::Int(s.radix_nodes() as i64)),
        field("last-generated-id", id_reply(s.last_id)),
        field("max-deleted-entry-id", id_reply(s.max_deleted_id)),
        field("entries-added", Reply::Int(s.entries_added as i64)),
        field("recorded-first-entry-id", id_reply(s.first_id())),
    ];
    if !full {
        m.push(field("groups", Reply::Int(s.groups.len() as i64)));
        let edge = |rev| match range_reply(s, StreamId::MIN, StreamId::MAX, 1, rev) {
            Reply::Array(mut v) if !v.is_empty() => v.remove(0),
            _ => Reply::Nil,
        };
        m.push(field("first-entry", edge(false)));
        m.push(field("last-entry", edge(true)));
        return Ok(Reply::Map(m));
    }
    let count = count as usize;
    let limit = |n: usize| count == 0 || n < count;
    m.push(field(
        "entries",
        range_reply(s, StreamId::MIN, StreamId::MAX, count, false),
    ));
    let groups = s
        .groups
        .iter()
        .map(|(name, g)| {
            let pending = g
                .pel
                .iter()
                .enumerate()
                .take_while(|(i, _)| limit(*i))
                .map(|(_, (id, n))| {
                    Reply::Array(vec![
                        id_reply(*id),
                        Reply::bulk(&n.consumer[..]),
                        Reply::Int(n.delivery_time),
                        Reply::Int(n.delivery_count as i64),
                    ])
                })
                .collect();
            let consumers = g
                .consumers
                .iter()
                .map(|(cname, c)| {
                    let pel = c
                        .pel
                        .iter()
                        .enumerate()
                        .take_while(|(i, _)| limit(*i))
                        .map(|(_, id)| {
                            let n = &g.pel[id];
                            Reply::Array(vec![
                                id_reply(*id),
                                Reply::Int(n.delivery_time),
                                Reply::Int(n.delivery_count as i64),
                            ])
                        })
                        .collect();
                    let mut m = vec![
                        field("name", Reply::bulk(cname)),
                        field("seen-time", Reply::Int(c.seen_time)),
                    ];
                    if active {
                        m.push(field("active-time", Reply::Int(c.active_time)));
                    }
                    m.push(field("pel-count", Reply::Int(c.pel.len() as i64)));
                    m.push(field("pending", Reply::Array(pel)));
                    Reply::Map(m)
                })
                .collect();
            Reply::Map(vec![
                field("name", Reply::bulk(name)),
                field("last-delivered-id", id_reply(g.last_id)),
                field("entries-read", entries_read(g)),
                field("lag", lag(s, g)),
                field("pel-count", Reply::Int(g.pel.len() as i64)),
                field("pending", Reply::Array(pending)),
                field("consumers", Reply::Array(consumers)),
            ])
        })
        .collect();
    m.push(field("groups", Reply::Array(groups)));
    Ok(Reply::Map(m))
}

pub(super) fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "XINFO",
        &[
            "CONSUMERS <key> <groupname>",
            "    Show consumers of <groupname>.",
            "GROUPS <key>",
            "    Show the stream consumer groups.",
            "STREAM <key> [FULL [COUNT <count>]",
            "    Show information about the stream.",
        ],
    ))
}
