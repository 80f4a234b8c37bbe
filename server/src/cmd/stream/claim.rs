//! XCLAIM and XAUTOCLAIM: moving pending entries that have been idle long enough to another
//! consumer. Idle time is the engine clock's now minus the entry's last delivery.

use super::propagate::{self, Op};
use super::{id_reply, no_group, parse_bound, parse_id, IdForm};
use crate::cmd::args;
use crate::cmd::lookup::lookup_mut;
use crate::cmd::table::CmdResult;
use crate::db::stream::{Nack, Stream, StreamId};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

fn int_or(arg: &[u8], err: &'static str) -> Result<i64, Reply> {
    crate::numfmt::parse_i64(arg).ok_or_else(|| Reply::err(err))
}

/// The reply for one claimed entry: its ID alone (JUSTID), the entry, or nil if the entry
/// vanished.
fn claimed_reply(s: &Stream, id: StreamId, justid: bool) -> Reply {
    if justid {
        return id_reply(id);
    }
    match s.get(id) {
        Some(fields) => super::owned_entry_reply(id, fields),
        None => Reply::Nil,
    }
}

/// Looks the consumer up (refreshing its seen time) or creates it; true if created.
fn claiming_consumer(s: &mut Stream, group: &[u8], name: &[u8], now: i64) -> bool {
    let g = s.groups.get_mut(group).expect("checked");
    match g.consumers.get_mut(name) {
        Some(c) => {
            c.seen_time = now;
            false
        }
        None => g.create_consumer(name, now),
    }
}

