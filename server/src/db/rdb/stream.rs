//! Streams in DUMP payloads: Redis 7.0's RDB_TYPE_STREAM_LISTPACKS_2 (what it writes) and
//! the 6.x RDB_TYPE_STREAM_LISTPACKS (which it still reads).
//!
//! Layout: the node count, then per node its 16-byte master ID and its listpack (as a
//! string, LZF-compressed when that pays); the length, last ID, (v2: first ID, largest
//! deleted ID, entries added); the groups, each with its name, last ID, (v2: entries read),
//! its PEL (raw 16-byte IDs, delivery time in ms, delivery count) and its consumers (name,
//! seen time, and their PEL as raw IDs pointing into the group's).

use std::collections::BTreeSet;

use super::reader::Reader;
use super::{write_len, write_string};
use crate::db::stream::{Group, Node, Stream, StreamId, INVALID_ENTRIES_READ};
use crate::db::Value;

pub const STREAM_LISTPACKS: u8 = 15;
pub const STREAM_LISTPACKS_2: u8 = 19;

/// Writes the type byte and the body.
pub fn write(out: &mut Vec<u8>, s: &Stream) {
    out.push(STREAM_LISTPACKS_2);
    write_len(out, s.node_count() as u64);
    for (master, node) in s.nodes() {
        write_string(out, &master.to_be_bytes());
        write_string(out, &node.to_listpack());
    }
    write_len(out, s.len());
    write_id(out, s.last_id);
    write_id(out, s.first_id());
    write_id(out, s.max_deleted_id);
    write_len(out, s.entries_added);
    write_len(out, s.groups.len() as u64);
    for (name, g) in &s.groups {
        write_string(out, name);
        write_id(out, g.last_id);
        write_len(out, g.entries_read as u64);
        write_len(out, g.pel.len() as u64);
        for (id, nack) in &g.pel {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&nack.delivery_time.to_le_bytes());
            write_len(out, nack.delivery_count);
        }
        write_len(out, g.consumers.len() as u64);
        for (cname, c) in &g.consumers {
            write_string(out, cname);
            out.extend_from_slice(&c.seen_time.to_le_bytes());
            write_len(out, c.pel.len() as u64);
            for id in &c.pel {
                out.extend_from_slice(&id.to_be_bytes());
            }
        }
    }
}

fn write_id(out: &mut Vec<u8>, id: StreamId) {
    write_len(out, id.ms);
    write_len(out, id.seq);
}

fn read_id(r: &mut Reader) -> Option<StreamId> {
    Some(StreamId::new(r.u64_len()?, r.u64_len()?))
}

fn read_ms(r: &mut Reader) -> Option<i64> {
    Some(i64::from_le_bytes(r.take(8)?.try_into().ok()?))
}

/// Reads a stream body of type `t` (15 or 19); None when the payload is malformed.
pub fn read(r: &mut Reader, t: u8) -> Option<Value> {
    let v2 = t == STREAM_LISTPACKS_2;
    let mut s = Stream::new();
    let nodes = r.len()?;
    let mut prev: Option<StreamId> = None;
    for _ in 0..nodes {
        let key = r.string()?;
        let master = StreamId::from_be_bytes(&key)?;
        let lp = r.string()?;
        let (node, last) = Node::from_listpack(&lp, master)?;
        if prev.is_some_and(|p| p >= master) || last < master {
            return None;
        }
        prev = Some(last);
        s.insert_node(master, node);
    }
    let length = r.u64_len()?;
    if length != s.counted_length() {
        return None;
    }
    s.last_id = read_id(r)?;
    if v2 {
        let _first = read_id(r)?;
        s.max_deleted_id = read_id(r)?;
        s.entries_added = r.u64_len()?;
    } else {
        s.entries_added = length;
    }
    if s.last_valid_id() > s.last_id {
        return None;
    }
    let groups = r.len()?;
    for _ in 0..groups {
        let name = r.string()?;
        let last_id = read_id(r)?;
        let entries_read = if v2 {
            r.u64_len()? as i64
        } else {
            s.estimate_distance(last_id)
        };
        if entries_read < INVALID_ENTRIES_READ {
            return None;
        }
        let mut g = Group::new(last_id, entries_read);
        let pel = r.len()?;
        let mut owners: Vec<(StreamId, i64, u64)> = Vec::with_capacity(pel.min(1 << 16));
        for _ in 0..pel {
            let id = StreamId::from_be_bytes(r.take(16)?)?;
            let time = read_ms(r)?;
            let count = r.u64_len()?;
            owners.push((id, time, count));
        }
        owners.sort_unstable_by_key(|o| o.0);
        if owners.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let consumers = r.len()?;
        let mut claimed = BTreeSet::new();
        for _ in 0..consumers {
            let cname = r.string()?;
            let seen = read_ms(r)?;
            if !g.create_consumer(&cname, seen) {
                return None;
            }
            g.consumers
                .get_mut(&cname[..])
                .expect("just created")
                .active_time = seen;
            let n = r.len()?;
            for _ in 0..n {
                let id = StreamId::from_be_bytes(r.take(16)?)?;
                let i = owners.binary_search_by(|o| o.0.cmp(&id)).ok()?;
                let (_, time, count) = owners[i];
                if !claimed.insert(id) {
                    return None;
                }
                g.deliver(id, &cname, time);
                let nack = g.pel.get_mut(&id).expect("just delivered");
                nack.delivery_count = count;
            }
        }
        // Every pending entry must belong to a consumer.
        if claimed.len() != owners.len() {
            return None;
        }
        if s.groups.insert(name, g).is_some() {
            return None;
        }
    }
    Some(Value::Stream(Box::new(s)))
}
