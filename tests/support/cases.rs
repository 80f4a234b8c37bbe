//! Conformance case files: the same command lines sent to redlab and to a real
//! redis-server, replies compared byte for byte.
//!
//! Format (see tests/conformance/README.md): `=== name` starts a case; each following line
//! is `[@conn] [?modifier ...] COMMAND arg ...`, split like redis-cli (quotes, `\xHH`).
//! Modifiers: `?sort` (unordered aggregate), `?type` (compare only the reply's type byte),
//! `?ignore` (run, do not compare), `?replies=N` (the command answers N frames),
//! `?noreply` (read nothing), `?read` (send nothing, read one pending frame, e.g. a pub/sub
//! message), `?idle` (read one frame where none is expected: a short wait), `?sleep=MS`
//! (wait before the line), `?blocked=N` (before the line, wait until the server counts N
//! blocked clients), `?raw` (send the one argument as raw bytes, for protocol cases),
//! `?closed` (expect the server to close the connection), `?monitor` (a MONITOR line: its time
//! and a client's address are masked, `lua` is kept), `?let=NAME` (keep the integer
//! reply, e.g. a CLIENT ID, as `$NAME`: later arguments `$NAME` become that value on each
//! server, and an integer reply equal to it compares as `$NAME`; the line itself is not
//! compared).
//!
//! Nothing here depends on how fast the machine is: a reply or message that is expected is
//! waited for with a generous bound (`WAIT`), and an ordering between connections (who
//! blocks first) is established by polling the server, not by a sleep. Only `?idle`, where
//! nothing must come, waits briefly: a slow machine can only make it miss a late frame.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use redlab_server::protocol::split_args;

use super::resp::{show, sorted, RawConn};

/// How long an expected reply or message may take: generous, for a loaded machine.
const WAIT: Duration = Duration::from_secs(30);

/// How long a command's reply may take. Some lines block with no reply on either server
/// (BZPOPMIN on an empty key, say), so this is shorter than `WAIT`, and still far above
/// any reply's time on a loaded machine. A line marked `?slow` (a command slow on Redis
/// itself: PFSELFTEST takes 2 s on an idle machine) waits `WAIT`.
const REPLY: Duration = Duration::from_secs(5);

/// How long `?idle` listens for a frame that should not come.
const IDLE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct Line {
    pub lineno: usize,
    pub conn: String,
    pub mods: Vec<String>,
    pub args: Vec<Vec<u8>>,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub lines: Vec<Line>,
}

pub fn parse(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("===") {
            cases.push(Case {
                name: name.trim().to_string(),
                lines: Vec::new(),
            });
            continue;
        }
        let words = split_args(line.as_bytes())
            .unwrap_or_else(|| panic!("line {}: unbalanced quotes", i + 1));
        let mut conn = "main".to_string();
        let mut mods = Vec::new();
        let mut rest = words.as_slice();
        while let Some(w) = rest.first() {
            if w.starts_with(b"@") && w.len() > 1 {
                conn = String::from_utf8_lossy(&w[1..]).into_owned();
            } else if w.starts_with(b"?") && w.len() > 1 {
                mods.push(String::from_utf8_lossy(&w[1..]).into_owned());
            } else {
                break;
            }
            rest = &rest[1..];
        }
        let case = cases
            .last_mut()
            .unwrap_or_else(|| panic!("line {}: command before the first '=== name'", i + 1));
        case.lines.push(Line {
            lineno: i + 1,
            conn,
            mods,
            args: rest.to_vec(),
        });
    }
    cases
}

/// One difference between redlab and Redis.
#[derive(Debug)]
pub struct Mismatch {
    pub case: String,
    pub lineno: usize,
    pub command: String,
    pub redis: String,
    pub redlab: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}] line {}: {}\n    redis : {}\n    redlab: {}",
            self.case, self.lineno, self.command, self.redis, self.redlab
        )
    }
}

struct Target {
    addr: SocketAddr,
    conns: HashMap<String, RawConn>,
    /// `?let=NAME` values of this server (integer replies, as their text).
    vars: Vec<(String, Vec<u8>)>,
}

