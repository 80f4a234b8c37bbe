//! What the explorer suites share: the scope of random runs, real-Redis access, and whether
//! the engine runs Lua yet.
#![allow(dead_code)]

use redlab_client::RealRedis;

/// Random schedules per suite (the issue asks for at least 10,000).
pub const RANDOM: u64 = 10_000;

/// Passing schedules replayed on real Redis per exploration (a sample keeps CI short).
pub const REAL_SAMPLE: usize = 25;

/// Whether the in-process engine runs scripts; the correct versions need it. Without it
/// the script suites say so loudly instead of passing silently.
pub fn lua_ready(test: &str) -> bool {
    let mut e = redlab::Engine::new(redlab::Config::default());
    let ok = !e.execute(1, &["EVAL", "return 1", "0"]).is_error();
    if !ok {
        eprintln!("\n!!!! {}: SKIPPED, the engine has no EVAL yet !!!!\n", test);
    }
    ok
}

pub fn real(test: &str) -> Option<RealRedis> {
    RealRedis::start_or_skip(test)
}

/// Asserts a caught counterexample reproduced on real Redis (when one is running).
#[track_caller]
pub fn assert_reproduced(f: &redlab_client::explore::Failure, real: &Option<RealRedis>) {
    if real.is_some() {
        assert!(f.reproduced_on_real_redis(), "the counterexample must reproduce on real Redis:\n{}", f);
    }
}
