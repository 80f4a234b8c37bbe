//! Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB;
//! also the delivery used by keyspace notifications.
//!
//! Every confirmation and message is a `Reply::Push`: a `>` frame in RESP3, a plain array in
//! RESP2, which is exactly how Redis frames them. A command that confirms several channels
//! answers with one frame per channel (`Reply::Multi`).

use std::collections::HashMap;

use bytes::Bytes;
use foldhash::fast::FixedState;
use indexmap::{IndexMap, IndexSet};

use super::table::{flags::*, CmdResult, Command};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;
use crate::session::ConnId;

type Subscribers = IndexSet<ConnId, FixedState>;

/// Who listens where. Insertion-ordered so delivery order is the subscription order.
#[derive(Debug, Default)]
pub struct PubSub {
    pub channels: HashMap<Vec<u8>, Subscribers, FixedState>,
    pub patterns: IndexMap<Vec<u8>, Subscribers, FixedState>,
    /// Shard channels (SSUBSCRIBE / SPUBLISH): a namespace of their own, as in Redis.
    pub shard_channels: HashMap<Vec<u8>, Subscribers, FixedState>,
}

/// Delivers `message` to subscribers of `channel` and of matching patterns; returns how many
/// received it (a client subscribed both ways counts twice, as in Redis).
pub fn publish(e: &mut Engine, channel: &[u8], message: &[u8]) -> i64 {
    let mut receivers = 0;
    if let Some(conns) = e.pubsub.channels.get(channel) {
        let conns: Vec<ConnId> = conns.iter().copied().collect();
        let msg = Reply::Push(vec![
            Reply::bulk("message"),
            Reply::bulk(channel),
            Reply::bulk(message),
        ]);
        for c in conns {
            e.push_to(c, msg.clone());
            receivers += 1;
        }
    }
    if !e.pubsub.patterns.is_empty() {
        let matches: Vec<(Vec<u8>, Vec<ConnId>)> = e
            .pubsub
            .patterns
            .iter()
            .filter(|(p, _)| crate::glob::matches(p, channel, false))
            .map(|(p, c)| (p.clone(), c.iter().copied().collect()))
            .collect();
        for (pattern, conns) in matches {
            let msg = Reply::Push(vec![
                Reply::bulk("pmessage"),
                Reply::bulk(&pattern),
                Reply::bulk(channel),
                Reply::bulk(message),
            ]);
            for c in conns {
                e.push_to(c, msg.clone());
                receivers += 1;
            }
        }
    }
    receivers
}

/// SPUBLISH's delivery: shard-channel subscribers only, as `smessage`.
pub fn publish_shard(e: &mut Engine, channel: &[u8], message: &[u8]) -> i64 {
    let Some(conns) = e.pubsub.shard_channels.get(channel) else {
        return 0;
    };
    let conns: Vec<ConnId> = conns.iter().copied().collect();
    let msg = Reply::Push(vec![
        Reply::bulk("smessage"),
        Reply::bulk(channel),
        Reply::bulk(message),
    ]);
    for &c in &conns {
        e.push_to(c, msg.clone());
    }
    conns.len() as i64
}

/// Drops every subscription of a connection (on disconnect, RESET and CLIENT KILL).
pub fn unsubscribe_all(e: &mut Engine, conn: ConnId) {
    let Some(s) = e.sessions.get_mut(&conn) else {
        return;
    };
    if s.channels.is_empty() && s.patterns.is_empty() && s.shard_channels.is_empty() {
        return;
    }
    let channels: Vec<Vec<u8>> = s.channels.drain(..).collect();
    let patterns: Vec<Vec<u8>> = s.patterns.drain(..).collect();
    let shard: Vec<Vec<u8>> = s.shard_channels.drain(..).collect();
    for ch in channels {
        forget(&mut e.pubsub.channels, &ch, conn);
    }
    for ch in shard {
        forget(&mut e.pubsub.shard_channels, &ch, conn);
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

fn forget(map: &mut HashMap<Vec<u8>, Subscribers, FixedState>, channel: &[u8], conn: ConnId) {
    if let Some(set) = map.get_mut(channel) {
        set.shift_remove(&conn);
        if set.is_empty() {
            map.remove(channel);
        }
    }
}

/// The three kinds of subscription, which share their command logic.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Kind::Channel => ("subscribe", "unsubscribe"),
            Kind::Pattern => ("psubscribe", "punsubscribe"),
            Kind::Shard => ("ssubscribe", "sunsubscribe"),
        }
    }
}

