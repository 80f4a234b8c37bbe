//! Error texts of connections: AUTH and HELLO, CLIENT, tracking, pause, transactions,
//! pub/sub contexts and the protocol parser.

use super::c_str;

pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const AUTH_NOT_CONFIGURED: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
pub const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
pub const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
pub const WATCH_IN_MULTI: &str = "ERR WATCH inside MULTI is not allowed";
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
pub const PROTOVER_NOT_INTEGER: &str = "ERR Protocol version is not an integer or out of range";
pub const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
pub const CLIENT_NAME_CHARS: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
pub const NO_SUCH_CLIENT: &str = "ERR No such client";
pub const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
pub const TRACKING_ONE_REDIRECT: &str = "ERR A client can only redirect to a single other client";
pub const TRACKING_NO_REDIRECT_TARGET: &str =
    "ERR The client ID you want redirect to does not exist";
pub const TRACKING_PREFIX_NEEDS_BCAST: &str = "ERR PREFIX option requires BCAST mode to be enabled";
pub const TRACKING_BCAST_SWITCH: &str = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const TRACKING_BCAST_OPTIN: &str = "ERR OPTIN and OPTOUT are not compatible with BCAST";
pub const TRACKING_OPTIN_AND_OPTOUT: &str = "ERR You can't specify both OPTIN mode and OPTOUT mode";
pub const TRACKING_OPT_SWITCH: &str = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const CACHING_NOT_OPT: &str = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled";
pub const CACHING_YES_OPTIN: &str =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
pub const CACHING_NO_OPTOUT: &str =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
pub const PAUSE_TIMEOUT_NOT_INTEGER: &str = "ERR timeout is not an integer or out of range";
pub const PAUSE_MODE: &str = "ERR CLIENT PAUSE mode must be WRITE or ALL";
/// A BCAST prefix overlaps one the client has (`existing`) or another given with it.
/// Redis prints the prefixes as C strings: up to a NUL byte.
pub fn tracking_prefix_overlap(prefix: &[u8], other: &[u8], existing: bool) -> String {
    format!(
        "ERR Prefix '{}' overlaps with {} prefix '{}'. Prefixes for a single client must not overlap.",
        c_str(prefix),
        if existing { "an existing" } else { "another provided" },
        c_str(other)
    )
}
pub const NOT_ALLOWED_IN_MULTI: &str = "ERR Command not allowed inside a transaction";
pub const SSUBSCRIBE_DENY_BLOCKING: &str =
    "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client";
/// `ERR Syntax error in HELLO option '<opt>'`
pub fn hello_option(opt: &[u8]) -> String {
    format!("ERR Syntax error in HELLO option '{}'", c_str(opt))
}
/// `ERR Unknown client type '<type>'`
pub fn unknown_client_type(t: &[u8]) -> String {
    format!("ERR Unknown client type '{}'", c_str(t))
}
/// EXEC refused by the dispatcher (arity, NOAUTH, pub/sub context): Redis discards the
/// transaction and names the reason, without the reason's `ERR ` prefix.
pub fn execabort_because(reason: &str) -> String {
    format!(
        "EXECABORT Transaction discarded because of: {}",
        reason.strip_prefix("ERR ").unwrap_or(reason)
    )
}
/// Sent to a non-loopback client, then the connection is closed, when protected mode is on
/// and no password is set (Redis's networking.c, word for word).
pub const PROTECTED_MODE_DENIED: &str = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.";
pub const CLIENT_UNBLOCKED_VIA_CLIENT_UNBLOCK: &str =
    "UNBLOCKED client unblocked via CLIENT UNBLOCK";
pub const CLIENT_ID_POSITIVE: &str = "ERR client-id should be greater than 0";
/// CLIENT LIST / KILL MAXAGE (Valkey 8).
pub const MAXAGE_NOT_INTEGER: &str = "ERR maxage is not an integer or out of range";
pub const MAXAGE_POSITIVE: &str = "ERR maxage should be greater than 0";
pub const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";

// The protocol parser: the connection is closed after one of these is sent.
pub const PROTOCOL_MBULK_COUNT_TOO_BIG: &str = "ERR Protocol error: too big mbulk count string";
pub const PROTOCOL_BULK_COUNT_TOO_BIG: &str = "ERR Protocol error: too big bulk count string";
pub const PROTOCOL_MULTIBULK_LENGTH: &str = "ERR Protocol error: invalid multibulk length";
pub const PROTOCOL_UNAUTH_MULTIBULK_LENGTH: &str =
    "ERR Protocol error: unauthenticated multibulk length";
pub const PROTOCOL_BULK_LENGTH: &str = "ERR Protocol error: invalid bulk length";
pub const PROTOCOL_UNAUTH_BULK_LENGTH: &str = "ERR Protocol error: unauthenticated bulk length";
pub const PROTOCOL_INLINE_TOO_BIG: &str = "ERR Protocol error: too big inline request";
pub const PROTOCOL_UNBALANCED_QUOTES: &str = "ERR Protocol error: unbalanced quotes in request";

/// `ERR Protocol error: expected '$', got '<c>'`: an array element that is not a bulk string.
pub fn protocol_expected_bulk(got: char) -> String {
    format!("ERR Protocol error: expected '$', got '{}'", got)
}

/// A RESP2 connection in subscribed mode ran something other than the pub/sub commands.
pub fn not_allowed_subscribed(name: &str) -> String {
    format!(
        "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
        name
    )
}

/// `ERR Unrecognized option '<attr>'` (CLIENT SETINFO).
pub fn setinfo_option(attr: &[u8]) -> String {
    format!("ERR Unrecognized option '{}'", super::clip(attr, 128))
}

/// `ERR <lib-name|lib-ver> cannot contain spaces, newlines or special characters.`
pub fn setinfo_value(attr: &str) -> String {
    format!("ERR {attr} cannot contain spaces, newlines or special characters.")
}

/// Sent to a connection refused because maxclients connections are open (before it has a
/// client, so it is written as raw RESP).
pub const MAX_CLIENTS_REACHED_WIRE: &[u8] = b"-ERR max number of clients reached\r\n";
