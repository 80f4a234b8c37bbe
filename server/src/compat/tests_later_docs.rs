//! COMMAND DOCS of Redis 7.0 commands that gained an argument or a history line later
//! (`since::LATER_DOCS`), under the Redis profiles no reference server here runs: each
//! profile shows the entry of its own release, and the argument it documents works there
//! and is refused (as that release refuses it) before. The valkey-8.1 profile's entries are
//! compared with valkey-server 8.1 by tests/conformance/command.txt.

use super::Profile;
use crate::reply::Reply;
use crate::test_support::{command_docs, engine_as, map_field, run};

/// Every token of an entry's arguments, nested ones included, in order.
fn tokens(entry: &Reply) -> Vec<String> {
    fn walk(args: &Reply, out: &mut Vec<String>) {
        let Reply::Array(args) = args else { return };
        for a in args {
            if let Some(Reply::Bulk(t)) = map_field(a, "token") {
                out.push(String::from_utf8_lossy(t).into_owned());
            }
            if let Some(inner) = map_field(a, "arguments") {
                walk(inner, out);
            }
        }
    }
    let mut out = Vec::new();
    if let Some(args) = map_field(entry, "arguments") {
        walk(args, &mut out);
    }
    out
}

/// The versions of an entry's history lines.
fn history(entry: &Reply) -> Vec<String> {
    let rows = match map_field(entry, "history") {
        Some(Reply::Array(rows) | Reply::Set(rows)) => rows.clone(),
        _ => Vec::new(),
    };
    rows.iter()
        .filter_map(|r| match r {
            Reply::Array(pair) => match pair.first() {
                Some(Reply::Bulk(v)) => Some(String::from_utf8_lossy(v).into_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn summary(entry: &Reply) -> Reply {
    map_field(entry, "summary").cloned().expect("a summary")
}

#[test]
fn hscan_documents_novalues_from_7_4() {
    let has = |p| tokens(&command_docs(p, "hscan")).contains(&"NOVALUES".to_string());
    assert!(!has(Profile::Redis70));
    assert!(!has(Profile::Redis72));
    assert!(has(Profile::Redis74));
    assert!(has(Profile::Redis84));
    // And the option is there exactly where it is documented.
    for (p, ok) in [(Profile::Redis72, false), (Profile::Redis74, true)] {
        let (mut e, _clock) = engine_as(p);
        run(&mut e, &["HSET", "h", "f", "v"]);
        let got = run(&mut e, &["HSCAN", "h", "0", "NOVALUES"]);
        assert_eq!(got.is_error(), !ok, "{p}: {got:?}");
    }
}

#[test]
fn client_kill_documents_maxage_from_7_4_with_its_history_line() {
    let e72 = command_docs(Profile::Redis72, "client|kill");
    let e74 = command_docs(Profile::Redis74, "client|kill");
    assert!(!tokens(&e72).contains(&"MAXAGE".to_string()));
    assert!(tokens(&e74).contains(&"MAXAGE".to_string()));
    assert_eq!(history(&e74).last().map(String::as_str), Some("7.4.0"));
    // Valkey's own additions (TYPE PRIMARY, its 8.x history) are not Redis's.
    assert!(!tokens(&e74).contains(&"PRIMARY".to_string()));
    assert!(!history(&e74).iter().any(|v| v.starts_with("8.")));
    assert_eq!(summary(&e74), Reply::bulk("Terminates open connections."));
    // Valkey 8.1 shows its own entry: MAXAGE since 8.0, with PRIMARY.
    let v81 = command_docs(Profile::Valkey81, "client|kill");
    assert!(tokens(&v81).contains(&"PRIMARY".to_string()));
}

#[test]
fn set_documents_the_digest_conditions_from_8_4() {
    let conditions = ["IFEQ", "IFNE", "IFDEQ", "IFDNE"].map(str::to_string);
    let e82 = command_docs(Profile::Redis82, "set");
    let e84 = command_docs(Profile::Redis84, "set");
    assert!(!tokens(&e82).iter().any(|t| t.starts_with("IF")));
    let t84 = tokens(&e84);
    assert!(conditions.iter().all(|c| t84.contains(c)), "{t84:?}");
    assert_eq!(history(&e84).last().map(String::as_str), Some("8.4.0"));
    // Valkey 8.1's SET documents IFEQ alone.
    let tv = tokens(&command_docs(Profile::Valkey81, "set"));
    assert!(tv.contains(&"IFEQ".to_string()) && !tv.contains(&"IFNE".to_string()));
    for (p, ok) in [(Profile::Redis82, false), (Profile::Redis84, true)] {
        let (mut e, _clock) = engine_as(p);
        let got = run(&mut e, &["SET", "k", "v", "IFNE", "x"]);
        assert_eq!(got.is_error(), !ok, "{p}: {got:?}");
    }
}

#[test]
fn xadd_and_xtrim_document_the_reference_options_from_8_2() {
    for name in ["xadd", "xtrim"] {
        let refs = |p| {
            let t = tokens(&command_docs(p, name));
            ["KEEPREF", "DELREF", "ACKED"].map(|r| t.contains(&r.to_string()))
        };
        assert_eq!(refs(Profile::Redis80), [false; 3], "{name}");
        assert_eq!(refs(Profile::Redis82), [true; 3], "{name}");
    }
    // XADD lists them after NOMKSTREAM, XTRIM as the last argument of its trim block, as
    // Redis's published table (redis/docs commands_core.json) has them.
    let xadd = tokens(&command_docs(Profile::Redis82, "xadd"));
    assert_eq!(&xadd[..2], &["NOMKSTREAM", "KEEPREF"]);
    let xtrim = tokens(&command_docs(Profile::Redis82, "xtrim"));
    assert_eq!(xtrim.last().map(String::as_str), Some("ACKED"));
    for (p, ok) in [(Profile::Redis80, false), (Profile::Redis82, true)] {
        let (mut e, _clock) = engine_as(p);
        let got = run(&mut e, &["XADD", "s", "KEEPREF", "*", "f", "v"]);
        assert_eq!(got.is_error(), !ok, "{p}: {got:?}");
        let got = run(&mut e, &["XTRIM", "s", "MAXLEN", "0", "ACKED"]);
        assert_eq!(got.is_error(), !ok, "{p}: {got:?}");
    }
}

#[test]
fn acl_log_documents_its_7_2_fields() {
    assert!(history(&command_docs(Profile::Redis70, "acl|log")).is_empty());
    assert_eq!(
        history(&command_docs(Profile::Redis72, "acl|log")),
        vec!["7.2.0".to_string()]
    );
}
