//! Which commands Redis 7.0 refuses while used memory is over `maxmemory`, before they run.
//!
//! A command's DENYOOM flag is not the whole answer. A script that declares its flags (an
//! EVAL with a `#!lua` line, every function) is judged by those flags instead of EVAL's or
//! FCALL's, at its start: without `allow-oom` or `no-writes` it is refused outright, even if it
//! would only read. A script without a shebang is not refused here; its first
//! denied-on-OOM command inside is (see `script_call`). In a transaction every command but
//! EXEC, DISCARD, QUIT and RESET is refused (queueing itself takes memory), and EXEC is
//! refused, aborting the transaction, when a command it queued would have been.

use bytes::Bytes;

use crate::cmd::table::{policy, Command};
use crate::engine::{resolve, Engine};
use crate::lua::cache::{normalize_sha, sha1_hex};
use crate::lua::shebang;
use crate::session::ConnId;

/// True when Redis would refuse `args` (resolved to `cmd`, sent by `conn`) with -OOM if
/// memory is over the limit. Says nothing about whether it is: the caller asks that only
/// when this is true.
pub(crate) fn refused_when_over(e: &Engine, conn: ConnId, cmd: &Command, args: &[Bytes]) -> bool {
    let queue = e
        .sessions
        .get(&conn)
        .and_then(|s| s.multi.as_ref())
        .map(|m| &m.queue);
    match (cmd.name, queue) {
        ("exec", Some(queue)) => queue
            .iter()
            .any(|q| resolve(q).is_ok_and(|(c, _)| denies_oom(e, c, q))),
        (_, Some(_)) if cmd.policy(policy::OOM_OK_IN_MULTI) => false,
        // Valkey 8 queues inside MULTI what it would run outside it over maxmemory, and
        // refuses only what denies OOM (Redis 7.0 refuses every queued command).
        (_, Some(_))
            if e.profile().family() == crate::compat::Family::Valkey
                && e.profile().level() >= 80 =>
        {
            denies_oom(e, cmd, args)
        }
        (_, Some(_)) => true,
        (_, None) => denies_oom(e, cmd, args),
    }
}

/// DENYOOM as Redis computes it for one command, with a script's declared flags in place of
/// EVAL's and FCALL's.
fn denies_oom(e: &Engine, cmd: &Command, args: &[Bytes]) -> bool {
    if cmd.denies_oom_in(e.profile()) {
        return true;
    }
    match declared_flags(e, cmd, args) {
        Some(f) => {
            f & shebang::EVAL_COMPAT == 0 && f & (shebang::ALLOW_OOM | shebang::NO_WRITES) == 0
        }
        None => false,
    }
}

/// The flags of the script an EVAL/EVALSHA/FCALL (or _RO) would run, as far as Redis can tell
/// before running it: a cached script's, else an EVAL body's shebang (without compiling it),
/// else a loaded function's. None when nothing is known (unknown SHA or function, a broken
/// shebang): the command's own flags apply, and the command reports the problem itself.
pub(crate) fn declared_flags(e: &Engine, cmd: &Command, args: &[Bytes]) -> Option<u32> {
    let body = args.get(1)?;
    match cmd.name {
        "eval" | "eval_ro" => match e.scripting.cache.get(&sha1_hex(body)) {
            Some(s) => Some(s.flags),
            None => {
                let engines = e.profile().has(crate::compat::since::VALKEY_SCRIPT_ENGINES);
                shebang::parse_eval(body, engines).ok().map(|(f, _)| f)
            }
        },
        "evalsha" | "evalsha_ro" => e
            .scripting
            .cache
            .get(&normalize_sha(body)?)
            .map(|s| s.flags),
        "fcall" | "fcall_ro" => e.scripting.libs.function(body).map(|f| f.flags),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::engine::Engine;
    use crate::errors;
    use crate::reply::Reply;

    fn run(e: &mut Engine, conn: crate::session::ConnId, args: &[&str]) -> Reply {
        e.execute(conn, args)
    }

    #[test]
    fn declared_flags_decide_before_anything_else_is_checked() {
        let mut e = Engine::new(Config::default());
        let c = e.connect();
        e.config_mut().maxmemory = 1;
        let oom = Reply::err(errors::OOM);
        // Before the _ro check, numkeys and compiling: Redis refuses at the door.
        assert_eq!(run(&mut e, c, &["EVAL_RO", "#!lua\nreturn 1", "0"]), oom);
        assert_eq!(run(&mut e, c, &["EVAL", "#!lua\nreturn 1", "-1"]), oom);
        assert_eq!(run(&mut e, c, &["EVAL", "#!lua\nreturn (", "0"]), oom);
        assert_eq!(
            run(
                &mut e,
                c,
                &["EVAL_RO", "#!lua flags=allow-oom\nreturn 1", "0"]
            ),
            Reply::err(errors::CAN_NOT_EXECUTE_A_SCRIPT_WITH)
        );
        assert_eq!(
            run(&mut e, c, &["EVAL", "#!lua flags=no-writes\nreturn 1", "0"]),
            Reply::Int(1)
        );
        assert_eq!(
            run(&mut e, c, &["EVAL", "return 1", "0"]),
            Reply::Int(1),
            "no shebang: checked per command inside"
        );
    }

    #[test]
    fn a_transaction_over_the_limit_queues_nothing_and_exec_aborts() {
        let mut e = Engine::new(Config::default());
        let c = e.connect();
        run(&mut e, c, &["MULTI"]);
        assert_eq!(
            run(&mut e, c, &["EVAL", "#!lua\nreturn 1", "0"]),
            Reply::Status("QUEUED".into())
        );
        e.config_mut().maxmemory = 1;
        assert_eq!(run(&mut e, c, &["GET", "k"]), Reply::err(errors::OOM));
        assert_eq!(
            run(&mut e, c, &["EXEC"]),
            Reply::err(errors::execabort_because(errors::OOM))
        );
        assert_eq!(
            run(&mut e, c, &["EXEC"]),
            Reply::err(errors::EXEC_WITHOUT_MULTI),
            "the transaction is gone"
        );
        run(&mut e, c, &["MULTI"]);
        assert_eq!(run(&mut e, c, &["DISCARD"]), Reply::ok());
    }
}
