//! Redis 8.2's stream commands (XDELEX, XACKDEL, XADD/XTRIM's KEEPREF, DELREF and ACKED) and
//! 8.4's MSETEX, for the profiles without a reference server: written from the published
//! command reference and Redis's own tests of these commands. Each also checks that the
//! older profiles answer as those versions do and record the refusal.

use std::time::Duration;

use super::*;
use crate::test_support::{
    command_docs as docs, compat_refused as refused, engine_as, map_field as field, put_list, run,
};
use crate::{Engine, Reply};

fn engine(p: Profile) -> Engine {
    engine_as(p).0
}

fn ints(v: &[i64]) -> Reply {
    Reply::Array(v.iter().map(|&n| Reply::Int(n)).collect())
}

/// `s` with entries 1-0 .. n-0 (field f, value v).
fn stream(e: &mut Engine, n: u64) {
    run(e, &["DEL", "s"]);
    for i in 1..=n {
        let id = format!("{i}-0");
        run(e, &["XADD", "s", &id, "f", "v"]);
    }
}

/// How many entries group `g` of `s` has pending.
fn pending(e: &mut Engine, g: &str) -> Reply {
    match run(e, &["XPENDING", "s", g]) {
        Reply::Array(v) => v[0].clone(),
        other => other,
    }
}

const LATER: [Profile; 2] = [Profile::Redis82, Profile::Redis84];
const OLDER: [Profile; 4] = [
    Profile::Redis70,
    Profile::Redis80,
    Profile::Valkey72,
    Profile::Valkey81,
];

#[test]
fn xdelex_policies() {
    for p in LATER {
        let mut e = engine(p);
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "IDS", "2", "1-0", "2-0"]),
            ints(&[-1, -1])
        );
        stream(&mut e, 5);
        // No group: KEEPREF (the default) is XDEL per ID.
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "IDS", "2", "1-0", "9-0"]),
            ints(&[1, -1]),
            "{p}"
        );
        run(&mut e, &["XGROUP", "CREATE", "s", "g1", "0"]);
        run(&mut e, &["XGROUP", "CREATE", "s", "g2", "0"]);
        run(
            &mut e,
            &[
                "XREADGROUP",
                "GROUP",
                "g1",
                "c",
                "COUNT",
                "2",
                "STREAMS",
                "s",
                ">",
            ],
        );
        // g1 has 2-0 and 3-0 pending, g2 has read nothing: ACKED keeps everything.
        assert_eq!(
            run(
                &mut e,
                &["xdelex", "s", "acked", "IDS", "3", "2-0", "4-0", "8-0"]
            ),
            ints(&[2, 2, -1])
        );
        run(
            &mut e,
            &["XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", ">"],
        );
        run(&mut e, &["XACK", "s", "g2", "2-0", "3-0", "4-0", "5-0"]);
        // 4-0: delivered to g2 and acknowledged, not yet delivered to g1.
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "ACKED", "IDS", "1", "4-0"]),
            ints(&[2])
        );
        run(&mut e, &["XACK", "s", "g1", "3-0"]);
        // 3-0 now referenced by nobody; 2-0 is still pending in g1.
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "IDS", "2", "3-0", "2-0", "ACKED"]),
            ints(&[1, 2])
        );
        // KEEPREF deletes 2-0 and leaves g1's PEL alone; DELREF cleans it even though the
        // entry is gone.
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "KEEPREF", "IDS", "1", "2-0"]),
            ints(&[1])
        );
        assert_eq!(pending(&mut e, "g1"), Reply::Int(1));
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "DELREF", "IDS", "1", "2-0"]),
            ints(&[-1])
        );
        assert_eq!(pending(&mut e, "g1"), Reply::Int(0));
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(2));
        run(&mut e, &["SET", "str", "x"]);
        assert_eq!(
            run(&mut e, &["XDELEX", "str", "IDS", "1", "1-0"]),
            Reply::err(crate::errors::WRONGTYPE)
        );
    }
}

