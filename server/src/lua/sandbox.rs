//! The sandbox of Redis 7.0: which libraries exist, and read-only globals and library tables.
//!
//! Redis patches its Lua VM with read-only tables. The stock VM has none, so each protected
//! table is an empty proxy whose metatable forwards reads to the real table and refuses
//! writes with Redis's message; `next`, `pairs`, `rawget`, `rawset` and `setmetatable` see
//! through (or refuse) proxies, so `pairs(_G)` lists what Redis lists. The thread's global
//! table is replaced by the proxy of the real globals, so everything the script compiles,
//! including `loadstring` chunks, sees the protected view.

use crate::errors;
use std::ffi::c_int;

use super::ffi::*;
use super::math_random::{math_random, math_randomseed};
use super::runtime::Kind;
use crate::lua_cfn;

const PROXIES: &str = "redlab.proxies";
const BACKING_G: &str = "redlab.G";
const LOAD_API: &str = "redlab.load_api";
const GLOBALS_MT: &str = "redlab.globals_mt";
/// In the registry while some library of `LAZY` is not built yet.
const LAZY_PENDING: &str = "redlab.lazy_pending";

/// A library's `open`: builds its table and sets it into the globals at the given index.
type OpenFn = unsafe fn(*mut lua_State, c_int);

/// Libraries a fresh state does not build until a script reaches one: few scripts use them,
/// and building them (and their read-only proxies) was a fifth of a state's construction,
/// paid by every fresh server's or engine's first script. Each is built, as a read-only proxy
/// like the eager ones, by the globals' missing-key handler the first time its name is looked
/// up, and all of them before anything lists or raw-reads the globals (`next`, `pairs`,
/// `rawget`), so no script can tell it was not there from the start.
const LAZY: [(&str, OpenFn); 4] = [
    ("cjson", super::cjson::open),
    ("cmsgpack", super::cmsgpack::open),
    ("struct", super::struct_lib::open),
    ("bit", super::bit::open),
];
pub(crate) const READONLY: &str = errors::LUA_READONLY_TABLE;

/// The error handler, Redis's `__redis__err__handler`: a Lua function in Redis, here the same
/// steps in a C function (compiling the Lua source was a tenth of building a state). In Lua:
///
/// ```lua
/// local i = debug.getinfo(2, 'nSl')          -- the function that raised
/// if i and i.what == 'C' then i = debug.getinfo(3, 'nSl') end  -- its caller, for a C one
/// if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
/// if i then err['source'] = i.source; err['line'] = i.currentline end
/// return err
/// ```
///
/// Called by Lua on an error, the handler is at level 0 of the stack (debug.getinfo's level 1),
/// so Lua's levels 2 and 3 are 1 and 2 here. Its upvalue is the base library's `tostring`, the
/// one the Lua version reaches through its environment (the real globals, which no script can
/// change). The fields are set with `lua_setfield`, as the Lua assignment does, metamethods
/// included.
unsafe fn err_handler_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the error value in slot 1; only Copy values (the debug record) are alive across
    // the calls that can raise.
    unsafe {
        lua_settop(l, 1);
        let mut ar: lua_Debug = std::mem::zeroed();
        let mut found = lua_getstack(l, 1, &mut ar) != 0;
        if found {
            lua_getinfo(l, c"nSl".as_ptr(), &mut ar);
            if !ar.what.is_null() && std::ffi::CStr::from_ptr(ar.what) == c"C" {
                found = lua_getstack(l, 2, &mut ar) != 0;
                if found {
                    lua_getinfo(l, c"nSl".as_ptr(), &mut ar);
                }
            }
        }
        if lua_type(l, 1) != LUA_TTABLE {
            lua_createtable(l, 0, 1);
            push_str(l, "ERR ");
            lua_pushvalue(l, lua_upvalueindex(1));
            lua_pushvalue(l, 1);
            lua_call(l, 1, 1);
            lua_concat(l, 2);
            set_field(l, 2, "err");
            lua_replace(l, 1);
        }
        if found {
            lua_pushstring(l, ar.source);
            lua_setfield(l, 1, c"source".as_ptr());
            lua_pushinteger(l, ar.currentline as lua_Integer);
            lua_setfield(l, 1, c"line".as_ptr());
        }
        Ok(1)
    }
}
lua_cfn!(err_handler, err_handler_body);

