//! FUNCTION libraries: loading a library's code, `redis.register_function`, and the
//! registry of libraries and functions.

use crate::errors;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::c_int;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::ffi::*;
use super::runtime::Runtime;
use super::shebang;
use super::texts::{self, Texts};
use crate::lua_cfn;
use crate::reply::Reply;

pub struct Function {
    pub name: String,
    /// Registry reference of the callback in the FUNCTION runtime.
    pub func: c_int,
    pub description: Option<Bytes>,
    pub flags: u32,
}

pub struct Library {
    pub name: String,
    pub code: Bytes,
    pub functions: Vec<Function>,
}

#[derive(Default)]
pub struct Libraries {
    pub libs: BTreeMap<String, Library>,
    /// Lower-case function name -> library name (one library may hold `f` and `F`).
    pub index: BTreeMap<String, String>,
}

impl Libraries {
    pub fn function(&self, name: &[u8]) -> Option<&Function> {
        let key = String::from_utf8_lossy(name).to_ascii_lowercase();
        let lib = self.index.get(&key)?;
        self.libs
            .get(lib)?
            .functions
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(&key))
    }

    /// The functions FCALL can name (INFO's number_of_functions): names that differ only in
    /// case count once, as in Redis's case-insensitive dictionary of functions.
    pub fn function_count(&self) -> usize {
        self.index.len()
    }

    /// The functions the libraries registered (FUNCTION STATS' functions_count), names that
    /// differ only in case included.
    pub fn registered_count(&self) -> usize {
        self.libs.values().map(|l| l.functions.len()).sum()
    }

    /// Removes a library and its functions, releasing their Lua references.
    pub fn remove(&mut self, name: &str, rt: Option<&Runtime>) -> Option<Library> {
        let lib = self.libs.remove(name)?;
        for f in &lib.functions {
            self.index.remove(&f.name.to_ascii_lowercase());
            if let Some(rt) = rt {
                rt.unref(f.func);
            }
        }
        Some(lib)
    }

    /// Adds a library whose functions were checked for collisions.
    pub fn insert(&mut self, lib: Library) {
        for f in &lib.functions {
            self.index
                .insert(f.name.to_ascii_lowercase(), lib.name.clone());
        }
        self.libs.insert(lib.name.clone(), lib);
    }
}

/// Functions registered by the library being loaded.
struct Pending {
    functions: Vec<Function>,
}

thread_local! {
    static LOADING: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

/// Redis's LOAD_TIMEOUT_MS: library code that runs longer while loading is stopped. Like
/// Redis, nobody else is served meanwhile; the bound is what keeps the server alive.
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);
/// How often (in VM instructions) the load hook looks at the clock, as Redis's.
const LOAD_HOOK_EVERY: c_int = 100_000;

thread_local! {
    /// When the library being loaded started running. A real monotonic clock, not the
    /// engine's (possibly frozen, manual) one: a frozen clock must not let a load loop on.
    static LOAD_STARTED: Cell<Option<Instant>> = const { Cell::new(None) };
}

unsafe extern "C-unwind" fn load_hook(l: *mut lua_State, _ar: *mut lua_Debug) {
    // SAFETY: Lua calls the hook with the running state; only Copy values are alive when
    // lua_error jumps out of this frame.
    unsafe {
        let Some(start) = LOAD_STARTED.with(|s| s.get()) else {
            return;
        };
        if start.elapsed() <= LOAD_TIMEOUT {
            return;
        }
        // From now on on every line and backward jump, so nothing can outrun the error.
        lua_sethook(l, Some(load_hook), LUA_MASKLINE, 0);
        super::api::push_redis_error(l, errors::FUNCTION_LOAD_TIMEOUT);
        lua_error(l);
    }
}

