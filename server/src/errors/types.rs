//! Error texts of the data-type commands: strings, bitmaps, lists, hashes, sets, sorted
//! sets, keys and expiry, HyperLogLog, GEO and SORT.

use super::c_str;

pub const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
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
pub const DECREMENT_OVERFLOW: &str = "ERR decrement would overflow";
pub const LCS_NOT_STRINGS: &str = "ERR The specified keys must contain string values";
pub const LCS_IDX_AND_LEN: &str =
    "ERR If you want both the length and indexes, please just use IDX.";
pub const LCS_TOO_LONG: &str = "ERR String too long for LCS";
pub const LCS_TOO_MUCH_MEMORY: &str =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
/// `ERR invalid expire time in '<cmd>' command`: SET, SETEX, PSETEX, GETEX and the EXPIRE family.
/// MSETEX (Redis 8.4): a numkeys that is not an integer in 1..=INT_MAX.
pub const MSETEX_NUMKEYS: &str = "ERR invalid numkeys value";
/// MSETEX: fewer arguments than numkeys pairs.
pub const MSETEX_PAIRS: &str = "ERR wrong number of key-value pairs";
pub fn invalid_expire(cmd: &str) -> String {
    format!("ERR invalid expire time in '{}' command", cmd)
}
pub const BITPOS_BIT: &str = "ERR The bit argument must be 1 or 0.";
pub const BITOP_NOT_ONE_KEY: &str = "ERR BITOP NOT must be called with a single source key.";
/// Redis 8.2's BITOP DIFF / DIFF1 / ANDOR with one source: the operation as given, upper-cased.
pub fn bitop_two_sources(op: &[u8]) -> String {
    format!(
        "ERR BITOP {} must be called with at least two source keys.",
        c_str(op).to_ascii_uppercase()
    )
}
pub const BITFIELD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
pub const BITFIELD_OVERFLOW: &str = "ERR Invalid OVERFLOW type specified";
pub const BITFIELD_RO_GET_ONLY: &str = "ERR BITFIELD_RO only supports the GET subcommand";
pub const LPOS_RANK_ZERO: &str =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
pub const LPOS_COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
pub const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";
pub const HASH_VALUE_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const HASH_VALUE_NOT_FLOAT: &str = "ERR hash value is not a float";
pub const INCR_IS_NAN_OR_INF: &str = "ERR value is NaN or Infinity";
pub const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
pub const EXPIRE_NX_CONFLICT: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const EXPIRE_GT_LT_CONFLICT: &str = "ERR GT and LT options at the same time are not compatible";
pub const BAD_DUMP_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
pub const BAD_DATA_FORMAT: &str = "ERR Bad data format";
/// `ERR Unsupported option <opt>` (EXPIRE family).
pub fn unsupported_option(opt: &[u8]) -> String {
    format!("ERR Unsupported option {}", c_str(opt))
}
pub const ZADD_NX_XX: &str = "ERR XX and NX options at the same time are not compatible";
pub const ZADD_GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
pub const ZADD_INCR_PAIR: &str = "ERR INCR option supports a single increment-element pair";
pub const ZADD_NAN: &str = "ERR resulting score is not a number (NaN)";
pub const ZRANGE_LIMIT: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
pub const ZRANGE_BYLEX_WITHSCORES: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
pub const WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";
pub const HLL_WRONGTYPE: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
pub const HLL_INVALID: &str = "INVALIDOBJ Corrupted HLL object detected";
pub const HLL_NO_KEY: &str = "ERR The specified key does not exist";
pub const HLL_NOT_SPARSE: &str = "ERR HLL encoding is not sparse";
pub const GEO_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
pub const GEO_NEGATIVE_RADIUS: &str = "ERR radius cannot be negative";
pub const GEO_NEGATIVE_BOX: &str = "ERR height or width cannot be negative";
pub const GEO_NO_MEMBER: &str = "ERR could not decode requested zset member";
pub const GEO_COUNT: &str = "ERR COUNT must be > 0";
pub const GEO_ANY_COUNT: &str = "ERR the ANY argument requires COUNT argument";
/// SORT's BY with a pattern, and its GET, read keys the node may not own: refused in
/// cluster mode.
pub const SORT_BY_IN_CLUSTER: &str = "ERR BY option of SORT denied in Cluster mode.";
pub const SORT_GET_IN_CLUSTER: &str = "ERR GET option of SORT denied in Cluster mode.";
/// ... and refused to a user that may not read every key through the command (acl.c's
/// unrestricted key access): the keys the patterns name are not checked one by one.
pub const SORT_BY_DENIED_BY_ACL: &str =
    "ERR BY option of SORT denied due to insufficient ACL permissions.";
pub const SORT_GET_DENIED_BY_ACL: &str =
    "ERR GET option of SORT denied due to insufficient ACL permissions.";
pub const SORT_NOT_NUMBER: &str = "ERR One or more scores can't be converted into double";
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
pub const LPOS_MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
/// SCAN, SSCAN or ZSCAN given NOVALUES, in the versions that have it (Redis 7.4, Valkey 8.0).
pub const NOVALUES_ONLY_HSCAN: &str = "ERR NOVALUES option can only be used in HSCAN";
/// SCAN, SSCAN or HSCAN given NOSCORES, in the versions that have it (Valkey 8.0).
pub const NOSCORES_ONLY_ZSCAN: &str = "ERR NOSCORES option can only be used in ZSCAN";
pub const INVALID_TTL: &str = "ERR Invalid TTL value, must be >= 0";
pub const INVALID_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
pub const INVALID_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";

// ---- GEO, options ----
pub const GEO_NEED_RADIUS: &str = "ERR need numeric radius";
pub const GEO_NEED_WIDTH: &str = "ERR need numeric width";
pub const GEO_NEED_HEIGHT: &str = "ERR need numeric height";

/// `ERR <option> is not compatible with WITHDIST, WITHHASH and WITHCOORD options`
pub fn geo_store_with(option: &str) -> String {
    format!("ERR {option} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
}

pub fn geo_from_once(command: &str) -> String {
    format!("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {command}")
}

pub fn geo_by_once(command: &str) -> String {
    format!("ERR exactly one of BYRADIUS and BYBOX can be specified for {command}")
}

/// Redis prints the refused pair with six decimals.
pub fn geo_invalid_pair(long: f64, lat: f64) -> String {
    format!("ERR invalid longitude,latitude pair {long:.6},{lat:.6}")
}

/// `ERR Unknown PFDEBUG subcommand '<sub>'`
pub fn pfdebug_subcommand(sub: &[u8]) -> String {
    format!(
        "ERR Unknown PFDEBUG subcommand '{}'",
        String::from_utf8_lossy(sub)
    )
}

/// `ERR at least 1 input key is needed for '<command>' command` (ZUNIONSTORE and kin).
pub fn setop_no_keys(command: &str) -> String {
    format!("ERR at least 1 input key is needed for '{command}' command")
}

/// redlab's own: a random-pick count (HRANDFIELD, SRANDMEMBER, ZRANDMEMBER) whose reply
/// would not fit in memory and that no output limit bounds, where Redis 7.0.15 would hang
/// or crash.
pub fn too_many_picks(max: u64) -> String {
    format!(
        "ERR count is too large: redlab builds this reply in memory and returns at most {max} elements"
    )
}

/// PFSELFTEST found the estimator wrong.
pub fn pfselftest_failed(msg: &str) -> String {
    format!("TESTFAILED {msg}")
}
