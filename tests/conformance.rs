//! The differential suite: every case file in tests/conformance/ runs against redlab and
//! against a real redis-server started on a free port; replies must match byte for byte,
//! except for the deliberate differences listed in tests/conformance/DIFFERENCES.md.

mod support;

use std::path::Path;

use redlab_client::RealRedis;
use support::cases;

fn run_group(group: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let text = std::fs::read_to_string(dir.join(format!("{group}.txt"))).expect("case file");
    let known = cases::known_differences(
        &std::fs::read_to_string(dir.join("DIFFERENCES.md")).unwrap_or_default(),
    );
    let parsed = cases::parse(&text);
    assert!(!parsed.is_empty(), "{group}.txt has no cases");
    let Some(redis) = RealRedis::start_or_skip(&format!("conformance::{group}")) else {
        return;
    };
    let redlab = redlab::Server::start();
    let mismatches = cases::run_cases(&parsed, redis.addr(), redlab.addr());
    let (expected, unexpected): (Vec<_>, Vec<_>) = mismatches
        .into_iter()
        .partition(|m| known.contains(&m.case));
    for m in &expected {
        eprintln!("known difference (DIFFERENCES.md): {m}");
    }
    eprintln!(
        "{group}: {} cases, {} differ, {} of them known",
        parsed.len(),
        unexpected.len() + expected.len(),
        expected.len()
    );
    if !unexpected.is_empty() {
        let report: Vec<String> = unexpected.iter().map(|m| m.to_string()).collect();
        panic!(
            "{} of {} {group} cases differ from Redis:\n{}",
            unexpected.len(),
            parsed.len(),
            report.join("\n")
        );
    }
}

macro_rules! groups {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run_group(stringify!($name)); })*

        /// Every group this file runs, for `every_case_file_runs`.
        const GROUPS: &[&str] = &[$(stringify!($name)),*];
    };
}

/// A case file that no test runs checks nothing while looking as if it did: every `*.txt` in
/// tests/conformance must be one of the groups above, and every group must have its file.
#[test]
fn every_case_file_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/conformance")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".txt").map(str::to_string)
        })
        .collect();
    files.sort();
    let not_run: Vec<&String> = files
        .iter()
        .filter(|f| !GROUPS.contains(&f.as_str()))
        .collect();
    assert!(
        not_run.is_empty(),
        "case files no test runs (add them to groups! in tests/conformance.rs): {not_run:?}"
    );
    let missing: Vec<&&str> = GROUPS
        .iter()
        .filter(|g| !files.iter().any(|f| f == *g))
        .collect();
    assert!(
        missing.is_empty(),
        "groups without a case file: {missing:?}"
    );
}

groups!(
    basics,
    protocol,
    strings,
    bitmap,
    list,
    hash,
    set,
    keys,
    connection,
    transactions,
    pubsub,
    notify,
    server,
    list_resp3,
    server_resp3,
    zset,
    scripting,
    scripting_libs,
    functions,
    scripting_cmds,
    scripting_oom,
    hyperloglog,
    geo,
    sort,
    stream,
    stream_groups,
    stream_resp3,
    command,
    server_observe,
    acl,
    tracking,
    pause,
    eviction
);
