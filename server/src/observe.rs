//! Reads for an observer that must not disturb the server: the interleaving explorer checks
//! its invariants after every step of every schedule, tens of thousands of GETs a second.
//!
//! Running each of them as a command (`Engine::execute_args`) costs a full dispatch (the
//! command table, the pre-command expiry pass, INFO's counters, the after-command hooks)
//! and changes what a client can see: the key's LRU clock and OBJECT IDLETIME, the hit and
//! miss counters, a lazily expired key's removal. A read here looks at the keyspace as it
//! stands and changes nothing.

use crate::db::{is_expired, StrValue, ValueType};
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;
use crate::session::ConnId;

impl Engine {
    /// The reply GET `key` would give on connection `conn` now, without running a command:
    /// a key past its deadline on the engine's clock reads as missing (as lazy expiry would
    /// make it), nothing is touched or counted. None where only the command itself can
    /// answer: an unknown connection, one under ACL rules or inside MULTI, a cluster node
    /// (which may answer MOVED).
    pub fn observe_get(&self, conn: ConnId, key: &[u8]) -> Option<Reply> {
        let s = self.sessions.get(&conn)?;
        if !s.acl_free || s.multi.is_some() || self.cluster.is_some() {
            return None;
        }
        // Between commands `now_ms` is the last command's time; the clock may have moved
        // since (a clock step of the explorer), so it is read as the next command would.
        let now = if self.time_frozen {
            self.now_ms
        } else {
            self.clock.now_ms()
        };
        let entry = self
            .dbs
            .get(s.db)?
            .stored_entry(key)
            .filter(|e| e.expire_at().is_none_or(|t| !is_expired(t, now)));
        Some(match entry {
            None => Reply::Nil,
            Some(e) => match StrValue::of(&e.value) {
                Some(v) => Reply::bulk(v),
                None => Reply::err(errors::WRONGTYPE),
            },
        })
    }
}
