//! The replica side of a link: a task on the server thread's event loop (its socket is
//! non-blocking, so the engine keeps serving every other client while the link waits) that
//! connects to the primary, shakes hands (PING, REPLCONF listening-port and capa, PSYNC),
//! loads the RDB file (length-prefixed, or the diskless `$EOF:<mark>` form), then applies the
//! stream command by command through `Engine::execute_args` on a session of its own, and
//! acknowledges its offset every second and when asked (REPLCONF GETACK).
//!
//! The task holds the engine only between awaits. REPLICAOF bumps a generation number; a
//! task whose generation is no longer the engine's stops at its next step.

use std::rc::Rc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::backlog::Backlog;
use crate::db::rdb::file::read_file;
use crate::net::server::Shared;
use crate::session::ConnId;

/// How long the link waits before trying again after a failure.
const RETRY: Duration = Duration::from_millis(200);
/// How often the replica acknowledges its offset unasked.
const ACK_EVERY: Duration = Duration::from_secs(1);
/// How often a lagging link looks whether held commands are due.
const HELD_CHECK: Duration = Duration::from_millis(5);

/// Starts the link task the engine asked for, if any (called by the shell's ticker).
pub(crate) fn poll(shared: &Rc<Shared>) {
    let wanted = shared.engine.borrow_mut().repl.link_wanted.take();
    if let Some(generation) = wanted {
        tokio::task::spawn_local(run(shared.clone(), generation));
    }
}

fn current(shared: &Shared, generation: u64) -> Option<(String, u16)> {
    let e = shared.engine.borrow();
    let f = e.repl.following.as_ref()?;
    (f.generation == generation).then(|| (f.host.clone(), f.port))
}

fn set_state(shared: &Shared, generation: u64, state: &'static str) {
    let mut e = shared.engine.borrow_mut();
    let now = e.clock.now_ms();
    if let Some(f) = e.repl.following.as_mut() {
        if f.generation == generation {
            if f.state == "connected" && state != "connected" {
                f.down_since_ms = now;
            }
            f.state = state;
        }
    }
}

async fn run(shared: Rc<Shared>, generation: u64) {
    while let Some((host, port)) = current(&shared, generation) {
        if shared.engine.borrow().repl.faults.partitioned {
            crate::net::timers::sleep(RETRY).await;
            continue;
        }
        set_state(&shared, generation, "connecting");
        let result = session(&shared, generation, &host, port).await;
        if let Err(why) = result {
            tracing::debug!("redlab: replication link to {host}:{port}: {why}");
        }
        let conn = {
            let e = shared.engine.borrow();
            e.repl
                .following
                .as_ref()
                .filter(|f| f.generation == generation)
                .and_then(|f| f.conn)
        };
        if let Some(conn) = conn {
            shared.engine.borrow_mut().disconnect(conn);
        }
        set_state(&shared, generation, "connect");
        crate::net::timers::sleep(RETRY).await;
    }
}

/// Connects to the primary from `source` (`bind-source-addr`) when one is set: as Redis's
/// best-effort bind, a source address that cannot be bound is left out rather than failing
/// the link.
async fn connect_from(host: &str, port: u16, source: &str) -> std::io::Result<TcpStream> {
    if source.is_empty() {
        return TcpStream::connect((host, port)).await;
    }
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        let socket = if addr.is_ipv6() {
            tokio::net::TcpSocket::new_v6()?
        } else {
            tokio::net::TcpSocket::new_v4()?
        };
        if let Ok(from) = source.parse::<std::net::IpAddr>() {
            let _ = socket.bind(std::net::SocketAddr::new(from, 0));
        }
        match socket.connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::AddrNotAvailable)))
}

