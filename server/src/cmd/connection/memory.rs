//! What a client costs, as Redis 7.0's getClientMemoryUsage counts it: CLIENT LIST's
//! qbuf/qbuf-free/multi-mem/tot-mem, INFO's mem_clients_normal, and the figure
//! maxmemory-clients evicts by.
//!
//! Why Redis's own per-item costs (a watched key 56 bytes, a pattern 24, a channel a dict
//! entry and its slot...): client eviction is tested by piling up exactly those things until
//! the client goes (Redis's unit/client-eviction watches keys, subscribes and adds tracking
//! prefixes in a loop), so the totals must grow as Redis's do. The figures were read off
//! redis-server 7.0.15's CLIENT LIST.

use crate::client_query;
use crate::compat::Profile;
use crate::session::{NetMeters, Session};

/// The client struct (zmalloc_size of Redis 7.0's `client`).
const CLIENT_STRUCT: usize = 768;
/// A watched key: its list node and its watchedKey.
const WATCHED_KEY: usize = 56;
/// A pattern subscription: its list node.
const PATTERN: usize = 24;
/// A channel subscription: its dict entry (the table's slots are counted apart).
const DICT_ENTRY: usize = 24;
/// A queued command's multiCmd, allocated in powers of two from 2.
const MULTI_CMD: usize = 24;
/// A tracking prefix tree node (Redis counts nodes at sizeof(raxNode) * sizeof(raxNode *)).
const RAX_NODE: usize = 32;
/// An argument's pointer in argv, counted with its bytes.
const ARG_POINTER: usize = 8;

/// The query buffer as CLIENT LIST shows it: bytes received and not yet run, and the room
/// left in its allocation. Redis 7 keeps a private buffer per client, sized as
/// `client_query` models it; with Redis 8's and Valkey 8's shared buffer a client holding
/// nothing has no buffer of its own.
pub(super) fn query_buffer(s: &Session, shared_buffer: bool) -> (usize, usize) {
    let qbuf = NetMeters::get(&s.net.qbuf) as usize;
    let free = if shared_buffer {
        if qbuf > 0 {
            NetMeters::get(&s.net.qbuf_free) as usize
        } else {
            0
        }
    } else {
        (s.net.query.alloc() as usize).saturating_sub(qbuf)
    };
    (qbuf, free)
}

/// What the query buffer's allocation takes (Redis's sdsZmallocSize): its room, header and
/// size class.
pub(super) fn query_buffer_memory(s: &Session, shared_buffer: bool, room: Option<usize>) -> usize {
    if shared_buffer {
        let (qbuf, free) = query_buffer(s, true);
        return qbuf + free;
    }
    let room = room.unwrap_or_else(|| s.net.query.alloc() as usize);
    client_query::sds_malloc_size(room as u64) as usize
}

/// Whether the profile's clients read into a buffer shared between them (Redis 8.0, Valkey
/// 8.0) rather than one each.
pub(crate) fn shared_query_buffer(profile: Profile) -> bool {
    profile.has(crate::compat::since::REUSABLE_QUERY_BUFFER)
}

/// The bytes of a command as a client sends it (a RESP array of bulk strings): what the
/// query buffer holds while it runs.
pub(super) fn request_size(args: &[bytes::Bytes]) -> usize {
    let digits = |n: usize| n.checked_ilog10().unwrap_or(0) as usize + 1;
    let items: usize = args
        .iter()
        .map(|a| 1 + digits(a.len()) + 2 + a.len() + 2)
        .sum();
    1 + digits(args.len()) + 2 + items
}

/// A command's arguments as argv holds them (argv_len_sum and the pointers).
pub(super) fn argv_memory(args: &[bytes::Bytes]) -> usize {
    args.iter().map(|a| a.len() + ARG_POINTER).sum()
}

/// CLIENT LIST's multi-mem: the queued commands' arguments (mstate.argv_len_sums).
pub(super) fn multi_mem(s: &Session) -> usize {
    s.multi
        .as_ref()
        .map_or(0, |m| m.queue.iter().map(|c| argv_memory(c)).sum())
}

/// What Redis counts besides the buffers: the queued commands' slots, watched keys,
/// subscriptions and tracking prefixes.
pub(super) fn bookkeeping(s: &Session) -> usize {
    let queued = s.multi.as_ref().map_or(0, |m| m.queue.len());
    let multi_slots = if queued == 0 {
        0
    } else {
        queued.next_power_of_two().max(2) * MULTI_CMD
    };
    // A dict's entries and its table (at least 4 slots once it holds anything).
    let dict = |n: usize| {
        if n == 0 {
            0
        } else {
            n * DICT_ENTRY + n.next_power_of_two().max(4) * 8
        }
    };
    let prefixes = s.tracking.prefixes.as_ref().map_or(0, |p| {
        if p.is_empty() {
            0
        } else {
            (p.len() + 1) * RAX_NODE
        }
    });
    multi_slots
        + s.watched.len() * WATCHED_KEY
        + s.patterns.len() * PATTERN
        + dict(s.channels.len())
        + dict(s.shard_channels.len())
        + prefixes
}

/// What every client costs: its struct and its reply buffer (`client_reply`), used or not.
pub(super) fn fixed(s: &Session) -> usize {
    CLIENT_STRUCT + s.reply_buf.size as usize
}

/// The memory Redis counts for a client between its commands: CLIENT LIST's tot-mem, which
/// INFO sums into mem_clients_normal / mem_clients_slaves and used_memory, and which
/// maxmemory-clients limits.
pub(crate) fn client_memory(s: &Session, profile: Profile) -> u64 {
    let query = query_buffer_memory(s, shared_query_buffer(profile), None);
    (fixed(s) + query + multi_mem(s) + bookkeeping(s)) as u64 + s.output_bytes()
}
