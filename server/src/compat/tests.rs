//! Unit cases for the profiles, most of which have no reference server here.

use super::*;
use crate::{Config, Engine, Reply};

fn engine(p: Profile) -> Engine {
    let mut c = Config::default();
    c.set_compat(p);
    Engine::new(c)
}

fn run(e: &mut Engine, args: &[&str]) -> Reply {
    e.execute(1, args)
}

#[test]
fn names_parse_back() {
    for p in Profile::ALL {
        assert_eq!(Profile::parse(p.name()), Some(p));
        assert_eq!(p.name().parse::<Profile>(), Ok(p));
    }
    assert_eq!(Profile::parse("VALKEY-8.1"), Some(Profile::Valkey81));
    assert_eq!(Profile::parse("redis-6.2"), None);
    assert_eq!(Profile::default(), Profile::Redis70);
}

#[test]
fn version_numbers() {
    assert_eq!(version_num("7.0.15"), 0x07000f);
    assert_eq!(version_num("7.2.4"), 459268);
    assert_eq!(version_num("8.4.0"), 0x080400);
}

#[test]
fn availability_by_family() {
    let delex = since::of("delex");
    assert!(!Profile::Redis82.has(delex));
    assert!(Profile::Redis84.has(delex));
    assert!(!Profile::Valkey81.has(delex));
    let setinfo = since::of("client|setinfo");
    assert!(!Profile::Redis70.has(setinfo));
    assert!(Profile::Redis72.has(setinfo) && Profile::Valkey72.has(setinfo));
    assert!(Profile::Valkey81.has(since::SET_IFEQ));
    assert!(!Profile::Valkey81.has(since::SET_DIGEST_CONDITIONS));
    assert!(!Profile::Redis82.has(since::SET_IFEQ));
    assert_eq!(since::of("get"), Since::ALWAYS);
    assert_eq!(Since::both(84, 81).describe(), "Redis 8.4, Valkey 8.1");
}

#[test]
fn every_later_command_is_in_the_table() {
    for (name, since) in since::LATER {
        let found = crate::cmd::table::all().any(|c| {
            (c.name == *name && c.since == *since)
                || c.subcommands
                    .iter()
                    .any(|s| s.full_name(Some(c)) == *name && s.since == *since)
        });
        assert!(found, "{name} is not in the command table with its since");
    }
}

#[test]
fn info_and_hello_name_the_version() {
    let info = |e: &mut Engine| match run(e, &["INFO", "server"]) {
        Reply::Bulk(b) | Reply::Verbatim(_, b) => String::from_utf8_lossy(&b).into_owned(),
        r => panic!("{r:?}"),
    };
    let mut e = engine(Profile::Redis74);
    let text = info(&mut e);
    assert!(
        text.starts_with("# Server\r\nredis_version:7.4.6\r\n"),
        "{text}"
    );
    assert!(text.contains("\r\nredis_mode:standalone\r\n"));
    assert!(!text.contains("valkey"));

    let mut e = engine(Profile::Valkey81);
    let text = info(&mut e);
    assert!(
        text.starts_with(
            "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.8\r\n"
        ),
        "{text}"
    );
    assert!(text.contains("\r\nserver_mode:standalone\r\n"));
    let Reply::Map(hello) = run(&mut e, &["HELLO", "3"]) else {
        panic!("HELLO 3 answers a map");
    };
    assert_eq!(hello[0], (Reply::bulk("server"), Reply::bulk("valkey")));
    assert_eq!(hello[1], (Reply::bulk("version"), Reply::bulk("8.1.8")));

    let mut e = engine(Profile::Redis84);
    let Reply::Map(hello) = run(&mut e, &["HELLO", "3"]) else {
        panic!("HELLO 3 answers a map");
    };
    assert_eq!(hello[0], (Reply::bulk("server"), Reply::bulk("redis")));
    assert_eq!(hello[1], (Reply::bulk("version"), Reply::bulk("8.4.0")));
}

