//! The users a server starts with, set up as redis-server 7.0.15 does: the `user` lines of
//! the config file and command line, or the aclfile, never both.
//!
//! Redis checks a `user` line while it reads the config file (a bad rule or a second line
//! for the same user is a FATAL CONFIG FILE ERROR) and applies the lines once the file is
//! read. An unknown command passes the first check, because a module loaded later may add
//! it, and fails the second, which stops the server too.

use super::{model, Acl};
use crate::cmd::acl::{apply_rule, load_at_start as load_aclfile, new_user};
use crate::errors;
use crate::Config;

/// Checks one `user` line (`words`: `user`, the name, its rules) against the users declared
/// before it. Err is the reason FATAL CONFIG FILE ERROR prints.
pub fn check_declaration(words: &[String], earlier: &[Vec<String>]) -> Result<(), String> {
    let name = &words[1];
    if earlier.iter().any(|u| u.first() == Some(name)) {
        return Err(errors::user_declaration(
            name,
            errors::DUPLICATE_CONFIG_USER,
        ));
    }
    // Redis names the argument at the failing rule's index counted over the whole line
    // rather than over the rules (`user bar on bogus` reports 'bar'); so does this.
    let at = |j: usize| words.get(j).map(String::as_str).unwrap_or("");
    let given = &words[2..];
    let rules = model::split_rules(given).map_err(|start| {
        let j = given.iter().position(|w| *w == start).unwrap_or(0);
        errors::user_declaration(at(j), errors::RULE_UNKNOWN)
    })?;
    let mut user = new_user(name, false);
    for (j, rule) in rules.iter().enumerate() {
        // Which commands a category holds does not change whether a rule is valid.
        match apply_rule(&mut user, rule, false, crate::compat::Profile::Redis70) {
            Ok(()) | Err(model::RuleError::Unknown) => {}
            Err(e) => return Err(errors::user_declaration(at(j), e.text())),
        }
    }
    Ok(())
}

/// Sets up a new server's users from `config`. Err holds the lines redis-server logs before
/// it exits; the users are then left as far as they got.
pub fn load(acl: &mut Acl, config: &Config) -> Result<(), Vec<String>> {
    let aclfile = config.get_by_name("aclfile").is_some_and(|f| !f.is_empty());
    if config.users.is_empty() {
        return load_aclfile(acl, config).map_err(|why| vec![errors::aclfile_at_start(&why)]);
    }
    if aclfile {
        return Err(vec![errors::USERS_AND_ACLFILE.to_string()]);
    }
    let all_channels = config.get_by_name("acl-pubsub-default").as_deref() == Some("allchannels");
    let failed = |line: String| vec![line, errors::CONFIG_USERS_FAILED.to_string()];
    for words in &config.users {
        let Some((name, given)) = words.split_first() else {
            continue;
        };
        if name.contains(' ') {
            return Err(failed(errors::SPACES_IN_CONFIG_USERNAME.to_string()));
        }
        // `default` exists already: its line starts from `reset`.
        let mut user = match acl.user(name) {
            Some(existing) => {
                let mut u = existing.clone();
                apply_rule(&mut u, "reset", all_channels, config.compat)
                    .expect("reset is a valid rule");
                u
            }
            None => new_user(name, all_channels),
        };
        let rules = model::split_rules(given).map_err(|start| {
            failed(errors::config_user_rule(&start, name, errors::RULE_UNKNOWN))
        })?;
        for rule in &rules {
            apply_rule(&mut user, rule, all_channels, config.compat)
                .map_err(|e| failed(errors::config_user_rule(rule, name, e.text())))?;
        }
        acl.users.insert(name.clone(), user);
    }
    Ok(())
}

/// Whether a server started with `config` gets its users; Err holds the lines to log before
/// exiting (redlab-server's start, before it opens its port).
pub fn check_at_start(config: &Config) -> Result<(), Vec<String>> {
    let mut acl = Acl::new();
    acl.set_requirepass(config.requirepass.as_deref());
    load(&mut acl, config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    /// The texts redis-server 7.0.15 printed for these lines.
    #[test]
    fn declarations_are_refused_as_redis_refuses_them() {
        let earlier = vec![words("foo on")];
        assert_eq!(
            check_declaration(&words("user foo"), &earlier),
            Err("Error in user declaration 'foo': Duplicate user found. A user can only be defined once in config files".into())
        );
        assert_eq!(
            check_declaration(&words("user bar on bogus"), &[]),
            Err("Error in user declaration 'bar': Syntax error".into())
        );
        assert_eq!(
            check_declaration(&words("user bar on (~x"), &[]),
            Err("Error in user declaration 'bar': Unknown command or category name in ACL".into())
        );
        // Known only at start.
        assert_eq!(
            check_declaration(&words("user bar on +nosuch"), &[]),
            Ok(())
        );
    }

    #[test]
    fn config_users_replace_default_and_add_others() {
        let mut config = Config::default();
        config.users = vec![
            words("default on nopass ~* +@all"),
            words("zed on >pw ~a* +get"),
        ];
        let mut acl = Acl::new();
        load(&mut acl, &config).unwrap();
        assert_eq!(
            acl.default_user().describe(),
            "user default on nopass sanitize-payload ~* resetchannels +@all"
        );
        assert_eq!(
            acl.user("zed").unwrap().describe(),
            "user zed on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~a* resetchannels -@all +get"
        );
        config.users = vec![words("bar on +nosuch")];
        assert_eq!(
            load(&mut Acl::new(), &config),
            Err(vec![
                "Error loading ACL rule '+nosuch' for the user named 'bar': Unknown command or category name in ACL".to_string(),
                "Critical error while loading ACLs. Exiting.".to_string()
            ])
        );
        config
            .set_by_name("aclfile", "/nonexistent/users.acl")
            .unwrap();
        config.users = vec![words("bar on")];
        assert_eq!(
            load(&mut Acl::new(), &config),
            Err(vec![errors::USERS_AND_ACLFILE.to_string()])
        );
    }
}
