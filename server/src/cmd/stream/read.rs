//! XREAD and XREADGROUP, and their BLOCK forms.
//!
//! A read that finds nothing blocks in `Engine::block` on its keys. Before blocking, a `$`
//! ID is replaced in the stored arguments by the stream's last ID at that moment, so when an
//! XADD makes a key ready and the engine runs the command again (`call.reprocessing`, with
//! the ready key in `Engine::serving_key`) it serves exactly what arrived after the call, as
//! Redis does. A blocked XREADGROUP always reads past its group's current last ID; if the
//! group or the key went away meanwhile it is answered with Redis's errors (see
//! `unblock_lost_groups`). Inside MULTI and scripts nothing blocks: MULTI gets the timeout
//! reply at once, and a script may not use BLOCK at all.

use crate::cmd::lookup::lookup_mut;
use bytes::Bytes;

use super::propagate::{self, Op};
use super::{entry_reply, id_reply, parse_id, read_claim, IdForm};
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::compat::since;
use crate::db::stream::{Stream, StreamId};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// What a blocked read serves at most when it gave no COUNT (XREAD_BLOCKED_DEFAULT_COUNT).
const BLOCKED_DEFAULT_COUNT: usize = 1000;

struct ReadArgs {
    /// BLOCK given: its deadline (None: forever).
    block: Option<Option<i64>>,
    count: usize,
    /// Index of the first key.
    keys_at: usize,
    nkeys: usize,
    group: Option<(Bytes, Bytes)>,
    noack: bool,
    /// CLAIM min-idle-time (Redis 8.4, `read_claim`).
    claim: Option<i64>,
}

pub(super) fn xread(e: &mut Engine, call: &mut Call) -> CmdResult {
    read(e, call, false)
}

pub(super) fn xreadgroup(e: &mut Engine, call: &mut Call) -> CmdResult {
    read(e, call, true)
}

