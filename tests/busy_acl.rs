//! ACL users while a script is busy: AUTH and HELLO AUTH log in any user, and each command
//! the busy loop sees is checked against the connection's user before -BUSY, as Redis does
//! (a command or key the user may not use answers NOPERM, one it may use answers BUSY). The
//! refusals (failed AUTH and HELLO AUTH, NOPERM) are in ACL LOG afterwards, as Redis writes
//! them. The same sequence runs against a real redis-server; the replies must be equal.

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use redlab_client::RealRedis;
use support::resp::RawConn;

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.send_strs(args);
    let frame = c.read_frame(Duration::from_secs(30)).expect("a reply");
    String::from_utf8_lossy(&frame).trim_end().to_string()
}

/// The reply with HELLO's connection id masked (it differs between servers).
fn masked(reply: String) -> String {
    let lines: Vec<&str> = reply.split("\r\n").collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 && lines[i - 1] == "id" && line.starts_with(':') {
            out.push(":<id>");
        } else {
            out.push(line);
        }
    }
    out.join("\r\n")
}

/// ACL LOG's reply with what differs between servers and runs masked: each entry's
/// age-seconds and client-info (the value and its length line), and from 7.2 its
/// timestamps (one integer line each).
fn masked_log(reply: String) -> String {
    let lines: Vec<&str> = reply.split("\r\n").collect();
    let mut out = Vec::new();
    let mut skip = 0;
    for line in &lines {
        if skip > 0 {
            skip -= 1;
            out.push("<masked>");
            continue;
        }
        out.push(line);
        if *line == "age-seconds" || *line == "client-info" {
            skip = 2;
        }
        if *line == "timestamp-created" || *line == "timestamp-last-updated" {
            skip = 1;
        }
    }
    out.join("\r\n")
}

/// Waits until `probe` answers -BUSY (the script passed busy-reply-threshold), however slow
/// the machine is to start the script.
fn wait_busy(probe: &mut RawConn) {
    let start = Instant::now();
    while !cmd(probe, &["PING"]).starts_with("-BUSY") {
        assert!(start.elapsed() < Duration::from_secs(30), "never busy");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn scenario(addr: SocketAddr) -> Vec<String> {
    let mut setup = RawConn::connect(addr);
    for line in [
        &["CONFIG", "SET", "busy-reply-threshold", "100"][..],
        &[
            "ACL",
            "SETUSER",
            "app",
            "on",
            ">apppw",
            "~app:*",
            "+get",
            "+set",
            "+script|kill",
        ],
        &[
            "ACL", "SETUSER", "full", "on", ">fullpw", "~*", "&*", "+@all",
        ],
        &["ACL", "SETUSER", "off", "off", ">offpw", "+@all"],
    ] {
        assert_eq!(cmd(&mut setup, line), "+OK");
    }
    let mut runner = RawConn::connect(addr);
    runner.send_strs(&["EVAL", "while true do end", "0"]);
    wait_busy(&mut setup);
    let mut c = RawConn::connect(addr);
    let mut seen = Vec::new();
    for line in [
        &["AUTH", "app", "wrong"][..],
        &["AUTH", "off", "offpw"],
        &["AUTH", "nobody", "x"],
        &["AUTH", "app", "apppw"],
        &["GET", "app:x"],
        &["GET", "other"],
        &["SET", "app:x", "1"],
        &["DEL", "app:x"],
        &["PING"],
        &["CLIENT", "ID"],
        &["MULTI"],
        &["EXEC"],
        &["HELLO", "3", "AUTH", "full", "fullpw"],
        &["GET", "other"],
        &["PING"],
        &["HELLO", "2", "AUTH", "app", "wrong"],
        &["HELLO", "2", "AUTH", "app", "apppw"],
        &["GET", "other"],
        &["AUTH", "full", "fullpw"],
        &["MULTI"],
        &["GET", "other"],
        &["EXEC"],
        &["AUTH", "app", "apppw"],
        &["RESET"],
        &["GET", "other"],
        &["AUTH", "app", "apppw"],
        &["SCRIPT", "KILL"],
    ] {
        seen.push(masked(cmd(&mut c, line)));
    }
    runner
        .read_frame(Duration::from_secs(30))
        .expect("the EVAL caller's reply");
    // After the script the engine knows who the connection logged in as.
    seen.push(cmd(&mut c, &["ACL", "WHOAMI"]));
    seen.push(cmd(&mut c, &["GET", "other"]));
    seen.push(masked_log(cmd(&mut setup, &["ACL", "LOG"])));
    seen
}

#[test]
fn acl_users_while_a_script_is_busy() {
    let server = redlab::Server::start();
    let ours = scenario(server.addr());
    let busy =
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    let wrongpass = "-WRONGPASS invalid username-password pair or user is disabled.";
    assert_eq!(ours[..3], [wrongpass, wrongpass, wrongpass]);
    assert_eq!(ours[3], "+OK");
    assert_eq!(ours[4], busy);
    assert_eq!(
        ours[5],
        "-NOPERM this user has no permissions to access one of the keys used as arguments"
    );
    assert_eq!(ours[6], busy);
    assert_eq!(
        ours[7],
        "-NOPERM this user has no permissions to run the 'del' command"
    );
    assert!(ours[12].starts_with("%7\r\n"), "{}", ours[12]);
    assert_eq!(ours[13], busy);
    assert_eq!(ours[26], "+OK", "SCRIPT KILL by a user allowed to run it");
    // After the script the engine runs the connection as `app`: ACL WHOAMI is not its to run.
    assert_eq!(
        ours[27],
        "-NOPERM this user has no permissions to run the 'acl|whoami' command"
    );
    // The failed AUTH and HELLO AUTH during the script are logged, with the user they named.
    let log = &ours[29];
    for user in ["nobody", "off"] {
        assert!(
            log.contains(&format!("auth\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n$4\r\nAUTH\r\n$8\r\nusername\r\n${}\r\n{user}", user.len())),
            "{log}"
        );
    }
    assert!(log.contains("HELLO"), "{log}");
    if let Some(real) = RealRedis::start_or_skip("acl_users_while_a_script_is_busy") {
        assert_eq!(scenario(real.addr()), ours, "real Redis answers the same");
    }
}

/// Under a profile from 7.2 on, the busy loop's NOPERM names the user as that version's
/// dispatcher does (Redis 7.2's getAclErrorMessage); checked against valkey-server 8.1.
#[test]
fn acl_users_while_a_script_is_busy_as_valkey_81() {
    let server = redlab::Server::builder()
        .compat(redlab::Profile::Valkey81)
        .start();
    let ours = scenario(server.addr());
    assert_eq!(
        ours[7],
        "-NOPERM User app has no permissions to run the 'del' command"
    );
    assert_eq!(
        ours[4],
        "-BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert!(ours[29].contains("entry-id\r\n:10\r\n"), "{}", ours[29]);
    if let Some(valkey) = support::valkey_or_skip("acl_users_while_a_script_is_busy_as_valkey_81") {
        assert_eq!(
            scenario(valkey.addr()),
            ours,
            "valkey-server answers the same"
        );
    }
}
