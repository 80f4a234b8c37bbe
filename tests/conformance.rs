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
    maxclients,
    lfu
);

/// The case files that also run against one-node clusters (issue 19, point 6): the data
/// families and scripting, whose replies a cluster node gives as a standalone server does.
/// Files about the server itself (INFO, CONFIG, CLIENT, MONITOR, ACL, latency...) describe a
/// standalone process and stay out.
const CLUSTER_GROUPS: &[&str] = &[
    "basics",
    "strings",
    "bitmap",
    "list",
    "hash",
    "set",
    "zset",
    "keys",
    "transactions",
    "scripting",
    "scripting_libs",
    "functions",
    "hyperloglog",
    "geo",
    "sort",
    "stream",
    "stream_groups",
];

/// The declared rule for a case that cannot run in cluster mode: a line that uses another
/// database (SELECT, SWAPDB, MOVE, COPY ... DB), or a line whose keys (as the reference
/// node's COMMAND GETKEYS names them) hash to more than one slot. Such a case is skipped and
/// named in the output, never dropped silently.
fn cluster_skip_reason(case: &cases::Case, probe: &mut support::resp::RawConn) -> Option<String> {
    for line in &case.lines {
        let Some(name) = line.args.first() else {
            continue;
        };
        let name = String::from_utf8_lossy(name).to_ascii_uppercase();
        let db_arg = line.args.iter().any(|a| a.eq_ignore_ascii_case(b"db"));
        if ["SELECT", "SWAPDB", "MOVE"].contains(&name.as_str()) || (name == "COPY" && db_arg) {
            return Some(format!(
                "line {}: {} (one database in cluster mode)",
                line.lineno, name
            ));
        }
        if line.mods.iter().any(|m| m == "raw") {
            continue;
        }
        let mut getkeys = vec![b"COMMAND".to_vec(), b"GETKEYS".to_vec()];
        getkeys.extend(line.args.iter().cloned());
        probe.send(&getkeys);
        let Some(frame) = probe.read_frame(std::time::Duration::from_secs(10)) else {
            continue;
        };
        let Some((_, keys)) = support::resp::elements(&frame) else {
            continue;
        };
        let mut slots = std::collections::BTreeSet::new();
        for key in keys {
            // A bulk frame: `$<len>\r\n<key>\r\n`.
            let Some(start) = key.windows(2).position(|w| w == b"\r\n") else {
                continue;
            };
            let key = key[start + 2..key.len() - 2].to_vec();
            probe.send(&[b"CLUSTER".to_vec(), b"KEYSLOT".to_vec(), key]);
            if let Some(slot) = probe.read_frame(std::time::Duration::from_secs(10)) {
                slots.insert(slot);
            }
        }
        if slots.len() > 1 {
            return Some(format!(
                "line {}: {} over keys of {} slots",
                line.lineno,
                name,
                slots.len()
            ));
        }
    }
    None
}

/// A real redis-server cluster of one node owning all 16384 slots, or None outside CI when
/// redis-server is missing.
fn real_one_node_cluster() -> Option<RealRedis> {
    let real = match RealRedis::start_with(&["--cluster-enabled", "yes"]) {
        Ok(r) => r,
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("conformance in cluster mode: {e}, and CI=true: the comparison cannot be skipped");
            }
            eprintln!("\n!!!! conformance in cluster mode: SKIPPED, {e} !!!!\n");
            return None;
        }
    };
    let mut c = support::resp::RawConn::connect(real.addr());
    let wait = std::time::Duration::from_secs(30);
    assert_eq!(
        c.call(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"], wait),
        "+OK\\r\\n"
    );
    // The node says ok once it has looked at its slots; no time bound beyond a hang guard.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        if c.call(&["CLUSTER", "INFO"], wait)
            .contains("cluster_state:ok")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the one-node cluster never came up"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Some(real)
}

/// The single-server differential suite against a one-node redlab cluster and a one-node
/// redis-server cluster, byte for byte.
#[test]
fn single_server_cases_in_a_one_node_cluster() {
    let Some(real) = real_one_node_cluster() else {
        return;
    };
    let cluster = redlab::Cluster::builder().primaries(1).start();
    let mine = cluster.server(0).addr();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let known = cases::known_differences(
        &std::fs::read_to_string(dir.join("DIFFERENCES.md")).unwrap_or_default(),
    );
    // The rule is judged first, on a connection of its own that is closed before the cases
    // run (each case starts with the reference's only client).
    let mut probe = support::resp::RawConn::connect(real.addr());
    let mut total = 0;
    let mut groups = Vec::new();
    for group in CLUSTER_GROUPS {
        let text = std::fs::read_to_string(dir.join(format!("{group}.txt"))).expect("case file");
        let parsed = cases::parse(&text);
        total += parsed.len();
        let mut kept = Vec::new();
        for case in parsed {
            match cluster_skip_reason(&case, &mut probe) {
                Some(why) => eprintln!("cluster mode: skipped {group}: {}: {why}", case.name),
                None => kept.push(case),
            }
        }
        groups.push((group, kept));
    }
    drop(probe);
    let (mut ran, mut failures) = (0, Vec::new());
    for (group, kept) in &groups {
        ran += kept.len();
        let mismatches = cases::run_cases(kept, real.addr(), mine);
        let listed = |case: &str| {
            known
                .iter()
                .any(|k| *k == format!("cluster: {case}") || k == case)
        };
        for m in mismatches {
            if listed(&m.case) {
                eprintln!("known difference in cluster mode (DIFFERENCES.md): {m}");
            } else {
                failures.push(format!("{group}: {m}"));
            }
        }
    }
    eprintln!(
        "conformance in cluster mode: {} cases in {} files, {} ran, {} skipped by the rule, {} differ",
        total,
        CLUSTER_GROUPS.len(),
        ran,
        total - ran,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} cases differ in cluster mode:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
