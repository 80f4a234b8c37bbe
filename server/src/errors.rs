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
pub const DB_INDEX: &str = "ERR DB index is out of range";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const AUTH_NOT_CONFIGURED: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
/// A script with declared flags that reached its start over the limit (inside EXEC).
pub const OOM_SCRIPT_START: &str =
    "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'";
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
/// The same under the Valkey profiles (Valkey 8.0 dropped the advice).
pub const NOSCRIPT_VALKEY: &str = "NOSCRIPT No matching script.";
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

// ---- strings ----
pub const DECREMENT_OVERFLOW: &str = "ERR decrement would overflow";
pub const LCS_NOT_STRINGS: &str = "ERR The specified keys must contain string values";
pub const LCS_IDX_AND_LEN: &str =
    "ERR If you want both the length and indexes, please just use IDX.";
pub const LCS_TOO_LONG: &str = "ERR String too long for LCS";
pub const LCS_TOO_MUCH_MEMORY: &str =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";

/// `ERR invalid expire time in '<cmd>' command`, for SET, SETEX, PSETEX and GETEX.
pub fn invalid_expire(cmd: &str) -> String {
    format!("ERR invalid expire time in '{}' command", cmd)
}

// ---- bitmap ----
pub const BITPOS_BIT: &str = "ERR The bit argument must be 1 or 0.";
pub const BITOP_NOT_ONE_KEY: &str = "ERR BITOP NOT must be called with a single source key.";
pub const BITFIELD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
pub const BITFIELD_OVERFLOW: &str = "ERR Invalid OVERFLOW type specified";
pub const BITFIELD_RO_GET_ONLY: &str = "ERR BITFIELD_RO only supports the GET subcommand";
// ---- list ----
pub const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
pub const LPOS_RANK_ZERO: &str =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
pub const LPOS_COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
pub const LPOS_MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
pub const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
pub const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";
// ---- hashset ----
pub const HASH_VALUE_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const HASH_VALUE_NOT_FLOAT: &str = "ERR hash value is not a float";
pub const INCR_IS_NAN_OR_INF: &str = "ERR value is NaN or Infinity";
/// A count parsed with Redis's `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)`.
pub const COUNT_NOT_IN_LONG_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
pub const VALUE_OUT_OF_RANGE: &str = "ERR value is out of range";
pub const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
// ---- keys ----
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
pub const EXPIRE_NX_CONFLICT: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const EXPIRE_GT_LT_CONFLICT: &str = "ERR GT and LT options at the same time are not compatible";
pub const BAD_DUMP_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
pub const BAD_DATA_FORMAT: &str = "ERR Bad data format";
pub const INVALID_TTL: &str = "ERR Invalid TTL value, must be >= 0";
pub const INVALID_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
pub const INVALID_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";
pub const INT_OUT_OF_RANGE: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
pub const LFU_NOT_SELECTED: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const LFU_SELECTED: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";

/// `ERR invalid expire time in '<cmd>' command`
pub fn invalid_expire_time(cmd: &str) -> String {
    format!("ERR invalid expire time in '{}' command", cmd)
}

/// `ERR Unsupported option <opt>` (EXPIRE family).
pub fn unsupported_option(opt: &[u8]) -> String {
    format!("ERR Unsupported option {}", c_str(opt))
}

// ---- conn ----
pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
pub const PROTOVER_NOT_INTEGER: &str = "ERR Protocol version is not an integer or out of range";
pub const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
pub const CLIENT_NAME_CHARS: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
pub const NO_SUCH_CLIENT: &str = "ERR No such client";
pub const CLIENT_ID_POSITIVE: &str = "ERR client-id should be greater than 0";
pub const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
pub const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
// CLIENT TRACKING / CACHING (client-side caching)
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
// CLIENT PAUSE
pub const PAUSE_TIMEOUT_NOT_INTEGER: &str = "ERR timeout is not an integer or out of range";
pub const PAUSE_TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
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

/// `ERR No such user '<name>'`
pub fn no_such_user(name: &[u8]) -> String {
    format!("ERR No such user '{}'", c_str(name))
}

/// `ERR unknown subcommand or wrong number of arguments for '<sub>'. Try <CMD> HELP.`: the
/// subcommand as the client typed it, the command upper-cased.
pub fn subcommand_syntax(cmd: &[u8], sub: &[u8]) -> String {
    format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        clip(c_prefix(sub), 128),
        String::from_utf8_lossy(cmd).to_ascii_uppercase()
    )
}

/// EXEC refused by the dispatcher (arity, NOAUTH, pub/sub context): Redis discards the
/// transaction and names the reason, without the reason's `ERR ` prefix.
pub fn execabort_because(reason: &str) -> String {
    format!(
        "EXECABORT Transaction discarded because of: {}",
        reason.strip_prefix("ERR ").unwrap_or(reason)
    )
}

