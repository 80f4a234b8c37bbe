//! `redlab-server`: the standalone server, a drop-in for `redis-server` in test setups.
//! Takes redis-server's command line (see `cli`), logs in its line format (see `logline`)
//! and acts as its process does (see `process`).

mod cli;
mod logline;
mod process;

use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::EnvFilter;

/// mimalloc for every Rust allocation of the server (see `redlab_server::MiMalloc`).
#[global_allocator]
static GLOBAL: redlab_server::MiMalloc = redlab_server::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Standard input is read once: `cli::parse` runs twice (see below).
    let stdin_text = std::cell::OnceCell::new();
    let read = |path: &str| {
        if path == cli::STDIN {
            let text = stdin_text.get_or_init(|| {
                let mut t = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
                    .map(|_| t)
                    .map_err(|e| e.to_string())
            });
            return text.clone();
        }
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    };
    let mut config = match cli::parse(&args, &read) {
        cli::Action::Print(text) => {
            println!("{}", text);
            return;
        }
        cli::Action::Fail(text) => {
            eprintln!("{}", text);
            std::process::exit(1);
        }
        cli::Action::Run(config) => *config,
    };
    let get = |name: &str| config.get_by_name(name).unwrap_or_default();
    let daemonize = get("daemonize") == "yes";
    if daemonize {
        if let Err(e) = process::daemonize() {
            eprintln!("redlab: cannot daemonize: {}", e);
            std::process::exit(1);
        }
    }
    init_log(&get("logfile"), &get("loglevel"));
    // Parsed again now that the log is set up, only for what parsing logs (options redlab
    // ignores); the result is the same as the first time.
    let _ = cli::parse(&args, &read);
    tracing::warn!("oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo");
    tracing::warn!(
        "Redis version={}, bits=64, commit=00000000, modified=0, pid={}, just started (redlab {})",
        config.redis_version,
        std::process::id(),
        env!("CARGO_PKG_VERSION")
    );
    tracing::warn!("Configuration loaded");
    logline::set_running();
    process::catch_shutdown_signals();
    let show_logo = get("always-show-logo") == "yes";
    let mode = if get("cluster-enabled") == "yes" {
        "cluster"
    } else {
        "standalone"
    };
    let mut pidfile = get("pidfile");
    if pidfile.is_empty() && daemonize {
        pidfile = process::DEFAULT_PIDFILE.to_string();
    }
    fit_open_files(&mut config);
    // redis-server sets its OOM score once its configuration is read (a `replicaof` line
    // makes it a replica from the start).
    let replica = config
        .get_by_name("replicaof")
        .is_some_and(|r| !r.trim().is_empty());
    if let Err(line) = redlab_server::oom_score::apply(&config, replica) {
        tracing::warn!("{}", line);
    }
    // Users from `user` lines or the aclfile: a server that cannot set them up does not
    // start, as redis-server exits here.
    if let Err(lines) = redlab_server::users::check_at_start(&config) {
        for line in lines {
            tracing::warn!("{}", line);
        }
        std::process::exit(1);
    }
    if config.bind.split_whitespace().count() > 1 {
        tracing::warn!(
            "bind '{}': redlab listens on the first address it can bind only",
            config.bind
        );
    }
    let port = config.port;
    let server = match redlab_server::Server::builder().config(config).try_start() {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("Failed listening on port {} (tcp), aborting: {}", port, e);
            std::process::exit(1);
        }
    };
    if show_logo {
        // Redis draws its logo here, with the port and pid in it; tools (Redis's own test
        // harness among them) find the server's pid in this line.
        tracing::info!(
            "redlab {} (Redis {} compatible) {}, Port: {} PID: {}",
            env!("CARGO_PKG_VERSION"),
            redlab_server::Config::default().redis_version,
            mode,
            server.port(),
            std::process::id()
        );
    } else {
        tracing::info!("Running mode={}, port={}.", mode, server.port());
    }
    tracing::warn!("Server initialized");
    if !pidfile.is_empty() {
        process::write_pidfile(&pidfile);
    }
    let had_socket = server.unixsocket().is_some();
    // Redis says it is ready once the RDB file is loaded (clients are served meanwhile, and
    // get -LOADING for most commands).
    let mut ready = false;
    let mut signalled = false;
    // The server thread runs until a client sends SHUTDOWN or a signal asks for it.
    while server.is_running() {
        if !ready && !server.is_loading() {
            if server.load_failed() {
                std::process::exit(1);
            }
            ready = true;
            tracing::info!("Ready to accept connections");
            if let Some(path) = server.unixsocket() {
                tracing::info!("The server is now ready to accept connections at {}", path);
            }
        }
        if let Some(sig) = process::take_signal() {
            if signalled && sig == "SIGINT" {
                // A second Ctrl+C: the user really wants out, without saving (Redis).
                tracing::warn!("You insist... exiting now.");
                std::process::exit(1);
            }
            if server.is_loading() {
                tracing::warn!("Received shutdown signal during loading, scheduling shutdown.");
            } else {
                tracing::warn!("Received {} scheduling shutdown...", sig);
            }
            signalled = true;
            // The server thread shuts down (saving the RDB file when it has to) and stops.
            server.signal_shutdown(sig == "SIGINT");
        }
        let pause = if ready { 20 } else { 1 };
        std::thread::sleep(std::time::Duration::from_millis(pause));
    }
    server.shutdown();
    if !pidfile.is_empty() {
        tracing::info!("Removing the pid file.");
        let _ = std::fs::remove_file(&pidfile);
    }
    if had_socket {
        tracing::info!("Removing the unix socket file.");
    }
    tracing::warn!("Redis is now ready to exit, bye bye...");
}

