//! Real client libraries work against redlab unchanged: redis-rs (sync and async, on both
//! tokio runtime flavours), and redis-cli.

use std::process::Command;

// The server crate's copy of the redis-cli lookup, shared rather than repeated.
#[path = "../server/tests/support/tools.rs"]
mod tools;

use redis::Commands;

#[test]
fn redis_rs_sync() {
    let server = redlab::Server::start();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    let _: () = con.set("greeting", "hello").unwrap();
    let got: String = con.get("greeting").unwrap();
    assert_eq!(got, "hello");
    let missing: Option<String> = con.get("nope").unwrap();
    assert_eq!(missing, None);
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
}

#[test]
fn redis_rs_pipeline() {
    let server = redlab::Server::start();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    let (a, b): (String, String) = redis::pipe()
        .cmd("SET")
        .arg("a")
        .arg("1")
        .ignore()
        .cmd("SET")
        .arg("b")
        .arg("2")
        .ignore()
        .cmd("GET")
        .arg("a")
        .cmd("GET")
        .arg("b")
        .query(&mut con)
        .unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("1", "2"));
}

#[test]
fn redis_rs_error_reply_keeps_its_text() {
    let server = redlab::Server::start();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    let err = redis::cmd("NOSUCH")
        .arg("x")
        .query::<()>(&mut con)
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown command 'NOSUCH'"),
        "{err}"
    );
}

async fn async_roundtrip(url: String) {
    let client = redis::Client::open(url).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async(&mut con)
        .await
        .unwrap();
    let v: String = redis::cmd("GET")
        .arg("k")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(v, "v");
}

#[tokio::test]
async fn redis_rs_async_current_thread() {
    let server = redlab::Server::start();
    async_roundtrip(server.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_rs_async_multi_thread() {
    let server = redlab::Server::start();
    async_roundtrip(server.url()).await;
}

#[test]
fn many_servers_in_one_process() {
    let servers: Vec<_> = (0..8).map(|_| redlab::Server::start()).collect();
    for (i, s) in servers.iter().enumerate() {
        let mut con = redis::Client::open(s.url())
            .unwrap()
            .get_connection()
            .unwrap();
        let _: () = con.set("id", i).unwrap();
    }
    for (i, s) in servers.iter().enumerate() {
        let mut con = redis::Client::open(s.url())
            .unwrap()
            .get_connection()
            .unwrap();
        let got: usize = con.get("id").unwrap();
        assert_eq!(got, i, "each server has its own keyspace");
    }
}

#[test]
fn dropping_the_server_closes_its_port() {
    let server = redlab::Server::start();
    let addr = server.addr();
    drop(server);
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "port still open after drop"
    );
}

/// One inline request on a fresh connection to `addr`, and the first line of its reply.
fn ask(addr: std::net::SocketAddr, request: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    s.write_all(format!("{request}\r\n").as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    if line.starts_with('*') {
        // CONFIG GET: the value is the fourth line.
        for _ in 0..4 {
            line.clear();
            r.read_line(&mut line).unwrap();
        }
    }
    line.trim_end().to_string()
}

/// CONFIG SET port listens on the new port and lets the old one go, as Redis does. A port
/// that cannot be listened on fails with Redis's text, and every parameter of that CONFIG
/// SET keeps its old value.
#[test]
fn config_set_port_moves_the_listener() {
    let server = redlab::Server::start();
    let addr = server.addr();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();
    assert_eq!(
        ask(
            addr,
            &format!("CONFIG SET maxmemory 10000001 port {busy} client-query-buffer-limit 10mb")
        ),
        "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port: Address already in use"
    );
    assert_eq!(ask(addr, "CONFIG GET maxmemory"), "0");
    assert_eq!(ask(addr, "CONFIG GET port"), addr.port().to_string());
    assert_eq!(ask(addr, "PING"), "+PONG");
    // A free port: the listener moves there.
    drop(taken);
    assert_eq!(ask(addr, &format!("CONFIG SET port {busy}")), "+OK");
    let moved: std::net::SocketAddr = format!("127.0.0.1:{busy}").parse().unwrap();
    assert_eq!(ask(moved, "CONFIG GET port"), busy.to_string());
    let gone = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::net::TcpStream::connect(addr).is_err()
    });
    assert!(gone, "the old port still takes connections");
}

#[test]
fn redis_cli_works_unchanged() {
    let Some(cli) = tools::redis_cli_or_skip("redis-cli test") else {
        return;
    };
    let server = redlab::Server::start();
    let port = server.port().to_string();
    let run = |args: &[&str]| {
        let out = Command::new(&cli)
            .args(["-p", &port])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(run(&["PING"]), "PONG");
    assert_eq!(run(&["SET", "k", "from cli"]), "OK");
    assert_eq!(run(&["GET", "k"]), "from cli");
    assert_eq!(run(&["-3", "GET", "k"]), "from cli");
    assert_eq!(
        run(&["-3", "--no-raw", "DEBUG", "PROTOCOL", "double"]),
        "(double) 3.141",
        "RESP3 types reach redis-cli"
    );
    assert_eq!(
        run(&["-3", "--no-raw", "DEBUG", "PROTOCOL", "true"]),
        "(true)"
    );
}
