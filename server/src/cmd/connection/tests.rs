//! What the conformance harness cannot show: passwords, other connections' ids, killed and
//! unblocked connections, the CLIENT LIST fields.

use crate::config::Config;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn run(e: &mut Engine, conn: u64, line: &str) -> Reply {
    let args: Vec<&str> = line.split(' ').collect();
    e.execute(conn, &args)
}

fn with_password(p: &str) -> Engine {
    Engine::new(Config {
        requirepass: Some(p.into()),
        ..Config::default()
    })
}

fn text(r: &Reply) -> String {
    match r {
        Reply::Bulk(b) | Reply::Verbatim(_, b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn requirepass_gates_commands_until_auth() {
    let mut e = with_password("secret");
    let c = e.connect();
    assert_eq!(run(&mut e, c, "PING"), Reply::err(errors::NOAUTH));
    assert_eq!(run(&mut e, c, "AUTH wrong"), Reply::err(errors::WRONGPASS));
    assert_eq!(
        run(&mut e, c, "AUTH default wrong"),
        Reply::err(errors::WRONGPASS)
    );
    assert_eq!(run(&mut e, c, "AUTH secret"), Reply::ok());
    assert_eq!(run(&mut e, c, "PING"), Reply::status("PONG"));
    // A failed AUTH does not log an authenticated connection out.
    assert_eq!(run(&mut e, c, "AUTH nope"), Reply::err(errors::WRONGPASS));
    assert_eq!(run(&mut e, c, "PING"), Reply::status("PONG"));
    assert_eq!(run(&mut e, c, "AUTH default secret"), Reply::ok());
}

#[test]
fn hello_needs_auth_or_authenticates() {
    let mut e = with_password("pw");
    let c = e.connect();
    assert_eq!(run(&mut e, c, "HELLO 3"), Reply::err(errors::HELLO_NOAUTH));
    assert_eq!(
        run(&mut e, c, "HELLO 3 SETNAME x"),
        Reply::err(errors::HELLO_NOAUTH)
    );
    assert_eq!(e.resp(c), 2);
    assert_eq!(
        run(&mut e, c, "HELLO 3 AUTH default bad"),
        Reply::err(errors::WRONGPASS)
    );
    let r = run(&mut e, c, "HELLO 3 AUTH default pw SETNAME app");
    let Reply::Map(pairs) = r else {
        panic!("HELLO answers a map")
    };
    assert_eq!(pairs[0], (Reply::bulk("server"), Reply::bulk("redis")));
    assert_eq!(pairs[1], (Reply::bulk("version"), Reply::bulk("7.0.15")));
    assert_eq!(pairs[2], (Reply::bulk("proto"), Reply::Int(3)));
    assert_eq!(pairs[3], (Reply::bulk("id"), Reply::Int(c as i64)));
    assert_eq!(e.resp(c), 3);
    assert_eq!(run(&mut e, c, "CLIENT GETNAME"), Reply::bulk("app"));
}

#[test]
fn hello_switches_the_wire_encoding() {
    let mut e = Engine::new(Config::default());
    let c = e.connect();
    assert_eq!(
        &run(&mut e, c, "GET missing").to_bytes(e.resp(c))[..],
        b"$-1\r\n"
    );
    run(&mut e, c, "HELLO 3");
    assert_eq!(
        &run(&mut e, c, "GET missing").to_bytes(e.resp(c))[..],
        b"_\r\n"
    );
    run(&mut e, c, "HELLO 2");
    assert_eq!(e.resp(c), 2);
}

#[test]
fn reset_logs_out_when_a_password_is_set() {
    let mut e = with_password("pw");
    let c = e.connect();
    run(&mut e, c, "AUTH pw");
    run(&mut e, c, "SELECT 4");
    run(&mut e, c, "HELLO 3");
    assert_eq!(run(&mut e, c, "RESET"), Reply::status("RESET"));
    assert_eq!(e.resp(c), 2);
    assert_eq!(run(&mut e, c, "PING"), Reply::err(errors::NOAUTH));
}

#[test]
fn exec_refused_for_noauth_is_an_execabort() {
    let mut e = with_password("pw");
    let c = e.connect();
    assert_eq!(
        run(&mut e, c, "EXEC"),
        Reply::err("EXECABORT Transaction discarded because of: NOAUTH Authentication required.")
    );
}

#[test]
fn quit_closes_after_the_reply() {
    let mut e = Engine::new(Config::default());
    let c = e.connect();
    assert_eq!(run(&mut e, c, "QUIT"), Reply::ok());
    assert!(e.should_close(c));
}

#[test]
fn client_kill_by_id_drops_the_connection_and_its_subscriptions() {
    let mut e = Engine::new(Config::default());
    let killer = e.connect();
    let victim = e.connect();
    run(&mut e, victim, "SUBSCRIBE ch");
    run(&mut e, victim, "WATCH k");
    e.take_wakeups();
    let r = run(&mut e, killer, &format!("CLIENT KILL ID {victim}"));
    assert_eq!(r, Reply::Int(1));
    assert!(e.should_close(victim));
    assert!(!e.is_connected(victim));
    assert!(
        e.take_wakeups().contains(&victim),
        "the shell must be woken to close the socket"
    );
    assert_eq!(run(&mut e, killer, "PUBLISH ch m"), Reply::Int(0));
    assert!(e.watched_keys.is_empty());
    assert_eq!(
        run(&mut e, killer, &format!("CLIENT KILL ID {victim}")),
        Reply::Int(0)
    );
    assert!(!e.should_close(killer));
}

#[test]
fn client_kill_by_addr_old_and_new_forms() {
    let mut e = Engine::new(Config::default());
    let a = e.connect_from("10.0.0.1:5000", "127.0.0.1:6379");
    let b = e.connect_from("10.0.0.2:5000", "127.0.0.1:6379");
    let c = e.connect_from("10.0.0.3:5000", "127.0.0.1:6380");
    assert_eq!(run(&mut e, a, "CLIENT KILL 10.0.0.2:5000"), Reply::ok());
    assert!(!e.is_connected(b));
    assert_eq!(
        run(&mut e, a, "CLIENT KILL 10.0.0.2:5000"),
        Reply::err(errors::NO_SUCH_CLIENT)
    );
    assert_eq!(
        run(&mut e, a, "CLIENT KILL LADDR 127.0.0.1:6380"),
        Reply::Int(1)
    );
    assert!(!e.is_connected(c));
    // The new form skips the caller unless told otherwise; the old form does not.
    assert_eq!(
        run(&mut e, a, "CLIENT KILL ADDR 10.0.0.1:5000"),
        Reply::Int(0)
    );
    assert_eq!(
        run(&mut e, a, "CLIENT KILL ADDR 10.0.0.1:5000 SKIPME no"),
        Reply::Int(1)
    );
    assert!(e.should_close(a));
    let d = e.connect_from("10.0.0.4:5000", "127.0.0.1:6379");
    assert_eq!(run(&mut e, d, "CLIENT KILL 10.0.0.4:5000"), Reply::ok());
    assert!(e.should_close(d));
}

#[test]
fn client_list_reports_the_connection_state() {
    let mut e = Engine::new(Config::default());
    let a = e.connect_from("10.1.1.1:4000", "127.0.0.1:6379");
    let b = e.connect_from("10.1.1.2:4000", "127.0.0.1:6379");
    let c = e.connect_from("10.1.1.3:4000", "127.0.0.1:6379");
    run(&mut e, a, "CLIENT SETNAME worker");
    run(&mut e, a, "SELECT 3");
    run(&mut e, a, "MULTI");
    run(&mut e, a, "SET k v");
    run(&mut e, b, "SUBSCRIBE x y");
    run(&mut e, b, "PSUBSCRIBE p*");
    let list = text(&run(&mut e, c, "CLIENT LIST"));
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(list.ends_with('\n'));
    let la = lines[0];
    assert!(
        la.starts_with(&format!(
            "id={a} addr=10.1.1.1:4000 laddr=127.0.0.1:6379 fd="
        )),
        "{la}"
    );
    for field in [
        "name=worker",
        "flags=x",
        "db=3",
        "sub=0",
        "psub=0",
        "ssub=0",
        "multi=1",
        "cmd=set",
        "user=default",
        "resp=2",
    ] {
        assert!(
            la.contains(&format!(" {field} ")) || la.ends_with(&format!(" {field}")),
            "{field} in {la}"
        );
    }
    let lb = lines[1];
    for field in [
        "name=",
        "flags=P",
        "sub=2",
        "psub=1",
        "multi=-1",
        "cmd=psubscribe",
    ] {
        assert!(lb.contains(&format!(" {field} ")), "{field} in {lb}");
    }
    assert!(
        lines[2].contains(" flags=N ") && lines[2].contains(" cmd=client|list "),
        "{}",
        lines[2]
    );
    let fields: Vec<&str> = lb
        .split(' ')
        .map(|f| f.split('=').next().unwrap_or(""))
        .collect();
    assert_eq!(
        fields,
        [
            "id",
            "addr",
            "laddr",
            "fd",
            "name",
            "age",
            "idle",
            "flags",
            "db",
            "sub",
            "psub",
            "ssub",
            "multi",
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
            "resp"
        ]
    );
    let pubsub_only = text(&run(&mut e, c, "CLIENT LIST TYPE pubsub"));
    assert_eq!(pubsub_only.lines().count(), 1);
    assert!(pubsub_only.starts_with(&format!("id={b} ")));
    let by_id = text(&run(&mut e, c, &format!("CLIENT LIST ID {b} 999 {a}")));
    let ids: Vec<&str> = by_id
        .lines()
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(ids, [format!("id={b}"), format!("id={a}")]);
}

#[test]
fn client_info_ages_with_the_clock() {
    let clock = crate::clock::Clock::manual(1_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    let a = e.connect();
    clock.advance(std::time::Duration::from_secs(5));
    let info = text(&run(&mut e, a, "CLIENT INFO"));
    assert!(info.contains(" age=5 idle=0 "), "{info}");
}

#[test]
fn client_unblock_ends_a_blocked_command() {
    let mut e = Engine::new(Config::default());
    let a = e.connect();
    let b = e.connect();
    for error in [false, true] {
        let call = Call {
            conn: b,
            db: 0,
            resp: 2,
            args: vec!["BLPOP".into(), "q".into(), "0".into()],
            in_script: false,
            in_multi: false,
            reprocessing: false,
        };
        e.block(&call, vec![b"q".to_vec()], None, Reply::NilArray);
        assert!(e.is_blocked(b));
        let line = if error {
            format!("CLIENT UNBLOCK {b} ERROR")
        } else {
            format!("CLIENT UNBLOCK {b}")
        };
        assert_eq!(run(&mut e, a, &line), Reply::Int(1));
        assert!(!e.is_blocked(b));
        let expected = if error {
            Reply::err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
        } else {
            Reply::NilArray
        };
        assert_eq!(e.take_output(b), vec![expected]);
    }
    assert_eq!(
        run(&mut e, a, &format!("CLIENT UNBLOCK {b}")),
        Reply::Int(0)
    );
}

#[test]
fn client_reply_modes() {
    let mut e = Engine::new(Config::default());
    let c = e.connect();
    assert_eq!(run(&mut e, c, "CLIENT REPLY OFF"), Reply::None);
    assert_eq!(run(&mut e, c, "PING"), Reply::None);
    assert_eq!(run(&mut e, c, "CLIENT REPLY ON"), Reply::ok());
    assert_eq!(run(&mut e, c, "CLIENT REPLY SKIP"), Reply::None);
    assert_eq!(run(&mut e, c, "PING"), Reply::None);
    assert_eq!(run(&mut e, c, "PING"), Reply::status("PONG"));
}

#[test]
fn client_names_are_printable_ascii_without_spaces() {
    assert!(super::valid_client_name(b"a-b_c:1!~"));
    assert!(super::valid_client_name(b""));
    for bad in [&b"a b"[..], b"a\nb", b"\x7f", b"caf\xc3\xa9", b"\x00"] {
        assert!(!super::valid_client_name(bad), "{bad:?}");
    }
}
