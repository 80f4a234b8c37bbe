//! The engine's side of hash field expiration (`crate::db::hash_ttl` keeps the deadlines):
//! lazy expiry of the fields a command names before it runs, the deadlines following what
//! the command changed after it, and active expiry of due fields between commands.

use bytes::Bytes;

use crate::cmd::table::Command;
use crate::db::hash_ttl::FieldTtls;
use crate::db::{Entry, Value};
use crate::engine::{Call, Engine};
use crate::notify;
use crate::reply::Reply;

impl Engine {
    /// Deletes the due fields of `key` (lazy expiry); returns whether any were deleted.
    pub(crate) fn expire_key_fields(&mut self, db: usize, key: &[u8]) -> bool {
        let now = self.now_ms;
        let due: Vec<Vec<u8>> = match self.hash_ttl.map.get(&(db, key.to_vec())) {
            Some(fields) => fields
                .iter()
                .filter(|(_, at)| **at <= now)
                .map(|(f, _)| f.clone())
                .collect(),
            None => return false,
        };
        if due.is_empty() {
            return false;
        }
        self.delete_expired_fields(db, key, &due);
        true
    }

    /// Active expiry of hash fields: every due field of every hash.
    pub(crate) fn expire_due_fields(&mut self) {
        let due = self.hash_ttl.due(self.now_ms);
        for ((db, key), fields) in due {
            self.delete_expired_fields(db, &key, &fields);
        }
        self.hash_ttl.recompute_next_due();
    }

    fn delete_expired_fields(&mut self, db: usize, key: &[u8], fields: &[Vec<u8>]) {
        for f in fields {
            self.hash_ttl.remove(db, key, f);
        }
        if db >= self.dbs.len() {
            return;
        }
        let removed = match self.dbs[db].get_mut(key) {
            Some(Entry {
                value: Value::Hash(h),
                ..
            }) => fields
                .iter()
                .filter(|f| h.remove(f.as_slice()).is_some())
                .count(),
            _ => 0,
        };
        if removed > 0 {
            self.modified(db, key, notify::HASH, "hexpired");
            crate::cmd::hash::delete_if_empty(self, db, key);
        }
    }

    /// Before a command: its keys' due fields are deleted first, so it never sees them.
    /// A key that is gone (its own TTL passed) or no longer a hash loses its deadlines here,
    /// before a command could make a new hash under the same name.
    pub(crate) fn hash_ttl_before(&mut self, cmd: &Command, call: &Call) {
        for pos in cmd.key_positions(&call.args) {
            let key = call.args[pos].clone();
            self.reconcile_field_ttls(call.db, &key);
            self.expire_key_fields(call.db, &key);
        }
    }

    /// After a command: the deadlines follow what it did to its keys.
    pub(crate) fn hash_ttl_after(&mut self, cmd: &Command, call: &Call, reply: &Reply) {
        let db = call.db;
        let args = &call.args;
        let ok = !reply.is_error();
        match cmd.name {
            "flushall" if ok => self.hash_ttl = FieldTtls::default(),
            "flushdb" if ok => self.hash_ttl.map.retain(|(d, _), _| *d != db),
            "swapdb" if ok => {
                let (Some(a), Some(b)) = (int_arg(args, 1), int_arg(args, 2)) else {
                    return;
                };
                let moved: Vec<_> = self.hash_ttl.map.drain().collect();
                for ((d, k), v) in moved {
                    let d = if d == a {
                        b
                    } else if d == b {
                        a
                    } else {
                        d
                    };
                    self.hash_ttl.map.insert((d, k), v);
                }
            }
            "rename" | "renamenx" if *reply == Reply::ok() || *reply == Reply::Int(1) => {
                self.hash_ttl.take_key(db, &args[2]);
                if let Some(d) = self.hash_ttl.take_key(db, &args[1]) {
                    self.hash_ttl.put_key(db, &args[2], d);
                }
            }
            "move" if *reply == Reply::Int(1) => {
                if let (Some(d), Some(to)) =
                    (self.hash_ttl.take_key(db, &args[1]), int_arg(args, 2))
                {
                    self.hash_ttl.put_key(to, &args[1], d);
                }
            }
            "copy" if *reply == Reply::Int(1) => {
                let to = copy_target_db(args).unwrap_or(db);
                self.hash_ttl.take_key(to, &args[2]);
                if let Some(d) = self.hash_ttl.map.get(&(db, args[1].to_vec())).cloned() {
                    self.hash_ttl.put_key(to, &args[2], d);
                }
            }
            // Writing a field again clears its deadline.
            "hset" | "hmset" if ok => {
                for f in args[2..].iter().step_by(2) {
                    self.hash_ttl.remove(db, &args[1], f);
                }
            }
            "hsetnx" if *reply == Reply::Int(1) => {
                self.hash_ttl.remove(db, &args[1], &args[2]);
            }
            _ => {}
        }
        for pos in cmd.key_positions(args) {
            self.reconcile_field_ttls(db, &args[pos]);
        }
    }

    /// Drops the deadlines of fields `key` no longer has (all of them when it is not a hash).
    fn reconcile_field_ttls(&mut self, db: usize, key: &[u8]) {
        let k = (db, key.to_vec());
        let Some(fields) = self.hash_ttl.map.get_mut(&k) else {
            return;
        };
        match self.dbs.get(db).and_then(|d| d.get_shared(key)) {
            Some(Entry {
                value: Value::Hash(h),
                ..
            }) => fields.retain(|f, _| h.contains_key(f.as_slice())),
            _ => fields.clear(),
        }
        if fields.is_empty() {
            self.hash_ttl.map.remove(&k);
        }
    }
}

fn int_arg(args: &[Bytes], i: usize) -> Option<usize> {
    std::str::from_utf8(args.get(i)?).ok()?.parse().ok()
}

/// COPY's `DB n`, if given.
fn copy_target_db(args: &[Bytes]) -> Option<usize> {
    let at = args
        .iter()
        .skip(3)
        .position(|a| a.eq_ignore_ascii_case(b"db"))?;
    int_arg(args, at + 4)
}
