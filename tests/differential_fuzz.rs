//! The differential fuzzer as a bounded test: generated commands (from Redis's argument
//! specifications, `tests/data/command_args.txt`) sent to redlab and to a real redis-server
//! side by side. Fails on a crash, a hang, or a reply of another type that is not in the
//! allow-list (`KNOWN_DIFFERENCES` in `redlab_server::fuzzing::differential`).
//!
//! Fixed seed and size by default; to run more:
//!   REDLAB_DIFF_FUZZ_SEED=<u64>  REDLAB_DIFF_FUZZ_CASES=<n>  cargo test --test differential_fuzz
//!   REDLAB_DIFF_FUZZ_SECONDS=600 runs cases with fresh seeds until the time is up.
//! Value differences (same type, other content) are written, grouped by command, to
//! `target/differential-fuzz-report.txt` (or REDLAB_DIFF_FUZZ_REPORT).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use redlab_client::RealRedis;
use redlab_server::fuzzing::differential::{
    known_difference, show_command, Differential, FindingKind, Outcome,
};
use redlab_server::fuzzing::generate::Choices;

const SPECS: &str = include_str!("data/command_args.txt");

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
    })
}

fn report(d: &Differential, out: &Outcome, seeds: &str) -> String {
    let mut r = String::new();
    let _ = writeln!(
        r,
        "# Differential fuzz: {} cases, {} commands, seeds {seeds}",
        out.cases, out.commands
    );
    let _ = writeln!(
        r,
        "# Findings (crash, hang, type difference): {}",
        out.findings.len()
    );
    for f in &out.findings {
        let known = known_difference(f)
            .map(|why| format!(" [known: {why}]"))
            .unwrap_or_default();
        let _ = writeln!(
            r,
            "{:?}{known}: {}\n  redis:  {}\n  redlab: {}",
            f.kind,
            show_command(&f.command),
            f.redis,
            f.redlab
        );
        for b in f.before.iter().rev().take(8).rev() {
            let _ = writeln!(r, "    after: {}", show_command(b));
        }
    }
    let mut by_name: BTreeMap<&str, Vec<_>> = BTreeMap::new();
    for v in &out.value_differences {
        by_name.entry(v.name.as_str()).or_default().push(v);
    }
    let _ = writeln!(
        r,
        "\n# Value differences (same type): {} in {} commands",
        out.value_differences.len(),
        by_name.len()
    );
    for (name, list) in &by_name {
        let _ = writeln!(r, "\n## {}: {}", name.escape_debug(), list.len());
        for v in list.iter().take(3) {
            let _ = writeln!(
                r,
                "{}\n  redis:  {}\n  redlab: {}",
                show_command(&v.command),
                v.redis,
                v.redlab
            );
            for b in v.before.iter().rev().take(6).rev() {
                let _ = writeln!(r, "    after: {}", show_command(b));
            }
        }
    }
    let never: Vec<&str> = d
        .command_names()
        .into_iter()
        .filter(|n| !out.sent.contains_key(*n))
        .collect();
    let _ = writeln!(r, "\n# Commands never sent: {}", never.join(" "));
    r
}

#[test]
fn generated_commands_match_redis() {
    let Some(real) = RealRedis::start_or_skip("differential_fuzz") else {
        return;
    };
    let server = redlab::Server::start();
    let mut d = Differential::new(SPECS, real.addr(), server.addr());
    d.trace = std::env::var("REDLAB_DIFF_FUZZ_TRACE").is_ok();
    let seed = env_u64("REDLAB_DIFF_FUZZ_SEED").unwrap_or(20261201);
    let cases = env_u64("REDLAB_DIFF_FUZZ_CASES").unwrap_or(250);
    let budget = env_u64("REDLAB_DIFF_FUZZ_SECONDS").map(Duration::from_secs);
    let start = Instant::now();
    let mut out = Outcome::default();
    let mut case = 0u64;
    loop {
        let done = match budget {
            Some(b) => start.elapsed() >= b,
            None => case >= cases,
        };
        if done {
            break;
        }
        let mut c = Choices::seeded(seed.wrapping_add(case));
        case += 1;
        if !d.run_case(&mut c, 12, &mut out) {
            break;
        }
    }
    let text = report(&d, &out, &format!("{seed}..{}", seed.wrapping_add(case)));
    let path = std::env::var("REDLAB_DIFF_FUZZ_REPORT").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/differential-fuzz-report.txt"
        )
        .to_string()
    });
    let _ = std::fs::write(&path, &text);
    eprintln!(
        "differential fuzz: {} cases, {} commands, report in {path}",
        out.cases, out.commands
    );

    let unknown: Vec<_> = out
        .findings
        .iter()
        .filter(|f| known_difference(f).is_none())
        .collect();
    let mut why = String::new();
    for f in &unknown {
        let _ = writeln!(
            why,
            "{:?}: {}\n  redis:  {}\n  redlab: {}",
            f.kind,
            show_command(&f.command),
            f.redis,
            f.redlab
        );
        for b in &f.before {
            let _ = writeln!(why, "    after: {}", show_command(b));
        }
    }
    assert!(
        unknown.is_empty(),
        "{} findings (report in {path}):\n{why}",
        unknown.len()
    );
    assert!(
        !out.findings
            .iter()
            .any(|f| f.kind == FindingKind::RedisFailed),
        "the generator made Redis itself fail"
    );
    // The run must reach the command table, not die in the first cases.
    let names = d.command_names().len();
    if budget.is_none() && cases >= 250 {
        assert!(
            out.sent.len() * 10 >= names * 9,
            "only {} of {names} commands were sent",
            out.sent.len()
        );
    }
}
