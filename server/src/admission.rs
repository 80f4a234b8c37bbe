//! "May this connection run this command now?" — one answer for the engine's dispatcher and
//! for the loop that serves other connections while a script is busy.
//!
//! Before this existed the busy loop had its own list of names and no idea of authentication,
//! so an unauthenticated client could SCRIPT KILL or SHUTDOWN NOSAVE a server with a
//! password. The decision is pure: it sees the command's table entry and a small copy of the
//! connection's state, which the network shell keeps next to the socket so it can be read
//! while the engine is borrowed by the running script.
//!
//! The checks run in the order of Redis's `processCommand`: authentication, MULTI, ACL
//! permissions, memory, the RESP2 pub/sub context, loading, then the busy script. The permission check
//! needs the user and the arguments, which only the caller has: it comes in as `perm`
//! (`acl::check` behind it) and runs only for a connection whose user is restricted, so the
//! default user's connections pay one flag test. Unknown commands and wrong arity are found earlier,
//! by `engine::resolve`, as in Redis (they answer even an unauthenticated client).

use crate::cmd::table::{flags, policy, Command};
use crate::errors;
use crate::reply::Reply;

/// What admission needs to know about a connection. Copied out of the engine's session after
/// every command, so the busy loop reads it without the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnView {
    pub authenticated: bool,
    /// The connection's user may run anything (no ACL check needed).
    pub acl_free: bool,
    pub resp: u8,
    /// Subscribed to a channel, pattern or shard channel.
    pub subscribed: bool,
    pub in_multi: bool,
    /// In MONITOR mode. Redis marks a monitor as a replica (CLIENT_SLAVE), and a replica
    /// may not run what reads or writes the keyspace.
    pub monitor: bool,
}

impl ConnView {
    /// A connection that has run nothing yet.
    pub fn fresh(authenticated: bool) -> ConnView {
        ConnView {
            authenticated,
            acl_free: true,
            resp: 2,
            subscribed: false,
            in_multi: false,
            monitor: false,
        }
    }
}

/// The script holding the server, when there is one past busy-reply-threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusyKind {
    /// FCALL (FUNCTION KILL applies) rather than EVAL (SCRIPT KILL applies).
    pub is_function: bool,
    /// The server's name in the -BUSY text: Valkey 8 says "Valkey is busy".
    pub title: &'static str,
}

/// Allow, or the exact error Redis answers. `name` is the command's full name (`client|id`).
/// `loading`: the RDB file is being loaded at start (`persist::loading`); only commands
/// flagged `loading` run meanwhile.
/// `over_memory`: memory is over maxmemory and Redis would refuse this command for it (the
/// engine works that out; the busy loop never runs commands, so it passes false).
/// `perm`: the ACL decision for this line, asked only when the user is restricted.
pub fn admit(
    cmd: &Command,
    name: &str,
    conn: &ConnView,
    busy: Option<BusyKind>,
    loading: bool,
    over_memory: bool,
    perm: impl FnOnce() -> Result<(), Reply>,
) -> Result<(), Reply> {
    if !conn.authenticated && !cmd.has(flags::NO_AUTH) {
        return Err(Reply::err(errors::NOAUTH));
    }
    if conn.in_multi && cmd.has(flags::NO_MULTI) {
        return Err(Reply::err(errors::NOT_ALLOWED_IN_MULTI));
    }
    if !conn.acl_free {
        perm()?;
    }
    if over_memory {
        return Err(Reply::err(errors::OOM));
    }
    if conn.resp == 2 && conn.subscribed && !cmd.policy(policy::SUBSCRIBED_OK) {
        return Err(Reply::err(errors::not_allowed_subscribed(name)));
    }
    if loading && !cmd.has(flags::LOADING) {
        return Err(Reply::err(errors::LOADING));
    }
    if let Some(kind) = busy {
        if !cmd.has(flags::ALLOW_BUSY) {
            return Err(busy_error(kind));
        }
    }
    if conn.monitor && cmd.has(flags::WRITE | flags::READONLY | flags::MAY_REPLICATE) {
        return Err(Reply::err(errors::REPLICA_KEYSPACE));
    }
    Ok(())
}

