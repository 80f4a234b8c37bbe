//! Memory is given back: after Lua memory bombs, and after a huge SETRANGE/SETBIT offset,
//! the server's used_memory and this process's resident size return near their baseline.
//!
//! Resident size is a whole-process figure, so these checks run in their own test binary
//! with `harness = false` (see the root Cargo.toml): the server under test is the only thing
//! running in the process, and no concurrently running test can move the number. Each
//! check runs after the previous one finished and takes its own baseline.

mod support;

use std::time::Duration;

use support::resp::RawConn;

const T: Duration = Duration::from_secs(30);

fn cmd(c: &mut RawConn, args: &[&str]) -> String {
    c.call(args, T)
}

fn eval(c: &mut RawConn, script: &str) -> String {
    c.call(&["EVAL", script, "1", "k", "v"], T)
}

/// Bytes resident in this process: the test thread and the server under test, nothing else.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn used_memory(c: &mut RawConn) -> u64 {
    let info = cmd(c, &["INFO", "memory"]);
    info.split("\\r\\n")
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.parse().ok())
        .expect("INFO memory has used_memory")
}

/// Memory bombs: Redis's Lua has no heap limit (it would build the gigabyte), redlab's has
/// one, so the script fails with "not enough memory" and everything is given back.
fn memory_bombs_fail_as_script_errors_and_memory_returns() {
    let mut config = redlab::Config::default();
    config.lua_memory_limit = 64 << 20;
    let server = redlab::Server::builder().config(config).start();
    let mut c = RawConn::connect(server.addr());
    let mut bystander = RawConn::connect(server.addr());
    let bombs = [
        ("string.rep bomb", "return #string.rep('x', 1e9)"),
        ("string.rep bomb in pcall", "local ok, e = pcall(string.rep, 'x', 1e9) return #string.rep('y', 1e9)"),
        ("doubling concat", "local s = 'x' for i = 1, 40 do s = s .. s end return #s"),
        ("table growth", "local t = {} for i = 1, 1e9 do t[i] = i end return #t"),
        ("table of strings", "local t = {} for i = 1, 1e9 do t[i] = tostring(i) .. 'padding padding' end return #t"),
        ("table.concat bomb", "local t = {} for i = 1, 1e6 do t[i] = string.rep('x', 1000) end return #table.concat(t)"),
        ("closures", "local t = {} for i = 1, 1e9 do t[i] = function() return i end end return #t"),
    ];
    // Warm up the Lua state and the allocator so the baseline includes them.
    assert_eq!(eval(&mut c, "return 1"), ":1\\r\\n");
    let base_used = used_memory(&mut c);
    let base_rss = rss();
    for (name, script) in bombs {
        let got = eval(&mut c, script);
        assert!(
            got.starts_with("-ERR Error running script"),
            "{name}: {got}"
        );
        assert!(got.contains("not enough memory"), "{name}: {got}");
        // Given back at once, not a second later when the allocator next looks: a server
        // nobody talks to after a bomb would otherwise keep it.
        let now = rss();
        assert!(
            now < base_rss + (64 << 20),
            "RSS {base_rss} -> {now} right after {name}: its memory was not given back"
        );
        assert_eq!(
            cmd(&mut bystander, &["PING"]),
            "+PONG\\r\\n",
            "after {name}, another client is not served"
        );
        assert_eq!(
            eval(&mut c, "return 2"),
            ":2\\r\\n",
            "after {name}, scripts no longer run"
        );
    }
    // A bomb the script catches: the script succeeds, and the memory goes back all the same.
    assert_eq!(
        eval(
            &mut c,
            "local ok = pcall(string.rep, 'x', 1e9) return ok and 0 or 1"
        ),
        ":1\\r\\n"
    );
    let now = rss();
    assert!(
        now < base_rss + (64 << 20),
        "RSS {base_rss} -> {now} right after a caught bomb: its memory was not given back"
    );
    let used = used_memory(&mut c);
    assert!(
        used < base_used + (8 << 20),
        "used_memory {base_used} -> {used}"
    );
    let now = rss();
    assert!(
        now < base_rss + (128 << 20),
        "RSS {base_rss} -> {now}: the bombs' memory was not given back"
    );
}

fn memory_of_a_huge_offset_returns_when_the_key_goes() {
    let server = redlab::Server::start();
    let mut c = RawConn::connect(server.addr());
    let base_used = used_memory(&mut c);
    let base_rss = rss();
    for _ in 0..3 {
        assert_eq!(
            cmd(&mut c, &["SETRANGE", "s", "100000000", "x"]),
            ":100000001\\r\\n"
        );
        assert_eq!(cmd(&mut c, &["SETBIT", "b", "800000000", "1"]), ":0\\r\\n");
        assert!(
            used_memory(&mut c) > base_used + 150_000_000,
            "used_memory counts the big strings"
        );
        assert_eq!(cmd(&mut c, &["DEL", "s", "b"]), ":2\\r\\n");
    }
    let used = used_memory(&mut c);
    assert!(
        used < base_used + (1 << 20),
        "used_memory {base_used} -> {used}"
    );
    let now = rss();
    assert!(now < base_rss + (64 << 20), "RSS {base_rss} -> {now}");
    assert_eq!(cmd(&mut c, &["PING"]), "+PONG\\r\\n");
}

const TESTS: &[(&str, fn())] = &[
    (
        "memory_bombs_fail_as_script_errors_and_memory_returns",
        memory_bombs_fail_as_script_errors_and_memory_returns,
    ),
    (
        "memory_of_a_huge_offset_returns_when_the_key_goes",
        memory_of_a_huge_offset_returns_when_the_key_goes,
    ),
];

/// One test at a time on the main thread, in the libtest output format so `.ci/stress` and
/// readers of a CI log find failures the usual way. Accepts libtest's `--list` and a name
/// filter; other flags are ignored.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in TESTS {
            println!("{name}: test");
        }
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let chosen: Vec<_> = TESTS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!("\nrunning {} tests", chosen.len());
    let mut failed = Vec::new();
    for (name, test) in &chosen {
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    let result = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {result}. {} passed; {} failed; 0 ignored; 0 measured; 0 filtered out\n",
        chosen.len() - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        std::process::exit(101);
    }
}
