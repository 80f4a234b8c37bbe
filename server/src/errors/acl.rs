//! Error texts of ACL and the permission checks.

use super::c_str;

/// `ERR No such user '<name>'`
pub fn no_such_user(name: &[u8]) -> String {
    format!("ERR No such user '{}'", c_str(name))
}
pub const USERNAMES_CAN_T_CONTAIN_SPACES_OR: &str =
    "ERR Usernames can't contain spaces or null characters";
pub const THE_DEFAULT_USER_CANNOT_BE_REMOVED: &str = "ERR The 'default' user cannot be removed";
pub const ACL_GENPASS_ARGUMENT_MUST_BE_THE: &str = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";

// ---- NOPERM ----
pub const NOPERM_KEY: &str =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
pub const NOPERM_CHANNEL: &str =
    "NOPERM this user has no permissions to access one of the channels used as arguments";

/// `NOPERM this user has no permissions to run the '<cmd>' command`
pub fn noperm_command(full: &str) -> String {
    format!("NOPERM this user has no permissions to run the '{full}' command")
}

/// The texts of Redis 7.2's getAclErrorMessage (`since::ACL_ERROR_MESSAGES`): a refused
/// command names the user; a key or channel is named only when `verbose` (ACL DRYRUN).
pub fn acl_message_72(user: &str, kind: &str, full: &str, object: Option<&str>) -> String {
    match (kind, object) {
        ("command", _) => format!("User {user} has no permissions to run the '{full}' command"),
        ("key", Some(key)) => format!("User {user} has no permissions to access the '{key}' key"),
        ("key", None) => "No permissions to access a key".to_string(),
        (_, Some(channel)) => {
            format!("User {user} has no permissions to access the '{channel}' channel")
        }
        (_, None) => "No permissions to access a channel".to_string(),
    }
}

/// A script's refused call from Redis 7.2 on: `ACL failure in script: <message>`.
pub fn acl_script_failure_72(message: &str) -> String {
    format!("ACL failure in script: {message}")
}

// Why EXEC refuses a queued command the user may no longer run.
pub const NOPERM_EXEC_COMMAND: &str = "no permission to execute the command or subcommand";
pub const NOPERM_EXEC_KEY: &str = "no permission to touch the specified keys";
pub const NOPERM_EXEC_CHANNEL: &str =
    "no permission to access one of the channels used as arguments";

/// A queued command refused at EXEC because the user's rules changed since it was queued.
pub fn noperm_in_exec(reason: &str) -> String {
    format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")
}

// ---- ACL DRYRUN's verdicts (bulk replies, not errors, but the same family of texts) ----
pub fn dryrun_command(full: &str) -> String {
    format!("This user has no permissions to run the '{full}' command")
}

pub fn dryrun_key(key: &str) -> String {
    format!("This user has no permissions to access the '{key}' key")
}

pub fn dryrun_channel(channel: &str) -> String {
    format!("This user has no permissions to access the '{channel}' channel")
}

// ---- ACL SETUSER rules ----
pub const RULE_SYNTAX: &str = "Syntax error";
pub const RULE_UNKNOWN: &str = "Unknown command or category name in ACL";
pub const RULE_CHILD: &str = "Allowing first-arg of a subcommand is not supported";
pub const RULE_KEYS_AFTER_ALL: &str = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
pub const RULE_CHANNELS_AFTER_ALL: &str = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels";
pub const RULE_BAD_HASH: &str = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
pub const RULE_NO_SUCH_HASH: &str =
    "The password you are trying to remove from the user does not exist";

pub fn selector_unmatched(start: &str) -> String {
    format!("ERR Unmatched parenthesis in acl selector starting at '{start}'.")
}

pub fn setuser_modifier(rule: &str, reason: &str) -> String {
    format!("ERR Error in ACL SETUSER modifier '{rule}': {reason}")
}

pub fn acl_subcommand_syntax(sub: &str) -> String {
    format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try ACL HELP.")
}

pub fn unknown_category(name: &[u8]) -> String {
    format!(
        "ERR Unknown category '{}'",
        super::clip(super::c_prefix(name), 128)
    )
}

pub fn user_not_found(name: &[u8]) -> String {
    format!("ERR User '{}' not found", c_str(name))
}

pub fn command_not_found(name: &[u8]) -> String {
    format!("ERR Command '{}' not found", c_str(name))
}

// ---- ACL files ----
/// Valkey 8's words (no "Redis").
pub const NO_ACLFILE_VALKEY: &str = "ERR This instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a configuration file set) in order to store users in the configuration.";
pub const NO_ACLFILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

pub fn aclfile_save(err: &std::io::Error) -> String {
    format!("ERR There was an error trying to save the ACLs. Please check the server logs for more information ({err})")
}

pub fn aclfile_open(path: &str, err: &std::io::Error) -> String {
    format!("ERR Error loading ACLs opening file '{path}': {err}")
}

/// An ACL file that does not parse: the reason, with its line number, as the reply.
pub fn aclfile_load(reason: &str) -> String {
    format!("ERR {reason}")
}

// The reasons, each prefixed with the line number.
pub fn aclfile_no_user_keyword(line: usize) -> String {
    format!("/{line}: line should start with user keyword")
}

pub fn aclfile_unmatched(line: usize, start: &str) -> String {
    format!("{line}: Unmatched parenthesis in acl selector starting at '{start}'.")
}

pub fn aclfile_rule(line: usize, rule: &str, reason: &str) -> String {
    format!("{line}: Error in user declaration '{rule}': {reason}")
}

pub fn aclfile_duplicate(line: usize, name: &str) -> String {
    format!("{line}: Duplicate user '{name}' found")
}

// ---- `user` lines of the config file (logged, then redis-server exits) ----
/// A `user` line refused while the config file is read, under FATAL CONFIG FILE ERROR.
pub fn user_declaration(arg: &str, reason: &str) -> String {
    format!("Error in user declaration '{arg}': {reason}")
}

pub const DUPLICATE_CONFIG_USER: &str =
    "Duplicate user found. A user can only be defined once in config files";

pub const USERS_AND_ACLFILE: &str = "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.";

pub const SPACES_IN_CONFIG_USERNAME: &str = "Spaces not allowed in ACL usernames";

pub fn config_user_rule(rule: &str, name: &str, reason: &str) -> String {
    format!("Error loading ACL rule '{rule}' for the user named '{name}': {reason}")
}

pub const CONFIG_USERS_FAILED: &str = "Critical error while loading ACLs. Exiting.";

pub fn aclfile_at_start(reason: &str) -> String {
    format!("Aborting Redis startup because of ACL errors: {reason}")
}
