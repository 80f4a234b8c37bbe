//! `Script`: EVALSHA with the NOSCRIPT fallback every production client needs.
//!
//! The script cache is not durable: a restart, a failover or SCRIPT FLUSH empties it, and
//! the next EVALSHA gets NOSCRIPT. `invoke` then loads the script and retries once. It is
//! never used inside a pipeline, where the failed call cannot be retried in place.

use std::cell::RefCell;
use std::sync::Arc;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::value::Value;

/// A script and its SHA1; cheap to clone.
#[derive(Clone, Debug)]
pub struct Script {
    body: Arc<str>,
    sha: Arc<str>,
}

/// Scripts made lately on this thread. Code under test builds its pattern objects again
/// and again (the explorer re-runs every client for each of thousands of schedules), and
/// hashing a 2 KB body each time cost more than running the script. Entries are found by
/// the body's address and length and confirmed by comparing the text, so a body freed and
/// another allocated at its address never gets a stale hash.
const CACHED: usize = 32;

thread_local! {
    /// (the body's address, whether it was given as `'static`, the script).
    static RECENT: RefCell<Vec<(usize, bool, Script)>> = const { RefCell::new(Vec::new()) };
}

impl Script {
    pub fn new(body: &str) -> Script {
        Script::cached(body, false)
    }

    /// `new` for a body that lives as long as the program (the patterns' `include_str!`
    /// scripts): memory that is never freed never holds another text, so a body found at
    /// the same address with the same length is the same text, and the explorer's
    /// clients, which build their patterns at every schedule, skip comparing 2 KB of it.
    pub(crate) fn fixed(body: &'static str) -> Script {
        Script::cached(body, true)
    }

    fn cached(body: &str, fixed: bool) -> Script {
        let addr = body.as_ptr() as usize;
        let hit = RECENT.with(|r| {
            r.borrow()
                .iter()
                .find(|(a, f, s)| {
                    *a == addr && s.body.len() == body.len() && ((fixed && *f) || *s.body == *body)
                })
                .map(|(_, _, s)| s.clone())
        });
        if let Some(s) = hit {
            return s;
        }
        let s = Script {
            body: Arc::from(body),
            sha: Arc::from(sha1_smol::Sha1::from(body).digest().to_string()),
        };
        RECENT.with(|r| {
            let mut r = r.borrow_mut();
            if r.len() >= CACHED {
                r.remove(0);
            }
            r.push((addr, fixed, s.clone()));
        });
        s
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
        match conn.cmd_owned(self.evalsha(conn, keys, args)).await {
            Err(Error::Redis { code, .. }) if code == "NOSCRIPT" => {
                conn.cmd(&["SCRIPT", "LOAD", &*self.body]).await?;
                // Built again rather than kept: the common path sends it without a copy.
                conn.cmd_owned(self.evalsha(conn, keys, args)).await
            }
            other => other,
        }
    }

    /// EVALSHA sha numkeys keys... args...
    fn evalsha<K: AsRef<[u8]>, A: AsRef<[u8]>>(
        &self,
        conn: &Connection,
        keys: &[K],
        args: &[A],
    ) -> Vec<Vec<u8>> {
        let mut numkeys = crate::numtext::NumText::new();
        let head = [
            &b"EVALSHA"[..],
            self.sha.as_bytes(),
            numkeys.u64(keys.len() as u64),
        ];
        conn.command(
            head.into_iter()
                .chain(keys.iter().map(AsRef::as_ref))
                .chain(args.iter().map(AsRef::as_ref)),
        )
    }
}
