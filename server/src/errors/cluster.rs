//! Error texts of cluster mode: CLUSTER subcommands, redirects and MIGRATE.

pub const DB_MUST_BE_EMPTY_TO_PERFORM: &str = "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.";
pub const INVALID_OR_OUT_OF_RANGE_SLOT: &str = "ERR Invalid or out of range slot";
pub const INVALID_SLOT: &str = "ERR Invalid slot";
pub const INVALID_SLOT_OR_NUMBER_OF_KEYS: &str = "ERR Invalid slot or number of keys";
pub const INVALID_CLUSTER_SETSLOT_ACTION_OR_NUMBER: &str =
    "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
pub const SELECT_IS_NOT_ALLOWED_IN_CLUSTER: &str = "ERR SELECT is not allowed in cluster mode";
pub const THIS_NODE_WAS_FORGOTTEN_BY_ITS: &str = "ERR this node was forgotten by its cluster";
pub const PLEASE_USE_SETSLOT_ONLY_WITH_MASTERS: &str = "ERR Please use SETSLOT only with masters.";
pub const TARGET_NODE_IS_NOT_A_MASTER: &str = "ERR Target node is not a master";
pub const CAN_T_REPLICATE_MYSELF: &str = "ERR Can't replicate myself";
pub const I_CAN_ONLY_REPLICATE_A_MASTER: &str = "ERR I can only replicate a master, not a replica.";
pub const TO_SET_A_MASTER_THE_NODE: &str =
    "ERR To set a master the node must be empty and without assigned slots.";
pub const YOU_SHOULD_SEND_CLUSTER_FAILOVER_TO: &str =
    "ERR You should send CLUSTER FAILOVER to a replica";
pub const MY_MASTER_IS_UNKNOWN: &str = "ERR I'm a replica but my master is unknown to me";
pub const MASTER_IS_DOWN_USE_FORCE: &str =
    "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
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

pub const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";

// ---- redirects and cluster state, as the routing step answers ----
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";
pub const TRYAGAIN: &str = "TRYAGAIN Multiple keys request during rehashing of slot";
pub const CLUSTERDOWN: &str = "CLUSTERDOWN The cluster is down";
pub const CLUSTERDOWN_READ_ONLY: &str =
    "CLUSTERDOWN The cluster is down and only accepts read commands";
pub const CLUSTERDOWN_UNBOUND: &str = "CLUSTERDOWN Hash slot not served";

/// `MOVED <slot> <host:port>`
pub fn moved(slot: u16, addr: &str) -> String {
    format!("MOVED {slot} {addr}")
}

/// `ASK <slot> <host:port>`
pub fn ask(slot: u16, addr: &str) -> String {
    format!("ASK {slot} {addr}")
}

// ---- CLUSTER subcommands ----
/// `ERR Unknown node <id>`
pub fn unknown_node(id: &[u8]) -> String {
    format!("ERR Unknown node {}", String::from_utf8_lossy(id))
}

/// `ERR I don't know about node <id>` (SETSLOT MIGRATING/IMPORTING).
pub fn dont_know_node(id: &str) -> String {
    format!("ERR I don't know about node {id}")
}

pub fn slot_unassigned(slot: u16) -> String {
    format!("ERR Slot {slot} is already unassigned")
}

pub fn slot_busy(slot: u16) -> String {
    format!("ERR Slot {slot} is already busy")
}

pub fn slot_repeated(slot: u16) -> String {
    format!("ERR Slot {slot} specified multiple times")
}

pub fn slot_range_reversed(start: u16, end: u16) -> String {
    format!("ERR start slot number {start} is greater than end slot number {end}")
}

pub fn not_slot_owner(slot: u16) -> String {
    format!("ERR I'm not the owner of hash slot {slot}")
}

pub fn already_slot_owner(slot: u16) -> String {
    format!("ERR I'm already the owner of hash slot {slot}")
}

pub fn slot_still_has_keys(slot: u16) -> String {
    format!("ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot.")
}

/// `ERR Invalid TCP base port specified: <arg>` (CLUSTER MEET).
pub fn meet_port(arg: &[u8]) -> String {
    format!(
        "ERR Invalid TCP base port specified: {}",
        String::from_utf8_lossy(arg)
    )
}

/// `ERR Invalid TCP bus port specified: <arg>` (CLUSTER MEET's cport).
pub fn meet_bus_port(arg: &[u8]) -> String {
    format!(
        "ERR Invalid TCP bus port specified: {}",
        String::from_utf8_lossy(arg)
    )
}

/// `ERR Invalid node address specified: <ip>:<port>` (CLUSTER MEET: not an IP address, or
/// a port out of range).
pub fn meet_address(ip: &str, port: &str) -> String {
    format!("ERR Invalid node address specified: {ip}:{port}")
}

/// redlab's own: the nodes of a redlab cluster are fixed when it starts, so MEET can only
/// name one of them.
pub fn meet_unknown(host: &str, port: u16) -> String {
    format!("ERR redlab cannot meet {host}:{port}: nodes join a redlab cluster when it is started (redlab::Cluster, redlab-cluster)")
}

pub fn config_epoch_invalid(epoch: i64) -> String {
    format!("ERR Invalid config epoch specified: {epoch}")
}

/// MIGRATE: the target's error, passed on.
pub fn migrate_target_error(text: &str) -> String {
    format!("ERR Target instance replied with error: {text}")
}

/// REDLAB.CLUSTER (the `Cluster` controls over the wire) refusing what it cannot do.
pub const REDLAB_CLUSTER_SEND_TO_OWNER: &str =
    "ERR REDLAB.CLUSTER MOVEKEYS and FINISH go to the node that owns the slot";
pub const REDLAB_CLUSTER_NOT_MIGRATING: &str = "ERR REDLAB.CLUSTER: the slot is not being migrated";
pub const REDLAB_CLUSTER_SLOT_HAS_NO_OWNER: &str = "ERR REDLAB.CLUSTER: the slot has no owner";
pub const REDLAB_CLUSTER_NOT_A_REPLICA: &str = "ERR REDLAB.CLUSTER FAILOVER goes to a replica";
pub const REDLAB_CLUSTER_BEHIND: &str = "ERR REDLAB.CLUSTER FAILOVER: this replica has not applied everything its primary wrote; lift the lag (REDLAB.REPL LAG OFF, PARTITION OFF) and retry, or FAILOVER LOSING";

/// REDLAB.CLUSTER could not reach another node, or the node refused.
pub fn redlab_cluster_peer(what: &str) -> String {
    format!("ERR REDLAB.CLUSTER: another node failed: {what}")
}

/// CLUSTER SLOT-STATS SLOTSRANGE's reversed range (Valkey 8.0's capitalised text).
pub fn slot_stats_range_reversed(start: u16, end: u16) -> String {
    format!("ERR Start slot number {start} is greater than end slot number {end}")
}
pub const SLOT_STATS_LIMIT: &str =
    "ERR Limit has to lie in between 1 and 16384 (maximum number of slots).";
pub const SLOT_STATS_METRIC: &str = "ERR Unrecognized sort metric for ORDERBY.";
pub const SLOT_STATS_REPEATED: &str = "ERR Multiple filters of the same type are disallowed.";