/// One connection to the primary, from handshake to the link's end.
async fn session(
    shared: &Rc<Shared>,
    generation: u64,
    host: &str,
    port: u16,
) -> Result<(), String> {
    // What a lagging link held is asked for again by PSYNC (it is past our offset).
    shared.engine.borrow_mut().repl.faults.held.clear();
    let source = shared
        .engine
        .borrow()
        .config
        .get_by_name("bind-source-addr")
        .unwrap_or_default();
    let mut stream = connect_from(host, port, &source)
        .await
        .map_err(|e| e.to_string())?;
    let mut buf: Vec<u8> = Vec::new();
    let my_port = shared.engine.borrow().config.port.to_string();
    let (psync_id, psync_offset) = {
        let e = shared.engine.borrow();
        match &e.repl.backlog {
            Some(b) => (e.repl.replid.clone(), (b.end() + 1).to_string()),
            None => ("?".to_string(), "-1".to_string()),
        }
    };
    // A FAILOVER hands over with its PSYNC (`super::failover`).
    let hand_over = super::failover::psync_hands_over(&shared.engine.borrow());
    let psync: &[&str] = if hand_over {
        &["PSYNC", &psync_id, &psync_offset, "FAILOVER"]
    } else {
        &["PSYNC", &psync_id, &psync_offset]
    };
    // masterauth (with masteruser, AUTH's two-argument form) logs in after the PING.
    let (user, pass) = {
        let c = &shared.engine.borrow().config;
        let get = |name: &str| c.get_by_name(name).filter(|v| !v.is_empty());
        (get("masteruser"), get("masterauth"))
    };
    let auth: Vec<&str> = match (&user, &pass) {
        (Some(u), Some(p)) => vec!["AUTH", u, p],
        (None, Some(p)) => vec!["AUTH", p],
        _ => Vec::new(),
    };
    let handshake: [&[&str]; 5] = [
        &["PING"],
        &auth[..],
        &["REPLCONF", "listening-port", &my_port],
        &["REPLCONF", "capa", "eof", "capa", "psync2"],
        psync,
    ];
    let mut last = String::new();
    for req in handshake.into_iter().filter(|r| !r.is_empty()) {
        send(&mut stream, req).await?;
        last = read_line(&mut stream, &mut buf).await?;
        if !last.starts_with('-') || req[0] == "REPLCONF" {
            continue;
        }
        // A primary with a password refuses the PING before AUTH; Redis goes on to AUTH.
        let auth_pending = last.starts_with("-NOAUTH") || last.starts_with("-NOPERM");
        match req[0] {
            "PING" if auth_pending => {}
            "AUTH" => {
                let err = last.trim_start_matches('-');
                tracing::warn!("Unable to AUTH to MASTER: {err}");
                return Err(format!("the primary refused AUTH: {last}"));
            }
            "PSYNC" => {
                super::failover::psync_answered(&mut shared.engine.borrow_mut(), false);
                return Err(format!("the primary answered {:?} with {last}", req[0]));
            }
            _ => return Err(format!("the primary answered {:?} with {last}", req[0])),
        }
    }
    if current(shared, generation).is_none() {
        return Ok(());
    }
    set_state(shared, generation, "sync");
    if let Some(rest) = last.strip_prefix("+FULLRESYNC ") {
        let mut parts = rest.split(' ');
        let id = parts.next().unwrap_or_default().to_string();
        let offset: i64 = parts.next().and_then(|o| o.parse().ok()).unwrap_or(0);
        let file = read_payload(&mut stream, &mut buf).await?;
        load(shared, &file, &id, offset)?;
    } else if let Some(rest) = last.strip_prefix("+CONTINUE") {
        let id = rest.trim();
        let mut e = shared.engine.borrow_mut();
        if !id.is_empty() && id != e.repl.replid {
            let offset = e.repl.master_offset();
            e.repl.replid2 = std::mem::replace(&mut e.repl.replid, id.to_string());
            e.repl.second_offset = offset + 1;
        }
    } else {
        super::failover::psync_answered(&mut shared.engine.borrow_mut(), false);
        return Err(format!("unexpected PSYNC reply {last}"));
    }
    super::failover::psync_answered(&mut shared.engine.borrow_mut(), true);
    let conn = {
        let mut e = shared.engine.borrow_mut();
        let conn = e.connect_from(&format!("{host}:{port}"), "127.0.0.1:0");
        if let Some(s) = e.sessions.get_mut(&conn) {
            s.authenticated = true;
            s.acl_free = true;
        }
        let now = e.clock.now_ms();
        if let Some(f) = e.repl.following.as_mut() {
            f.conn = Some(conn);
            f.state = "connected";
            f.last_io_ms = now;
        }
        conn
    };
    apply_loop(shared, generation, conn, &mut stream, buf).await
}

