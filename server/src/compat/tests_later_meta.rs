//! COMMAND INFO, COMMAND DOCS and ACL categories of the commands that arrived after Redis 7.0
//! (server/data/commands-later.json, written from each release's published command
//! reference): hash field expiration (7.4), HGETDEL/HGETEX/HSETEX (8.0), WAITAOF and CLIENT
//! SETINFO/NO-TOUCH (7.2), DELEX and DIGEST (8.4). Before that file held them they described
//! themselves from their table entries, with no ACL categories, so `+@hash` did not reach
//! HEXPIRE.

use super::*;
use crate::test_support::{command_docs as docs, engine_as, map_field as field, run};
use crate::{Engine, Reply};

fn engine(p: Profile) -> Engine {
    engine_as(p).0
}

fn set(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| Reply::status(s)).collect())
}

/// Tips are bulk strings.
fn tips(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| Reply::bulk(*s)).collect())
}

/// COMMAND INFO `name`'s entry under `p` (10 fields), None when the profile lacks it.
fn info(p: Profile, name: &str) -> Option<Vec<Reply>> {
    match run(&mut engine(p), &["COMMAND", "INFO", name]) {
        Reply::Array(mut v) => match v.remove(0) {
            Reply::Array(fields) => Some(fields),
            Reply::Nil => None,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

const HFE: [&str; 9] = [
    "hexpire",
    "hpexpire",
    "hexpireat",
    "hpexpireat",
    "httl",
    "hpttl",
    "hexpiretime",
    "hpexpiretime",
    "hpersist",
];

#[test]
fn hash_field_expiration_has_74s_categories_and_key_specs() {
    for name in HFE {
        let i = info(Profile::Redis74, name).expect(name);
        let write = !name.contains("ttl") && !name.ends_with("time");
        let cats = if write {
            ["@write", "@hash", "@fast"]
        } else {
            ["@read", "@hash", "@fast"]
        };
        assert_eq!(i[6], set(&cats), "{name}");
        assert_eq!(
            (&i[3], &i[4], &i[5]),
            (&Reply::Int(1), &Reply::Int(1), &Reply::Int(1))
        );
        let Reply::Set(specs) = &i[8] else {
            panic!("{i:?}")
        };
        let key_flags = if write {
            set(&["RW", "update"])
        } else {
            set(&["RO", "access"])
        };
        assert_eq!(field(&specs[0], "flags"), Some(&key_flags), "{name}");
        // Only HTTL and HPTTL carry a tip (Redis's httl.json and hpttl.json, and Redis 8.4's
        // command table).
        let expected = if name == "hpttl" || name == "httl" {
            tips(&["nondeterministic_output"])
        } else {
            tips(&[])
        };
        assert_eq!(i[7], expected, "{name}");
        assert!(info(Profile::Redis72, name).is_none(), "{name}");
        assert!(info(Profile::Valkey81, name).is_none(), "{name}");
    }
}

#[test]
fn hexpire_loses_denyoom_in_80() {
    for name in ["hexpire", "hpexpire", "hexpireat", "hpexpireat"] {
        let old = info(Profile::Redis74, name).expect(name);
        assert_eq!(old[2], set(&["write", "denyoom", "fast"]), "{name}");
        for p in [Profile::Redis80, Profile::Redis82, Profile::Redis84] {
            let new = info(p, name).expect(name);
            assert_eq!(new[2], set(&["write", "fast"]), "{p} {name}");
        }
    }
    // HSETEX keeps it.
    let hsetex = info(Profile::Redis80, "hsetex").expect("hsetex");
    assert_eq!(hsetex[2], set(&["write", "denyoom", "fast"]));
}

#[test]
fn hexpire_is_refused_over_maxmemory_only_in_74() {
    let line = ["HEXPIRE", "h", "10", "FIELDS", "1", "f"];
    let mut e = engine(Profile::Redis74);
    run(&mut e, &["HSET", "h", "f", "v"]);
    e.config_mut().maxmemory = 1;
    assert_eq!(run(&mut e, &line), Reply::err(crate::errors::OOM));
    // HPERSIST never had the flag.
    assert_eq!(
        run(&mut e, &["HPERSIST", "h", "FIELDS", "1", "f"]),
        Reply::Array(vec![Reply::Int(-1)])
    );
    for p in [Profile::Redis80, Profile::Redis84] {
        let mut e = engine(p);
        run(&mut e, &["HSET", "h", "f", "v"]);
        e.config_mut().maxmemory = 1;
        assert_eq!(run(&mut e, &line), Reply::Array(vec![Reply::Int(1)]), "{p}");
        assert_eq!(
            run(&mut e, &["HSETEX", "h", "FIELDS", "1", "g", "v"]),
            Reply::err(crate::errors::OOM),
            "{p}"
        );
    }
}

#[test]
fn hash_commands_of_80_have_their_key_flags() {
    let cases = [
        ("hgetdel", ["RW", "access", "delete"].as_slice()),
        ("hgetex", &["RW", "access", "update"]),
        ("hsetex", &["RW", "update"]),
    ];
    for (name, key_flags) in cases {
        let i = info(Profile::Redis80, name).expect(name);
        assert_eq!(i[6], set(&["@write", "@hash", "@fast"]), "{name}");
        let Reply::Set(specs) = &i[8] else {
            panic!("{i:?}")
        };
        assert_eq!(field(&specs[0], "flags"), Some(&set(key_flags)), "{name}");
        assert!(info(Profile::Redis74, name).is_none(), "{name}");
    }
}

#[test]
fn docs_come_from_the_reference() {
    let d = docs(Profile::Redis74, "hexpire");
    assert_eq!(
        field(&d, "summary"),
        Some(&Reply::bulk(
            "Set expiry for hash field using relative time to expire (seconds)"
        ))
    );
    assert_eq!(field(&d, "since"), Some(&Reply::bulk("7.4.0")));
    assert_eq!(field(&d, "group"), Some(&Reply::bulk("hash")));
    let Some(Reply::Array(args)) = field(&d, "arguments") else {
        panic!("{d:?}")
    };
    let names: Vec<&Reply> = args.iter().map(|a| field(a, "name").unwrap()).collect();
    assert_eq!(
        names,
        ["key", "seconds", "condition", "fields"]
            .map(Reply::bulk)
            .iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(field(&args[3], "token"), Some(&Reply::bulk("FIELDS")));
    assert_eq!(field(&args[3], "type"), Some(&Reply::bulk("block")));

    let d = docs(Profile::Redis80, "hsetex");
    assert_eq!(field(&d, "since"), Some(&Reply::bulk("8.0.0")));
    let d = docs(Profile::Redis84, "digest");
    assert_eq!(
        field(&d, "summary"),
        Some(&Reply::bulk(
            "Returns the hash digest of a string value as a hexadecimal string."
        ))
    );
}

#[test]
fn waitaof_and_client_setinfo_say_what_72_says() {
    // Redis 7.2's table: `noscript`, @slow @connection; from 7.4 (redis/redis#12977)
    // `blocking` in @blocking, as valkey-server 8.1 prints it.
    for (p, flags, cats) in [
        (
            Profile::Redis72,
            ["noscript"],
            &["@slow", "@connection"][..],
        ),
        (
            Profile::Valkey72,
            ["noscript"],
            &["@slow", "@connection"][..],
        ),
        (
            Profile::Redis74,
            ["blocking"],
            &["@slow", "@blocking", "@connection"][..],
        ),
    ] {
        let w = info(p, "waitaof").expect("waitaof");
        assert_eq!(w[2], set(&flags), "{p}");
        assert_eq!(w[6], set(cats), "{p}");
        assert_eq!(
            w[7],
            tips(&["request_policy:all_shards", "response_policy:agg_min"]),
            "{p}"
        );
    }
    let s = info(Profile::Redis72, "client|setinfo").expect("setinfo");
    assert_eq!(s[6], set(&["@slow", "@connection"]));
    // Redis says "master" where valkey-server 8.1 (its captured entry) says "primary".
    let summary = |p| match field(&docs(p, "waitaof"), "summary") {
        Some(Reply::Bulk(b)) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("{other:?}"),
    };
    assert!(summary(Profile::Redis72).ends_with("of the master and/or replicas."));
    assert!(summary(Profile::Valkey81).ends_with("of the primary and/or replicas."));
}

fn acl_cat(p: Profile, cat: &str) -> Vec<String> {
    match run(&mut engine(p), &["ACL", "CAT", cat]) {
        Reply::Array(v) => v
            .into_iter()
            .map(|r| match r {
                Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn acl_categories_list_later_commands_in_their_profiles() {
    let has = |p, cat, name: &str| acl_cat(p, cat).iter().any(|n| n == name);
    for name in HFE {
        assert!(has(Profile::Redis74, "hash", name), "{name}");
        assert!(!has(Profile::Redis72, "hash", name), "{name}");
    }
    for name in ["hgetdel", "hgetex", "hsetex"] {
        assert!(has(Profile::Redis80, "hash", name), "{name}");
        assert!(!has(Profile::Redis74, "hash", name), "{name}");
    }
    assert!(has(Profile::Redis74, "read", "httl"));
    assert!(has(Profile::Redis72, "connection", "waitaof"));
    assert!(has(Profile::Redis72, "connection", "client|setinfo"));
    assert!(!has(Profile::Redis70, "connection", "client|setinfo"));
    assert!(has(Profile::Valkey81, "scripting", "script|show"));
    assert!(!has(Profile::Redis84, "scripting", "script|show"));
    assert!(has(Profile::Redis84, "string", "delex"));
    // COMMAND LIST's filter reads the same categories.
    let listed = run(
        &mut engine(Profile::Redis74),
        &["COMMAND", "LIST", "FILTERBY", "ACLCAT", "hash"],
    );
    let Reply::Array(listed) = listed else {
        panic!("{listed:?}")
    };
    assert!(listed.contains(&Reply::bulk("hexpire")));
}

#[test]
fn a_user_limited_to_hash_may_run_hexpire_from_74() {
    for p in [Profile::Redis72, Profile::Redis74, Profile::Redis80] {
        let mut e = engine(p);
        run(&mut e, &["HSET", "h", "f", "v"]);
        assert_eq!(
            run(
                &mut e,
                &["ACL", "SETUSER", "u", "on", "nopass", "~*", "+@hash"]
            ),
            Reply::ok()
        );
        assert_eq!(run(&mut e, &["AUTH", "u", "x"]), Reply::ok());
        let r = run(&mut e, &["HEXPIRE", "h", "100", "FIELDS", "1", "f"]);
        if p == Profile::Redis72 {
            assert_eq!(
                r,
                Reply::err(
                    "ERR unknown command 'HEXPIRE', with args beginning with: 'h' '100' \
                     'FIELDS' '1' 'f' "
                )
            );
        } else {
            assert_eq!(r, Reply::Array(vec![Reply::Int(1)]), "{p}");
        }
        // Outside the category: refused by ACL in every profile.
        let r = run(&mut e, &["GET", "h"]);
        assert!(
            matches!(&r, Reply::Error(t) if t.starts_with("NOPERM")),
            "{p}: {r:?}"
        );
    }
}
