//! Malformed and hostile frames get Redis's error (compared with a real redis-server), only
//! the offending connection is closed, and the server keeps serving everyone else.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use redlab_client::RealRedis;
use support::resp::{show, RawConn};

/// Sends `input` on a fresh connection; returns the first reply and whether the server
/// then closed the connection.
fn reaction(addr: SocketAddr, input: &[u8]) -> (Option<Vec<u8>>, bool) {
    let mut c = RawConn::connect(addr);
    c.send_raw(input);
    let first = c.read_frame(Duration::from_secs(5));
    let closed = c.read_frame(Duration::from_millis(300)).is_none();
    (first, closed)
}

fn hostile_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let mut nested = Vec::new();
    for _ in 0..10_000 {
        nested.extend_from_slice(b"*1\r\n");
    }
    let mut inline_2mb = vec![b'a'; 2 * 1024 * 1024];
    inline_2mb.extend_from_slice(b"\r\n");
    // Deterministic "random" bytes: a fixed xorshift stream that starts with a non-'*' byte.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut random = vec![b'Z'];
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        random.push(x as u8);
    }
    vec![
        ("huge bulk length", b"*1\r\n$99999999999\r\n".to_vec()),
        ("negative multibulk", b"*-5\r\nPING\r\n".to_vec()),
        ("missing dollar", b"*3\r\nfoo\r\n".to_vec()),
        ("10,000 nested arrays", nested),
        ("2 MB inline line", inline_2mb),
        (
            "huge multibulk count",
            b"*2147483647\r\n$4\r\nPING\r\n".to_vec(),
        ),
        ("random bytes", random),
    ]
}

#[test]
fn hostile_frames_get_redis_errors_and_others_are_still_served() {
    let redlab = redlab::Server::start();
    let real = RealRedis::start_or_skip("hostile_frames");
    let mut bystander = RawConn::connect(redlab.addr());
    for (name, input) in hostile_inputs() {
        let ours = reaction(redlab.addr(), &input);
        if let Some(real) = &real {
            let theirs = reaction(real.addr(), &input);
            assert_eq!(
                ours.0.as_deref().map(show),
                theirs.0.as_deref().map(show),
                "{name}: reply differs from Redis"
            );
            assert_eq!(ours.1, theirs.1, "{name}: closing differs from Redis");
        }
        bystander.send(&[b"PING".to_vec()]);
        let pong = bystander.read_frame(Duration::from_secs(5));
        assert_eq!(
            pong.as_deref(),
            Some(&b"+PONG\r\n"[..]),
            "after {name}, another client is not served"
        );
    }
}

#[test]
fn a_frame_arriving_a_byte_at_a_time_is_served() {
    let server = redlab::Server::start();
    let mut c = RawConn::connect(server.addr());
    for &b in b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n" {
        c.send_raw(&[b]);
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!(
        c.read_frame(Duration::from_secs(5)).as_deref(),
        Some(&b"+OK\r\n"[..])
    );
    assert_eq!(
        c.read_frame(Duration::from_secs(5)).as_deref(),
        Some(&b"$5\r\nvalue\r\n"[..])
    );
}

#[test]
fn binary_keys_and_values_round_trip() {
    let server = redlab::Server::start();
    let mut c = RawConn::connect(server.addr());
    let key: Vec<u8> = (0u8..=255).collect();
    let value: Vec<u8> = (0u8..=255).rev().cycle().take(100_000).collect();
    c.send(&[b"SET".to_vec(), key.clone(), value.clone()]);
    assert_eq!(
        c.read_frame(Duration::from_secs(5)).as_deref(),
        Some(&b"+OK\r\n"[..])
    );
    c.send(&[b"GET".to_vec(), key]);
    let mut expected = format!("${}\r\n", value.len()).into_bytes();
    expected.extend_from_slice(&value);
    expected.extend_from_slice(b"\r\n");
    assert_eq!(c.read_frame(Duration::from_secs(5)), Some(expected));
}
