//! The check behind "every unsafe block says why it is sound": each line of `server/` and
//! `client/` that opens an unsafe block has a SAFETY comment on it or in the comment
//! lines right above it (the statement it belongs to may span lines between the two). So a
//! `grep -rn` of those openings over server and client counts as many lines as there are
//! SAFETY comments next to them.

use std::path::{Path, PathBuf};

/// What grep looks for, and the comment that justifies it, spelled so that this file matches
/// neither and the two counts over the tree stay equal.
const NEEDLE: &str = concat!("unsafe", " {");
const MARK: &str = concat!("// SAFE", "TY:");

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Whether the unsafe block opened on line `i` has its SAFETY comment.
fn justified(lines: &[&str], i: usize) -> bool {
    if lines[i].contains(MARK) {
        return true;
    }
    // Up through the statement's own lines (at most a few) and the comment block above it.
    let mut j = i;
    let mut code_lines = 0;
    while j > 0 {
        j -= 1;
        let t = lines[j].trim_start();
        if t.starts_with(MARK) {
            return true;
        }
        if t.starts_with("//") {
            continue;
        }
        code_lines += 1;
        if code_lines > 3
            || t.is_empty()
            || t.ends_with(';')
            || t.ends_with('{')
            || t.ends_with('}')
        {
            return false;
        }
    }
    false
}

/// Every `file:line` under `roots` whose unsafe block lacks a SAFETY comment, and how many
/// blocks there are.
fn unjustified(roots: &[PathBuf]) -> (Vec<String>, usize) {
    let mut all = Vec::new();
    for r in roots {
        files(r, &mut all);
    }
    let (mut missing, mut blocks) = (Vec::new(), 0);
    for path in all {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for i in 0..lines.len() {
            if lines[i].contains(NEEDLE) {
                blocks += 1;
                if !justified(&lines, i) {
                    missing.push(format!("{}:{}", path.display(), i + 1));
                }
            }
        }
    }
    (missing, blocks)
}

#[test]
fn every_unsafe_block_says_why_it_is_sound() {
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let roots = [server.clone(), server.join("../client")];
    let (missing, blocks) = unjustified(&roots);
    assert!(
        blocks > 0,
        "no unsafe blocks found: is the search looking in the right place?"
    );
    assert!(
        missing.is_empty(),
        "unsafe blocks without a SAFETY comment:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_audit_catches_a_block_without_a_comment() {
    let dir = std::env::temp_dir().join(format!("redlab-safety-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = format!(
        "fn a() {{\n    {MARK} fine.\n    {NEEDLE} x() }};\n}}\n\nfn b() {{\n    let y = 1;\n    {NEEDLE} x() }};\n}}\n"
    );
    std::fs::write(dir.join("case.rs"), src).unwrap();
    let (missing, blocks) = unjustified(std::slice::from_ref(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(blocks, 2);
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].ends_with("case.rs:8"), "{missing:?}");
}
