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

pub static COMMANDS: &[Command] = &[];
