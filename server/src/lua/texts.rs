//! Which words a Lua state's API uses in its own errors: Redis's, or Valkey 8's.
//!
//! Valkey 8.0 renamed the scripting API (`server` beside `redis`) and reworded the errors
//! the API raises itself: "server.log() requires two arguments or more.", "Command arguments
//! must be strings or integers", "... to server.register_function ..." and so on (checked
//! against valkey-server 8.1 by tests/conformance/scripting.txt and functions.txt). The
//! choice is made once per state, when the engine applies its profile
//! (`Runtime::set_server_version`), and kept in the state's registry, so every C function of
//! the API (in a script, or while FUNCTION LOAD runs a library) finds it without a context.

use std::ffi::{c_int, c_void};

use super::ffi::*;

/// The words of one family.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Texts {
    Redis,
    Valkey,
}

/// The registry slot's key: the address of this static, as a light userdata (pushing one
/// allocates nothing, so reading the choice cannot raise).
static KEY: u8 = 0;

fn key() -> *mut c_void {
    std::ptr::addr_of!(KEY) as *mut c_void
}

impl Texts {
    /// The texts the profile's server uses: Valkey's from Valkey 8.0.
    pub fn of(profile: crate::compat::Profile) -> Texts {
        if profile.has(crate::compat::since::VALKEY_SERVER_API) {
            Texts::Valkey
        } else {
            Texts::Redis
        }
    }

    /// `redis` or `valkey`, whichever this family's server says.
    pub fn pick(self, redis: &'static str, valkey: &'static str) -> &'static str {
        match self {
            Texts::Redis => redis,
            Texts::Valkey => valkey,
        }
    }
}

/// Records the state's texts in its registry.
///
/// # Safety
/// The module contract (lua/ffi.rs); run outside protected mode with the limit off (the
/// registry may grow).
pub unsafe fn set(l: *mut lua_State, texts: Texts) {
    // SAFETY: module contract; two slots pushed and consumed by lua_rawset.
    unsafe {
        lua_pushlightuserdata(l, key());
        lua_pushboolean(l, c_int::from(texts == Texts::Valkey));
        lua_rawset(l, LUA_REGISTRYINDEX);
    }
}

/// The state's texts (Redis's until `set` said otherwise).
///
/// # Safety
/// The module contract (lua/ffi.rs); one slot pushed and popped, nothing allocated, so it
/// cannot raise.
pub unsafe fn get(l: *mut lua_State) -> Texts {
    // SAFETY: module contract; a light userdata key and a raw read allocate nothing.
    unsafe {
        lua_pushlightuserdata(l, key());
        lua_rawget(l, LUA_REGISTRYINDEX);
        let valkey = lua_toboolean(l, -1) != 0;
        lua_pop(l, 1);
        if valkey {
            Texts::Valkey
        } else {
            Texts::Redis
        }
    }
}