/// Redis's -BUSY text, which names the KILL that applies to the running script.
pub fn busy_error(kind: BusyKind) -> Reply {
    let kill = if kind.is_function {
        "FUNCTION"
    } else {
        "SCRIPT"
    };
    Reply::err(errors::busy(kind.title, kill))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::table::{lookup, lookup_sub};

    fn sub(parent: &str, name: &str) -> &'static Command {
        lookup_sub(lookup(parent.as_bytes()).unwrap(), name.as_bytes()).unwrap()
    }

    fn err(r: Result<(), Reply>) -> String {
        match r {
            Err(Reply::Error(t)) => t.to_string(),
            other => panic!("expected an error, got {:?}", other),
        }
    }

    fn ok() -> Result<(), Reply> {
        Ok(())
    }

    const EVAL: Option<BusyKind> = Some(BusyKind {
        is_function: false,
        title: "Redis",
    });

    #[test]
    fn unauthenticated_gets_noauth_even_for_what_a_busy_script_allows() {
        let anon = ConnView::fresh(false);
        for (cmd, name) in [
            (sub("script", "kill"), "script|kill"),
            (sub("function", "kill"), "function|kill"),
        ] {
            assert_eq!(
                err(admit(cmd, name, &anon, EVAL, false, false, ok)),
                errors::NOAUTH
            );
            assert_eq!(
                err(admit(cmd, name, &anon, None, false, false, ok)),
                errors::NOAUTH
            );
        }
        let shutdown = lookup(b"shutdown").unwrap();
        assert_eq!(
            err(admit(shutdown, "shutdown", &anon, EVAL, false, false, ok)),
            errors::NOAUTH
        );
        for name in ["auth", "hello", "quit", "reset"] {
            assert!(
                admit(
                    lookup(name.as_bytes()).unwrap(),
                    name,
                    &anon,
                    EVAL,
                    false,
                    false,
                    ok
                )
                .is_ok(),
                "{name}"
            );
        }
    }

    #[test]
    fn busy_lets_through_only_allow_busy_commands() {
        let user = ConnView::fresh(true);
        assert!(admit(
            sub("script", "kill"),
            "script|kill",
            &user,
            EVAL,
            false,
            false,
            ok
        )
        .is_ok());
        assert!(admit(
            lookup(b"multi").unwrap(),
            "multi",
            &user,
            EVAL,
            false,
            false,
            ok
        )
        .is_ok());
        let ping = lookup(b"ping").unwrap();
        assert!(admit(ping, "ping", &user, None, false, false, ok).is_ok());
        assert_eq!(
            err(admit(ping, "ping", &user, EVAL, false, false, ok)),
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
        );
        assert!(err(admit(
            ping,
            "ping",
            &user,
            Some(BusyKind {
                is_function: true,
                title: "Redis",
            }),
            false,
            false,
            ok
        ))
        .contains("FUNCTION KILL"));
    }

    #[test]
    fn loading_lets_through_only_loading_commands_after_auth() {
        let user = ConnView::fresh(true);
        let ping = lookup(b"ping").unwrap();
        assert_eq!(
            err(admit(ping, "ping", &user, None, true, false, ok)),
            "LOADING Redis is loading the dataset in memory"
        );
        for (cmd, name) in [
            (lookup(b"info").unwrap(), "info"),
            (lookup(b"select").unwrap(), "select"),
            (sub("config", "set"), "config|set"),
            (sub("config", "get"), "config|get"),
        ] {
            assert!(
                admit(cmd, name, &user, None, true, false, ok).is_ok(),
                "{name}"
            );
        }
        // Authentication is asked first, as Redis's processCommand does.
        let anon = ConnView::fresh(false);
        assert_eq!(
            err(admit(ping, "ping", &anon, None, true, false, ok)),
            errors::NOAUTH
        );
    }

    #[test]
    fn resp2_subscriber_context_and_multi() {
        let subscriber = ConnView {
            subscribed: true,
            ..ConnView::fresh(true)
        };
        let get = lookup(b"get").unwrap();
        assert!(err(admit(get, "get", &subscriber, None, false, false, ok))
            .starts_with("ERR Can't execute 'get'"));
        assert!(admit(
            get,
            "get",
            &ConnView {
                resp: 3,
                ..subscriber
            },
            None,
            false,
            false,
            ok
        )
        .is_ok());
        let in_multi = ConnView {
            in_multi: true,
            ..ConnView::fresh(true)
        };
        assert_eq!(
            err(admit(
                lookup(b"shutdown").unwrap(),
                "shutdown",
                &in_multi,
                None,
                false,
                false,
                ok
            )),
            errors::NOT_ALLOWED_IN_MULTI
        );
    }

    #[test]
    fn permission_is_asked_only_for_restricted_users() {
        let get = lookup(b"get").unwrap();
        let deny = || Err(Reply::err("NOPERM no"));
        let free = ConnView::fresh(true);
        assert!(admit(get, "get", &free, None, false, false, deny).is_ok());
        let limited = ConnView {
            acl_free: false,
            ..free
        };
        assert_eq!(
            err(admit(get, "get", &limited, None, false, false, deny)),
            "NOPERM no"
        );
        // Authentication comes first, and permission before memory.
        let anon = ConnView {
            authenticated: false,
            ..limited
        };
        assert_eq!(
            err(admit(get, "get", &anon, None, false, true, deny)),
            errors::NOAUTH
        );
        assert_eq!(
            err(admit(get, "get", &limited, None, false, true, deny)),
            "NOPERM no"
        );
    }
}