fn valid_name(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Reads the table form's `flags` (a list of flag names).
unsafe fn read_flags(l: *mut lua_State, idx: c_int, words: Texts) -> Result<u32, &'static str> {
    // SAFETY: module contract (lua/ffi.rs); raw reads and one slot pushed at a time, nothing
    // that allocates or raises.
    unsafe {
        if lua_type(l, idx) != LUA_TTABLE {
            return Err(words.pick(
                errors::LUA_REGISTER_FLAGS_NOT_TABLE,
                errors::LUA_REGISTER_FLAGS_NOT_TABLE_VALKEY,
            ));
        }
        let mut flags = 0;
        let mut i = 1;
        loop {
            lua_rawgeti_(l, idx, i);
            if lua_type(l, -1) == LUA_TNIL {
                lua_pop(l, 1);
                break;
            }
            let f = if lua_type(l, -1) == LUA_TSTRING {
                str_bytes(l, -1).and_then(shebang::flag_by_name)
            } else {
                None
            };
            lua_pop(l, 1);
            match f {
                Some(bit) => flags |= bit,
                None => return Err(errors::LUA_REGISTER_UNKNOWN_FLAG),
            }
            i += 1;
        }
        Ok(flags)
    }
}

/// Stack slots (after the arguments) where the table form's values wait until every key is
/// read: values stay in Lua rather than in Rust copies, because the Lua calls in between can
/// raise and jump past this function.
const NAME_SLOT: c_int = 1;
const CALLBACK_SLOT: c_int = 2;
const DESCRIPTION_SLOT: c_int = 3;

