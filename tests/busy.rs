//! A long-running script, as clients see it through the network shell: other connections get
//! -BUSY once the script passes busy-reply-threshold, SCRIPT KILL stops a script that has not
//! written (its caller gets Redis's error), a script that wrote is UNKILLABLE, and the server
//! answers normally afterwards. The same sequence runs against a real redis-server.

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

/// PINGs until the answer is not +PONG: a loaded machine may take long to start the script,
/// so no fixed sleep is enough. Returns the first other answer (-BUSY once the script passed
/// busy-reply-threshold), or +PONG after 30 s.
fn ping_until_busy(c: &mut RawConn) -> String {
    let start = Instant::now();
    loop {
        let r = cmd(c, &["PING"]);
        if r != "+PONG" || start.elapsed() > Duration::from_secs(30) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the scenario against one server; returns what each client saw.
fn scenario(addr: SocketAddr, script: &str) -> Vec<String> {
    let mut setup = RawConn::connect(addr);
    assert_eq!(
        cmd(
            &mut setup,
            &["CONFIG", "SET", "busy-reply-threshold", "100"]
        ),
        "+OK"
    );
    let mut runner = RawConn::connect(addr);
    runner.send(&[b"EVAL".to_vec(), script.as_bytes().to_vec(), b"0".to_vec()]);
    let mut other = RawConn::connect(addr);
    let busy = ping_until_busy(&mut other);
    let mut seen = vec![busy, cmd(&mut other, &["SCRIPT", "KILL"])];
    if seen[1].starts_with("-UNKILLABLE") {
        // Only SHUTDOWN NOSAVE can end it now: done by the caller of `scenario`.
        return seen;
    }
    let killed = runner
        .read_frame(Duration::from_secs(30))
        .expect("the EVAL caller's reply");
    seen.push(String::from_utf8_lossy(&killed).trim_end().to_string());
    seen.push(cmd(&mut other, &["PING"]));
    seen
}

const SPIN: &str = "while true do end";
const WRITE_THEN_SPIN: &str = "redis.call('SET', 'x', '1') while true do end";

#[test]
fn busy_then_script_kill() {
    let server = redlab::Server::start();
    let ours = scenario(server.addr(), SPIN);
    assert_eq!(
        ours[0],
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert_eq!(ours[1], "+OK");
    assert!(
        ours[2].starts_with("-ERR Script killed by user with SCRIPT KILL... script: "),
        "{}",
        ours[2]
    );
    assert!(ours[2].ends_with(", on @user_script:1."), "{}", ours[2]);
    assert_eq!(ours[3], "+PONG");
    if let Some(real) = RealRedis::start_or_skip("busy_then_script_kill") {
        assert_eq!(
            scenario(real.addr(), SPIN),
            ours,
            "real Redis answers the same"
        );
    }
}

#[test]
fn a_script_that_wrote_is_unkillable_and_shutdown_nosave_still_works() {
    let server = redlab::Server::start();
    let addr = server.addr();
    let ours = scenario(addr, WRITE_THEN_SPIN);
    assert_eq!(
        ours[0],
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert!(
        ours[1].starts_with("-UNKILLABLE Sorry the script already executed write commands"),
        "{}",
        ours[1]
    );
    let mut admin = RawConn::connect(addr);
    admin.send(&[b"SHUTDOWN".to_vec(), b"NOSAVE".to_vec()]);
    assert_eq!(
        admin.read_frame(Duration::from_secs(30)),
        None,
        "the server closes the connection"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.is_running() {
        assert!(
            Instant::now() < deadline,
            "SHUTDOWN NOSAVE stopped the server"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    if let Some(real) = RealRedis::start_or_skip("unkillable") {
        let theirs = scenario(real.addr(), WRITE_THEN_SPIN);
        assert_eq!(theirs, ours, "real Redis answers the same");
        let mut admin = RawConn::connect(real.addr());
        admin.send(&[b"SHUTDOWN".to_vec(), b"NOSAVE".to_vec()]);
        let _ = admin.read_frame(Duration::from_secs(30));
    }
}

/// Transactions while a script is busy, as Redis 7.0 serves them: MULTI, DISCARD, WATCH,
/// UNWATCH, RESET and SHUTDOWN ABORT are answered; everything else is refused with -BUSY and
/// flags an open transaction; EXEC is refused too, answering EXECABORT and discarding the
/// transaction (even one queued before the script began). Inside MULTI the allowed commands
/// that Redis queues are queued. Once the script is killed, each connection is in the state
/// those answers promised. Returns every answer, in order.
fn transactions_while_busy(addr: SocketAddr) -> Vec<String> {
    let mut setup = RawConn::connect(addr);
    let mut seen = vec![
        cmd(
            &mut setup,
            &["CONFIG", "SET", "busy-reply-threshold", "100"],
        ),
        cmd(&mut setup, &["SET", "x", "0"]),
    ];
    // Queued before the script: EXEC during it still refuses and discards.
    let mut early = RawConn::connect(addr);
    seen.push(cmd(&mut early, &["MULTI"]));
    seen.push(cmd(&mut early, &["SET", "x", "1"]));
    let mut watcher = RawConn::connect(addr);
    seen.push(cmd(&mut watcher, &["WATCH", "w"]));

    let mut runner = RawConn::connect(addr);
    runner.send(&[b"EVAL".to_vec(), SPIN.as_bytes().to_vec(), b"0".to_vec()]);
    let mut other = RawConn::connect(addr);
    seen.push(ping_until_busy(&mut other));

    seen.push(cmd(&mut early, &["EXEC"]));
    seen.push(cmd(&mut early, &["GET", "x"]));
    let mut c = RawConn::connect(addr);
    for args in [
        &["MULTI"][..],
        &["GET", "x"],
        &["EXEC"],
        &["MULTI"],
        &["MULTI"],
        &["WATCH", "k"],
        &["UNWATCH"],
        &["AUTH", "nopass"],
        &["DISCARD"],
        &["DISCARD"],
        &["WATCH", "k"],
        &["UNWATCH"],
        &["RESET"],
        &["SHUTDOWN", "ABORT"],
        &["SHUTDOWN"],
        &["EXEC"],
        &["NOSUCHCOMMAND"],
    ] {
        seen.push(cmd(&mut c, args));
    }
    // A client connecting now completes its handshake.
    let mut late = RawConn::connect(addr);
    let (hello, late_id) = without_id(&cmd(&mut late, &["HELLO", "3"]));
    seen.push(hello);
    seen.push(without_id(&cmd(&mut late, &["HELLO", "2", "SETNAME", "late"])).0);
    seen.push(cmd(&mut late, &["HELLO", "4"]));
    seen.push(cmd(&mut late, &["HELLO", "2", "AUTH", "nobody", "x"]));
    // Left open across the end of the script: one flagged, one with a queued command.
    let mut flagged = RawConn::connect(addr);
    seen.push(cmd(&mut flagged, &["MULTI"]));
    seen.push(cmd(&mut flagged, &["SET", "y", "1"]));
    let mut queued = RawConn::connect(addr);
    seen.push(cmd(&mut queued, &["MULTI"]));
    seen.push(cmd(&mut queued, &["UNWATCH"]));

    seen.push(cmd(&mut other, &["SCRIPT", "KILL"]));
    let killed = runner
        .read_frame(Duration::from_secs(30))
        .expect("the EVAL caller's reply");
    seen.push(
        String::from_utf8_lossy(&killed)
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
    );

    seen.push(cmd(&mut early, &["GET", "x"]));
    seen.push(cmd(&mut early, &["EXEC"]));
    seen.push(cmd(&mut flagged, &["EXEC"]));
    seen.push(cmd(&mut flagged, &["GET", "y"]));
    seen.push(cmd(&mut queued, &["SET", "z", "1"]));
    seen.push(cmd(&mut queued, &["EXEC"]));
    seen.push(cmd(&mut c, &["EXEC"]));
    seen.push(cmd(&mut watcher, &["MULTI"]));
    seen.push(cmd(&mut watcher, &["EXEC"]));
    seen.push(cmd(&mut late, &["CLIENT", "GETNAME"]));
    seen.push(format!(
        "HELLO named the id CLIENT ID gives: {}",
        cmd(&mut late, &["CLIENT", "ID"]) == format!(":{late_id}")
    ));
    seen
}

/// A HELLO reply with its client id taken out (ids differ between servers), and the id.
fn without_id(reply: &str) -> (String, String) {
    let lines: Vec<&str> = reply.split("\r\n").collect();
    let mut id = String::new();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 && lines[i - 1] == "id" && line.starts_with(':') {
            id = line[1..].to_string();
            out.push(":<id>");
        } else {
            out.push(line);
        }
    }
    (out.join("\r\n"), id)
}

#[test]
fn transactions_while_a_script_is_busy() {
    let server = redlab::Server::start();
    let ours = transactions_while_busy(server.addr());
    let busy =
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    let execabort = "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    // Before the script: CONFIG SET, SET, MULTI, SET (queued), WATCH.
    assert_eq!(ours[..5], ["+OK", "+OK", "+OK", "+QUEUED", "+OK"]);
    assert_eq!(ours[5], busy);
    // EXEC of the transaction queued before the script: refused and discarded.
    assert_eq!(ours[6], execabort);
    assert_eq!(ours[7], busy);
    assert_eq!(ours[8..11], ["+OK", busy, execabort]);
    assert_eq!(ours[11], "+OK");
    assert_eq!(ours[12], "-ERR MULTI calls can not be nested");
    assert_eq!(ours[13], "-ERR WATCH inside MULTI is not allowed");
    assert_eq!(ours[14..16], ["+QUEUED", "+QUEUED"]);
    assert_eq!(ours[16..18], ["+OK", "-ERR DISCARD without MULTI"]);
    assert_eq!(ours[18..21], ["+OK", "+OK", "+RESET"]);
    assert_eq!(ours[21], "-ERR No shutdown in progress.");
    assert_eq!(ours[22], busy);
    assert_eq!(ours[23], execabort);
    // After the kill: nothing of the discarded transaction ran, and no MULTI is left open.
    let after = ours.len() - 11;
    assert_eq!(ours[after], "$1\r\n0");
    assert_eq!(ours[after + 1], "-ERR EXEC without MULTI");
    assert_eq!(
        ours[after + 2],
        "-EXECABORT Transaction discarded because of previous errors."
    );
    assert_eq!(ours[after + 3], "$-1");
    assert_eq!(ours[after + 4], "+QUEUED");
    assert_eq!(ours[after + 5], "*2\r\n+OK\r\n+OK");
    assert_eq!(ours[after + 9], "$4\r\nlate");
    assert_eq!(ours[after + 10], "HELLO named the id CLIENT ID gives: true");
    assert!(ours[25].starts_with("%7\r\n"), "{}", ours[25]);
    assert!(ours[25].contains("proto\r\n:3"), "{}", ours[25]);
    assert!(ours[26].starts_with("*14\r\n"), "{}", ours[26]);
    assert_eq!(ours[27], "-NOPROTO unsupported protocol version");
    assert!(ours[28].starts_with("-WRONGPASS"), "{}", ours[28]);
    if let Some(real) = RealRedis::start_or_skip("transactions_while_a_script_is_busy") {
        assert_eq!(
            transactions_while_busy(real.addr()),
            ours,
            "real Redis answers the same"
        );
    }
}

/// While a script is busy, each line of `lines` from another client; then SCRIPT KILL, and
/// the killed script's caller is read. Returns the answers to `lines`.
fn newer_commands_while_busy(addr: SocketAddr, lines: &[&[&str]]) -> Vec<String> {
    let mut setup = RawConn::connect(addr);
    assert_eq!(
        cmd(
            &mut setup,
            &["CONFIG", "SET", "busy-reply-threshold", "100"]
        ),
        "+OK"
    );
    let mut runner = RawConn::connect(addr);
    runner.send(&[b"EVAL".to_vec(), SPIN.as_bytes().to_vec(), b"0".to_vec()]);
    let mut other = RawConn::connect(addr);
    assert!(ping_until_busy(&mut other).starts_with("-BUSY"));
    let seen = lines.iter().map(|l| cmd(&mut other, l)).collect();
    assert_eq!(cmd(&mut other, &["SCRIPT", "KILL"]), "+OK");
    runner
        .read_frame(Duration::from_secs(30))
        .expect("the EVAL caller's reply");
    seen
}

/// The busy-script loop looks commands up in the profile's view of the table, as the
/// dispatcher does: under redis-7.0 a command or subcommand that arrived later (HPERSIST,
/// CLIENT NO-TOUCH) is unknown, as redis-server 7.0.15 answers it while busy (it looks the
/// command up before it answers -BUSY), and the refusal is in the profile's report; under
/// redis-7.4, which has both, they get -BUSY.
#[test]
fn while_busy_commands_newer_than_the_profile_are_unknown() {
    let lines: &[&[&str]] = &[
        &["HPERSIST", "h", "FIELDS", "1", "f"],
        &["CLIENT", "NO-TOUCH", "on"],
    ];
    let busy =
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

    let old = redlab::Server::builder()
        .compat(redlab::Profile::Redis70)
        .start();
    let ours = newer_commands_while_busy(old.addr(), lines);
    assert_eq!(
        ours,
        [
            "-ERR unknown command 'HPERSIST', with args beginning with: 'h' 'FIELDS' '1' 'f'",
            "-ERR unknown subcommand 'NO-TOUCH'. Try CLIENT HELP.",
        ]
    );
    let refused: Vec<String> = old.compat_report().into_iter().map(|r| r.what).collect();
    assert_eq!(refused, ["hpersist", "client|no-touch"]);
    if let Some(real) = RealRedis::start_or_skip("busy, commands newer than 7.0") {
        assert_eq!(
            newer_commands_while_busy(real.addr(), lines),
            ours,
            "real Redis 7.0.15 answers the same"
        );
    }

    let newer = redlab::Server::builder()
        .compat(redlab::Profile::Redis74)
        .start();
    assert_eq!(newer_commands_while_busy(newer.addr(), lines), [busy, busy]);
    assert!(newer.compat_report().is_empty());
}

/// `rename-command flushdb badger` while a script is busy: the new name gets -BUSY, the old
/// one is an unknown command, as redis-server 7.0.15 answers (it looks the command up
/// before -BUSY).
#[test]
fn while_busy_renamed_commands_answer_by_their_new_name() {
    let lines: &[&[&str]] = &[&["BADGER"], &["FLUSHDB"]];
    let mut config = redlab::Config::default();
    let profile = config.compat;
    config.renames.rename(profile, "flushdb", "badger").unwrap();
    let server = redlab::Server::builder().config(config).start();
    let ours = newer_commands_while_busy(server.addr(), lines);
    assert_eq!(
        ours,
        [
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
            "-ERR unknown command 'FLUSHDB', with args beginning with:",
        ]
    );
    if let Ok(real) = RealRedis::start_with(&["--rename-command", "flushdb", "badger"]) {
        assert_eq!(
            newer_commands_while_busy(real.addr(), lines),
            ours,
            "real Redis 7.0.15 answers the same"
        );
    }
}