/// Reads the stream and applies it until the link fails or is replaced.
///
/// The stream is read straight into one buffer and each command is split off it: its
/// arguments are slices of the command's bytes, which are also what the backlog and any
/// sub-replica get, so applying a command copies nothing (a replica's per-command cost is
/// the engine's, as on a client connection).
async fn apply_loop(
    shared: &Rc<Shared>,
    generation: u64,
    conn: ConnId,
    stream: &mut TcpStream,
    buf: Vec<u8>,
) -> Result<(), String> {
    // One timer re-armed after each acknowledgement, polled in place: an `Interval` built a
    // new tick future on every pass of the loop, that is on every command applied. The first
    // acknowledgement goes at once, as the interval's first tick did.
    let ack = crate::net::timers::sleep(Duration::ZERO);
    tokio::pin!(ack);
    // Registered now, so that `is_elapsed` tells when it is due without a poll (below).
    ack.as_mut().reset(tokio::time::Instant::now());
    let mut buf = BytesMut::from(&buf[..]);
    loop {
        if !is_current(shared, generation) {
            return Ok(());
        }
        let ack_now = apply(shared, conn, &mut buf)?;
        if ack_now {
            send_ack(shared, stream).await?;
        }
        let holding = !shared.engine.borrow().repl.faults.held.is_empty();
        if buf.capacity() - buf.len() < READ_ROOM / 4 {
            buf.reserve(READ_ROOM);
        }
        tokio::select! {
            // The stream first: the timers are polled only when it has nothing to read. A
            // poll of the acknowledgement's timer (and select's random start) was ~250
            // instructions of every command applied. A stream that never runs dry is still
            // acknowledged: the timer, fired by the runtime when due, is looked at after
            // each read.
            biased;
            n = stream.read_buf(&mut buf) => {
                let n = n.map_err(|e| e.to_string())?;
                if n == 0 {
                    return Err("the primary closed the link".into());
                }
                if ack.is_elapsed() {
                    send_ack(shared, stream).await?;
                    ack.as_mut().reset(tokio::time::Instant::now() + ACK_EVERY);
                }
            }
            // In an async block: select! builds every branch's future, disabled or not, and
            // `sleep` reads the clock and sets up a timer entry, on every command applied.
            _ = async { crate::net::timers::sleep(HELD_CHECK).await }, if holding => {}
            _ = &mut ack => {
                send_ack(shared, stream).await?;
                ack.as_mut().reset(tokio::time::Instant::now() + ACK_EVERY);
            }
        }
    }
}

/// How much room the link's read buffer keeps for the next read.
const READ_ROOM: usize = 64 * 1024;

/// Whether the link task of `generation` is still the one the engine wants (without
/// copying the primary's address, as `current` does).
fn is_current(shared: &Shared, generation: u64) -> bool {
    let e = shared.engine.borrow();
    e.repl
        .following
        .as_ref()
        .is_some_and(|f| f.generation == generation)
}

async fn send_ack(shared: &Shared, stream: &mut TcpStream) -> Result<(), String> {
    let offset = shared.engine.borrow().repl.master_offset().to_string();
    send(stream, &["REPLCONF", "ACK", &offset]).await
}

/// Applies every complete command in `buf`; returns whether the primary asked for an
/// acknowledgement.
fn apply(shared: &Shared, conn: ConnId, buf: &mut BytesMut) -> Result<bool, String> {
    let mut woken = Vec::new();
    let mut ack = false;
    {
        let mut e = shared.engine.borrow_mut();
        if !e.is_connected(conn) || e.repl.faults.partitioned {
            return Err("the link's session was closed".into());
        }
        let now = e.clock.now_ms();
        let mut read = false;
        while let Some((args, raw)) = parse_command(buf)? {
            read = true;
            e.repl.faults.held.push_back((args, raw, now));
        }
        let mut applied = false;
        while e.repl.faults.due(now) {
            let Some((args, raw, _)) = e.repl.faults.held.pop_front() else {
                break;
            };
            applied = true;
            if !args.is_empty() {
                e.execute_args(conn, args);
            }
            // The bytes count toward the offset whatever they were, as Redis's replica
            // counts them; sub-replicas get them as they came.
            e.repl_feed(raw);
            ack |= std::mem::take(&mut e.repl.ack_requested);
        }
        if read || applied {
            let now = e.clock.now_ms();
            if let Some(f) = e.repl.following.as_mut() {
                f.last_io_ms = now;
            }
            let _ = e.take_output(conn);
            woken = e.take_wakeups();
        }
    }
    for c in woken {
        shared.wake(c);
    }
    Ok(ack)
}

/// Splits the first command off `buf`: its arguments (slices of its bytes) and its bytes;
/// a bare newline (a keep-alive) is an empty command. None when more bytes are needed.
/// The bounds of the first few arguments are kept as the command is walked, so a command
/// that short (every SET, DEL, SELECT) is walked once, not once to find its end and again
/// for its arguments.
fn parse_command(buf: &mut BytesMut) -> Result<Option<(Vec<Bytes>, Bytes)>, String> {
    const KEPT: usize = 8;
    let mut bounds = [(0, 0); KEPT];
    let mut n = 0;
    let Some(len) = scan_command(buf, |from, to| {
        if let Some(b) = bounds.get_mut(n) {
            *b = (from, to);
        }
        n += 1;
    })?
    else {
        return Ok(None);
    };
    let raw = buf.split_to(len).freeze();
    let args = if n <= KEPT {
        bounds[..n].iter().map(|&(f, t)| raw.slice(f..t)).collect()
    } else {
        let mut args = Vec::with_capacity(n);
        scan_command(&raw, |from, to| args.push(raw.slice(from..to)))?;
        args
    };
    Ok(Some((args, raw)))
}