/// Sends the log, in Redis's line format, to the `logfile` or (when it is empty) stdout.
/// RUST_LOG, when set, overrides the level `loglevel` gives.
fn init_log(logfile: &str, loglevel: &str) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(logline::filter_for(loglevel)));
    let writer = if logfile.is_empty() {
        BoxMakeWriter::new(std::io::stdout)
    } else {
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(logfile)
        {
            Ok(f) => BoxMakeWriter::new(std::sync::Mutex::new(f)),
            Err(e) => {
                eprintln!("Can't open the log file: {}", e);
                std::process::exit(1);
            }
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .event_format(logline::RedisLine)
        .init();
}

/// Raises the open-file limit to what maxclients needs, or lowers maxclients to what the
/// limit holds, with the log lines redis-server writes for either.
fn fit_open_files(config: &mut redlab_server::Config) {
    use redlab_server::config::fd_limit::{fit, Fit, RESERVED_FDS};
    let maxclients: u64 = config
        .get_by_name("maxclients")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    match fit(maxclients) {
        Fit::Fits { raised_from: None } => {}
        Fit::Fits {
            raised_from: Some(old),
        } => tracing::info!(
            "Increased maximum number of open files to {} (it was originally set to {}).",
            maxclients + RESERVED_FDS,
            old
        ),
        Fit::Short {
            needed,
            best,
            os_error,
        } => {
            if best <= RESERVED_FDS {
                tracing::warn!(
                    "Your current 'ulimit -n' of {} is not enough for the server to start. \
                     Please increase your open file limit to at least {}. Exiting.",
                    best,
                    needed
                );
                std::process::exit(1);
            }
            let fits = best - RESERVED_FDS;
            tracing::warn!(
                "You requested maxclients of {} requiring at least {} max file descriptors.",
                maxclients,
                needed
            );
            tracing::warn!(
                "Server can't set maximum open files to {} because of OS error: {}.",
                needed,
                os_error
            );
            tracing::warn!(
                "Current maximum open files is {}. maxclients has been reduced to {} to \
                 compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
                best,
                fits
            );
            let _ = config.set_by_name("maxclients", &fits.to_string());
        }
    }
}
