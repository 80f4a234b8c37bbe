//! Error texts of replication: SYNC/PSYNC/REPLCONF, REPLICAOF, WAIT and read-only replicas.

pub const NOMASTERLINK_CANT_SYNC: &str =
    "NOMASTERLINK Can't SYNC while not connected with my master";
pub const READONLY_REPLICA: &str = "READONLY You can't write against a read only replica.";
pub const WAIT_ON_REPLICA: &str = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";
/// WAIT_ON_REPLICA as Valkey 8 words it (no "since Redis 4.0").
pub const WAIT_ON_REPLICA_VALKEY: &str = "ERR WAIT cannot be used with replica instances. Please also note that if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";
pub const WAITAOF_ON_REPLICA: &str = "ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.";
pub const WAITAOF_WITHOUT_AOF: &str =
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.";
/// WAITAOF's numlocal outside 0..=1 (Redis's getRangeLongFromObjectOrReply text).
pub const WAITAOF_NUMLOCAL_RANGE: &str = "ERR value is out of range, value must between 0 and 1";
pub const REPLICAOF_IN_CLUSTER: &str = "ERR REPLICAOF not allowed in cluster mode.";
pub const INVALID_MASTER_PORT: &str = "ERR Invalid master port";
/// PSYNC ... FAILOVER sent to a replica whose primary's history is another one.
pub const PSYNC_FAILOVER_REPLID: &str = "ERR PSYNC FAILOVER replid must match my replid.";

pub fn unrecognized_replconf_option(opt: &str) -> String {
    format!("ERR Unrecognized REPLCONF option: {opt}")
}

/// A write while min-replicas-to-write good replicas are not connected.
pub const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";
/// A MONITOR connection (a replica to Redis) sent a command that reads or writes keys.
pub const REPLICA_KEYSPACE: &str = "ERR Replica can't interact with the keyspace";
pub const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
