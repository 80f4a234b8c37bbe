//! Server commands: INFO, CONFIG, DBSIZE, FLUSHDB/FLUSHALL, SWAPDB, TIME, COMMAND, SAVE
//! stand-ins, SHUTDOWN, MONITOR.

use bytes::Bytes;

use super::table::Command;

/// Redis's `sdscatrepr`: a quoted, escaped form of binary data (MONITOR, CLIENT LIST).
pub fn repr(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() + 2);
    s.push('"');
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            c if c.is_ascii_graphic() || c == b' ' => s.push(c as char),
            c => s.push_str(&format!("\\x{:02x}", c)),
        }
    }
    s.push('"');
    s
}

/// One MONITOR line: `<secs>.<micros> [<db> <addr>] "arg" "arg"`.
pub fn monitor_line(now_us: i64, db: usize, addr: &str, args: &[Bytes]) -> String {
    let mut line = format!("{}.{:06} [{} {}]", now_us / 1_000_000, now_us % 1_000_000, db, addr);
    for a in args {
        line.push(' ');
        line.push_str(&repr(a));
    }
    line
}

// LOCAL STUB (hashset, never committed)
fn flushall(e: &mut crate::engine::Engine, _c: &mut crate::engine::Call) -> crate::reply::Reply {
    for d in e.dbs.iter_mut() { d.clear(); }
    crate::reply::Reply::ok()
}
fn hello(e: &mut crate::engine::Engine, c: &mut crate::engine::Call) -> crate::reply::Reply {
    let v: u8 = if c.argc() > 1 { c.arg(1)[0] - b'0' } else { 2 };
    e.sessions.get_mut(&c.conn).unwrap().resp = v;
    crate::reply::Reply::ok()
}
fn exists(e: &mut crate::engine::Engine, c: &mut crate::engine::Call) -> crate::reply::Reply {
    let k = c.arg(1).to_vec();
    crate::reply::Reply::Int(e.db(c.db).contains(&k) as i64)
}
fn ttl(e: &mut crate::engine::Engine, c: &mut crate::engine::Call) -> crate::reply::Reply {
    let k = c.arg(1).to_vec();
    crate::reply::Reply::Int(e.db(c.db).get(&k).map_or(-2, |x| if x.expire_at.is_some() { 1 } else { -1 }))
}
fn expire(e: &mut crate::engine::Engine, c: &mut crate::engine::Call) -> crate::reply::Reply {
    let k = c.arg(1).to_vec(); let now = e.now_ms;
    crate::reply::Reply::Int(e.db(c.db).set_expire(&k, Some(now + 100000)) as i64)
}
pub static COMMANDS: &[Command] = &[
    Command::new("flushall", -1, 0, "server", flushall),
    Command::new("hello", -1, 1<<10, "connection", hello),
    Command::new("exists", 2, 0, "keyspace", exists).keys(1,1,1),
    Command::new("ttl", 2, 0, "keyspace", ttl).keys(1,1,1),
    Command::new("expire", 3, 0, "keyspace", expire).keys(1,1,1),
];
