//! Commands with hostile offsets and counts: each gets Redis's reply (compared with a real
//! redis-server when one is installed), and the server keeps serving another client. (That
//! the memory a huge offset costs is given back is checked in tests/memory_returns.rs, a
//! binary of its own: resident size is a whole-process figure.)

mod support;

use std::time::Duration;

use redlab_client::RealRedis;
use support::resp::RawConn;

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, Duration::from_secs(30))
}

/// Each line is a command; replies are compared with Redis's. Offsets stay under 64 MB
/// where Redis would really allocate (its limit is 512 MB), past the limits elsewhere.
/// Rows repeat the same edge numbers per command on purpose: each case spells out its
/// input in full, so a failure names the exact command.
const CASES: &[&[&str]] = &[
    &["SETRANGE", "s", "536870912", "x"],
    &["SETRANGE", "s", "536870911", "xy"],
    &["SETRANGE", "s", "9223372036854775807", "x"],
    &["SETRANGE", "s", "-1", "x"],
    &["SETRANGE", "s", "67108864", ""],
    &["SETRANGE", "s", "4294967296", "x"],
    &["EXISTS", "s"],
    &["SETRANGE", "s", "33554432", "x"],
    &["STRLEN", "s"],
    &[
        "GETRANGE",
        "s",
        "-9223372036854775808",
        "9223372036854775807",
    ],
    &["DEL", "s"],
    &["SETBIT", "b", "4294967296", "1"],
    &["SETBIT", "b", "-1", "1"],
    &["SETBIT", "b", "9223372036854775807", "1"],
    &["SETBIT", "b", "268435455", "1"],
    &["STRLEN", "b"],
    &["BITCOUNT", "b", "0", "9223372036854775807"],
    &[
        "BITPOS",
        "b",
        "1",
        "-9223372036854775808",
        "9223372036854775807",
    ],
    &["GETBIT", "b", "4294967295"],
    &["BITFIELD", "b", "SET", "u8", "4294967296", "1"],
    &["DEL", "b"],
    &["RPUSH", "l", "a", "b", "c"],
    &["LRANGE", "l", "0", "9223372036854775807"],
    &["LRANGE", "l", "-9223372036854775808", "9223372036854775807"],
    &["LRANGE", "l", "9223372036854775807", "-9223372036854775808"],
    &["LRANGE", "l", "0", "99999999999999999999"],
    &["LPOP", "l", "9223372036854775807"],
    &["RPUSH", "l", "a", "b", "c"],
    &["LTRIM", "l", "-9223372036854775808", "9223372036854775807"],
    &["LINDEX", "l", "-9223372036854775808"],
    &["LPOS", "l", "a", "RANK", "-9223372036854775808"],
    &[
        "LPOS",
        "l",
        "a",
        "COUNT",
        "9223372036854775807",
        "MAXLEN",
        "9223372036854775807",
    ],
    &["ZADD", "z", "1", "a", "2", "b"],
    &["ZRANGE", "z", "0", "9223372036854775807"],
    &[
        "ZRANGE",
        "z",
        "-9223372036854775808",
        "9223372036854775807",
        "WITHSCORES",
    ],
    &[
        "ZRANGE",
        "z",
        "-inf",
        "+inf",
        "BYSCORE",
        "LIMIT",
        "0",
        "9223372036854775807",
    ],
    &[
        "ZRANGE",
        "z",
        "-inf",
        "+inf",
        "BYSCORE",
        "LIMIT",
        "9223372036854775807",
        "-1",
    ],
    &[
        "ZRANGE",
        "z",
        "-",
        "+",
        "BYLEX",
        "LIMIT",
        "-9223372036854775808",
        "9223372036854775807",
    ],
    &["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "-1"],
    &["ZREVRANGE", "z", "9223372036854775807", "0"],
    &["ZPOPMIN", "z", "9223372036854775807"],
    &["ZADD", "z", "1", "a", "2", "b"],
    &["ZRANDMEMBER", "z", "9223372036854775807"],
    &["SADD", "set", "a"],
    &["SRANDMEMBER", "set", "9223372036854775807"],
    &["SPOP", "set", "9223372036854775807"],
    &["HSET", "h", "f", "v"],
    &["HRANDFIELD", "h", "9223372036854775807"],
    &["LPUSH", "big", "x"],
    &["SCAN", "0", "MATCH", "big", "COUNT", "9223372036854775807"],
    &["SCAN", "0", "COUNT", "0"],
    &["FLUSHALL"],
];

fn run_all(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = RawConn::connect(addr);
    CASES.iter().map(|args| cmd(&mut c, args)).collect()
}

#[test]
fn huge_offsets_and_counts_get_redis_replies() {
    let server = redlab::Server::start();
    let ours = run_all(server.addr());
    let mut bystander = RawConn::connect(server.addr());
    assert_eq!(cmd(&mut bystander, &["PING"]), "+PONG\\r\\n");
    assert_eq!(
        ours[0],
        "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\\r\\n"
    );
    assert_eq!(
        ours[11],
        "-ERR bit offset is not an integer or out of range\\r\\n"
    );
    if let Some(real) = RealRedis::start_or_skip("hostile_commands") {
        let theirs = run_all(real.addr());
        let diffs: Vec<String> = CASES
            .iter()
            .zip(ours.iter().zip(&theirs))
            .filter(|(_, (a, b))| a != b)
            .map(|(args, (a, b))| format!("{args:?}\n  redlab: {a}\n  redis:  {b}"))
            .collect();
        assert!(
            diffs.is_empty(),
            "replies differ from Redis:\n{}",
            diffs.join("\n")
        );
    }
}
