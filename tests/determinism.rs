//! One seedable generator per engine: the same seed gives the same random replies (SPOP,
//! SRANDMEMBER, HRANDFIELD, ZRANDMEMBER, RANDOMKEY, math.random), unseeded engines differ,
//! negative counts return exactly |count| elements, and SCAN cursors are small bucket
//! indices a Lua script can do arithmetic on.

use redlab::{Config, Engine, Reply};

fn engine(seed: Option<u64>) -> Engine {
    let mut c = Config::default();
    c.seed = seed;
    Engine::new(c)
}

fn run(e: &mut Engine, args: &[&str]) -> Reply {
    e.execute(1, args)
}

/// A session of random commands and the replies they got.
fn session(e: &mut Engine) -> Vec<Reply> {
    let _ = e.connect();
    let mut out = Vec::new();
    for i in 0..50 {
        run(e, &["SADD", "s", &format!("m{i}")]);
        run(e, &["HSET", "h", &format!("f{i}"), "v"]);
        run(e, &["ZADD", "z", &i.to_string(), &format!("z{i}")]);
        run(e, &["SET", &format!("k{i}"), "v"]);
    }
    for _ in 0..5 {
        out.push(run(e, &["SPOP", "s"]));
        out.push(run(e, &["SPOP", "s", "3"]));
        out.push(run(e, &["SRANDMEMBER", "s", "-5"]));
        out.push(run(e, &["SRANDMEMBER", "s", "4"]));
        out.push(run(e, &["HRANDFIELD", "h", "-5"]));
        out.push(run(e, &["HRANDFIELD", "h", "3", "WITHVALUES"]));
        out.push(run(e, &["ZRANDMEMBER", "z", "-5", "WITHSCORES"]));
        out.push(run(e, &["ZRANDMEMBER", "z", "4"]));
        out.push(run(e, &["RANDOMKEY"]));
        out.push(run(e, &["EVAL", "return tostring(math.random())", "0"]));
        out.push(run(e, &["EVAL", "return math.random(1000000)", "0"]));
    }
    out
}

#[test]
fn the_same_seed_repeats_every_random_reply() {
    let a = session(&mut engine(Some(42)));
    let b = session(&mut engine(Some(42)));
    assert_eq!(a, b);
    assert!(!a.iter().any(|r| matches!(r, Reply::Error(_))), "{a:?}");
    let c = session(&mut engine(Some(43)));
    assert_ne!(a, c);
}

#[test]
fn engines_without_a_seed_get_fresh_ones() {
    let (mut a, mut b) = (engine(None), engine(None));
    let (sa, sb) = (session(&mut a), session(&mut b));
    assert_ne!(sa, sb);
    // The seed picked is reported, and giving it back repeats the engine.
    let Reply::Map(kv) = run(&mut a, &["CONFIG", "GET", "redlab-seed"]) else {
        panic!()
    };
    let Reply::Bulk(seed) = &kv[0].1 else {
        panic!()
    };
    let seed: u64 = std::str::from_utf8(seed).unwrap().parse().unwrap();
    assert_eq!(session(&mut engine(Some(seed))), sa);
}

#[test]
fn config_set_redlab_seed_restarts_the_sequence() {
    let mut e = engine(None);
    let _ = e.connect();
    let draw = |e: &mut Engine| {
        run(
            e,
            &[
                "EVAL",
                "return {math.random(1000000), math.random(1000000)}",
                "0",
            ],
        )
    };
    assert_eq!(
        run(&mut e, &["CONFIG", "SET", "redlab-seed", "7"]),
        Reply::ok()
    );
    let first = draw(&mut e);
    assert_ne!(
        draw(&mut e),
        first,
        "consecutive scripts continue the sequence"
    );
    run(&mut e, &["CONFIG", "SET", "redlab-seed", "7"]);
    assert_eq!(draw(&mut e), first);
    // Not listed by CONFIG GET *, so that listing stays Redis's.
    let Reply::Map(all) = run(&mut e, &["CONFIG", "GET", "*"]) else {
        panic!()
    };
    assert!(!all.iter().any(|(k, _)| *k == Reply::bulk("redlab-seed")));
}

#[test]
fn math_randomseed_gives_redis_numbers() {
    // Redis 7.0.15: EVAL "math.randomseed(1); return tostring(math.random())" 0
    let mut e = engine(None);
    let _ = e.connect();
    let r = run(
        &mut e,
        &[
            "EVAL",
            "math.randomseed(1); return tostring(math.random())",
            "0",
        ],
    );
    assert_eq!(r, Reply::bulk("0.041630344484761"));
    let r = run(
        &mut e,
        &[
            "EVAL",
            "math.randomseed(1); return math.random(2^31, 1)",
            "0",
        ],
    );
    let Reply::Int(n) = r else { panic!("{r:?}") };
    assert!(n < -(1 << 31), "2^31 wraps to a C int: {n}");
}

fn len(r: &Reply) -> usize {
    match r {
        Reply::Array(v) | Reply::Set(v) => v.len(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn negative_counts_return_exactly_that_many() {
    let mut e = engine(Some(1));
    let _ = e.connect();
    run(&mut e, &["SADD", "s", "a", "b"]);
    run(&mut e, &["HSET", "h", "a", "1"]);
    run(&mut e, &["ZADD", "z", "1", "a"]);
    assert_eq!(
        len(&run(&mut e, &["ZRANDMEMBER", "z", "-1100000"])),
        1_100_000
    );
    assert_eq!(
        len(&run(&mut e, &["SRANDMEMBER", "s", "-4300000"])),
        4_300_000
    );
    assert_eq!(
        len(&run(&mut e, &["HRANDFIELD", "h", "-4300000"])),
        4_300_000
    );
    run(&mut e, &["SET", "str", "v"]);
    let wrong = Reply::err("WRONGTYPE Operation against a key holding the wrong kind of value");
    for cmd in ["SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER"] {
        assert_eq!(
            run(&mut e, &[cmd, "str", "-9223372036854775807"]),
            wrong,
            "{cmd}"
        );
        let key = &cmd[..1].to_ascii_lowercase();
        let r = run(&mut e, &[cmd, key, "-9223372036854775807"]);
        assert!(
            matches!(&r, Reply::Error(m) if m.starts_with("ERR count is too large")),
            "{cmd}: {r:?}"
        );
    }
}

#[test]
fn a_lua_scan_and_delete_loop_leaves_no_keys_and_cursors_survive_tonumber() {
    let mut e = engine(Some(5));
    let _ = e.connect();
    for i in 0..100 {
        run(&mut e, &["SET", &format!("key:{i}"), "v"]);
    }
    let script = r#"
        local cursor = 0
        local calls = 0
        repeat
            local r = redis.call('SCAN', cursor, 'COUNT', 7)
            if tostring(tonumber(r[1])) ~= r[1] then return 'inexact cursor ' .. r[1] end
            cursor = tonumber(r[1])
            for _, k in ipairs(r[2]) do redis.call('DEL', k) end
            calls = calls + 1
        until cursor == 0
        return calls
    "#;
    let r = run(&mut e, &["EVAL", script, "0"]);
    assert!(matches!(r, Reply::Int(n) if n > 1), "{r:?}");
    assert_eq!(run(&mut e, &["DBSIZE"]), Reply::Int(0));
}
