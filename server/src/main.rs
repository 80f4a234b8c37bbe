//! `redlab-server`: the standalone server, a drop-in for `redis-server` in test setups.

fn main() {
    let server = redlab_server::Server::builder().port(6379).start();
    server.wait();
}