unsafe fn open(l: *mut lua_State, f: lua_CFunction, name: &str) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_pushcfunction(l, f);
        push_str(l, name);
        lua_call(l, 1, 0);
    }
}

unsafe fn registry_get(l: *mut lua_State, name: &str) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        push_str(l, name);
        lua_rawget(l, LUA_REGISTRYINDEX);
    }
}

unsafe fn registry_set(l: *mut lua_State, name: &str) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        push_str(l, name);
        lua_insert(l, -2);
        lua_rawset(l, LUA_REGISTRYINDEX);
    }
}

/// Builds the sandbox in a fresh state; returns the registry reference of the error handler.
pub unsafe fn build(l: *mut lua_State, kind: Kind) -> c_int {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_checkstack(l, 32);
        // Building costs less with the collector off: everything made here stays alive. It is
        // restarted at the end, and its first cycle runs as the first scripts allocate.
        lua_gc(l, LUA_GCSTOP, 0);
        open(l, luaopen_base, "");
        open(l, luaopen_table, "table");
        open(l, luaopen_string, "string");
        open(l, luaopen_math, "math");
        let g = lua_gettop(l) + 1;
        lua_pushvalue(l, LUA_GLOBALSINDEX);

        get_field(l, g, "tostring");
        lua_pushcclosure(l, err_handler, 1);
        let handler_ref = {
            lua_pushvalue(l, -1);
            luaL_ref(l, LUA_REGISTRYINDEX)
        };
        if kind == Kind::Eval {
            set_field(l, g, "__redis__err__handler");
        } else {
            lua_pop(l, 1);
        }
        // The debug library is not opened: Redis removes it, and the handler needs none of it.
        for name in [
            "debug", "print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy", "module",
            "require", "package",
        ] {
            lua_pushnil(l);
            set_field(l, g, name);
        }

        // Functions Redis replaces or wraps.
        get_field(l, g, "table");
        set_funcs(l, lua_gettop(l), &[("insert", super::table_insert::insert)]);
        lua_pop(l, 1);
        get_field(l, g, "math");
        let math = lua_gettop(l);
        set_funcs(
            l,
            math,
            &[("random", math_random), ("randomseed", math_randomseed)],
        );
        lua_pop(l, 1);
        set_funcs(
            l,
            g,
            &[
                ("loadstring", loadstring),
                ("pcall", pcall),
                ("rawset", rawset),
                ("setmetatable", setmetatable),
                ("rawget", rawget),
                ("next", next),
                ("pairs", pairs),
            ],
        );
        set_funcs(l, g, &[("tonumber", super::tonumber::tonumber)]);

        super::api::open(l, g, kind);
        // cjson, cmsgpack, struct and bit are built when a script first reaches one (see
        // `LAZY`); the registry remembers that some are not built yet.
        lua_pushboolean(l, 1);
        registry_set(l, LAZY_PENDING);

        // Registry bookkeeping for proxies.
        lua_newtable(l);
        registry_set(l, PROXIES);
        lua_pushvalue(l, g);
        registry_set(l, BACKING_G);

        // Library tables become read-only proxies.
        for name in ["string", "table", "math", "redis", "coroutine"] {
            get_field(l, g, name);
            if lua_type(l, -1) == LUA_TTABLE {
                make_proxy(l, lua_gettop(l));
                set_field(l, g, name);
            } else {
                lua_pop(l, 1);
            }
        }
        // The string metatable: methods come from the protected string table, and the metatable
        // itself is read-only.
        push_str(l, "");
        lua_getmetatable(l, -1);
        let smt = lua_gettop(l);
        get_field(l, g, "string");
        set_field(l, smt, "__index");
        lua_pushvalue(l, smt);
        make_proxy(l, lua_gettop(l));
        set_field(l, smt, "__metatable");
        lua_pop(l, 2);

        // A missing global is an error.
        lua_createtable(l, 0, 1);
        lua_pushcfunction(l, missing_global);
        set_field(l, lua_gettop(l) - 1, "__index");
        lua_setmetatable(l, g);

        if kind == Kind::Function {
            build_load_api(l, g);
        }

        // The protected view replaces the globals.
        lua_newtable(l);
        let p = lua_gettop(l);
        lua_createtable(l, 0, 3);
        let mt = lua_gettop(l);
        lua_pushvalue(l, g);
        set_field(l, mt, "__index");
        lua_pushcfunction(l, readonly_newindex);
        set_field(l, mt, "__newindex");
        lua_pushvalue(l, mt);
        registry_set(l, GLOBALS_MT);
        lua_pushvalue(l, mt);
        make_proxy(l, lua_gettop(l));
        set_field(l, mt, "__metatable");
        lua_setmetatable(l, p);
        register_proxy(l, p, g);
        lua_pushvalue(l, p);
        set_field(l, g, "_G");
        lua_pushvalue(l, p);
        lua_replace(l, LUA_GLOBALSINDEX);
        lua_settop(l, 0);
        lua_gc(l, LUA_GCRESTART, 0);
        handler_ref
    }
}

