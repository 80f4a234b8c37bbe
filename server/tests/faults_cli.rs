//! Every fault and the clock, driven from redis-cli against the standalone binary: what a
//! test suite in any language does.

mod support;

use std::path::PathBuf;
use std::process::Command;

fn redis_cli() -> Option<PathBuf> {
    support::tools::redis_cli_or_skip("fault CLI tests")
}

/// Runs redis-cli with these arguments; returns (stdout, success).
fn cli(port: u16, args: &[&str]) -> (String, bool) {
    let out = Command::new(redis_cli().unwrap())
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text.trim().to_string(), out.status.success())
}

#[test]
fn every_fault_from_redis_cli() {
    if redis_cli().is_none() {
        return;
    }
    let s = support::start(&[]);
    let p = s.port;

    // The clock.
    assert_eq!(cli(p, &["REDLAB.CLOCK", "FREEZE"]).0, "OK");
    assert_eq!(cli(p, &["REDLAB.CLOCK", "SET", "1700000000000"]).0, "OK");
    assert_eq!(cli(p, &["SET", "lease", "a", "PX", "1000"]).0, "OK");
    assert_eq!(cli(p, &["REDLAB.CLOCK", "ADVANCE", "1000"]).0, "OK");
    // At its deadline the key still lives (Redis's `now > when`); a millisecond later not.
    assert_eq!(cli(p, &["PTTL", "lease"]).0, "0");
    assert_eq!(cli(p, &["REDLAB.CLOCK", "ADVANCE", "1"]).0, "OK");
    assert_eq!(cli(p, &["EXISTS", "lease"]).0, "0");
    assert_eq!(cli(p, &["TIME"]).0, "1700000001\n1000");

    // An error instead of the command.
    assert_eq!(
        cli(
            p,
            &[
                "REDLAB.FAULT",
                "ADD",
                "COMMAND",
                "GET",
                "TIMES",
                "1",
                "ERROR",
                "LOADING Redis is loading the dataset in memory"
            ]
        )
        .0,
        "1"
    );
    assert_eq!(
        cli(p, &["GET", "k"]).0,
        "LOADING Redis is loading the dataset in memory"
    );
    assert_eq!(cli(p, &["GET", "k"]).0, "");

    // Close before: the write is lost.
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "KEY",
            "before*",
            "TIMES",
            "1",
            "CLOSE-BEFORE",
        ],
    );
    assert!(cli(p, &["SET", "before", "1"]).0.contains("closed"));
    assert_eq!(cli(p, &["EXISTS", "before"]).0, "0");

    // Close after: the write happened, the client never heard.
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "KEY",
            "after*",
            "TIMES",
            "1",
            "CLOSE-AFTER",
        ],
    );
    assert!(cli(p, &["SET", "after", "1"]).0.contains("closed"));
    assert_eq!(cli(p, &["GET", "after"]).0, "1");

    // Delay: the reply still arrives.
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "COMMAND",
            "ECHO",
            "TIMES",
            "1",
            "DELAY",
            "50",
        ],
    );
    assert_eq!(cli(p, &["ECHO", "late"]).0, "late");

    // Truncated reply.
    cli(p, &["SET", "big", "0123456789"]);
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "KEY",
            "big",
            "COMMAND",
            "GET",
            "TIMES",
            "1",
            "TRUNCATE",
            "5",
        ],
    );
    let (out, _) = cli(p, &["GET", "big"]);
    assert!(!out.contains("0123456789"), "{out}");

    // Stall with a frozen clock: time moves by the stall, the lease runs out.
    assert_eq!(cli(p, &["SET", "lock", "holder", "PX", "1000"]).0, "OK");
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "COMMAND",
            "PEXPIRE",
            "TIMES",
            "1",
            "STALL",
            "1200",
        ],
    );
    assert_eq!(cli(p, &["PEXPIRE", "lock", "1000"]).0, "0");

    // Script cache flush: EVALSHA gets NOSCRIPT.
    let (sha, _) = cli(p, &["SCRIPT", "LOAD", "return 1"]);
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "COMMAND",
            "EVALSHA",
            "TIMES",
            "1",
            "FLUSH-SCRIPTS",
        ],
    );
    assert!(cli(p, &["EVALSHA", &sha, "0"]).0.starts_with("NOSCRIPT"));

    // Rollback to a mark: the writes after it are lost.
    cli(p, &["SET", "a", "1"]);
    assert_eq!(cli(p, &["REDLAB.FAULT", "MARK"]).0, "OK");
    cli(p, &["SET", "a", "2"]);
    cli(p, &["SET", "b", "2"]);
    cli(
        p,
        &[
            "REDLAB.FAULT",
            "ADD",
            "COMMAND",
            "MGET",
            "TIMES",
            "1",
            "ROLLBACK",
        ],
    );
    assert_eq!(
        cli(p, &["MGET", "a", "b"]).0,
        "1",
        "a is back to 1 and b is gone (an empty line)"
    );

    // Listing, logging, removing.
    let (list, _) = cli(p, &["REDLAB.FAULT", "LIST"]);
    assert!(list.contains("action=rollback"), "{list}");
    let (log, _) = cli(p, &["REDLAB.FAULT", "LOG"]);
    assert!(log.contains("command=MGET a b"), "{log}");
    assert_eq!(cli(p, &["REDLAB.FAULT", "CLEAR"]).0, "OK");
    assert_eq!(cli(p, &["REDLAB.FAULT", "LIST"]).0, "");
}
