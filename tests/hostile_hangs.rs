//! No single command hangs the server: pathological glob patterns, looping FUNCTION LOAD
//! code, tiny and huge blocking timeouts, DEBUG SLEEP with absurd values, and a million keys
//! expiring at once. Replies are compared with a real redis-server where Redis answers; every
//! read has a bounded timeout, so a hang fails the test instead of stalling it.

mod support;

use std::time::{Duration, Instant};

use redlab::Clock;
use redlab_client::RealRedis;
use support::resp::{show, sorted, RawConn};

/// Longer than any honest answer here, short enough that a hang fails the test quickly.
const PATIENCE: Duration = Duration::from_secs(10);

fn raw(c: &mut RawConn, args: &[&[u8]]) -> Vec<u8> {
    c.send(&args.iter().map(|a| a.to_vec()).collect::<Vec<_>>());
    c.read_frame(PATIENCE).unwrap_or_else(|| {
        panic!(
            "no answer within {PATIENCE:?} to {:?}",
            show(&args.concat())
        )
    })
}

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    show(&raw(c, &args))
}

/// Keys for the glob edge cases (bytes beyond ASCII included, for the signed-char ranges).
const EDGE_KEYS: &[&[u8]] = &[
    b"a", b"b", b"ab", b"abc", b"]", b"^", b"_", b"`", b"-", b"\\", b"[", b"a\\", b"x", b"z", b"A",
    b"\x80", b"\xff", b"a-", b"[a", b"*", b"?", b"",
];

/// Patterns whose KEYS answers are compared with Redis's.
const EDGE_PATTERNS: &[&[u8]] = &[
    b"**",
    b"?",
    b"[",
    b"[^",
    b"[]",
    b"[^]",
    b"[a-]",
    b"[z-a]",
    b"[a-c",
    b"\\",
    b"a\\",
    b"[\\]",
    b"[\\",
    b"[a\\-z]",
    b"[-a]",
    b"[a-\xff]",
    b"[\x80-\xff]",
    b"[^a]",
    b"?*",
    b"*?",
    b"[]]",
    b"[]a]",
    b"[!a]",
    b"\\*",
    b"[*]",
    b"a[",
    b"a[b",
    b"[a-]]",
];

