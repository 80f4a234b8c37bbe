//! BLPOP through the network shell: a client blocked on one TCP connection is woken by a
//! push from another, and a blocked client with a timeout gets its null reply on time.
//!
//! Pushes wait until the server reports the waiter blocked (INFO blocked_clients), not for a
//! fixed sleep, and the timeout runs on the manual clock: a loaded machine changes nothing.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use support::resp::RawConn;

fn connect(server: &redlab::Server) -> TcpStream {
    let s = TcpStream::connect(server.addr()).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s
}

fn send(s: &mut TcpStream, args: &[&str]) {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{}\r\n", a.len(), a).as_bytes());
    }
    s.write_all(&out).expect("write");
}

/// Waits (up to 30 s) until the server counts `n` blocked clients.
fn wait_blocked(server: &redlab::Server, n: u64) {
    let mut admin = RawConn::connect(server.addr());
    let want = format!("blocked_clients:{n}\r\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        admin.send(&[b"INFO".to_vec(), b"clients".to_vec()]);
        let info = admin
            .read_frame(Duration::from_secs(30))
            .expect("INFO answers");
        if String::from_utf8_lossy(&info).contains(&want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the server never counted {n} blocked clients"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reads until `len` bytes arrived (or `wait` passed) and returns what came.
fn read_exactly(s: &mut TcpStream, len: usize, wait: Duration) -> Vec<u8> {
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while got.len() < len {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s.set_read_timeout(Some(left)).expect("timeout");
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break
            }
            Err(e) => panic!("read: {e}"),
        }
    }
    got
}

#[test]
fn blpop_waits_until_another_connection_pushes() {
    let server = redlab::Server::start();
    let mut waiter = connect(&server);
    let mut pusher = connect(&server);

    send(&mut waiter, &["BLPOP", "jobs", "0"]);
    wait_blocked(&server, 1);
    // Nothing arrives while the list is empty.
    assert_eq!(
        read_exactly(&mut waiter, 1, Duration::from_millis(200)),
        b""
    );

    send(&mut pusher, &["LPUSH", "jobs", "hello"]);
    // The pusher's reply counts the element the waiter is about to take.
    assert_eq!(
        read_exactly(&mut pusher, 4, Duration::from_secs(30)),
        b":1\r\n"
    );
    let expected = b"*2\r\n$4\r\njobs\r\n$5\r\nhello\r\n";
    assert_eq!(
        read_exactly(&mut waiter, expected.len(), Duration::from_secs(30)),
        expected
    );

    // The element went to the waiter, and the waiter's connection is usable again.
    send(&mut waiter, &["LLEN", "jobs"]);
    assert_eq!(
        read_exactly(&mut waiter, 4, Duration::from_secs(30)),
        b":0\r\n"
    );
}

#[test]
fn commands_pipelined_behind_a_blocked_one_run_after_it_is_served() {
    let server = redlab::Server::start();
    let mut waiter = connect(&server);
    let mut pusher = connect(&server);

    send(&mut waiter, &["BRPOP", "q", "0"]);
    send(&mut waiter, &["RPUSH", "after", "x"]);
    wait_blocked(&server, 1);
    assert_eq!(
        read_exactly(&mut waiter, 1, Duration::from_millis(200)),
        b""
    );

    send(&mut pusher, &["RPUSH", "q", "a", "b"]);
    assert_eq!(
        read_exactly(&mut pusher, 4, Duration::from_secs(30)),
        b":2\r\n"
    );
    let expected = b"*2\r\n$1\r\nq\r\n$1\r\nb\r\n:1\r\n";
    assert_eq!(
        read_exactly(&mut waiter, expected.len(), Duration::from_secs(30)),
        expected
    );
}

#[test]
fn blpop_with_a_timeout_answers_null_when_nothing_comes() {
    let clock = redlab::Clock::manual(1_700_000_000_000);
    let server = redlab::Server::builder().clock(clock.clone()).start();
    let mut waiter = connect(&server);
    send(&mut waiter, &["BLPOP", "nothing", "0.1"]);
    wait_blocked(&server, 1);
    // 99 ms of server time: still waiting.
    clock.advance(Duration::from_millis(99));
    assert_eq!(
        read_exactly(&mut waiter, 1, Duration::from_millis(200)),
        b""
    );
    // Past the 100th: the timeout passed and the null reply comes.
    clock.advance(Duration::from_millis(2));
    assert_eq!(
        read_exactly(&mut waiter, 5, Duration::from_secs(30)),
        b"*-1\r\n"
    );
    wait_blocked(&server, 0);
}

/// In process, a BLPOP with a timeout gets its null reply once the clock passes its deadline
/// even while requests queue up back to back (the engine's timers must not wait for a quiet
/// moment that never comes). The queue is thousands of PING batches followed by an LPUSH to
/// the BLPOP's key: if the timeout only fired when the queue ran dry, the LPUSH would serve
/// the BLPOP first.
#[tokio::test]
async fn in_process_blocked_timeout_fires_while_requests_are_queued() {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::Poll;

    use redlab::client::{InProcess, Pipeline, Value};
    let clock = redlab::Clock::manual(1_000_000);
    let engine = InProcess::with_clock(redlab::Config::default(), clock.clone());
    let waiter = engine.connect().await;
    let pinger = engine.connect().await;
    let pusher = engine.connect().await;
    let blpop = tokio::spawn(async move { waiter.cmd(&["BLPOP", "q", "1"]).await });
    loop {
        let info = pusher.cmd(&["INFO", "clients"]).await.unwrap();
        if format!("{info:?}").contains("blocked_clients:1") {
            break;
        }
        tokio::task::yield_now().await;
    }
    clock.advance(Duration::from_secs(2));

    let mut pings = Pipeline::new();
    for _ in 0..50 {
        pings.cmd(&["PING"]);
    }
    type Step<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;
    let mut queue: Vec<Option<Step>> = Vec::new();
    for _ in 0..2000 {
        queue.push(Some(Box::pin(async {
            pinger.pipeline(&pings).await.unwrap();
        })));
    }
    queue.push(Some(Box::pin(async {
        pusher.cmd(&["LPUSH", "q", "late"]).await.unwrap();
    })));
    // Poll in order: each request is sent on its first poll, so the LPUSH is queued last.
    std::future::poll_fn(|cx| {
        for slot in queue.iter_mut() {
            if let Some(f) = slot {
                if f.as_mut().poll(cx).is_ready() {
                    *slot = None;
                }
            }
        }
        if queue.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    assert_eq!(
        blpop.await.unwrap().unwrap(),
        Value::Nil,
        "the timeout fired before the queued LPUSH ran"
    );
}
