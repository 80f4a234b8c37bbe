//! COMMAND DOCS under the profiles from Redis 7.2 on: Redis 7.2's table (its rewritten
//! summaries, `display_text` on every argument but blocks and one-ofs), as later releases
//! changed it (`meta::docs_in`, `since::DOCS_72`). No Redis 7.2 or 8.x server runs here: the
//! expected entries are the published ones, written out below in the order Redis prints
//! their fields. For 7.2, redis-doc's table for Redis 7.2 (the source of
//! server/data/commands-docs-7.2.json); for 8.4, Redis's published table (redis/docs
//! `commands_core.json`), which has the same GETEX, EVAL, CLIENT SETINFO and OBJECT ENCODING
//! entries. redis-7.0 keeps redis-server 7.0.15's text and valkey-8.1 valkey-server 8.1's
//! (both checked against the real servers by tests/conformance/command.txt).

use serde_json::Value;

use super::Profile;
use crate::reply::Reply;
use crate::test_support::{command_docs, map_field};

/// An expected entry, written as JSON, as the reply Redis sends: objects are maps, strings
/// bulk strings; `history` is a set of [version, text] pairs and `flags` / `doc_flags` sets of
/// simple strings, as Redis's addReplyCommandDocs prints them.
fn expected(json: &str) -> Reply {
    fn convert(v: &Value, key: &str) -> Reply {
        match v {
            Value::Object(m) => Reply::Map(
                m.iter()
                    .map(|(k, v)| (Reply::bulk(k), convert(v, k)))
                    .collect(),
            ),
            Value::Array(items) if key == "history" => {
                Reply::Set(items.iter().map(|x| convert(x, "")).collect())
            }
            Value::Array(items) if key == "flags" || key == "doc_flags" => Reply::Set(
                items
                    .iter()
                    .map(|x| Reply::status(x.as_str().expect("a flag")))
                    .collect(),
            ),
            Value::Array(items) => Reply::Array(items.iter().map(|x| convert(x, "")).collect()),
            Value::String(s) => Reply::bulk(s),
            Value::Number(n) => Reply::Int(n.as_i64().expect("an integer")),
            other => panic!("unexpected {other:?}"),
        }
    }
    convert(
        &serde_json::from_str(json).expect("valid JSON in the test"),
        "",
    )
}

/// Compares `name`'s entry under `p` with `want` field by field, so a failure names the field.
fn assert_docs(p: Profile, name: &str, want: &Reply) {
    let got = command_docs(p, name);
    let (Reply::Map(got_fields), Reply::Map(want_fields)) = (&got, want) else {
        panic!("{name} under {p}: {got:?}");
    };
    let keys =
        |fields: &[(Reply, Reply)]| fields.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(
        keys(got_fields),
        keys(want_fields),
        "{name} under {p}: fields"
    );
    for (k, v) in want_fields {
        assert_eq!(
            map_field(&got, &key_text(k)),
            Some(v),
            "{name} under {p}: {k:?}"
        );
    }
}

fn key_text(k: &Reply) -> String {
    match k {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("{other:?}"),
    }
}

const SET_72: &str = r#"{
  "summary": "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
  "since": "1.0.0", "group": "string", "complexity": "O(1)",
  "history": [
    ["2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."],
    ["6.0.0", "Added the `KEEPTTL` option."],
    ["6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."],
    ["7.0.0", "Allowed the `NX` and `GET` options to be used together."]],
  "arguments": [
    {"name": "key", "type": "key", "display_text": "key", "key_spec_index": 0},
    {"name": "value", "type": "string", "display_text": "value"},
    {"name": "condition", "type": "oneof", "since": "2.6.12", "flags": ["optional"], "arguments": [
      {"name": "nx", "type": "pure-token", "display_text": "nx", "token": "NX"},
      {"name": "xx", "type": "pure-token", "display_text": "xx", "token": "XX"}]},
    {"name": "get", "type": "pure-token", "display_text": "get", "token": "GET", "since": "6.2.0",
     "flags": ["optional"]},
    {"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": [
      {"name": "seconds", "type": "integer", "display_text": "seconds", "token": "EX", "since": "2.6.12"},
      {"name": "milliseconds", "type": "integer", "display_text": "milliseconds", "token": "PX",
       "since": "2.6.12"},
      {"name": "unix-time-seconds", "type": "unix-time", "display_text": "unix-time-seconds",
       "token": "EXAT", "since": "6.2.0"},
      {"name": "unix-time-milliseconds", "type": "unix-time", "display_text": "unix-time-milliseconds",
       "token": "PXAT", "since": "6.2.0"},
      {"name": "keepttl", "type": "pure-token", "display_text": "keepttl", "token": "KEEPTTL",
       "since": "6.0.0"}]}]
}"#;

