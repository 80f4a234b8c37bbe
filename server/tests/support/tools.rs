//! Finding Redis's command-line tools for tests that drive a server with them. Shared by the
//! server crate's tests and, through `#[path]`, by the facade's tests/clients.rs: one copy of
//! the skip rule.

use std::path::PathBuf;

/// The first `redis-cli` on PATH. When there is none, `what` (the tests that need it) is
/// reported as skipped, and under CI (`CI=true`) that is a failure instead.
pub fn redis_cli_or_skip(what: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join("redis-cli"))
        .find(|p| p.is_file());
    if found.is_none() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("redis-cli is not installed and CI=true");
        }
        eprintln!("\n!!!! redis-cli not installed: {what} SKIPPED !!!!\n");
    }
    found
}