fn parse(e: &Engine, call: &Call, group_cmd: bool) -> Result<ReadArgs, Reply> {
    let mut a = ReadArgs {
        block: None,
        count: 0,
        keys_at: 0,
        nkeys: 0,
        group: None,
        noack: false,
        claim: None,
    };
    let argc = call.argc();
    let mut i = 1;
    while i < argc {
        let more = argc - i - 1;
        let o = call.arg(i);
        if args::is(o, "block") && more > 0 {
            // Redis 7.2 runs it as a non-blocking read (`BLOCKING_IN_SCRIPTS`).
            if call.in_script && !e.profile().has(crate::compat::since::BLOCKING_IN_SCRIPTS) {
                return Err(Reply::err(errors::block_in_script(call.arg(0))));
            }
            i += 1;
            let ms = crate::numfmt::parse_i64(call.arg(i))
                .ok_or_else(|| Reply::err(crate::errors::PAUSE_TIMEOUT_NOT_INTEGER))?;
            if ms < 0 {
                return Err(Reply::err(errors::TIMEOUT_NEGATIVE));
            }
            a.block = Some(if ms == 0 {
                None
            } else {
                if ms > i64::MAX - e.now_ms {
                    return Err(Reply::err(errors::TIMEOUT_OUT_OF_RANGE));
                }
                Some(e.now_ms + ms)
            });
        } else if args::is(o, "count") && more > 0 {
            i += 1;
            a.count = args::int(call.arg(i))?.max(0) as usize;
        } else if args::is(o, "streams") && more > 0 {
            a.keys_at = i + 1;
            let n = argc - a.keys_at;
            if !n.is_multiple_of(2) {
                // Redis 7.0 words it the same for XREADGROUP; 7.2 names the command and
                // the ID it expects (`since::STREAM_GROUPS_72`).
                if e.profile().has(crate::compat::since::STREAM_GROUPS_72) {
                    return Err(Reply::err(crate::errors::unbalanced_streams_72(group_cmd)));
                }
                return Err(Reply::err(
                    crate::errors::UNBALANCED_XREAD_LIST_OF_STREAMS_FOR,
                ));
            }
            a.nkeys = n / 2;
            break;
        } else if args::is(o, "group") && more >= 2 {
            if !group_cmd {
                return Err(Reply::err(
                    crate::errors::THE_GROUP_OPTION_IS_ONLY_SUPPORTED,
                ));
            }
            a.group = Some((call.args[i + 1].clone(), call.args[i + 2].clone()));
            i += 2;
        } else if args::is(o, "noack") {
            if !group_cmd {
                return Err(Reply::err(
                    crate::errors::THE_NOACK_OPTION_IS_ONLY_SUPPORTED,
                ));
            }
            a.noack = true;
        } else if args::is(o, "claim")
            && more > 0
            && e.has_option(crate::compat::since::XREADGROUP_CLAIM, "xreadgroup CLAIM")
        {
            if !group_cmd {
                return Err(Reply::err(
                    crate::errors::THE_CLAIM_OPTION_IS_ONLY_SUPPORTED,
                ));
            }
            i += 1;
            // As XCLAIM and XAUTOCLAIM read theirs: a negative time claims every entry.
            let ms = crate::numfmt::parse_i64(call.arg(i))
                .ok_or_else(|| Reply::err(crate::errors::INVALID_MIN_IDLE_TIME_XREADGROUP))?;
            a.claim = Some(ms.max(0));
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 1;
    }
    if a.keys_at == 0 {
        return Err(Reply::err(errors::SYNTAX));
    }
    if group_cmd && a.group.is_none() {
        return Err(Reply::err(
            crate::errors::MISSING_GROUP_OPTION_FOR_XREADGROUP,
        ));
    }
    Ok(a)
}

fn read(e: &mut Engine, call: &mut Call, group_cmd: bool) -> CmdResult {
    let a = parse(e, call, group_cmd)?;
    if call.reprocessing {
        if let Some(key) = e.serving_key.clone() {
            return serve_blocked(e, call, &a, &key);
        }
    }
    let db = call.db;
    // Resolve every ID first: a missing group or a bad ID fails the whole command.
    let mut ids = Vec::with_capacity(a.nkeys);
    for k in 0..a.nkeys {
        let key = call.args[a.keys_at + k].clone();
        let id_arg = call.args[a.keys_at + a.nkeys + k].clone();
        // `+` is an ID from Redis 7.4 (XREAD's, recorded where the profile lacks it); before,
        // an invalid one.
        let plus = &id_arg[..] == b"+"
            && if group_cmd {
                e.profile().has(since::XREAD_LAST_ENTRY)
            } else {
                e.has_option(since::XREAD_LAST_ENTRY, "xread + ID")
            };
        let s = lookup_mut::<Stream>(e, db, &key)?;
        if let Some((group, _)) = &a.group {
            if !s
                .as_ref()
                .is_some_and(|s| s.groups.contains_key(&group[..]))
            {
                return Err(Reply::err(errors::no_group_xreadgroup(&key, group)));
            }
        }
        let id = if &id_arg[..] == b"$" {
            if group_cmd {
                return Err(Reply::err(crate::errors::THE_ID_IS_MEANINGLESS_IN_THE));
            }
            s.map_or(StreamId::MIN, |s| s.last_id)
        } else if plus {
            // The last entry: read after the ID just before the stream's last ID (so COUNT
            // does not matter, and a last entry deleted since leaves nothing to read, as in
            // Redis 7.4 and valkey-server 8.1); a missing key reads from 0-0.
            if group_cmd {
                return Err(Reply::err(crate::errors::THE_PLUS_ID_IS_MEANINGLESS));
            }
            match s {
                Some(s) => s
                    .last_id
                    .decr()
                    .ok_or_else(|| Reply::err(crate::errors::STREAM_LAST_ID_IS_ZERO))?,
                None => StreamId::MIN,
            }
        } else if &id_arg[..] == b">" {
            if !group_cmd {
                return Err(Reply::err(crate::errors::THE_ID_CAN_BE_SPECIFIED_ONLY));
            }
            StreamId::MAX
        } else {
            parse_id(&id_arg, 0, IdForm::Strict)?
        };
        ids.push(id);
    }

    let now = e.now_ms;
    let eager_consumers = e.profile().has(crate::compat::since::STREAM_GROUPS_72);
    // What goes on the replication stream instead of XREADGROUP (`propagate`).
    let mut ops: Option<Vec<Op>> = (group_cmd && e.repl.feeding()).then(Vec::new);
    let mut served: Vec<(Reply, Reply)> = Vec::new();
    for (k, &gt) in ids.iter().enumerate() {
        let key = call.args[a.keys_at + k].clone();
        let Some(s) = lookup_mut::<Stream>(e, db, &key)? else {
            continue;
        };
        let reply = match &a.group {
            None => {
                if s.is_empty() || s.last_valid_id() <= gt {
                    continue;
                }
                super::range_reply(
                    s,
                    gt.incr().unwrap_or(StreamId::MAX),
                    StreamId::MAX,
                    a.count,
                    false,
                )
            }
            Some((group, consumer)) => {
                let history = gt != StreamId::MAX;
                let last = s.groups[&group[..]].last_id;
                // CLAIM applies to the `>` ID only.
                let claim = a.claim.filter(|_| !history);
                let fresh = !(s.is_empty() || s.last_valid_id() <= last);
                let idle = claim.is_some_and(|ms| read_claim::has_idle(s, group, ms, now));
                let serve = history || fresh || idle;
                // Redis 7.0 looks the consumer up (or creates it) only for a stream being
                // served; 7.2 for every stream named (`since::STREAM_GROUPS_72`).
                if !serve && !eager_consumers {
                    continue;
                }
                let created = touch_consumer(s, group, consumer, now);
                if let Some(ops) = ops.as_mut().filter(|_| created && a.noack) {
                    ops.push(propagate::create_consumer(&key, group, consumer));
                }
                if !serve {
                    if created {
                        notify::keyspace_event(
                            e,
                            notify::STREAM,
                            "xgroup-createconsumer",
                            db,
                            &key,
                        );
                        e.dirty += 1;
                    }
                    continue;
                }
                let reply = if history {
                    history_reply(s, group, consumer, gt, a.count, now)
                } else {
                    let to = Delivery {
                        group,
                        consumer,
                        last,
                        count: a.count,
                        noack: a.noack,
                        now,
                    };
                    match claim {
                        Some(ms) => {
                            deliver_claiming(s, &to, ms, ops.as_mut().map(|o| (&key[..], o)))
                        }
                        None => deliver_new(s, &to, ops.as_mut().map(|o| (&key[..], o))),
                    }
                };
                if created {
                    notify::keyspace_event(e, notify::STREAM, "xgroup-createconsumer", db, &key);
                }
                e.dirty += 1;
                reply
            }
        };
        served.push((Reply::Bulk(key), reply));
    }
    if let Some(ops) = ops {
        e.replicate_as(db, ops);
    }
    if !served.is_empty() {
        return Ok(keyed_reply(call.resp, served));
    }
    match a.block {
        Some(deadline) => {
            if call.in_multi {
                return Ok(Reply::NilArray);
            }
            // Remember `$` (and `+`) as the ID it stood for.
            for (k, id) in ids.iter().enumerate() {
                let idx = a.keys_at + a.nkeys + k;
                if matches!(&call.args[idx][..], b"$" | b"+") {
                    call.args[idx] = Bytes::from(id.to_string());
                }
            }
            let keys = (0..a.nkeys)
                .map(|k| call.args[a.keys_at + k].to_vec())
                .collect();
            Ok(e.block(call, keys, deadline, Reply::NilArray))
        }
        None => Ok(Reply::NilArray),
    }
}

/// The reply naming each served stream: an array of [key, entries] pairs, or in RESP3 a map.
fn keyed_reply(resp: u8, served: Vec<(Reply, Reply)>) -> Reply {
    if resp >= 3 {
        Reply::Map(served)
    } else {
        Reply::Array(
            served
                .into_iter()
                .map(|(k, v)| Reply::Array(vec![k, v]))
                .collect(),
        )
    }
}

/// Looks the consumer up, refreshing its seen time, or creates it; true if created.
fn touch_consumer(s: &mut Stream, group: &[u8], consumer: &[u8], now: i64) -> bool {
    let g = s.groups.get_mut(group).expect("checked");
    match g.consumers.get_mut(consumer) {
        Some(c) => {
            c.seen_time = now;
            false
        }
        None => g.create_consumer(consumer, now),
    }
}

/// A delivery of new entries to a consumer of a group.
#[derive(Clone, Copy)]
struct Delivery<'a> {
    group: &'a [u8],
    consumer: &'a [u8],
    /// The group's last ID before it.
    last: StreamId,
    count: usize,
    noack: bool,
    now: i64,
}