/// Redis's published table (commands_core.json), which is 8.4's for SET.
const SET_84: &str = r#"{
  "summary": "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
  "since": "1.0.0", "group": "string", "complexity": "O(1)",
  "history": [
    ["2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."],
    ["6.0.0", "Added the `KEEPTTL` option."],
    ["6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."],
    ["7.0.0", "Allowed the `NX` and `GET` options to be used together."],
    ["8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."]],
  "arguments": [
    {"name": "key", "type": "key", "display_text": "key", "key_spec_index": 0},
    {"name": "value", "type": "string", "display_text": "value"},
    {"name": "condition", "type": "oneof", "since": "2.6.12", "flags": ["optional"], "arguments": [
      {"name": "nx", "type": "pure-token", "display_text": "nx", "token": "NX"},
      {"name": "xx", "type": "pure-token", "display_text": "xx", "token": "XX"},
      {"name": "ifeq-value", "type": "string", "display_text": "ifeq-value", "token": "IFEQ",
       "since": "8.4.0"},
      {"name": "ifne-value", "type": "string", "display_text": "ifne-value", "token": "IFNE",
       "since": "8.4.0"},
      {"name": "ifdeq-digest", "type": "integer", "display_text": "ifdeq-digest", "token": "IFDEQ",
       "since": "8.4.0"},
      {"name": "ifdne-digest", "type": "integer", "display_text": "ifdne-digest", "token": "IFDNE",
       "since": "8.4.0"}]},
    {"name": "get", "type": "pure-token", "display_text": "get", "token": "GET", "since": "6.2.0",
     "flags": ["optional"]},
    {"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": [
      {"name": "seconds", "type": "integer", "display_text": "seconds", "token": "EX", "since": "2.6.12"},
      {"name": "milliseconds", "type": "integer", "display_text": "milliseconds", "token": "PX",
       "since": "2.6.12"},
      {"name": "unix-time-seconds", "type": "unix-time", "display_text": "unix-time-seconds",
       "token": "EXAT", "since": "6.2.0"},
      {"name": "unix-time-milliseconds", "type": "unix-time", "display_text": "unix-time-milliseconds",
       "token": "PXAT", "since": "6.2.0"},
      {"name": "keepttl", "type": "pure-token", "display_text": "keepttl", "token": "KEEPTTL",
       "since": "6.0.0"}]}]
}"#;

const GETEX: &str = r#"{
  "summary": "Returns the string value of a key after setting its expiration time.",
  "since": "6.2.0", "group": "string", "complexity": "O(1)",
  "arguments": [
    {"name": "key", "type": "key", "display_text": "key", "key_spec_index": 0},
    {"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": [
      {"name": "seconds", "type": "integer", "display_text": "seconds", "token": "EX"},
      {"name": "milliseconds", "type": "integer", "display_text": "milliseconds", "token": "PX"},
      {"name": "unix-time-seconds", "type": "unix-time", "display_text": "unix-time-seconds",
       "token": "EXAT"},
      {"name": "unix-time-milliseconds", "type": "unix-time", "display_text": "unix-time-milliseconds",
       "token": "PXAT"},
      {"name": "persist", "type": "pure-token", "display_text": "persist", "token": "PERSIST"}]}]
}"#;

