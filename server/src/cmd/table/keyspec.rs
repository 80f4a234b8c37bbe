//! Which arguments of a command line are keys, and how the command uses each: Redis 7.0's
//! key-spec walk (`getKeysUsingKeySpecs`) with its fallbacks, so WATCH, fault rules, strict-key
//! scripts and COMMAND GETKEYS[ANDFLAGS] all see the keys Redis sees.
//!
//! Redis prefers the key specs when every one of them has reliable flags; when one is invalid
//! for this line (a bad numkeys, too few arguments) or incomplete, or its flags vary with the
//! arguments, it falls back to the command's own key finder (`keys_fn` here), whose keys
//! carry no flags except for the two commands that compute them (SET, BITFIELD).

use bytes::Bytes;

use super::meta::{key_flags, BeginSearch, FindKeys, KeySpec};
use super::Command;

/// One key: its argument index and its key-spec flags (`meta::key_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRef {
    pub pos: usize,
    pub flags: u32,
}

/// The keys of `args` (the command name at 0) for `cmd`.
pub fn find(cmd: &Command, args: &[Bytes]) -> Vec<KeyRef> {
    find_as(cmd, cmd.meta, args)
}

/// `find` into `out` (cleared first), for a caller that keeps one vector for every line: the
/// ACL check, which runs before each command of a restricted user.
pub fn find_into(cmd: &Command, args: &[Bytes], out: &mut Vec<KeyRef>) {
    find_as_into(cmd, cmd.meta, args, out);
}

/// `find` with the key specs of `meta` (another server's description of `cmd`, for COMMAND
/// GETKEYSANDFLAGS under its profile: the same keys, that server's flags).
pub fn find_as(
    cmd: &Command,
    meta: Option<&'static super::meta::Meta>,
    args: &[Bytes],
) -> Vec<KeyRef> {
    let mut keys = Vec::new();
    find_as_into(cmd, meta, args, &mut keys);
    keys
}

fn find_as_into(
    cmd: &Command,
    meta: Option<&'static super::meta::Meta>,
    args: &[Bytes],
    keys: &mut Vec<KeyRef>,
) {
    keys.clear();
    find_keys(cmd, meta, args, keys);
    if matches!(cmd.name, "sort" | "sort_ro" | "migrate") {
        // Their key finders in Redis (sortGetKeys, sortROGetKeys, migrateGetKeys) give each
        // key its flags: the sorted key is read, SORT's STORE target overwritten, MIGRATE's
        // keys read and deleted.
        use key_flags::*;
        for (i, k) in keys.iter_mut().filter(|k| k.flags == 0).enumerate() {
            k.flags = match (cmd.name, i) {
                ("migrate", _) => RW | ACCESS | DELETE,
                ("sort", 1..) => OW | UPDATE,
                _ => RO | ACCESS,
            };
        }
    }
}

/// The keys into `out` (empty on entry).
fn find_keys(
    cmd: &Command,
    meta: Option<&super::meta::Meta>,
    args: &[Bytes],
    out: &mut Vec<KeyRef>,
) {
    if let Some(key) = meta.and_then(|m| one_key(cmd, &m.key_specs, args)) {
        out.push(key);
        return;
    }
    find_keys_walk(cmd, meta, args, out);
}

/// The one key of a command with one plain key spec (GET, SET, INCR, HSET ...: most
/// commands), found without the general walk: a cluster node routes every command by its
/// keys, and the walk cost it as much again as the rest of routing. None where the walk
/// decides (several specs, a keyword or numkeys search, too few arguments, or a command
/// whose varying flags come from its own finder); `find_keys_walk` gives the same key then.
fn one_key(cmd: &Command, specs: &[KeySpec], args: &[Bytes]) -> Option<KeyRef> {
    let [spec] = specs else { return None };
    if spec.flags & (key_flags::NOT_KEY | key_flags::INCOMPLETE) != 0 {
        return None;
    }
    let (BeginSearch::Index(pos), FindKeys::Range { lastkey: 0, .. }) = (&spec.begin, &spec.find)
    else {
        return None;
    };
    let pos = *pos as usize;
    if pos >= args.len() {
        return None;
    }
    let flags = if spec.flags & key_flags::VARIABLE_FLAGS == 0 {
        spec.flags
    } else if cmd.keys_fn.is_none() {
        variable_flags(cmd.name, args)
    } else {
        return None;
    };
    Some(KeyRef { pos, flags })
}