#[test]
fn xdelex_and_xackdel_argument_errors() {
    let positive = Reply::err("ERR Number of IDs must be a positive integer");
    let mismatch = Reply::err("ERR The `numids` parameter must match the number of arguments");
    let syntax = Reply::err("ERR syntax error");
    for p in LATER {
        let mut e = engine(p);
        stream(&mut e, 1);
        run(&mut e, &["XGROUP", "CREATE", "s", "g", "0"]);
        for head in [&["XDELEX", "s"][..], &["XACKDEL", "s", "g"][..]] {
            let line = |tail: &[&str]| -> Vec<String> {
                head.iter().chain(tail).map(|s| s.to_string()).collect()
            };
            let mut go = |tail: &[&str]| e.execute(1, &line(tail));
            assert_eq!(go(&["IDS", "abc", "1-1"]), positive, "{p}");
            assert_eq!(go(&["IDS", "0", "1-1"]), positive);
            assert_eq!(go(&["IDS", "-5", "1-1"]), positive);
            assert_eq!(go(&["IDS", "3", "1-1", "2-2"]), mismatch);
            assert_eq!(go(&["IDS", "1", "1-1", "2-2"]), syntax);
            assert_eq!(go(&["KEEPREF", "DELREF", "IDS", "1", "1-1"]), syntax);
            assert_eq!(go(&["ACKED", "IDS", "1", "1-1", "ACKED"]), syntax);
            assert_eq!(go(&["FOO", "IDS", "1", "1-1"]), syntax);
            assert_eq!(
                go(&["IDS", "1", "x"]),
                Reply::err(crate::errors::STREAM_INVALID_ID)
            );
        }
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "IDS", "1"]),
            Reply::err("ERR wrong number of arguments for 'xdelex' command")
        );
        assert_eq!(
            run(&mut e, &["XACKDEL", "s", "g", "IDS", "1"]),
            Reply::err("ERR wrong number of arguments for 'xackdel' command")
        );
    }
}

#[test]
fn xackdel_policies() {
    for p in LATER {
        let mut e = engine(p);
        let two = ["IDS", "2", "1-0", "2-0"];
        let xackdel = |e: &mut Engine, g: &str, policy: Option<&str>| {
            let mut line = vec!["XACKDEL", "s", g];
            line.extend(policy);
            line.extend(two);
            e.execute(1, &line)
        };
        // A missing key or group: -1 for every ID.
        assert_eq!(xackdel(&mut e, "g1", None), ints(&[-1, -1]));
        stream(&mut e, 2);
        assert_eq!(xackdel(&mut e, "g1", None), ints(&[-1, -1]));
        let both_read = |e: &mut Engine| {
            stream(e, 2);
            for g in ["g1", "g2"] {
                run(e, &["XGROUP", "CREATE", "s", g, "0"]);
                run(e, &["XREADGROUP", "GROUP", g, "c", "STREAMS", "s", ">"]);
            }
        };
        // DELREF: gone from the stream and from every PEL.
        both_read(&mut e);
        assert_eq!(xackdel(&mut e, "g1", Some("DELREF")), ints(&[1, 1]), "{p}");
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(0));
        assert_eq!(pending(&mut e, "g2"), Reply::Int(0));
        assert_eq!(xackdel(&mut e, "g2", Some("DELREF")), ints(&[-1, -1]));
        // ACKED: kept while the other group has them pending.
        both_read(&mut e);
        assert_eq!(xackdel(&mut e, "g1", Some("ACKED")), ints(&[2, 2]));
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(2));
        assert_eq!(pending(&mut e, "g1"), Reply::Int(0));
        assert_eq!(pending(&mut e, "g2"), Reply::Int(2));
        assert_eq!(xackdel(&mut e, "g2", Some("acked")), ints(&[1, 1]));
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(0));
        // KEEPREF: deleted, the other group's PEL kept; acknowledging there answers 1.
        both_read(&mut e);
        assert_eq!(xackdel(&mut e, "g1", Some("KEEPREF")), ints(&[1, 1]));
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(0));
        assert_eq!(pending(&mut e, "g2"), Reply::Int(2));
        assert_eq!(xackdel(&mut e, "g2", None), ints(&[1, 1]));
        assert_eq!(pending(&mut e, "g2"), Reply::Int(0));
    }
}

