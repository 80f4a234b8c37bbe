//! Code written against redis-rs's `ConnectionLike` and `aio::ConnectionLike` runs on an
//! in-process engine with no socket, and sees the values a TCP connection would.

use redis::{Commands, Script};
use redlab_client::redis_rs::{AsyncEngineConnection, EngineConnection};
use redlab_client::InProcess;

#[test]
fn sync_commands_scripts_pipelines_and_errors() {
    let mut con = EngineConnection::new(redlab::Config::default());
    let _: () = con.set("k", "v").unwrap();
    let v: String = con.get("k").unwrap();
    assert_eq!(v, "v");
    let n: i64 = Script::new("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        .key("n")
        .arg(7)
        .invoke(&mut con)
        .unwrap();
    assert_eq!(n, 7);
    let (a, b): (i64, i64) = redis::pipe()
        .incr("c", 1)
        .incr("c", 2)
        .query(&mut con)
        .unwrap();
    assert_eq!((a, b), (1, 3));
    let err = con.lpush::<_, _, i64>("k", "x").unwrap_err();
    assert_eq!(err.code(), Some("WRONGTYPE"));
    let (x,): (i64,) = redis::pipe().atomic().incr("t", 5).query(&mut con).unwrap();
    assert_eq!(x, 5, "MULTI/EXEC pipelines unwrap the EXEC reply");
}

/// Starts with the redis-rs calls server/tests/standalone_clients.rs makes against the binary,
/// on purpose: the adapter must take the same client code.
#[tokio::test]
async fn async_commands_and_scripts() {
    let engine = InProcess::new(redlab::Config::default());
    let mut con = AsyncEngineConnection::new(&engine).await;
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
        .arg(4)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(v, 5);
    let r: i64 = Script::new("return #KEYS + #ARGV")
        .key("a")
        .arg("b")
        .arg("c")
        .invoke_async(&mut con)
        .await
        .unwrap();
    assert_eq!(r, 3);
}
