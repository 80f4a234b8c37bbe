//! A cluster of `redlab-server --cluster-enabled yes` processes (or real redis-server
//! cluster nodes) for the tests that form one over the wire: starting nodes, sending them
//! commands, and waiting, with a hang guard, until they agree. Shared by
//! cluster_processes.rs and cluster_failover_processes.rs.

use std::io::BufReader;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{call, free_port, spawn_tied, start, Killed, Standalone};

/// How long a cluster may take to converge before a test gives up: a hang guard for a
/// loaded machine, not a bound on the bus's speed.
pub const GUARD: Duration = Duration::from_secs(120);

/// cluster-node-timeout for every node: short, so a killed node is noticed soon, and not so
/// short that a pong delayed on a loaded machine marks a live node failing.
pub const NODE_TIMEOUT: &str = "2000";

/// One node of a cluster under test: its process, ports and a client connection.
pub struct Node {
    pub process: Process,
    pub port: u16,
    pub cport: u16,
    pub conn: BufReader<TcpStream>,
}

impl Node {
    /// Kills a redlab node's process now (a node that dies, for the others to notice).
    pub fn kill(&mut self) {
        match &mut self.process {
            Process::Redlab(server) => server.kill(),
            Process::Real(child, _) => {
                let _ = child.0.kill();
                let _ = child.0.wait();
            }
        }
    }
}

pub enum Process {
    Redlab(Standalone),
    Real(Killed, std::path::PathBuf),
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Process::Real(child, dir) = self {
            let _ = child.0.kill();
            let _ = child.0.wait();
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

pub fn connect(port: u16) -> BufReader<TcpStream> {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    BufReader::new(s)
}

/// Starts a redlab-server cluster node with its bus on a free port of its own.
pub fn redlab_node(extra: &[&str]) -> Node {
    redlab_node_with_timeout(NODE_TIMEOUT, extra)
}

/// `redlab_node` with another cluster-node-timeout (ms).
pub fn redlab_node_with_timeout(timeout: &str, extra: &[&str]) -> Node {
    let cport = free_port();
    let cp = cport.to_string();
    let mut args = vec![
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        &cp,
        "--cluster-node-timeout",
        timeout,
    ];
    args.extend_from_slice(extra);
    let server = start(&args);
    let port = server.port;
    Node {
        process: Process::Redlab(server),
        port,
        cport,
        conn: connect(port),
    }
}

/// Starts a real redis-server cluster node the same way, or None (said loudly) when
/// redis-server is missing outside CI; under CI=true a missing redis-server fails.
pub fn real_node() -> Option<Node> {
    real_node_with_timeout(NODE_TIMEOUT)
}

/// `real_node` with another cluster-node-timeout (ms).
pub fn real_node_with_timeout(timeout: &str) -> Option<Node> {
    real_node_with(timeout, &[])
}

/// `real_node` with another cluster-node-timeout (ms) and more arguments.
pub fn real_node_with(timeout: &str, extra: &[&str]) -> Option<Node> {
    let (port, cport) = (free_port(), free_port());
    let dir =
        std::env::temp_dir().join(format!("redlab-cluster-node-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let spawned = spawn_tied(
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                &cport.to_string(),
            ])
            .args(["--cluster-node-timeout", timeout])
            .args(extra)
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let child = match spawned {
        Ok(c) => Killed(c),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("cluster tests: redis-server did not start ({e}) and CI=true");
            }
            eprintln!("\n!!!! cluster tests: real cluster node SKIPPED, redis-server: {e} !!!!\n");
            return None;
        }
    };
    let process = Process::Real(child, dir);
    let t = Instant::now();
    let conn = loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            break BufReader::new(s);
        }
        assert!(t.elapsed() < GUARD, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(10));
    };
    Some(Node {
        process,
        port,
        cport,
        conn,
    })
}

pub fn cmd(n: &mut Node, args: &[&str]) -> String {
    call(&mut n.conn, args)
}

pub fn myid(n: &mut Node) -> String {
    cmd(n, &["CLUSTER", "MYID"])
}

/// Polls `done` until it holds; past the guard, fails saying what never happened.
pub fn until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < GUARD, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether node `n` sees a formed cluster of `count` nodes: state ok, every node known, no
/// handshake pending, none failing, every link connected. (Flags are compared whole:
/// `nofailover` is no failure.)
pub fn formed(n: &mut Node, count: usize) -> bool {
    let info = cmd(n, &["CLUSTER", "INFO"]);
    let nodes = cmd(n, &["CLUSTER", "NODES"]);
    let unsettled = ["handshake", "fail", "fail?"];
    info.contains("cluster_state:ok")
        && info.contains(&format!("cluster_known_nodes:{count}"))
        && nodes
            .lines()
            .all(|l| !flags_of(l).iter().any(|f| unsettled.contains(&f.as_str())))
        && nodes
            .lines()
            .filter(|l| l.split(' ').nth(7) == Some("connected"))
            .count()
            == count
}

