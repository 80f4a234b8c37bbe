//! redis-server's command line: `[config-file] [--name value ...]`, `-v`, `--help`.
//!
//! As in Redis, the options are appended to the config file's text, one directive a line,
//! so a bad option is reported with the same FATAL CONFIG FILE ERROR block and line number
//! a real redis-server prints.

use redlab_server::config::params::{self, Kind};
use redlab_server::Config;

/// What `main` must do.
#[derive(Debug)]
pub enum Action {
    /// Boxed: a Config is large and the other variants are a string.
    Run(Box<Config>),
    /// Print to stdout and exit 0.
    Print(String),
    /// Print to stderr and exit 1.
    Fail(String),
}

/// Parameters redlab acts on; every other one is stored (CONFIG GET shows it) and ignored.
const USED: &[&str] = &[
    "port",
    "bind",
    "requirepass",
    "databases",
    "maxmemory",
    "maxmemory-policy",
    "busy-reply-threshold",
    "notify-keyspace-events",
    "proto-max-bulk-len",
    "protected-mode",
    "cluster-enabled",
    "cluster-port",
    "cluster-node-timeout",
    "cluster-require-full-coverage",
    "maxclients",
    "latency-monitor-threshold",
    "latency-tracking",
    "latency-tracking-info-percentiles",
    // The RDB file on disk (`persist`).
    "save",
    "dir",
    "dbfilename",
    "key-load-delay",
    "loading-process-events-interval-bytes",
    "shutdown-on-sigterm",
    "shutdown-on-sigint",
];

/// Directives of redis.conf that are not parameters; accepted and ignored.
const IGNORED_DIRECTIVES: &[&str] = &["include", "loadmodule", "sentinel"];

/// redis-server 7.0.15's save points when its configuration has no `save` line.
pub const DEFAULT_SAVE: &str = "3600 1 300 100 60 10000";

pub fn version_line(redis_version: &str) -> String {
    format!(
        "Redis server v={} sha=00000000:0 malloc=libc bits=64 build={}",
        redis_version,
        redlab_server::config::BUILD_ID
    )
}

pub fn usage() -> String {
    let lines = [
        "Usage: ./redlab-server [/path/to/redis.conf] [options]",
        "       ./redlab-server -v or --version",
        "       ./redlab-server -h or --help",
        "",
        "Examples:",
        "       ./redlab-server (run the server with default conf)",
        "       ./redlab-server /etc/redis/6379.conf",
        "       ./redlab-server --port 7777",
        "       ./redlab-server /etc/myredis.conf --loglevel verbose",
        "       ./redlab-server --compat valkey-8.1 (answer as Valkey 8.1; also redis-7.0 (default),",
        "         redis-7.2, redis-7.4, redis-8.0, redis-8.2, redis-8.4, valkey-7.2)",
        "",
    ];
    lines.join("\n")
}

/// The name `read_file` is given for standard input.
pub const STDIN: &str = "-";

/// Parses the arguments after the program name. `read_file` loads a config file, or the
/// configuration on standard input when given `STDIN` (a parameter so tests need no files).
pub fn parse(args: &[String], read_file: &dyn Fn(&str) -> Result<String, String>) -> Action {
    let mut config = Config {
        port: 6379,
        // redis-server's own default: every address, protected mode refusing outside
        // clients while no password is set (in-process servers keep to the loopback).
        bind: "* -::*".into(),
        // enable-debug-command rules DEBUG here, as in redis-server.
        debug_command_open: false,
        // The RDB file is read at start and written on shutdown, as redis-server does.
        rdb_on_disk: true,
        // The process's OOM score follows oom-score-adj, as redis-server's does.
        manages_process: true,
        ..Config::default()
    };
    // redis-server's save points when no `save` line says otherwise (the first one replaces
    // them). In-process servers keep Config's "" (see DIFFERENCES.md).
    config
        .set_by_name("save", DEFAULT_SAVE)
        .expect("Redis's default save points are valid");
    let mut rest = args;
    if let Some(first) = rest.first() {
        match first.as_str() {
            "-v" | "--version" => return Action::Print(version_line(&config.redis_version)),
            "-h" | "--help" => return Action::Fail(usage()),
            _ => {}
        }
    }
    let mut text = String::new();
    // redis-server reads its configuration from standard input when the first or the last
    // argument is "-" (a "-" elsewhere is an option's value). That text follows the config
    // file's and comes before the options.
    if let Some(first) = rest.first() {
        if !first.starts_with('-') {
            match read_file(first) {
                Ok(t) => {
                    text = t;
                    // Redis keeps the absolute path: CONFIG REWRITE writes there even after
                    // the working directory changes (`dir`).
                    config.config_file = Some(
                        std::path::absolute(first)
                            .map(|p| p.display().to_string())
                            .unwrap_or_else(|_| first.clone()),
                    );
                }
                Err(e) => {
                    return Action::Fail(format!(
                        "Fatal error, can't open config file '{}': {}",
                        first, e
                    ))
                }
            }
            rest = &rest[1..];
        }
    }
    let mut options: Vec<String> = rest.to_vec();
    let stdin_at = if config.config_file.is_none() && options.first().is_some_and(|a| a == STDIN) {
        Some(0)
    } else {
        options
            .iter()
            .rposition(|a| a == STDIN)
            .filter(|&i| i + 1 == options.len())
    };
    if let Some(at) = stdin_at {
        tracing::warn!("Reading config from stdin");
        match read_file(STDIN) {
            Ok(t) => text.push_str(&t),
            Err(e) => {
                return Action::Fail(format!("Fatal error, can't read config from stdin: {e}"))
            }
        }
        options.remove(at);
    }
    text.push('\n');
    text.push_str(&options_text(&options));
    match load(&mut config, &text) {
        Ok(()) => Action::Run(Box::new(config)),
        Err(e) => Action::Fail(e),
    }
}

