//! What the differential cases cannot show: sessions after users change, the fast path's
//! flag, a server left locked by one test and reopened by the next, ACL files.

use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn run(e: &mut Engine, conn: u64, line: &str) -> Reply {
    let args: Vec<&str> = line.split(' ').collect();
    e.execute(conn, &args)
}

fn err_text(r: &Reply) -> String {
    match r {
        Reply::Error(t) => t.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn default_user_skips_the_check() {
    let mut e = Engine::new(Config::default());
    let c = e.connect();
    assert!(e.sessions[&c].acl_free);
    run(&mut e, 1, "ACL SETUSER default -flushall");
    assert!(
        !e.sessions[&c].acl_free,
        "a restricted default user is checked"
    );
    assert!(err_text(&run(&mut e, c, "FLUSHALL")).starts_with("NOPERM"));
    run(&mut e, 1, "ACL SETUSER default +@all");
    assert!(e.sessions[&c].acl_free);
    assert_eq!(run(&mut e, c, "FLUSHALL"), Reply::ok());
}

/// One test sets a password and runs into a refused command; the next test, on the same
/// server, gets in again with AUTH or RESET and puts things back.
#[test]
fn a_password_and_a_failed_command_do_not_lock_out_later_tests() {
    let mut e = Engine::new(Config::default());
    // "Test one": a user, a password on default, a refused command.
    let t1 = e.connect();
    assert_eq!(
        run(&mut e, t1, "ACL SETUSER limited on >lpw ~app:* +get"),
        Reply::ok()
    );
    assert_eq!(
        run(&mut e, t1, "CONFIG SET requirepass secret"),
        Reply::ok()
    );
    assert_eq!(run(&mut e, t1, "AUTH limited lpw"), Reply::ok());
    assert!(err_text(&run(&mut e, t1, "SET app:1 v")).starts_with("NOPERM"));
    assert!(err_text(&run(&mut e, t1, "CONFIG SET requirepass x")).starts_with("NOPERM"));
    // RESET goes back to `default`, which now needs the password.
    assert_eq!(run(&mut e, t1, "RESET"), Reply::status("RESET"));
    assert_eq!(
        err_text(&run(&mut e, t1, "ACL WHOAMI")),
        crate::errors::NOAUTH
    );
    // "Test two": a new connection authenticates and reopens the server.
    let t2 = e.connect();
    assert_eq!(err_text(&run(&mut e, t2, "PING")), crate::errors::NOAUTH);
    assert_eq!(run(&mut e, t2, "AUTH secret"), Reply::ok());
    assert_eq!(
        e.execute(t2, &["CONFIG", "SET", "requirepass", ""]),
        Reply::ok()
    );
    assert_eq!(run(&mut e, t2, "ACL DELUSER limited"), Reply::Int(1));
    let t3 = e.connect();
    assert_eq!(run(&mut e, t3, "PING"), Reply::status("PONG"));
    assert_eq!(run(&mut e, t3, "ACL WHOAMI"), Reply::bulk("default"));
    // The connection RESET left unauthenticated can run again, as in Redis once default
    // needs no password.
    assert_eq!(run(&mut e, t1, "PING"), Reply::status("PONG"));
}

#[test]
fn acl_setuser_default_password_and_nopass() {
    let mut e = Engine::new(Config::default());
    assert_eq!(run(&mut e, 1, "ACL SETUSER default >pw"), Reply::ok());
    let c = e.connect();
    assert_eq!(err_text(&run(&mut e, c, "GET k")), crate::errors::NOAUTH);
    assert_eq!(run(&mut e, c, "AUTH pw"), Reply::ok());
    assert_eq!(run(&mut e, c, "ACL SETUSER default nopass"), Reply::ok());
    let d = e.connect();
    assert_eq!(run(&mut e, d, "GET k"), Reply::Nil);
}

#[test]
fn deleting_a_user_closes_its_connections_but_not_others() {
    let mut e = Engine::new(Config::default());
    run(&mut e, 1, "ACL SETUSER u on nopass +@all ~*");
    let a = e.connect();
    let b = e.connect();
    run(&mut e, a, "AUTH u x");
    assert_eq!(run(&mut e, 1, "ACL DELUSER u"), Reply::Int(1));
    assert!(!e.is_connected(a));
    assert!(e.is_connected(b));
    // A connection that deletes its own user is closed after its reply.
    run(&mut e, 1, "ACL SETUSER v on nopass +@all ~*");
    run(&mut e, b, "AUTH v x");
    assert_eq!(run(&mut e, b, "ACL DELUSER v"), Reply::Int(1));
    assert!(e.should_close(b));
}

#[test]
fn scripts_run_with_the_callers_permissions() {
    let mut e = Engine::new(Config::default());
    run(&mut e, 1, "ACL SETUSER s on nopass ~app:* +@read +eval");
    let c = e.connect();
    run(&mut e, c, "AUTH s x");
    let r = e.execute(c, &["EVAL", "return redis.call('set','app:1','v')", "0"]);
    assert!(
        err_text(&r).contains("can't run this command or subcommand"),
        "{r:?}"
    );
    // The default user's script may write the same key.
    let r = e.execute(1, &["EVAL", "return redis.call('set','app:1','v')", "0"]);
    assert_eq!(r, Reply::ok());
    let r = e.execute(c, &["EVAL", "return redis.call('get','other')", "0"]);
    assert!(err_text(&r).contains("at least one of the keys"), "{r:?}");
    let r = e.execute(c, &["EVAL", "return redis.call('get','app:1')", "0"]);
    assert_eq!(r, Reply::bulk("v"));
}

#[test]
fn acl_file_save_and_load() {
    let dir = std::env::temp_dir().join(format!("redlab-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("users.acl");
    std::fs::write(&file, "").unwrap();
    let mut config = Config::default();
    config
        .set_by_name("aclfile", file.to_str().unwrap())
        .unwrap();
    let mut e = Engine::new(config);
    run(
        &mut e,
        1,
        "ACL SETUSER u on >pw ~a:* %R~r:* &ch +get (~b +set)",
    );
    assert_eq!(run(&mut e, 1, "ACL SAVE"), Reply::ok());
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("user u on #"), "{saved}");
    run(&mut e, 1, "ACL DELUSER u");
    assert_eq!(run(&mut e, 1, "ACL LOAD"), Reply::ok());
    let list = run(&mut e, 1, "ACL LIST");
    let Reply::Array(lines) = list else {
        panic!("{list:?}")
    };
    assert_eq!(lines.len(), 2);
    assert_eq!(Reply::bulk(saved.lines().nth(1).unwrap()), lines[1]);
    std::fs::write(&file, "user x on bogus\n").unwrap();
    let r = run(&mut e, 1, "ACL LOAD");
    assert!(err_text(&r).contains("bogus"), "{r:?}");
    assert_eq!(
        run(&mut e, 1, "ACL USERS"),
        Reply::bulk_array(["default", "u"])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn genpass_has_the_asked_length() {
    let mut e = Engine::new(Config::default());
    for (bits, len) in [("1", 1), ("4", 1), ("5", 2), ("256", 64), ("4096", 1024)] {
        match e.execute(1, &["ACL", "GENPASS", bits]) {
            Reply::Bulk(b) => assert_eq!(b.len(), len, "{bits}"),
            other => panic!("{other:?}"),
        }
    }
}

/// ACL LOG without a count answers the newest ten entries, as Redis 7.0.15 (checked with
/// redis-cli: twelve failed AUTHs, `ACL LOG` lists 10 and `ACL LOG 20` lists 12).
#[test]
fn acl_log_without_a_count_shows_ten() {
    let mut e = Engine::new(Config::default());
    let c = e.connect();
    for i in 0..12 {
        run(&mut e, c, &format!("AUTH user{i} wrong"));
    }
    let entries = |r: Reply| match r {
        Reply::Array(items) => items.len(),
        other => panic!("expected an array, got {other:?}"),
    };
    assert_eq!(entries(run(&mut e, c, "ACL LOG")), 10);
    assert_eq!(entries(run(&mut e, c, "ACL LOG 20")), 12);
    assert_eq!(entries(run(&mut e, c, "ACL LOG 3")), 3);
}

/// A key pattern that is plain bytes and one trailing `*` is checked as a prefix
/// (`KeyPattern::matches`): it must decide exactly as the glob walk does, for those patterns
/// and for the ones that keep the walk.
#[test]
fn key_patterns_match_as_the_glob_does() {
    let patterns: [&[u8]; 9] = [
        b"app:*",
        b"*",
        b"a*",
        b"",
        b"app:",
        b"a?p:*",
        b"[ab]pp:*",
        b"app\\*",
        b"app:**",
    ];
    let keys: [&[u8]; 8] = [
        b"app:1", b"app:", b"app", b"bpp:1", b"apq:1", b"", b"app*", b"xapp:1",
    ];
    for p in patterns {
        let kp = crate::acl::model::KeyPattern::new(p.to_vec(), true, true);
        for k in keys {
            assert_eq!(
                kp.matches(k),
                crate::glob::matches(p, k, false),
                "pattern {:?} key {:?}",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(k)
            );
        }
    }
}
