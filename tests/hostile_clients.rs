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
    c.send(&args.iter().map(|a| a.as_bytes().to_vec()).collect::<Vec<_>>());
    show(&c.read_frame(Duration::from_secs(10)).unwrap_or_else(|| panic!("no answer to {args:?}")))
}

fn reply_or_closed(c: &mut RawConn) -> String {
    c.read_frame(Duration::from_secs(10)).map_or_else(|| "(closed)".to_string(), |f| show(&f))
}

const SPIN: &str = "while true do end";
const BUSY: &str = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\\r\\n";
const NOAUTH: &str = "-NOAUTH Authentication required.\\r\\n";

/// Sets a password and a short busy threshold, starts a spinning script from an
/// authenticated client and waits until it is busy. Returns the script's connection.
fn start_busy_script(addr: SocketAddr) -> RawConn {
    let mut setup = RawConn::connect(addr);
    assert_eq!(cmd(&mut setup, &["CONFIG", "SET", "busy-reply-threshold", "100"]), "+OK\\r\\n");
    assert_eq!(cmd(&mut setup, &["CONFIG", "SET", "requirepass", "s3cret"]), "+OK\\r\\n");
    let mut runner = RawConn::connect(addr);
    assert_eq!(cmd(&mut runner, &["AUTH", "s3cret"]), "+OK\\r\\n");
    runner.send(&[b"EVAL".to_vec(), SPIN.as_bytes().to_vec(), b"0".to_vec()]);
    let mut probe = RawConn::connect(addr);
    assert_eq!(cmd(&mut probe, &["AUTH", "s3cret"]), "+OK\\r\\n", "AUTH works before and during the script");
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
    let killed = show(&runner.read_frame(Duration::from_secs(10)).expect("the EVAL caller's reply"));
    seen.push(killed.split("script: ").next().unwrap_or_default().to_string());
    seen.push(cmd(&mut anon, &["PING"]));
    seen
}

#[test]
fn unauthenticated_clients_cannot_kill_or_shut_down_during_a_busy_script() {
    let server = redlab::Server::start();
    let ours = busy_auth_scenario(server.addr());
    assert!(server.is_running(), "an unauthenticated SHUTDOWN NOSAVE did not stop the server");
    assert_eq!(&ours[..3], &[NOAUTH, NOAUTH, NOAUTH], "{ours:#?}");
    assert_eq!(ours[4], NOAUTH);
    assert_eq!(ours[11], "-ERR Protocol error: unauthenticated multibulk length\\r\\n");
    assert_eq!(ours[12], "(closed)");
    assert_eq!(ours[13], "-ERR Protocol error: unauthenticated bulk length\\r\\n");
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
    assert_eq!(cmd(&mut c, &["FUNCTION", "KILL"]), BUSY, "FUNCTION KILL does not stop an EVAL (as Redis)");
    assert_eq!(cmd(&mut c, &["SHUTDOWN"]), BUSY, "only SHUTDOWN NOSAVE gets through (as Redis)");
    assert_eq!(cmd(&mut c, &["CLIENT", "ID"]), BUSY);
    c.send(&[b"SHUTDOWN".to_vec(), b"NOSAVE".to_vec()]);
    assert_eq!(c.read_frame(Duration::from_secs(10)), None, "the server closes the connection");
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.is_running() {
        assert!(Instant::now() < deadline, "SHUTDOWN NOSAVE stopped the server");
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
    let server = redlab::Server::builder().bind("0.0.0.0").busy_reply_threshold(Duration::from_millis(100)).start();
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
    assert!(r.starts_with("-DENIED Redis is running in protected mode"), "{r}");
    assert_eq!(reply_or_closed(&mut outside), "(closed)");
    assert_eq!(cmd(&mut probe, &["SCRIPT", "KILL"]), "+OK\\r\\n", "the script was still running");
}