/// `find_keys` by Redis's walk over the key specs and its fallbacks.
fn find_keys_walk(
    cmd: &Command,
    meta: Option<&super::meta::Meta>,
    args: &[Bytes],
    out: &mut Vec<KeyRef>,
) {
    let Some(meta) = meta else {
        out.extend(legacy(cmd, args));
        return;
    };
    let specs = &meta.key_specs;
    let has_keys = specs.iter().any(|s| s.flags & key_flags::NOT_KEY == 0);
    let variable = specs
        .iter()
        .any(|s| s.flags & key_flags::VARIABLE_FLAGS != 0);
    if has_keys && !variable && from_specs(specs, args, out) {
        return;
    }
    if let Some(f) = cmd.keys_fn {
        out.extend(f(args).into_iter().map(|pos| KeyRef { pos, flags: 0 }));
        return;
    }
    // SET and BITFIELD: Redis's key finders give the flags this line implies.
    if variable && from_specs(specs, args, out) {
        let flags = variable_flags(cmd.name, args);
        for k in out.iter_mut() {
            k.flags = flags;
        }
    }
}

/// Whether COMMAND GETKEYS accepts the command at all (Redis's doesCommandHaveKeys).
pub fn has_keys(cmd: &Command) -> bool {
    match cmd.meta {
        Some(meta) => {
            cmd.keys_fn.is_some()
                || meta
                    .key_specs
                    .iter()
                    .any(|s| s.flags & key_flags::NOT_KEY == 0)
        }
        None => cmd.keys_fn.is_some() || cmd.first_key > 0,
    }
}

/// A command redlab has and Redis has not (REDLAB.*): its first/last/step or key finder.
fn legacy(cmd: &Command, args: &[Bytes]) -> Vec<KeyRef> {
    let positions = if let Some(f) = cmd.keys_fn {
        f(args)
    } else if cmd.first_key <= 0 {
        Vec::new()
    } else {
        let argc = args.len() as i64;
        let last = if cmd.last_key < 0 {
            argc + cmd.last_key as i64
        } else {
            cmd.last_key as i64
        };
        let step = cmd.step.max(1) as usize;
        (cmd.first_key as i64..=last.min(argc - 1))
            .step_by(step)
            .map(|i| i as usize)
            .collect()
    };
    positions
        .into_iter()
        .map(|pos| KeyRef { pos, flags: 0 })
        .collect()
}

/// Appends the keys the specs name in `args` to `out` (empty on entry); false, with `out`
/// left empty, when a spec does not fit this line or is incomplete (Redis then asks the
/// command's own key finder).
fn from_specs(specs: &[KeySpec], args: &[Bytes], out: &mut Vec<KeyRef>) -> bool {
    if specs_into(specs, args, out).is_none() {
        out.clear();
        return false;
    }
    true
}

/// `from_specs`'s walk; None where it gives up (what it appended so far is then dropped).
fn specs_into(specs: &[KeySpec], args: &[Bytes], out: &mut Vec<KeyRef>) -> Option<()> {
    let argc = args.len() as i64;
    for spec in specs {
        if spec.flags & key_flags::NOT_KEY != 0 {
            continue;
        }
        let mut first = match &spec.begin {
            BeginSearch::Index(i) => *i as i64,
            BeginSearch::Keyword { keyword, startfrom } => {
                match find_keyword(args, keyword, *startfrom as i64) {
                    Some(i) => i + 1,
                    None => continue,
                }
            }
            // Redis's walk gives up on an unknown spec (getKeysUsingKeySpecs's invalid_spec).
            BeginSearch::Unknown => return None,
        };
        let (last, step) = match spec.find {
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => {
                let (lastkey, limit) = (lastkey as i64, limit as i64);
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit == 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / limit + lastkey)
                };
                (last, keystep as i64)
            }
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => {
                let keynumidx = keynumidx as i64;
                if keynumidx >= argc - first {
                    return None;
                }
                let raw = &args[(first + keynumidx) as usize];
                let numkeys = crate::numfmt::parse_i64(raw)?;
                if numkeys < 0 {
                    return None;
                }
                first += firstkey as i64;
                // numkeys keys, `keystep` apart: MSETEX's spec (Redis 8.4) counts pairs with
                // a step of 2; every 7.0 and Valkey 8.1 keynum spec has a step of 1, where
                // this is 7.0's `first + numkeys - 1`. A numkeys near i64::MAX (EVAL s
                // 9223372036854775807) is past argc, not an overflow.
                let span = numkeys
                    .saturating_sub(1)
                    .saturating_mul(keystep.max(1) as i64);
                (first.saturating_add(span), keystep as i64)
            }
        };
        if last >= argc || last < first || first >= argc {
            return None;
        }
        let mut i = first;
        while i <= last {
            out.push(KeyRef {
                pos: i as usize,
                flags: spec.flags,
            });
            i += step.max(1);
        }
        if spec.flags & key_flags::INCOMPLETE != 0 {
            return None;
        }
    }
    Some(())
}

