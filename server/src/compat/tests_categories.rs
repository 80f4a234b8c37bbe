//! ACL categories per profile (`since::CATEGORIES_ADDED`): Redis 7.4 made WAIT a `blocking`
//! command, so @blocking holds it from there (valkey-server 8.1 shows it; acl.txt compares
//! the valkey-8.1 profile with it; Redis 7.2's table does not have it). Here the Redis
//! profiles, which no reference server here runs: ACL CAT, the rules that name the
//! category, COMMAND INFO and COMMAND LIST FILTERBY.

use super::Profile;
use crate::reply::Reply;
use crate::test_support::{engine_as, run};

const LATER: [Profile; 3] = [Profile::Redis74, Profile::Redis84, Profile::Valkey81];

/// The profiles without WAIT in @blocking: Redis 7.0 and 7.2, and Valkey 7.2.
const EARLIER: [Profile; 3] = [Profile::Redis70, Profile::Redis72, Profile::Valkey72];

fn names(r: Reply) -> Vec<String> {
    match r {
        Reply::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn blocking_has_wait(p: Profile) -> bool {
    let (mut e, _clock) = engine_as(p);
    names(run(&mut e, &["ACL", "CAT", "blocking"])).contains(&"wait".to_string())
}

#[test]
fn acl_cat_blocking_lists_wait_from_7_4() {
    for p in EARLIER {
        assert!(!blocking_has_wait(p), "{p}");
    }
    for p in LATER {
        assert!(blocking_has_wait(p), "{p}");
    }
}

/// Whether `rules` let a user run WAIT under `p` (ACL DRYRUN).
fn may_wait(p: Profile, rules: &[&str]) -> bool {
    let (mut e, _clock) = engine_as(p);
    let mut line = vec!["ACL", "SETUSER", "u", "on", "nopass"];
    line.extend_from_slice(rules);
    assert_eq!(run(&mut e, &line), Reply::ok());
    match run(&mut e, &["ACL", "DRYRUN", "u", "WAIT", "0", "0"]) {
        Reply::Status(s) if s == "OK" => true,
        Reply::Bulk(_) => false,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_blocking_rules_reach_wait_from_7_4() {
    for p in EARLIER {
        assert!(!may_wait(p, &["-@all", "+@blocking"]), "{p}");
        assert!(may_wait(p, &["+@all", "-@blocking"]), "{p}");
    }
    for p in LATER {
        assert!(may_wait(p, &["-@all", "+@blocking"]), "{p}");
        assert!(!may_wait(p, &["+@all", "-@blocking"]), "{p}");
    }
    // A selector reads its rules as the profile does too.
    assert!(may_wait(Profile::Redis74, &["-@all", "(+@blocking)"]));
    assert!(!may_wait(Profile::Redis72, &["-@all", "(+@blocking)"]));
}

/// COMMAND INFO wait's flags and ACL categories under `p`.
fn wait_info(p: Profile) -> (Reply, Reply) {
    let (mut e, _clock) = engine_as(p);
    let Reply::Array(mut v) = run(&mut e, &["COMMAND", "INFO", "wait"]) else {
        panic!("an array")
    };
    let Reply::Array(fields) = v.remove(0) else {
        panic!("an entry")
    };
    (fields[2].clone(), fields[6].clone())
}

fn statuses(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| Reply::status(s)).collect())
}

#[test]
fn command_info_shows_wait_blocking_from_7_4() {
    assert_eq!(
        wait_info(Profile::Redis70),
        (statuses(&["noscript"]), statuses(&["@slow", "@connection"]))
    );
    // Redis 7.2's table: no flags (scripts may run it), no @blocking.
    for p in [Profile::Redis72, Profile::Valkey72] {
        assert_eq!(
            wait_info(p),
            (statuses(&[]), statuses(&["@slow", "@connection"])),
            "{p}"
        );
    }
    // valkey-server 8.1 prints exactly this (command.txt), as Redis 8.4's table does.
    for p in [Profile::Redis74, Profile::Redis84] {
        assert_eq!(
            wait_info(p),
            (
                statuses(&["blocking"]),
                statuses(&["@slow", "@blocking", "@connection"])
            ),
            "{p}"
        );
    }
}

#[test]
fn command_list_filterby_aclcat_follows_the_profile() {
    let listed = |p| {
        let (mut e, _clock) = engine_as(p);
        names(run(
            &mut e,
            &["COMMAND", "LIST", "FILTERBY", "ACLCAT", "blocking"],
        ))
        .contains(&"wait".to_string())
    };
    assert!(!listed(Profile::Redis70));
    assert!(!listed(Profile::Redis72));
    assert!(listed(Profile::Redis74));
    assert!(listed(Profile::Valkey81));
}
