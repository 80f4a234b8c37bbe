//! Random command sequences over a small key space, sent step by step to redlab and to a
//! real redis-server; every reply must match. proptest shrinks a failure to the shortest
//! sequence that still differs.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use proptest::prelude::*;
use support::resp::{show, sorted, RawConn};

/// A command and whether its reply is unordered (compared sorted).
type Step = (Vec<String>, bool);

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("k1"),
        Just("k2"),
        Just("k3"),
        Just("{t}a"),
        Just("{t}b")
    ]
    .prop_map(String::from)
}

fn small_value() -> impl Strategy<Value = String> {
    prop_oneof![
        (-20i64..20).prop_map(|n| n.to_string()),
        "[a-c]{0,3}",
        Just("1.5".to_string()),
        Just("9223372036854775807".to_string()),
        Just("".to_string()),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let k = key;
    let v = small_value;
    let n = || -3i64..4;
    let cmd = |parts: Vec<String>| (parts, false);
    let unordered = |parts: Vec<String>| (parts, true);
    prop_oneof![
        (k(), v()).prop_map(move |(k, v)| cmd(vec!["SET".into(), k, v])),
        (k(), v()).prop_map(move |(k, v)| cmd(vec!["SET".into(), k, v, "NX".into()])),
        (k(), v()).prop_map(move |(k, v)| cmd(vec!["SET".into(), k, v, "XX".into(), "GET".into()])),
        k().prop_map(move |k| cmd(vec!["GET".into(), k])),
        k().prop_map(move |k| cmd(vec!["DEL".into(), k])),
        (k(), k()).prop_map(move |(a, b)| cmd(vec!["EXISTS".into(), a, b])),
        k().prop_map(move |k| cmd(vec!["INCR".into(), k])),
        (k(), n()).prop_map(move |(k, n)| cmd(vec!["INCRBY".into(), k, n.to_string()])),
        (k(), v()).prop_map(move |(k, v)| cmd(vec!["APPEND".into(), k, v])),
        k().prop_map(move |k| cmd(vec!["STRLEN".into(), k])),
        (k(), n(), n()).prop_map(move |(k, a, b)| cmd(vec![
            "GETRANGE".into(),
            k,
            a.to_string(),
            b.to_string()
        ])),
        k().prop_map(move |k| cmd(vec!["TYPE".into(), k])),
        (k(), k()).prop_map(move |(a, b)| cmd(vec!["RENAME".into(), a, b])),
        (k(), v(), v()).prop_map(move |(k, f, x)| cmd(vec!["HSET".into(), k, f, x])),
        (k(), v()).prop_map(move |(k, f)| cmd(vec!["HGET".into(), k, f])),
        (k(), v()).prop_map(move |(k, f)| cmd(vec!["HDEL".into(), k, f])),
        k().prop_map(move |k| cmd(vec!["HGETALL".into(), k])),
        (k(), v(), n()).prop_map(move |(k, f, n)| cmd(vec!["HINCRBY".into(), k, f, n.to_string()])),
        (k(), v()).prop_map(move |(k, m)| cmd(vec!["SADD".into(), k, m])),
        (k(), v()).prop_map(move |(k, m)| cmd(vec!["SREM".into(), k, m])),
        k().prop_map(move |k| cmd(vec!["SCARD".into(), k])),
        k().prop_map(move |k| unordered(vec!["SMEMBERS".into(), k])),
        (k(), v()).prop_map(move |(k, m)| cmd(vec!["SISMEMBER".into(), k, m])),
        (k(), v()).prop_map(move |(k, x)| cmd(vec!["LPUSH".into(), k, x])),
        (k(), v()).prop_map(move |(k, x)| cmd(vec!["RPUSH".into(), k, x])),
        k().prop_map(move |k| cmd(vec!["LPOP".into(), k])),
        (k(), n(), n()).prop_map(move |(k, a, b)| cmd(vec![
            "LRANGE".into(),
            k,
            a.to_string(),
            b.to_string()
        ])),
        k().prop_map(move |k| cmd(vec!["LLEN".into(), k])),
        (k(), n(), v()).prop_map(move |(k, s, m)| cmd(vec!["ZADD".into(), k, s.to_string(), m])),
        (k(), v()).prop_map(move |(k, m)| cmd(vec!["ZSCORE".into(), k, m])),
        (k(), v()).prop_map(move |(k, m)| cmd(vec!["ZINCRBY".into(), k, "1.5".into(), m])),
        k().prop_map(move |k| cmd(vec![
            "ZRANGE".into(),
            k,
            "0".into(),
            "-1".into(),
            "WITHSCORES".into()
        ])),
        (k(), v()).prop_map(move |(k, m)| cmd(vec!["ZREM".into(), k, m])),
        k().prop_map(move |k| cmd(vec!["EXPIRE".into(), k, "1000".into()])),
        k().prop_map(move |k| cmd(vec!["TTL".into(), k])),
        k().prop_map(move |k| cmd(vec!["PERSIST".into(), k])),
        k().prop_map(move |k| cmd(vec!["OBJECT".into(), "ENCODING".into(), k])),
    ]
}

fn run(addr: SocketAddr, steps: &[Step]) -> Vec<Vec<u8>> {
    let mut c = RawConn::connect(addr);
    c.send(&[b"FLUSHALL".to_vec()]);
    c.read_frame(Duration::from_secs(5));
    steps
        .iter()
        .map(|(args, unordered)| {
            c.send(
                &args
                    .iter()
                    .map(|a| a.as_bytes().to_vec())
                    .collect::<Vec<_>>(),
            );
            let frame = c.read_frame(Duration::from_secs(5)).unwrap_or_default();
            if *unordered {
                sorted(&frame)
            } else {
                frame
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_match_redis(steps in prop::collection::vec(step(), 1..40)) {
        let Some(pair) = support::server_pair("differential_prop") else { return Ok(()) };
        let theirs = run(pair.redis, &steps);
        let ours = run(pair.redlab, &steps);
        for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
            prop_assert_eq!(show(o), show(t), "step {}: {:?}", i, steps[i].0);
        }
    }
}