/// Delivers entries after `to.last` to the consumer: the group's last ID and read counter
/// move with each one, and unless NOACK each becomes pending for the consumer. With `ops`
/// (a replica is attached), what the replica needs goes there for the stream `key`: an
/// XCLAIM per pending entry, or for NOACK one XGROUP SETID.
fn deliver_new(s: &mut Stream, to: &Delivery, mut ops: Option<(&[u8], &mut Vec<Op>)>) -> Reply {
    let Some(start) = to.last.incr() else {
        return Reply::Array(Vec::new());
    };
    let count = to.count;
    let mut items = Vec::new();
    let mut out = Vec::new();
    s.visit(start, StreamId::MAX, false, |node, en| {
        items.push(en.id);
        out.push(entry_reply(node, en));
        count == 0 || out.len() < count
    });
    let delivered = !items.is_empty();
    for id in items {
        let tomb = s.range_has_tombstones(id, StreamId::MAX);
        let estimate = s.estimate_distance(id);
        let added = s.entries_added;
        let g = s.groups.get_mut(to.group).expect("checked");
        if id > g.last_id {
            if g.entries_read != crate::db::stream::INVALID_ENTRIES_READ && !tomb {
                g.entries_read += 1;
            } else if added > 0 {
                g.entries_read = estimate;
            }
            g.last_id = id;
        }
        if !to.noack {
            g.deliver(id, to.consumer, to.now);
            if let Some((key, ops)) = ops.as_mut() {
                ops.push(propagate::xclaim(key, to.group, id, &g.pel[&id], g.last_id));
            }
        }
    }
    if delivered && !to.noack {
        let g = s.groups.get_mut(to.group).expect("checked");
        g.mark_active(to.consumer, to.now);
    }
    if let Some((key, ops)) = ops.filter(|_| to.noack && delivered) {
        ops.push(propagate::setid(key, to.group, &s.groups[to.group]));
    }
    Reply::Array(out)
}

