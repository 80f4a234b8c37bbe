//! Keyspace notifications (notify-keyspace-events): the flag string, and publishing
//! `__keyspace@<db>__:<key>` / `__keyevent@<db>__:<event>` messages.

use crate::engine::Engine;

pub const KEYSPACE: u32 = 1 << 0;
pub const KEYEVENT: u32 = 1 << 1;
pub const GENERIC: u32 = 1 << 2;
pub const STRING: u32 = 1 << 3;
pub const LIST: u32 = 1 << 4;
pub const SET: u32 = 1 << 5;
pub const HASH: u32 = 1 << 6;
pub const ZSET: u32 = 1 << 7;
pub const EXPIRED: u32 = 1 << 8;
pub const EVICTED: u32 = 1 << 9;
pub const STREAM: u32 = 1 << 10;
pub const KEY_MISS: u32 = 1 << 11;
pub const MODULE: u32 = 1 << 12;
pub const NEW: u32 = 1 << 13;
/// What `A` stands for (key-miss and new are not included, as in Redis).
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// Parses the flag string CONFIG SET accepts; None for an unknown character.
pub fn parse_flags(s: &str) -> Option<u32> {
    let mut f = 0;
    for c in s.chars() {
        f |= match c {
            'A' => ALL,
            'g' => GENERIC,
            '$' => STRING,
            'l' => LIST,
            's' => SET,
            'h' => HASH,
            'z' => ZSET,
            'x' => EXPIRED,
            'e' => EVICTED,
            'K' => KEYSPACE,
            'E' => KEYEVENT,
            't' => STREAM,
            'm' => KEY_MISS,
            'd' => MODULE,
            'n' => NEW,
            _ => return None,
        };
    }
    Some(f)
}

/// The flag string CONFIG GET prints, in Redis's order.
pub fn flags_to_string(f: u32) -> String {
    let mut s = String::new();
    if f & ALL == ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (GENERIC, 'g'),
            (STRING, '$'),
            (LIST, 'l'),
            (SET, 's'),
            (HASH, 'h'),
            (ZSET, 'z'),
            (EXPIRED, 'x'),
            (EVICTED, 'e'),
            (STREAM, 't'),
            (MODULE, 'd'),
            (NEW, 'n'),
        ] {
            if f & bit != 0 {
                s.push(c);
            }
        }
    }
    if f & KEYSPACE != 0 {
        s.push('K');
    }
    if f & KEYEVENT != 0 {
        s.push('E');
    }
    if f & KEY_MISS != 0 {
        s.push('m');
    }
    s
}

/// Publishes the notifications for `event` on `key` if the configuration asks for `class`.
pub fn keyspace_event(e: &mut Engine, class: u32, event: &str, db: usize, key: &[u8]) {
    let flags = e.notify_flags;
    if flags & class == 0 || flags & (KEYSPACE | KEYEVENT) == 0 {
        return;
    }
    if flags & KEYSPACE != 0 {
        let mut channel = format!("__keyspace@{}__:", db).into_bytes();
        channel.extend_from_slice(key);
        crate::cmd::pubsub::publish(e, &channel, event.as_bytes());
    }
    if flags & KEYEVENT != 0 {
        let channel = format!("__keyevent@{}__:{}", db, event).into_bytes();
        crate::cmd::pubsub::publish(e, &channel, key);
    }
}
