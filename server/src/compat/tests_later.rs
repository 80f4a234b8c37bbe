//! What arrived after Redis 7.2 for the profiles without a reference server: COMMAND DOCS of
//! ZRANK/ZREVRANK from 7.2, CLIENT HELP's and CLIENT KILL's MAXAGE from 7.4, BITOP's DIFF,
//! DIFF1, ANDOR and ONE from 8.2. Each checks that the older profiles answer as before.

use std::time::Duration;

use super::*;
use crate::test_support::{
    command_docs as docs, compat_refused, engine_as, map_field as field, run,
};
use crate::{Engine, Reply};

fn engine(p: Profile) -> Engine {
    engine_as(p).0
}

#[test]
fn zrank_docs_show_withscore_from_72() {
    let history = Reply::Set(vec![Reply::Array(vec![
        Reply::bulk("7.2.0"),
        Reply::bulk("Added the optional `WITHSCORE` argument."),
    ])]);
    for name in ["zrank", "zrevrank"] {
        // valkey-server 8.1's entry (tests/conformance/command.txt compares it with the real
        // server) is Redis 7.2's.
        let valkey = docs(Profile::Valkey81, name);
        assert_eq!(field(&valkey, "history"), Some(&history), "{name}");
        for p in [
            Profile::Redis72,
            Profile::Redis74,
            Profile::Redis80,
            Profile::Redis82,
            Profile::Redis84,
            Profile::Valkey72,
        ] {
            let d = docs(p, name);
            assert_eq!(d, valkey, "{p} {name}");
            let Some(Reply::Array(arguments)) = field(&d, "arguments") else {
                panic!("{p}: {d:?}")
            };
            let last = arguments.last().expect("arguments");
            assert_eq!(field(last, "token"), Some(&Reply::bulk("WITHSCORE")), "{p}");
        }
        let old = docs(Profile::Redis70, name);
        assert_eq!(field(&old, "history"), None, "{name}");
        let Some(Reply::Array(arguments)) = field(&old, "arguments") else {
            panic!("{old:?}")
        };
        assert_eq!(arguments.len(), 2, "{name}");
    }
}

