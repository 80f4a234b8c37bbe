//! The pattern scripts share their validation helpers through `scripts/prelude.lua`.
//!
//! Redis runs a script as one chunk with no `require`, so each script carries a copy of the
//! helpers it uses between `-- prelude: <names>` and `-- end prelude`. This test is the splice
//! step: it fails while a committed script holds a copy that differs from the prelude, and
//! with `REDLAB_BLESS=1` it rewrites the copies instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const START: &str = "-- prelude: ";
const END: &str = "-- end prelude (a copy of scripts/prelude.lua: EVAL has no require; client/tests/script_prelude.rs keeps it current)";
const HELPER: &str = "-- helper: ";

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts")
}

/// The prelude's helpers by name: each runs from its `-- helper: NAME` line to the next one.
fn helpers(prelude: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in prelude.lines() {
        if let Some(name) = line.strip_prefix(HELPER) {
            if let Some((n, body)) = current.take() {
                out.insert(n, body.join("\n").trim().to_string());
            }
            current = Some((name.trim().to_string(), Vec::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push(line);
        }
    }
    if let Some((n, body)) = current {
        out.insert(n, body.join("\n").trim().to_string());
    }
    out
}

/// The script as it must be: every prelude region holding exactly the named helpers.
fn spliced(script: &str, helpers: &BTreeMap<String, String>, file: &str) -> String {
    let mut out = String::new();
    let mut lines = script.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(names) = line.strip_prefix(START) else {
            continue;
        };
        for name in names.split(',').map(str::trim) {
            let body = helpers
                .get(name)
                .unwrap_or_else(|| panic!("{file}: no helper '{name}' in scripts/prelude.lua"));
            out.push_str(body);
            out.push('\n');
        }
        // Skip the old copy.
        loop {
            match lines.next() {
                Some(l) if l == END => break,
                Some(_) => {}
                None => panic!("{file}: '{START}{names}' has no '{END}' line"),
            }
        }
        out.push_str(END);
        out.push('\n');
    }
    out
}

#[test]
fn every_script_holds_the_current_prelude() {
    let dir = scripts_dir();
    let helpers =
        helpers(&std::fs::read_to_string(dir.join("prelude.lua")).expect("scripts/prelude.lua"));
    assert!(
        helpers.contains_key("bounded_positive") && helpers.contains_key("u63"),
        "helpers found: {:?}",
        helpers.keys()
    );
    let bless = std::env::var_os("REDLAB_BLESS").is_some();
    let mut stale = Vec::new();
    let mut users = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if file == "prelude.lua" || path.extension().is_none_or(|e| e != "lua") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains(START) {
            users += 1;
        }
        let want = spliced(&text, &helpers, &file);
        if want != text {
            if bless {
                std::fs::write(&path, want).unwrap();
            } else {
                stale.push(file);
            }
        }
    }
    assert!(users >= 8, "only {users} scripts use the prelude");
    assert!(stale.is_empty(), "scripts with a stale prelude copy: {stale:?}; run REDLAB_BLESS=1 cargo test -p redlab-client --test script_prelude");
}

#[test]
fn splicing_replaces_an_old_copy_and_keeps_the_rest() {
    let helpers = helpers(
        "-- intro\n-- helper: a\nlocal function a() return 1 end\n\n-- helper: b\nlocal B = 2\n",
    );
    assert_eq!(helpers["a"], "local function a() return 1 end");
    assert_eq!(helpers["b"], "local B = 2");
    let script =
        "-- top\n-- prelude: a, b\nlocal function a() return 0 end\n-- end prelude (a copy of scripts/prelude.lua: EVAL has no require; client/tests/script_prelude.rs keeps it current)\nreturn a()\n";
    assert_eq!(
        spliced(script, &helpers, "t.lua"),
        "-- top\n-- prelude: a, b\nlocal function a() return 1 end\nlocal B = 2\n-- end prelude (a copy of scripts/prelude.lua: EVAL has no require; client/tests/script_prelude.rs keeps it current)\nreturn a()\n"
    );
}