unsafe fn register_function_body(l: *mut lua_State) -> CResult {
    // SAFETY: module contract (lua/ffi.rs). Every Lua call that can raise (pushing the error
    // message, converting a name number to a string, luaL_ref growing the registry) runs while
    // the only Rust values alive borrow Lua strings; the owned name and description are made
    // after the last of them.
    unsafe {
        let fail = |l, msg: &str| {
            super::api::push_redis_error(l, msg);
            Err(())
        };
        let words = texts::get(l);
        let say = |redis, valkey| words.pick(redis, valkey);
        if LOADING.with(|p| p.borrow().is_none()) {
            return fail(
                l,
                say(
                    errors::LUA_REGISTER_OUTSIDE_LOAD,
                    errors::LUA_REGISTER_OUTSIDE_LOAD_VALKEY,
                ),
            );
        }
        let argc = lua_gettop(l);
        let (name_idx, func_idx, description_idx, flags): (c_int, c_int, c_int, u32);
        if argc == 1 {
            if lua_type(l, 1) != LUA_TTABLE {
                return fail(
                    l,
                    say(
                        errors::LUA_REGISTER_SINGLE_ARG,
                        errors::LUA_REGISTER_SINGLE_ARG_VALKEY,
                    ),
                );
            }
            let base = argc;
            lua_settop(l, base + 3);
            let mut fl = 0;
            lua_pushnil(l);
            while lua_next(l, 1) != 0 {
                // As Redis's lua_isstring: a string, or a number Lua turns into one.
                let stringy = matches!(lua_type(l, -1), LUA_TSTRING | LUA_TNUMBER);
                let slot = match str_bytes(l, -2) {
                    Some(b"function_name") if !stringy => {
                        lua_pop(l, 2);
                        return fail(
                            l,
                            say(
                                errors::LUA_REGISTER_NAME_NOT_STRING,
                                errors::LUA_REGISTER_NAME_NOT_STRING_VALKEY,
                            ),
                        );
                    }
                    Some(b"description") if !stringy => {
                        lua_pop(l, 2);
                        return fail(
                            l,
                            say(
                                errors::LUA_REGISTER_DESCRIPTION_NOT_STRING,
                                errors::LUA_REGISTER_DESCRIPTION_NOT_STRING_VALKEY,
                            ),
                        );
                    }
                    Some(b"function_name") => Some(NAME_SLOT),
                    Some(b"callback") => {
                        if lua_type(l, -1) != LUA_TFUNCTION {
                            lua_pop(l, 2);
                            return fail(
                                l,
                                say(
                                    errors::LUA_REGISTER_CALLBACK_NOT_FUNCTION,
                                    errors::LUA_REGISTER_CALLBACK_NOT_FUNCTION_VALKEY,
                                ),
                            );
                        }
                        Some(CALLBACK_SLOT)
                    }
                    Some(b"description") => Some(DESCRIPTION_SLOT),
                    Some(b"flags") => {
                        let r = read_flags(l, lua_gettop(l), words);
                        lua_pop(l, 1);
                        match r {
                            Ok(f) => fl = f,
                            Err(m) => {
                                lua_pop(l, 1);
                                return fail(l, m);
                            }
                        }
                        None
                    }
                    _ => {
                        lua_pop(l, 2);
                        return fail(
                            l,
                            say(
                                errors::LUA_REGISTER_UNKNOWN_ARG,
                                errors::LUA_REGISTER_UNKNOWN_ARG_VALKEY,
                            ),
                        );
                    }
                };
                if let Some(slot) = slot {
                    lua_replace(l, base + slot);
                }
            }
            if to_bytes(l, base + NAME_SLOT).is_none() {
                return fail(
                    l,
                    say(
                        errors::LUA_REGISTER_NO_NAME,
                        errors::LUA_REGISTER_NO_NAME_VALKEY,
                    ),
                );
            }
            if lua_type(l, base + CALLBACK_SLOT) != LUA_TFUNCTION {
                return fail(
                    l,
                    say(
                        errors::LUA_REGISTER_NO_CALLBACK,
                        errors::LUA_REGISTER_NO_CALLBACK_VALKEY,
                    ),
                );
            }
            name_idx = base + NAME_SLOT;
            func_idx = base + CALLBACK_SLOT;
            description_idx = base + DESCRIPTION_SLOT;
            flags = fl;
        } else if argc == 2 {
            if to_bytes(l, 1).is_none() {
                return fail(
                    l,
                    say(
                        errors::LUA_REGISTER_FIRST_NOT_STRING,
                        errors::LUA_REGISTER_FIRST_NOT_STRING_VALKEY,
                    ),
                );
            }
            if lua_type(l, 2) != LUA_TFUNCTION {
                return fail(
                    l,
                    say(
                        errors::LUA_REGISTER_SECOND_NOT_FUNCTION,
                        errors::LUA_REGISTER_SECOND_NOT_FUNCTION_VALKEY,
                    ),
                );
            }
            name_idx = 1;
            func_idx = 2;
            description_idx = 0;
            flags = 0;
        } else {
            return fail(
                l,
                say(errors::LUA_REGISTER_ARGS, errors::LUA_REGISTER_ARGS_VALKEY),
            );
        }
        // Valkey checks names and duplicates when it creates the functions, after the
        // library's code ran (`load_library`).
        if words == Texts::Redis && !valid_name(str_bytes(l, name_idx).unwrap_or_default()) {
            return fail(l, errors::LIBRARY_NAME_RULE);
        }
        if description_idx != 0 && lua_type(l, description_idx) == LUA_TNUMBER {
            lua_tolstring(l, description_idx, std::ptr::null_mut());
        }
        lua_pushvalue(l, func_idx);
        let func_ref = luaL_ref(l, LUA_REGISTRYINDEX);
        // Nothing below calls Lua until the duplicate check has dropped what it made.
        let name = String::from_utf8_lossy(str_bytes(l, name_idx).unwrap_or_default()).into_owned();
        let description = if description_idx != 0 {
            str_bytes(l, description_idx).map(Bytes::copy_from_slice)
        } else {
            None
        };
        let dup = LOADING.with(|p| {
            let mut p = p.borrow_mut();
            let p = p.as_mut().expect("loading");
            // The library's own names compare exactly, as Redis's (and Valkey's) per-library
            // dictionary does: `f` and `F` are two functions of one library, which FCALL,
            // case-insensitive, finds as one (`Libraries::function`).
            if words == Texts::Redis && p.functions.iter().any(|f| f.name == name) {
                return true;
            }
            p.functions.push(Function {
                name,
                func: func_ref,
                description,
                flags,
            });
            false
        });
        if dup {
            luaL_unref(l, LUA_REGISTRYINDEX, func_ref);
            return fail(l, errors::LUA_REGISTER_DUPLICATE);
        }
        Ok(0)
    }
}
lua_cfn!(register_function, register_function_body);

