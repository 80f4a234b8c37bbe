//! Clients that try to get around authentication while a script holds the server, and
//! clients that make the server hold their output or input without bound.
//!
//! Each scenario runs against redlab and, where Redis has an answer, against a real
//! redis-server 7.0.15: what the clients see must be the same.

mod support;

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use redlab_client::RealRedis;
use support::resp::{show, RawConn};

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, Duration::from_secs(10))
}

fn reply_or_closed(c: &mut RawConn) -> String {
    c.read_frame(Duration::from_secs(10))
        .map_or_else(|| "(closed)".to_string(), |f| show(&f))
}

const SPIN: &str = "while true do end";
const BUSY: &str =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\\r\\n";
const NOAUTH: &str = "-NOAUTH Authentication required.\\r\\n";

/// Sets a password and a short busy threshold, starts a spinning script from an
/// authenticated client and waits until it is busy. Returns the script's connection.
fn start_busy_script(addr: SocketAddr) -> RawConn {
    let mut setup = RawConn::connect(addr);
    assert_eq!(
        cmd(
            &mut setup,
            &["CONFIG", "SET", "busy-reply-threshold", "100"]
        ),
        "+OK\\r\\n"
    );
    assert_eq!(
        cmd(&mut setup, &["CONFIG", "SET", "requirepass", "s3cret"]),
        "+OK\\r\\n"
    );
    let mut runner = RawConn::connect(addr);
    assert_eq!(cmd(&mut runner, &["AUTH", "s3cret"]), "+OK\\r\\n");
    runner.send(&[b"EVAL".to_vec(), SPIN.as_bytes().to_vec(), b"0".to_vec()]);
    let mut probe = RawConn::connect(addr);
    assert_eq!(
        cmd(&mut probe, &["AUTH", "s3cret"]),
        "+OK\\r\\n",
        "AUTH works before and during the script"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while cmd(&mut probe, &["PING"]) != BUSY {
        assert!(Instant::now() < deadline, "the script never became busy");
        std::thread::sleep(Duration::from_millis(20));
    }
    runner
}

/// What unauthenticated and then authenticated clients see during a busy script.
fn busy_auth_scenario(addr: SocketAddr) -> Vec<String> {
    let mut runner = start_busy_script(addr);
    let mut seen = Vec::new();
    let mut anon = RawConn::connect(addr);
    for args in [
        &["SCRIPT", "KILL"][..],
        &["FUNCTION", "KILL"],
        &["SHUTDOWN", "NOSAVE"],
        &["SHUTDOWN"],
        &["PING"],
        &["GET", "x"],
        &["MULTI"],
        &["NOSUCHCOMMAND"],
        &["GET"],
        &["AUTH", "wrong"],
        &["AUTH", "default", "wrong"],
    ] {
        seen.push(cmd(&mut anon, args));
    }
    // Redis's limits for unauthenticated clients hold during the script too.
    let mut big = RawConn::connect(addr);
    big.send_raw(b"*11\r\n");
    seen.push(reply_or_closed(&mut big));
    seen.push(reply_or_closed(&mut big));
    let mut big = RawConn::connect(addr);
    big.send_raw(b"*1\r\n$16385\r\n");
    seen.push(reply_or_closed(&mut big));
    seen.push(reply_or_closed(&mut big));
    let mut small = RawConn::connect(addr);
    small.send_raw(b"*2\r\n$4\r\nPING\r\n$16384\r\n");
    small.send_raw(&[b'a'; 16384]);
    small.send_raw(b"\r\n");
    seen.push(reply_or_closed(&mut small));

    // The script survived all of that; authenticating during it makes SCRIPT KILL work.
    seen.push(cmd(&mut anon, &["AUTH", "s3cret"]));
    seen.push(cmd(&mut anon, &["PING"]));
    seen.push(cmd(&mut anon, &["SCRIPT", "KILL"]));
    let killed = show(
        &runner
            .read_frame(Duration::from_secs(10))
            .expect("the EVAL caller's reply"),
    );
    seen.push(
        killed
            .split("script: ")
            .next()
            .unwrap_or_default()
            .to_string(),
    );
    seen.push(cmd(&mut anon, &["PING"]));
    seen
}

#[test]
fn unauthenticated_clients_cannot_kill_or_shut_down_during_a_busy_script() {
    let server = redlab::Server::start();
    let ours = busy_auth_scenario(server.addr());
    assert!(
        server.is_running(),
        "an unauthenticated SHUTDOWN NOSAVE did not stop the server"
    );
    assert_eq!(&ours[..3], &[NOAUTH, NOAUTH, NOAUTH], "{ours:#?}");
    assert_eq!(ours[4], NOAUTH);
    assert_eq!(
        ours[11],
        "-ERR Protocol error: unauthenticated multibulk length\\r\\n"
    );
    assert_eq!(ours[12], "(closed)");
    assert_eq!(
        ours[13],
        "-ERR Protocol error: unauthenticated bulk length\\r\\n"
    );
    assert_eq!(ours[18], "+OK\\r\\n", "an authenticated SCRIPT KILL works");
    assert_eq!(ours[19], "-ERR Script killed by user with SCRIPT KILL... ");
    assert_eq!(ours[20], "+PONG\\r\\n");
    if let Some(real) = RealRedis::start_or_skip("busy_auth") {
        assert_eq!(busy_auth_scenario(real.addr()), ours, "differs from Redis");
    }
}

/// Commands that an authenticated client may send during the script but that need the
/// engine run once the script is over, in order; SHUTDOWN NOSAVE from it stops the server.
#[test]
fn authenticated_allow_busy_commands_and_shutdown_nosave() {
    let server = redlab::Server::start();
    let addr = server.addr();
    let _runner = start_busy_script(addr);
    let mut c = RawConn::connect(addr);
    assert_eq!(cmd(&mut c, &["AUTH", "default", "s3cret"]), "+OK\\r\\n");
    assert_eq!(
        cmd(&mut c, &["FUNCTION", "KILL"]),
        BUSY,
        "FUNCTION KILL does not stop an EVAL (as Redis)"
    );
    assert_eq!(
        cmd(&mut c, &["SHUTDOWN"]),
        BUSY,
        "only SHUTDOWN NOSAVE gets through (as Redis)"
    );
    assert_eq!(cmd(&mut c, &["CLIENT", "ID"]), BUSY);
    c.send(&[b"SHUTDOWN".to_vec(), b"NOSAVE".to_vec()]);
    assert_eq!(
        c.read_frame(Duration::from_secs(10)),
        None,
        "the server closes the connection"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.is_running() {
        assert!(
            Instant::now() < deadline,
            "SHUTDOWN NOSAVE stopped the server"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// This machine's address on its default route, if it has one (no packet is sent).
fn outside_ip() -> Option<IpAddr> {
    let s = UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn protected_mode_applies_to_clients_accepted_during_a_busy_script() {
    let Some(ip) = outside_ip() else {
        eprintln!("skipped: no non-loopback address");
        return;
    };
    let server = redlab::Server::builder()
        .bind("0.0.0.0")
        .busy_reply_threshold(Duration::from_millis(100))
        .start();
    let local = SocketAddr::from(([127, 0, 0, 1], server.port()));
    let mut runner = RawConn::connect(local);
    runner.send(&[b"EVAL".to_vec(), SPIN.as_bytes().to_vec(), b"0".to_vec()]);
    let mut probe = RawConn::connect(local);
    let deadline = Instant::now() + Duration::from_secs(20);
    while cmd(&mut probe, &["PING"]) != BUSY {
        assert!(Instant::now() < deadline, "the script never became busy");
    }
    let mut outside = RawConn::connect(SocketAddr::new(ip, server.port()));
    outside.send(&[b"SCRIPT".to_vec(), b"KILL".to_vec()]);
    let r = reply_or_closed(&mut outside);
    assert!(
        r.starts_with("-DENIED Redis is running in protected mode"),
        "{r}"
    );
    assert_eq!(reply_or_closed(&mut outside), "(closed)");
    assert_eq!(
        cmd(&mut probe, &["SCRIPT", "KILL"]),
        "+OK\\r\\n",
        "the script was still running"
    );
}

/// A field of the CLIENT LIST line of the client named `name` (None once it is gone).
fn client_field(admin: &mut RawConn, name: &str, field: &str) -> Option<u64> {
    admin.send(&[b"CLIENT".to_vec(), b"LIST".to_vec()]);
    let frame = admin
        .read_frame(Duration::from_secs(10))
        .expect("CLIENT LIST");
    let text = String::from_utf8_lossy(&frame).to_string();
    let line = text
        .lines()
        .find(|l| l.contains(&format!(" name={name} ")))?;
    let value = line
        .split(' ')
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))?;
    value.parse().ok()
}

fn numsub(admin: &mut RawConn, channel: &str) -> String {
    cmd(admin, &["PUBSUB", "NUMSUB", channel])
}

/// Publishes `size`-byte messages to a subscriber that never reads, until the server drops
/// it (or `max_total` bytes went out). Returns the bytes published, and the largest omem
/// CLIENT LIST showed for it (None when not asked to look).
fn stall_a_subscriber(
    addr: SocketAddr,
    size: usize,
    max_total: usize,
    watch_omem: bool,
) -> (Option<usize>, u64) {
    let mut subscriber = RawConn::connect(addr);
    assert_eq!(
        cmd(&mut subscriber, &["CLIENT", "SETNAME", "stalled"]),
        "+OK\\r\\n"
    );
    subscriber.send(&[b"SUBSCRIBE".to_vec(), b"news".to_vec()]);
    assert!(subscriber.read_frame(Duration::from_secs(10)).is_some());
    // From here on the subscriber reads nothing.
    let mut publisher = RawConn::connect(addr);
    let mut admin = RawConn::connect(addr);
    let payload = vec![b'm'; size];
    let mut total = 0;
    let mut max_omem = 0;
    while total < max_total {
        publisher.send(&[b"PUBLISH".to_vec(), b"news".to_vec(), payload.clone()]);
        assert!(publisher.read_frame(Duration::from_secs(10)).is_some());
        total += size;
        if watch_omem {
            max_omem = max_omem.max(client_field(&mut admin, "stalled", "omem").unwrap_or(0));
        }
        if numsub(&mut admin, "news") == "*2\\r\\n$4\\r\\nnews\\r\\n:0\\r\\n" {
            return (Some(total), max_omem);
        }
    }
    (None, max_omem)
}

/// A connection to `addr` after it set the pubsub hard limit to 2 MB (no soft limit).
fn admin_with_a_2mb_pubsub_limit(addr: std::net::SocketAddr) -> RawConn {
    let mut admin = RawConn::connect(addr);
    assert_eq!(
        cmd(
            &mut admin,
            &[
                "CONFIG",
                "SET",
                "client-output-buffer-limit",
                "pubsub 2mb 0 0"
            ]
        ),
        "+OK\\r\\n"
    );
    admin
}

#[test]
fn a_subscriber_that_never_reads_is_dropped_at_the_pubsub_hard_limit() {
    let server = redlab::Server::start();
    let mut admin = admin_with_a_2mb_pubsub_limit(server.addr());
    let (dropped_after, max_omem) = stall_a_subscriber(server.addr(), 64 * 1024, 256 << 20, true);
    let dropped_after = dropped_after.expect("the stalled subscriber was dropped");
    assert!(max_omem > 0, "CLIENT LIST shows the output it holds");
    assert!(
        max_omem <= (2 << 20) + 64 * 1024 + 1024,
        "omem stayed under the limit: {max_omem}"
    );
    // The socket buffers take a few MB before the server holds anything; after that 2 MB.
    assert!(
        dropped_after < 64 << 20,
        "dropped after {dropped_after} bytes"
    );
    let info = cmd(&mut admin, &["INFO", "clients"]);
    let recent: u64 = info
        .split("client_recent_max_output_buffer:")
        .nth(1)
        .and_then(|v| v.split("\\r\\n").next())
        .and_then(|v| v.parse().ok())
        .expect("client_recent_max_output_buffer");
    assert!(
        ((1 << 20)..=(2 << 20) + 64 * 1024 + 1024).contains(&recent),
        "INFO saw it: {recent}"
    );
    if let Some(real) = RealRedis::start_or_skip("stalled_subscriber") {
        let _admin = admin_with_a_2mb_pubsub_limit(real.addr());
        assert!(
            stall_a_subscriber(real.addr(), 64 * 1024, 256 << 20, false)
                .0
                .is_some(),
            "Redis drops it too"
        );
    }
}

#[test]
fn the_default_pubsub_limit_is_redis_s_32mb() {
    let server = redlab::Server::start();
    let mut admin = RawConn::connect(server.addr());
    let ours = cmd(&mut admin, &["CONFIG", "GET", "client-output-buffer-limit"]);
    assert!(ours.contains("pubsub 33554432 8388608 60"), "{ours}");
    let (dropped_after, _) = stall_a_subscriber(server.addr(), 256 * 1024, 512 << 20, false);
    let dropped_after = dropped_after.expect("dropped at the default hard limit");
    assert!(
        dropped_after >= 32 << 20,
        "not before 32 MB: {dropped_after}"
    );
    if let Some(real) = RealRedis::start_or_skip("default_pubsub_limit") {
        assert_eq!(
            cmd(
                &mut RawConn::connect(real.addr()),
                &["CONFIG", "GET", "client-output-buffer-limit"]
            ),
            ours
        );
    }
}

fn config_set_sequence(addr: SocketAddr) -> Vec<String> {
    let mut c = RawConn::connect(addr);
    let mut seen = Vec::new();
    for v in [
        "pubsub 1mb 512kb 10",
        "normal 1gb 2k 5 replica 100 200 3",
        "",
        "   ",
        "normal  1 2 3",
        "NORMAL 1kb 2 3 normal 5 6 7",
        "normal 1 2 -1",
    ] {
        seen.push(cmd(
            &mut c,
            &["CONFIG", "SET", "client-output-buffer-limit", v],
        ));
        seen.push(cmd(
            &mut c,
            &["CONFIG", "GET", "client-output-buffer-limit"],
        ));
    }
    for v in ["1000", "1mb", "2gb"] {
        seen.push(cmd(
            &mut c,
            &["CONFIG", "SET", "client-query-buffer-limit", v],
        ));
        seen.push(cmd(&mut c, &["CONFIG", "GET", "client-query-buffer-limit"]));
    }
    seen
}

#[test]
fn buffer_limits_read_back_as_redis_formats_them() {
    let server = redlab::Server::start();
    let ours = config_set_sequence(server.addr());
    assert_eq!(ours[3], "*2\\r\\n$26\\r\\nclient-output-buffer-limit\\r\\n$65\\r\\nnormal 1073741824 2000 5 slave 100 200 3 pubsub 1048576 524288 10\\r\\n");
    if let Some(real) = RealRedis::start_or_skip("buffer_limit_config") {
        assert_eq!(config_set_sequence(real.addr()), ours, "differs from Redis");
    }
}

/// A request bigger than client-query-buffer-limit: the connection is closed, no reply.
fn oversized_query(addr: SocketAddr) -> String {
    let mut admin = RawConn::connect(addr);
    assert_eq!(
        cmd(
            &mut admin,
            &["CONFIG", "SET", "client-query-buffer-limit", "1mb"]
        ),
        "+OK\\r\\n"
    );
    let mut c = RawConn::connect(addr);
    c.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n");
    c.send_raw(&vec![b'v'; 3_000_000]);
    c.send_raw(b"\r\n");
    let got = reply_or_closed(&mut c);
    let after = cmd(&mut admin, &["EXISTS", "k"]);
    format!("{got} {after}")
}

#[test]
fn client_query_buffer_limit_closes_the_connection() {
    let server = redlab::Server::start();
    let ours = oversized_query(server.addr());
    assert_eq!(ours, "(closed) :0\\r\\n");
    if let Some(real) = RealRedis::start_or_skip("query_buffer_limit") {
        assert_eq!(oversized_query(real.addr()), ours, "differs from Redis");
    }
}

/// A client pipelines GETs of a 1 MB value without reading any reply. Redis keeps running
/// its requests and its output grows: client-output-buffer-limit (here 4 MB for normal
/// clients) closes it, dropping what it held. Returns how many replies arrived intact before
/// the close, and whether CLIENT LIST still showed it afterwards.
fn pipeline_to_a_client_that_does_not_read(addr: SocketAddr, limit: &[&str]) -> (usize, bool) {
    let mut admin = RawConn::connect(addr);
    assert_eq!(
        cmd(&mut admin, &["CONFIG", "SET", limit[0], limit[1]]),
        "+OK\\r\\n"
    );
    assert_eq!(cmd(&mut admin, &["CLIENT", "NO-EVICT", "on"]), "+OK\\r\\n");
    let value = vec![b'v'; 1 << 20];
    admin.send(&[b"SET".to_vec(), b"big".to_vec(), value]);
    assert!(admin.read_frame(Duration::from_secs(10)).is_some());
    let mut slow = RawConn::connect(addr);
    assert_eq!(cmd(&mut slow, &["CLIENT", "SETNAME", "slow"]), "+OK\\r\\n");
    const N: usize = 100;
    let mut pipeline = Vec::new();
    for _ in 0..N {
        pipeline.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n");
    }
    slow.send_raw(&pipeline);
    // Not read until the server is done with it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while client_field(&mut admin, "slow", "id").is_some() {
        assert!(
            Instant::now() < deadline,
            "the client that does not read is still connected"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut intact = 0;
    while let Some(frame) = slow.read_frame(Duration::from_secs(10)) {
        assert_eq!(frame.len(), (1 << 20) + 12, "reply {intact}");
        intact += 1;
    }
    let listed = client_field(&mut admin, "slow", "id").is_some();
    (intact, listed)
}

#[test]
fn a_client_that_does_not_read_is_closed_at_its_output_limit() {
    let server = redlab::Server::start();
    let limit = ["client-output-buffer-limit", "normal 4mb 0 0"];
    let (intact, listed) = pipeline_to_a_client_that_does_not_read(server.addr(), &limit);
    assert!(intact < 100, "closed before all its replies: {intact}");
    assert!(!listed);
    if let Some(real) = RealRedis::start_or_skip("output_limit_of_a_normal_client") {
        let (theirs, listed) = pipeline_to_a_client_that_does_not_read(real.addr(), &limit);
        assert!(theirs < 100 && !listed, "Redis closes it too: {theirs}");
    }
}

#[test]
fn a_client_that_does_not_read_is_evicted_at_maxmemory_clients() {
    let server = redlab::Server::start();
    let limit = ["maxmemory-clients", "8mb"];
    let (intact, listed) = pipeline_to_a_client_that_does_not_read(server.addr(), &limit);
    assert!(intact < 100, "evicted before all its replies: {intact}");
    assert!(!listed);
    let mut admin = RawConn::connect(server.addr());
    let info = cmd(&mut admin, &["INFO", "stats"]);
    assert!(info.contains("evicted_clients:1\\r\\n"), "{info}");
    if let Some(real) = RealRedis::start_or_skip("maxmemory_clients_evicts_a_non_reader") {
        let (theirs, listed) = pipeline_to_a_client_that_does_not_read(real.addr(), &limit);
        assert!(theirs < 100 && !listed, "Redis evicts it too: {theirs}");
        let mut admin = RawConn::connect(real.addr());
        let info = cmd(&mut admin, &["INFO", "stats"]);
        assert!(info.contains("evicted_clients:1\\r\\n"), "{info}");
    }
}

/// Writes `n` pipelined GETs of a 100-byte value under a 100-byte key before reading any
/// reply (a writer thread sends while nothing is read), then reads them all: the reply count
/// and the last reply. Requests and replies both outgrow the sockets' buffers many times
/// over, so a server that stopped reading a client whose output waits would never see the
/// end of the pipeline (the write times out).
fn pipeline_written_before_any_read(addr: SocketAddr, n: usize) -> (usize, String) {
    use std::io::{Read, Write};
    let key = "k".repeat(100);
    let mut admin = RawConn::connect(addr);
    assert_eq!(
        cmd(&mut admin, &["SET", &key, &"x".repeat(100)]),
        "+OK\\r\\n"
    );
    let stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut writer = stream.try_clone().expect("clone");
    let one = format!("*2\r\n$3\r\nGET\r\n$100\r\n{key}\r\n").into_bytes();
    let sender = std::thread::spawn(move || {
        let chunk: Vec<u8> = one.iter().copied().cycle().take(one.len() * 1000).collect();
        for _ in 0..n / 1000 {
            writer
                .write_all(&chunk)
                .expect("the server reads the whole pipeline");
        }
    });
    sender
        .join()
        .expect("every request written before any reply is read");
    let reply = b"$100\r\n".len() + 100 + 2;
    let mut reader = stream;
    reader
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut got = 0usize;
    let mut last = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    while got < reply * n {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(k) => {
                got += k;
                last.extend_from_slice(&chunk[..k]);
                let keep = last.len().saturating_sub(reply);
                last.drain(..keep);
            }
        }
    }
    (got / reply, show(&last))
}

#[test]
fn a_pipeline_written_before_any_reply_is_read_completes() {
    let server = redlab::Server::start();
    const N: usize = 200_000;
    let ours = pipeline_written_before_any_read(server.addr(), N);
    assert_eq!(ours.0, N);
    assert_eq!(ours.1, format!("$100\\r\\n{}\\r\\n", "x".repeat(100)));
    if let Some(real) = RealRedis::start_or_skip("pipeline_written_before_any_read") {
        assert_eq!(pipeline_written_before_any_read(real.addr(), N), ours);
    }
}

/// One reply bigger than the hard limit: the client is closed before any of it is written,
/// as Redis closes it while building the reply.
fn one_reply_over_the_hard_limit(addr: SocketAddr) -> String {
    let mut admin = RawConn::connect(addr);
    let limit = [
        "CONFIG",
        "SET",
        "client-output-buffer-limit",
        "normal 100000 0 0",
    ];
    assert_eq!(cmd(&mut admin, &limit), "+OK\\r\\n");
    let item = "x".repeat(1000);
    for _ in 0..150 {
        cmd(&mut admin, &["RPUSH", "biglist", &item]);
    }
    let mut c = RawConn::connect(addr);
    assert_eq!(cmd(&mut c, &["PING"]), "+PONG\\r\\n");
    c.send_strs(&["LRANGE", "biglist", "0", "-1"]);
    reply_or_closed(&mut c)
}

#[test]
fn a_reply_over_the_hard_limit_is_never_sent() {
    let server = redlab::Server::start();
    assert_eq!(one_reply_over_the_hard_limit(server.addr()), "(closed)");
    if let Some(real) = RealRedis::start_or_skip("one_reply_over_the_hard_limit") {
        assert_eq!(one_reply_over_the_hard_limit(real.addr()), "(closed)");
    }
}
