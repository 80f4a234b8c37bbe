//! `rename-command` on the paths that run a command later than it was sent: EXEC's queue,
//! a blocked command served when its key is ready, and a command held by CLIENT PAUSE.
//! redis-server 7.0.15 (`--rename-command SET FOO --rename-command BLPOP BWAIT`) shows the
//! typed name in MONITOR and SLOWLOG on all of them, and runs the held command after the pause.

use crate::reply::Reply;
use crate::{Config, Engine};

fn renamed_engine() -> Engine {
    let mut config = Config::default();
    let p = config.compat;
    config.renames.rename(p, "set", "foo").unwrap();
    config.renames.rename(p, "blpop", "bwait").unwrap();
    let mut e = Engine::new(config);
    assert_eq!(
        e.execute(9, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]),
        Reply::ok()
    );
    e
}

/// The command names of the newest `n` SLOWLOG entries, newest first.
fn slowlog_names(e: &mut Engine, n: usize) -> Vec<Reply> {
    let Reply::Array(log) = e.execute(9, &["SLOWLOG", "GET", &n.to_string()]) else {
        panic!("SLOWLOG GET")
    };
    log.iter()
        .map(|entry| match entry {
            Reply::Array(f) => match &f[3] {
                Reply::Array(argv) => argv[0].clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect()
}

/// MONITOR lines received by `conn`, as text.
fn monitor_lines(e: &mut Engine, conn: u64) -> Vec<String> {
    std::iter::from_fn(|| e.pop_output(conn))
        .map(|r| match r {
            Reply::Status(s) => s.to_string(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn exec_shows_the_typed_name_in_monitor_and_slowlog() {
    let mut e = renamed_engine();
    assert_eq!(e.execute(2, &["MONITOR"]), Reply::ok());
    assert_eq!(e.execute(1, &["MULTI"]), Reply::ok());
    assert_eq!(e.execute(1, &["GET", "k"]), Reply::status("QUEUED"));
    assert_eq!(e.execute(1, &["Foo", "k", "v"]), Reply::status("QUEUED"));
    assert_eq!(
        e.execute(1, &["EXEC"]),
        Reply::Array(vec![Reply::Nil, Reply::ok()])
    );
    let lines = monitor_lines(&mut e, 2);
    let shown: Vec<&str> = lines
        .iter()
        .map(|l| l.split("] ").nth(1).unwrap_or(""))
        .collect();
    assert_eq!(
        shown,
        [
            "\"MULTI\"",
            "\"GET\" \"k\"",
            "\"Foo\" \"k\" \"v\"",
            "\"EXEC\""
        ]
    );
    assert_eq!(
        slowlog_names(&mut e, 3),
        [Reply::bulk("Foo"), Reply::bulk("GET"), Reply::bulk("MULTI")]
    );
    assert_eq!(e.execute(1, &["GET", "k"]), Reply::bulk("v"));
}

#[test]
fn a_served_blocked_command_is_logged_with_its_typed_name() {
    let mut e = renamed_engine();
    assert_eq!(e.execute(1, &["BWAIT", "l", "0"]), Reply::None);
    assert_eq!(e.execute(2, &["RPUSH", "l", "a"]), Reply::Int(1));
    assert_eq!(
        e.pop_output(1),
        Some(Reply::Array(vec![Reply::bulk("l"), Reply::bulk("a")]))
    );
    assert_eq!(
        slowlog_names(&mut e, 2),
        [Reply::bulk("BWAIT"), Reply::bulk("RPUSH")]
    );
}

#[test]
fn a_renamed_write_held_by_client_pause_runs_after_it() {
    let mut e = renamed_engine();
    assert_eq!(
        e.execute(9, &["CLIENT", "PAUSE", "100000", "WRITE"]),
        Reply::ok()
    );
    assert_eq!(e.execute(1, &["FOO", "p", "q"]), Reply::None);
    assert_eq!(e.execute(9, &["CLIENT", "UNPAUSE"]), Reply::ok());
    assert_eq!(e.pop_output(1), Some(Reply::ok()));
    assert_eq!(e.execute(9, &["GET", "p"]), Reply::bulk("q"));
    assert_eq!(
        slowlog_names(&mut e, 3),
        [
            Reply::bulk("GET"),
            Reply::bulk("FOO"),
            Reply::bulk("CLIENT")
        ]
    );
}
