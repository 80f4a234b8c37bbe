//! The hand-written table entries against Redis's captured metadata. At run time the captured
//! arity, flags and key positions replace the hand-written ones (`table::build`), so this test
//! is what keeps a group file honest for its reader: an entry that says one thing while Redis
//! (and so redlab) does another fails here, unless it is a listed, explained exception.

use super::{flags, hand_written, meta, Command};

/// Entries whose hand-written values deliberately differ from Redis's, and why. Each is
/// (full name, what differs). None today: every Redis command redlab has agrees.
const EXCEPTIONS: &[(&str, &str)] = &[];

/// Commands redlab has that Redis 7.0.15 has not keep their hand-written metadata; each must
/// say when it arrived (`compat::since::LATER`).
fn newer_than_7_0(full: &str) -> bool {
    crate::compat::since::LATER.iter().any(|(n, _)| *n == full)
}

fn check(c: &Command, parent: Option<&Command>, problems: &mut Vec<String>) {
    let full = c.full_name(parent);
    for s in c.subcommands {
        check(s, Some(c), problems);
    }
    // A later command's hand-written description (server/data/commands-later.json) is held
    // to the same agreement.
    let Some(m) = meta::get(&full).or_else(|| meta::later(&full)) else {
        if !full.starts_with("redlab.") && !newer_than_7_0(&full) {
            problems.push(format!("{full}: not a Redis 7.0.15 command"));
        }
        return;
    };
    if EXCEPTIONS.iter().any(|(n, _)| *n == full) {
        return;
    }
    if c.arity != m.arity {
        problems.push(format!("{full}: arity {} (Redis {})", c.arity, m.arity));
    }
    // SENTINEL is redlab's note only; Redis does not print it.
    // may_replicate is not in what COMMAND INFO shows, so the data cannot confirm it.
    let mine = c.flags & !(flags::SENTINEL | flags::MAY_REPLICATE);
    if mine != m.flags {
        let names = |bits: u32| -> Vec<&str> {
            flags::NAMES
                .iter()
                .filter(|(b, _)| bits & b != 0)
                .map(|(_, n)| *n)
                .collect()
        };
        problems.push(format!(
            "{full}: flags {:?} (Redis {:?})",
            names(mine),
            names(m.flags)
        ));
    }
    let movable = m.flag_names().any(|f| f == "movablekeys");
    if c.keys_fn.is_none()
        && !movable
        && (c.first_key, c.last_key, c.step) != (m.first_key, m.last_key, m.step)
    {
        problems.push(format!(
            "{full}: keys {:?} (Redis {:?})",
            (c.first_key, c.last_key, c.step),
            (m.first_key, m.last_key, m.step)
        ));
    }
}

#[test]
fn hand_written_entries_agree_with_redis() {
    let mut problems = Vec::new();
    for c in hand_written() {
        check(c, None, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "{} entries differ from Redis {}:\n{}",
        problems.len(),
        meta::version(),
        problems.join("\n")
    );
}

#[test]
fn every_exception_names_a_command() {
    for (name, why) in EXCEPTIONS {
        assert!(meta::get(name).is_some(), "{name}");
        assert!(!why.is_empty(), "{name}");
    }
}
