//! `VersionedHash`: write a hash's fields and its version together, only if the stored
//! version is not newer, so a stale batch cannot overwrite a fresh edit.

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::script::Script;

use super::status_reply;

const VERSIONED_WRITE: &str = include_str!("../../../scripts/versioned_hash_write.lua");

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    Applied,
    /// The stored version is newer; nothing was written.
    Stale {
        stored: u64,
    },
}

pub struct VersionedHash {
    conn: Connection,
    script: Script,
}

impl VersionedHash {
    pub fn new(conn: Connection) -> VersionedHash {
        VersionedHash {
            conn,
            script: Script::fixed(VERSIONED_WRITE),
        }
    }

    pub async fn write(&self, key: &str, fields: &[(&str, &str)], version: u64) -> Result<Write> {
        let mut args = vec![version.to_string()];
        for (f, v) in fields {
            args.push(f.to_string());
            args.push(v.to_string());
        }
        let v = self.script.invoke(&self.conn, &[key], &args).await?;
        let (status, rest) = status_reply(&v)?;
        if status == 1 {
            return Ok(Write::Applied);
        }
        let stored = rest
            .first()
            .and_then(|v| v.as_int())
            .ok_or_else(|| Error::Protocol(format!("{:?}", v)))?;
        Ok(Write::Stale {
            stored: stored as u64,
        })
    }
}
