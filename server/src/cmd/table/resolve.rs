//! From a command line to its table entry: the one resolver used by the dispatcher, the
//! busy-script loop and `redis.call`, each with the error texts Redis gives in that place.

use std::borrow::Cow;

use bytes::Bytes;

use super::{flags, lookup, lookup_in, lookup_sub, lookup_sub_in, Command};
use crate::compat::Profile;
use crate::errors;
use crate::reply::Reply;

/// Finds the command (or subcommand) for `args` in the whole table, with Redis's
/// unknown-command, unknown-subcommand and arity errors. For re-resolving a command that was
/// already admitted (a blocked client served again); a client's command goes through
/// `resolve_for` with the server's profile.
pub fn resolve(args: &[Bytes]) -> Result<(&'static Command, Cow<'static, str>), Reply> {
    resolve_with(args, lookup, lookup_sub, Command::arity_ok_somewhere)
}

/// `resolve` as a server answering as `profile` does: a command or subcommand newer than the
/// profile is unknown, with the error that version gives (before any arity check, as there).
pub fn resolve_for(
    profile: Profile,
    args: &[Bytes],
) -> Result<(&'static Command, Cow<'static, str>), Reply> {
    resolve_with(
        args,
        |name| lookup_in(profile, name),
        |parent, name| lookup_sub_in(profile, parent, name),
        |cmd, argc| cmd.arity_ok_in(profile, argc),
    )
}

/// The command a refused line names, for its rejected_calls count: the command or, for a
/// container with a subcommand argument, the subcommand, whatever the arity; None when
/// Redis would not know it (an unknown command or subcommand).
pub fn named_command(
    profile: Profile,
    args: &[Bytes],
) -> Option<(&'static Command, Cow<'static, str>)> {
    let cmd = lookup_in(profile, args.first()?)?;
    if cmd.subcommands.is_empty() || args.len() < 2 {
        return Some((cmd, Cow::Borrowed(cmd.name)));
    }
    let sub = lookup_sub_in(profile, cmd, &args[1])?;
    Some((sub, Cow::Owned(sub.full_name(Some(cmd)))))
}

fn resolve_with(
    args: &[Bytes],
    find: impl Fn(&[u8]) -> Option<&'static Command>,
    find_sub: impl Fn(&'static Command, &[u8]) -> Option<&'static Command>,
    arity_ok: impl Fn(&Command, usize) -> bool,
) -> Result<(&'static Command, Cow<'static, str>), Reply> {
    let Some(cmd) = find(&args[0]) else {
        return Err(Reply::err(errors::unknown_command(&args[0], &args[1..])));
    };
    if cmd.subcommands.is_empty() {
        if !arity_ok(cmd, args.len()) {
            return Err(Reply::err(errors::wrong_arity(cmd.name)));
        }
        return Ok((cmd, Cow::Borrowed(cmd.name)));
    }
    if args.len() < 2 {
        // A container that also runs on its own (COMMAND) has an arity that allows it.
        if arity_ok(cmd, args.len()) {
            return Ok((cmd, Cow::Borrowed(cmd.name)));
        }
        return Err(Reply::err(errors::wrong_arity(cmd.name)));
    }
    let Some(sub) = find_sub(cmd, &args[1]) else {
        return Err(Reply::err(errors::unknown_subcommand(cmd.name, &args[1])));
    };
    let full = sub.full_name(Some(cmd));
    if !arity_ok(sub, args.len()) {
        return Err(Reply::err(errors::wrong_arity(&full)));
    }
    Ok((sub, Cow::Owned(full)))
}

/// Why `redis.call` refuses a command before running it (the texts of Redis's scriptCall).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptRefusal {
    Unknown,
    Arity,
    NoScript,
    WriteInReadOnly,
}

impl ScriptRefusal {
    /// The text under `profile`: Valkey 8 dropped "Redis" from two of them.
    pub fn text_for(self, profile: Profile) -> &'static str {
        match (profile.family(), self) {
            (crate::compat::Family::Valkey, ScriptRefusal::Unknown) => {
                errors::SCRIPT_UNKNOWN_COMMAND_VALKEY
            }
            (crate::compat::Family::Valkey, ScriptRefusal::Arity) => errors::SCRIPT_ARITY_VALKEY,
            _ => self.text(),
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            ScriptRefusal::Unknown => errors::SCRIPT_UNKNOWN_COMMAND,
            ScriptRefusal::Arity => errors::SCRIPT_ARITY,
            ScriptRefusal::NoScript => errors::SCRIPT_NOT_ALLOWED,
            ScriptRefusal::WriteInReadOnly => errors::SCRIPT_WRITE_IN_READ_ONLY,
        }
    }
}

/// `resolve` for `redis.call`: the command and its parent (for a subcommand), or why a script
/// may not run it. `read_only`: the script may not write (EVAL_RO, a `no-writes` script).
/// `deny_disabled`: DEBUG SET-DISABLE-DENY-SCRIPTS lets noscript commands through.
/// `profile`: the server's; a command newer than it is unknown to scripts too.
pub fn resolve_in_script(
    profile: Profile,
    args: &[Bytes],
    read_only: bool,
    deny_disabled: bool,
) -> Result<(&'static Command, Option<&'static Command>), ScriptRefusal> {
    let top = lookup_in(profile, &args[0]).ok_or(ScriptRefusal::Unknown)?;
    let (cmd, parent) = if top.subcommands.is_empty() || args.len() < 2 {
        (top, None)
    } else {
        let sub = lookup_sub_in(profile, top, &args[1]).ok_or(ScriptRefusal::Unknown)?;
        (sub, Some(top))
    };
    if !cmd.arity_ok_in(profile, args.len()) {
        return Err(ScriptRefusal::Arity);
    }
    if cmd.has(flags::NOSCRIPT) && !deny_disabled && !scriptable_in(profile, cmd) {
        return Err(ScriptRefusal::NoScript);
    }
    // Redis counts may-replicate commands (PFCOUNT, which may rewrite its cache) as writes here.
    if cmd.has(flags::WRITE | flags::MAY_REPLICATE) && read_only {
        return Err(ScriptRefusal::WriteInReadOnly);
    }
    Ok((cmd, parent))
}

/// A blocking command that `profile`'s scripts may run (as a non-blocking one), though the
/// table, which is Redis 7.0's (7.2's for WAITAOF), flags it noscript.
fn scriptable_in(profile: Profile, cmd: &Command) -> bool {
    use crate::compat::since::{scriptable_later, BLOCKING_IN_SCRIPTS, SCRIPTABLE_BLOCKING};
    (profile.has(BLOCKING_IN_SCRIPTS) && SCRIPTABLE_BLOCKING.contains(&cmd.name))
        || scriptable_later(profile, cmd.name)
}