fn confirm(verb: &str, name: Option<&[u8]>, count: usize) -> Reply {
    Reply::Push(vec![
        Reply::bulk(verb),
        Reply::opt_bulk(name),
        Reply::Int(count as i64),
    ])
}

/// Adds one subscription of `kind`; true if it is new. The count the client sees is
/// channels + patterns for the classic kinds, and shard channels alone for the shard kind.
fn add(e: &mut Engine, conn: ConnId, kind: Kind, name: &[u8]) -> usize {
    let Some(s) = e.sessions.get_mut(&conn) else {
        return 0;
    };
    let set = match kind {
        Kind::Channel => &mut s.channels,
        Kind::Pattern => &mut s.patterns,
        Kind::Shard => &mut s.shard_channels,
    };
    if set.insert(name.to_vec()) {
        let subs = match kind {
            Kind::Channel => e.pubsub.channels.entry(name.to_vec()).or_default(),
            Kind::Pattern => e.pubsub.patterns.entry(name.to_vec()).or_default(),
            Kind::Shard => e.pubsub.shard_channels.entry(name.to_vec()).or_default(),
        };
        subs.insert(conn);
    }
    count(e, conn, kind)
}

fn remove(e: &mut Engine, conn: ConnId, kind: Kind, name: &[u8]) -> usize {
    let Some(s) = e.sessions.get_mut(&conn) else {
        return 0;
    };
    let removed = match kind {
        Kind::Channel => s.channels.shift_remove(name),
        Kind::Pattern => s.patterns.shift_remove(name),
        Kind::Shard => s.shard_channels.shift_remove(name),
    };
    if removed {
        match kind {
            Kind::Channel => forget(&mut e.pubsub.channels, name, conn),
            Kind::Shard => forget(&mut e.pubsub.shard_channels, name, conn),
            Kind::Pattern => {
                if let Some(set) = e.pubsub.patterns.get_mut(name) {
                    set.shift_remove(&conn);
                    if set.is_empty() {
                        e.pubsub.patterns.shift_remove(name);
                    }
                }
            }
        }
    }
    count(e, conn, kind)
}

fn count(e: &Engine, conn: ConnId, kind: Kind) -> usize {
    e.sessions.get(&conn).map_or(0, |s| match kind {
        Kind::Shard => s.shard_channels.len(),
        _ => s.channels.len() + s.patterns.len(),
    })
}

fn subscribe_kind(e: &mut Engine, call: &mut Call, kind: Kind) -> Reply {
    let (verb, _) = kind.names();
    let mut out = Vec::with_capacity(call.argc() - 1);
    for name in &call.args[1..] {
        let n = add(e, call.conn, kind, name);
        out.push(confirm(verb, Some(name), n));
    }
    Reply::Multi(out)
}

fn unsubscribe_kind(e: &mut Engine, call: &mut Call, kind: Kind) -> Reply {
    let (_, verb) = kind.names();
    let names: Vec<Bytes> = if call.argc() > 1 {
        call.args[1..].to_vec()
    } else {
        let Some(s) = e.sessions.get(&call.conn) else {
            return Reply::None;
        };
        let set = match kind {
            Kind::Channel => &s.channels,
            Kind::Pattern => &s.patterns,
            Kind::Shard => &s.shard_channels,
        };
        set.iter().map(|n| Bytes::copy_from_slice(n)).collect()
    };
    if names.is_empty() {
        // Nothing to leave: Redis still confirms, with a null name.
        return Reply::Multi(vec![confirm(verb, None, count(e, call.conn, kind))]);
    }
    let mut out = Vec::with_capacity(names.len());
    for name in &names {
        let n = remove(e, call.conn, kind, name);
        out.push(confirm(verb, Some(name), n));
    }
    Reply::Multi(out)
}

