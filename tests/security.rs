//! Security defaults, as Redis: loopback bind, requirepass enforced over TCP, and protected
//! mode refusing non-loopback clients when no password is set.

mod support;

use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use redlab_client::RealRedis;
use support::resp::{show, RawConn};

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, Duration::from_secs(10))
}

#[test]
fn binds_loopback_unless_told_otherwise() {
    assert_eq!(redlab::Config::default().bind, "127.0.0.1");
    let server = redlab::Server::start();
    assert!(server.addr().ip().is_loopback(), "{}", server.addr());
    // Nothing answers on the machine's other addresses.
    if let Some(ip) = outside_ip() {
        assert!(TcpStream::connect_timeout(
            &SocketAddr::new(ip, server.port()),
            Duration::from_secs(2)
        )
        .is_err());
    }
}

fn auth_session(addr: SocketAddr) -> Vec<String> {
    let mut c = RawConn::connect(addr);
    vec![
        cmd(&mut c, &["GET", "k"]),
        cmd(&mut c, &["SET", "k", "v"]),
        cmd(&mut c, &["EVAL", "return 1", "0"]),
        cmd(&mut c, &["AUTH", "wrong"]),
        cmd(&mut c, &["AUTH", "default", "wrong"]),
        cmd(&mut c, &["GET", "k"]),
        cmd(&mut c, &["PING"]),
        cmd(&mut c, &["AUTH", "s3cret"]),
        cmd(&mut c, &["SET", "k", "v"]),
        cmd(&mut c, &["GET", "k"]),
        cmd(&mut c, &["AUTH", "default", "s3cret"]),
    ]
}

#[test]
fn requirepass_answers_noauth_until_auth_over_tcp() {
    let server = redlab::Server::builder().requirepass("s3cret").start();
    let ours = auth_session(server.addr());
    assert_eq!(ours[0], "-NOAUTH Authentication required.\\r\\n");
    assert_eq!(
        ours[3],
        "-WRONGPASS invalid username-password pair or user is disabled.\\r\\n"
    );
    assert_eq!(ours[9], "$1\\r\\nv\\r\\n");
    // (Started without a password: RealRedis waits for an unauthenticated PING.)
    if let Some(real) = RealRedis::start_or_skip("requirepass") {
        assert_eq!(
            cmd(
                &mut RawConn::connect(real.addr()),
                &["CONFIG", "SET", "requirepass", "s3cret"]
            ),
            "+OK\\r\\n"
        );
        assert_eq!(ours, auth_session(real.addr()), "differs from Redis");
    }
    // A client that never authenticates cannot send a big frame either.
    let mut c = RawConn::connect(server.addr());
    c.send_raw(b"*1\r\n$20000\r\n");
    let r = c.read_frame(Duration::from_secs(5)).map(|f| show(&f));
    assert_eq!(
        r.as_deref(),
        Some("-ERR Protocol error: unauthenticated bulk length\\r\\n")
    );
}

/// This machine's address on its default route, if it has one (no packet is sent).
fn outside_ip() -> Option<IpAddr> {
    let s = UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn first_reply(addr: SocketAddr) -> (Option<String>, bool) {
    let mut c = RawConn::connect(addr);
    c.send(&[b"PING".to_vec()]);
    let first = c.read_frame(Duration::from_secs(5)).map(|f| show(&f));
    let closed = c.read_frame(Duration::from_millis(300)).is_none();
    (first, closed)
}

#[test]
fn protected_mode_denies_outside_clients_without_a_password() {
    let Some(ip) = outside_ip() else {
        eprintln!("skipped: no non-loopback address");
        return;
    };
    let server = redlab::Server::builder().bind("0.0.0.0").start();
    let outside = SocketAddr::new(ip, server.port());
    let (reply, closed) = first_reply(outside);
    let reply = reply.expect("a reply before closing");
    assert!(
        reply.starts_with(
            "-DENIED Redis is running in protected mode because protected mode is enabled"
        ),
        "{reply}"
    );
    assert!(closed, "the connection is closed after DENIED");
    let loopback = SocketAddr::from(([127, 0, 0, 1], server.port()));
    assert_eq!(
        first_reply(loopback).0.as_deref(),
        Some("+PONG\\r\\n"),
        "loopback clients are served"
    );
    if let Ok(real) = RealRedis::start_with(&["--bind", "0.0.0.0", "--protected-mode", "yes"]) {
        let theirs = first_reply(SocketAddr::new(ip, real.addr().port()));
        assert_eq!((Some(reply), closed), theirs, "differs from Redis");
    }

    // With a password, or with protected mode off, outside clients get through.
    let with_pass = redlab::Server::builder()
        .bind("0.0.0.0")
        .requirepass("p")
        .start();
    let r = first_reply(SocketAddr::new(ip, with_pass.port())).0;
    assert_eq!(r.as_deref(), Some("-NOAUTH Authentication required.\\r\\n"));
    let mut config = redlab::Config::default();
    config.bind = "0.0.0.0".into();
    config.protected_mode = false;
    let open = redlab::Server::builder().config(config).start();
    assert_eq!(
        first_reply(SocketAddr::new(ip, open.port())).0.as_deref(),
        Some("+PONG\\r\\n")
    );
}
