//! Helpers shared by the command groups' unit tests: an engine on a manual clock, and a
//! listener that collects keyspace events.

use crate::clock::Clock;
use crate::config::Config;
use crate::db::{ListValue, Value};
use crate::engine::Engine;
use crate::notify;
use crate::reply::Reply;

/// The manual clock's start: a fixed instant, so TTL arithmetic in tests is exact.
pub const T0: i64 = 1_700_000_000_000;

/// An engine reading a frozen clock at `T0`, and the clock to move it.
pub fn engine() -> (Engine, Clock) {
    let clock = Clock::manual(T0);
    (Engine::with_clock(Config::default(), clock.clone()), clock)
}

/// `engine()` answering as `profile` (for commands newer than Redis 7.0).
pub fn engine_as(profile: crate::compat::Profile) -> (Engine, Clock) {
    let clock = Clock::manual(T0);
    let mut config = Config::default();
    config.set_compat(profile);
    (Engine::with_clock(config, clock.clone()), clock)
}

/// Runs a command as connection 1.
pub fn run(e: &mut Engine, args: &[&str]) -> Reply {
    e.execute(1, args)
}

/// The value under `key` in a map reply.
pub fn map_field<'a>(map: &'a Reply, key: &str) -> Option<&'a Reply> {
    match map {
        Reply::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| *k == Reply::bulk(key))
            .map(|(_, v)| v),
        other => panic!("not a map: {other:?}"),
    }
}

/// COMMAND DOCS of one command under `profile`: its entry.
pub fn command_docs(profile: crate::compat::Profile, name: &str) -> Reply {
    match run(&mut engine_as(profile).0, &["COMMAND", "DOCS", name]) {
        Reply::Map(mut pairs) if !pairs.is_empty() => pairs.remove(0).1,
        other => panic!("{other:?}"),
    }
}

/// Stores a one-element list at `key` (for WRONGTYPE cases).
pub fn put_list(e: &mut Engine, key: &str) {
    let mut l = ListValue::new();
    l.push_back(b"x".to_vec());
    e.db(0).set(key.as_bytes(), Value::List(Box::new(l)));
}

/// Turns every notification on and subscribes connection 2 to every keyevent channel.
pub fn listen(e: &mut Engine) {
    e.notify_flags = notify::parse_flags("KEA").unwrap();
    e.execute(2, &["PING"]);
    e.pubsub
        .patterns
        .entry(b"__keyevent@*".to_vec())
        .or_default()
        .insert(2);
}

/// The (event, key) pairs delivered to the listener since the last call.
pub fn events(e: &mut Engine) -> Vec<(String, String)> {
    e.take_output(2)
        .into_iter()
        .filter_map(|r| match r {
            Reply::Push(items) => match (&items[2], &items[3]) {
                (Reply::Bulk(ch), Reply::Bulk(key)) => {
                    let ch = String::from_utf8_lossy(ch);
                    let event = ch.rsplit(':').next().unwrap_or_default().to_string();
                    Some((event, String::from_utf8_lossy(key).into_owned()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// What the engine's strict profile refused and recorded (`REDLAB.COMPAT REPORT`), in order.
pub fn compat_refused(e: &Engine) -> Vec<String> {
    e.compat_report
        .entries()
        .into_iter()
        .map(|r| r.what)
        .collect()
}
