//! EVAL's KEYS and ARGV are refilled between calls when nothing can tell (`runtime::run`):
//! each call must still see tables as fresh as Redis's, whatever the previous call did to its
//! own, and no script can keep a call's table for a later one.

use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

/// What a call sees of its tables before it changes them: `#KEYS`, `#ARGV`, each value, and
/// what a previous call may have left (a field, a metatable, a slot past the end).
const LOOK_AND_SPOIL: &str = "
local seen = {#KEYS, #ARGV, table.concat(KEYS, ','), table.concat(ARGV, ','),
  tostring(rawget(KEYS, 'x')), tostring(getmetatable(ARGV)), tostring(KEYS[#KEYS + 1]),
  tostring(ARGV[#ARGV + 1])}
local mode = ARGV[1]
if mode == 'field' then KEYS.x = 'left over'
elseif mode == 'meta' then setmetatable(ARGV, {__index = function() return 'from meta' end})
elseif mode == 'grow' then KEYS[#KEYS + 1] = 'extra'; ARGV[#ARGV + 1] = 'extra'
elseif mode == 'hole' then KEYS[1] = nil; ARGV[#ARGV] = nil
elseif mode == 'overwrite' then KEYS[1] = 'overwritten'; ARGV[1] = 'overwritten'
elseif mode == 'emptied' then KEYS.x = 1; KEYS.x = nil
end
return seen";

fn look(e: &mut Engine, sha: &str, keys: &[&str], argv: &[&str]) -> Reply {
    let n = keys.len().to_string();
    let mut args = vec!["EVALSHA", sha, n.as_str()];
    args.extend_from_slice(keys);
    args.extend_from_slice(argv);
    e.execute(1, &args)
}

/// The reply a fresh table pair of these values gives.
fn fresh(keys: &[&str], argv: &[&str]) -> Reply {
    let bulk = |s: String| Reply::bulk(s.into_bytes());
    Reply::Array(vec![
        Reply::Int(keys.len() as i64),
        Reply::Int(argv.len() as i64),
        bulk(keys.join(",")),
        bulk(argv.join(",")),
        bulk("nil".into()),
        bulk("nil".into()),
        bulk("nil".into()),
        bulk("nil".into()),
    ])
}

#[test]
fn each_call_sees_fresh_tables_whatever_the_last_one_did_to_its_own() {
    let mut e = Engine::new(Config::default());
    let sha = match e.execute(1, &["SCRIPT", "LOAD", LOOK_AND_SPOIL]) {
        Reply::Bulk(b) => String::from_utf8(b.to_vec()).expect("hex"),
        other => panic!("{other:?}"),
    };
    for mode in [
        "none",
        "field",
        "meta",
        "grow",
        "hole",
        "overwrite",
        "emptied",
    ] {
        // The spoiling call, then calls of the same shape and of other shapes.
        let shapes: [(&[&str], &[&str]); 5] = [
            (&["a", "b"], &[mode, "2"]),
            (&["c", "d"], &["none", "4"]),
            (&["e", "f"], &[mode, "6"]),
            (&["g"], &["none"]),
            (&[], &["none", "x", "y"]),
        ];
        for (keys, argv) in shapes {
            assert_eq!(
                look(&mut e, &sha, keys, argv),
                fresh(keys, argv),
                "after mode {mode}, keys {keys:?} argv {argv:?}"
            );
        }
    }
}

#[test]
fn a_script_has_nowhere_to_keep_its_tables_for_a_later_call() {
    let mut e = Engine::new(Config::default());
    for keep in [
        "saved = KEYS",
        "_G.saved = KEYS",
        "rawset(_G, 'saved', KEYS)",
        "redis.saved = KEYS",
        "string.saved = KEYS",
        "table.saved = ARGV",
        "getmetatable('').saved = ARGV",
        "rawset(getmetatable(''), 'saved', ARGV)",
        "setfenv(1, {KEYS = KEYS})",
        "getfenv(0).saved = KEYS",
    ] {
        let r = e.execute(1, &["EVAL", keep, "1", "k", "v"]);
        assert!(r.is_error(), "{keep}: {r:?}");
    }
    let r = e.execute(1, &["EVAL", "return tostring(rawget(_G, 'saved'))", "0"]);
    assert_eq!(r, Reply::bulk(&b"nil"[..]));
}
