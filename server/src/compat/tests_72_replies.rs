//! Replies Redis 7.2 changed, checked for the Redis profiles that have no reference server:
//! ZRANK/ZREVRANK WITHSCORE and their arity, ACL rules printed as given, CLIENT HELP's lines,
//! function names that differ only in case. valkey-server 8.1 (which inherited each) checks
//! the valkey-8.1 profile in tests/conformance (zset.txt, acl.txt, functions.txt).

use super::*;
use crate::test_support::{engine_as, run};
use crate::{Engine, Reply};

fn engine(p: Profile) -> Engine {
    engine_as(p).0
}

const LATER_REDIS: [Profile; 5] = [
    Profile::Redis72,
    Profile::Redis74,
    Profile::Redis80,
    Profile::Redis82,
    Profile::Redis84,
];

#[test]
fn zrank_withscore_from_72() {
    for p in LATER_REDIS.into_iter().chain([Profile::Valkey72]) {
        let mut e = engine(p);
        run(&mut e, &["ZADD", "z", "1", "a", "2.5", "b"]);
        assert_eq!(
            run(&mut e, &["ZRANK", "z", "b", "WITHSCORE"]),
            Reply::Array(vec![Reply::Int(1), Reply::Double(2.5)]),
            "{p}"
        );
        assert_eq!(
            run(&mut e, &["ZREVRANK", "z", "b", "withscore"]),
            Reply::Array(vec![Reply::Int(0), Reply::Double(2.5)]),
            "{p}"
        );
        assert_eq!(
            run(&mut e, &["ZRANK", "z", "x", "withscore"]),
            Reply::NilArray
        );
        assert_eq!(
            run(&mut e, &["ZRANK", "no", "x", "withscore"]),
            Reply::NilArray
        );
        assert_eq!(run(&mut e, &["ZRANK", "z", "x"]), Reply::Nil);
        assert_eq!(
            run(&mut e, &["ZRANK", "z", "b", "withscores"]),
            Reply::err("ERR syntax error")
        );
        assert_eq!(
            run(&mut e, &["ZREVRANK", "z", "b", "withscore", "x"]),
            Reply::err("ERR wrong number of arguments for 'zrevrank' command")
        );
        assert_eq!(arity_shown(&mut e, "zrank"), -3, "{p}");
    }
    let mut e = engine(Profile::Redis70);
    run(&mut e, &["ZADD", "z", "1", "a"]);
    assert_eq!(
        run(&mut e, &["ZRANK", "z", "a", "withscore"]),
        Reply::err("ERR wrong number of arguments for 'zrank' command")
    );
    assert_eq!(arity_shown(&mut e, "zrank"), 3);
    assert_eq!(arity_shown(&mut e, "zrevrank"), 3);
}

