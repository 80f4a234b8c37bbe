//! CONFIG GET / SET / RESETSTAT / REWRITE / HELP over the parameter table in
//! `crate::config::params`.

use crate::cmd::table::{flags::*, CmdResult, Command};
use crate::config::{params, Param, PARAMS};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

/// CONFIG GET pattern [pattern ...]: every parameter whose name or alias matches, each
/// once, as a map (a flat array in RESP2).
fn get(e: &mut Engine, call: &mut Call) -> CmdResult {
    // An exact name is echoed as given (CONFIG GET MAXMEMORY answers "MAXMEMORY").
    let mut out: Vec<(&'static str, String, &'static Param)> = Vec::new();
    let profile = e.profile();
    for pat in &call.args[2..] {
        let has_glob = pat.iter().any(|c| matches!(c, b'*' | b'?' | b'['));
        for p in PARAMS.iter().filter(|p| p.in_profile(profile)) {
            for name in std::iter::once(p.name).chain(p.alias) {
                let hit = if has_glob {
                    !p.is_unlisted() && crate::glob::matches(pat, name.as_bytes(), true)
                } else {
                    pat.eq_ignore_ascii_case(name.as_bytes())
                };
                let shown = if has_glob {
                    name.to_string()
                } else {
                    String::from_utf8_lossy(pat).into_owned()
                };
                if hit && !out.iter().any(|(n, _, _)| *n == name) {
                    out.push((name, shown, p));
                }
            }
        }
    }
    Ok(Reply::Map(
        out.into_iter()
            .map(|(_, shown, p)| (Reply::bulk(shown), Reply::bulk(e.config.get(p))))
            .collect(),
    ))
}

/// CONFIG SET name value [name value ...]: all or nothing. Names are checked first
/// (unknown, immutable, protected, refused while loading, repeated), then values are applied in order; a bad value
/// restores what was applied before it.
fn set(e: &mut Engine, call: &mut Call) -> CmdResult {
    if !call.argc().is_multiple_of(2) {
        return Err(Reply::err(errors::SYNTAX));
    }
    let mut pairs: Vec<(String, &'static Param, String)> = Vec::new();
    for pair in call.args[2..].chunks(2) {
        let given = String::from_utf8_lossy(&pair[0]).to_string();
        let Some(p) = params::lookup_in(&given, e.profile()) else {
            return Err(Reply::err(errors::config_set_unknown(&pair[0])));
        };
        let name = given.to_ascii_lowercase();
        if p.is_immutable() {
            return Err(Reply::err(errors::config_set_failed(
                &name,
                "can't set immutable config",
            )));
        }
        if p.is_protected()
            && !crate::config::protected::allows(
                &e.config
                    .get_by_name("enable-protected-configs")
                    .unwrap_or_default(),
                e.sessions.get(&call.conn).map_or("", |s| s.addr.as_str()),
            )
        {
            return Err(Reply::err(errors::config_set_failed(
                &name,
                "can't set protected config",
            )));
        }
        // Before the duplicate check and any value's validation, as redis-server 7.0.15
        // answers (`CONFIG SET dir x dir y` while loading is -LOADING).
        if p.denied_while_loading() && e.is_loading() {
            return Err(Reply::err(errors::LOADING));
        }
        if pairs.iter().any(|(n, _, _)| *n == name) {
            return Err(Reply::err(errors::config_set_failed(
                &name,
                "duplicate parameter",
            )));
        }
        pairs.push((name, p, String::from_utf8_lossy(&pair[1]).to_string()));
    }
    let before = e.config.clone();
    for (name, p, value) in &pairs {
        if let Err(reason) = e.config.set(p, value) {
            e.config = before;
            return Err(Reply::err(errors::config_set_failed(name, &reason)));
        }
    }
    if pairs.iter().any(|(_, p, _)| p.name == "maxclients") {
        // As Redis: the open-file limit must hold them, or everything set here is undone.
        let n = e
            .config
            .get_by_name("maxclients")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if let crate::config::fd_limit::Fit::Short { best, .. } = crate::config::fd_limit::fit(n) {
            e.config = before;
            return Err(Reply::err(errors::config_set_failed(
                "maxclients",
                &errors::maxclients_over_fd_limit(
                    best.saturating_sub(crate::config::fd_limit::RESERVED_FDS),
                ),
            )));
        }
    }
    if e.config.port != before.port || e.config.bind != before.bind {
        // As Redis: the new port or addresses are listened on before the old ones are let
        // go, and what cannot be listened on undoes everything set here.
        let (bind, port) = (e.config.bind.clone(), e.config.port);
        if let Some(Err(err)) = e.listen_hook.as_mut().map(|listen| listen(&bind, port)) {
            let port_changed = e.config.port != before.port;
            e.config = before;
            return Err(Reply::err(if port_changed {
                errors::config_set_failed("port", &errors::unable_to_listen(&err))
            } else {
                errors::config_set_failed("bind", errors::FAILED_TO_BIND)
            }));
        }
    }
    if let Some((name, _, _)) = pairs
        .iter()
        .find(|(_, p, _)| matches!(p.name, "oom-score-adj" | "oom-score-adj-values"))
    {
        // As Redis: a score that cannot be set undoes everything set here, and the score
        // follows the restored values.
        let replica = e.repl.following.is_some();
        if let Err(line) = crate::oom_score::apply(&e.config, replica) {
            tracing::warn!("{}", line);
            let name = name.clone();
            e.config = before;
            let _ = crate::oom_score::apply(&e.config, replica);
            return Err(Reply::err(errors::config_set_failed(
                &name,
                errors::OOM_SCORE_NOT_SET,
            )));
        }
    }
    if pairs.iter().any(|(_, p, _)| p.name == "requirepass") {
        // requirepass is the password of the ACL user `default`.
        let pass = e.config.requirepass.clone();
        e.acl.set_requirepass(pass.as_deref());
        crate::cmd::acl::refresh_sessions(e, call.conn);
    }
    apply(e);
    // A lower maxmemory does not evict inside CONFIG SET: as in Redis 7.0 (which starts its
    // eviction timer), keys go at the next tick or before the next command, so a MULTI that
    // lowers the limit runs its remaining commands first.
    if pairs.iter().any(|(_, p, _)| p.name == "redlab-seed") {
        // Setting the seed, even to its current value, restarts the random sequence.
        e.rng = crate::rng::EngineRng::new(e.config.seed.unwrap_or(0));
        crate::db::access::seed_dbs(&mut e.dbs, e.config.seed.unwrap_or(0));
    }
    Ok(Reply::ok())
}

/// Makes the engine follow parameters it caches outside `Config`.
fn apply(e: &mut Engine) {
    e.notify_flags = notify::parse_flags(&e.config.notify_keyspace_events).unwrap_or(0);
    if e.notify_flags & notify::NEW == 0 {
        // Keys logged while class `n` was on must not be announced if it comes back.
        for db in &mut e.dbs {
            db.new_log.clear();
        }
    }
    if e.acl.starts_authenticated() {
        // As in Redis: with no password the default user needs no AUTH.
        for s in e.sessions.values_mut() {
            s.authenticated = true;
        }
    }
}

fn resetstat(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let s = &mut e.stats;
    s.total_commands_processed = 0;
    s.total_connections_received = 0;
    s.total_error_replies = 0;
    s.expired_keys = 0;
    s.evicted_keys = 0;
    s.evicted_clients = 0;
    s.reply_buffer_shrinks = 0;
    s.reply_buffer_expands = 0;
    s.keyspace_hits = 0;
    s.keyspace_misses = 0;
    s.per_command.clear();
    s.errors_by_code.clear();
    e.latency_tracking.reset();
    e.rejected_connections
        .store(0, std::sync::atomic::Ordering::Relaxed);
    Ok(Reply::ok())
}

/// CONFIG REWRITE: the start's config file, rewritten (`config_rewrite`); an error when the
/// server was started without one.
fn rewrite(e: &mut Engine, _call: &mut Call) -> CmdResult {
    let Some(path) = e.config.config_file.clone() else {
        return Err(Reply::err(errors::CONFIG_NO_FILE));
    };
    match super::config_rewrite::rewrite(e, &path, false) {
        Ok(()) => {
            tracing::info!("CONFIG REWRITE executed with success.");
            Ok(Reply::ok())
        }
        Err(err) => {
            tracing::warn!("CONFIG REWRITE failed: {}", err);
            Err(Reply::err(errors::config_rewrite_failed(&err)))
        }
    }
}

fn help(e: &mut Engine, _call: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    ))
}