// ---- server ----
pub const NO_SHUTDOWN_IN_PROGRESS: &str = "ERR No shutdown in progress.";
pub const SWAPDB_FIRST: &str = "ERR invalid first DB index";
pub const SWAPDB_SECOND: &str = "ERR invalid second DB index";
pub const CONFIG_NO_FILE: &str = "ERR The server is running without a config file";
pub const GETKEYS_INVALID_COMMAND: &str = "ERR Invalid command specified";
pub const GETKEYS_NO_KEYS: &str = "ERR The command has no key arguments";
pub const GETKEYS_BAD_ARITY: &str = "ERR Invalid number of arguments specified for command";
pub const GETKEYS_BAD_ARGS: &str = "ERR Invalid arguments specified for command";

/// `ERR Unknown option or number of arguments for CONFIG SET - '<name>'`
pub fn config_set_unknown(name: &[u8]) -> String {
    format!(
        "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
        clip(name, 128)
    )
}

/// `ERR CONFIG SET failed (possibly related to argument '<name>') - <reason>`
pub fn config_set_failed(name: &str, reason: &str) -> String {
    format!(
        "ERR CONFIG SET failed (possibly related to argument '{}') - {}",
        name, reason
    )
}
// ---- zset ----
pub const ZADD_NX_XX: &str = "ERR XX and NX options at the same time are not compatible";
pub const ZADD_GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
pub const ZADD_INCR_PAIR: &str = "ERR INCR option supports a single increment-element pair";
pub const ZADD_NAN: &str = "ERR resulting score is not a number (NaN)";
pub const ZRANGE_LIMIT: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
pub const ZRANGE_BYLEX_WITHSCORES: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
pub const WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";
// ---- fuzz ----
/// Sent to a non-loopback client, then the connection is closed, when protected mode is on
/// and no password is set (Redis's networking.c, word for word).
pub const PROTECTED_MODE_DENIED: &str = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.";

// ---- HyperLogLog -----------------------------------------------------------------------------
pub const HLL_WRONGTYPE: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
pub const HLL_INVALID: &str = "INVALIDOBJ Corrupted HLL object detected";
pub const HLL_NO_KEY: &str = "ERR The specified key does not exist";
pub const HLL_NOT_SPARSE: &str = "ERR HLL encoding is not sparse";

// ---- GEO -------------------------------------------------------------------------------------
pub const GEO_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
pub const GEO_NEGATIVE_RADIUS: &str = "ERR radius cannot be negative";
pub const GEO_NEGATIVE_BOX: &str = "ERR height or width cannot be negative";
pub const GEO_NO_MEMBER: &str = "ERR could not decode requested zset member";
pub const GEO_COUNT: &str = "ERR COUNT must be > 0";
pub const GEO_ANY_COUNT: &str = "ERR the ANY argument requires COUNT argument";

// ---- SORT ------------------------------------------------------------------------------------
pub const SORT_NOT_NUMBER: &str = "ERR One or more scores can't be converted into double";

// ---- hash field expiration (Redis 7.4) and HGETDEL/HGETEX/HSETEX (Redis 8.0) ---------------
// From the published Redis source and command reference; no server of these versions runs
// here (tests/conformance/DIFFERENCES.md).
pub const HFE_FIELDS_MISSING: &str =
    "ERR Mandatory argument FIELDS is missing or not at the right position";
pub const HFE_NUMFIELDS: &str = "ERR Parameter `numFields` should be greater than 0";
pub const HFE_NUMFIELDS_MISMATCH: &str =
    "ERR The `numfields` parameter must match the number of arguments";
pub const HFE_NEGATIVE_TIME: &str = "ERR invalid expire time, must be >= 0";
pub const HGETDEL_NUMFIELDS: &str = "ERR Number of fields must be a positive integer";
pub const HGETEX_NUMFIELDS: &str = "ERR invalid number of fields";
pub const HGETEX_ONE_OF: &str =
    "ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified";
pub const HSETEX_ONE_OF: &str =
    "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";
pub const HSETEX_ONE_COND: &str = "ERR Only one of FXX or FNX arguments can be specified";

// Texts that were written where they were answered until the sweep that moved every
// error text here.
pub const REACHED_LUA_STACK_LIMIT: &str = "ERR reached lua stack limit";
pub const CLIENT_UNBLOCKED_VIA_CLIENT_UNBLOCK: &str =
    "UNBLOCKED client unblocked via CLIENT UNBLOCK";
