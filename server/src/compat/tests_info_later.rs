//! COMMAND INFO and COMMAND DOCS of Redis 7.0 commands that later releases describe
//! differently (`info_later`, `since::FLAGS_ADDED`, `since::LATER_ARITY`,
//! `since::LATER_DOCS`), under the profiles no reference server here runs. The expected
//! values are the published facts: Redis 8.4's command table (redis/docs
//! `commands_core.json`) and valkey-server 8.1, which agree on each of them; redis-7.0 keeps
//! what redis-server 7.0.15 prints (checked byte for byte by tests/conformance/command.txt).

use super::Profile;
use crate::reply::Reply;
use crate::test_support::{command_docs, engine_as, map_field, run};

/// Every profile that has Redis 7.2's command table: all but redis-7.0 (Valkey 7.2 is
/// Redis 7.2.4 renamed).
fn from_72() -> impl Iterator<Item = Profile> {
    Profile::ALL.into_iter().filter(|p| *p != Profile::Redis70)
}

/// COMMAND INFO `name`'s ten fields under `p`.
fn info(p: Profile, name: &str) -> Vec<Reply> {
    match run(&mut engine_as(p).0, &["COMMAND", "INFO", name]) {
        Reply::Array(mut v) => match v.remove(0) {
            Reply::Array(fields) => fields,
            other => panic!("{name} under {p}: {other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

fn statuses(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| Reply::status(s)).collect())
}

fn bulks(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| Reply::bulk(*s)).collect())
}

const ALL_NODES: [&str; 2] = ["request_policy:all_nodes", "response_policy:all_succeeded"];

#[test]
fn node_local_commands_run_on_all_nodes_from_7_2() {
    for name in [
        "acl|deluser",
        "acl|save",
        "acl|setuser",
        "client|setname",
        "config|resetstat",
        "config|rewrite",
    ] {
        assert_eq!(info(Profile::Redis70, name)[7], bulks(&[]), "{name}");
        for p in from_72() {
            assert_eq!(info(p, name)[7], bulks(&ALL_NODES), "{name} under {p}");
        }
    }
}

#[test]
fn changed_response_policies_from_7_2() {
    let cases: [(&str, &[&str], &[&str]); 4] = [
        (
            "latency|reset",
            &["request_policy:all_nodes", "response_policy:all_succeeded"],
            &["request_policy:all_nodes", "response_policy:agg_sum"],
        ),
        (
            "msetnx",
            &["request_policy:multi_shard", "response_policy:agg_min"],
            &[],
        ),
        (
            "randomkey",
            &["request_policy:all_shards", "nondeterministic_output"],
            &[
                "request_policy:all_shards",
                "response_policy:special",
                "nondeterministic_output",
            ],
        ),
        (
            "scan",
            &["nondeterministic_output", "request_policy:special"],
            &[
                "nondeterministic_output",
                "request_policy:special",
                "response_policy:special",
            ],
        ),
    ];
    for (name, before, after) in cases {
        assert_eq!(info(Profile::Redis70, name)[7], bulks(before), "{name}");
        for p in from_72() {
            assert_eq!(info(p, name)[7], bulks(after), "{name} under {p}");
        }
    }
}

#[test]
fn cluster_shards_and_slots_run_while_loading_from_7_2() {
    for name in ["cluster|shards", "cluster|slots"] {
        assert_eq!(
            info(Profile::Redis70, name)[2],
            statuses(&["stale"]),
            "{name}"
        );
        for p in from_72() {
            // In Redis's order: loading before stale.
            assert_eq!(
                info(p, name)[2],
                statuses(&["loading", "stale"]),
                "{name} under {p}"
            );
        }
    }
    // CLUSTER INFO's `loading` is Valkey 8's own: Redis 8.4 has none.
    assert_eq!(
        info(Profile::Redis84, "cluster|info")[2],
        statuses(&["stale"])
    );
    assert_eq!(
        info(Profile::Valkey81, "cluster|info")[2],
        statuses(&["loading", "stale"])
    );
}

