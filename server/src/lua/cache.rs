//! The EVAL script cache: compiled scripts by the lower-case hex SHA1 of their body.

use std::collections::HashMap;
use std::ffi::c_int;

use bytes::Bytes;

/// One cached script.
pub struct Script {
    pub body: Bytes,
    /// Registry reference of the compiled function in the EVAL runtime.
    pub func: c_int,
    /// Shebang flags (`shebang::*`).
    pub flags: u32,
}

#[derive(Default)]
pub struct ScriptCache {
    pub scripts: HashMap<[u8; 40], Script, foldhash::fast::FixedState>,
}

/// Lower-case hex SHA1 of `body`.
pub fn sha1_hex(body: &[u8]) -> [u8; 40] {
    let digest = sha1_smol::Sha1::from(body).digest().bytes();
    let mut out = [0u8; 40];
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in digest.iter().enumerate() {
        out[2 * i] = HEX[(b >> 4) as usize];
        out[2 * i + 1] = HEX[(b & 15) as usize];
    }
    out
}

/// A user-given SHA1 in the cache's key form (lower case); None when it cannot be one.
pub fn normalize_sha(s: &[u8]) -> Option<[u8; 40]> {
    if s.len() != 40 {
        return None;
    }
    let mut out = [0u8; 40];
    for (o, c) in out.iter_mut().zip(s) {
        *o = c.to_ascii_lowercase();
    }
    Some(out)
}

impl ScriptCache {
    pub fn get(&self, sha: &[u8; 40]) -> Option<&Script> {
        self.scripts.get(sha)
    }

    pub fn clear(&mut self) {
        self.scripts.clear();
    }
}