pub const LIBRARY_NAME_ARGUMENT_WAS_NOT_GIVEN: &str = "ERR library name argument was not given";
pub const LIBRARY_NOT_FOUND: &str = "ERR Library not found";
pub const FUNCTION_FLUSH_ONLY_SUPPORTS_SYNC_ASYNC: &str =
    "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
pub const WRONG_RESTORE_POLICY_GIVEN_VALUE_SHOULD: &str =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";
pub const GIVEN_TYPE_IS_NOT_A_FUNCTION: &str = "ERR given type is not a function";
pub const FUNCTION_NOT_FOUND: &str = "ERR Function not found";
pub const BAD_NUMBER_OF_KEYS_PROVIDED: &str = "ERR Bad number of keys provided";
pub const UNKNOWN_SUBCOMMAND: &str = "ERR unknown subcommand";
pub const CAN_NOT_RUN_SCRIPT_ON_CLUSTER: &str =
    "ERR Can not run script on cluster, 'no-cluster' flag is set.";
pub const CAN_NOT_EXECUTE_A_SCRIPT_WITH: &str =
    "ERR Can not execute a script with write flag using *_ro command.";
pub const SCRIPT_FLUSH_ONLY_SUPPORT_SYNC_ASYNC: &str =
    "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
pub const SCRIPT_DEBUG_IS_NOT_SUPPORTED_BY: &str = "ERR SCRIPT DEBUG is not supported by redlab";
pub const USE_SCRIPT_DEBUG_YES_SYNC_NO: &str = "ERR Use SCRIPT DEBUG YES/SYNC/NO";
pub const USERNAMES_CAN_T_CONTAIN_SPACES_OR: &str =
    "ERR Usernames can't contain spaces or null characters";
pub const THE_DEFAULT_USER_CANNOT_BE_REMOVED: &str = "ERR The 'default' user cannot be removed";
pub const ACL_GENPASS_ARGUMENT_MUST_BE_THE: &str = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";
pub const RESP2_IS_NOT_SUPPORTED_BY_THIS: &str = "ERR RESP2 is not supported by this command";
pub const WRONG_PROTOCOL_TYPE_NAME_PLEASE_USE: &str = "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false";
pub const THE_CLOCK_ONLY_MOVES_FORWARD_WITH: &str =
    "ERR the clock only moves forward with ADVANCE; use SET to jump back";
pub const REDLAB_FAULT_ADD_NEEDS_AN_ACTION: &str = "ERR REDLAB.FAULT ADD needs an action: ERROR, CLOSE-BEFORE, CLOSE-AFTER, DELAY, DELAY-US, TRUNCATE, STALL, FLUSH-SCRIPTS or ROLLBACK";
pub const NO_FAILOVER_IN_PROGRESS: &str = "ERR No failover in progress.";
pub const FAILOVER_TIMEOUT_MUST_BE_GREATER_THAN: &str =
    "ERR FAILOVER timeout must be greater than 0";
pub const FAILOVER_REQUIRES_CONNECTED_REPLICAS: &str = "ERR FAILOVER requires connected replicas.";
pub const SELECT_IS_NOT_ALLOWED_IN_CLUSTER: &str = "ERR SELECT is not allowed in cluster mode";
pub const INVALID_START_ID_FOR_THE_INTERVAL: &str = "ERR invalid start ID for the interval";
pub const INVALID_END_ID_FOR_THE_INTERVAL: &str = "ERR invalid end ID for the interval";
pub const UNBALANCED_XREAD_LIST_OF_STREAMS_FOR: &str =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
pub const THE_GROUP_OPTION_IS_ONLY_SUPPORTED: &str =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
pub const THE_NOACK_OPTION_IS_ONLY_SUPPORTED: &str =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
pub const MISSING_GROUP_OPTION_FOR_XREADGROUP: &str = "ERR Missing GROUP option for XREADGROUP";
pub const THE_ID_IS_MEANINGLESS_IN_THE: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";
pub const THE_ID_CAN_BE_SPECIFIED_ONLY: &str = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";
pub const THE_STREAM_KEY_NO_LONGER_EXISTS: &str = "UNBLOCKED the stream key no longer exists";
pub const THE_CONSUMER_GROUP_THIS_CLIENT_WAS: &str =
    "NOGROUP the consumer group this client was blocked on no longer exists";
pub const THE_MAXLEN_ARGUMENT_MUST_BE_0: &str = "ERR The MAXLEN argument must be >= 0.";
pub const THE_LIMIT_ARGUMENT_MUST_BE_0: &str = "ERR The LIMIT argument must be >= 0.";
pub const SYNTAX_ERROR_LIMIT_CANNOT_BE_USED: &str =
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
pub const SYNTAX_ERROR_XTRIM_MUST_BE_CALLED: &str =
    "ERR syntax error, XTRIM must be called with a trimming strategy";