/// XREADGROUP ... CLAIM with `>`: the idle pending entries claimed first, then new entries
/// up to what is left of COUNT, every entry with CLAIM's two extra elements (`read_claim`).
fn deliver_claiming(
    s: &mut Stream,
    to: &Delivery,
    min_idle: i64,
    mut ops: Option<(&[u8], &mut Vec<Op>)>,
) -> Reply {
    let mut out = read_claim::claim_idle(
        s,
        to.group,
        to.consumer,
        min_idle,
        to.count,
        to.now,
        ops.as_mut().map(|(k, o)| (*k, &mut **o)),
    );
    let left = match to.count {
        0 => Some(0),
        n => n.checked_sub(out.len()).filter(|&l| l > 0),
    };
    if let Some(count) = left {
        let rest = Delivery { count, ..*to };
        out.extend(read_claim::as_new(deliver_new(s, &rest, ops)));
    }
    Reply::Array(out)
}

/// Re-reads the consumer's own pending entries after `gt`: each delivered again (time and
/// count updated), or `[id, nil]` for one deleted from the stream meanwhile.
fn history_reply(
    s: &mut Stream,
    group: &[u8],
    consumer: &[u8],
    gt: StreamId,
    count: usize,
    now: i64,
) -> Reply {
    let Some(start) = gt.incr() else {
        return Reply::Array(Vec::new());
    };
    let ids: Vec<StreamId> = {
        let c = &s.groups[group].consumers[consumer];
        let it = c.pel.range(start..).copied();
        if count == 0 {
            it.collect()
        } else {
            it.take(count).collect()
        }
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match s.get(id) {
            Some(fields) => {
                out.push(super::owned_entry_reply(id, fields));
                if let Some(n) = s.groups.get_mut(group).and_then(|g| g.pel.get_mut(&id)) {
                    n.delivery_time = now;
                    n.delivery_count += 1;
                }
            }
            None => out.push(Reply::Array(vec![id_reply(id), Reply::NilArray])),
        }
    }
    Reply::Array(out)
}