/// The arity COMMAND INFO shows for `name`.
fn arity_shown(e: &mut Engine, name: &str) -> i64 {
    match run(e, &["COMMAND", "INFO", name]) {
        Reply::Array(infos) => match &infos[0] {
            Reply::Array(info) => match info[1] {
                Reply::Int(n) => n,
                ref other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// The commands field of ACL GETUSER `user`.
fn commands_of(e: &mut Engine, user: &str) -> String {
    match run(e, &["ACL", "GETUSER", user]) {
        Reply::Map(fields) => fields
            .into_iter()
            .find(|(k, _)| *k == Reply::bulk("commands"))
            .map(|(_, v)| match v {
                Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("{other:?}"),
            })
            .expect("a commands field"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn acl_rules_print_as_given_from_72() {
    // Each line as valkey-server 8.1 (Redis 7.2's command_rules) printed it.
    let given = [
        ("+@hash +get -@hash", "-@all +get -@hash"),
        ("+@read -get +get", "-@all +@read +get"),
        ("+@all +client|id", "+@all +client|id"),
        ("-config +config|get", "-@all -config +config|get"),
        ("+config|get -config", "-@all -config"),
        (
            "+SELECT|Ab +GET +@HASH -select",
            "-@all +get +@hash -select",
        ),
        (
            "+client|id +client|info -client +client|kill",
            "-@all -client +client|kill",
        ),
        ("+getex +get -getex", "-@all +get -getex"),
        ("+get -@all +set", "-@all +set"),
        ("+@all -get +@all", "+@all"),
        ("allcommands nocommands", "-@all"),
    ];
    for p in LATER_REDIS.into_iter().chain([Profile::Valkey72]) {
        let mut e = engine(p);
        for (rules, printed) in given {
            let mut line = vec!["ACL", "SETUSER", "u", "reset"];
            line.extend(rules.split(' '));
            assert_eq!(run(&mut e, &line), Reply::ok(), "{rules}");
            assert_eq!(commands_of(&mut e, "u"), printed, "{p}: {rules}");
        }
        let line = ["ACL", "SETUSER", "u", "reset", "(+get -@all +SET)"];
        assert_eq!(run(&mut e, &line), Reply::ok());
        let Reply::Array(users) = run(&mut e, &["ACL", "LIST"]) else {
            panic!("ACL LIST")
        };
        assert!(
            users.contains(&Reply::bulk(
                "user u off sanitize-payload resetchannels -@all (resetchannels -@all +set)"
            )),
            "{p}: {users:?}"
        );
    }
    // Redis 7.0 works the rules out from the permissions.
    let mut e = engine(Profile::Redis70);
    run(&mut e, &["ACL", "SETUSER", "u", "+@hash", "+get", "-@hash"]);
    assert_eq!(commands_of(&mut e, "u"), "-@all +get");
}

/// CLIENT HELP's lines under `p`.
fn client_help(p: Profile) -> Vec<String> {
    let mut e = engine(p);
    match run(&mut e, &["CLIENT", "HELP"]) {
        Reply::Array(lines) => lines
            .into_iter()
            .map(|l| match l {
                Reply::Status(s) => s,
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_help_lists_setinfo_and_no_touch_from_72() {
    let old = client_help(Profile::Redis70);
    for p in LATER_REDIS.into_iter().chain([Profile::Valkey72]) {
        let new = client_help(p);
        // From 7.4, CLIENT KILL's ID and MAXAGE lines too (tests_later.rs).
        let kill_74 = if p.has(since::CLIENT_KILL_MAXAGE) {
            4
        } else {
            0
        };
        assert_eq!(new.len(), old.len() + 6 + kill_74, "{p}");
        let setname = new.iter().position(|l| l == "SETNAME <name>").unwrap();
        assert_eq!(new[setname + 2], "SETINFO <option> <value>", "{p}");
        assert_eq!(new[setname + 5], "    * LIB-VER: the client lib version.");
        assert_eq!(new[setname + 6], "UNBLOCK <clientid> [TIMEOUT|ERROR]");
        let tail: Vec<&str> = new[new.len() - 6..].iter().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "NO-EVICT (ON|OFF)",
                "    Protect current client connection from eviction.",
                "NO-TOUCH (ON|OFF)",
                "    Will not touch LRU/LFU stats when this mode is on.",
                "HELP",
                "    Prints this help.",
            ],
            "{p}"
        );
    }
    assert!(!old
        .iter()
        .any(|l| l.starts_with("SETINFO") || l.starts_with("NO-TOUCH")));
}

#[test]
fn function_names_that_differ_only_in_case_share_a_library() {
    for p in Profile::ALL {
        let mut e = engine(p);
        let code = "#!lua name=lib1\nredis.register_function('foo', function() return 1 end)\n\
                    redis.register_function('FOO', function() return 1 end)";
        assert_eq!(
            run(&mut e, &["FUNCTION", "LOAD", code]),
            Reply::bulk("lib1"),
            "{p}"
        );
        assert_eq!(run(&mut e, &["FCALL", "Foo", "0"]), Reply::Int(1));
        let other = "#!lua name=lib2\nredis.register_function('fOO', function() return 2 end)";
        assert_eq!(
            run(&mut e, &["FUNCTION", "LOAD", other]),
            Reply::err("ERR Function fOO already exists")
        );
        // Deleting the library removes both (the real servers abort here).
        assert_eq!(run(&mut e, &["FUNCTION", "DELETE", "lib1"]), Reply::ok());
        assert_eq!(
            run(&mut e, &["FCALL", "foo", "0"]),
            Reply::err("ERR Function not found")
        );
    }
}
