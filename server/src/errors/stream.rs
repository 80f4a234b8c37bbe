//! Error texts of the stream commands.

use super::c_str;

pub const INVALID_START_ID_FOR_THE_INTERVAL: &str = "ERR invalid start ID for the interval";
pub const INVALID_END_ID_FOR_THE_INTERVAL: &str = "ERR invalid end ID for the interval";
/// The same from Redis 7.2 (valkey-server 8.1 answers it): the command's name quoted, and
/// `>` as the ID XREADGROUP expects.
pub fn unbalanced_streams_72(group: bool) -> &'static str {
    if group {
        "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified."
    } else {
        "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified."
    }
}
pub const UNBALANCED_XREAD_LIST_OF_STREAMS_FOR: &str =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
pub const THE_GROUP_OPTION_IS_ONLY_SUPPORTED: &str =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
pub const THE_NOACK_OPTION_IS_ONLY_SUPPORTED: &str =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
/// XREAD ... CLAIM under Redis 8.4, worded as NOACK's (not confirmed with an 8.4 server).
pub const THE_CLAIM_OPTION_IS_ONLY_SUPPORTED: &str =
    "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.";
/// XREADGROUP ... CLAIM with a min-idle-time that is not an integer, worded as XCLAIM's
/// (not confirmed with an 8.4 server).
pub const INVALID_MIN_IDLE_TIME_XREADGROUP: &str =
    "ERR Invalid min-idle-time argument for XREADGROUP";
pub const MISSING_GROUP_OPTION_FOR_XREADGROUP: &str = "ERR Missing GROUP option for XREADGROUP";
pub const THE_ID_IS_MEANINGLESS_IN_THE: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";
/// XREADGROUP given the `+` ID, in the versions where XREAD takes it (Redis 7.4, Valkey 8.1).
pub const THE_PLUS_ID_IS_MEANINGLESS: &str = "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.";
/// XREAD ... + on a stream whose last ID is 0-0 (an empty stream made by XGROUP MKSTREAM).
pub const STREAM_LAST_ID_IS_ZERO: &str = "ERR the stream last element ID is 0-0";
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

pub const STREAM_INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";
pub const XADD_BOTH_STRATEGIES: &str =
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
pub const XGROUP_KEY_REQUIRED: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";
pub const XGROUP_ENTRIESREAD_RANGE: &str = "ERR value for ENTRIESREAD must be positive or -1";
pub const XCLAIM_MIN_IDLE: &str = "ERR Invalid min-idle-time argument for XCLAIM";
pub const XAUTOCLAIM_MIN_IDLE: &str = "ERR Invalid min-idle-time argument for XAUTOCLAIM";
pub const XCLAIM_IDLE: &str = "ERR Invalid IDLE option argument for XCLAIM";
pub const XCLAIM_TIME: &str = "ERR Invalid TIME option argument for XCLAIM";
pub const XCLAIM_RETRYCOUNT: &str = "ERR Invalid RETRYCOUNT option argument for XCLAIM";

/// `ERR <XREAD|XREADGROUP> command is not allowed with BLOCK option from scripts`
pub fn block_in_script(command: &[u8]) -> String {
    format!(
        "ERR {} command is not allowed with BLOCK option from scripts",
        String::from_utf8_lossy(command)
    )
}

/// `NOGROUP No such key '<key>' or consumer group '<group>'`
pub fn no_group(key: &[u8], group: &[u8]) -> String {
    format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        c_str(key),
        c_str(group)
    )
}

/// XREADGROUP's form of NOGROUP.
pub fn no_group_xreadgroup(key: &[u8], group: &[u8]) -> String {
    format!(
        "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
        c_str(key),
        c_str(group)
    )
}

/// XGROUP and XINFO's form of NOGROUP, for a key that exists.
pub fn no_such_group(group: &[u8], key: &[u8]) -> String {
    format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        c_str(group),
        c_str(key)
    )
}

/// `ERR Unrecognized XCLAIM option '<opt>'`
pub fn xclaim_option(opt: &[u8]) -> String {
    format!("ERR Unrecognized XCLAIM option '{}'", c_str(opt))
}

/// XDELEX and XACKDEL (Redis 8.2): a `numids` that is not a positive integer.
pub const STREAM_NUMIDS_NOT_POSITIVE: &str = "ERR Number of IDs must be a positive integer";
/// XDELEX and XACKDEL: a `numids` larger than the IDs that follow it.
pub const STREAM_NUMIDS_MISMATCH: &str =
    "ERR The `numids` parameter must match the number of arguments";