/// The table FUNCTION LOAD code sees as its globals: only `redis` with the registration API.
unsafe fn build_load_api(l: *mut lua_State, g: c_int) {
    // SAFETY: module contract (lua/ffi.rs); runs while `Runtime::new` builds the state, outside
    // protected mode with the memory limit off, each value stored or popped before the next few are
    // pushed.
    unsafe {
        lua_newtable(l);
        let api = lua_gettop(l);
        lua_newtable(l);
        let r = lua_gettop(l);
        super::api::open_load_api(l, r);
        lua_createtable(l, 0, 1);
        lua_pushcfunction(l, missing_global);
        set_field(l, lua_gettop(l) - 1, "__index");
        lua_setmetatable(l, r);
        make_proxy(l, r);
        set_field(l, api, "redis");
        lua_createtable(l, 0, 1);
        lua_pushcfunction(l, missing_global);
        set_field(l, lua_gettop(l) - 1, "__index");
        lua_setmetatable(l, api);
        registry_set(l, LOAD_API);
        let _ = g;
    }
}

/// Points the globals' lookups at the load API (`true`) or back at the real globals.
pub unsafe fn set_load_mode(l: *mut lua_State, loading: bool) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        registry_get(l, GLOBALS_MT);
        let mt = lua_gettop(l);
        registry_get(l, if loading { LOAD_API } else { BACKING_G });
        set_field(l, mt, "__index");
        lua_pop(l, 1);
    }
}

/// The table FUNCTION LOAD code sees as its globals (`build_load_api`), or nil in an EVAL
/// state; for `profile_api` to set the version it shows.
pub(crate) unsafe fn push_load_api(l: *mut lua_State) {
    // SAFETY: module contract (lua/ffi.rs); one slot pushed.
    unsafe { registry_get(l, LOAD_API) }
}

/// Replaces the table at `idx` (absolute) with a read-only proxy of it.
pub(crate) unsafe fn make_proxy(l: *mut lua_State, idx: c_int) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        lua_newtable(l);
        let p = lua_gettop(l);
        lua_createtable(l, 0, 2);
        lua_pushvalue(l, idx);
        set_field(l, p + 1, "__index");
        lua_pushcfunction(l, readonly_newindex);
        set_field(l, p + 1, "__newindex");
        lua_setmetatable(l, p);
        register_proxy(l, p, idx);
        lua_replace(l, idx);
    }
}

unsafe fn register_proxy(l: *mut lua_State, proxy: c_int, backing: c_int) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        registry_get(l, PROXIES);
        lua_pushvalue(l, proxy);
        lua_pushvalue(l, backing);
        lua_rawset(l, -3);
        lua_pop(l, 1);
    }
}