/// Walks the first command in `buf`, calling `arg` with each argument's bounds; returns
/// the command's length, or None when more bytes are needed.
fn scan_command(buf: &[u8], mut arg: impl FnMut(usize, usize)) -> Result<Option<usize>, String> {
    if buf.is_empty() {
        return Ok(None);
    }
    if buf[0] == b'\n' {
        return Ok(Some(1));
    }
    if buf[0] != b'*' {
        return Err("protocol error in the primary's stream".into());
    }
    let Some((n, mut pos)) = number_line(buf, 1)? else {
        return Ok(None);
    };
    for _ in 0..n {
        if pos >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            return Err("protocol error in the primary's stream".into());
        }
        let Some((len, at)) = number_line(buf, pos + 1)? else {
            return Ok(None);
        };
        let len = usize::try_from(len).map_err(|_| "bad bulk length".to_string())?;
        if buf.len() < at + len + 2 {
            return Ok(None);
        }
        arg(at, at + len);
        pos = at + len + 2;
    }
    Ok(Some(pos))
}

/// A decimal number ending in CRLF at `from`; the position after the CRLF. Read digit by
/// digit: the numbers are a few digits long, and a search for the line's end then a string
/// parse cost more than the rest of splitting a command off the stream.
fn number_line(buf: &[u8], from: usize) -> Result<Option<(i64, usize)>, String> {
    let bad = || "protocol error in the primary's stream".to_string();
    let negative = buf.get(from) == Some(&b'-');
    let digits = from + usize::from(negative);
    let mut at = digits;
    let mut n: i64 = 0;
    loop {
        match buf.get(at) {
            None => return Ok(None),
            Some(b'\r') => break,
            Some(&d) if d.is_ascii_digit() => {
                n = n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(i64::from(d - b'0')))
                    .ok_or_else(bad)?;
                at += 1;
            }
            Some(_) => return Err(bad()),
        }
    }
    if at == digits {
        return Err(bad());
    }
    match buf.get(at + 1) {
        None => Ok(None),
        Some(b'\n') => Ok(Some((if negative { -n } else { n }, at + 2))),
        Some(_) => Err(bad()),
    }
}

async fn send(stream: &mut TcpStream, args: &[&str]) -> Result<(), String> {
    let mut out = Vec::new();
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n{}\r\n", a.len(), a).as_bytes());
    }
    stream.write_all(&out).await.map_err(|e| e.to_string())
}