/// Runs the glob catalogue; every reply is returned (sorted where Redis's order is a hash's).
fn glob_catalogue(addr: std::net::SocketAddr) -> Vec<(String, String)> {
    let mut c = RawConn::connect(addr);
    let mut out = Vec::new();
    let mut run = |c: &mut RawConn, label: String, args: &[&[u8]], sort: bool| {
        let frame = raw(c, args);
        out.push((label, show(&if sort { sorted(&frame) } else { frame })));
    };
    run(&mut c, "FLUSHALL".into(), &[b"FLUSHALL"], false);
    for k in EDGE_KEYS {
        run(
            &mut c,
            format!("SET {}", show(k)),
            &[b"SET", k, b"1"],
            false,
        );
    }
    for p in EDGE_PATTERNS {
        run(&mut c, format!("KEYS {}", show(p)), &[b"KEYS", p], true);
    }
    run(&mut c, "FLUSHALL".into(), &[b"FLUSHALL"], false);
    // Exponential for a naive backtracker: 20 groups of `a*` before a `b` that is missing.
    let many_a = "a".repeat(60);
    let hostile = format!("{}b", "a*".repeat(20));
    let star_q = format!("{}x", "*?".repeat(12));
    run(
        &mut c,
        "SET many_a".into(),
        &[b"SET", many_a.as_bytes(), b"1"],
        false,
    );
    run(
        &mut c,
        "KEYS hostile".into(),
        &[b"KEYS", hostile.as_bytes()],
        false,
    );
    run(
        &mut c,
        "SCAN hostile".into(),
        &[
            b"SCAN",
            b"0",
            b"MATCH",
            hostile.as_bytes(),
            b"COUNT",
            b"1000",
        ],
        false,
    );
    run(
        &mut c,
        "HSET".into(),
        &[b"HSET", b"h", many_a.as_bytes(), b"v"],
        false,
    );
    run(
        &mut c,
        "HSCAN hostile".into(),
        &[b"HSCAN", b"h", b"0", b"MATCH", hostile.as_bytes()],
        false,
    );
    run(
        &mut c,
        "SADD".into(),
        &[b"SADD", b"s", many_a.as_bytes()],
        false,
    );
    run(
        &mut c,
        "SSCAN hostile".into(),
        &[b"SSCAN", b"s", b"0", b"MATCH", hostile.as_bytes()],
        false,
    );
    run(
        &mut c,
        "ZADD".into(),
        &[b"ZADD", b"zz", b"1", many_a.as_bytes()],
        false,
    );
    run(
        &mut c,
        "ZSCAN hostile".into(),
        &[b"ZSCAN", b"zz", b"0", b"MATCH", hostile.as_bytes()],
        false,
    );
    run(
        &mut c,
        "PUBSUB CHANNELS".into(),
        &[b"PUBSUB", b"CHANNELS", hostile.as_bytes()],
        false,
    );
    run(
        &mut c,
        "COMMAND LIST".into(),
        &[
            b"COMMAND",
            b"LIST",
            b"FILTERBY",
            b"PATTERN",
            hostile.as_bytes(),
        ],
        false,
    );
    run(
        &mut c,
        "FUNCTION LIST".into(),
        &[b"FUNCTION", b"LIST", b"LIBRARYNAME", hostile.as_bytes()],
        false,
    );
    let policy = "m*a*x*m*e*m*o*r*y*-polic[x-z]";
    run(
        &mut c,
        "CONFIG GET policy".into(),
        &[b"CONFIG", b"GET", policy.as_bytes()],
        false,
    );
    // Redis gives up after 1000 nested `*` groups (a final `*` does not count).
    let key = "a".repeat(1002);
    run(
        &mut c,
        "SET long".into(),
        &[b"SET", key.as_bytes(), b"1"],
        false,
    );
    for n in [1000, 1001] {
        let p = format!("{}a", "a*".repeat(n));
        run(
            &mut c,
            format!("KEYS {n} groups"),
            &[b"KEYS", p.as_bytes()],
            false,
        );
    }
    run(
        &mut c,
        "KEYS 1001 groups, final star".into(),
        &[b"KEYS", "a*".repeat(1001).as_bytes()],
        false,
    );
    // A star-question pattern against every CONFIG parameter: answered at once (which
    // parameters exist differs from Redis, so only the answer's arrival is checked).
    let frame = raw(&mut c, &[b"CONFIG", b"GET", star_q.as_bytes()]);
    assert_eq!(frame[0], b'*', "CONFIG GET {star_q}: {}", show(&frame));
    run(&mut c, "FLUSHALL".into(), &[b"FLUSHALL"], false);
    out
}

#[test]
fn glob_patterns_answer_at_once_with_redis_semantics() {
    let server = redlab::Server::start();
    let ours = glob_catalogue(server.addr());
    let find = |label: &str| {
        ours.iter()
            .find(|(l, _)| l == label)
            .map(|(_, r)| r.clone())
            .expect(label)
    };
    assert_eq!(find("KEYS hostile"), "*0\\r\\n");
    assert_eq!(
        find("KEYS **"),
        find("KEYS ?*"),
        "`**` does not match the empty key"
    );
    assert_eq!(find("KEYS 1001 groups"), "*0\\r\\n");
    if let Some(real) = RealRedis::start_or_skip("hostile_hangs") {
        let theirs = glob_catalogue(real.addr());
        let diffs: Vec<String> = ours
            .iter()
            .zip(&theirs)
            .filter(|(a, b)| a != b)
            .map(|((l, a), (_, b))| format!("{l}\n  redlab: {a}\n  redis:  {b}"))
            .collect();
        assert!(
            diffs.is_empty(),
            "replies differ from Redis:\n{}",
            diffs.join("\n")
        );
    }
}

