//! Where a profile refuses: the dispatcher and `redis.call` find commands through
//! `table::resolve_for` / `resolve_in_script` with the server's profile; these helpers record
//! what was refused, and let a handler ask about one of its options.

use bytes::Bytes;

use super::{Profile, Since};
use crate::cmd::table;
use crate::engine::Engine;

/// The command (or subcommand) of `args` that redlab has but `profile` lacks, by full name,
/// with when it arrived; None when the line is unknown everywhere or the profile has it.
pub fn lacking(profile: Profile, args: &[Bytes]) -> Option<(String, Since)> {
    let top = table::lookup(args.first()?)?;
    if !profile.has(top.since) {
        return Some((top.name.to_string(), top.since));
    }
    if top.subcommands.is_empty() {
        return None;
    }
    let sub = table::lookup_sub(top, args.get(1)?)?;
    (!profile.has(sub.since)).then(|| (sub.full_name(Some(top)), sub.since))
}

impl Engine {
    /// The profile this engine answers as.
    pub fn profile(&self) -> Profile {
        self.config.compat
    }

    /// Records `args` in the report when its command failed to resolve because the profile
    /// lacks it (called on the dispatcher's and scripts' error paths only).
    pub(crate) fn note_refused_command(&self, args: &[Bytes]) {
        if let Some((name, since)) = lacking(self.config.compat, args) {
            self.compat_report.record(&name, since);
        }
    }

    /// Whether the profile has an option that arrived at `since` (`what`: `set IFEQ`);
    /// records it when not. The handler then answers as that version does (a syntax error).
    pub(crate) fn has_option(&self, since: Since, what: &str) -> bool {
        let ok = self.config.compat.has(since);
        if !ok {
            self.compat_report.record(what, since);
        }
        ok
    }
}
