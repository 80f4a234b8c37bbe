//! The Lua 5.1 runtime: sandbox, redis.* API, conversions, script cache, functions.

/// Script and function state owned by the engine. The Lua state itself is created on first
/// use, so a server that never runs a script starts without paying for it.
#[derive(Default)]
pub struct Scripting {}

impl Scripting {
    /// Forgets every cached script (SCRIPT FLUSH, or a restart as a fault models it).
    pub fn flush_scripts(&mut self) {}
}
