//! More of what Redis 7.2 changed, checked here for the redis-7.2 profile, which has no
//! reference server (valkey-server 8.1, which inherited each item, checks the valkey-8.1
//! profile in tests/conformance: acl.txt, command.txt, stream_groups.txt).

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

/// A user limited to GET on `k*` and the channel `c`, logged in on connection 1.
fn limited(p: Profile) -> Engine {
    let mut e = engine(p);
    assert_eq!(
        run(
            &mut e,
            &[
                "ACL", "SETUSER", "u", "on", "nopass", "~k*", "&c", "-@all", "+get", "+eval",
                "+publish"
            ]
        ),
        Reply::ok()
    );
    assert_eq!(run(&mut e, &["AUTH", "u", "x"]), Reply::ok());
    e
}

#[test]
fn acl_errors_name_the_user_from_72() {
    let mut e = limited(Profile::Redis72);
    assert_eq!(
        run(&mut e, &["SET", "k", "v"]),
        Reply::err("NOPERM User u has no permissions to run the 'set' command")
    );
    assert_eq!(
        run(&mut e, &["GET", "other"]),
        Reply::err("NOPERM No permissions to access a key")
    );
    assert_eq!(
        run(&mut e, &["PUBLISH", "z", "m"]),
        Reply::err("NOPERM No permissions to access a channel")
    );
    let r = run(&mut e, &["EVAL", "return redis.call('get', 'other')", "0"]);
    assert!(
        matches!(&r, Reply::Error(t) if t.starts_with("ERR ACL failure in script: No permissions to access a key script: ")),
        "{r:?}"
    );
    let mut e = limited(Profile::Redis70);
    assert_eq!(
        run(&mut e, &["SET", "k", "v"]),
        Reply::err("NOPERM this user has no permissions to run the 'set' command")
    );
    assert_eq!(
        run(&mut e, &["GET", "other"]),
        Reply::err(
            "NOPERM this user has no permissions to access one of the keys used as arguments"
        )
    );
}

#[test]
fn acl_dryrun_names_the_user_from_72() {
    let mut e = limited(Profile::Redis72);
    run(&mut e, &["AUTH", "default", "x"]);
    assert_eq!(
        run(&mut e, &["ACL", "DRYRUN", "u", "GET", "other"]),
        Reply::bulk("User u has no permissions to access the 'other' key")
    );
    assert_eq!(
        run(&mut e, &["ACL", "DRYRUN", "u", "SET", "k", "v"]),
        Reply::bulk("User u has no permissions to run the 'set' command")
    );
    let mut e = limited(Profile::Redis70);
    run(&mut e, &["AUTH", "default", "x"]);
    assert_eq!(
        run(&mut e, &["ACL", "DRYRUN", "u", "GET", "other"]),
        Reply::bulk("This user has no permissions to access the 'other' key")
    );
}

/// COMMAND INFO's flags of BLMOVE: `noscript` until 7.0, gone from 7.2 (scripts may run it).
fn blmove_flags(p: Profile) -> Vec<Reply> {
    let mut e = engine(p);
    match run(&mut e, &["COMMAND", "INFO", "blmove"]) {
        Reply::Array(mut infos) => match infos.remove(0) {
            Reply::Array(mut info) => match info.remove(2) {
                Reply::Set(flags) => flags,
                r => panic!("{r:?}"),
            },
            r => panic!("{r:?}"),
        },
        r => panic!("{r:?}"),
    }
}

#[test]
fn scriptable_blocking_commands_lose_noscript_from_72() {
    let noscript = Reply::status("noscript");
    assert!(blmove_flags(Profile::Redis70).contains(&noscript));
    for p in [Profile::Redis72, Profile::Redis80, Profile::Valkey81] {
        let flags = blmove_flags(p);
        assert!(!flags.contains(&noscript), "{p}: {flags:?}");
        assert!(flags.contains(&Reply::status("blocking")), "{p}: {flags:?}");
    }
}

/// XINFO GROUPS' `consumers` count of the only group of `s`.
fn consumers(e: &mut Engine) -> Reply {
    match run(e, &["XINFO", "GROUPS", "s"]) {
        Reply::Array(mut groups) => match groups.remove(0) {
            Reply::Map(fields) => fields
                .into_iter()
                .find(|(k, _)| *k == Reply::bulk("consumers"))
                .map(|(_, v)| v)
                .expect("consumers"),
            Reply::Array(fields) => fields[3].clone(),
            r => panic!("{r:?}"),
        },
        r => panic!("{r:?}"),
    }
}

#[test]
fn consumers_are_created_before_serving_from_72() {
    for (p, want) in [(Profile::Redis70, 0), (Profile::Redis72, 1)] {
        let mut e = engine(p);
        run(&mut e, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        assert_eq!(
            run(
                &mut e,
                &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"]
            ),
            Reply::NilArray,
            "{p}"
        );
        assert_eq!(consumers(&mut e), Reply::Int(want), "{p}: XREADGROUP");
        run(&mut e, &["XADD", "s", "1", "f", "v"]);
        run(
            &mut e,
            &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        );
        run(&mut e, &["XCLAIM", "s", "g", "bob", "3600000", "1"]);
        assert_eq!(consumers(&mut e), Reply::Int(1 + want), "{p}: XCLAIM");
    }
}

#[test]
fn unbalanced_streams_name_the_command_from_72() {
    let mut e = engine(Profile::Redis72);
    assert_eq!(
        run(&mut e, &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "c"]),
        Reply::err("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
    );
    assert_eq!(
        run(&mut e, &["XREAD", "STREAMS", "a", "b", "c"]),
        Reply::err("ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.")
    );
    let mut e = engine(Profile::Redis70);
    assert_eq!(
        run(&mut e, &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "c"]),
        Reply::err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
    );
}

/// The Valkey 8 scripting API exists only under the Valkey 8.1 profile: `server`, `os.clock`
/// and Valkey's error words; Redis profiles keep Redis's.
#[test]
fn valkey_scripting_api_only_under_valkey_8() {
    let mut e = engine(Profile::Valkey81);
    assert_eq!(
        run(
            &mut e,
            &[
                "EVAL",
                "return {type(os.clock()), server.SERVER_NAME, redis.VALKEY_VERSION}",
                "0"
            ]
        ),
        Reply::Array(vec![
            Reply::bulk("number"),
            Reply::bulk("valkey"),
            Reply::bulk("8.1.8")
        ])
    );
    let r = run(&mut e, &["EVAL", "return redis.log(99, 'x')", "0"]);
    assert!(
        matches!(&r, Reply::Error(t) if t.starts_with("ERR Invalid log level.")),
        "{r:?}"
    );
    for p in [Profile::Redis70, Profile::Redis84] {
        let mut e = engine(p);
        let r = run(&mut e, &["EVAL", "return type(os)", "0"]);
        assert!(
            matches!(&r, Reply::Error(t) if t.contains("nonexistent global variable 'os'")),
            "{p}: {r:?}"
        );
        let r = run(&mut e, &["EVAL", "return redis.log(99, 'x')", "0"]);
        assert!(
            matches!(&r, Reply::Error(t) if t.starts_with("ERR Invalid debug level.")),
            "{p}: {r:?}"
        );
    }
}