/// The command line's options as config lines, as redis-server 7.0.15 builds them: each
/// `--name` starts a line and the arguments after it are appended quoted. An argument
/// starting with `--` is taken as a value (not a new option) when the option before it has
/// no value yet, so `--port --bla` reads `port "--bla"` and the error names the option a
/// user wrote. `--save` with no value means `save ""` (scripts build it from an empty list).
fn options_text(args: &[String]) -> String {
    let mut options = String::new();
    // Whether the last option has its value: only then does `--x` open a new line.
    let mut has_value = true;
    for (j, a) in args.iter().enumerate() {
        let next_is_option = args.get(j + 1).is_some_and(|n| n.starts_with("--"));
        let last = j + 1 == args.len();
        match a.strip_prefix("--") {
            Some(name) if has_value => {
                if !options.is_empty() {
                    options.push('\n');
                }
                options.push_str(name);
                options.push(' ');
                // "--port 6380" in one argument carries its own value.
                let words = redlab_server::protocol::split_args(a.as_bytes());
                has_value = words.is_none_or(|w| w.len() != 1);
                if !has_value && a.eq_ignore_ascii_case("--save") && (last || next_is_option) {
                    options.push_str("\"\"");
                    has_value = true;
                }
                // `--sentinel` is a flag: the option after it is not its value.
                if !has_value && a.eq_ignore_ascii_case("--sentinel") && next_is_option {
                    has_value = true;
                }
            }
            _ => {
                options.push_str(&redlab_server::protocol::repr(a.as_bytes()));
                options.push(' ');
                has_value = true;
            }
        }
    }
    options
}

fn fatal(version: &str, lineno: usize, line: &str, reason: &str) -> String {
    format!(
        "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\nReading the configuration file, at line {}\n>>> '{}'\n{}\n",
        version, lineno, line, reason
    )
}

/// Applies redis.conf text to `config`.
fn load(config: &mut Config, text: &str) -> Result<(), String> {
    let mut saves: Option<String> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let version = config.redis_version.clone();
        let err = |reason: &str| fatal(&version, i + 1, line, reason);
        let words = redlab_server::protocol::split_args(line.as_bytes())
            .ok_or_else(|| err("Unbalanced quotes in configuration line"))?;
        let words: Vec<String> = words
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let Some((name, values)) = words.split_first() else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        if name == "compat" {
            // redlab's own: the server version to answer as (`redlab_server::compat`).
            let [profile] = values else {
                return Err(err("wrong number of arguments"));
            };
            let p: redlab_server::Profile = profile.parse().map_err(|e: String| err(&e))?;
            config.set_compat(p);
            continue;
        }
        if name == "user" && !values.is_empty() {
            // Checked now and applied at start (`redlab_server::users`), as Redis does.
            let mut line = vec![name.clone()];
            line.extend(values.iter().cloned());
            redlab_server::users::check_declaration(&line, &config.users)
                .map_err(|reason| err(&reason))?;
            config.users.push(values.to_vec());
            continue;
        }
        if name == "rename-command" {
            let [old, new] = values else {
                return Err(err("Bad directive or wrong number of arguments"));
            };
            let profile = config.compat;
            config.renames.rename(profile, old, new).map_err(&err)?;
            continue;
        }
        if IGNORED_DIRECTIVES.contains(&name.as_str()) {
            tracing::warn!("'{}' is not supported by redlab; ignored", name);
            continue;
        }
        let Some(p) = params::lookup(&name) else {
            return Err(err("Bad directive or wrong number of arguments"));
        };
        let multi = matches!(
            p.kind,
            Kind::Save
                | Kind::ShutdownFlags
                | Kind::Bind
                | Kind::ClientOutputBufferLimit
                | Kind::OomScoreAdjValues
                | Kind::Percentiles
                | Kind::ReplicaOf
        );
        // Redis checks the count of a single-value parameter; a multi-value one checks its
        // own (none is valid for `save`, `bind`, ...; shutdown-on-sig* names its choices).
        if !multi && values.len() != 1 {
            return Err(err("wrong number of arguments"));
        }
        if matches!(p.kind, Kind::ReplicaOf) {
            replica_of_line(values).map_err(&err)?;
        }
        let mut value = values.join(" ");
        if matches!(p.kind, Kind::Save) {
            // Repeated `save` lines add save points.
            if let Some(prev) = saves
                .as_ref()
                .filter(|s| !s.is_empty() && !value.is_empty())
            {
                value = format!("{} {}", prev, value);
            }
            saves = Some(value.clone());
        }
        config.set(p, &value).map_err(|reason| err(&reason))?;
        if !USED.contains(&p.name) {
            tracing::info!(
                "option '{}' has no effect in redlab; accepted and ignored",
                name
            );
        }
    }
    Ok(())
}

