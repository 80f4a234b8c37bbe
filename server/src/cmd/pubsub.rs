//! Pub/sub: SUBSCRIBE, PSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH, PUBSUB; also the delivery
//! used by keyspace notifications.

use std::collections::HashMap;

use foldhash::fast::FixedState;
use indexmap::{IndexMap, IndexSet};

use super::table::Command;
use crate::engine::Engine;
use crate::reply::Reply;
use crate::session::ConnId;

/// Who listens where. Insertion-ordered so delivery order is the subscription order.
#[derive(Debug, Default)]
pub struct PubSub {
    pub channels: HashMap<Vec<u8>, IndexSet<ConnId, FixedState>, FixedState>,
    pub patterns: IndexMap<Vec<u8>, IndexSet<ConnId, FixedState>, FixedState>,
}

/// Delivers `message` to subscribers of `channel` and of matching patterns; returns how many
/// received it.
pub fn publish(e: &mut Engine, channel: &[u8], message: &[u8]) -> i64 {
    let mut receivers = 0;
    if let Some(conns) = e.pubsub.channels.get(channel) {
        let conns: Vec<ConnId> = conns.iter().copied().collect();
        for c in conns {
            let msg = Reply::Push(vec![Reply::bulk("message"), Reply::bulk(channel), Reply::bulk(message)]);
            e.push_to(c, msg);
            receivers += 1;
        }
    }
    if !e.pubsub.patterns.is_empty() {
        let matches: Vec<(Vec<u8>, Vec<ConnId>)> = e
            .pubsub
            .patterns
            .iter()
            .filter(|(p, _)| super::args::glob_match(p, channel, false))
            .map(|(p, c)| (p.clone(), c.iter().copied().collect()))
            .collect();
        for (pattern, conns) in matches {
            for c in conns {
                let msg = Reply::Push(vec![
                    Reply::bulk("pmessage"),
                    Reply::bulk(&pattern),
                    Reply::bulk(channel),
                    Reply::bulk(message),
                ]);
                e.push_to(c, msg);
                receivers += 1;
            }
        }
    }
    receivers
}

/// Drops every subscription of a connection (on disconnect and RESET).
pub fn unsubscribe_all(e: &mut Engine, conn: ConnId) {
    let Some(s) = e.sessions.get_mut(&conn) else {
        return;
    };
    let channels: Vec<Vec<u8>> = s.channels.drain(..).collect();
    let patterns: Vec<Vec<u8>> = s.patterns.drain(..).collect();
    for ch in channels {
        if let Some(set) = e.pubsub.channels.get_mut(&ch) {
            set.shift_remove(&conn);
            if set.is_empty() {
                e.pubsub.channels.remove(&ch);
            }
        }
    }
    for p in patterns {
        if let Some(set) = e.pubsub.patterns.get_mut(&p) {
            set.shift_remove(&conn);
            if set.is_empty() {
                e.pubsub.patterns.shift_remove(&p);
            }
        }
    }
}

pub static COMMANDS: &[Command] = &[];