/// Valkey's checks as it creates a library's functions, in the order they were registered: a
/// name with other characters than letters, digits and `_`, or a name given twice (exactly:
/// `f` and `F` are two functions there, as in Redis).
fn valkey_creation_check(functions: &[Function]) -> Option<&'static str> {
    for (i, f) in functions.iter().enumerate() {
        if !valid_name(f.name.as_bytes()) {
            return Some(errors::FUNCTION_NAME_INVALID_VALKEY);
        }
        if functions[..i].iter().any(|g| g.name == f.name) {
            return Some(errors::FUNCTION_DUPLICATE_VALKEY);
        }
    }
    None
}

/// Compiles and runs a library's code in load mode; returns the library or Redis's error
/// reply (its text may quote the code's bytes, see `Reply::err_bytes`).
/// Name collisions with other libraries are the caller's to check.
pub fn load_library(rt: &Runtime, code: &Bytes) -> Result<Library, Reply> {
    let name = shebang::parse_library(code).map_err(Reply::err)?;
    let skip = code.iter().position(|&c| c == b'\n').unwrap_or(code.len());
    let func = rt
        .compile(&code[skip..], c"@user_function")
        .map_err(|m| Reply::err_bytes(errors::function_compile(&m)))?;
    let l = rt.l;
    LOADING.with(|p| {
        *p.borrow_mut() = Some(Pending {
            functions: Vec::new(),
        })
    });
    // SAFETY: `rt.l` is the FUNCTION runtime's live state, on the engine's thread. The
    // library runs under lua_pcall, so its errors come back as a status; the functions it
    // registers wait in LOADING (a thread-local), not in this frame. The pushes outside the
    // protected call run with the memory limit off.
    let err = unsafe {
        let base = lua_gettop(l);
        super::sandbox::set_load_mode(l, true);
        lua_rawgeti_(l, LUA_REGISTRYINDEX, rt.handler_ref);
        lua_rawgeti_(l, LUA_REGISTRYINDEX, func);
        let saved_hook = (lua_gethook(l), lua_gethookmask(l), lua_gethookcount(l));
        lua_sethook(l, Some(load_hook), LUA_MASKCOUNT, LOAD_HOOK_EVERY);
        LOAD_STARTED.with(|s| s.set(Some(Instant::now())));
        super::runtime::enforce_limit(l, true);
        let status = lua_pcall(l, 0, 0, base + 1);
        super::runtime::enforce_limit(l, false);
        LOAD_STARTED.with(|s| s.set(None));
        lua_sethook(l, saved_hook.0, saved_hook.1, saved_hook.2);
        super::sandbox::set_load_mode(l, false);
        let err = if status != 0 {
            let top = lua_gettop(l);
            let msg = if lua_type(l, top) == LUA_TTABLE && get_field(l, top, "err") == LUA_TSTRING {
                to_bytes(l, -1).unwrap_or_default().to_vec()
            } else {
                to_bytes(l, top)
                    .map(<[u8]>::to_vec)
                    .unwrap_or_else(|| errors::LUA_UNKNOWN_ERROR.as_bytes().to_vec())
            };
            Some(msg)
        } else {
            None
        };
        lua_settop(l, base);
        err
    };
    rt.unref(func);
    let pending = LOADING
        .with(|p| p.borrow_mut().take())
        .map(|p| p.functions)
        .unwrap_or_default();
    if let Some(msg) = err {
        for f in &pending {
            rt.unref(f.func);
        }
        return Err(Reply::err_bytes(errors::functions_register(&msg)));
    }
    if pending.is_empty() {
        return Err(Reply::err(errors::FUNCTIONS_NONE_REGISTERED));
    }
    // SAFETY: `l` is the runtime's live state; reading the texts allocates nothing.
    if unsafe { texts::get(l) } == Texts::Valkey {
        if let Some(refused) = valkey_creation_check(&pending) {
            for f in &pending {
                rt.unref(f.func);
            }
            return Err(Reply::err(refused));
        }
    }
    Ok(Library {
        name,
        code: code.clone(),
        functions: pending,
    })
}