#[test]
fn xtrim_and_xadd_reference_options() {
    for p in LATER {
        let mut e = engine(p);
        // No group: every option trims as before.
        for opt in ["KEEPREF", "DELREF", "ACKED"] {
            stream(&mut e, 5);
            assert_eq!(
                run(&mut e, &["XTRIM", "s", "MAXLEN", "2", opt]),
                Reply::Int(3),
                "{p} {opt}"
            );
        }
        let grouped = |e: &mut Engine| {
            stream(e, 5);
            run(e, &["XGROUP", "CREATE", "s", "g", "0"]);
            run(
                e,
                &[
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    "c",
                    "COUNT",
                    "3",
                    "STREAMS",
                    "s",
                    ">",
                ],
            );
            run(e, &["XACK", "s", "g", "2-0"]);
        };
        // ACKED: 1-0 and 3-0 are pending, 4-0 and 5-0 not yet delivered; only 2-0 goes.
        grouped(&mut e);
        assert_eq!(
            run(&mut e, &["XTRIM", "s", "ACKED", "MAXLEN", "0"]),
            Reply::Int(1)
        );
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(4));
        // DELREF: the trimmed entries leave the PEL too.
        grouped(&mut e);
        assert_eq!(
            run(&mut e, &["XTRIM", "s", "MINID", "4", "DELREF"]),
            Reply::Int(3)
        );
        assert_eq!(pending(&mut e, "g"), Reply::Int(0));
        // KEEPREF keeps them pending.
        grouped(&mut e);
        assert_eq!(run(&mut e, &["XTRIM", "s", "MAXLEN", "2"]), Reply::Int(3));
        assert_eq!(pending(&mut e, "g"), Reply::Int(2));
        // An approximate trim with DELREF or ACKED removes nothing in 8.2 and 8.4.
        grouped(&mut e);
        assert_eq!(
            run(&mut e, &["XTRIM", "s", "MAXLEN", "~", "0", "DELREF"]),
            Reply::Int(0)
        );
        // XADD takes them before the ID.
        grouped(&mut e);
        assert_eq!(
            run(
                &mut e,
                &["XADD", "s", "MAXLEN", "2", "ACKED", "6-0", "f", "v"]
            ),
            Reply::bulk("6-0")
        );
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(5));
        assert_eq!(
            run(
                &mut e,
                &["XADD", "s", "DELREF", "MAXLEN", "2", "7-0", "f", "v"]
            ),
            Reply::bulk("7-0")
        );
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(2));
        assert_eq!(pending(&mut e, "g"), Reply::Int(0));
    }
}

#[test]
fn stream_commands_before_82() {
    for p in OLDER {
        let mut e = engine(p);
        stream(&mut e, 3);
        assert_eq!(
            run(&mut e, &["XDELEX", "s", "IDS", "1", "1-0"]),
            Reply::err(
                "ERR unknown command 'XDELEX', with args beginning with: 's' 'IDS' '1' '1-0' "
            ),
            "{p}"
        );
        assert!(matches!(
            run(&mut e, &["XACKDEL", "s", "g", "IDS", "1", "1-0"]),
            Reply::Error(m) if m.starts_with("ERR unknown command 'XACKDEL'")
        ));
        assert_eq!(
            run(&mut e, &["XTRIM", "s", "MAXLEN", "1", "ACKED"]),
            Reply::err("ERR syntax error")
        );
        assert_eq!(
            run(&mut e, &["XADD", "s", "KEEPREF", "*", "f", "v"]),
            Reply::err(crate::errors::STREAM_INVALID_ID)
        );
        assert_eq!(run(&mut e, &["XLEN", "s"]), Reply::Int(3));
        assert_eq!(
            refused(&e),
            ["xdelex", "xackdel", "xtrim ACKED", "xadd KEEPREF"],
            "{p}"
        );
    }
}

