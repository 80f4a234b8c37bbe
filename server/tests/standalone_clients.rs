//! redis-rs, sync and async, and redis-cli against the standalone `redlab-server` binary:
//! what a project gets when its test setup starts redlab-server instead of redis-server.

mod support;

use std::process::Command;

#[test]
fn redis_rs_sync_against_the_binary() {
    let s = support::start(&["--save", "", "--appendonly", "no"]);
    let mut con = redis::Client::open(format!("redis://127.0.0.1:{}/", s.port))
        .unwrap()
        .get_connection()
        .unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    let v: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
    assert_eq!(v, "v");
    let script = redis::Script::new("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    let n: i64 = script.key("n").arg(5).invoke(&mut con).unwrap();
    assert_eq!(n, 5);
}

/// The same redis-rs calls as tests/redis_rs_adapter.rs makes on the in-process adapter, on
/// purpose: one client code, run against the binary here and against the adapter there.
#[tokio::test]
async fn redis_rs_async_against_the_binary() {
    let s = support::start(&["--save", "", "--appendonly", "no"]);
    let client = redis::Client::open(format!("redis://127.0.0.1:{}/", s.port)).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("HSET")
        .arg("h")
        .arg("f")
        .arg("1")
        .query_async(&mut con)
        .await
        .unwrap();
    let v: i64 = redis::cmd("HINCRBY")
        .arg("h")
        .arg("f")
        .arg(2)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(v, 3);
}

#[test]
fn redis_cli_against_the_binary() {
    let Some(cli) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("redis-cli"))
            .find(|p| p.is_file())
    }) else {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "redis-cli missing under CI"
        );
        eprintln!("\n!!!! redis-cli not installed: SKIPPED !!!!\n");
        return;
    };
    let s = support::start(&["--save", "", "--appendonly", "no"]);
    let run = |args: &[&str]| {
        let out = Command::new(&cli)
            .args(["-p", &s.port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(run(&["PING"]), "PONG");
    assert_eq!(run(&["RPUSH", "l", "a", "b"]), "2");
    assert_eq!(run(&["LRANGE", "l", "0", "-1"]), "a\nb");
    assert_eq!(run(&["-3", "--no-raw", "HGETALL", "nope"]), "(empty hash)");
}