/// Each primary's id and config epoch in a CLUSTER NODES text, sorted by id.
pub fn primary_epochs(nodes_text: &str) -> Vec<(String, String)> {
    let mut epochs: Vec<(String, String)> = nodes_text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            if !f.get(2)?.split(',').any(|flag| flag == "master") {
                return None;
            }
            Some((f[0].to_string(), f.get(6)?.to_string()))
        })
        .collect();
    epochs.sort();
    epochs
}

/// Waits until every node sees the formed cluster and all describe the slots and the config
/// epochs alike, each primary with its own epoch. Until the epoch collisions are resolved
/// everywhere, a node that takes a slot by hand may bump to an epoch another node still
/// holds, and the slot's move would be lost (Redis's own suite waits for the same).
pub fn settle(nodes: &mut [Node]) {
    let count = nodes.len();
    until("every node agrees on the cluster", || {
        let mut views = Vec::new();
        for n in nodes.iter_mut() {
            if !formed(n, count) {
                return false;
            }
            let epochs = primary_epochs(&cmd(n, &["CLUSTER", "NODES"]));
            let mut distinct: Vec<&String> = epochs.iter().map(|(_, e)| e).collect();
            distinct.sort();
            distinct.dedup();
            if distinct.len() != epochs.len() {
                return false;
            }
            views.push((cmd(n, &["CLUSTER", "SLOTS"]), epochs));
        }
        views.iter().all(|v| *v == views[0])
    });
}

pub const THIRDS: [(u16, u16); 3] = [(0, 5460), (5461, 10922), (10923, 16383)];

/// Three primaries, each given a third of the slots, node 0 meeting the others.
pub fn three_primaries(start: impl Fn() -> Option<Node>) -> Option<Vec<Node>> {
    primaries(start, &THIRDS)
}

/// One primary per range, each given its range of slots, node 0 meeting the others.
pub fn primaries(start: impl Fn() -> Option<Node>, ranges: &[(u16, u16)]) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    for _ in ranges {
        nodes.push(start()?);
    }
    for (n, &(a, b)) in nodes.iter_mut().zip(ranges) {
        let reply = cmd(
            n,
            &["CLUSTER", "ADDSLOTSRANGE", &a.to_string(), &b.to_string()],
        );
        assert_eq!(reply, "+OK");
    }
    let others: Vec<(u16, u16)> = nodes[1..].iter().map(|n| (n.port, n.cport)).collect();
    for (port, cport) in others {
        let reply = cmd(
            &mut nodes[0],
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &port.to_string(),
                &cport.to_string(),
            ],
        );
        assert_eq!(reply, "+OK");
    }
    settle(&mut nodes);
    Some(nodes)
}

pub fn redlab_three() -> Vec<Node> {
    three_primaries(|| Some(redlab_node(&[]))).expect("redlab nodes start")
}

/// CLUSTER KEYSLOT, as a number.
pub fn keyslot(n: &mut Node, key: &str) -> u16 {
    let reply = cmd(n, &["CLUSTER", "KEYSLOT", key]);
    reply.trim_start_matches(':').parse().expect("a slot")
}

/// A key whose slot lies in [a, b] (found by asking the node).
pub fn key_in_slot_range(n: &mut Node, a: u16, b: u16) -> String {
    (0..)
        .map(|i| format!("key:{i}"))
        .find(|k| (a..=b).contains(&keyslot(n, k)))
        .expect("a key")
}

/// Node `id`'s line in `n`'s CLUSTER NODES ("" when it does not list it).
pub fn line_of(n: &mut Node, id: &str) -> String {
    cmd(n, &["CLUSTER", "NODES"])
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_default()
        .to_string()
}

/// The flags of a CLUSTER NODES line, as a list.
pub fn flags_of(line: &str) -> Vec<String> {
    let field = line.split(' ').nth(2).unwrap_or_default();
    field.split(',').map(str::to_string).collect()
}

/// Whether a CLUSTER NODES line is a replica of `primary` (whatever other flags it has).
pub fn replicates(line: &str, primary: &str) -> bool {
    flags_of(line).iter().any(|f| f == "slave") && line.split(' ').nth(3) == Some(primary)
}

/// A CLUSTER INFO counter, `cluster_stats_messages_<name>` (0 while it is not listed).
pub fn bus_stat(n: &mut Node, name: &str) -> u64 {
    let prefix = format!("cluster_stats_messages_{name}:");
    cmd(n, &["CLUSTER", "INFO"])
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}