/// Pushes the real table behind the proxy at `idx`, or nil when it is not a proxy.
pub unsafe fn push_backing(l: *mut lua_State, idx: c_int) {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        let idx = abs_index(l, idx);
        registry_get(l, PROXIES);
        lua_pushvalue(l, idx);
        lua_rawget(l, -2);
        lua_remove(l, -2);
    }
}

pub(crate) unsafe fn is_proxy(l: *mut lua_State, idx: c_int) -> bool {
    // SAFETY: module contract (lua/ffi.rs); only borrowed or Copy values are alive across the calls
    // that can raise.
    unsafe {
        if lua_type(l, idx) != LUA_TTABLE {
            return false;
        }
        push_backing(l, idx);
        let yes = lua_type(l, -1) == LUA_TTABLE;
        lua_pop(l, 1);
        yes
    }
}

unsafe fn readonly_newindex_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        push_positioned(l, READONLY);
        Err(())
    }
}
lua_cfn!(readonly_newindex, readonly_newindex_body);

/// Builds the library `LAZY[i]` into the real globals at `g` (absolute), as a read-only proxy.
unsafe fn build_lazy(l: *mut lua_State, g: c_int, i: usize) {
    // SAFETY: module contract (lua/ffi.rs); the library's `open` and `make_proxy` hold only
    // borrowed or Copy values across the calls that can raise, as while `build` runs. Inside a
    // script's protected call an out-of-memory raises past here with nothing owned alive.
    unsafe {
        let (name, open) = LAZY[i];
        lua_checkstack(l, 8);
        open(l, g);
        get_field(l, g, name);
        make_proxy(l, lua_gettop(l));
        set_field(l, g, name);
    }
}

/// Whether the table at `idx` is the real globals table.
unsafe fn is_backing_globals(l: *mut lua_State, idx: c_int) -> bool {
    // SAFETY: module contract (lua/ffi.rs); the registry value pushed is popped before return.
    unsafe {
        let idx = abs_index(l, idx);
        registry_get(l, BACKING_G);
        let yes = lua_rawequal(l, idx, -1) != 0;
        lua_pop(l, 1);
        yes
    }
}

/// Builds every library of `LAZY` not built yet, when the table at `idx` is the real globals
/// (about to be listed or raw-read). Cheap once all are built: one registry read.
unsafe fn build_all_lazy(l: *mut lua_State, idx: c_int) {
    // SAFETY: module contract (lua/ffi.rs); the stack is balanced on return.
    unsafe {
        let idx = abs_index(l, idx);
        registry_get(l, LAZY_PENDING);
        let pending = lua_toboolean(l, -1) != 0;
        lua_pop(l, 1);
        if !pending || !is_backing_globals(l, idx) {
            return;
        }
        lua_pushnil(l);
        registry_set(l, LAZY_PENDING);
        for (i, (name, _)) in LAZY.iter().enumerate() {
            if get_field(l, idx, name) == LUA_TNIL {
                build_lazy(l, idx, i);
            }
            lua_pop(l, 1);
        }
    }
}

unsafe fn missing_global_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        // A library not built yet, looked up in the real globals: built now.
        if lua_type(l, 1) == LUA_TTABLE && lua_type(l, 2) == LUA_TSTRING {
            let key = to_bytes(l, 2).unwrap_or_default();
            if let Some(i) = LAZY.iter().position(|(n, _)| n.as_bytes() == key) {
                if is_backing_globals(l, 1) {
                    build_lazy(l, 1, i);
                    lua_settop(l, 2);
                    lua_rawget(l, 1);
                    return Ok(1);
                }
            }
        }
        // Assembled by Lua from borrowed pieces: every push may raise, so no Rust String here.
        luaL_where(l, 1);
        push_str(l, errors::LUA_NONEXISTENT_GLOBAL);
        match to_bytes(l, 2) {
            Some(name) => push_bytes(l, name),
            None => push_str(l, ""),
        }
        push_str(l, "'");
        lua_concat(l, 4);
        Err(())
    }
}
lua_cfn!(missing_global, missing_global_body);