const CLIENT_SETINFO: &str = r#"{
  "summary": "Sets information specific to the client or connection.",
  "since": "7.2.0", "group": "connection", "complexity": "O(1)",
  "arguments": [
    {"name": "attr", "type": "oneof", "arguments": [
      {"name": "libname", "type": "string", "display_text": "libname", "token": "LIB-NAME"},
      {"name": "libver", "type": "string", "display_text": "libver", "token": "LIB-VER"}]}]
}"#;

const EVAL: &str = r#"{
  "summary": "Executes a server-side Lua script.",
  "since": "2.6.0", "group": "scripting", "complexity": "Depends on the script that is executed.",
  "arguments": [
    {"name": "script", "type": "string", "display_text": "script"},
    {"name": "numkeys", "type": "integer", "display_text": "numkeys"},
    {"name": "key", "type": "key", "display_text": "key", "key_spec_index": 0,
     "flags": ["optional", "multiple"]},
    {"name": "arg", "type": "string", "display_text": "arg", "flags": ["optional", "multiple"]}]
}"#;

const OBJECT_ENCODING: &str = r#"{
  "summary": "Returns the internal encoding of a Redis object.",
  "since": "2.2.3", "group": "generic", "complexity": "O(1)",
  "arguments": [{"name": "key", "type": "key", "display_text": "key", "key_spec_index": 0}]
}"#;

const XADD_72: &str = r#"{
  "summary": "Appends a new message to a stream. Creates the key if it doesn't exist.",
  "since": "5.0.0", "group": "stream",
  "complexity": "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
  "history": [
    ["6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."],
    ["7.0.0", "Added support for the `<ms>-*` explicit ID form."]],
  "arguments": [
    {"name": "key", "type": "key", "display_text": "key", "key_spec_index": 0},
    {"name": "nomkstream", "type": "pure-token", "display_text": "nomkstream", "token": "NOMKSTREAM",
     "since": "6.2.0", "flags": ["optional"]},
    {"name": "trim", "type": "block", "flags": ["optional"], "arguments": [
      {"name": "strategy", "type": "oneof", "arguments": [
        {"name": "maxlen", "type": "pure-token", "display_text": "maxlen", "token": "MAXLEN"},
        {"name": "minid", "type": "pure-token", "display_text": "minid", "token": "MINID",
         "since": "6.2.0"}]},
      {"name": "operator", "type": "oneof", "flags": ["optional"], "arguments": [
        {"name": "equal", "type": "pure-token", "display_text": "equal", "token": "="},
        {"name": "approximately", "type": "pure-token", "display_text": "approximately",
         "token": "~"}]},
      {"name": "threshold", "type": "string", "display_text": "threshold"},
      {"name": "count", "type": "integer", "display_text": "count", "token": "LIMIT", "since": "6.2.0",
       "flags": ["optional"]}]},
    {"name": "id-selector", "type": "oneof", "arguments": [
      {"name": "auto-id", "type": "pure-token", "display_text": "auto-id", "token": "*"},
      {"name": "id", "type": "string", "display_text": "id"}]},
    {"name": "data", "type": "block", "flags": ["multiple"], "arguments": [
      {"name": "field", "type": "string", "display_text": "field"},
      {"name": "value", "type": "string", "display_text": "value"}]}]
}"#;

#[test]
fn redis_7_2_prints_7_2s_entries() {
    for (name, json) in [
        ("set", SET_72),
        ("getex", GETEX),
        ("client|setinfo", CLIENT_SETINFO),
        ("eval", EVAL),
        ("object|encoding", OBJECT_ENCODING),
        ("xadd", XADD_72),
    ] {
        assert_docs(Profile::Redis72, name, &expected(json));
    }
}

#[test]
fn valkey_7_2_prints_redis_7_2s_entries() {
    for (name, json) in [("set", SET_72), ("object|encoding", OBJECT_ENCODING)] {
        assert_docs(Profile::Valkey72, name, &expected(json));
    }
}

#[test]
fn redis_8_4_keeps_the_entries_no_release_changed() {
    for (name, json) in [
        ("getex", GETEX),
        ("client|setinfo", CLIENT_SETINFO),
        ("eval", EVAL),
        ("object|encoding", OBJECT_ENCODING),
    ] {
        assert_docs(Profile::Redis84, name, &expected(json));
    }
}