async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(), String> {
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
    if n == 0 {
        return Err("the primary closed the link".into());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

/// One reply line, skipping the bare newlines a primary sends while it prepares the file.
async fn read_line(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<String, String> {
    loop {
        while buf.first() == Some(&b'\n') {
            buf.remove(0);
        }
        if let Some(end) = buf.windows(2).position(|w| w == b"\r\n") {
            let line = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 2);
            return Ok(line);
        }
        fill(stream, buf).await?;
    }
}

/// The RDB file: `$<len>\r\n<file>`, or `$EOF:<40 bytes>\r\n<file><the same 40 bytes>`.
async fn read_payload(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Vec<u8>, String> {
    let head = read_line(stream, buf).await?;
    if let Some(mark) = head.strip_prefix("$EOF:") {
        let mark = mark.as_bytes().to_vec();
        loop {
            if buf.len() >= mark.len() && buf.ends_with(&mark) {
                let file = buf[..buf.len() - mark.len()].to_vec();
                buf.clear();
                return Ok(file);
            }
            fill(stream, buf).await?;
        }
    }
    let len: usize = head
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unexpected payload header {head}"))?;
    while buf.len() < len {
        fill(stream, buf).await?;
    }
    let file = buf[..len].to_vec();
    buf.drain(..len);
    Ok(file)
}

/// Replaces the dataset with the primary's file and takes its history.
fn load(shared: &Shared, file: &[u8], id: &str, offset: i64) -> Result<(), String> {
    let loaded = read_file(file).map_err(|e| format!("cannot load the primary's RDB: {e:?}"))?;
    let mut e = shared.engine.borrow_mut();
    for db in e.dbs.iter_mut() {
        db.clear();
    }
    let n = e.dbs.len();
    for (db, key, value, expire_at, hint) in loaded.keys {
        if db < n {
            let entry = crate::cmd::keys::dump::loaded_entry(&e, value, expire_at, hint);
            e.dbs[db].insert_entry(&key, entry);
        }
    }
    e.recheck_all_dbs();
    // The libraries load through FUNCTION RESTORE on a private session, as neither a
    // replica (read-only) nor a primary (nothing to propagate) for that moment.
    let following = e.repl.following.take();
    e.repl.backlog = None;
    let loader = e.connect();
    e.execute(loader, &["FUNCTION", "FLUSH"]);
    if !loaded.libraries.is_empty() {
        let payload = crate::db::rdb::dump_functions(loaded.libraries.iter().map(|l| &l[..]));
        e.execute(
            loader,
            &[&b"FUNCTION"[..], b"RESTORE", &payload, b"REPLACE"],
        );
    }
    e.disconnect(loader);
    e.repl.following = following;
    e.repl.replid = id.to_string();
    e.repl.replid2 = "0".repeat(40);
    e.repl.second_offset = -1;
    let size = e
        .config
        .get_by_name("repl-backlog-size")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1 << 20);
    e.repl.backlog = Some(Backlog::new(size, offset));
    e.repl.offset = offset;
    Ok(())
}

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};

    use super::parse_command;

    /// `bind-source-addr`: the link leaves from that address (Redis's unit/networking sees
    /// the replica as 127.0.0.2), and one that cannot be bound is left out, not fatal.
    #[tokio::test(flavor = "current_thread")]
    async fn the_link_leaves_from_bind_source_addr_when_it_can() {
        let primary = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = primary.local_addr().unwrap().port();
        for (source, seen) in [
            ("127.0.0.2", "127.0.0.2"),
            ("", "127.0.0.1"),
            ("10.255.255.254", "127.0.0.1"),
        ] {
            let (stream, accepted) = tokio::join!(
                super::connect_from("127.0.0.1", port, source),
                primary.accept()
            );
            stream.unwrap();
            assert_eq!(accepted.unwrap().1.ip().to_string(), seen, "{source:?}");
        }
    }

    #[test]
    fn parses_commands_and_waits_for_the_rest() {
        let one = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n";
        let mut buf = BytesMut::from(&one[..]);
        buf.extend_from_slice(b"*1\r\n$4\r\nPI");
        let (args, raw) = parse_command(&mut buf).unwrap().unwrap();
        assert_eq!(&raw[..], &one[..]);
        assert_eq!(args, vec!["SELECT", "0"]);
        // The next command is incomplete: nothing is taken until the rest comes.
        assert!(parse_command(&mut buf).unwrap().is_none());
        assert_eq!(&buf[..], b"*1\r\n$4\r\nPI");
        buf.extend_from_slice(b"NG\r\n\n");
        let (args, raw) = parse_command(&mut buf).unwrap().unwrap();
        assert_eq!(
            (args, &raw[..]),
            (vec![Bytes::from("PING")], &b"*1\r\n$4\r\nPING\r\n"[..])
        );
        let (args, raw) = parse_command(&mut buf).unwrap().unwrap();
        assert!(args.is_empty());
        assert_eq!(&raw[..], b"\n");
        assert!(buf.is_empty());
        assert!(parse_command(&mut BytesMut::from(&b"+OK\r\n"[..])).is_err());
        assert!(parse_command(&mut BytesMut::from(&b"*1\r\n$2\rx\r\n"[..])).is_err());
        assert!(parse_command(&mut BytesMut::from(&b"*1\r\n$x\r\n"[..])).is_err());
        assert!(parse_command(&mut BytesMut::from(&b"*\r\n"[..])).is_err());
        assert!(parse_command(&mut BytesMut::from(&b"*1\r\n$-1\r\n"[..])).is_err());
        // More arguments than the walk keeps bounds for: all of them, in order.
        let names: Vec<String> = (0..11).map(|i| format!("a{i}")).collect();
        let mut long = format!("*{}\r\n", names.len());
        for a in &names {
            long.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        let (args, raw) = parse_command(&mut BytesMut::from(long.as_bytes()))
            .unwrap()
            .unwrap();
        assert_eq!(args, names);
        assert_eq!(&raw[..], long.as_bytes());
        // A count that is all there is so far waits for its line's end.
        assert!(parse_command(&mut BytesMut::from(&b"*12"[..]))
            .unwrap()
            .is_none());
    }
}
