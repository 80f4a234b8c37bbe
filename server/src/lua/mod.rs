//! The Lua 5.1 runtime: sandbox, redis.* API, conversions, script cache, functions.
//!
//! Two Lua states, as Redis has: one for EVAL scripts (dropped by SCRIPT FLUSH) and one for
//! FUNCTION libraries. Both are created on first use, so a server that never runs a script
//! starts without paying for them.

// The C-API helpers are unsafe by nature (raw Lua states); their contract is the module's:
// called with a live state owned by a `Runtime`, on the engine's thread.
#![allow(clippy::missing_safety_doc)]

pub mod api;
pub mod arg_cache;
pub mod bit;
pub mod cache;
pub mod chunks;
pub mod cjson;
pub mod cmsgpack;
pub mod convert;
pub mod ffi;
pub mod functions;
pub mod global_writes;
#[cfg(test)]
mod keys_argv_tests;
pub mod math_random;
#[cfg(test)]
mod oom_tests;
pub mod prepared;
pub mod profile_api;
pub mod runtime;
#[cfg(test)]
mod safety_audit;
pub mod sandbox;
pub mod shebang;
pub mod struct_lib;
pub mod table_insert;
pub mod texts;
pub mod tonumber;

/// Script and function state owned by the engine.
#[derive(Default)]
pub struct Scripting {
    pub(crate) eval_rt: Option<Box<runtime::Runtime>>,
    pub(crate) cache: cache::ScriptCache,
    pub(crate) func_rt: Option<Box<runtime::Runtime>>,
    pub(crate) libs: functions::Libraries,
    /// Scripts an engine restore took out of the cache, still compiled in `eval_rt`: a later
    /// load of the same body takes one back instead of compiling it (see `snapshot`).
    pub(crate) set_aside:
        std::collections::HashMap<[u8; 40], cache::Script, foldhash::fast::FixedState>,
    /// The version scripts see when it is not 7.0.15, and the profile the server answers
    /// as (`crate::compat`); set by the engine, applied to each state it creates.
    pub(crate) server_version: Option<(String, crate::compat::Profile)>,
}

impl Scripting {
    /// The EVAL runtime, made on first use (or taken from the state `prepared` built ahead).
    pub(crate) fn eval_runtime(&mut self, memory_limit: usize) -> &mut runtime::Runtime {
        let version = &self.server_version;
        self.eval_rt.get_or_insert_with(|| {
            let mut rt = prepared::eval_runtime(memory_limit);
            if let Some((v, profile)) = version {
                rt.set_server_version(v, *profile);
            }
            rt
        })
    }

    /// The FUNCTION runtime, created on first use.
    pub(crate) fn func_runtime(&mut self, memory_limit: usize) -> &mut runtime::Runtime {
        let version = &self.server_version;
        self.func_rt.get_or_insert_with(|| {
            let mut rt = Box::new(runtime::Runtime::new(runtime::Kind::Function, memory_limit));
            if let Some((v, profile)) = version {
                rt.set_server_version(v, *profile);
            }
            rt
        })
    }

    /// SCRIPT FLUSH: forget every script and start a fresh Lua state.
    pub(crate) fn flush_scripts(&mut self) {
        self.cache.clear();
        self.set_aside.clear();
        self.eval_rt = None;
    }
}
