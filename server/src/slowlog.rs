//! The slow log: commands whose own execution took longer than `slowlog-log-slower-than`
//! microseconds, newest first, at most `slowlog-max-len` of them (SLOWLOG GET/LEN/RESET).
//!
//! The duration is real time, read from a monotonic clock around the handler (as Redis
//! measures it), not the engine's clock, which a test may have frozen; the entry's timestamp
//! is the engine's "now" in Unix seconds. What is stored is what SLOWLOG GET shows: at most
//! `MAX_ARGS` arguments (the last one saying how many more there were), each cut at
//! `MAX_ARG_BYTES` bytes (with how many more bytes it had).

use std::collections::VecDeque;

use bytes::Bytes;

use crate::config::Config;
use crate::reply::Reply;

/// Arguments kept per entry, the last of them saying how many more there were.
pub const MAX_ARGS: usize = 32;
/// Bytes kept per argument.
pub const MAX_ARG_BYTES: usize = 128;

/// One logged command.
#[derive(Clone, Debug)]
pub struct Entry {
    pub id: u64,
    /// Unix seconds at which it ran.
    pub time_s: i64,
    pub micros: u64,
    pub args: Vec<Bytes>,
    pub addr: String,
    pub name: Bytes,
}

impl Entry {
    /// The entry as SLOWLOG GET answers it.
    pub fn reply(&self) -> Reply {
        Reply::Array(vec![
            Reply::Int(self.id as i64),
            Reply::Int(self.time_s),
            Reply::Int(self.micros as i64),
            Reply::Array(self.args.iter().cloned().map(Reply::Bulk).collect()),
            Reply::Bulk(Bytes::from(self.addr.clone())),
            Reply::Bulk(self.name.clone()),
        ])
    }
}

/// The log and the two parameters it follows (copied from the configuration when it
/// changes, so a command pays no lookup by name).
#[derive(Debug, Default)]
pub struct SlowLog {
    entries: VecDeque<Entry>,
    next_id: u64,
    /// `Config::generation` the parameters below were read at; None before the first read.
    generation: Option<u64>,
    /// Negative: log nothing; 0: log every command.
    slower_than_us: i64,
    max_len: usize,
}

impl SlowLog {
    /// Re-reads the parameters when the configuration changed since the last look.
    #[inline]
    fn refresh(&mut self, config: &Config) {
        if self.generation != Some(config.generation) {
            self.reread(config);
        }
    }

    #[cold]
    fn reread(&mut self, config: &Config) {
        self.generation = Some(config.generation);
        // Unset, the parameters' defaults (config/params.rs).
        let get = |name| config.stored(name).and_then(|v| v.parse::<i64>().ok());
        self.slower_than_us = get("slowlog-log-slower-than").unwrap_or(10_000);
        self.max_len = get("slowlog-max-len").unwrap_or(128).max(0) as usize;
        self.trim();
    }

    /// Whether a command that ran `micros` microseconds goes into the log.
    #[inline]
    pub fn logs(&mut self, config: &Config, micros: u64) -> bool {
        self.refresh(config);
        self.slower_than_us >= 0 && micros >= self.slower_than_us as u64
    }

    /// Logs a command that ran `micros` microseconds, if that is over the threshold.
    pub fn record(
        &mut self,
        config: &Config,
        args: &[Bytes],
        micros: u64,
        time_s: i64,
        addr: &str,
        name: Option<&[u8]>,
    ) {
        if !self.logs(config, micros) {
            return;
        }
        let entry = Entry {
            id: self.next_id,
            time_s,
            micros,
            args: {
                let mut kept = truncate(args);
                redact(&mut kept);
                kept
            },
            addr: addr.to_string(),
            name: Bytes::copy_from_slice(name.unwrap_or_default()),
        };
        self.next_id += 1;
        self.entries.push_front(entry);
        self.trim();
    }