pub const SYNTAX_ERROR_LIMIT_CANNOT_BE_USED_2: &str =
    "ERR syntax error, LIMIT cannot be used without the special ~ option";
pub const THE_ID_SPECIFIED_IN_XADD_MUST: &str =
    "ERR The ID specified in XADD must be greater than 0-0";
pub const THE_STREAM_HAS_EXHAUSTED_THE_LAST: &str =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
pub const ELEMENTS_ARE_TOO_LARGE_TO_BE: &str = "ERR Elements are too large to be stored";
pub const THE_ID_SPECIFIED_IN_XADD_IS: &str =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
pub const ENTRIES_ADDED_MUST_BE_POSITIVE: &str = "ERR entries_added must be positive";
pub const THE_ID_SPECIFIED_IN_XSETID_IS: &str =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
pub const THE_ID_SPECIFIED_IN_XSETID_IS_2: &str =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
pub const THE_ENTRIES_ADDED_SPECIFIED_IN_XSETID: &str =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";
pub const CONSUMER_GROUP_NAME_ALREADY_EXISTS: &str = "BUSYGROUP Consumer Group name already exists";
pub const INSUFFICIENT_MEMORY_FAILED_ALLOCATING_TRANSIENT_MEMORY: &str =
    "ERR Insufficient memory, failed allocating transient memory, COUNT too high.";
pub const THIS_NODE_WAS_FORGOTTEN_BY_ITS: &str = "ERR this node was forgotten by its cluster";
pub const INVALID_OR_OUT_OF_RANGE_SLOT: &str = "ERR Invalid or out of range slot";
pub const INVALID_SLOT: &str = "ERR Invalid slot";
pub const INVALID_SLOT_OR_NUMBER_OF_KEYS: &str = "ERR Invalid slot or number of keys";
pub const DB_MUST_BE_EMPTY_TO_PERFORM: &str = "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.";
pub const PLEASE_USE_SETSLOT_ONLY_WITH_MASTERS: &str = "ERR Please use SETSLOT only with masters.";
pub const TARGET_NODE_IS_NOT_A_MASTER: &str = "ERR Target node is not a master";
pub const INVALID_CLUSTER_SETSLOT_ACTION_OR_NUMBER: &str =
    "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
pub const CAN_T_REPLICATE_MYSELF: &str = "ERR Can't replicate myself";
pub const I_CAN_ONLY_REPLICATE_A_MASTER: &str = "ERR I can only replicate a master, not a replica.";
pub const TO_SET_A_MASTER_THE_NODE: &str =
    "ERR To set a master the node must be empty and without assigned slots.";
pub const YOU_SHOULD_SEND_CLUSTER_FAILOVER_TO: &str =
    "ERR You should send CLUSTER FAILOVER to a replica";
pub const CLUSTER_RESET_CAN_T_BE_CALLED: &str =
    "ERR CLUSTER RESET can't be called with master nodes containing keys";
pub const I_TRIED_HARD_BUT_I_CAN: &str = "ERR I tried hard but I can't forget myself...";
pub const CAN_T_FORGET_MY_MASTER: &str = "ERR Can't forget my master!";
pub const THE_SPECIFIED_NODE_IS_NOT_A: &str = "ERR The specified node is not a master";
pub const THE_USER_CAN_ASSIGN_A_CONFIG: &str =
    "ERR The user can assign a config epoch only when the node does not know any other node.";
pub const NODE_CONFIG_EPOCH_IS_ALREADY_NON: &str = "ERR Node config epoch is already non-zero";
pub const WHEN_USING_MIGRATE_KEYS_OPTION_THE: &str =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
pub const ERROR_OR_TIMEOUT_CONNECTING_TO_THE: &str =
    "IOERR error or timeout connecting to the client";
pub const ERROR_OR_TIMEOUT_READING_TO_TARGET: &str =
    "IOERR error or timeout reading to target instance";

// ---- latency ----
/// LATENCY GRAPH of an event the monitor has no samples of.
pub fn latency_no_samples(event: &[u8]) -> String {
    format!("ERR No samples available for event '{}'", c_str(event))
}

// ---- connections ----
/// Sent to a connection refused because maxclients connections are open (before it has a
/// client, so it is written as raw RESP).
pub const MAX_CLIENTS_REACHED_WIRE: &[u8] = b"-ERR max number of clients reached\r\n";
/// CONFIG SET maxclients beyond what the open-file limit can hold.
pub fn maxclients_over_fd_limit(fits: u64) -> String {
    format!("The operating system is not able to handle the specified number of clients, try with {fits}")
}