#[test]
fn msetex_from_84() {
    let (mut e, clock) = engine_as(Profile::Redis84);
    assert_eq!(
        run(&mut e, &["MSETEX", "2", "a", "1", "b", "2", "EX", "10"]),
        Reply::Int(1)
    );
    assert_eq!(run(&mut e, &["TTL", "b"]), Reply::Int(10));
    // XX needs every key, NX none of them.
    assert_eq!(
        run(
            &mut e,
            &["MSETEX", "2", "a", "3", "c", "4", "XX", "PX", "5000"]
        ),
        Reply::Int(0)
    );
    assert_eq!(run(&mut e, &["EXISTS", "c"]), Reply::Int(0));
    assert_eq!(
        run(&mut e, &["MSETEX", "2", "c", "3", "a", "4", "NX"]),
        Reply::Int(0)
    );
    assert_eq!(
        run(&mut e, &["msetex", "1", "a", "5", "keepttl", "xx"]),
        Reply::Int(1)
    );
    assert_eq!(run(&mut e, &["GET", "a"]), Reply::bulk("5"));
    assert_eq!(run(&mut e, &["TTL", "a"]), Reply::Int(10));
    // No expiration and no KEEPTTL: the TTL goes, as with MSET.
    assert_eq!(run(&mut e, &["MSETEX", "1", "a", "6"]), Reply::Int(1));
    assert_eq!(run(&mut e, &["TTL", "a"]), Reply::Int(-1));
    let at = (crate::test_support::T0 / 1000 + 100).to_string();
    assert_eq!(
        run(&mut e, &["MSETEX", "1", "d", "x", "EXAT", &at]),
        Reply::Int(1)
    );
    assert_eq!(run(&mut e, &["TTL", "d"]), Reply::Int(100));
    clock.advance(Duration::from_secs(11));
    assert_eq!(run(&mut e, &["EXISTS", "b"]), Reply::Int(0));
    let numkeys = Reply::err("ERR invalid numkeys value");
    let pairs = Reply::err("ERR wrong number of key-value pairs");
    let syntax = Reply::err("ERR syntax error");
    for (line, want) in [
        (&["MSETEX", "key1", "val1", "ex", "10"][..], &numkeys),
        (&["MSETEX", "0", "k", "v"], &numkeys),
        (&["MSETEX", "-1", "k", "v"], &numkeys),
        (&["MSETEX", "2147483648", "k", "v", "ex", "10"], &numkeys),
        (&["MSETEX", "2147483647", "k", "v", "ex", "10"], &pairs),
        (&["MSETEX", "2", "k", "v", "k2"], &pairs),
        (&["MSETEX", "1", "k", "v", "bad"], &syntax),
        (&["MSETEX", "1", "k", "v", "NX", "XX"], &syntax),
        (
            &["MSETEX", "1", "k", "v", "EX", "10", "PX", "5000"],
            &syntax,
        ),
        (&["MSETEX", "1", "k", "v", "KEEPTTL", "EX", "10"], &syntax),
        (&["MSETEX", "1", "k", "v", "GET"], &syntax),
        (&["MSETEX", "1", "k", "v", "IFEQ", "v"], &syntax),
    ] {
        assert_eq!(&run(&mut e, line), want, "{line:?}");
    }
    assert_eq!(
        run(&mut e, &["MSETEX", "1", "k", "v", "EX", "0"]),
        Reply::err("ERR invalid expire time in 'msetex' command")
    );
    assert_eq!(
        run(&mut e, &["MSETEX", "1", "k", "v"][..3]),
        Reply::err("ERR wrong number of arguments for 'msetex' command")
    );
    put_list(&mut e, "l");
    // MSETEX overwrites whatever is there, as MSET does.
    assert_eq!(run(&mut e, &["MSETEX", "1", "l", "v"]), Reply::Int(1));
    assert_eq!(run(&mut e, &["GET", "l"]), Reply::bulk("v"));
    // The keys are the pairs' first halves (the keynum key spec).
    assert_eq!(
        run(
            &mut e,
            &["COMMAND", "GETKEYS", "MSETEX", "2", "a", "1", "b", "2", "NX"]
        ),
        Reply::Array(vec![Reply::bulk("a"), Reply::bulk("b")])
    );
    for p in [Profile::Redis70, Profile::Redis82, Profile::Valkey81] {
        let mut e = engine(p);
        assert!(matches!(
            run(&mut e, &["MSETEX", "1", "a", "1"]),
            Reply::Error(m) if m.starts_with("ERR unknown command 'MSETEX'")
        ));
        assert_eq!(refused(&e), ["msetex"], "{p}");
    }
}

/// COMMAND INFO `name`'s entry under `p`.
fn info(p: Profile, name: &str) -> Reply {
    match run(&mut engine(p), &["COMMAND", "INFO", name]) {
        Reply::Array(mut v) => v.remove(0),
        other => panic!("{other:?}"),
    }
}

fn set(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| Reply::status(s)).collect())
}