/// The index of the argument equal to `keyword`, searching from `startfrom` forwards up to
/// the one before last, or (negative) from that far from the end backwards down to index 2:
/// Redis's loop stops one short of its end index either way.
fn find_keyword(args: &[Bytes], keyword: &str, startfrom: i64) -> Option<i64> {
    let argc = args.len() as i64;
    let matches = |i: i64| args[i as usize].eq_ignore_ascii_case(keyword.as_bytes());
    if startfrom > 0 {
        (startfrom.max(1)..argc - 1).find(|&i| matches(i))
    } else {
        let start = argc + startfrom;
        (2..=start.min(argc - 1)).rev().find(|&i| matches(i))
    }
}

/// The key flags Redis's own finders give SET (with or without GET) and BITFIELD (read-only
/// or writing).
fn variable_flags(name: &str, args: &[Bytes]) -> u32 {
    use key_flags::*;
    match name {
        "set" => {
            if args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get")) {
                RW | ACCESS | UPDATE
            } else {
                OW | UPDATE
            }
        }
        "bitfield" => {
            // Read-only only when every operation is a complete GET or OVERFLOW; anything
            // else, a syntax error included, counts as a write.
            let mut i = 2;
            while i < args.len() {
                let rest = args.len() - i - 1;
                let a = &args[i];
                if a.eq_ignore_ascii_case(b"get") && rest >= 2 {
                    i += 3;
                } else if a.eq_ignore_ascii_case(b"overflow") && rest >= 1 {
                    i += 2;
                } else {
                    return RW | ACCESS | UPDATE;
                }
            }
            RO | ACCESS
        }
        _ => 0,
    }
}

/// Redis's genericGetKeys, the key finder of the numkeys commands (EVAL, FCALL, ZUNION,
/// ZUNIONSTORE, LMPOP, ZMPOP, ...), used when their key specs do not fit the line: the keys
/// after the count at `numkeys_idx`, then the destination at 1 when `store`. The count is
/// read as C's atoi does; below 1 or past the arguments there are no keys at all (the command
/// will refuse the line itself).
pub fn numkeys_keys(args: &[Bytes], numkeys_idx: usize, store: bool) -> Vec<usize> {
    let n = args
        .get(numkeys_idx)
        .map_or(0, |a| crate::cmd::args::atoi(a));
    let first = numkeys_idx + 1;
    if n < 1 || n as u64 > args.len().saturating_sub(first) as u64 {
        return Vec::new();
    }
    let mut out: Vec<usize> = (first..first + n as usize).collect();
    if store {
        out.push(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-key shortcut answers exactly as the walk for every command and subcommand
    /// of every profile, at every argument count up to six, with and without a GET among
    /// the arguments (SET's flags depend on it).
    #[test]
    fn one_key_agrees_with_the_walk() {
        let mut shortcut_taken = 0;
        for profile in crate::compat::Profile::ALL {
            for top in super::super::all_in(profile) {
                for cmd in std::iter::once(top).chain(top.subcommands.iter()) {
                    for argc in 1..=6 {
                        for fill in ["x", "get"] {
                            let mut args = vec![Bytes::from_static(cmd.name.as_bytes())];
                            args.extend((1..argc).map(|_| Bytes::from(fill)));
                            let (mut fast, mut walk) = (Vec::new(), Vec::new());
                            find_keys(cmd, cmd.meta, &args, &mut fast);
                            find_keys_walk(cmd, cmd.meta, &args, &mut walk);
                            assert_eq!(fast, walk, "{} with {argc} arguments", cmd.name);
                            shortcut_taken += cmd
                                .meta
                                .and_then(|m| one_key(cmd, &m.key_specs, &args))
                                .is_some() as usize;
                        }
                    }
                }
            }
        }
        // GET, SET and the like took it (a test of nothing otherwise).
        assert!(shortcut_taken > 1000, "{shortcut_taken}");
    }
}
