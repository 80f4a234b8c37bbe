//! Load: 1,000 concurrent connections run scripts and MULTI/EXEC transactions while some
//! clients drop their connection mid-pipeline or mid-script; afterwards every write the
//! server acknowledged is present, checked against a client-side log.
//!
//! The test uses 1,000 client sockets plus the server's 1,000 (the server runs in this
//! process): about 2,100 descriptors. The test checks `ulimit -n` allows that and says so
//! if not (CI images default to far more).

use std::collections::HashMap;
use std::time::Duration;

use redlab_client::{Connection, Pipeline, Value};
use tokio::io::AsyncWriteExt;

const CLIENTS: usize = 1000;
const ROUNDS: usize = 6;

const SCRIPT: &str = "redis.call('set', KEYS[1], ARGV[1]) return redis.call('incr', KEYS[2])";

/// What one client saw acknowledged: key -> value, and its counter's final value.
#[derive(Default)]
struct Log {
    values: HashMap<String, String>,
    counter: Option<(String, i64)>,
}

fn check_fd_limit() {
    #[cfg(target_os = "linux")]
    {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
        let soft = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(soft) = soft {
            assert!(
                soft >= 2200,
                "needs about 2,200 file descriptors; `ulimit -n` is {soft}"
            );
        }
    }
}

async fn client(addr: std::net::SocketAddr, id: usize) -> Log {
    let mut log = Log::default();
    let counter = format!("ctr:{id}");
    // Every 10th client walks away mid-pipeline, every 10th (offset 5) mid-script: their
    // unacknowledged writes may or may not have happened, and nothing is logged for them.
    if id.is_multiple_of(10) {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let mut frames = Vec::new();
        for j in 0..50 {
            let (k, v) = (format!("gone:{id}:{j}"), "x".repeat(100));
            frames.extend_from_slice(
                format!(
                    "*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n${}\r\n{v}\r\n",
                    k.len(),
                    v.len()
                )
                .as_bytes(),
            );
        }
        // Half a frame at the end, then gone.
        frames.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf");
        let _ = s.write_all(&frames).await;
        return log;
    }
    if id % 10 == 5 {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let script =
            "local n = 0 for i = 1, 200000 do n = n + i end redis.call('set', KEYS[1], n) return n";
        let key = format!("gone:{id}");
        let frame = format!(
            "*4\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n1\r\n${}\r\n{key}\r\n",
            script.len(),
            key.len()
        );
        let _ = s.write_all(frame.as_bytes()).await;
        return log;
    }
    let conn = Connection::tcp(addr).await.expect("connect");
    for round in 0..ROUNDS {
        let key = format!("k:{id}:{round}");
        let value = format!("v:{id}:{round}");
        if round % 2 == 0 {
            let r = conn
                .cmd(&["EVAL", SCRIPT, "2", &key, &counter, &value])
                .await
                .expect("EVAL");
            let Value::Int(n) = r else {
                panic!("EVAL answered {r:?}")
            };
            log.counter = Some((counter.clone(), n));
        } else {
            let mut p = Pipeline::new();
            p.cmd(&["MULTI"])
                .cmd(&["SET", &key, &value])
                .cmd(&["INCR", &counter])
                .cmd(&["EXEC"]);
            let replies = conn.pipeline(&p).await.expect("MULTI/EXEC");
            let Some(Value::Array(exec)) = replies.last() else {
                panic!("EXEC answered {replies:?}")
            };
            let Some(Value::Int(n)) = exec.get(1) else {
                panic!("EXEC answered {exec:?}")
            };
            log.counter = Some((counter.clone(), *n));
        }
        log.values.insert(key, value);
    }
    log
}

#[test]
fn a_thousand_clients_and_every_acknowledged_write_is_kept() {
    check_fd_limit();
    let server = redlab::Server::start();
    let addr = server.addr();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let logs: Vec<Log> = rt.block_on(async move {
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|id| tokio::spawn(client(addr, id)))
            .collect();
        let mut logs = Vec::new();
        for t in tasks {
            logs.push(
                tokio::time::timeout(Duration::from_secs(120), t)
                    .await
                    .expect("a client hung")
                    .expect("client"),
            );
        }
        logs
    });
    let checked = rt.block_on(async move {
        let conn = Connection::tcp(addr)
            .await
            .expect("the server still accepts connections");
        let mut checked = 0;
        for log in &logs {
            for (k, v) in &log.values {
                let got = conn.cmd(&["GET", k]).await.expect("GET");
                assert_eq!(
                    got,
                    Value::Bulk(v.clone().into()),
                    "acknowledged write of {k} lost"
                );
                checked += 1;
            }
            if let Some((k, n)) = &log.counter {
                let got = conn.cmd(&["GET", k]).await.expect("GET");
                assert_eq!(
                    got,
                    Value::Bulk(n.to_string().into()),
                    "acknowledged INCRs of {k} lost"
                );
            }
        }
        assert_eq!(
            conn.cmd(&["PING"]).await.expect("PING"),
            Value::Status("PONG".into())
        );
        checked
    });
    assert_eq!(
        checked,
        CLIENTS / 10 * 8 * ROUNDS,
        "every well-behaved client's writes were checked"
    );
}