impl Target {
    /// `$NAME` arguments replaced by this server's value.
    fn substitute(&self, args: &[Vec<u8>]) -> Vec<Vec<u8>> {
        args.iter()
            .map(|a| {
                self.vars
                    .iter()
                    .find(|(name, _)| a.strip_prefix(b"$") == Some(name.as_bytes()))
                    .map_or_else(|| a.clone(), |(_, v)| v.clone())
            })
            .collect()
    }

    /// Integer replies equal to a `?let` value written as `:$NAME`, so both servers compare
    /// equal whatever ids they gave out.
    fn normalize(&self, frame: &[u8]) -> Vec<u8> {
        let mut out = frame.to_vec();
        for (name, v) in &self.vars {
            let needle = [&b":"[..], &v[..], &b"\r\n"[..]].concat();
            let with = [&b":$"[..], name.as_bytes(), &b"\r\n"[..]].concat();
            let mut i = 0;
            while let Some(at) = out[i..].windows(needle.len()).position(|w| w == needle) {
                out.splice(i + at..i + at + needle.len(), with.iter().copied());
                i += at + with.len();
            }
        }
        out
    }
}

impl Target {
    fn conn(&mut self, name: &str) -> &mut RawConn {
        let addr = self.addr;
        self.conns
            .entry(name.to_string())
            .or_insert_with(|| RawConn::connect(addr))
    }

    fn reset(&mut self) {
        self.conns.clear();
        self.vars.clear();
        let mut admin = RawConn::connect(self.addr);
        // The previous case's connections are gone (and none of them still blocked) before
        // this case starts, however long the server takes to notice the closes.
        wait_info(&mut admin, "connected_clients:1\r\n");
        wait_info(&mut admin, "blocked_clients:0\r\n");
        for cmd in [
            &["FLUSHALL"][..],
            &["SCRIPT", "FLUSH"],
            &["FUNCTION", "FLUSH"],
        ] {
            admin.send(
                &cmd.iter()
                    .map(|s| s.as_bytes().to_vec())
                    .collect::<Vec<_>>(),
            );
            admin.read_frame(WAIT);
        }
    }

    /// Runs one line; returns the frames it answered (an entry of None: closed / nothing).
    fn run(&mut self, line: &Line) -> Vec<Option<Vec<u8>>> {
        let has = |m: &str| line.mods.iter().any(|x| x == m);
        let replies = line
            .mods
            .iter()
            .find_map(|m| {
                m.strip_prefix("replies=")
                    .map(|n| n.parse::<usize>().expect("replies=N"))
            })
            .unwrap_or(1);
        if let Some(ms) = line.mods.iter().find_map(|m| m.strip_prefix("sleep=")) {
            std::thread::sleep(Duration::from_millis(ms.parse().expect("sleep=MS")));
        }
        if let Some(n) = line.mods.iter().find_map(|m| m.strip_prefix("blocked=")) {
            let n: u64 = n.parse().expect("blocked=N");
            wait_info(
                &mut RawConn::connect(self.addr),
                &format!("blocked_clients:{n}\r\n"),
            );
        }
        let args = self.substitute(&line.args);
        let var = line.mods.iter().find_map(|m| m.strip_prefix("let="));
        let conn = self.conn(&line.conn);
        if has("read") {
            return vec![conn.read_frame(WAIT)];
        }
        if has("idle") {
            return vec![conn.read_frame(IDLE)];
        }
        if has("raw") {
            conn.send_raw(&args.concat());
        } else {
            conn.send(&args);
        }
        if has("noreply") {
            return Vec::new();
        }
        let wait = if has("slow") { WAIT } else { REPLY };
        let mut out: Vec<Option<Vec<u8>>> = (0..replies).map(|_| conn.read_frame(wait)).collect();
        if has("closed") {
            out.push(conn.read_frame(Duration::from_secs(2)));
        }
        if let Some(name) = var {
            let value = out
                .first()
                .and_then(|f| f.as_ref())
                .and_then(|f| f.strip_prefix(b":"))
                .map(|f| f.strip_suffix(b"\r\n").unwrap_or(f).to_vec())
                .unwrap_or_else(|| panic!("line {}: ?let wants an integer reply", line.lineno));
            self.vars.retain(|(n, _)| n != name);
            self.vars.push((name.to_string(), value));
        }
        out
    }
}

