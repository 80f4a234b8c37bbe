//! CLIENT HELP's text: Redis 7.0's lines, Redis 7.2's (7.0's with SETINFO and NO-TOUCH),
//! Redis 7.4's (7.2's with CLIENT KILL's ID and MAXAGE filters), and Valkey 8.1's (which lists
//! its newer subcommands and filters, read off valkey-server 8.1).

use crate::compat::{since, Family, Profile};

/// The lines between CLIENT HELP's header and its HELP entry, as `profile` prints them.
/// Redis 7.2's networking.c (clientCommand's help, read from a 7.2 build's string table)
/// puts SETINFO's four lines after SETNAME's and NO-TOUCH's two last; Valkey 7.2 is 7.2.4.
/// Redis 7.4 adds CLIENT KILL's ID and MAXAGE lines after SKIPME's; 8.0 to 8.4 print 7.4's
/// text (the clientCommand help table of Redis builds from 7.4's development branch to 8.6.1
/// has these 55 lines, read with the search tool; no 7.4 or 8.x server runs here).
pub(super) fn lines(profile: Profile) -> Vec<&'static str> {
    if profile.family() == Family::Valkey && profile.level() >= 80 {
        return VALKEY_81.to_vec();
    }
    let later = profile.has(since::CLIENT_SETINFO_NO_TOUCH);
    let mut out = Vec::with_capacity(REDIS_70_HEAD.len() + REDIS_70_TAIL.len() + 10);
    out.extend_from_slice(REDIS_70_KILL);
    if profile.has(since::CLIENT_KILL_MAXAGE) {
        out.extend_from_slice(KILL_ID_MAXAGE_74);
    }
    out.extend_from_slice(REDIS_70_HEAD);
    if later {
        out.extend_from_slice(SETINFO_72);
    }
    out.extend_from_slice(REDIS_70_TAIL);
    if later {
        out.extend_from_slice(NO_TOUCH_72);
    }
    out
}

/// Redis 7.0's lines up to CLIENT KILL's SKIPME filter.
const REDIS_70_KILL: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
];

/// Redis 7.4's CLIENT KILL filters (MAXAGE is new; ID was accepted before but not listed).
const KILL_ID_MAXAGE_74: &[&str] = &[
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
];

/// Redis 7.0's lines from LIST's up to SETNAME's.
const REDIS_70_HEAD: &[&str] = &[
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
];

/// Redis 7.0's lines after SETNAME's.
const REDIS_70_TAIL: &[&str] = &[
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
];

/// Redis 7.2's CLIENT SETINFO lines.
const SETINFO_72: &[&str] = &[
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
];

/// Redis 7.2's CLIENT NO-TOUCH lines.
const NO_TOUCH_72: &[&str] = &[
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
];

const VALKEY_81: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "CAPA <option> [options...]",
    "    The client claims its some capability options. Options are:",
    "    * REDIRECT",
    "      The client can handle redirection during primary and replica failover in standalone mode.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id> [<client-id>...]",
    "      Kill connections by client ids.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * USER <username>",
    "      Return clients authenticated by <username>.",
    "    * ADDR <ip:port>",
    "      Return clients connected from the specified address.",
    "    * LADDR <ip:port>",
    "      Return clients connected to the specified local address.",
    "    * ID <client-id> [<client-id>...]",
    "      Return clients with the specified IDs.",
    "    * SKIPME (YES|NO)",
    "      Exclude the current client from the list (default: no).",
    "    * MAXAGE <maxage>",
    "      List connections older than the specified age.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "IMPORT-SOURCE (ON|OFF)",
    "    Mark this connection as an import source if import-mode is enabled.",
    "    Sync tools can set their connections into 'import-source' state to visit",
    "    expired keys.",
];