fn subscribe(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(subscribe_kind(e, call, Kind::Channel))
}

fn psubscribe(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(subscribe_kind(e, call, Kind::Pattern))
}

fn ssubscribe(e: &mut Engine, call: &mut Call) -> CmdResult {
    // Inside EXEC a client must get one reply per command; Redis lets the classic SUBSCRIBE
    // through there for compatibility, but not SSUBSCRIBE.
    if call.in_multi {
        return Err(Reply::err(errors::SSUBSCRIBE_DENY_BLOCKING));
    }
    Ok(subscribe_kind(e, call, Kind::Shard))
}

fn unsubscribe(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(unsubscribe_kind(e, call, Kind::Channel))
}

fn punsubscribe(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(unsubscribe_kind(e, call, Kind::Pattern))
}

fn sunsubscribe(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(unsubscribe_kind(e, call, Kind::Shard))
}

fn publish_cmd(e: &mut Engine, call: &mut Call) -> CmdResult {
    let n = publish(e, &call.args[1], &call.args[2]);
    Ok(Reply::Int(n))
}

fn spublish(e: &mut Engine, call: &mut Call) -> CmdResult {
    let n = publish_shard(e, &call.args[1], &call.args[2]);
    Ok(Reply::Int(n))
}

/// Channel names with at least one subscriber, filtered by an optional glob.
fn active_channels(map: &HashMap<Vec<u8>, Subscribers, FixedState>, call: &Call) -> CmdResult {
    if call.argc() > 3 {
        return Err(Reply::err(errors::subcommand_syntax(
            &call.args[0],
            &call.args[1],
        )));
    }
    let pattern = call.args.get(2);
    let names: Vec<Reply> = map
        .keys()
        .filter(|ch| pattern.is_none_or(|p| crate::glob::matches(p, ch, false)))
        .map(Reply::bulk)
        .collect();
    Ok(Reply::Array(names))
}

fn pubsub_channels(e: &mut Engine, call: &mut Call) -> CmdResult {
    active_channels(&e.pubsub.channels, call)
}

fn pubsub_shardchannels(e: &mut Engine, call: &mut Call) -> CmdResult {
    active_channels(&e.pubsub.shard_channels, call)
}

/// `[channel, count, ...]`: a flat array in both protocols, as Redis sends it.
fn subscriber_counts(map: &HashMap<Vec<u8>, Subscribers, FixedState>, call: &Call) -> Reply {
    let mut out = Vec::with_capacity(2 * (call.argc() - 2));
    for ch in &call.args[2..] {
        out.push(Reply::Bulk(ch.clone()));
        out.push(Reply::Int(map.get(&ch[..]).map_or(0, |s| s.len() as i64)));
    }
    Reply::Array(out)
}

fn pubsub_numsub(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(subscriber_counts(&e.pubsub.channels, call))
}

fn pubsub_shardnumsub(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(subscriber_counts(&e.pubsub.shard_channels, call))
}

/// The number of distinct patterns (not of pattern subscriptions), as Redis counts.
fn pubsub_numpat(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(Reply::Int(e.pubsub.patterns.len() as i64))
}

const PUBSUB_HELP: &[&str] = &[
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
];

fn pubsub_help(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "PUBSUB",
        PUBSUB_HELP,
    ))
}

/// Never called: the dispatcher resolves PUBSUB to one of its subcommands.
fn container(_: &mut Engine, call: &mut Call) -> CmdResult {
    Err(Reply::err(errors::unknown_subcommand(
        "pubsub",
        call.args.get(1).map_or(&b""[..], |a| &a[..]),
    )))
}