/// Polls INFO on `admin` until it contains `field` (a whole `name:value\r\n` line); panics
/// after `WAIT`.
fn wait_info(admin: &mut RawConn, field: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        admin.send(&[b"INFO".to_vec(), b"clients".to_vec()]);
        let info = admin
            .read_frame(WAIT)
            .map(|f| String::from_utf8_lossy(&f).into_owned())
            .unwrap_or_default();
        if info.contains(field) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server never reported {field:?}:\n{info}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs every case against both servers and returns the differences.
pub fn run_cases(cases: &[Case], redis: SocketAddr, redlab: SocketAddr) -> Vec<Mismatch> {
    let mut a = Target {
        addr: redis,
        conns: HashMap::new(),
        vars: Vec::new(),
    };
    let mut b = Target {
        addr: redlab,
        conns: HashMap::new(),
        vars: Vec::new(),
    };
    let mut mismatches = Vec::new();
    for case in cases {
        a.reset();
        b.reset();
        for line in &case.lines {
            let ra = a.run(line);
            let rb = b.run(line);
            let has = |m: &str| line.mods.iter().any(|x| x == m);
            if has("ignore") || line.mods.iter().any(|m| m.starts_with("let=")) {
                continue;
            }
            let ra: Vec<_> = ra
                .iter()
                .map(|f| f.as_ref().map(|f| a.normalize(f)))
                .collect();
            let rb: Vec<_> = rb
                .iter()
                .map(|f| f.as_ref().map(|f| b.normalize(f)))
                .collect();
            let norm = |f: &Option<Vec<u8>>| -> Option<Vec<u8>> {
                let f = f.as_ref()?;
                Some(if has("type") {
                    f[..1].to_vec()
                } else if has("monitor") {
                    mask_monitor_line(f)
                } else if has("sort") {
                    sorted(f)
                } else {
                    f.clone()
                })
            };
            let na: Vec<_> = ra.iter().map(norm).collect();
            let nb: Vec<_> = rb.iter().map(norm).collect();
            if na != nb {
                let render = |v: &[Option<Vec<u8>>]| {
                    v.iter()
                        .map(|f| f.as_ref().map_or("<none>".to_string(), |f| show(f)))
                        .collect::<Vec<_>>()
                        .join(" | ")
                };
                mismatches.push(Mismatch {
                    case: case.name.clone(),
                    lineno: line.lineno,
                    command: line
                        .args
                        .iter()
                        .map(|a| show(a))
                        .collect::<Vec<_>>()
                        .join(" "),
                    redis: render(&ra),
                    redlab: render(&rb),
                });
                // Later lines of a case that already differs only add noise.
                break;
            }
        }
    }
    mismatches
}

/// A MONITOR line, `+<secs>.<micros> [<db> <addr>] "args"...`, with the time and a client's
/// address (which differ run to run) masked; `lua` and the database stay.
fn mask_monitor_line(frame: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(frame);
    let Some((head, rest)) = text.split_once(" [") else {
        return frame.to_vec();
    };
    let Some((inside, tail)) = rest.split_once(']') else {
        return frame.to_vec();
    };
    let (db, addr) = inside.split_once(' ').unwrap_or((inside, ""));
    let addr = if addr == "lua" { "lua" } else { "client" };
    let time = if head.len() > 1 && head[1..].bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        "+TIME"
    } else {
        head
    };
    format!("{time} [{db} {addr}]{tail}").into_bytes()
}

/// Case names listed in tests/conformance/DIFFERENCES.md (lines `- \`case name\`: reason`).
pub fn known_differences(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("- `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name.to_string()))
        .collect()
}
