//! `Script`: EVALSHA with the NOSCRIPT fallback every production client needs.
//!
//! The script cache is not durable: a restart, a failover or SCRIPT FLUSH empties it, and
//! the next EVALSHA gets NOSCRIPT. `invoke` then loads the script and retries once. It is
//! never used inside a pipeline, where the failed call cannot be retried in place.

use crate::connection::{arg, Connection};
use crate::error::{Error, Result};
use crate::value::Value;

#[derive(Clone, Debug)]
pub struct Script {
    body: String,
    sha: String,
}

impl Script {
    pub fn new(body: &str) -> Script {
        Script {
            body: body.to_string(),
            sha: sha1_smol::Sha1::from(body).digest().to_string(),
        }
    }

    /// The SHA1 of the body, lower-case hex, as SCRIPT LOAD returns it.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    pub fn body(&self) -> &str {
        &self.body
    }

    /// Runs the script by SHA; on NOSCRIPT loads it and retries once.
    pub async fn invoke<K: AsRef<[u8]>, A: AsRef<[u8]>>(
        &self,
        conn: &Connection,
        keys: &[K],
        args: &[A],
    ) -> Result<Value> {
        let mut command = vec![arg("EVALSHA"), arg(&self.sha), arg(keys.len().to_string())];
        command.extend(keys.iter().map(arg));
        command.extend(args.iter().map(arg));
        match conn.cmd(&command).await {
            Err(Error::Redis { code, .. }) if code == "NOSCRIPT" => {
                conn.cmd(&["SCRIPT", "LOAD", &self.body]).await?;
                conn.cmd(&command).await
            }
            other => other,
        }
    }
}