/// A blocked read run again because `key` got data (or lost its stream or group).
fn serve_blocked(e: &mut Engine, call: &Call, a: &ReadArgs, key: &[u8]) -> CmdResult {
    let db = call.db;
    let now = e.now_ms;
    let feeding = e.repl.feeding();
    let Some(k) = (0..a.nkeys).find(|&k| &call.args[a.keys_at + k][..] == key) else {
        return Ok(Reply::None);
    };
    // From Redis 7.2 the woken command runs again as a fresh call would.
    let rerun = e.profile().has(crate::compat::since::STREAM_GROUPS_72);
    let s = match lookup_mut::<Stream>(e, db, key) {
        Ok(Some(s)) => s,
        Err(wrongtype) if rerun && a.group.is_some() => return Err(wrongtype),
        _ => match &a.group {
            Some((group, _)) if rerun => {
                return Err(Reply::err(crate::errors::no_group_xreadgroup(key, group)));
            }
            Some(_) => {
                return Err(Reply::err(crate::errors::THE_STREAM_KEY_NO_LONGER_EXISTS));
            }
            None => return Ok(Reply::None),
        },
    };
    let count = if a.count == 0 {
        BLOCKED_DEFAULT_COUNT
    } else {
        a.count
    };
    let reply = match &a.group {
        None => {
            let gt = parse_id(&call.args[a.keys_at + a.nkeys + k], 0, IdForm::Strict)
                .unwrap_or(StreamId::MAX);
            if s.last_id <= gt {
                return Ok(Reply::None);
            }
            super::range_reply(
                s,
                gt.incr().unwrap_or(StreamId::MAX),
                StreamId::MAX,
                count,
                false,
            )
        }
        Some((group, consumer)) => {
            let Some(g) = s.groups.get(&group[..]) else {
                if rerun {
                    return Err(Reply::err(crate::errors::no_group_xreadgroup(key, group)));
                }
                return Err(Reply::err(
                    crate::errors::THE_CONSUMER_GROUP_THIS_CLIENT_WAS,
                ));
            };
            let last = g.last_id;
            // With CLAIM, a pending entry idle long enough serves it too (`wake_idle_claims`
            // wakes it for that on the clock).
            let idle = a
                .claim
                .is_some_and(|ms| read_claim::has_idle(s, group, ms, now));
            if s.last_id <= last && !idle {
                return Ok(Reply::None);
            }
            // A fresh call finds nothing past the group's last ID when the new entries were
            // deleted again, and blocks on.
            if rerun && (s.is_empty() || s.last_valid_id() <= last) && !idle {
                return Ok(Reply::None);
            }
            let created = touch_consumer(s, group, consumer, now);
            let mut ops: Option<Vec<Op>> = feeding.then(Vec::new);
            if let Some(ops) = ops.as_mut().filter(|_| created && a.noack) {
                ops.push(propagate::create_consumer(key, group, consumer));
            }
            let to = Delivery {
                group,
                consumer,
                last,
                count,
                noack: a.noack,
                now,
            };
            let r = match a.claim {
                Some(ms) => deliver_claiming(s, &to, ms, ops.as_mut().map(|o| (key, o))),
                None => deliver_new(s, &to, ops.as_mut().map(|o| (key, o))),
            };
            if created {
                notify::keyspace_event(e, notify::STREAM, "xgroup-createconsumer", db, key);
            }
            if let Some(ops) = ops {
                e.replicate_as(db, ops);
            }
            e.dirty += 1;
            r
        }
    };
    Ok(keyed_reply(call.resp, vec![(Reply::bulk(key), reply)]))
}

