//! Unit cases for what Redis 7.2, 7.4 and 8.0 changed that the profiles follow without a
//! reference server here (valkey-server 8.1, which has the 7.2 items, checks them in
//! tests/conformance/compat_valkey.txt and tests/client_list_fields.rs).

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

/// The field names of CLIENT INFO's line.
fn client_info_fields(p: Profile) -> Vec<String> {
    let mut e = engine(p);
    let text = match run(&mut e, &["CLIENT", "INFO"]) {
        Reply::Bulk(b) | Reply::Verbatim(_, b) => String::from_utf8_lossy(&b).into_owned(),
        r => panic!("{r:?}"),
    };
    text.trim_end()
        .split(' ')
        .map(|f| f.split_once('=').map_or(f, |(k, _)| k).to_string())
        .collect()
}

#[test]
fn client_list_fields_by_version() {
    let base: Vec<&str> = vec![
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
        "resp",
    ];
    assert_eq!(client_info_fields(Profile::Redis70), base);
    // 7.2: lib-name and lib-ver (CLIENT SETINFO) at the end. Valkey 7.2 is Redis 7.2.4.
    let mut v72 = base.clone();
    v72.extend(["lib-name", "lib-ver"]);
    assert_eq!(client_info_fields(Profile::Redis72), v72);
    assert_eq!(client_info_fields(Profile::Valkey72), v72);
    // 7.4: watch after multi.
    let mut v74 = v72.clone();
    let at = v74.iter().position(|f| *f == "multi").expect("multi") + 1;
    v74.insert(at, "watch");
    assert_eq!(client_info_fields(Profile::Redis74), v74);
    // 8.0: io-thread last (Redis's own string for 8.0's line).
    let mut v80 = v74.clone();
    v80.push("io-thread");
    for p in [Profile::Redis80, Profile::Redis82, Profile::Redis84] {
        assert_eq!(client_info_fields(p), v80, "{p}");
    }
}

#[test]
fn waitaof_as_redis_72_answers_without_an_aof() {
    let mut e = engine(Profile::Redis70);
    assert_eq!(
        run(&mut e, &["WAITAOF", "0", "0", "0"]),
        Reply::err("ERR unknown command 'WAITAOF', with args beginning with: '0' '0' '0' ")
    );
    for p in [Profile::Redis72, Profile::Redis84, Profile::Valkey72] {
        let mut e = engine(p);
        let zero = Reply::Array(vec![Reply::Int(0), Reply::Int(0)]);
        assert_eq!(run(&mut e, &["WAITAOF", "0", "0", "0"]), zero, "{p}");
        assert_eq!(
            run(&mut e, &["WAITAOF", "1", "0", "0"]),
            Reply::err(crate::errors::WAITAOF_WITHOUT_AOF)
        );
        assert_eq!(
            run(&mut e, &["WAITAOF", "2", "0", "0"]),
            Reply::err("ERR value is out of range, value must between 0 and 1")
        );
        assert_eq!(
            run(&mut e, &["WAITAOF", "0", "x", "0"]),
            Reply::err("ERR value is out of range, must be positive")
        );
        assert_eq!(
            run(&mut e, &["WAITAOF", "0", "0", "-1"]),
            Reply::err("ERR timeout is negative")
        );
        assert_eq!(
            run(&mut e, &["WAITAOF", "0", "0", "9223372036854775807"]),
            Reply::err("ERR timeout is out of range")
        );
        // No replica ever fsyncs: a transaction or a script gets the counts at once.
        assert_eq!(run(&mut e, &["MULTI"]), Reply::ok());
        run(&mut e, &["WAITAOF", "0", "1", "0"]);
        assert_eq!(run(&mut e, &["EXEC"]), Reply::Array(vec![zero.clone()]));
        // Redis 7.2 flags WAITAOF `noscript`; 7.4 lets scripts run it (redis/redis#12977).
        let in_script = run(
            &mut e,
            &["EVAL", "return redis.call('WAITAOF', 0, 1, 0)", "0"],
        );
        if p == Profile::Redis84 {
            assert_eq!(in_script, zero, "{p}");
        } else {
            assert!(
                matches!(&in_script, Reply::Error(t) if t.starts_with("ERR This Redis command is not allowed from script")),
                "{p}: {in_script:?}"
            );
        }
        assert_eq!(
            run(&mut e, &["CONFIG", "SET", "appendonly", "yes"]),
            Reply::ok()
        );
        assert_eq!(
            run(&mut e, &["WAITAOF", "1", "0", "0"]),
            Reply::Array(vec![Reply::Int(1), Reply::Int(0)])
        );
    }
}

#[test]
fn time_stands_still_in_a_script_from_72() {
    // Enough work between the two TIMEs for the wall clock to move by more than a
    // microsecond, whatever the machine's speed: the loop alone takes longer than that.
    let script = "local a = redis.call('TIME') local x = 0 \
                  for i = 1, 200000 do x = x + i end \
                  local b = redis.call('TIME') \
                  return (a[1] == b[1] and a[2] == b[2]) and 1 or 0";
    let mut e = engine(Profile::Redis72);
    assert_eq!(run(&mut e, &["EVAL", script, "0"]), Reply::Int(1));
    let mut e = engine(Profile::Redis70);
    assert_eq!(run(&mut e, &["EVAL", script, "0"]), Reply::Int(0));
}

#[test]
fn blocking_commands_run_in_scripts_from_72() {
    let not_allowed = |r: &Reply| matches!(r, Reply::Error(t) if t.starts_with("ERR This Redis command is not allowed from script"));
    let mut e = engine(Profile::Redis70);
    let r = run(&mut e, &["EVAL", "return redis.call('BLPOP', 'q', 0)", "0"]);
    assert!(not_allowed(&r), "{r:?}");
    let r = run(
        &mut e,
        &[
            "EVAL",
            "return redis.call('XREAD', 'BLOCK', 0, 'STREAMS', 's', '0')",
            "0",
        ],
    );
    assert!(
        matches!(&r, Reply::Error(t) if t.starts_with("ERR XREAD command is not allowed with BLOCK option from scripts")),
        "{r:?}"
    );
    for p in [Profile::Redis72, Profile::Valkey81] {
        let mut e = engine(p);
        for script in [
            "return redis.call('BLPOP', 'q', 0)",
            "return redis.call('BZPOPMIN', 'z', 0)",
            "return redis.call('BLMOVE', 'q', 'r', 'LEFT', 'LEFT', 0)",
            "return redis.call('XREAD', 'BLOCK', 0, 'STREAMS', 's', '0')",
        ] {
            assert_eq!(
                run(&mut e, &["EVAL", script, "0"]),
                Reply::Nil,
                "{p}: {script}"
            );
        }
        assert_eq!(
            run(&mut e, &["EVAL", "return redis.call('WAIT', 0, 0)", "0"]),
            Reply::Int(0)
        );
        run(&mut e, &["RPUSH", "q", "a"]);
        assert_eq!(
            run(&mut e, &["EVAL", "return redis.call('BRPOP', 'q', 0)", "0"]),
            Reply::Array(vec![Reply::bulk("q"), Reply::bulk("a")])
        );
    }
}