/// The flags of SINTERSTORE's first key spec (its destination).
fn destination_flags(p: Profile) -> Reply {
    let fields = info(p, "sinterstore");
    let (Reply::Array(specs) | Reply::Set(specs)) = &fields[8] else {
        panic!("{fields:?}")
    };
    map_field(&specs[0], "flags").cloned().expect("flags")
}

#[test]
fn sinterstore_overwrites_its_destination_from_7_4() {
    // Redis 7.2's table still has RW (redis/redis#12917 came after 7.2.4).
    for p in [Profile::Redis70, Profile::Redis72, Profile::Valkey72] {
        assert_eq!(destination_flags(p), statuses(&["RW", "update"]), "{p}");
    }
    for p in [Profile::Redis74, Profile::Redis84, Profile::Valkey81] {
        assert_eq!(destination_flags(p), statuses(&["OW", "update"]), "{p}");
    }
    // GETKEYSANDFLAGS reads the same specs.
    let keys = |p| {
        run(
            &mut engine_as(p).0,
            &["COMMAND", "GETKEYSANDFLAGS", "SINTERSTORE", "d", "a"],
        )
    };
    let first = |r: Reply| match r {
        Reply::Array(mut v) => match v.remove(0) {
            Reply::Array(mut pair) => pair.remove(1),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert_eq!(first(keys(Profile::Redis70)), statuses(&["RW", "update"]));
    assert_eq!(first(keys(Profile::Redis74)), statuses(&["OW", "update"]));
}

#[test]
fn getkeys_takes_a_command_name_alone_from_7_2() {
    for name in ["command|getkeys", "command|getkeysandflags"] {
        assert_eq!(info(Profile::Redis70, name)[1], Reply::Int(-4), "{name}");
        for p in from_72() {
            assert_eq!(info(p, name)[1], Reply::Int(-3), "{name} under {p}");
        }
    }
    let getkeys = |p, line: &[&str]| {
        let mut args = vec!["COMMAND", "GETKEYS"];
        args.extend_from_slice(line);
        run(&mut engine_as(p).0, &args)
    };
    assert_eq!(
        getkeys(Profile::Redis70, &["get"]),
        Reply::err("ERR wrong number of arguments for 'command|getkeys' command")
    );
    for p in from_72() {
        assert_eq!(
            getkeys(p, &["get"]),
            Reply::err("ERR Invalid number of arguments specified for command"),
            "{p}"
        );
        assert_eq!(
            getkeys(p, &["ping"]),
            Reply::err("ERR The command has no key arguments"),
            "{p}"
        );
        assert_eq!(
            getkeys(p, &["get", "k"]),
            Reply::Array(vec![Reply::bulk("k")])
        );
    }
}

/// An entry's history lines as (version, text).
fn history(entry: &Reply) -> Vec<(String, String)> {
    let text = |r: &Reply| match r {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("{other:?}"),
    };
    match map_field(entry, "history") {
        Some(Reply::Array(rows) | Reply::Set(rows)) => rows
            .iter()
            .map(|r| match r {
                Reply::Array(pair) => (text(&pair[0]), text(&pair[1])),
                other => panic!("{other:?}"),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn last_history(p: Profile, name: &str) -> (String, String) {
    history(&command_docs(p, name)).pop().expect("a history")
}

fn line(version: &str, text: &str) -> (String, String) {
    (version.to_string(), text.to_string())
}

#[test]
fn client_list_history_follows_the_release() {
    let ssub = line("7.0.3", "Added `ssub` field.");
    let watch = line("7.4.0", "Added `watch` field.");
    let io_thread = line("8.0.0", "Added `io-thread` field.");
    assert_eq!(last_history(Profile::Redis70, "client|list"), ssub);
    assert_eq!(last_history(Profile::Redis72, "client|list"), ssub);
    assert_eq!(last_history(Profile::Redis74, "client|list"), watch);
    for p in [Profile::Redis80, Profile::Redis82, Profile::Redis84] {
        let h = history(&command_docs(p, "client|list"));
        assert_eq!(h.last(), Some(&io_thread), "{p}");
        assert!(h.contains(&line("7.2.0", "Added `lib-name` and `lib-ver` fields.")));
        assert!(h.contains(&watch));
    }
    // 7.2's summary and arguments from 7.4 on (the entry is in the 7.2 shape).
    let summary = |p| map_field(&command_docs(p, "client|list"), "summary").cloned();
    assert_eq!(
        summary(Profile::Redis74),
        Some(Reply::bulk("Lists open connections."))
    );
}

#[test]
fn xinfo_documents_the_active_time_from_7_2() {
    let has = |p, name, text| history(&command_docs(p, name)).contains(&line("7.2.0", text));
    let stream = "Added the `active-time` field, and changed the meaning of `seen-time`.";
    assert!(!has(Profile::Redis70, "xinfo|stream", stream));
    for p in from_72() {
        assert!(has(p, "xinfo|stream", stream), "xinfo|stream under {p}");
    }
    // XINFO CONSUMERS' line is shorter in Redis 7.2's table; Redis's current table and
    // valkey-server 8.1 (Redis's development branch of March 2024) have the longer one.
    let short = "Added the `inactive` field.";
    let long = "Added the `inactive` field, and changed the meaning of `idle`.";
    assert!(history(&command_docs(Profile::Redis70, "xinfo|consumers")).is_empty());
    for p in [Profile::Redis72, Profile::Valkey72] {
        assert!(has(p, "xinfo|consumers", short), "{p}");
    }
    for p in [Profile::Redis74, Profile::Redis84, Profile::Valkey81] {
        assert!(has(p, "xinfo|consumers", long), "{p}");
    }
}

#[test]
fn quit_is_deprecated_from_7_2() {
    let field = |p, k| map_field(&command_docs(p, "quit"), k).cloned();
    assert_eq!(field(Profile::Redis70, "deprecated_since"), None);
    assert_eq!(field(Profile::Redis70, "doc_flags"), None);
    for p in from_72() {
        assert_eq!(
            field(p, "deprecated_since"),
            Some(Reply::bulk("7.2.0")),
            "{p}"
        );
        assert_eq!(
            field(p, "replaced_by"),
            Some(Reply::bulk("just closing the connection"))
        );
        assert_eq!(field(p, "doc_flags"), Some(statuses(&["deprecated"])));
    }
}

#[test]
fn complexities_corrected_in_7_2() {
    let field = |p, name, k| map_field(&command_docs(p, name), k).cloned();
    // XREAD documents no complexity from 7.2.
    assert!(field(Profile::Redis70, "xread", "complexity").is_some());
    let cases = [
        (
            "punsubscribe",
            "O(N) where N is the number of patterns to unsubscribe.",
        ),
        (
            "cluster|getkeysinslot",
            "O(N) where N is the number of requested keys",
        ),
        (
            "cluster|replicas",
            "O(N) where N is the number of replicas.",
        ),
        ("cluster|slaves", "O(N) where N is the number of replicas."),
    ];
    for (name, text) in cases {
        assert_ne!(
            field(Profile::Redis70, name, "complexity"),
            Some(Reply::bulk(text)),
            "{name}"
        );
    }
    for p in from_72() {
        assert_eq!(field(p, "xread", "complexity"), None, "{p}");
        for (name, text) in cases {
            assert_eq!(
                field(p, name, "complexity"),
                Some(Reply::bulk(text)),
                "{name} under {p}"
            );
        }
    }
    // Redis keeps "master" where Valkey 8 says "primary".
    let summary = |p| field(p, "cluster|replicas", "summary");
    assert_eq!(
        summary(Profile::Redis84),
        Some(Reply::bulk("Lists the replica nodes of a master node."))
    );
    assert_eq!(
        summary(Profile::Valkey81),
        Some(Reply::bulk("Lists the replica nodes of a primary node."))
    );
    assert_eq!(
        field(Profile::Redis72, "cluster|slaves", "deprecated_since"),
        Some(Reply::bulk("5.0.0"))
    );
}