/// CLIENT HELP's lines under `p`.
fn client_help(p: Profile) -> Vec<String> {
    match run(&mut engine(p), &["CLIENT", "HELP"]) {
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
fn client_help_lists_kill_id_and_maxage_from_74() {
    let added = [
        "    * ID <client-id>",
        "      Kill connections by client id.",
        "    * MAXAGE <maxage>",
        "      Kill connections older than the specified age.",
    ];
    let r72 = client_help(Profile::Redis72);
    let skipme = r72
        .iter()
        .position(|l| l == "      Skip killing current connection (default: yes).")
        .expect("SKIPME's line");
    for p in [
        Profile::Redis74,
        Profile::Redis80,
        Profile::Redis82,
        Profile::Redis84,
    ] {
        let lines = client_help(p);
        // Redis 7.4's table: 55 lines, then HELP's two.
        assert_eq!(lines.len(), 1 + 55 + 2, "{p}");
        assert_eq!(&lines[..=skipme], &r72[..=skipme], "{p}");
        assert_eq!(&lines[skipme + 1..skipme + 5], &added, "{p}");
        assert_eq!(&lines[skipme + 5..], &r72[skipme + 1..], "{p}");
    }
    for p in [Profile::Redis70, Profile::Redis72, Profile::Valkey72] {
        assert!(!client_help(p).iter().any(|l| l.contains("MAXAGE")), "{p}");
    }
}

#[test]
fn client_kill_maxage_from_74() {
    for p in [Profile::Redis74, Profile::Redis84] {
        let (mut e, clock) = engine_as(p);
        let me = e.connect();
        let old = e.connect();
        clock.advance(Duration::from_secs(10));
        let young = e.connect();
        let kill = |e: &mut Engine, age: &str| e.execute(me, &["CLIENT", "KILL", "MAXAGE", age]);
        assert_eq!(
            kill(&mut e, "0"),
            Reply::err("ERR maxage should be greater than 0")
        );
        assert_eq!(
            kill(&mut e, "x"),
            Reply::err("ERR maxage is not an integer or out of range")
        );
        assert_eq!(kill(&mut e, "11"), Reply::Int(0), "{p}");
        // The caller is as old as `old`, and skipped (SKIPME yes by default).
        assert_eq!(kill(&mut e, "10"), Reply::Int(1), "{p}");
        assert!(!e.sessions.contains_key(&old), "{p}");
        assert!(
            e.sessions.contains_key(&me) && e.sessions.contains_key(&young),
            "{p}"
        );
    }
    let mut e = engine(Profile::Redis72);
    assert_eq!(
        run(&mut e, &["CLIENT", "KILL", "MAXAGE", "10"]),
        Reply::err("ERR syntax error")
    );
    let refused = compat_refused(&e);
    assert_eq!(refused, ["client kill MAXAGE"]);
}

/// BITOP `op` of the sources (byte strings) as `p` answers it: the reply and the result.
fn bitop(p: Profile, op: &str, sources: &[&[u8]]) -> (Reply, Option<Vec<u8>>) {
    let mut e = engine(p);
    let mut line: Vec<Vec<u8>> = vec![b"BITOP".to_vec(), op.into(), b"dest".to_vec()];
    for (i, s) in sources.iter().enumerate() {
        let key = format!("src{i}").into_bytes();
        if !s.is_empty() {
            e.execute(1, &[b"SET".as_slice(), &key, s]);
        }
        line.push(key);
    }
    let reply = e.execute(1, &line);
    let out = match e.execute(1, &["GET", "dest"]) {
        Reply::Bulk(b) => Some(b.to_vec()),
        _ => None,
    };
    (reply, out)
}

/// An operation, its sources, and the result expected.
type BitopCase<'a> = (&'a str, &'a [&'a [u8]], &'a [u8]);

#[test]
fn bitop_diff_diff1_andor_one_from_82() {
    // One-byte sources, a longer second source, and a missing one (empty), which Redis reads
    // as zero bytes.
    let a: &[u8] = &[0b1101_1000];
    let b: &[u8] = &[0b1100_0001, 0xff];
    let c: &[u8] = &[0b0101_1100];
    for p in [Profile::Redis82, Profile::Redis84] {
        let cases: [BitopCase; 9] = [
            // A & !(B | C)
            ("DIFF", &[a, b, c], &[0, 0]),
            ("diff", &[a, b], &[0b0001_1000, 0]),
            // !A & (B | C)
            ("DIFF1", &[a, b, c], &[0b0000_0101, 0xff]),
            // A & (B | C)
            ("AndOr", &[a, b, c], &[0b1101_1000, 0]),
            // exactly one of A, B, C
            ("ONE", &[a, b, c], &[0b0000_0101, 0xff]),
            ("one", &[a], a),
            ("ONE", &[a, a], &[0]),
            ("ONE", &[a, b], &[0b0001_1001, 0xff]),
            // A missing first source is empty: DIFF1 of nothing and B is B.
            ("DIFF1", &[b"", b], b),
        ];
        for (op, sources, want) in cases {
            let (reply, out) = bitop(p, op, sources);
            assert_eq!(reply, Reply::Int(want.len() as i64), "{p} {op} {sources:?}");
            assert_eq!(out.as_deref(), Some(want), "{p} {op} {sources:?}");
        }
        for op in ["DIFF", "diff1", "ANDOR"] {
            let want = format!(
                "ERR BITOP {} must be called with at least two source keys.",
                op.to_ascii_uppercase()
            );
            assert_eq!(bitop(p, op, &[a]).0, Reply::err(&want), "{p}");
        }
        // Every source empty: nothing stored, 0, as for the older operations.
        assert_eq!(bitop(p, "ANDOR", &[b"", b""]), (Reply::Int(0), None));
    }
    for p in [Profile::Redis70, Profile::Redis80, Profile::Valkey81] {
        let mut e = engine(p);
        for op in ["DIFF", "DIFF1", "ANDOR", "ONE"] {
            assert_eq!(
                run(&mut e, &["BITOP", op, "d", "a", "b"]),
                Reply::err("ERR syntax error"),
                "{p} {op}"
            );
        }
        let refused = compat_refused(&e);
        assert_eq!(
            refused,
            ["bitop DIFF", "bitop DIFF1", "bitop ANDOR", "bitop ONE"],
            "{p}"
        );
    }
}

#[test]
fn bgsave_cancel_only_under_valkey_81() {
    // No save is ever in progress: Valkey 8.1 answers so; every other profile has no CANCEL.
    let mut e = engine(Profile::Valkey81);
    assert_eq!(
        run(&mut e, &["BGSAVE", "CANCEL"]),
        Reply::err("ERR Background saving is currently not in progress or scheduled")
    );
    assert_eq!(
        run(&mut e, &["BGSAVE", "CANCEL", "x"]),
        Reply::err("ERR syntax error")
    );
    for p in [Profile::Redis84, Profile::Valkey72] {
        let mut e = engine(p);
        assert_eq!(
            run(&mut e, &["BGSAVE", "CANCEL"]),
            Reply::err("ERR syntax error"),
            "{p}"
        );
        let refused = compat_refused(&e);
        assert_eq!(refused, ["bgsave CANCEL"], "{p}");
    }
}

#[test]
fn xread_plus_reads_the_last_entry_from_74() {
    let entry = |id: &str, v: &str| {
        Reply::Array(vec![
            Reply::bulk(id),
            Reply::Array(vec![Reply::bulk("f"), Reply::bulk(v)]),
        ])
    };
    let mut e = engine(Profile::Redis74);
    run(&mut e, &["XADD", "s", "1-0", "f", "a"]);
    run(&mut e, &["XADD", "s", "2-0", "f", "b"]);
    assert_eq!(
        run(&mut e, &["XREAD", "COUNT", "5", "STREAMS", "s", "+"]),
        Reply::Array(vec![Reply::Array(vec![
            Reply::bulk("s"),
            Reply::Array(vec![entry("2-0", "b")]),
        ])])
    );
    run(&mut e, &["XGROUP", "CREATE", "s", "g", "0"]);
    let meaningless = run(
        &mut e,
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+"],
    );
    assert!(
        matches!(&meaningless, Reply::Error(t) if t.starts_with("ERR The + ID is meaningless")),
        "{meaningless:?}"
    );
    let mut e = engine(Profile::Redis72);
    run(&mut e, &["XADD", "s", "1-0", "f", "a"]);
    assert_eq!(
        run(&mut e, &["XREAD", "STREAMS", "s", "+"]),
        Reply::err("ERR Invalid stream ID specified as stream command argument")
    );
    let refused = compat_refused(&e);
    assert_eq!(refused, ["xread + ID"]);
}