#[test]
fn scripts_see_the_version() {
    let script = "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}";
    let mut e = engine(Profile::Redis70);
    assert_eq!(
        run(&mut e, &["EVAL", script, "0"]),
        Reply::Array(vec![Reply::bulk("7.0.15"), Reply::Int(0x07000f)])
    );
    let mut e = engine(Profile::Redis80);
    assert_eq!(
        run(&mut e, &["EVAL", script, "0"]),
        Reply::Array(vec![Reply::bulk("8.0.4"), Reply::Int(0x080004)])
    );
    // The version is the table's own, still read-only.
    assert!(run(&mut e, &["EVAL", "redis.REDIS_VERSION = 'x'", "0"]).is_error());
    let mut e = engine(Profile::Valkey81);
    assert_eq!(
        run(&mut e, &["EVAL", script, "0"]),
        Reply::Array(vec![Reply::bulk("7.2.4"), Reply::Int(459268)])
    );
    // Valkey's other name for the redis table.
    assert_eq!(
        run(&mut e, &["EVAL", "return server.call('PING')", "0"]),
        Reply::Status("PONG".into())
    );
    let mut e = engine(Profile::Redis74);
    assert!(run(&mut e, &["EVAL", "return server.call('PING')", "0"]).is_error());
    // Functions see it too.
    let lib =
        "#!lua name=v\nredis.register_function('v', function() return redis.REDIS_VERSION end)";
    assert_eq!(run(&mut e, &["FUNCTION", "LOAD", lib]), Reply::bulk("v"));
    assert_eq!(run(&mut e, &["FCALL", "v", "0"]), Reply::bulk("7.4.6"));
}

#[test]
fn newer_commands_are_unknown_and_reported() {
    let mut e = engine(Profile::Redis72);
    assert_eq!(
        run(&mut e, &["HEXPIRE", "h", "10", "FIELDS", "1", "f"]),
        Reply::err(
            "ERR unknown command 'HEXPIRE', with args beginning with: 'h' '10' 'FIELDS' '1' 'f' "
        )
    );
    // Unknown before the arity check, as in a server that lacks it.
    assert_eq!(
        run(&mut e, &["hpersist"]),
        Reply::err("ERR unknown command 'hpersist', with args beginning with: ")
    );
    assert_eq!(
        run(&mut e, &["CLIENT", "SETINFO", "lib-name", "x"]),
        Reply::ok()
    );
    let mut e = engine(Profile::Redis70);
    assert_eq!(
        run(&mut e, &["CLIENT", "SETINFO", "lib-name", "x"]),
        Reply::err("ERR unknown subcommand 'SETINFO'. Try CLIENT HELP.")
    );
    assert_eq!(
        run(&mut e, &["EVAL", "return redis.pcall('DELEX', 'k')", "0"]),
        Reply::err("ERR Unknown Redis command called from script")
    );
    assert!(run(&mut e, &["DELEX", "k"]).is_error());
    assert!(run(&mut e, &["NOSUCHCOMMAND"]).is_error());
    let report = e.compat_report();
    let listed: Vec<(&str, u64, &str)> = report
        .iter()
        .map(|r| (r.what.as_str(), r.count, r.available_in.as_str()))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("client|setinfo", 1, "Redis 7.2, Valkey 7.2"),
            ("delex", 2, "Redis 8.4"),
        ]
    );
    assert_eq!(
        run(&mut e, &["REDLAB.COMPAT", "REPORT"]),
        Reply::Array(vec![
            Reply::Array(vec![
                Reply::bulk("client|setinfo"),
                Reply::Int(1),
                Reply::bulk("Redis 7.2, Valkey 7.2")
            ]),
            Reply::Array(vec![
                Reply::bulk("delex"),
                Reply::Int(2),
                Reply::bulk("Redis 8.4")
            ]),
        ])
    );
    assert_eq!(
        run(&mut e, &["REDLAB.COMPAT", "PROFILE"]),
        Reply::bulk("redis-7.0")
    );
    assert_eq!(run(&mut e, &["REDLAB.COMPAT", "RESET"]), Reply::ok());
    assert!(e.compat_report().is_empty());
}

