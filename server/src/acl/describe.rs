//! The command rules ACL GETUSER, ACL LIST, ACL SAVE and CONFIG REWRITE print for a selector.
//!
//! Redis 7.0.15 does not remember the rules it was given: it keeps the permission bitmap and
//! works rules out from it each time (ACLDescribeSelectorCommandRules). This is the same
//! procedure over the selector's set of allowed names, so the printed rules match Redis's:
//! `+@all +client|id` reads back as `+@all`, `+memory|doctor +memory` as `-@all +memory`.
//!
//! 1. Start from `+@all` when the selector was built from `+@all` (it would take commands
//!    added later), else from `-@all`.
//! 2. Greedily add (or, from `+@all`, remove) the category that explains most of what is
//!    left, among those with more commands in agreement than in disagreement; on equal
//!    disagreement the one with more agreement wins, on a full tie the earlier one in ACL
//!    CAT's order.
//! 3. Fix the remaining differences one command at a time. Redis walks its command
//!    dictionary here, whose order changes with each process's hash seed (its own test
//!    suite says the order "is not stable"); redlab walks the command table, a container
//!    before its subcommands, so its order is one Redis could print.

use super::commands::{self, CATEGORIES};
use super::model::Selector;
use crate::compat::Profile;

pub(super) fn command_rules(sel: &Selector) -> String {
    let additive = !sel.future;
    let sign = if additive { '+' } else { '-' };
    let mut rules = vec![if additive { "-@all" } else { "+@all" }.to_string()];
    // What the rules written so far grant.
    let mut fake = Selector::default();
    fake.set_all_commands(!additive);
    // The selector's set with every category written so far taken back out (put back in,
    // when subtracting), so each round is judged on what is still unexplained.
    let mut rest = Selector {
        allowed: sel.allowed.clone(),
        ..Selector::default()
    };
    let mut applied = [false; CATEGORIES.len()];
    loop {
        let mut best = None;
        let (mut min_diff, mut max_same) = (usize::MAX, 0);
        for (j, cat) in CATEGORIES.iter().enumerate() {
            if applied[j] {
                continue;
            }
            let members = commands::in_category(cat);
            let on = members.iter().filter(|n| rest.allowed.contains(*n)).count();
            let off = members.len() - on;
            let (diff, same) = if additive { (off, on) } else { (on, off) };
            if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                best = Some(j);
                min_diff = diff;
                max_same = same;
            }
        }
        let Some(j) = best else { break };
        // Working rules out is Redis 7.0's way (7.2 prints them as given): 7.0's categories.
        fake.set_category(CATEGORIES[j], additive, Profile::Redis70);
        rest.set_category(CATEGORIES[j], !additive, Profile::Redis70);
        rules.push(format!("{sign}@{}", CATEGORIES[j]));
        applied[j] = true;
    }
    for top in commands::top_level() {
        for &name in commands::covered(top).unwrap_or(&[]) {
            let allowed = sel.allowed.contains(name);
            if allowed != fake.allowed.contains(name) {
                rules.push(format!("{}{name}", if allowed { '+' } else { '-' }));
                fake.change_perm(name, allowed);
            }
            if !allowed {
                for arg in sel.first_args.get(name).into_iter().flatten() {
                    rules.push(format!("+{name}|{arg}"));
                }
            }
        }
    }
    rules.join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::model::User;

    fn commands_of(rules: &str) -> String {
        let mut u = User::new("t");
        for r in rules.split(' ') {
            u.apply(r).unwrap();
        }
        u.root.describe_commands()
    }

    /// Each line was read back from redis-server 7.0.15 (ACL SETUSER then ACL GETUSER).
    #[test]
    fn rules_read_back_as_redis_prints_them() {
        for (given, printed) in [
            ("+memory|doctor", "-@all +memory|doctor"),
            ("+memory|doctor +memory", "-@all +memory"),
            ("+@all +client|id", "+@all"),
            ("+@all -memory|doctor", "+@all -memory|doctor"),
            ("+@all -memory|doctor -memory", "+@all -memory"),
            ("+config|get -config", "-@all"),
            ("-config +config|get", "-@all +config|get"),
            ("+@all -@slow", "+@all -@slow"),
            ("-@all +@slow", "-@all +@slow"),
            ("-@all +select|0", "-@all +select|0"),
            (
                "+@all -@string -debug +debug|digest",
                "+@all -@string -debug +debug|digest",
            ),
        ] {
            assert_eq!(commands_of(given), printed, "{given}");
        }
    }

    /// A category alone reads back as itself, from either side (Redis's own suite checks
    /// this for every category).
    #[test]
    fn every_category_alone_reads_back_as_itself() {
        for cat in super::CATEGORIES {
            assert_eq!(
                commands_of(&format!("+@all -@{cat}")),
                format!("+@all -@{cat}")
            );
            assert_eq!(
                commands_of(&format!("-@all +@{cat}")),
                format!("-@all +@{cat}")
            );
        }
    }

    /// A container given with a category takes all its subcommands, as in Redis:
    /// `-@all +@slow` may run CLIENT ID although client|id is @fast.
    #[test]
    fn a_container_in_a_category_carries_its_subcommands() {
        let mut u = User::new("t");
        u.apply("+@slow").unwrap();
        assert!(u.root.allowed.contains("client|id"));
        u.apply("+@all").unwrap();
        u.apply("-@slow").unwrap();
        assert!(!u.root.allowed.contains("client|id"));
    }
}
