//! What a compatibility profile changes in a Lua state once it is built (`crate::compat`).
//!
//! The sandbox is Redis 7.0's. A later profile sets the version scripts read
//! (`redis.REDIS_VERSION`, `REDIS_VERSION_NUM`, in scripts and while FUNCTION LOAD runs a
//! library), and a Valkey profile adds Valkey's names: the `server` global beside `redis`,
//! and from Valkey 8.0 (`since::VALKEY_SERVER_API`, as valkey-server 8.1 shows them)
//! `redis.SERVER_NAME`, `VALKEY_VERSION` and `VALKEY_VERSION_NUM`, `__server__err__handler`
//! (the same handler as `__redis__err__handler`), a read-only `os` table holding only
//! `clock`, and the API's errors in Valkey's words (`texts`).

use std::ffi::c_int;

use super::ffi::*;
use super::texts::{self, Texts};
use crate::compat::Profile;
use crate::lua_cfn;

/// Applies `profile` (answering `version` as its Redis version) to the state whose real
/// globals table is at `g` (absolute index).
///
/// # Safety
/// The module contract (lua/ffi.rs); no script runs, and the state is outside protected mode
/// with the memory limit off, as while `Runtime::new` built it. Every value pushed is popped.
pub unsafe fn apply(l: *mut lua_State, g: c_int, version: &str, profile: Profile) {
    // SAFETY: module contract; each block leaves the stack as it found it.
    unsafe {
        lua_checkstack(l, 8);
        let valkey = profile.family() == crate::compat::Family::Valkey;
        let valkey_api = Texts::of(profile) == Texts::Valkey;
        get_field(l, g, "redis");
        let redis = lua_gettop(l);
        set_constants(l, redis, version, profile);
        if valkey {
            lua_pushvalue(l, redis);
            set_field(l, g, "server");
        }
        lua_pop(l, 1);
        if valkey_api {
            if get_field(l, g, "__redis__err__handler") == LUA_TFUNCTION {
                set_field(l, g, "__server__err__handler");
            } else {
                lua_pop(l, 1);
            }
            lua_createtable(l, 0, 1);
            let os = lua_gettop(l);
            set_funcs(l, os, &[("clock", os_clock)]);
            super::sandbox::make_proxy(l, os);
            set_field(l, g, "os");
        }
        // The globals FUNCTION LOAD code sees (a Function state only).
        super::sandbox::push_load_api(l);
        let api = lua_gettop(l);
        if lua_type(l, api) == LUA_TTABLE {
            get_field(l, api, "redis");
            set_constants(l, lua_gettop(l), version, profile);
            if valkey {
                set_field(l, api, "server");
            } else {
                lua_pop(l, 1);
            }
        }
        lua_pop(l, 1);
        texts::set(
            l,
            if valkey_api {
                Texts::Valkey
            } else {
                Texts::Redis
            },
        );
    }
}

/// Sets the version constants on the table behind the read-only `redis` proxy at `idx`.
unsafe fn set_constants(l: *mut lua_State, idx: c_int, version: &str, profile: Profile) {
    // SAFETY: module contract; the backing table is pushed, filled and popped.
    unsafe {
        super::sandbox::push_backing(l, idx);
        let t = lua_gettop(l);
        if lua_type(l, t) == LUA_TTABLE {
            push_str(l, version);
            set_field(l, t, "REDIS_VERSION");
            lua_pushnumber(l, crate::compat::version_num(version) as f64);
            set_field(l, t, "REDIS_VERSION_NUM");
            if let (Texts::Valkey, Some(own)) = (Texts::of(profile), profile.valkey_version()) {
                push_str(l, profile.server_name());
                set_field(l, t, "SERVER_NAME");
                push_str(l, own);
                set_field(l, t, "VALKEY_VERSION");
                lua_pushnumber(l, crate::compat::version_num(own) as f64);
                set_field(l, t, "VALKEY_VERSION_NUM");
            }
        }
        lua_pop(l, 1);
    }
}

/// The processor time this process has used, in seconds: C's `clock()`, which Lua's
/// `os.clock` returns (glibc reads the same clock).
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call's length.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9;
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

unsafe fn os_clock_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper (module contract); pushing a
    // number allocates nothing.
    unsafe {
        lua_pushnumber(l, cpu_seconds());
        Ok(1)
    }
}
lua_cfn!(os_clock, os_clock_body);