unsafe fn rawset_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if is_proxy(l, 1) {
            push_str(l, READONLY);
            return Err(());
        }
        luaL_checktype(l, 1, LUA_TTABLE);
        luaL_checkany(l, 2);
        luaL_checkany(l, 3);
        lua_settop(l, 3);
        lua_rawset(l, 1);
        Ok(1)
    }
}
lua_cfn!(rawset, rawset_body);

unsafe fn rawget_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        luaL_checktype(l, 1, LUA_TTABLE);
        luaL_checkany(l, 2);
        lua_settop(l, 2);
        if is_proxy(l, 1) {
            push_backing(l, 1);
            lua_replace(l, 1);
        }
        build_all_lazy(l, 1);
        lua_rawget(l, 1);
        Ok(1)
    }
}
lua_cfn!(rawget, rawget_body);

unsafe fn setmetatable_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if is_proxy(l, 1) {
            push_str(l, READONLY);
            return Err(());
        }
        let t = lua_type(l, 2);
        luaL_checktype(l, 1, LUA_TTABLE);
        if t != LUA_TNIL && t != LUA_TTABLE {
            luaL_argerror(l, 2, c"nil or table expected".as_ptr());
        }
        if luaL_getmetafield_(l, 1, c"__metatable".as_ptr()) != 0 {
            push_str(l, "cannot change a protected metatable");
            return Err(());
        }
        lua_settop(l, 2);
        lua_setmetatable(l, 1);
        Ok(1)
    }
}
lua_cfn!(setmetatable, setmetatable_body);

unsafe fn next_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        luaL_checktype(l, 1, LUA_TTABLE);
        lua_settop(l, 2);
        if is_proxy(l, 1) {
            push_backing(l, 1);
            lua_replace(l, 1);
        }
        build_all_lazy(l, 1);
        if lua_next(l, 1) != 0 {
            Ok(2)
        } else {
            lua_pushnil(l);
            Ok(1)
        }
    }
}
lua_cfn!(next, next_body);

unsafe fn pairs_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        luaL_checktype(l, 1, LUA_TTABLE);
        lua_pushcfunction(l, next);
        lua_pushvalue(l, 1);
        lua_pushnil(l);
        Ok(3)
    }
}
lua_cfn!(pairs, pairs_body);

/// Redis's pcall: an error raised as a `{err=...}` table reaches the script as its string.
unsafe fn pcall_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        if lua_gettop(l) == 0 {
            lua_pushnil(l);
        }
        let status = lua_pcall(l, lua_gettop(l) - 1, LUA_MULTRET, 0);
        // The callee may have returned as many values as the stack holds: make room for the
        // status (and the error field read below) before pushing.
        luaL_checkstack_(l, 2, c"too many results".as_ptr());
        if status == 0 {
            lua_pushboolean(l, 1);
            lua_insert(l, 1);
            return Ok(lua_gettop(l));
        }
        if lua_type(l, -1) == LUA_TTABLE {
            let t = lua_gettop(l);
            if get_field(l, t, "err") == LUA_TSTRING {
                lua_replace(l, t);
            } else {
                lua_pop(l, 1);
            }
        }
        lua_pushboolean(l, 0);
        lua_insert(l, -2);
        Ok(2)
    }
}
lua_cfn!(pcall, pcall_body);

/// loadstring as Lua's. A precompiled chunk needs no check here: the Lua that build.rs compiles
/// has no bytecode loader, so it fails in the lexer exactly as in Redis.
unsafe fn loadstring_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let mut len = 0usize;
        let s = luaL_checklstring(l, 1, &mut len);
        let chunkname = luaL_optlstring(l, 2, s, std::ptr::null_mut());
        if luaL_loadbuffer(l, s, len, chunkname) == 0 {
            Ok(1)
        } else {
            lua_pushnil(l);
            lua_insert(l, -2);
            Ok(2)
        }
    }
}
lua_cfn!(loadstring, loadstring_body);
