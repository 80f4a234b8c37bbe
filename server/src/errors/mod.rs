//! Every error text a client can see, word for word as Redis 7.0 sends it.
//!
//! One place, so that a reader can compare them with Redis's source at a glance and a
//! handler never spells one differently. The texts are grouped by family in the files
//! below and re-exported here, so every caller names them `errors::X`. This file holds
//! the texts every family shares and the helpers that print user-supplied names the way
//! Redis's `%s` and `%.128s` do.
//!
//! Not here: the messages of the embedded Lua libraries (cjson, cmsgpack, struct, bit),
//! which belong to those libraries as they do in Redis's `deps/`.

mod acl;
mod cluster;
mod connection;
mod replication;
mod scripting;
mod server;
mod stream;
mod types;

pub use acl::*;
pub use cluster::*;
pub use connection::*;
pub use replication::*;
pub use scripting::*;
pub use server::*;
pub use stream::*;
pub use types::*;

pub const SYNTAX: &str = "ERR syntax error";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
/// A bare reason, without a prefix: inside scripts (a Lua error) and in CONFIG SET's failure.
pub const WRONG_NUMBER_OF_ARGUMENTS: &str = "wrong number of arguments";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const NAN_OR_INF: &str = "ERR increment would produce NaN or Infinity";
/// `ERR unknown command '<name>', with args beginning with: '<a>' '<b>' `
pub fn unknown_command(name: &[u8], args: &[bytes::Bytes]) -> String {
    let mut list = String::new();
    for a in args {
        if list.len() >= 128 {
            break;
        }
        list.push_str(&format!("'{}' ", clip(a, 128 - list.len())));
    }
    format!(
        "ERR unknown command '{}', with args beginning with: {}",
        clip(name, 128),
        list
    )
}
/// `ERR unknown subcommand '<sub>'. Try <CMD> HELP.`
pub fn unknown_subcommand(cmd: &str, sub: &[u8]) -> String {
    format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        clip(c_prefix(sub), 128),
        cmd.to_ascii_uppercase()
    )
}
/// `ERR wrong number of arguments for '<name>' command`; `name` as Redis prints it
/// (lower case, `container|sub` for subcommands).
pub fn wrong_arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{}' command", name)
}
/// A user-supplied argument printed with `%s`: a C string ends at its first NUL byte, and a
/// one-line reply has no CR or LF.
pub fn c_str(b: &[u8]) -> String {
    clip(c_prefix(b), usize::MAX)
}
/// The bytes of `b` before its first NUL: what C's `%s` reads of it.
pub fn c_prefix(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}
/// Redis prints user-supplied names with `%.128s` and sanitises them for a one-line reply.
pub fn clip(b: &[u8], max: usize) -> String {
    let b = &b[..b.len().min(max)];
    String::from_utf8_lossy(b)
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}
pub const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
/// A count parsed with Redis's `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)`.
pub const COUNT_NOT_IN_LONG_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
pub const VALUE_OUT_OF_RANGE: &str = "ERR value is out of range";
pub const INT_OUT_OF_RANGE: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
/// `ERR unknown subcommand or wrong number of arguments for '<sub>'. Try <CMD> HELP.`: the
/// subcommand as the client typed it, the command upper-cased.
pub fn subcommand_syntax(cmd: &[u8], sub: &[u8]) -> String {
    format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        clip(c_prefix(sub), 128),
        String::from_utf8_lossy(cmd).to_ascii_uppercase()
    )
}
pub const UNKNOWN_SUBCOMMAND: &str = "ERR unknown subcommand";
pub const DB_INDEX: &str = "ERR DB index is out of range";
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