/// PUBLISH checks every pattern subscription: a thousand hostile ones against a long channel
/// name must not make it slow, and the count of receivers is Redis's.
fn publish_with_hostile_patterns(addr: std::net::SocketAddr) -> Vec<String> {
    let mut sub = RawConn::connect(addr);
    let mut patterns: Vec<Vec<u8>> = vec![b"PSUBSCRIBE".to_vec()];
    for i in 0..1000 {
        patterns.push(format!("{}{}b", "a*".repeat(20), i).into_bytes());
    }
    patterns.push(b"a*a*a*".to_vec());
    sub.send(&patterns);
    for _ in 0..1001 {
        sub.read_frame(PATIENCE).expect("psubscribe confirmation");
    }
    let mut c = RawConn::connect(addr);
    let channel = "a".repeat(200);
    let mut out = vec![cmd(&mut c, &["PUBLISH", &channel, "m"])];
    out.push(cmd(&mut c, &["PUBSUB", "NUMPAT"]));
    out.push(show(
        &sub.read_frame(PATIENCE)
            .expect("the matching pattern's pmessage"),
    ));
    out
}

#[test]
fn publish_with_many_hostile_pattern_subscriptions_is_prompt() {
    let server = redlab::Server::start();
    let ours = publish_with_hostile_patterns(server.addr());
    assert_eq!(ours[0], ":1\\r\\n");
    if let Some(real) = RealRedis::start_or_skip("hostile_hangs") {
        assert_eq!(ours, publish_with_hostile_patterns(real.addr()));
    }
}