static PUBSUB_SUBCOMMANDS: &[Command] = &[
    Command::new(
        "channels",
        -2,
        PUBSUB | LOADING | STALE,
        "pubsub",
        pubsub_channels,
    ),
    Command::new(
        "numsub",
        -2,
        PUBSUB | LOADING | STALE,
        "pubsub",
        pubsub_numsub,
    ),
    Command::new(
        "numpat",
        2,
        PUBSUB | LOADING | STALE,
        "pubsub",
        pubsub_numpat,
    ),
    Command::new(
        "shardchannels",
        -2,
        PUBSUB | LOADING | STALE,
        "pubsub",
        pubsub_shardchannels,
    ),
    Command::new(
        "shardnumsub",
        -2,
        PUBSUB | LOADING | STALE,
        "pubsub",
        pubsub_shardnumsub,
    ),
    Command::new("help", 2, LOADING | STALE, "pubsub", pubsub_help),
];

pub static COMMANDS: &[Command] = &[
    Command::new(
        "subscribe",
        -2,
        PUBSUB | NOSCRIPT | LOADING | STALE,
        "pubsub",
        subscribe,
    ),
    Command::new(
        "unsubscribe",
        -1,
        PUBSUB | NOSCRIPT | LOADING | STALE,
        "pubsub",
        unsubscribe,
    ),
    Command::new(
        "psubscribe",
        -2,
        PUBSUB | NOSCRIPT | LOADING | STALE,
        "pubsub",
        psubscribe,
    ),
    Command::new(
        "punsubscribe",
        -1,
        PUBSUB | NOSCRIPT | LOADING | STALE,
        "pubsub",
        punsubscribe,
    ),
    Command::new(
        "ssubscribe",
        -2,
        PUBSUB | NOSCRIPT | LOADING | STALE,
        "pubsub",
        ssubscribe,
    )
    .keys(1, -1, 1),
    Command::new(
        "sunsubscribe",
        -1,
        PUBSUB | NOSCRIPT | LOADING | STALE,
        "pubsub",
        sunsubscribe,
    )
    .keys(1, -1, 1),
    Command::new(
        "publish",
        3,
        PUBSUB | LOADING | STALE | FAST,
        "pubsub",
        publish_cmd,
    ),
    Command::new(
        "spublish",
        3,
        PUBSUB | LOADING | STALE | FAST,
        "pubsub",
        spublish,
    )
    .keys(1, 1, 1),
    Command::new("pubsub", -2, 0, "pubsub", container).subcommands(PUBSUB_SUBCOMMANDS),
];

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::engine::Engine;
    use crate::notify;
    use crate::reply::Reply;

    fn run(e: &mut Engine, conn: u64, line: &str) -> Reply {
        let args: Vec<&str> = line.split(' ').collect();
        e.execute(conn, &args)
    }

    fn push(parts: &[&str]) -> Reply {
        Reply::Push(parts.iter().map(Reply::bulk).collect())
    }

    #[test]
    fn publish_reaches_channel_then_pattern_subscribers() {
        let mut e = Engine::new(Config::default());
        let (p, s) = (e.connect(), e.connect());
        run(&mut e, s, "SUBSCRIBE news");
        run(&mut e, s, "PSUBSCRIBE n*");
        e.take_wakeups();
        assert_eq!(run(&mut e, p, "PUBLISH news hi"), Reply::Int(2));
        assert_eq!(e.take_wakeups(), vec![s, s]);
        assert_eq!(
            e.take_output(s),
            vec![
                push(&["message", "news", "hi"]),
                push(&["pmessage", "n*", "news", "hi"])
            ]
        );
    }

    #[test]
    fn subscribe_confirms_each_channel_with_the_running_count() {
        let mut e = Engine::new(Config::default());
        let c = e.connect();
        let r = run(&mut e, c, "SUBSCRIBE a b a");
        let confirm = |n, count| {
            Reply::Push(vec![
                Reply::bulk("subscribe"),
                Reply::bulk(n),
                Reply::Int(count),
            ])
        };
        assert_eq!(
            r,
            Reply::Multi(vec![confirm("a", 1), confirm("b", 2), confirm("a", 2)])
        );
        let r = run(&mut e, c, "UNSUBSCRIBE");
        assert_eq!(
            r,
            Reply::Multi(vec![
                Reply::Push(vec![
                    Reply::bulk("unsubscribe"),
                    Reply::bulk("a"),
                    Reply::Int(1)
                ]),
                Reply::Push(vec![
                    Reply::bulk("unsubscribe"),
                    Reply::bulk("b"),
                    Reply::Int(0)
                ]),
            ])
        );
        assert!(e.pubsub.channels.is_empty());
    }

    #[test]
    fn shard_channels_are_a_separate_namespace() {
        let mut e = Engine::new(Config::default());
        let (p, s) = (e.connect(), e.connect());
        run(&mut e, s, "SSUBSCRIBE orders");
        assert_eq!(run(&mut e, p, "PUBLISH orders x"), Reply::Int(0));
        assert_eq!(run(&mut e, p, "SPUBLISH orders y"), Reply::Int(1));
        assert_eq!(e.take_output(s), vec![push(&["smessage", "orders", "y"])]);
        e.disconnect(s);
        assert!(e.pubsub.shard_channels.is_empty());
    }

    #[test]
    fn keyspace_notifications_use_redis_channel_names() {
        let mut e = Engine::new(Config::default());
        e.notify_flags = notify::parse_flags("KEA").expect("valid flags");
        let (w, s) = (e.connect(), e.connect());
        run(&mut e, s, "PSUBSCRIBE __key*__:*");
        run(&mut e, w, "SELECT 2");
        run(&mut e, w, "SET user:1 v");
        assert_eq!(
            e.take_output(s),
            vec![
                push(&["pmessage", "__key*__:*", "__keyspace@2__:user:1", "set"]),
                push(&["pmessage", "__key*__:*", "__keyevent@2__:set", "user:1"]),
            ]
        );
    }

    #[test]
    fn keyspace_notifications_respect_the_classes() {
        let mut e = Engine::new(Config::default());
        let (w, s) = (e.connect(), e.connect());
        run(&mut e, s, "PSUBSCRIBE *");
        for (flags, expected) in [
            ("", 0),
            ("K", 0),
            ("$", 0),
            ("Kl", 0),
            ("K$", 1),
            ("E$", 1),
            ("KEA", 2),
            ("AK", 1),
        ] {
            e.notify_flags = notify::parse_flags(flags).expect("valid flags");
            run(&mut e, w, "SET k v");
            assert_eq!(e.take_output(s).len(), expected, "flags {flags:?}");
        }
    }

    #[test]
    fn notify_flags_round_trip_like_redis() {
        for (input, printed) in [
            ("", ""),
            ("KEA", "AKE"),
            ("Kg$lshzxetd", "AK"),
            ("KEAmn", "AKEm"),
            ("Ktmn", "tnKm"),
            ("K$lshzxe", "$lshzxeK"),
            ("Klx", "lxK"),
            ("E", "E"),
        ] {
            let f = notify::parse_flags(input).expect("valid flags");
            assert_eq!(notify::flags_to_string(f), printed, "{input}");
        }
        assert_eq!(notify::parse_flags("Kq"), None);
        assert_eq!(notify::parse_flags("kea"), None);
    }

    #[test]
    fn resp2_subscriber_can_only_run_subscription_commands() {
        let mut e = Engine::new(Config::default());
        let c = e.connect();
        run(&mut e, c, "SSUBSCRIBE s");
        assert!(run(&mut e, c, "GET k").is_error());
        assert_eq!(
            run(&mut e, c, "PING"),
            Reply::Array(vec![Reply::bulk("pong"), Reply::bulk("")])
        );
        assert!(run(&mut e, c, "HELLO 3").is_error());
        run(&mut e, c, "SUNSUBSCRIBE");
        assert_eq!(run(&mut e, c, "GET k"), Reply::Nil);
    }
}
