//! `redlab-server`: the standalone server, a drop-in for `redis-server` in test setups.
//! Takes redis-server's command line (see `cli`).

mod cli;

use tracing_subscriber::EnvFilter;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let read = |path: &str| std::fs::read_to_string(path).map_err(|e| e.to_string());
    let mut config = match cli::parse(&args, &read) {
        cli::Action::Print(text) => {
            println!("{}", text);
            return;
        }
        cli::Action::Fail(text) => {
            eprintln!("{}", text);
            std::process::exit(1);
        }
        cli::Action::Run(config) => config,
    };
    tracing::info!("oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo");
    tracing::info!(
        "Redis version={}, bits=64, commit=00000000, modified=0, pid={}, just started (redlab {})",
        config.redis_version,
        std::process::id(),
        env!("CARGO_PKG_VERSION")
    );
    tracing::info!("Configuration loaded");
    let listen = cli::listen_address(&config.bind);
    if config.bind.split_whitespace().count() > 1 {
        tracing::warn!(
            "bind '{}': redlab listens on the first address only, {}",
            config.bind,
            listen
        );
    }
    let bind_as_given = std::mem::replace(&mut config.bind, listen);
    let port = config.port;
    let server = match redlab_server::Server::builder().config(config).try_start() {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("Failed listening on port {} (tcp), aborting: {}", port, e);
            std::process::exit(1);
        }
    };
    let _ = bind_as_given;
    tracing::info!("Running mode=standalone, port={}.", server.port());
    tracing::info!("Server initialized");
    tracing::info!("Ready to accept connections tcp");
    server.wait();
    tracing::info!("Redis is now ready to exit, bye bye...");
}