/// Every argument's `display_text`, nested ones included (None for blocks and one-ofs).
fn display_texts(args: &Reply, out: &mut Vec<Option<Reply>>) {
    let Reply::Array(args) = args else {
        panic!("{args:?}")
    };
    for a in args {
        out.push(map_field(a, "display_text").cloned());
        if let Some(inner) = map_field(a, "arguments") {
            display_texts(inner, out);
        }
    }
}

#[test]
fn redis_8_4_prints_the_later_set_and_xadd_in_the_7_2_shape() {
    assert_docs(Profile::Redis84, "set", &expected(SET_84));
    let set = command_docs(Profile::Redis84, "set");
    let xadd = command_docs(Profile::Redis84, "xadd");
    let want = expected(XADD_72);
    for field in ["summary", "since", "group", "complexity"] {
        assert_eq!(
            map_field(&xadd, field),
            map_field(&want, field),
            "xadd {field}"
        );
    }
    let history = expected(
        r#"{"history": [
        ["6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."],
        ["7.0.0", "Added support for the `<ms>-*` explicit ID form."],
        ["8.2.0", "Added the `KEEPREF`, `DELREF` and `ACKED` options."]]}"#,
    );
    assert_eq!(map_field(&xadd, "history"), map_field(&history, "history"));
    // Every argument but a block or a one-of has its display_text, as from 7.2.
    for (name, entry) in [("set", &set), ("xadd", &xadd)] {
        let mut texts = Vec::new();
        display_texts(
            map_field(entry, "arguments").expect("arguments"),
            &mut texts,
        );
        let missing = texts.iter().filter(|t| t.is_none()).count();
        assert!(texts.len() > missing && missing > 0, "{name}: {texts:?}");
    }
}

#[test]
fn redis_7_0_and_valkey_8_1_keep_their_own_servers_text() {
    let summary = |p, name| map_field(&command_docs(p, name), "summary").cloned();
    assert_eq!(
        summary(Profile::Redis70, "set"),
        Some(Reply::bulk("Set the string value of a key"))
    );
    assert_eq!(
        summary(Profile::Redis70, "object|encoding"),
        Some(Reply::bulk(
            "Inspect the internal encoding of a Redis object"
        ))
    );
    // 7.0.15 printed no display_text.
    let key = |p, name| match map_field(&command_docs(p, name), "arguments") {
        Some(Reply::Array(args)) => args[0].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        map_field(&key(Profile::Redis70, "getex"), "display_text"),
        None
    );
    assert_eq!(
        summary(Profile::Valkey81, "object|encoding"),
        Some(Reply::bulk("Returns the internal encoding of an object."))
    );
}

#[test]
fn later_releases_fixes_show_from_7_4() {
    let history = |p, name| map_field(&command_docs(p, name), "history").cloned();
    let geo = expected(
        r#"{"history": [["6.2.0", "Added the `ANY` option for `COUNT`."],
        ["7.0.0", "Added support for uppercase unit names."]]}"#,
    );
    for name in ["georadius_ro", "georadiusbymember_ro"] {
        assert_ne!(
            history(Profile::Redis72, name).as_ref(),
            map_field(&geo, "history")
        );
        assert_eq!(
            history(Profile::Redis74, name).as_ref(),
            map_field(&geo, "history")
        );
        assert_eq!(
            history(Profile::Redis84, name).as_ref(),
            map_field(&geo, "history")
        );
    }
    let entries_read = |p| match map_field(&command_docs(p, "xgroup|create"), "arguments") {
        Some(Reply::Array(args)) => map_field(args.last().expect("an argument"), "name").cloned(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        entries_read(Profile::Redis70),
        Some(Reply::bulk("entries_read"))
    );
    assert_eq!(
        entries_read(Profile::Redis72),
        Some(Reply::bulk("entries-read"))
    );
    assert_eq!(
        entries_read(Profile::Redis74),
        Some(Reply::bulk("entriesread"))
    );
    assert_eq!(
        entries_read(Profile::Redis84),
        Some(Reply::bulk("entriesread"))
    );
}