/// `replicaof <host> <port>` in a config file: redis-server 7.0.15's own checks, made
/// before the value is stored.
fn replica_of_line(values: &[String]) -> Result<(), &'static str> {
    match values {
        [a, b] if a.eq_ignore_ascii_case("no") && b.eq_ignore_ascii_case("one") => Ok(()),
        [_, port] => match port.parse::<i64>() {
            Ok(0..=65535) => Ok(()),
            _ => Err("Invalid master port"),
        },
        _ => Err("wrong number of arguments"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_option_picks_a_profile() {
        let no_file = |_: &str| -> Result<String, String> { Err("no file".into()) };
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let Action::Run(c) = parse(&args(&["--compat", "valkey-8.1"]), &no_file) else {
            panic!("--compat valkey-8.1 is accepted");
        };
        assert_eq!(c.compat, redlab_server::Profile::Valkey81);
        assert_eq!(c.redis_version, "7.2.4");
        let Action::Run(c) = parse(&args(&["--port", "7000"]), &no_file) else {
            panic!("no --compat");
        };
        assert_eq!(c.compat, redlab_server::Profile::Redis70);
        let Action::Fail(e) = parse(&args(&["--compat", "redis-6.2"]), &no_file) else {
            panic!("an unknown profile is refused");
        };
        assert!(
            e.contains("unknown compatibility profile 'redis-6.2'"),
            "{e}"
        );
    }

    fn run(args: &[&str]) -> Action {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&args, &|_| {
            Ok("port 7000\n# comment\nmaxmemory 10mb\nsave 900 1\nsave 300 10\n".into())
        })
    }

    #[test]
    fn options_follow_the_file() {
        let Action::Run(c) = run(&[
            "redis.conf",
            "--port",
            "7001",
            "--lua-time-limit",
            "100",
            "--save",
            "",
        ]) else {
            panic!("should run")
        };
        assert_eq!(c.port, 7001);
        assert_eq!(c.maxmemory, 10 << 20);
        assert_eq!(c.busy_reply_threshold_ms, 100);
        assert_eq!(c.get_by_name("save").unwrap(), "");
        let Action::Run(c) = run(&["redis.conf"]) else {
            panic!()
        };
        assert_eq!(c.get_by_name("save").unwrap(), "900 1 300 10");
    }

    /// redis-server 7.0.15 chdir()s into `dir`: a missing one stops the start with the
    /// OS's reason, and CONFIG GET answers the absolute path.
    #[test]
    fn dir_is_resolved_as_redis_server_changes_into_it() {
        let Action::Fail(e) = run(&["--dir", "/nonexistent-redlab-dir"]) else {
            panic!()
        };
        assert!(
            e.ends_with(">>> 'dir \"/nonexistent-redlab-dir\"'\nNo such file or directory\n"),
            "{e}"
        );
        let Action::Run(c) = run(&["--dir", "/tmp/../tmp"]) else {
            panic!()
        };
        let tmp = std::fs::canonicalize("/tmp").unwrap();
        assert_eq!(c.get_by_name("dir").unwrap(), tmp.display().to_string());
    }

    #[test]
    fn errors_read_like_redis() {
        let Action::Fail(e) = run(&["--foo", "bar"]) else {
            panic!()
        };
        assert_eq!(e, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'foo \"bar\"'\nBad directive or wrong number of arguments\n");
        let Action::Fail(e) = run(&["--port", "1", "--databases", "0"]) else {
            panic!()
        };
        assert!(e.contains("at line 3\n>>> 'databases \"0\"'\nargument must be between 1 and 2147483647 inclusive"), "{}", e);
        let Action::Fail(e) = run(&["x.conf", "--maxmemory", "1x"]) else {
            panic!()
        };
        assert!(e.contains("at line 7\n"), "{}", e);
    }

    fn failure(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&args, &|_| Err("no file".into())) {
            Action::Fail(e) => e,
            other => panic!("{args:?} should fail: {other:?}"),
        }
    }

    /// redis-server 7.0.15's output for each command line (its tests/unit/introspection.tcl
    /// cases, and the `--save`/`--sentinel` flags), asked of the real server.
    #[test]
    fn option_values_may_start_with_dashes() {
        let cases: &[(&[&str], &str, &str)] = &[
            (&["--port"], "2\n>>> 'port'", "wrong number of arguments"),
            (
                &["--port", "6379", "6380"],
                "2\n>>> 'port \"6379\" \"6380\"'",
                "wrong number of arguments",
            ),
            (
                &["--port", "--loglevel", "verbose"],
                "2\n>>> 'port \"--loglevel\" \"verbose\"'",
                "wrong number of arguments",
            ),
            (
                &["--port", "--bla", "--loglevel", "verbose"],
                "2\n>>> 'port \"--bla\"'",
                "argument couldn't be parsed into an integer",
            ),
            (
                &["--logfile", "--my--log--file", "--loglevel", "--bla"],
                "3\n>>> 'loglevel \"--bla\"'",
                "argument(s) must be one of the following: debug, verbose, notice, warning",
            ),
            (
                &["--shutdown-on-sigint"],
                "2\n>>> 'shutdown-on-sigint'",
                "argument(s) must be one of the following: default, save, nosave, now, force",
            ),
            (
                &["--shutdown-on-sigint", "now force", "--shutdown-on-sigterm"],
                "3\n>>> 'shutdown-on-sigterm'",
                "argument(s) must be one of the following: default, save, nosave, now, force",
            ),
            (
                &["--replicaof", "127.0.0.1", "abc"],
                "2\n>>> 'replicaof \"127.0.0.1\" \"abc\"'",
                "Invalid master port",
            ),
            (
                &["--replicaof", "--127.0.0.1", "abc"],
                "2\n>>> 'replicaof \"--127.0.0.1\" \"abc\"'",
                "Invalid master port",
            ),
            (
                &["--replicaof", "--127.0.0.1", "--abc"],
                "2\n>>> 'replicaof \"--127.0.0.1\"'",
                "wrong number of arguments",
            ),
            (
                &["--oom-score-adj-values"],
                "2\n>>> 'oom-score-adj-values'",
                "wrong number of arguments",
            ),
            (
                &["--save", "--port", "x"],
                "3\n>>> 'port \"x\"'",
                "argument couldn't be parsed into an integer",
            ),
        ];
        for (args, at, reason) in cases {
            let e = failure(args);
            assert!(
                e.ends_with(&format!("at line {at}\n{reason}\n")),
                "{args:?}: {e}"
            );
        }
    }

    #[test]
    fn multi_value_options_may_be_empty() {
        let Action::Run(c) = run(&["x.conf", "--save", "--port", "7002", "--bind"]) else {
            panic!("--save and --bind without values run")
        };
        assert_eq!(
            (c.get_by_name("save").unwrap().as_str(), c.port),
            ("", 7002)
        );
        // No address at all: Redis 7.0 listens on no TCP address then (redlab refuses to
        // start without one, see DIFFERENCES.md).
        assert_eq!(c.bind, "");
        let Action::Run(c) = run(&["x.conf", "--port", "7003", "--save"]) else {
            panic!("a last --save runs")
        };
        assert_eq!(c.get_by_name("save").unwrap(), "");
        let Action::Run(c) = run(&["--replicaof", "no", "one", "--port 7004"]) else {
            panic!("replicaof no one runs")
        };
        assert_eq!(c.port, 7004);
    }

    /// redis-server 7.0.15's answers to `--user foo --user foo` (no file: the options are
    /// lines 2 and 3 of the text Redis reads, "at line 3") and a bad rule.
    #[test]
    fn user_lines_are_kept_and_checked() {
        let file =
            |_: &str| Ok::<String, String>("user default on nopass ~* +@all\nuser zed".into());
        let Action::Run(c) = parse(&["x.conf".to_string()], &file) else {
            panic!("user lines are accepted")
        };
        assert_eq!(
            c.users,
            [vec!["default", "on", "nopass", "~*", "+@all"], vec!["zed"]]
        );
        let Action::Fail(e) = run(&["--user", "foo", "--user", "foo"]) else {
            panic!("a duplicate user is refused")
        };
        assert!(e.ends_with("at line 3\n>>> 'user \"foo\"'\nError in user declaration 'foo': Duplicate user found. A user can only be defined once in config files\n"), "{e}");
        let Action::Fail(e) = parse(&["x.conf".to_string()], &|_| Ok("user bar on bogus".into()))
        else {
            panic!("a bad rule is refused")
        };
        assert!(e.ends_with("at line 1\n>>> 'user bar on bogus'\nError in user declaration 'bar': Syntax error\n"), "{e}");
    }

    /// redis-server 7.0.15 with "port N" on standard input: "-" first (no file) or last
    /// reads it, after the file and before the options; a "-" elsewhere is a value.
    #[test]
    fn config_from_stdin() {
        let read = |path: &str| -> Result<String, String> {
            match path {
                STDIN => Ok("port 7100\nmaxmemory 1mb\n".into()),
                _ => Ok("maxmemory 10mb\nsave 1 1\n".into()),
            }
        };
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let config = |v: &[&str]| match parse(&args(v), &read) {
            Action::Run(c) => c,
            other => panic!("{v:?}: {other:?}"),
        };
        let c = config(&["-"]);
        assert_eq!((c.port, c.maxmemory), (7100, 1 << 20));
        assert_eq!(c.get_by_name("save").unwrap(), DEFAULT_SAVE);
        assert_eq!(c.config_file, None);
        let c = config(&["a.conf", "-"]);
        assert_eq!((c.port, c.maxmemory), (7100, 1 << 20));
        assert_eq!(c.get_by_name("save").unwrap(), "1 1");
        let c = config(&["a.conf", "--maxmemory", "2mb", "-"]);
        assert_eq!((c.port, c.maxmemory), (7100, 2 << 20));
        let c = config(&["-", "--port", "7101"]);
        assert_eq!(c.port, 7101);
        let Action::Fail(e) = parse(&args(&["a.conf", "-", "--loglevel", "warning"]), &read) else {
            panic!("a \"-\" in the middle is a value")
        };
        assert!(
            e.ends_with("at line 4\n>>> '\"-\"'\nBad directive or wrong number of arguments\n"),
            "{e}"
        );
    }

    /// redis-server 7.0.15's checks of `rename-command` lines (asked of the real server).
    #[test]
    fn rename_command_lines() {
        let Action::Run(c) = run(&["--rename-command", "flushdb", "badger"]) else {
            panic!("a rename runs")
        };
        assert_eq!(
            c.renames.table_name(b"badger").as_deref(),
            Some(&b"flushdb"[..])
        );
        assert_eq!(c.renames.table_name(b"flushdb"), None);
        for (args, reason) in [
            (
                &["--rename-command", "nosuch", "x"][..],
                ">>> 'rename-command \"nosuch\" \"x\"'\nNo such command in rename-command\n",
            ),
            (
                &["--rename-command", "get", "set"],
                ">>> 'rename-command \"get\" \"set\"'\nTarget command name already exists\n",
            ),
            (
                &["--rename-command", "get"],
                ">>> 'rename-command \"get\"'\nBad directive or wrong number of arguments\n",
            ),
        ] {
            let e = failure(args);
            assert!(e.ends_with(reason), "{args:?}: {e}");
        }
    }

    #[test]
    fn version_and_defaults() {
        let Action::Print(v) = run(&["-v"]) else {
            panic!()
        };
        assert!(v.starts_with("Redis server v=7.0.15 sha=00000000:0 malloc=libc bits=64 build="));
        let Action::Run(c) = parse(&[], &|_| Err("none".into())) else {
            panic!()
        };
        assert_eq!((c.bind.as_str(), c.port), ("* -::*", 6379));
        assert!(!c.debug_command_open);
        // The binary keeps its RDB file on disk; in-process servers do not.
        assert!(c.rdb_on_disk && !Config::default().rdb_on_disk);
        assert!(c.manages_process && !Config::default().manages_process);
        // redis-server's save points; Config's own default (in-process servers) stays "".
        assert_eq!(c.get_by_name("save").unwrap(), "3600 1 300 100 60 10000");
        assert_eq!(Config::default().get_by_name("save").unwrap(), "");
    }
}
