//! `redlab-cluster`: a Redis Cluster of redlab nodes in one process, for tests in any
//! language. Prints one line per node (`127.0.0.1:<port> <node id> master|replica`), then
//! an empty line once every node serves, and runs until it is killed or every node has
//! received SHUTDOWN.
//!
//! ```text
//! redlab-cluster [--primaries N] [--replicas-per-primary N] [--port BASE] [--requirepass PW]
//! ```

use std::io::Write;
use std::time::Duration;

use redlab_server::{Cluster, ServerBuilder};

const USAGE: &str = "Usage: redlab-cluster [--primaries N] [--replicas-per-primary N] [--port BASE] [--requirepass PASSWORD]";

/// The options, or the message to exit with.
struct Options {
    primaries: usize,
    replicas: usize,
    port: Option<u16>,
    password: Option<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        primaries: 3,
        replicas: 0,
        port: None,
        password: None,
    };
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1);
        let number = |what: &str| -> Result<u64, String> {
            value
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| format!("{what} needs a number\n{USAGE}"))
        };
        match args[i].as_str() {
            "--primaries" => o.primaries = number("--primaries")?.clamp(1, 1000) as usize,
            "--replicas-per-primary" | "--replicas" => {
                o.replicas = number("--replicas-per-primary")?.min(100) as usize
            }
            "--port" => {
                let p = number("--port")?;
                o.port = Some(u16::try_from(p).map_err(|_| format!("bad port {p}"))?);
            }
            "--requirepass" => {
                o.password = Some(value.ok_or_else(|| USAGE.to_string())?.clone());
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
        i += 2;
    }
    Ok(o)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(1);
        }
    };
    let mut server = ServerBuilder::new();
    if let Some(pw) = &o.password {
        server = server.requirepass(pw);
    }
    let mut builder = Cluster::builder()
        .primaries(o.primaries)
        .replicas_per_primary(o.replicas)
        .server(server);
    if let Some(p) = o.port {
        builder = builder.base_port(p);
    }
    let cluster = match builder.try_start() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("redlab-cluster: could not start the cluster: {e}");
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout().lock();
    for (i, s) in cluster.servers().iter().enumerate() {
        let role = if i < cluster.primaries() {
            "master"
        } else {
            "replica"
        };
        let _ = writeln!(out, "{} {} {}", s.addr(), cluster.id(i), role);
    }
    let _ = writeln!(out);
    let _ = out.flush();
    drop(out);
    while cluster.servers().iter().any(|s| s.is_running()) {
        std::thread::sleep(Duration::from_millis(50));
    }
}
