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