    fn trim(&mut self) {
        self.entries.truncate(self.max_len);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The newest `count` entries (all of them for None).
    pub fn newest(&self, count: Option<usize>) -> impl Iterator<Item = &Entry> {
        self.entries.iter().take(count.unwrap_or(usize::MAX))
    }

    /// SLOWLOG RESET: the entries go; ids keep counting, as in Redis.
    pub fn reset(&mut self) {
        self.entries.clear();
    }
}

/// Arguments that carry secrets, replaced by `(redacted)` as Redis does: AUTH's (in its two
/// valid forms only: Redis answers a syntax error before redacting), HELLO's after an AUTH the
/// option parser reached with both values, CONFIG SET's value of a password parameter,
/// MIGRATE's after AUTH/AUTH2 and ACL SETUSER's rules. MONITOR shows arguments the same way.
pub(crate) fn redact(args: &mut [Bytes]) {
    let is = |a: &Bytes, s: &str| a.eq_ignore_ascii_case(s.as_bytes());
    let hide = |a: &mut Bytes| *a = Bytes::from_static(b"(redacted)");
    let Some(name) = args.first().cloned() else {
        return;
    };
    let sub = args.get(1).cloned().unwrap_or_default();
    if is(&name, "auth") {
        if args.len() <= 3 {
            args.iter_mut().skip(1).for_each(hide);
        }
    } else if is(&name, "acl") && is(&sub, "setuser") {
        args.iter_mut().skip(2).for_each(hide);
    } else if is(&name, "hello") {
        redact_hello(args);
    } else if is(&name, "config") && is(&sub, "set") {
        let mut i = 2;
        while i + 1 < args.len() {
            if is(&args[i], "masterauth") || is(&args[i], "requirepass") {
                hide(&mut args[i + 1]);
            }
            i += 2;
        }
    } else if is(&name, "migrate") {
        if let Some(i) = args.iter().position(|a| is(a, "auth") || is(a, "auth2")) {
            let n = if is(&args[i], "auth") { 1 } else { 2 };
            args.iter_mut().skip(i + 1).take(n).for_each(hide);
        }
    }
}

/// HELLO's options are read left to right after a valid protocol version; AUTH's two values
/// are hidden once reached, and the first option the parser refuses stops it.
fn redact_hello(args: &mut [Bytes]) {
    let is = |a: &Bytes, s: &str| a.eq_ignore_ascii_case(s.as_bytes());
    if let Some(v) = args.get(1) {
        let ok = std::str::from_utf8(v)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .is_some_and(|v| (2..=3).contains(&v));
        if !ok {
            return;
        }
    }
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "auth") && more >= 2 {
            args[j + 1] = Bytes::from_static(b"(redacted)");
            args[j + 2] = Bytes::from_static(b"(redacted)");
            j += 3;
        } else if is(&args[j], "setname") && more >= 1 {
            j += 2;
        } else {
            return;
        }
    }
}

/// The arguments as an entry keeps them.
fn truncate(args: &[Bytes]) -> Vec<Bytes> {
    let kept = if args.len() > MAX_ARGS {
        MAX_ARGS - 1
    } else {
        args.len()
    };
    let mut out: Vec<Bytes> = args[..kept]
        .iter()
        .map(|a| {
            if a.len() > MAX_ARG_BYTES {
                let mut cut = a[..MAX_ARG_BYTES].to_vec();
                cut.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - MAX_ARG_BYTES).as_bytes(),
                );
                Bytes::from(cut)
            } else {
                a.clone()
            }
        })
        .collect();
    if kept < args.len() {
        out.push(Bytes::from(format!(
            "... ({} more arguments)",
            args.len() - kept
        )));
    }
    out
}

impl crate::engine::Engine {
    /// Microseconds from `started` (a `clock::monotonic_us` reading) to now, as Redis counts a
    /// command's duration: the difference of two whole-microsecond readings of a monotonic
    /// clock. A 0.4 µs command counts 1 when it crosses a microsecond boundary and 0
    /// otherwise, so INFO's totals average out to the true time, where truncating each
    /// duration would drop about half a microsecond per call.
    pub(crate) fn elapsed_us(&self, started: u64) -> u64 {
        crate::clock::monotonic_us().saturating_sub(started)
    }

    /// Counts a call that ran `us` microseconds: INFO commandstats and its latency-tracking
    /// histogram.
    pub(crate) fn count_call(
        &mut self,
        cmd: &'static crate::cmd::table::Command,
        name: &str,
        failed: bool,
        us: u64,
    ) {
        self.stats.record(cmd, name, failed, us);
        self.latency_tracking.record(&self.config, cmd, name, us);
    }