/// Redis's CRC-64 (Jones, reflected), for a FUNCTION RESTORE payload built by hand.
fn crc64(data: &[u8]) -> u64 {
    let mut crc = 0u64;
    for &b in data {
        crc ^= b as u64;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x95ac_9329_ac4b_c9b5
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A FUNCTION DUMP payload of one library (RDB function opcode, length, code, RDB version 10,
/// CRC); the code is short enough for the one-byte length form.
fn dump_of(code: &[u8]) -> Vec<u8> {
    assert!(code.len() < 64);
    let mut out = vec![245u8, code.len() as u8];
    out.extend_from_slice(code);
    out.extend_from_slice(&10u16.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn looping_loads(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = RawConn::connect(addr);
    let mut out = vec![cmd(&mut c, &["FUNCTION", "FLUSH"])];
    out.push(cmd(
        &mut c,
        &["FUNCTION", "LOAD", "#!lua name=x\n while true do end"],
    ));
    let registers_then_loops =
        "#!lua name=y\nredis.register_function('f', function() return 1 end) while 1 do end";
    out.push(cmd(&mut c, &["FUNCTION", "LOAD", registers_then_loops]));
    out.push(cmd(&mut c, &["FUNCTION", "LIST"]));
    out.push(cmd(&mut c, &["FCALL", "f", "0"]));
    let mut other = RawConn::connect(addr);
    out.push(cmd(&mut other, &["PING"]));
    out
}

#[test]
fn a_looping_library_is_stopped_by_the_load_timeout() {
    // A frozen manual clock: the load timeout runs on real time all the same.
    let server = redlab::Server::builder()
        .clock(Clock::manual(1_700_000_000_000))
        .start();
    let ours = looping_loads(server.addr());
    let timeout = "-ERR Error registering functions: ERR FUNCTION LOAD timeout\\r\\n";
    assert_eq!(ours[1], timeout);
    assert_eq!(ours[2], timeout);
    assert_eq!(ours[3], "*0\\r\\n", "nothing registered");
    if let Some(real) = RealRedis::start_or_skip("hostile_hangs") {
        assert_eq!(ours, looping_loads(real.addr()));
    }
    // Redis 7.0.15 runs restored code with no timeout at all (it hangs for good here); redlab
    // applies the load timeout to FUNCTION RESTORE too (see DIFFERENCES.md).
    let mut c = RawConn::connect(server.addr());
    let restore = raw(
        &mut c,
        &[
            b"FUNCTION",
            b"RESTORE",
            &dump_of(b"#!lua name=w\nwhile true do end"),
        ],
    );
    assert_eq!(show(&restore), timeout);
    assert_eq!(cmd(&mut c, &["FUNCTION", "LIST"]), "*0\\r\\n");
}

/// Timeouts each blocking command gets, with a key that stays empty: tiny ones time out at
/// once, negative and out-of-range ones are errors, forever is not tried.
const TIMEOUTS: &[&str] = &[
    "1e-10",
    "1e-300",
    "0.0001",
    "0.0009999",
    "-0.0010001",
    "-1",
    "1e300",
    "9223372036854775807",
    "inf",
    "-inf",
    "nan",
    "1e4932",
    "1e5000",
    "9223372036854775.808",
    "abc",
];

fn blocking_timeouts(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = RawConn::connect(addr);
    let mut out = Vec::new();
    for t in TIMEOUTS {
        for args in [
            vec!["BLPOP", "q", t],
            vec!["BRPOP", "q", t],
            vec!["BLMOVE", "q", "d", "LEFT", "RIGHT", t],
            vec!["BRPOPLPUSH", "q", "d", t],
            vec!["BLMPOP", t, "1", "q", "LEFT"],
            vec!["BZPOPMIN", "z", t],
            vec!["BZPOPMAX", "z", t],
            vec!["BZMPOP", t, "1", "z", "MIN"],
        ] {
            out.push(format!("{args:?} -> {}", cmd(&mut c, &args)));
        }
    }
    out
}

#[test]
fn tiny_timeouts_time_out_and_huge_ones_get_redis_errors() {
    let server = redlab::Server::start();
    let ours = blocking_timeouts(server.addr());
    assert!(
        ours.contains(&r#"["BLPOP", "q", "1e-10"] -> *-1\r\n"#.to_string()),
        "{ours:?}"
    );
    if let Some(real) = RealRedis::start_or_skip("hostile_hangs") {
        let theirs = blocking_timeouts(real.addr());
        let diffs: Vec<String> = ours
            .iter()
            .zip(&theirs)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("redlab {a}\n redis {b}"))
            .collect();
        assert!(
            diffs.is_empty(),
            "replies differ from Redis:\n{}",
            diffs.join("\n")
        );
    }
}

fn absurd_sleeps(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = RawConn::connect(addr);
    [
        "inf", "-inf", "nan", "-1", "1e300", "abc", "", "1e-300", "0.01",
    ]
    .iter()
    .map(|v| cmd(&mut c, &["DEBUG", "SLEEP", v]))
    .collect()
}

#[test]
fn debug_sleep_with_absurd_values_returns_as_redis_does() {
    let server = redlab::Server::start();
    let ours = absurd_sleeps(server.addr());
    assert!(ours.iter().all(|r| r == "+OK\\r\\n"), "{ours:?}");
    if let Some(real) = RealRedis::start_or_skip("hostile_hangs") {
        assert_eq!(ours, absurd_sleeps(real.addr()));
    }
}

fn info_field(c: &mut RawConn, section: &str, field: &str) -> String {
    let info = cmd(c, &["INFO", section]);
    info.split("\\r\\n")
        .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
        .unwrap_or_default()
}

/// Fills `n` keys `k1..kn` expiring at the same instant, through scripts of 100k keys each.
fn fill_expiring(c: &mut RawConn, n: usize, px: u64) {
    let script = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('SET', 'k' .. i, 'v', 'PX', ARGV[3]) end";
    for start in (1..=n).step_by(100_000) {
        let end = (start + 99_999).min(n);
        let r = cmd(
            c,
            &[
                "EVAL",
                script,
                "0",
                &start.to_string(),
                &end.to_string(),
                &px.to_string(),
            ],
        );
        assert_eq!(r, "$-1\\r\\n");
    }
}

#[test]
fn a_million_keys_expiring_at_once_do_not_stall_other_clients() {
    let clock = Clock::manual(1_700_000_000_000);
    let server = redlab::Server::builder().clock(clock.clone()).start();
    let mut c = RawConn::connect(server.addr());
    const N: usize = 1_000_000;
    fill_expiring(&mut c, N, 1_000);
    assert_eq!(cmd(&mut c, &["DBSIZE"]), format!(":{N}\\r\\n"));
    let mut other = RawConn::connect(server.addr());
    clock.advance(Duration::from_secs(2));
    // Every key is past its deadline: invisible at once, whatever the purge has reached.
    let started = Instant::now();
    assert_eq!(cmd(&mut other, &["PING"]), "+PONG\\r\\n");
    let first_ping = started.elapsed();
    assert_eq!(cmd(&mut c, &["DBSIZE"]), ":0\\r\\n");
    assert_eq!(
        cmd(&mut c, &["EXISTS", "k1", "k500000", "k1000000"]),
        ":0\\r\\n"
    );
    assert_eq!(cmd(&mut c, &["KEYS", "k1*"]), "*0\\r\\n");
    let mut longest = first_ping;
    let (mut pings, mut over_10ms) = (0, 0);
    // The active cycle removes them all, a slice at a time; meanwhile PINGs are answered.
    let deadline = Instant::now() + Duration::from_secs(60);
    while info_field(&mut c, "stats", "expired_keys") != N.to_string() {
        assert!(
            Instant::now() < deadline,
            "expired_keys stuck at {}",
            info_field(&mut c, "stats", "expired_keys")
        );
        let t = Instant::now();
        assert_eq!(cmd(&mut other, &["PING"]), "+PONG\\r\\n");
        let took = t.elapsed();
        longest = longest.max(took);
        pings += 1;
        over_10ms += usize::from(took > Duration::from_millis(10));
    }
    assert_eq!(info_field(&mut c, "keyspace", "db0"), "");
    eprintln!(
        "1M keys expiring at once: first PING after {first_ping:?}, then {pings} PINGs during the purge, \
         {over_10ms} over 10 ms, longest {longest:?}"
    );
}

#[test]
fn mass_expiry_notifies_each_key_once_even_when_lookups_race_the_purge() {
    let clock = Clock::manual(1_700_000_000_000);
    let server = redlab::Server::builder().clock(clock.clone()).start();
    let mut c = RawConn::connect(server.addr());
    assert_eq!(
        cmd(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        "+OK\\r\\n"
    );
    const N: usize = 30_000;
    fill_expiring(&mut c, N, 1_000);
    let mut sub = RawConn::connect(server.addr());
    cmd(&mut sub, &["SUBSCRIBE", "__keyevent@0__:expired"]);
    clock.advance(Duration::from_secs(2));
    // Lookups of keys the purge has not reached yet expire them lazily, in between.
    for i in (1..=N).rev().step_by(997) {
        assert_eq!(cmd(&mut c, &["GET", &format!("k{i}")]), "$-1\\r\\n");
    }
    let mut seen = std::collections::HashSet::new();
    while seen.len() < N {
        let frame = sub
            .read_frame(PATIENCE)
            .unwrap_or_else(|| panic!("only {} of {N} expired events", seen.len()));
        let text = show(&frame);
        let key = text.rsplit("\\r\\n").nth(1).expect("key").to_string();
        assert!(seen.insert(key.clone()), "{key} expired twice");
    }
    assert_eq!(cmd(&mut c, &["PING"]), "+PONG\\r\\n");
    assert!(
        sub.read_frame(Duration::from_millis(300)).is_none(),
        "an event beyond the {N} keys"
    );
}