pub(super) static SUBCOMMANDS: &[Command] = &[
    Command::new("help", 2, LOADING | STALE, "server", help),
    Command::new(
        "resetstat",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        resetstat,
    ),
    Command::new(
        "rewrite",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "server",
        rewrite,
    ),
    Command::new("get", -3, ADMIN | NOSCRIPT | LOADING | STALE, "server", get),
    Command::new("set", -4, ADMIN | NOSCRIPT | LOADING | STALE, "server", set),
];

#[cfg(test)]
mod tests {
    use crate::{Config, Engine, Reply};

    #[test]
    fn config_set_is_atomic_and_applies_notify_flags() {
        let mut e = Engine::new(Config::default());
        let r = e.execute(1, &["CONFIG", "SET", "hz", "20", "maxmemory", "abc"]);
        assert!(r.is_error());
        assert_eq!(e.config.get_by_name("hz").unwrap(), "10");
        assert_eq!(
            e.execute(
                1,
                &[
                    "CONFIG",
                    "SET",
                    "notify-keyspace-events",
                    "KEA",
                    "maxmemory",
                    "1mb"
                ]
            ),
            Reply::ok()
        );
        assert_eq!(e.notify_flags, crate::notify::parse_flags("KEA").unwrap());
        assert_eq!(e.config.maxmemory, 1 << 20);
        let all = e.execute(1, &["CONFIG", "GET", "*"]);
        let Reply::Map(pairs) = all else {
            panic!("map")
        };
        assert_eq!(pairs.len(), 192);
    }

    #[test]
    fn requirepass_set_at_run_time_asks_new_clients_to_auth() {
        let mut e = Engine::new(Config::default());
        assert_eq!(
            e.execute(1, &["CONFIG", "SET", "requirepass", "pw"]),
            Reply::ok()
        );
        let c = e.connect();
        assert_eq!(
            e.execute(c, &["GET", "k"]),
            Reply::err(crate::errors::NOAUTH)
        );
    }
}