    /// Logs a command the dispatcher ran, if it was slow (and feeds the latency monitor): not one that blocked (Redis logs
    /// it once served), nor one flagged skip_slowlog (EXEC, whose commands count alone).
    pub(crate) fn note_slow(
        &mut self,
        conn: crate::session::ConnId,
        cmd: &crate::cmd::table::Command,
        args: &[Bytes],
        reply: &Reply,
        us: u64,
    ) {
        if *reply == Reply::None && self.is_blocked(conn) {
            return;
        }
        // The session (for the client's address and name) only for a command that is logged.
        if let Some(time_s) = self.slow_sample(cmd, us) {
            self.slowlog_record(conn, args, us, time_s);
        }
    }

    /// A command a script ran (redis.call/pcall): Redis 7.0 logs it too, after its run and
    /// before the script's own entry, as its Lua client's, which has no address ("?:0")
    /// and no name.
    pub(crate) fn note_slow_in_script(
        &mut self,
        cmd: &crate::cmd::table::Command,
        args: &[Bytes],
        us: u64,
    ) {
        if let Some(time_s) = self.slow_sample(cmd, us) {
            self.slowlog
                .record(&self.config, args, us, time_s, "?:0", None);
        }
    }

    /// The latency monitor's sample of a command that took `us`, and the second to log it
    /// at when SLOWLOG takes it (None: not logged).
    fn slow_sample(&mut self, cmd: &crate::cmd::table::Command, us: u64) -> Option<i64> {
        if cmd.has(crate::cmd::table::flags::SKIP_SLOWLOG) {
            return None;
        }
        let time_s = self.now_ms.div_euclid(1000);
        let event = if cmd.has(crate::cmd::table::flags::FAST) {
            "fast-command"
        } else {
            "command"
        };
        self.latency.record(&self.config, event, us / 1000, time_s);
        self.slowlog.logs(&self.config, us).then_some(time_s)
    }

    /// Logs a blocked command once it is answered (served, timed out or unblocked), as
    /// Redis's updateStatsOnUnblock: in SLOWLOG with its whole time and `args` (None: not
    /// logged), and the time of the call that served it as the latency monitor's
    /// `command-unblocking` event.
    pub(crate) fn note_unblocked(
        &mut self,
        conn: crate::session::ConnId,
        cmd: &crate::cmd::table::Command,
        args: Option<&[Bytes]>,
        us: u64,
        serving_us: u64,
    ) {
        let time_s = self.now_ms.div_euclid(1000);
        self.latency.record(
            &self.config,
            "command-unblocking",
            serving_us / 1000,
            time_s,
        );
        let Some(args) = args else {
            return;
        };
        if cmd.has(crate::cmd::table::flags::SKIP_SLOWLOG) || !self.slowlog.logs(&self.config, us) {
            return;
        }
        self.slowlog_record(conn, args, us, time_s);
    }

