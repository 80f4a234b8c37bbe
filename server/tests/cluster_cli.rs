//! Cluster mode from the command line: `redlab-server --cluster-enabled yes` (a lone node
//! that a test gives slots to) and `redlab-cluster` (a whole cluster in one process), as a
//! test in another language would start them.

mod support;

use support::call;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

fn connect(addr: &str) -> BufReader<TcpStream> {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    BufReader::new(s)
}

#[test]
fn redlab_server_cluster_enabled_is_a_lone_node() {
    let server = support::start(&["--cluster-enabled", "yes"]);
    let mut c = connect(&format!("127.0.0.1:{}", server.port));
    assert!(call(&mut c, &["CLUSTER", "INFO"]).starts_with("cluster_state:fail"));
    assert_eq!(
        call(&mut c, &["SET", "foo", "1"]),
        "-CLUSTERDOWN Hash slot not served"
    );
    assert_eq!(
        call(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
        "+OK"
    );
    assert!(call(&mut c, &["CLUSTER", "INFO"]).starts_with("cluster_state:ok"));
    assert_eq!(call(&mut c, &["SET", "foo", "1"]), "+OK");
    let id = call(&mut c, &["CLUSTER", "MYID"]);
    assert_eq!(
        call(&mut c, &["CLUSTER", "NODES"]),
        format!(
            "{id} 127.0.0.1:{}@{} myself,master - 0 0 0 connected 0-16383\n",
            server.port,
            server.port as u32 + 10000
        )
    );
    assert_eq!(
        call(&mut c, &["CONFIG", "GET", "cluster-enabled"]),
        "cluster-enabled yes"
    );
    assert_eq!(
        call(&mut c, &["SELECT", "2"]),
        "-ERR SELECT is not allowed in cluster mode"
    );
}

#[test]
fn redlab_cluster_starts_a_whole_cluster() {
    let child = support::spawn_tied(
        Command::new(env!("CARGO_BIN_EXE_redlab-cluster"))
            .args(["--primaries", "3", "--replicas-per-primary", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("spawn redlab-cluster");
    let mut child = support::Killed(child);
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let mut nodes = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "redlab-cluster ended"
        );
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let f: Vec<String> = line.split(' ').map(String::from).collect();
        nodes.push(f);
    }
    assert_eq!(nodes.len(), 6);
    assert_eq!(nodes.iter().filter(|f| f[2] == "master").count(), 3);
    let mut c = connect(&nodes[0][0]);
    assert_eq!(call(&mut c, &["CLUSTER", "MYID"]), nodes[0][1]);
    let info = call(&mut c, &["CLUSTER", "INFO"]);
    assert!(info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:6"));
    // foo's slot (12182) is on the third primary.
    assert_eq!(
        call(&mut c, &["SET", "foo", "bar"]),
        format!("-MOVED 12182 {}", nodes[2][0])
    );
    let mut c2 = connect(&nodes[2][0]);
    assert_eq!(call(&mut c2, &["SET", "foo", "bar"]), "+OK");
    // The replica of the third primary redirects writes and reads to it.
    let mut r = connect(&nodes[5][0]);
    assert_eq!(
        call(&mut r, &["GET", "foo"]),
        format!("-MOVED 12182 {}", nodes[2][0])
    );
    assert!(call(&mut r, &["CLUSTER", "NODES"]).contains(&format!("myself,slave {}", nodes[2][1])));
}
