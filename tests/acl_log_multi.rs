//! ACL LOG's context of a failed AUTH: `multi` when EXEC runs it (the client is still in its
//! transaction), `toplevel` otherwise, as Redis 7.0.15 logs it; HELLO AUTH the same. The same
//! sequence runs against a real redis-server; the log must be equal.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use redlab_client::RealRedis;
use support::resp::RawConn;

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.send_strs(args);
    let frame = c.read_frame(Duration::from_secs(30)).expect("a reply");
    String::from_utf8_lossy(&frame).trim_end().to_string()
}

/// The reason, context, object and username of each ACL LOG entry, newest first.
fn log_entries(reply: &str) -> Vec<String> {
    let lines: Vec<&str> = reply.split("\r\n").collect();
    let value = |i: usize, name: &str| -> Option<String> {
        (lines.get(i) == Some(&name)).then(|| lines[i + 2].to_string())
    };
    let mut entries = Vec::new();
    for i in 0..lines.len() {
        if let Some(reason) = value(i, "reason") {
            let context = value(i + 4, "context").unwrap_or_default();
            let object = value(i + 8, "object").unwrap_or_default();
            let user = value(i + 12, "username").unwrap_or_default();
            entries.push(format!("{reason} {context} {object} {user}"));
        }
    }
    entries
}

fn scenario(addr: SocketAddr) -> (Vec<String>, Vec<String>) {
    let mut c = RawConn::connect(addr);
    let mut replies = Vec::new();
    for line in [
        &["ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all"][..],
        &["ACL", "LOG", "RESET"],
        &["AUTH", "u", "bad0"],
        &["MULTI"],
        &["AUTH", "u", "bad1"],
        &["HELLO", "2", "AUTH", "u", "bad2"],
        &["AUTH", "u", "pw"],
        &["EXEC"],
        &["HELLO", "2", "AUTH", "u", "bad3"],
    ] {
        replies.push(cmd(&mut c, line));
    }
    let log = log_entries(&cmd(&mut c, &["ACL", "LOG"]));
    (replies, log)
}

#[test]
fn a_failed_auth_run_by_exec_is_logged_in_the_multi_context() {
    let server = redlab::Server::start();
    let ours = scenario(server.addr());
    assert_eq!(
        ours.1,
        [
            "auth toplevel HELLO u",
            "auth multi HELLO u",
            "auth multi AUTH u",
            "auth toplevel AUTH u",
        ]
    );
    if let Some(real) = RealRedis::start_or_skip("acl_log_context_of_auth_in_exec") {
        assert_eq!(scenario(real.addr()), ours, "real Redis logs the same");
    }
}
