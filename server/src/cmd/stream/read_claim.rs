//! XREADGROUP ... CLAIM min-idle-time (Redis 8.4, `since::XREADGROUP_CLAIM`).
//!
//! Written from Redis 8.4's published XREADGROUP reference (no 8.4 server here): with the `>`
//! ID, the group's pending entries idle for at least min-idle-time milliseconds are claimed
//! for the reading consumer first, longest idle first, then new entries are delivered up to
//! COUNT. Every entry of such a reply carries two more elements, as the reference's "reply
//! extension" lists them: the milliseconds since the entry was last delivered and the number
//! of times it was delivered before, both 0 for a new entry. Clients built against 8.4
//! (redis/jedis#4344's review) read both as bulk strings, which is how they are sent here. NOACK
//! does not apply to claimed entries: they stay pending, now for the reader.

use bytes::Bytes;

use super::propagate::{self, Op};
use crate::db::stream::{Stream, StreamId};
use crate::reply::Reply;

/// One of the two extra elements of a CLAIM reply entry.
fn extra(n: i64) -> Reply {
    Reply::Bulk(Bytes::from(n.to_string()))
}

/// Whether the group has a pending entry, still in the stream, idle at least `min_idle` ms.
pub(super) fn has_idle(s: &Stream, group: &[u8], min_idle: i64, now: i64) -> bool {
    s.groups[group]
        .pel
        .iter()
        .any(|(&id, n)| now - n.delivery_time >= min_idle && s.contains(id))
}

/// Claims for `consumer` (which must exist) the group's pending entries idle at least
/// `min_idle` ms, longest idle first (equal idle times in ID order), at most `count` (0: all).
/// Entries deleted from the stream are left pending and not reported. Each claimed entry is
/// delivered again (its time now, its count one more), and with `ops` (a replica is
/// attached) goes to the replica as an XCLAIM.
pub(super) fn claim_idle(
    s: &mut Stream,
    group: &[u8],
    consumer: &[u8],
    min_idle: i64,
    count: usize,
    now: i64,
    mut ops: Option<(&[u8], &mut Vec<Op>)>,
) -> Vec<Reply> {
    let mut idle: Vec<(i64, StreamId)> = s.groups[group]
        .pel
        .iter()
        .filter(|&(&id, n)| now - n.delivery_time >= min_idle && s.contains(id))
        .map(|(&id, n)| (n.delivery_time, id))
        .collect();
    idle.sort_unstable();
    if count > 0 {
        idle.truncate(count);
    }
    let mut out = Vec::with_capacity(idle.len());
    for (delivered_at, id) in idle {
        let fields = s.get(id).expect("still in the stream");
        let g = s.groups.get_mut(group).expect("checked");
        g.reassign(id, consumer);
        g.mark_active(consumer, now);
        let n = g.pel.get_mut(&id).expect("pending");
        let before = n.delivery_count;
        n.delivery_time = now;
        n.delivery_count += 1;
        if let Some((key, ops)) = ops.as_mut() {
            ops.push(propagate::xclaim(key, group, id, &g.pel[&id], g.last_id));
        }
        let mut entry = match super::owned_entry_reply(id, fields) {
            Reply::Array(v) => v,
            _ => unreachable!("an entry is an array"),
        };
        entry.push(extra(now - delivered_at));
        entry.push(extra(before as i64));
        out.push(Reply::Array(entry));
    }
    out
}

/// New entries in a CLAIM reply: never delivered before, so 0 and 0.
pub(super) fn as_new(entries: Reply) -> Vec<Reply> {
    let Reply::Array(entries) = entries else {
        return Vec::new();
    };
    entries
        .into_iter()
        .map(|e| match e {
            Reply::Array(mut v) => {
                v.push(extra(0));
                v.push(extra(0));
                Reply::Array(v)
            }
            other => other,
        })
        .collect()
}