/// Wakes XREADGROUP ... CLAIM clients blocked on a stream where a pending entry of their
/// group has now been idle for their min-idle-time (Redis 8.4: a blocked claiming reader is
/// served once there is something to claim, not only when an XADD comes). Called on the
/// engine's clock (`Engine::tick`); signals the stream ready, so the reader is served as an
/// XADD would have it served. Returns whether it signalled any. Costs nothing while no
/// client is blocked.
pub(crate) fn wake_idle_claims(e: &mut Engine) -> bool {
    if e.blocking_keys.is_empty() {
        return false;
    }
    let now = e.now_ms;
    let mut waiting = Vec::new();
    for s in e.sessions.values() {
        let Some(b) = &s.blocked else { continue };
        if !b.args[0].eq_ignore_ascii_case(b"xreadgroup") {
            continue;
        }
        if let Some((group, ms)) = claim_of(&b.args) {
            for k in &b.keys {
                waiting.push((b.db, k.clone(), group.clone(), ms));
            }
        }
    }
    let mut woke = false;
    for (db, key, group, ms) in waiting {
        let ready = match e.db(db).get_shared(&key).map(|en| &en.value) {
            Some(crate::db::Value::Stream(s)) => {
                s.groups.contains_key(&group[..]) && read_claim::has_idle(s, &group, ms, now)
            }
            _ => false,
        };
        if ready {
            e.signal_ready(db, &key);
            woke = true;
        }
    }
    woke
}

/// The group and CLAIM min-idle-time of a blocked XREADGROUP's arguments (it parsed them
/// when it blocked, so they are well formed), or None without CLAIM.
fn claim_of(args: &[Bytes]) -> Option<(Bytes, i64)> {
    let (mut group, mut claim) = (None, None);
    let mut i = 1;
    while i < args.len() && !args::is(&args[i], "streams") {
        if args::is(&args[i], "group") {
            group = args.get(i + 1).cloned();
            i += 3;
        } else if args::is(&args[i], "noack") {
            i += 1;
        } else {
            if args::is(&args[i], "claim") {
                claim = args
                    .get(i + 1)
                    .and_then(|v| crate::numfmt::parse_i64(v))
                    .map(|ms| ms.max(0));
            }
            i += 2;
        }
    }
    Some((group?, claim?))
}

/// Wakes XREADGROUP clients whose stream was deleted or replaced, or whose group is gone,
/// so they get Redis's errors (Redis signals deleted keys as ready for this). Called after
/// every command; costs nothing while no client is blocked.
pub(crate) fn unblock_lost_groups(e: &mut Engine) {
    if e.blocking_keys.is_empty() {
        return;
    }
    let mut lost = Vec::new();
    for s in e.sessions.values() {
        let Some(b) = &s.blocked else { continue };
        if !b.args[0].eq_ignore_ascii_case(b"xreadgroup") {
            continue;
        }
        let group = b
            .args
            .iter()
            .position(|a| a.eq_ignore_ascii_case(b"group"))
            .and_then(|i| b.args.get(i + 1));
        for k in &b.keys {
            lost.push((b.db, k.clone(), group.cloned()));
        }
    }
    for (db, key, group) in lost {
        let ok = match e.db(db).get_shared(&key).map(|en| &en.value) {
            Some(crate::db::Value::Stream(s)) => {
                group.is_some_and(|g| s.groups.contains_key(&g[..]))
            }
            _ => false,
        };
        if !ok {
            e.signal_ready(db, &key);
        }
    }
}
