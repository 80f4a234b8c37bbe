//! The differential suite: every case file in tests/conformance/ runs against redlab and
//! against a real server started on a free port; replies must match byte for byte, except for
//! the deliberate differences listed in tests/conformance/DIFFERENCES.md.
//!
//! A case file runs once per compatibility profile it declares, each against that profile's
//! reference server: a line `#! profiles: redis-7.0 valkey-8.1` runs it against redis-server
//! 7.0.15 (redlab answering as redis-7.0) and against valkey-server 8.1 (redlab answering as
//! valkey-8.1). Without the line a file runs under redis-7.0 only. A known difference under a
//! profile other than redis-7.0 is listed in DIFFERENCES.md as `profile: case name`.
//! `REDLAB_CONFORMANCE_PROFILE=valkey-8.1` runs every file under that one profile instead
//! (to survey a profile before declaring it).

mod support;

use std::path::Path;

use redlab_client::RealRedis;
use support::cases;

/// The profiles whose reference server this machine can run.
const REFERENCES: &[&str] = &["redis-7.0", "valkey-8.1"];

/// The profiles `text` declares (`#! profiles: ...`), redis-7.0 when it declares none.
fn declared_profiles(text: &str) -> Vec<String> {
    let declared: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#! profiles:"))
        .flat_map(|rest| rest.split([' ', ',']))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    if declared.is_empty() {
        vec!["redis-7.0".to_string()]
    } else {
        declared
    }
}

fn run_group(group: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let text = std::fs::read_to_string(dir.join(format!("{group}.txt"))).expect("case file");
    let known = cases::known_differences(
        &std::fs::read_to_string(dir.join("DIFFERENCES.md")).unwrap_or_default(),
    );
    let parsed = cases::parse(&text);
    assert!(!parsed.is_empty(), "{group}.txt has no cases");
    let profiles = match std::env::var("REDLAB_CONFORMANCE_PROFILE") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => declared_profiles(&text),
    };
    let mut failures = Vec::new();
    for profile in &profiles {
        assert!(
            REFERENCES.contains(&profile.as_str()),
            "{group}.txt declares profile {profile}, which has no reference server here"
        );
        if let Some(report) = run_profile(group, &parsed, profile, &known) {
            failures.push(report);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The reference server for `profile`, or None (with the reason told) when it is missing
/// outside CI.
fn reference(group: &str, profile: &str) -> Option<RealRedis> {
    if profile == "redis-7.0" {
        return RealRedis::start_or_skip(&format!("conformance::{group}"));
    }
    support::valkey_or_skip(&format!("conformance::{group} under {profile}"))
}

/// Runs the cases under one profile; the failure report when some differ unexpectedly.
fn run_profile(
    group: &str,
    parsed: &[cases::Case],
    profile: &str,
    known: &[String],
) -> Option<String> {
    let reference = reference(group, profile)?;
    let compat = redlab::Profile::parse(profile).expect("a profile redlab knows");
    let redlab = redlab::Server::builder().compat(compat).start();
    let mismatches = cases::run_cases(parsed, reference.addr(), redlab.addr());
    let listed = |case: &str| {
        if profile == "redis-7.0" {
            known.iter().any(|k| k == case)
        } else {
            known.iter().any(|k| *k == format!("{profile}: {case}"))
        }
    };
    let (expected, unexpected): (Vec<_>, Vec<_>) =
        mismatches.into_iter().partition(|m| listed(&m.case));
    for m in &expected {
        eprintln!("known difference under {profile} (DIFFERENCES.md): {m}");
    }
    eprintln!(
        "{group} [{profile}]: {} cases, {} differ, {} of them known",
        parsed.len(),
        unexpected.len() + expected.len(),
        expected.len()
    );
    if unexpected.is_empty() {
        return None;
    }
    let report: Vec<String> = unexpected.iter().map(|m| m.to_string()).collect();
    Some(format!(
        "{} of {} {group} cases differ from the {profile} reference:\n{}",
        unexpected.len(),
        parsed.len(),
        report.join("\n")
    ))
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
    monitor,
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
    eviction,
    compat_valkey,
    debug_digest,
    encoding,
    latency,
    maxclients
);