    /// One SLOWLOG entry for `conn`'s command (its address and name as CLIENT LIST shows).
    fn slowlog_record(
        &mut self,
        conn: crate::session::ConnId,
        args: &[Bytes],
        us: u64,
        time_s: i64,
    ) {
        let Some(s) = self.sessions.get(&conn) else {
            return;
        };
        self.slowlog
            .record(&self.config, args, us, time_s, &s.addr, s.name.as_deref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(n: usize) -> Vec<Bytes> {
        (0..n).map(|i| Bytes::from(i.to_string())).collect()
    }

    #[test]
    fn long_commands_are_cut_as_redis_cuts_them() {
        let cut = truncate(&args(40));
        assert_eq!(cut.len(), 32);
        assert_eq!(&cut[30][..], b"30");
        assert_eq!(&cut[31][..], b"... (9 more arguments)");
        assert_eq!(truncate(&args(32)).len(), 32);
        let big = truncate(&[Bytes::from(vec![b'a'; 200])]);
        assert_eq!(big[0].len(), 128 + "... (72 more bytes)".len());
        assert!(big[0].ends_with(b"a... (72 more bytes)"));
    }

    #[test]
    fn secrets_are_redacted() {
        let cut = |line: &str| {
            let mut a: Vec<Bytes> = line
                .split(' ')
                .map(|w| Bytes::from(w.to_string()))
                .collect();
            redact(&mut a);
            a.iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(cut("AUTH u p"), "AUTH (redacted) (redacted)");
        assert_eq!(
            cut("HELLO 3 AUTH u p SETNAME n"),
            "HELLO 3 AUTH (redacted) (redacted) SETNAME n"
        );
        assert_eq!(
            cut("config set masterauth x maxmemory 1"),
            "config set masterauth (redacted) maxmemory 1"
        );
        assert_eq!(
            cut("MIGRATE h 1 k 9 5000 AUTH2 u p"),
            "MIGRATE h 1 k 9 5000 AUTH2 (redacted) (redacted)"
        );
        assert_eq!(cut("GET auth"), "GET auth");
        // Redis refuses these before it redacts anything.
        assert_eq!(cut("AUTH a b c"), "AUTH a b c");
        assert_eq!(cut("HELLO 3 AUTH a"), "HELLO 3 AUTH a");
        assert_eq!(cut("HELLO 4 AUTH u p"), "HELLO 4 AUTH u p");
        assert_eq!(
            cut("HELLO 3 SETNAME n AUTH u p"),
            "HELLO 3 SETNAME n AUTH (redacted) (redacted)"
        );
        assert_eq!(cut("HELLO 3 BAD x AUTH u p"), "HELLO 3 BAD x AUTH u p");
    }

    #[test]
    fn threshold_and_length_follow_the_configuration() {
        let mut c = Config::default();
        let mut log = SlowLog::default();
        c.set_by_name("slowlog-log-slower-than", "100").unwrap();
        c.set_by_name("slowlog-max-len", "2").unwrap();
        let at = |us: u64| us;
        log.record(&c, &args(1), at(99), 0, "a:1", None);
        assert_eq!(log.len(), 0);
        for us in [100, 200, 300] {
            log.record(&c, &args(1), at(us), 0, "a:1", Some(b"n"));
        }
        let ids: Vec<u64> = log.newest(None).map(|e| e.id).collect();
        assert_eq!(ids, [2, 1]);
        c.set_by_name("slowlog-log-slower-than", "-1").unwrap();
        assert!(!log.logs(&c, u64::MAX));
        log.reset();
        c.set_by_name("slowlog-log-slower-than", "0").unwrap();
        log.record(&c, &args(1), at(0), 0, "a:1", None);
        assert_eq!(log.newest(Some(1)).next().unwrap().id, 3);
    }

    /// redis-server 7.0.15 (`slowlog-log-slower-than 0`, then `EVAL "redis.call('SET','a',
    /// '1'); return redis.call('SADD','s','x')" 0`): SET and SADD are logged as the Lua
    /// client's ("?:0", no name), before the EVAL's own entry.
    #[test]
    fn commands_a_script_runs_are_logged_as_the_lua_clients() {
        let mut e = crate::Engine::new(Config::default());
        e.execute(1, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
        e.execute(1, &["SLOWLOG", "RESET"]);
        let script = "redis.call('SET','a','1'); return redis.call('SADD','s','x')";
        assert_eq!(e.execute(1, &["EVAL", script, "0"]), Reply::Int(1));
        let Reply::Array(log) = e.execute(1, &["SLOWLOG", "GET", "4"]) else {
            panic!("SLOWLOG GET")
        };
        let entries: Vec<(Reply, Reply, Reply)> = log
            .iter()
            .map(|entry| match entry {
                Reply::Array(f) => match &f[3] {
                    Reply::Array(argv) => (argv[0].clone(), f[4].clone(), f[5].clone()),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect();
        let lua = (Reply::bulk("?:0"), Reply::bulk(""));
        assert_eq!(entries[0].0, Reply::bulk("EVAL"));
        assert_eq!(
            entries[1],
            (Reply::bulk("SADD"), lua.0.clone(), lua.1.clone())
        );
        assert_eq!(entries[2], (Reply::bulk("SET"), lua.0, lua.1));
        assert_eq!(entries[3].0, Reply::bulk("SLOWLOG"));
    }
}
