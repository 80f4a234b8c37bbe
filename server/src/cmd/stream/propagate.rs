//! What the consumer-group commands put on the replication stream. Redis 7.0.15 never sends
//! XREADGROUP, XCLAIM or XAUTOCLAIM as they were typed: a replica must end with the same
//! pending entries whatever its clock says, so each delivery or claim travels as an
//! idempotent `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID id`
//! carrying the pending entry's state after the command, and a move of the group's last ID
//! that no XCLAIM carries travels as `XGROUP SETID key group id ENTRIESREAD n`. A consumer
//! that a NOACK read created (no XCLAIM will create it on the replica) travels as
//! `XGROUP CREATECONSUMER`. Each rule was read off a real redis-server's stream.

use bytes::Bytes;

use crate::db::stream::{Group, Nack, StreamId};

pub(super) type Op = Vec<Bytes>;

fn word(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

fn num(n: impl ToString) -> Bytes {
    Bytes::from(n.to_string())
}

/// The XCLAIM that leaves `id` pending on the replica exactly as `nack` describes it, with
/// the group's last ID as it stands.
pub(super) fn xclaim(key: &[u8], group: &[u8], id: StreamId, nack: &Nack, last: StreamId) -> Op {
    vec![
        word("XCLAIM"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group),
        Bytes::copy_from_slice(&nack.consumer),
        word("0"),
        num(id),
        word("TIME"),
        num(nack.delivery_time),
        word("RETRYCOUNT"),
        num(nack.delivery_count),
        word("FORCE"),
        word("JUSTID"),
        word("LASTID"),
        num(last),
    ]
}

/// The group's last ID and read counter as they stand.
pub(super) fn setid(key: &[u8], group_name: &[u8], g: &Group) -> Op {
    vec![
        word("XGROUP"),
        word("SETID"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group_name),
        num(g.last_id),
        word("ENTRIESREAD"),
        num(g.entries_read),
    ]
}

/// A consumer created by a read that sends no XCLAIM for it.
pub(super) fn create_consumer(key: &[u8], group: &[u8], consumer: &[u8]) -> Op {
    vec![
        word("XGROUP"),
        word("CREATECONSUMER"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group),
        Bytes::copy_from_slice(consumer),
    ]
}