#[test]
fn command_introspection_follows_the_profile() {
    let count = |p: Profile| match run(&mut engine(p), &["COMMAND", "COUNT"]) {
        Reply::Int(n) => n,
        r => panic!("{r:?}"),
    };
    // Every profile counts the 7.0 commands plus the later top-level ones it has.
    let base = count(Profile::Redis70)
        - since::LATER
            .iter()
            .filter(|(n, s)| !n.contains('|') && Profile::Redis70.has(*s))
            .count() as i64;
    for p in Profile::ALL {
        let later = since::LATER
            .iter()
            .filter(|(n, s)| !n.contains('|') && p.has(*s))
            .count() as i64;
        assert_eq!(count(p), base + later, "{p}");
    }
    assert!(count(Profile::Redis84) > count(Profile::Redis70));
    let mut e = engine(Profile::Redis72);
    let Reply::Array(infos) = run(&mut e, &["COMMAND", "INFO", "hexpire", "get"]) else {
        panic!("COMMAND INFO answers an array");
    };
    assert_eq!(
        infos[0],
        Reply::Nil,
        "a profile without HEXPIRE does not describe it"
    );
    assert_ne!(infos[1], Reply::Nil);
    let Reply::Array(list) = run(
        &mut e,
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "client|*"],
    ) else {
        panic!("COMMAND LIST answers an array");
    };
    assert!(list.contains(&Reply::bulk("client|setinfo")));
    let mut e = engine(Profile::Redis70);
    let Reply::Array(list) = run(
        &mut e,
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "client|*"],
    ) else {
        panic!("COMMAND LIST answers an array");
    };
    assert!(!list.contains(&Reply::bulk("client|setinfo")));
    assert_eq!(
        run(&mut e, &["COMMAND", "GETKEYS", "DELEX", "h"]),
        Reply::err("ERR Invalid command specified")
    );
    let mut e = engine(Profile::Redis84);
    assert_eq!(
        run(&mut e, &["COMMAND", "GETKEYS", "DELEX", "h"]),
        Reply::Array(vec![Reply::bulk("h")])
    );
}

/// Redis 7.2 brought listpack sets and their two parameters; 7.0 knows neither.
#[test]
fn listpack_sets_and_their_parameters_from_7_2() {
    for p in Profile::ALL {
        let mut e = engine(p);
        let has = p.has(since::SET_LISTPACK);
        let set = run(&mut e, &["CONFIG", "SET", "set-max-listpack-entries", "3"]);
        assert_eq!(set == Reply::ok(), has, "{p}: CONFIG SET answered {set:?}");
        let got = run(&mut e, &["CONFIG", "GET", "set-max-listpack-value"]);
        let expected = if has {
            Reply::Map(vec![(
                Reply::bulk("set-max-listpack-value"),
                Reply::bulk("64"),
            )])
        } else {
            Reply::Map(Vec::new())
        };
        assert_eq!(got, expected, "{p}");
        run(&mut e, &["SADD", "s", "a", "b", "c"]);
        run(&mut e, &["SADD", "i", "1", "2"]);
        let small = if has { "listpack" } else { "hashtable" };
        assert_eq!(
            run(&mut e, &["OBJECT", "ENCODING", "s"]),
            Reply::bulk(small),
            "{p}"
        );
        assert_eq!(
            run(&mut e, &["OBJECT", "ENCODING", "i"]),
            Reply::bulk("intset")
        );
        run(&mut e, &["SADD", "s", "d"]);
        assert_eq!(
            run(&mut e, &["OBJECT", "ENCODING", "s"]),
            Reply::bulk("hashtable"),
            "{p}: a fourth member"
        );
    }
}
