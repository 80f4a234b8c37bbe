//! DUMP and RESTORE of streams against a real redis-server 7.0.15: a payload Redis dumps
//! restores in redlab to the same stream (XINFO STREAM FULL equal, delivery and seen times
//! included, since both are stored in the payload), and redlab's payload restores in Redis.
//! DEBUG RELOAD keeps a stream with its groups.

use redlab_client::RealRedis;

fn build(con: &mut redis::Connection) {
    let q = |con: &mut redis::Connection, args: &[&str]| {
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        c.query::<redis::Value>(con).expect("command")
    };
    q(con, &["CONFIG", "SET", "stream-node-max-entries", "4"]);
    for i in 1..=30 {
        let id = format!("{}-{}", 1000 + i / 3, i % 3);
        let v = format!("value {i} {}", "x".repeat(i * 3));
        if i % 5 == 0 {
            q(con, &["XADD", "s", &id, "other", &v, "n", &i.to_string()]);
        } else {
            q(con, &["XADD", "s", &id, "f", &v, "n", &i.to_string()]);
        }
    }
    q(con, &["XDEL", "s", "1002-1", "1005-0", "1005-1"]);
    q(con, &["XGROUP", "CREATE", "s", "g", "0"]);
    q(
        con,
        &["XGROUP", "CREATE", "s", "late", "$", "ENTRIESREAD", "30"],
    );
    q(
        con,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "7",
            "STREAMS",
            "s",
            ">",
        ],
    );
    q(
        con,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "COUNT",
            "5",
            "STREAMS",
            "s",
            ">",
        ],
    );
    q(con, &["XGROUP", "CREATECONSUMER", "s", "g", "carol"]);
    q(
        con,
        &[
            "XCLAIM",
            "s",
            "g",
            "bob",
            "0",
            "1000-1",
            "TIME",
            "12345",
            "RETRYCOUNT",
            "9",
        ],
    );
    q(con, &["XACK", "s", "g", "1001-0"]);
    q(con, &["XADD", "empty", "5-5", "f", "v"]);
    q(con, &["XDEL", "empty", "5-5"]);
    q(con, &["XGROUP", "CREATE", "empty", "g", "$"]);
}

fn full(con: &mut redis::Connection, key: &str) -> redis::Value {
    redis::cmd("XINFO")
        .arg("STREAM")
        .arg(key)
        .arg("FULL")
        .arg("COUNT")
        .arg(0)
        .query(con)
        .expect("XINFO STREAM FULL")
}

fn dump(con: &mut redis::Connection, key: &str) -> Vec<u8> {
    redis::cmd("DUMP").arg(key).query(con).expect("DUMP")
}

fn restore(con: &mut redis::Connection, key: &str, payload: &[u8]) {
    let _: () = redis::cmd("DEL").arg(key).query(con).expect("DEL");
    let r: redis::Value = redis::cmd("RESTORE")
        .arg(key)
        .arg(0)
        .arg(payload)
        .query(con)
        .expect("RESTORE");
    assert_eq!(r, redis::Value::Okay);
}

#[test]
fn streams_cross_between_redis_and_redlab() {
    let Some(real) = RealRedis::start_or_skip("stream_dump") else {
        return;
    };
    let lab = redlab::Server::start();
    let mut r = redis::Client::open(real.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut l = redis::Client::open(lab.url())
        .unwrap()
        .get_connection()
        .unwrap();
    build(&mut r);
    for key in ["s", "empty"] {
        let want = full(&mut r, key);
        // Redis -> redlab.
        let payload = dump(&mut r, key);
        restore(&mut l, key, &payload);
        assert_eq!(full(&mut l, key), want, "{key}: Redis's payload in redlab");
        // redlab -> Redis, and the payloads agree byte for byte.
        let back = dump(&mut l, key);
        assert_eq!(back, payload, "{key}: redlab's DUMP differs from Redis's");
        restore(&mut r, key, &back);
        assert_eq!(full(&mut r, key), want, "{key}: redlab's payload in Redis");
    }
}

#[test]
fn debug_reload_keeps_streams() {
    let lab = redlab::Server::start();
    let mut l = redis::Client::open(lab.url())
        .unwrap()
        .get_connection()
        .unwrap();
    build(&mut l);
    let before = full(&mut l, "s");
    let r: redis::Value = redis::cmd("DEBUG").arg("RELOAD").query(&mut l).unwrap();
    assert_eq!(r, redis::Value::Okay);
    assert_eq!(full(&mut l, "s"), before);
}
