//! CLIENT INFO (and so CLIENT LIST, which prints the same line) under a profile prints the
//! fields that version prints, in its order: Redis 7.0's line under redis-7.0 and
//! valkey-server 8.1's under valkey-8.1 (`capa`, `watch`, `lib-name`, `lib-ver`,
//! `tot-net-in`, `tot-net-out`, `tot-cmds`). Each profile is compared with its real server
//! after the same commands, on the fields whose values do not depend on the process (ids,
//! addresses, ages and buffer sizes do).

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use redlab::Profile;
use redlab_client::RealRedis;
use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(30);

/// The `name=value` pairs of one CLIENT INFO line, in order.
fn fields(line: &str) -> Vec<(String, String)> {
    line.trim_end()
        .split(' ')
        .map(|f| {
            let (k, v) = f.split_once('=').unwrap_or((f, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// CLIENT INFO of a connection that named its library, watched two keys and ran a
/// transaction. Returns the line's fields at two points: while watching, and after EXEC.
fn client_info_after_a_session(addr: SocketAddr, setinfo: bool) -> Vec<Vec<(String, String)>> {
    let mut c = RawConn::connect(addr);
    let info = |c: &mut RawConn| {
        let frame = c.call(&["CLIENT", "INFO"], WAIT);
        // `$<len>\r\n<line>\n\r\n`, as `show` prints it.
        let text = frame.split_once("\\r\\n").map_or("", |(_, rest)| rest);
        fields(text.trim_end_matches("\\r\\n").trim_end_matches("\\n"))
    };
    if setinfo {
        assert_eq!(
            c.call(&["CLIENT", "SETINFO", "lib-name", "redlab-test"], WAIT),
            "+OK\\r\\n"
        );
        assert_eq!(
            c.call(&["CLIENT", "SETINFO", "lib-ver", "1.2.3"], WAIT),
            "+OK\\r\\n"
        );
    }
    assert_eq!(c.call(&["WATCH", "a", "b"], WAIT), "+OK\\r\\n");
    let watching = info(&mut c);
    assert_eq!(c.call(&["MULTI"], WAIT), "+OK\\r\\n");
    assert_eq!(c.call(&["SET", "x", "1"], WAIT), "+QUEUED\\r\\n");
    assert_eq!(c.call(&["GET", "x"], WAIT), "+QUEUED\\r\\n");
    c.call(&["EXEC"], WAIT);
    assert_eq!(
        c.call(&["EVAL", "return redis.call('GET', 'x')", "0"], WAIT),
        "$1\\r\\n1\\r\\n"
    );
    assert!(c.call(&["NOSUCHCOMMAND"], WAIT).starts_with('-'));
    let after = info(&mut c);
    vec![watching, after]
}

/// The fields whose values both servers must agree on; the others are compared by name.
const COMPARED: &[&str] = &[
    "name", "flags", "capa", "db", "sub", "psub", "ssub", "multi", "watch", "cmd", "user", "redir",
    "resp", "lib-name", "lib-ver", "tot-cmds",
];

fn comparable(lines: &[Vec<(String, String)>]) -> Vec<Vec<(String, String)>> {
    lines
        .iter()
        .map(|l| {
            l.iter()
                .map(|(k, v)| {
                    let v = if COMPARED.contains(&k.as_str()) {
                        v.clone()
                    } else {
                        "*".to_string()
                    };
                    (k.clone(), v)
                })
                .collect()
        })
        .collect()
}

#[test]
fn valkey_81_profile_prints_valkey_fields() {
    let server = redlab::Server::builder().compat(Profile::Valkey81).start();
    let ours = client_info_after_a_session(server.addr(), true);
    let names: Vec<&str> = ours[1].iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "addr",
            "laddr",
            "fd",
            "name",
            "age",
            "idle",
            "flags",
            "capa",
            "db",
            "sub",
            "psub",
            "ssub",
            "multi",
            "watch",
            "qbuf",
            "qbuf-free",
            "argv-mem",
            "multi-mem",
            "rbs",
            "rbp",
            "obl",
            "oll",
            "omem",
            "tot-mem",
            "events",
            "cmd",
            "user",
            "redir",
            "resp",
            "lib-name",
            "lib-ver",
            "tot-net-in",
            "tot-net-out",
            "tot-cmds",
        ]
    );
    let value = |line: &[(String, String)], k: &str| {
        line.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(value(&ours[0], "watch"), "2");
    assert_eq!(value(&ours[1], "watch"), "0");
    assert_eq!(value(&ours[1], "lib-name"), "redlab-test");
    assert_eq!(value(&ours[1], "lib-ver"), "1.2.3");
    // SETINFO x2, WATCH, CLIENT INFO, MULTI, EXEC and its SET and GET, EVAL and its GET;
    // queued lines and the unknown command do not count.
    assert_eq!(value(&ours[1], "tot-cmds"), "10");
    if let Some(valkey) = support::valkey_or_skip("client_list_fields") {
        let theirs = client_info_after_a_session(valkey.addr(), true);
        assert_eq!(comparable(&ours), comparable(&theirs));
        // Both were sent the same bytes and answered the same bytes before each CLIENT INFO
        // (the first CLIENT INFO's own reply differs in length, so only the first line's
        // output count is compared).
        assert_eq!(
            value(&ours[1], "tot-net-in"),
            value(&theirs[1], "tot-net-in")
        );
        assert_eq!(
            value(&ours[0], "tot-net-out"),
            value(&theirs[0], "tot-net-out")
        );
    }
}

#[test]
fn redis_70_profile_prints_redis_70_fields() {
    let server = redlab::Server::start();
    let ours = client_info_after_a_session(server.addr(), false);
    assert!(ours[1]
        .iter()
        .all(|(k, _)| !k.starts_with("lib-") && k != "watch" && !k.starts_with("tot-net")));
    if let Some(real) = RealRedis::start_or_skip("client_list_fields under redis-7.0") {
        let theirs = client_info_after_a_session(real.addr(), false);
        assert_eq!(comparable(&ours), comparable(&theirs));
    }
}
