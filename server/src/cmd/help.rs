//! The HELP subcommand of every container command (CLIENT HELP, OBJECT HELP, ...).
//!
//! Redis builds each of these replies with one function (`addReplyHelp`): a header naming the
//! command, the command's own lines, then the HELP entry itself. redlab does the same, so a
//! container lists only its own lines.

use crate::compat::{Family, Profile};
use crate::reply::Reply;

/// The reply of `<cmd> HELP`: Redis's header line, `lines` as status replies, and the footer,
/// which Valkey 8 words "Print this help." (Redis: "Prints this help.").
pub(crate) fn help_reply(profile: Profile, cmd: &str, lines: &[&str]) -> Reply {
    let mut out = Vec::with_capacity(lines.len() + 3);
    out.push(Reply::Status(format!(
        "{cmd} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    )));
    out.extend(lines.iter().map(|l| Reply::status(l)));
    out.push(Reply::status("HELP"));
    out.push(Reply::status(
        if profile.family() == Family::Valkey && profile.level() >= 80 {
            "    Print this help."
        } else {
            "    Prints this help."
        },
    ));
    Reply::Array(out)
}