/// `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n]
/// [FORCE] [JUSTID] [LASTID id]`
pub(super) fn xclaim(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = call.db;
    let key = call.args[1].clone();
    let group = call.args[2].clone();
    let name = call.args[3].clone();
    let now = e.now_ms;
    let exists =
        lookup_mut::<Stream>(e, db, &key)?.is_some_and(|s| s.groups.contains_key(&group[..]));
    if !exists {
        return Err(no_group(&key, &group));
    }
    let min_idle = int_or(call.arg(4), errors::XCLAIM_MIN_IDLE)?.max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < call.argc() {
        match parse_id(call.arg(j), 0, IdForm::Strict) {
            Ok(id) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let (mut force, mut justid) = (false, false);
    let mut delivery: Option<i64> = None;
    let mut retry: Option<i64> = None;
    let mut last_id = StreamId::MIN;
    while j < call.argc() {
        let more = call.argc() - 1 - j;
        let opt = call.arg(j);
        if args::is(opt, "force") {
            force = true;
        } else if args::is(opt, "justid") {
            justid = true;
        } else if args::is(opt, "idle") && more > 0 {
            j += 1;
            let idle = int_or(call.arg(j), errors::XCLAIM_IDLE)?;
            delivery = Some(now.wrapping_sub(idle));
        } else if args::is(opt, "time") && more > 0 {
            j += 1;
            delivery = Some(int_or(call.arg(j), errors::XCLAIM_TIME)?);
        } else if args::is(opt, "retrycount") && more > 0 {
            j += 1;
            retry = Some(int_or(call.arg(j), errors::XCLAIM_RETRYCOUNT)?);
        } else if args::is(opt, "lastid") && more > 0 {
            j += 1;
            last_id = parse_id(call.arg(j), 0, IdForm::Strict)?;
        } else {
            return Err(Reply::err(errors::xclaim_option(opt)));
        }
        j += 1;
    }
    let delivery = match delivery {
        Some(t) if (0..=now).contains(&t) => t,
        _ => now,
    };
    // What goes on the replication stream instead of XCLAIM (`propagate`).
    // Redis 7.2 creates the claiming consumer before looking at the entries
    // (`since::STREAM_GROUPS_72`); 7.0 only once an entry is claimed.
    let eager = e.profile().has(crate::compat::since::STREAM_GROUPS_72);
    let mut ops: Option<Vec<Op>> = e.repl.feeding().then(Vec::new);
    let s = lookup_mut::<Stream>(e, db, &key)?.expect("checked");
    let mut changes = 0u64;
    let moved_last = {
        let g = s.groups.get_mut(&group[..]).expect("checked");
        let moved = last_id > g.last_id;
        if moved {
            g.last_id = last_id;
            changes += 1;
        }
        moved
    };
    let mut out = Vec::new();
    let mut consumer_ready = false;
    let mut created = false;
    let mut claims = 0usize;
    if eager {
        created = claiming_consumer(s, &group, &name, now);
        consumer_ready = true;
    }
    for id in ids {
        let exists = s.contains(id);
        let g = s.groups.get_mut(&group[..]).expect("checked");
        if !exists {
            // A deleted entry leaves the PEL; the replica drops it through an XCLAIM of the
            // pending entry as it was (FORCE JUSTID on a missing entry only removes it).
            if let (Some(ops), Some(n)) = (ops.as_mut(), g.pel.get(&id)) {
                ops.push(propagate::xclaim(&key, &group, id, n, g.last_id));
                claims += 1;
            }
            if g.ack(id) {
                changes += 1;
            }
            continue;
        }
        let mut forced = false;
        if force && !g.pel.contains_key(&id) {
            forced = true;
        }
        let Some(nack) = g.pel.get(&id) else {
            if !forced {
                continue;
            }
            // FORCE: a pending entry created from scratch, counted as one delivery.
            if !consumer_ready {
                created |= claiming_consumer(s, &group, &name, now);
                consumer_ready = true;
            }
            let g = s.groups.get_mut(&group[..]).expect("checked");
            g.deliver(id, &name, delivery);
            g.mark_active(&name, now);
            let n = g.pel.get_mut(&id).expect("just added");
            n.delivery_count = match retry {
                Some(r) if r >= 0 => r as u64,
                _ if !justid => 2,
                _ => 1,
            };
            if let Some(ops) = ops.as_mut() {
                ops.push(propagate::xclaim(&key, &group, id, n, g.last_id));
                claims += 1;
            }
            out.push(claimed_reply(s, id, justid));
            changes += 1;
            continue;
        };
        if min_idle != 0 && now - nack.delivery_time < min_idle {
            continue;
        }
        if !consumer_ready {
            created |= claiming_consumer(s, &group, &name, now);
            consumer_ready = true;
        }
        let g = s.groups.get_mut(&group[..]).expect("checked");
        g.reassign(id, &name);
        g.mark_active(&name, now);
        let n: &mut Nack = g.pel.get_mut(&id).expect("pending");
        n.delivery_time = delivery;
        match retry {
            Some(r) if r >= 0 => n.delivery_count = r as u64,
            _ if !justid => n.delivery_count += 1,
            _ => {}
        }
        if let Some(ops) = ops.as_mut() {
            let n = &g.pel[&id];
            ops.push(propagate::xclaim(&key, &group, id, n, g.last_id));
            claims += 1;
        }
        out.push(claimed_reply(s, id, justid));
        changes += 1;
    }
    if let Some(ops) = ops.as_mut().filter(|_| moved_last && claims == 0) {
        // LASTID moved the group and no XCLAIM carries it.
        ops.push(propagate::setid(&key, &group, &s.groups[&group[..]]));
    }
    if created {
        notify::keyspace_event(e, notify::STREAM, "xgroup-createconsumer", db, &key);
    }
    if let Some(ops) = ops {
        e.replicate_as(db, ops);
    }
    e.dirty += changes;
    Ok(Reply::Array(out))
}

/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`: claims up to
/// COUNT idle entries from `start` on, scanning at most ten times COUNT; answers the cursor
/// to continue from (0-0 at the end), the claimed entries and the IDs it dropped from the
/// PEL because their entries were deleted.
pub(super) fn xautoclaim(e: &mut Engine, call: &mut Call) -> CmdResult {
    let db = call.db;
    let key = call.args[1].clone();
    let group = call.args[2].clone();
    let name = call.args[3].clone();
    let now = e.now_ms;
    let min_idle = int_or(call.arg(4), errors::XAUTOCLAIM_MIN_IDLE)?.max(0);
    let (mut start, ex) = parse_bound(call.arg(5), 0)?;
    if ex {
        start = start
            .incr()
            .ok_or_else(|| Reply::err(crate::errors::INVALID_START_ID_FOR_THE_INTERVAL))?;
    }
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < call.argc() {
        let more = call.argc() - 1 - j;
        if args::is(call.arg(j), "count") && more > 0 {
            let max = i64::MAX / 16;
            count = match crate::numfmt::parse_i64(call.arg(j + 1)) {
                Some(n) if (1..=max).contains(&n) => n,
                _ => return Err(Reply::err(errors::GEO_COUNT)),
            };
            j += 1;
        } else if args::is(call.arg(j), "justid") {
            justid = true;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    // Redis 7.2 creates the claiming consumer before looking at the entries
    // (`since::STREAM_GROUPS_72`); 7.0 only once an entry is claimed.
    let eager = e.profile().has(crate::compat::since::STREAM_GROUPS_72);
    let mut ops: Option<Vec<Op>> = e.repl.feeding().then(Vec::new);
    let Some(s) = lookup_mut::<Stream>(e, db, &key)?.filter(|s| s.groups.contains_key(&group[..]))
    else {
        return Err(no_group(&key, &group));
    };
    // Redis allocates COUNT IDs up front and fails when the allocator refuses; a terabyte
    // stands in for that limit.
    if count.saturating_mul(16) > 1 << 40 {
        return Err(Reply::err(
            crate::errors::INSUFFICIENT_MEMORY_FAILED_ALLOCATING_TRANSIENT_MEMORY,
        ));
    }
    let mut attempts = count.saturating_mul(10);
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut consumer_ready = false;
    let mut created = false;
    if eager {
        created = claiming_consumer(s, &group, &name, now);
        consumer_ready = true;
    }
    let mut changes = 0u64;
    let mut cursor = start;
    let next: Option<StreamId>;
    loop {
        let g = &s.groups[&group[..]];
        let Some((&id, nack)) = g.pel.range(cursor..).next() else {
            next = None;
            break;
        };
        if attempts == 0 || count == 0 {
            next = Some(id);
            break;
        }
        attempts -= 1;
        cursor = match id.incr() {
            Some(c) => c,
            None => StreamId::MAX,
        };
        let idle = now - nack.delivery_time;
        if !s.contains(id) {
            let g = s.groups.get_mut(&group[..]).expect("checked");
            if let Some(ops) = ops.as_mut() {
                ops.push(propagate::xclaim(&key, &group, id, &g.pel[&id], g.last_id));
            }
            g.ack(id);
            deleted.push(id_reply(id));
            count -= 1;
            changes += 1;
        } else if min_idle == 0 || idle >= min_idle {
            if !consumer_ready {
                created |= claiming_consumer(s, &group, &name, now);
                consumer_ready = true;
            }
            let g = s.groups.get_mut(&group[..]).expect("checked");
            g.reassign(id, &name);
            g.mark_active(&name, now);
            let n = g.pel.get_mut(&id).expect("pending");
            n.delivery_time = now;
            if !justid {
                n.delivery_count += 1;
            }
            if let Some(ops) = ops.as_mut() {
                ops.push(propagate::xclaim(&key, &group, id, &g.pel[&id], g.last_id));
            }
            claimed.push(claimed_reply(s, id, justid));
            count -= 1;
            changes += 1;
        }
        if id == StreamId::MAX {
            next = None;
            break;
        }
    }
    if created {
        notify::keyspace_event(e, notify::STREAM, "xgroup-createconsumer", db, &key);
    }
    if let Some(ops) = ops {
        e.replicate_as(db, ops);
    }
    e.dirty += changes;
    Ok(Reply::Array(vec![
        id_reply(next.unwrap_or(StreamId::MIN)),
        Reply::Array(claimed),
        Reply::Array(deleted),
    ]))
}
