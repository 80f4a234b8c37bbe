//! The one permission decision: may this user run this command line? Called by the
//! dispatcher (through admission) and by `redis.call`, which runs with the caller's user.

use bytes::Bytes;

use super::model::{Selector, User};
use crate::cmd::table::meta::key_flags;
use crate::cmd::table::{flags, keyspec, Command};

/// Whether every channel and pattern a subscriber holds is still allowed to `user` (by some
/// selector): Redis closes a subscriber whose user lost one.
pub fn subscriptions_allowed<'a>(
    user: &User,
    channels: impl Iterator<Item = &'a Vec<u8>>,
    patterns: impl Iterator<Item = &'a Vec<u8>>,
) -> bool {
    let sels: Vec<&Selector> = std::iter::once(&user.root)
        .chain(user.selectors.iter())
        .collect();
    if sels.iter().any(|s| s.all_channels) {
        return true;
    }
    let ok = |c: &[u8], pattern: bool| sels.iter().any(|s| channel_allowed(s, c, pattern));
    let mut channels = channels;
    let mut patterns = patterns;
    channels.all(|c| ok(c, false)) && patterns.all(|p| ok(p, true))
}

/// Why a command was refused, ordered as Redis ranks them when selectors disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeniedKind {
    Command,
    Key,
    Channel,
}

/// A refusal and the argument it is about (0 for the command itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denied {
    pub kind: DeniedKind,
    pub pos: usize,
}

/// Checks `args` (a line resolved to `cmd`, named `full` as in `client|id`) against every
/// selector of `user`: allowed when one selector allows it; otherwise the refusal Redis
/// reports (a key or channel over the command, the latest argument among equals).
pub fn check(user: &User, cmd: &Command, full: &str, args: &[Bytes]) -> Result<(), Denied> {
    KEYS.with_borrow_mut(|keys| {
        // The line's keys, found once for every selector that restricts keys (`Keys`).
        let mut keys = Keys {
            found: false,
            list: keys,
        };
        let mut worst = Denied {
            kind: DeniedKind::Command,
            pos: 0,
        };
        for sel in std::iter::once(&user.root).chain(user.selectors.iter()) {
            match check_selector(sel, cmd, full, args, &mut keys) {
                Ok(()) => return Ok(()),
                Err(d) => {
                    if d.kind > worst.kind || (d.kind == worst.kind && d.pos > worst.pos) {
                        worst = d;
                    }
                }
            }
        }
        Err(worst)
    })
}

/// Whether a selector of `user` that allows this command line also grants reading every
/// key (`allkeys`, or a pattern that is exactly `*` with read permission): Redis's
/// `ACLUserCheckCmdWithUnrestrictedKeyAccess`, which SORT asks before BY with a pattern or GET
/// reads keys its key specifications do not name. A selector that grants `*` but does not
/// allow the command does not count, nor does a pattern such as `**` that matches every key.
pub fn unrestricted_key_access(user: &User, cmd: &Command, full: &str, args: &[Bytes]) -> bool {
    KEYS.with_borrow_mut(|keys| {
        let mut keys = Keys {
            found: false,
            list: keys,
        };
        std::iter::once(&user.root)
            .chain(user.selectors.iter())
            .any(|sel| {
                (sel.all_keys || sel.keys.iter().any(|p| p.read && p.pattern == b"*"))
                    && check_selector(sel, cmd, full, args, &mut keys).is_ok()
            })
    })
}

thread_local! {
    /// The vector the keys of the line being checked are found into: the check runs before
    /// every command of a restricted user, and a vector of its own each time was a quarter of
    /// its cost. (A `redis.call` inside a script is checked after its caller's check ended.)
    static KEYS: std::cell::RefCell<Vec<keyspec::KeyRef>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The keys of the line being checked, looked up on first use.
struct Keys<'a> {
    found: bool,
    list: &'a mut Vec<keyspec::KeyRef>,
}

impl Keys<'_> {
    fn get(&mut self, cmd: &Command, args: &[Bytes]) -> &[keyspec::KeyRef] {
        if !self.found {
            self.found = true;
            keyspec::find_into(cmd, args, self.list);
        }
        self.list
    }
}

fn check_selector(
    sel: &Selector,
    cmd: &Command,
    full: &str,
    args: &[Bytes],
    keys: &mut Keys,
) -> Result<(), Denied> {
    if !sel.all_commands && !cmd.has(flags::NO_AUTH) && !sel.allowed.contains(full) {
        let first_arg_ok = sel.first_args.get(full).is_some_and(|allowed| {
            let idx = if full.contains('|') { 2 } else { 1 };
            args.get(idx)
                .is_some_and(|a| allowed.iter().any(|x| x.as_bytes().eq_ignore_ascii_case(a)))
        });
        if !first_arg_ok {
            return Err(Denied {
                kind: DeniedKind::Command,
                pos: 0,
            });
        }
    }
    if !sel.all_keys && keyspec::has_keys(cmd) {
        for k in keys.get(cmd, args) {
            if !key_allowed(sel, &args[k.pos], k.flags) {
                return Err(Denied {
                    kind: DeniedKind::Key,
                    pos: k.pos,
                });
            }
        }
    }
    if !sel.all_channels {
        let (positions, pattern) = channels(full, args);
        for pos in positions {
            if !channel_allowed(sel, &args[pos], pattern) {
                return Err(Denied {
                    kind: DeniedKind::Channel,
                    pos,
                });
            }
        }
    }
    Ok(())
}

fn key_allowed(sel: &Selector, key: &[u8], spec_flags: u32) -> bool {
    let need_read = spec_flags & key_flags::ACCESS != 0;
    let need_write = spec_flags & (key_flags::INSERT | key_flags::DELETE | key_flags::UPDATE) != 0;
    sel.keys
        .iter()
        .any(|p| (!need_read || p.read) && (!need_write || p.write) && p.matches(key))
}

/// A channel must match one of the patterns; a pattern (PSUBSCRIBE) must equal one.
pub(crate) fn channel_allowed(sel: &Selector, channel: &[u8], is_pattern: bool) -> bool {
    sel.channels.iter().any(|p| {
        if is_pattern {
            p.as_slice() == channel
        } else {
            crate::glob::matches(p, channel, false)
        }
    })
}

/// The arguments that name channels a command publishes to or subscribes to, and whether
/// they are patterns. Unsubscribing is never checked, as in Redis.
fn channels(full: &str, args: &[Bytes]) -> (std::ops::Range<usize>, bool) {
    match full {
        "publish" | "spublish" => (1..2, false),
        "subscribe" | "ssubscribe" => (1..args.len(), false),
        "psubscribe" => (1..args.len(), true),
        _ => (0..0, false),
    }
}
