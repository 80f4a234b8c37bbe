//! `MonotonicMax`: keep the largest id seen per key (a read position that only moves
//! forward), with a dirty set a write-back job drains.

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::script::Script;
use crate::value::Value;

const MONOTONIC_MAX: &str = include_str!("../../../scripts/monotonic_max.lua");

pub struct MonotonicMax {
    conn: Connection,
    dirty_key: String,
    script: Script,
}

impl MonotonicMax {
    /// Changed keys are collected in the set `dirty_key`.
    pub fn new(conn: Connection, dirty_key: &str) -> MonotonicMax {
        MonotonicMax {
            conn,
            dirty_key: dirty_key.to_string(),
            script: Script::fixed(MONOTONIC_MAX),
        }
    }

    /// Stores `id` if it is greater than the stored value; true if it was stored.
    pub async fn update(&self, key: &str, id: u64) -> Result<bool> {
        let mut id_text = crate::numtext::NumText::new();
        let v = self
            .script
            .invoke(&self.conn, &[key, &self.dirty_key], &[id_text.u64(id)])
            .await;
        match v {
            Ok(v) => Ok(v.as_int() == Some(1)),
            Err(Error::Redis { code, message })
                if code == "ERR" && message.starts_with("invalid-") =>
            {
                Err(Error::Invalid(message))
            }
            Err(e) => Err(e),
        }
    }

    /// The stored value.
    pub async fn get(&self, key: &str) -> Result<Option<u64>> {
        let v = self.conn.cmd(&["GET", key]).await?;
        Ok(v.as_str().and_then(|s| s.parse().ok()))
    }

    /// Takes up to `count` dirty keys with their current values, for write-back. A key
    /// updated again after it was drained is dirty again, so no update is lost.
    pub async fn drain(&self, count: usize) -> Result<Vec<(String, Option<u64>)>> {
        let popped = self
            .conn
            .cmd(&["SPOP", &self.dirty_key, &count.to_string()])
            .await?;
        let keys: Vec<String> = popped
            .as_array()
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let v = self.get(&k).await?;
            out.push((k, v));
        }
        Ok(out)
    }
}
