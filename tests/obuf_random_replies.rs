//! HRANDFIELD, SRANDMEMBER and ZRANDMEMBER with a huge negative count from a client under a
//! client-output-buffer-limit: Redis stops mid-run and closes the client without sending any
//! of the reply (Redis's unit/obuf-limits "HRANDFIELD with huge count stopped mid-run"), while
//! the other clients go on being served. The same scenario runs against redlab and, when it
//! is installed, a real redis-server 7.0.15: what the clients see must be the same.

mod support;

use std::time::Duration;

use redlab::client::{Error, InProcess, Value};
use redlab_client::RealRedis;
use support::resp::{show, RawConn};

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, Duration::from_secs(30))
}

/// Every form of the three commands with a count, `{n}` standing for the count.
const FORMS: [&str; 5] = [
    "HRANDFIELD h {n}",
    "HRANDFIELD h {n} WITHVALUES",
    "SRANDMEMBER s {n}",
    "ZRANDMEMBER z {n}",
    "ZRANDMEMBER z {n} WITHSCORES",
];

fn with_count(form: &str, n: i64) -> Vec<String> {
    form.replace("{n}", &n.to_string())
        .split(' ')
        .map(str::to_string)
        .collect()
}

/// A fresh connection named `name`, speaking `resp`.
fn client(addr: std::net::SocketAddr, name: &str, resp: u8) -> RawConn {
    let mut c = RawConn::connect(addr);
    if resp == 3 {
        assert!(cmd(&mut c, &["HELLO", "3"]).starts_with('%'));
    }
    assert_eq!(cmd(&mut c, &["CLIENT", "SETNAME", name]), "+OK\\r\\n");
    c
}

/// What the clients see, one line per step: the huge count's outcome, whether its client
/// is still listed, a small count's reply header, and the admin's PING.
fn scenario(addr: std::net::SocketAddr) -> Vec<String> {
    let mut admin = RawConn::connect(addr);
    let mut seen = Vec::new();
    for setup in [
        &["DEL", "h", "s", "z"][..],
        &["HSET", "h", "a", "b"],
        &["SADD", "s", "a"],
        &["ZADD", "z", "1.5", "a"],
        &[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1000000 0 0",
        ],
    ] {
        cmd(&mut admin, setup);
    }
    for form in FORMS {
        for resp in [2, 3] {
            let mut victim = client(addr, "victim", resp);
            let huge = with_count(form, -999_999_999);
            victim.send_strs(&huge.iter().map(String::as_str).collect::<Vec<_>>());
            let outcome = victim
                .read_frame(Duration::from_secs(60))
                .map_or_else(|| "(closed)".to_string(), |f| show(&f));
            let listed = cmd(&mut admin, &["CLIENT", "LIST"]).contains("name=victim");
            seen.push(format!(
                "{form} RESP{resp}: {outcome}, still listed: {listed}"
            ));
            let mut other = client(addr, "other", resp);
            let small = with_count(form, -3);
            let reply = cmd(
                &mut other,
                &small.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            let header = reply.split("\\r\\n").next().unwrap_or("").to_string();
            seen.push(format!("{form} -3 RESP{resp}: {header}"));
            seen.push(cmd(&mut admin, &["PING"]));
        }
    }
    cmd(
        &mut admin,
        &[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 0 0",
        ],
    );
    seen
}

#[test]
fn a_huge_count_closes_its_client_at_the_normal_hard_limit_and_no_other() {
    let server = redlab::Server::start();
    let ours = scenario(server.addr());
    for form in FORMS {
        for resp in [2, 3] {
            let line = format!("{form} RESP{resp}: (closed), still listed: false");
            assert!(ours.contains(&line), "missing {line:?} in {ours:#?}");
            let pairs = form.contains("WITH") && resp == 2;
            let header = format!("{form} -3 RESP{resp}: *{}", if pairs { 6 } else { 3 });
            assert!(ours.contains(&header), "missing {header:?} in {ours:#?}");
        }
    }
    assert_eq!(ours.iter().filter(|l| *l == "+PONG\\r\\n").count(), 10);
    if let Some(real) = RealRedis::start_or_skip("obuf_random_replies") {
        assert_eq!(scenario(real.addr()), ours, "differs from Redis");
    }
}

#[tokio::test]
async fn an_in_process_client_sees_its_connection_closed() {
    let engine = InProcess::new(redlab::Config::default());
    let admin = engine.connect().await;
    admin
        .cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1mb 0 0",
        ])
        .await
        .unwrap();
    admin.cmd(&["SADD", "s", "a"]).await.unwrap();
    let victim = engine.connect().await;
    let err = victim
        .cmd(&["SRANDMEMBER", "s", "-999999999"])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connection(_)), "{err:?}");
    let small = admin.cmd(&["SRANDMEMBER", "s", "-2"]).await.unwrap();
    let a = Value::Bulk(bytes::Bytes::from_static(b"a"));
    assert_eq!(small, Value::Array(vec![a.clone(), a]));
}
