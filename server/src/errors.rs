//! Every error text a client can see, word for word as Redis 7.0 sends it.
//!
//! One place, so that a reader can compare them with Redis's source at a glance and a
//! handler never spells one differently.

pub const SYNTAX: &str = "ERR syntax error";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const NAN_OR_INF: &str = "ERR increment would produce NaN or Infinity";
pub const INVALID_EXPIRE: &str = "ERR invalid expire time in 'set' command";
pub const DB_INDEX: &str = "ERR DB index is out of range";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const AUTH_NOT_CONFIGURED: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
pub const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
pub const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
pub const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
pub const WATCH_IN_MULTI: &str = "ERR WATCH inside MULTI is not allowed";
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
pub const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
pub const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
pub const TIMEOUT_OUT_OF_RANGE: &str = "ERR timeout is out of range";
pub const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const OFFSET_OUT_OF_RANGE: &str = "ERR offset is out of range";
pub const BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
pub const BIT_VALUE: &str = "ERR bit is not an integer or out of range";
pub const INDEX_OUT_OF_RANGE: &str = "ERR index out of range";
pub const MIN_MAX_NOT_FLOAT: &str = "ERR min or max is not a float";
pub const MIN_MAX_NOT_LEX: &str = "ERR min or max not valid string range item";
pub const SAME_OBJECT: &str = "ERR source and destination objects are the same";
pub const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
pub const NUMKEYS_NEGATIVE: &str = "ERR Number of keys can't be negative";
pub const NUMKEYS_TOO_BIG: &str = "ERR Number of keys can't be greater than number of args";

/// `ERR unknown command '<name>', with args beginning with: '<a>' '<b>' `
pub fn unknown_command(name: &[u8], args: &[bytes::Bytes]) -> String {
    let mut list = String::new();
    for a in args {
        if list.len() >= 128 {
            break;
        }
        list.push_str(&format!("'{}' ", clip(a, 128 - list.len())));
    }
    format!("ERR unknown command '{}', with args beginning with: {}", clip(name, 128), list)
}

/// `ERR unknown subcommand '<sub>'. Try <CMD> HELP.`
pub fn unknown_subcommand(cmd: &str, sub: &[u8]) -> String {
    format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        clip(sub, 128),
        cmd.to_ascii_uppercase()
    )
}

/// `ERR wrong number of arguments for '<name>' command`; `name` as Redis prints it
/// (lower case, `container|sub` for subcommands).
pub fn wrong_arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{}' command", name)
}

/// Redis prints user-supplied names with `%.128s` and sanitises them for a one-line reply.
pub fn clip(b: &[u8], max: usize) -> String {
    let b = &b[..b.len().min(max)];
    String::from_utf8_lossy(b)
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

// ---- zset ----
pub const ZADD_NX_XX: &str = "ERR XX and NX options at the same time are not compatible";
pub const ZADD_GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
pub const ZADD_INCR_PAIR: &str = "ERR INCR option supports a single increment-element pair";
pub const ZADD_NAN: &str = "ERR resulting score is not a number (NaN)";
pub const ZRANGE_LIMIT: &str = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
pub const ZRANGE_BYLEX_WITHSCORES: &str = "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
pub const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
pub const NUMKEYS_GT_ZERO: &str = "ERR numkeys should be greater than 0";
pub const COUNT_GT_ZERO: &str = "ERR count should be greater than 0";
pub const WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";
pub const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
pub const VALUE_OUT_OF_RANGE: &str = "ERR value is out of range";