#[test]
fn command_info_of_the_82_and_84_commands() {
    let xdelex = info(Profile::Redis82, "xdelex");
    let Reply::Array(f) = &xdelex else {
        panic!("{xdelex:?}")
    };
    assert_eq!(f[0], Reply::bulk("xdelex"));
    assert_eq!(f[1], Reply::Int(-5));
    assert_eq!(f[2], set(&["write", "fast"]));
    assert_eq!(&f[3..6], &[Reply::Int(1), Reply::Int(1), Reply::Int(1)]);
    assert_eq!(f[6], set(&["@write", "@stream", "@fast"]));
    let msetex = info(Profile::Redis84, "msetex");
    let Reply::Array(f) = &msetex else {
        panic!("{msetex:?}")
    };
    assert_eq!(f[1], Reply::Int(-4));
    assert_eq!(f[2], set(&["write", "denyoom", "movablekeys"]));
    assert_eq!(&f[3..6], &[Reply::Int(0), Reply::Int(0), Reply::Int(0)]);
    assert_eq!(f[6], set(&["@write", "@string", "@slow"]));
    // The older profiles do not know them.
    assert_eq!(
        run(
            &mut engine(Profile::Redis80),
            &["COMMAND", "INFO", "xdelex"]
        ),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(
        run(
            &mut engine(Profile::Redis82),
            &["COMMAND", "INFO", "msetex"]
        ),
        Reply::Array(vec![Reply::Nil])
    );
}

/// BITOP's operations as COMMAND DOCS lists them, (token, since) each; None where the
/// operation is one string argument (Redis 7.0's docs).
fn bitop_operations(p: Profile) -> Option<Vec<(Reply, Option<Reply>)>> {
    let d = docs(p, "bitop");
    let Some(Reply::Array(arguments)) = field(&d, "arguments") else {
        panic!("{d:?}")
    };
    let Reply::Array(ops) = field(&arguments[0], "arguments")? else {
        panic!("{arguments:?}")
    };
    Some(
        ops.iter()
            .map(|op| {
                (
                    field(op, "token").cloned().expect("a token"),
                    field(op, "since").cloned(),
                )
            })
            .collect(),
    )
}

#[test]
fn bitop_docs_list_the_82_operations() {
    let tokens = |ops: &[(Reply, Option<Reply>)]| -> Vec<Reply> {
        ops.iter().map(|(t, _)| t.clone()).collect()
    };
    let old: Vec<Reply> = ["AND", "OR", "XOR", "NOT"].map(Reply::bulk).into();
    for p in LATER {
        let ops = bitop_operations(p).expect("the operations");
        let mut all = old.clone();
        all.extend(["DIFF", "DIFF1", "ANDOR", "ONE"].map(Reply::bulk));
        assert_eq!(tokens(&ops), all, "{p}");
        // Redis's published table (redis/docs commands_core.json) gives the new operations
        // no `since` of their own.
        for (_, since) in &ops[4..] {
            assert_eq!(since, &None, "{p}");
        }
    }
    // Redis 7.0 documents the operation as one string; 7.2's table as the four tokens.
    assert_eq!(bitop_operations(Profile::Redis70), None);
    for p in [Profile::Redis72, Profile::Redis80] {
        let ops = bitop_operations(p).expect("the operations");
        assert_eq!(tokens(&ops), old, "{p}");
    }
    let valkey = bitop_operations(Profile::Valkey81).expect("Valkey's operations");
    assert_eq!(tokens(&valkey), old);
}

#[test]
fn cluster_slot_stats_exists_from_82_and_valkey_80() {
    let info_of = |p: Profile| run(&mut engine(p), &["COMMAND", "INFO", "cluster|slot-stats"]);
    for p in [Profile::Redis82, Profile::Redis84, Profile::Valkey81] {
        let Reply::Array(v) = info_of(p) else {
            panic!("{p}")
        };
        let Reply::Array(f) = &v[0] else {
            panic!("{p}: {v:?}")
        };
        assert_eq!(f[0], Reply::bulk("cluster|slot-stats"), "{p}");
        assert_eq!(f[1], Reply::Int(-4));
        assert_eq!(f[2], set(&["loading", "stale"]));
        let d = docs(p, "cluster|slot-stats");
        let since = if p == Profile::Valkey81 {
            "8.0.0"
        } else {
            "8.2.0"
        };
        assert_eq!(field(&d, "since"), Some(&Reply::bulk(since)), "{p}");
        assert_eq!(
            run(
                &mut engine(p),
                &["CONFIG", "GET", "cluster-slot-stats-enabled"]
            ),
            Reply::Map(vec![(
                Reply::bulk("cluster-slot-stats-enabled"),
                Reply::bulk("no")
            )]),
            "{p}"
        );
    }
    for p in [Profile::Redis70, Profile::Redis80, Profile::Valkey72] {
        assert_eq!(info_of(p), Reply::Array(vec![Reply::Nil]), "{p}");
        let mut e = engine(p);
        assert_eq!(
            run(&mut e, &["CLUSTER", "SLOT-STATS", "ORDERBY", "key-count"]),
            Reply::err("ERR unknown subcommand 'SLOT-STATS'. Try CLUSTER HELP."),
            "{p}"
        );
        assert_eq!(refused(&e), ["cluster|slot-stats"], "{p}");
    }
}

#[test]
fn acl_cat_lists_a_later_command_only_where_the_profile_has_it() {
    let listed = |p: Profile, cat: &str, name: &str| match run(&mut engine(p), &["ACL", "CAT", cat])
    {
        Reply::Array(v) => v.contains(&Reply::bulk(name)),
        other => panic!("{other:?}"),
    };
    assert!(listed(Profile::Redis82, "stream", "xdelex"));
    assert!(!listed(Profile::Redis80, "stream", "xdelex"));
    assert!(!listed(Profile::Valkey81, "stream", "xackdel"));
    assert!(listed(Profile::Redis84, "string", "msetex"));
    assert!(!listed(Profile::Redis70, "string", "msetex"));
    assert!(listed(Profile::Redis70, "string", "mset"));
}
