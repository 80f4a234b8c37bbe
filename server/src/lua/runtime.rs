//! One Lua 5.1 state, its memory limit, and running one script or function in it.
//!
//! A script runs with a `RunCtx` published in a thread-local: redis.call and the hook reach
//! the engine through it, only inside `with_ctx`'s closure. The engine is single-threaded and
//! scripts cannot start scripts (EVAL is not allowed from a script), so there is at most one
//! context per thread.

use crate::errors;
use std::cell::Cell;
use std::ffi::{c_int, c_void};

use bytes::Bytes;

use super::ffi::*;
use crate::busy::{BusyHook, BusyScript, BusyVerdict};
use crate::engine::Engine;
use crate::reply::Reply;
use crate::session::ConnId;

/// Bytes the Lua heap may hold; allocations past it fail as Lua "not enough memory" errors.
struct AllocState {
    used: usize,
    limit: usize,
    /// The limit applies only inside protected calls: an allocation failure outside one
    /// (pushing KEYS, a GC step resizing the string table) would make Lua exit the process.
    enforce: bool,
    /// An allocation failed (the limit refused it, or the system had no memory) since
    /// `heap_after_run` last looked: a script hit it (and may have caught the error).
    refused: bool,
}

/// Turns the memory limit on (inside a protected call) or off.
///
/// # Safety
/// `l` is a live state made by `Runtime::new`, on its thread.
pub(crate) unsafe fn enforce_limit(l: *mut lua_State, on: bool) {
    // SAFETY: `l` is live (contract); its allocator's user data is the AllocState that
    // `Runtime::new` leaked with Box::into_raw and frees only after lua_close, and Lua is not
    // inside the allocator while this runs (one thread), so the write does not race it.
    unsafe {
        let mut ud: *mut c_void = std::ptr::null_mut();
        lua_getallocf(l, &mut ud);
        if !ud.is_null() {
            (*(ud as *mut AllocState)).enforce = on;
        }
    }
}

/// What a run left in the heap, for the clean-up after it.
enum Heap {
    /// An allocation failed during the run: a memory bomb, failed or caught with pcall.
    HitLimit,
    /// More than half of what the limit allows is held.
    OverHalf,
    Fine,
}

/// How the heap stands after a run (and forgets a refusal, for the next run).
fn heap_after_run(l: *mut lua_State) -> Heap {
    // SAFETY: as in `enforce_limit`; `run` passes its runtime's live state, outside Lua.
    unsafe {
        let mut ud: *mut c_void = std::ptr::null_mut();
        lua_getallocf(l, &mut ud);
        if ud.is_null() {
            return Heap::Fine;
        }
        let st = &mut *(ud as *mut AllocState);
        if std::mem::take(&mut st.refused) {
            Heap::HitLimit
        } else if st.used.saturating_mul(2) > st.limit {
            Heap::OverHalf
        } else {
            Heap::Fine
        }
    }
}

/// Gives the memory a script that hit the limit freed back to the system now.
///
/// mimalloc returns freed pages to the system only a second after they were freed
/// (`purge_delay`), and only when some later allocation or free on any thread looks: after a
/// memory bomb, the tens of megabytes the collector just freed stayed resident until the
/// server's next command a second later, or for good on a server nobody talks to again
/// (tests/memory_returns.rs: RSS 18 MB -> 135-160 MB after its bombs, ~20 MB after one more
/// EVAL a second later). A forced collection frees this thread's empty pages and purges the
/// process's free arena memory at once. It costs a walk over the thread's pages, paid only
/// by a script that hit the limit.
fn give_memory_back() {
    // SAFETY: mi_collect takes no pointer; it works on the calling thread's own heap and on
    // the process's arenas under mimalloc's own locks.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// Lua's allocator. A script allocates and frees dozens of small objects (KEYS and ARGV,
/// reply tables, strings), and the general-purpose malloc behind `std::alloc` took over a
/// tenth of an EVALSHA; mimalloc's per-size free lists serve them in a few instructions and
/// still give memory back to the system, which a hand-made pool would not.
unsafe extern "C" fn alloc(
    ud: *mut c_void,
    ptr: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    use libmimalloc_sys::{mi_free, mi_malloc, mi_realloc};
    // SAFETY: Lua passes back the user data given to lua_newstate: the AllocState owned by
    // the Runtime (Box::into_raw), alive until after lua_close, and touched by nobody else
    // while Lua is inside its allocator. `ptr` is null or a block this function returned
    // (from mimalloc) with size `osize`, as Lua's allocator contract guarantees.
    unsafe {
        let st = &mut *(ud as *mut AllocState);
        if nsize == 0 {
            if !ptr.is_null() {
                mi_free(ptr);
                st.used = st.used.saturating_sub(osize);
            }
            return std::ptr::null_mut();
        }
        let old = if ptr.is_null() { 0 } else { osize };
        if st.enforce && nsize > old && st.used.saturating_add(nsize - old) > st.limit {
            st.refused = true;
            return std::ptr::null_mut();
        }
        let p = if ptr.is_null() {
            mi_malloc(nsize)
        } else {
            mi_realloc(ptr, nsize)
        };
        if p.is_null() {
            st.refused = true;
        } else {
            st.used = st.used + nsize - old;
        }
        p
    }
}

/// Which sandbox a state is built for: EVAL scripts, or FUNCTION libraries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Eval,
    Function,
}

/// An owned Lua state. Dropping it closes the state.
pub struct Runtime {
    pub(crate) l: *mut lua_State,
    /// Lua's allocator state, owned by this runtime through `Box::into_raw` (Lua holds the
    /// pointer as its allocator's user data); freed by `Drop` after `lua_close`.
    alloc: *mut AllocState,
    /// Registry reference of the error handler (`__redis__err__handler`).
    pub(crate) handler_ref: c_int,
    /// Registry reference of the real globals table behind the read-only `_G` proxy.
    globals_ref: c_int,
    /// Registry references of the strings "KEYS" and "ARGV", so each run sets those globals
    /// without hashing their names again.
    names_ref: [c_int; 2],
    /// redis.call's recurring arguments in this state (boxed: `run` hands its address to
    /// the script's context).
    arg_cache: Box<super::arg_cache::ArgCache>,
}

/// What `run` needs of a runtime, copied out so the engine can be borrowed mutably.
#[derive(Clone, Copy)]
pub struct Handles {
    pub l: *mut lua_State,
    handler_ref: c_int,
    globals_ref: c_int,
    names_ref: [c_int; 2],
    arg_cache: *mut super::arg_cache::ArgCache,
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // SAFETY: `l` is the live state this runtime made, closed once here; lua_close frees
        // every block through the allocator, so the AllocState is freed only afterwards, from
        // the Box that `new` turned into this raw pointer (and nobody else frees).
        unsafe {
            lua_close(self.l);
            drop(Box::from_raw(self.alloc));
        }
    }
}

/// How often the hook looks at the clock, in VM instructions.
const HOOK_EVERY: c_int = 100_000;

impl Runtime {
    pub fn new(kind: Kind, memory_limit: usize) -> Runtime {
        let alloc_state = Box::into_raw(Box::new(AllocState {
            used: 0,
            limit: usize::MAX,
            enforce: false,
            refused: false,
        }));
        // SAFETY: `alloc_state` is a valid, uniquely owned pointer handed to Lua as its
        // allocator's user data and read back only through Lua or `self.alloc` (never both at
        // once: one thread). The new state is live and empty, with the stack room `build`
        // checks for; nothing is in protected mode, so an allocation failure here would make
        // Lua abort rather than jump over these frames.
        unsafe {
            let l = lua_newstate(alloc, alloc_state as *mut c_void);
            if l.is_null() {
                drop(Box::from_raw(alloc_state));
                panic!("lua_newstate failed");
            }
            let handler_ref = super::sandbox::build(l, kind);
            lua_pushvalue(l, LUA_GLOBALSINDEX);
            super::sandbox::push_backing(l, -1);
            let globals_ref = luaL_ref(l, LUA_REGISTRYINDEX);
            lua_pop(l, 1);
            let names_ref = ["KEYS", "ARGV"].map(|name| {
                push_str(l, name);
                luaL_ref(l, LUA_REGISTRYINDEX)
            });
            let arg_cache = Box::new(super::arg_cache::ArgCache::new(l));
            lua_sethook(l, Some(hook), LUA_MASKCOUNT, HOOK_EVERY);
            (*alloc_state).limit = (*alloc_state)
                .used
                .saturating_add(memory_limit.max(1 << 20));
            Runtime {
                l,
                alloc: alloc_state,
                handler_ref,
                globals_ref,
                names_ref,
                arg_cache,
            }
        }
    }

    /// `&mut self`: the handles carry the address of this runtime's argument cache, which
    /// the script running on them writes to.
    pub fn handles(&mut self) -> Handles {
        Handles {
            l: self.l,
            handler_ref: self.handler_ref,
            globals_ref: self.globals_ref,
            names_ref: self.names_ref,
            arg_cache: &mut *self.arg_cache,
        }
    }

    /// Makes the state answer as another server version (`crate::compat`): the version
    /// constants of `redis` (in scripts and in FUNCTION LOAD's API) and, for Valkey, Valkey's
    /// names and texts (`profile_api`).
    pub fn set_server_version(&mut self, version: &str, profile: crate::compat::Profile) {
        // SAFETY: `l` is this runtime's live state and no script runs (`&mut self`). Outside
        // protected mode with the limit off, as when `new` built it: only a real out-of-memory
        // fails, and Lua aborts. `apply` pops what it pushes; the globals table is popped here.
        unsafe {
            let l = self.l;
            lua_rawgeti(l, LUA_REGISTRYINDEX, self.globals_ref as _);
            super::profile_api::apply(l, lua_gettop(l), version, profile);
            lua_pop(l, 1);
        }
    }

    /// A full garbage-collection cycle.
    pub fn collect_garbage(&self) {
        // SAFETY: `l` is this runtime's live state and no script runs on it (it is used by
        // one thread, which is here). Outside protected mode with the limit off, a collection
        // frees and allocates nothing that can fail but a real out-of-memory (Lua aborts).
        unsafe {
            lua_gc(self.l, LUA_GCCOLLECT, 0);
        }
    }

    pub fn set_memory_limit(&mut self, limit: usize) {
        // SAFETY: `alloc` is owned by this runtime until Drop; Lua only touches it from inside
        // a Lua call, and none runs while `&mut self` (the only way to the runtime) is held.
        unsafe {
            let st = &mut *self.alloc;
            st.limit = st.used.saturating_add(limit.max(1 << 20));
        }
    }

    /// Compiles `code` under chunk name `name`; returns a registry reference to the function
    /// or the compiler's message (its bytes: it may quote the script's own).
    pub fn compile(&self, code: &[u8], name: &std::ffi::CStr) -> Result<c_int, Vec<u8>> {
        // SAFETY: `l` is this runtime's live state. luaL_loadbuffer parses in protected mode
        // (a memory error comes back as a status, not a jump), `code` and `name` outlive the
        // call, and the message is copied out before it is popped. luaL_ref runs with the
        // limit off, outside protected mode, where only a real out-of-memory fails (and Lua
        // aborts).
        unsafe {
            let l = self.l;
            enforce_limit(l, true);
            let status = luaL_loadbuffer(l, code.as_ptr() as *const _, code.len(), name.as_ptr());
            enforce_limit(l, false);
            if status != 0 {
                let msg = to_bytes(l, -1).map(<[u8]>::to_vec).unwrap_or_default();
                lua_pop(l, 1);
                return Err(msg);
            }
            Ok(luaL_ref(l, LUA_REGISTRYINDEX))
        }
    }

    /// `compile` of an EVAL body (chunk name `@user_script`): the text of `body` after its
    /// first `skip` bytes (a shebang line), where `sha` is the SHA1 of the whole body. When
    /// this process compiled the same body before, its bytecode is loaded instead of parsing
    /// the text again (`chunks`); the first compile keeps its bytecode for the next state.
    pub fn compile_eval(&self, body: &[u8], skip: usize, sha: &[u8; 40]) -> Result<c_int, Vec<u8>> {
        if let Some(dump) = super::chunks::get(sha, skip) {
            if let Some(f) = self.load_own_dump(&dump) {
                #[cfg(test)]
                LOADED_FROM_DUMP.with(|n| n.set(n.get() + 1));
                return Ok(f);
            }
        }
        let f = self.compile(&body[skip..], c"@user_script")?;
        if let Some(dump) = self.dump(f) {
            super::chunks::put(sha, skip, dump);
        }
        Ok(f)
    }

    /// Loads bytecode this process's own `dump` wrote (`chunks`); a registry reference to the
    /// function, or None when it cannot be loaded (out of memory under the limit: the caller
    /// compiles the text, which answers with the right error).
    fn load_own_dump(&self, dump: &[u8]) -> Option<c_int> {
        // SAFETY: `l` is this runtime's live state. `dump` is what `dump` wrote for a function
        // this process's parser compiled (the only bytes `chunks` holds), so the loader reads
        // well-formed bytecode; it runs in protected mode (a memory error comes back as a
        // status). luaL_ref runs with the limit off, outside protected mode, as in `compile`.
        unsafe {
            let l = self.l;
            enforce_limit(l, true);
            let status = redlab_load_own_dump(
                l,
                dump.as_ptr() as *const _,
                dump.len(),
                c"@user_script".as_ptr(),
            );
            enforce_limit(l, false);
            if status != 0 {
                lua_pop(l, 1);
                return None;
            }
            Some(luaL_ref(l, LUA_REGISTRYINDEX))
        }
    }

    /// Lets the compiled function at `fref` read the real globals table instead of the
    /// read-only proxy, when its bytecode cannot assign a global by name (see
    /// `global_writes` for why that is safe). Nothing changes for a runtime without a
    /// globals proxy, or when the bytecode cannot be read. `sha` is the SHA1 of the body
    /// `fref` was compiled from (the verdict is remembered by it).
    pub fn read_globals_directly(&self, fref: c_int, sha: &[u8; 40]) {
        if self.globals_ref == LUA_REFNIL
            || super::global_writes::may_write_globals_of(sha, || self.dump(fref))
        {
            return;
        }
        // SAFETY: live state; `fref` and `globals_ref` are registry references this runtime
        // made (a function and a table), and the stack is balanced on return.
        unsafe {
            lua_rawgeti_(self.l, LUA_REGISTRYINDEX, fref);
            lua_rawgeti_(self.l, LUA_REGISTRYINDEX, self.globals_ref);
            lua_setfenv(self.l, -2);
            lua_pop(self.l, 1);
        }
    }

    /// The bytecode of the compiled function at `fref` (lua_dump).
    pub(crate) fn dump(&self, fref: c_int) -> Option<Vec<u8>> {
        unsafe extern "C-unwind" fn collect(
            _: *mut lua_State,
            p: *const c_void,
            sz: usize,
            ud: *mut c_void,
        ) -> c_int {
            // SAFETY: `ud` is the `dump` vector below, alive and otherwise unused while
            // lua_dump runs; Lua passes `sz` readable bytes at `p`.
            unsafe {
                let out = &mut *(ud as *mut Vec<u8>);
                out.extend_from_slice(std::slice::from_raw_parts(p as *const u8, sz));
                0
            }
        }
        let mut dump: Vec<u8> = Vec::new();
        // SAFETY: live state and a registry reference this runtime made. lua_dump writes
        // through `collect` and allocates nothing in Lua, so it cannot raise past `dump`.
        let status = unsafe {
            lua_rawgeti_(self.l, LUA_REGISTRYINDEX, fref);
            let status = lua_dump_(self.l, collect, &mut dump as *mut Vec<u8> as *mut c_void);
            lua_pop(self.l, 1);
            status
        };
        (status == 0).then_some(dump)
    }

    pub fn unref(&self, r: c_int) {
        // SAFETY: live state; luaL_unref only writes into the registry's free list (no
        // allocation, no raise).
        unsafe { luaL_unref(self.l, LUA_REGISTRYINDEX, r) };
    }
}

/// Why a script was stopped from outside.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stop {
    Kill,
    Shutdown,
}

/// Everything redis.call and the hook need while a script runs.
pub struct RunCtx {
    pub engine: *mut Engine,
    pub conn: ConnId,
    pub db: usize,
    /// The protocol redis.call replies are converted from (redis.setresp).
    pub resp: u8,
    /// EVAL_RO, FCALL_RO or `no-writes`.
    pub read_only: bool,
    /// `allow-oom`.
    pub allow_oom: bool,
    /// Memory was over maxmemory when the script started (Redis decides OOM once, at start).
    pub oom_at_start: bool,
    pub is_function: bool,
    pub has_written: bool,
    /// Keys the script declared, for strict-keys mode; None when strict keys is off.
    pub strict_keys: Option<Vec<Bytes>>,
    /// When the script started, a `clock::monotonic_us` reading.
    pub start: u64,
    pub threshold_ms: u64,
    pub busy_hook: Option<BusyHook>,
    /// The function FCALL runs (None for EVAL), for FUNCTION STATS while it is busy.
    pub function: Option<std::sync::Arc<crate::busy::RunningFunction>>,
    /// The ACL users, copied when the script first passes busy-reply-threshold (see
    /// `BusyScript::users`), with the server's profile and its report (`BusyScript::profile`).
    pub busy_view: Option<BusyView>,
    pub stop: Option<Stop>,
    /// The outcome of the redis.call being converted to Lua (see `api::call_body`).
    pub outcome: Option<Result<Reply, String>>,
    /// The running state's argument cache (set by `run`; null before).
    pub arg_cache: *mut super::arg_cache::ArgCache,
}

/// What the busy-script loop needs of the engine, taken once when the script first passes
/// busy-reply-threshold: the ACL users, the profile and its report.
pub type BusyView = (
    std::sync::Arc<crate::acl::Users>,
    crate::compat::Profile,
    crate::compat::Report,
    std::sync::Arc<crate::config::rename::Renames>,
);

#[cfg(test)]
thread_local! {
    /// How many functions `compile_eval` loaded from bytecode on this thread.
    static LOADED_FROM_DUMP: Cell<u64> = const { Cell::new(0) };
}

/// How many functions `compile_eval` loaded from bytecode on this thread (for tests).
#[cfg(test)]
pub(crate) fn loaded_from_dump() -> u64 {
    LOADED_FROM_DUMP.with(Cell::get)
}

thread_local! {
    /// The running script's context, published by `run` for the length of its protected
    /// call; null otherwise and while `with_ctx` lends it out.
    static CTX: Cell<*mut RunCtx> = const { Cell::new(std::ptr::null_mut()) };
}

/// Publishes a context in CTX while it lives, and puts back the previous one when dropped,
/// also when a panic unwinds through `run`.
struct Published<'a> {
    prev: *mut RunCtx,
    _ctx: std::marker::PhantomData<&'a mut RunCtx>,
}

impl<'a> Published<'a> {
    fn new(ctx: &'a mut RunCtx) -> Published<'a> {
        let prev = CTX.with(|c| c.replace(ctx as *mut RunCtx));
        Published {
            prev,
            _ctx: std::marker::PhantomData,
        }
    }
}

impl Drop for Published<'_> {
    fn drop(&mut self) {
        CTX.with(|c| c.set(self.prev));
    }
}

/// Runs `f` with the running script's context; None when no script runs.
///
/// The context is taken out of CTX while `f` runs (and put back by a guard, on unwind too), so
/// a nested `with_ctx` finds none instead of a second `&mut` to the same context. `f` must not
/// call Lua functions that can raise: a longjmp out of it would skip the guard.
pub(crate) fn with_ctx<R>(f: impl FnOnce(&mut RunCtx) -> R) -> Option<R> {
    struct Lent(*mut RunCtx);
    impl Drop for Lent {
        fn drop(&mut self) {
            CTX.with(|c| c.set(self.0));
        }
    }
    let p = CTX.with(|c| c.replace(std::ptr::null_mut()));
    if p.is_null() {
        return None;
    }
    let _lent = Lent(p);
    // SAFETY: a non-null CTX was published by `run` from a `&mut RunCtx` that stays borrowed
    // (by its `Published` guard) until the protected call ends, so it is alive here; CTX is
    // null until `_lent` is dropped, so no other reference to it exists while `f` runs.
    Some(f(unsafe { &mut *p }))
}

/// What the hook does after looking at the running script.
enum HookAction {
    Continue,
    /// The script was just stopped: watch every line from now on, then raise.
    Stop,
    /// The script was stopped earlier and is still running (a pcall caught the error): raise.
    Raise,
}

unsafe extern "C-unwind" fn hook(l: *mut lua_State, _ar: *mut lua_Debug) {
    let action = with_ctx(|c| {
        if c.stop.is_some() {
            return HookAction::Raise;
        }
        let elapsed = crate::clock::monotonic_us().saturating_sub(c.start) / 1000;
        if elapsed < c.threshold_ms {
            return HookAction::Continue;
        }
        if !c.engine.is_null() {
            // Past busy-reply-threshold Redis serves other clients between the script's steps
            // (processEventsWhileBlocked), which refreshes the cached time that TIME answers
            // from where it stands still in a script (Redis 7.2, Valkey): from then on TIME
            // moves, as valkey-server 8.1 shows. Expiry keeps the script's start time.
            // SAFETY: `engine` is the engine running this script, alive and not borrowed
            // elsewhere while the hook runs (the script is the only thing executing).
            unsafe { (*c.engine).frozen_time_us = None };
        }
        let Some(h) = c.busy_hook.as_mut() else {
            return HookAction::Continue;
        };
        let engine = c.engine;
        let (users, profile, compat_report, renames) = c
            .busy_view
            .get_or_insert_with(|| {
                if engine.is_null() {
                    (
                        std::sync::Arc::new(crate::acl::Users::new()),
                        crate::compat::Profile::default(),
                        crate::compat::Report::default(),
                        std::sync::Arc::default(),
                    )
                } else {
                    // SAFETY: `engine` is the engine running this script, alive and not
                    // borrowed elsewhere while the hook runs (the script is the only thing
                    // executing); the users, profile and report are only read, and cloning
                    // them cannot raise a Lua error.
                    unsafe {
                        (
                            std::sync::Arc::new((*engine).acl.users.clone()),
                            (*engine).config.compat,
                            (*engine).compat_report.clone(),
                            std::sync::Arc::new((*engine).config.renames.clone()),
                        )
                    }
                }
            })
            .clone();
        let info = BusyScript {
            is_function: c.is_function,
            has_written: c.has_written,
            elapsed_ms: elapsed,
            function: c.function.clone(),
            users,
            profile,
            compat_report,
            renames,
        };
        match h(&info) {
            BusyVerdict::Continue => return HookAction::Continue,
            BusyVerdict::Kill => c.stop = Some(Stop::Kill),
            BusyVerdict::Shutdown => c.stop = Some(Stop::Shutdown),
        }
        HookAction::Stop
    });
    // SAFETY: Lua calls the hook with the running state. The context was given back above,
    // and nothing Rust owns is alive when lua_error jumps out of this frame.
    unsafe {
        match action {
            None | Some(HookAction::Continue) => return,
            // From now on the hook fires on every new line and every backward jump, so a pcall
            // cannot swallow the kill and loop on. Like Redis (LUA_MASKLINE, count 0), not on
            // every instruction: code on the same line as the pcall still runs to the end.
            Some(HookAction::Stop) => {
                lua_sethook(l, Some(hook), LUA_MASKLINE, 0);
            }
            Some(HookAction::Raise) => {}
        }
        push_error_table(l, errors::SCRIPT_KILLED.as_bytes());
        lua_error(l);
    }
}

/// The arguments a script or function is called with.
pub enum Args<'a> {
    /// EVAL: KEYS and ARGV become globals; the chunk takes no arguments.
    Globals {
        keys: &'a [Bytes],
        argv: &'a [Bytes],
    },
    /// FCALL: the function gets (keys, args) tables.
    Params {
        keys: &'a [Bytes],
        argv: &'a [Bytes],
    },
}

unsafe fn push_array(l: *mut lua_State, items: &[Bytes]) {
    // SAFETY: module contract (lua/ffi.rs); the table and one item are on the stack at a time.
    unsafe {
        lua_createtable(l, items.len().min(1 << 20) as c_int, 0);
        for (i, it) in items.iter().enumerate() {
            push_bytes(l, it);
            lua_rawseti_(l, -2, (i + 1) as c_int);
        }
    }
}

/// Refills the table on top of the stack with `items` when it is the previous call's KEYS or
/// ARGV and a fresh table of them could not be told from it (`redlab_is_plain_array`: no
/// metatable, exactly as many slots, nothing else in it); false, touching nothing, otherwise.
///
/// Making both tables anew was about a twelfth of an EVALSHA of a short script (the tables,
/// and the collector's work to free them; `cargo bench --bench eval` under callgrind). Redis
/// makes them anew, but no script can tell: the table of a call cannot outlive it, since a
/// script can store it nowhere that lasts (globals and library tables are read-only, there
/// is no `setfenv`, and an EVAL body is a chunk with no upvalues), so the next call's
/// refill is seen by no one but that call. FCALL's tables are not refilled: a library's
/// functions can keep them in upvalues.
unsafe fn refill_array(l: *mut lua_State, items: &[Bytes]) -> bool {
    // SAFETY: module contract (lua/ffi.rs); the check reads only, and the stores go to slots
    // 1..=n of the array part that the check found, so they allocate no table memory (the
    // pushed strings may, outside protected mode with the limit off, as in `push_array`).
    unsafe {
        let Ok(n) = c_int::try_from(items.len()) else {
            return false;
        };
        if n > 1 << 20 || redlab_is_plain_array(l, -1, n) == 0 {
            return false;
        }
        for (i, it) in items.iter().enumerate() {
            // A slot that already holds these bytes (the same key as last call, the usual
            // case) is left as it is: reading and comparing it costs less than hashing and
            // interning the string again. The slot's value is a string equal to `it`, which is
            // all a script can see (strings have no identity in Lua).
            lua_rawgeti_(l, -1, (i + 1) as c_int);
            let same = str_bytes(l, -1).is_some_and(|b| b == &it[..]);
            lua_pop(l, 1);
            if !same {
                push_bytes(l, it);
                lua_rawseti_(l, -2, (i + 1) as c_int);
            }
        }
        true
    }
}

/// `refill_array` in one call into Lua (`redlab_refill_field`) for the usual few items: the
/// table is `g[k]`, with the globals table at stack slot `g` and the name at `k`. False,
/// touching nothing, when that table cannot be refilled or there are more than
/// `REFILL_AT_ONCE` items (`refill_array` then decides). Reading the slots one by one through
/// the C API cost about 300 instructions per EVALSHA of a one-key, one-argument script.
unsafe fn refill_field(l: *mut lua_State, g: c_int, k: c_int, items: &[Bytes]) -> bool {
    const REFILL_AT_ONCE: usize = 8;
    if items.len() > REFILL_AT_ONCE {
        return false;
    }
    let mut ptrs = [std::ptr::null::<std::ffi::c_char>(); REFILL_AT_ONCE];
    let mut lens = [0usize; REFILL_AT_ONCE];
    for (i, it) in items.iter().enumerate() {
        ptrs[i] = it.as_ptr() as *const std::ffi::c_char;
        lens[i] = it.len();
    }
    // SAFETY: module contract (lua/ffi.rs); slots `g` and `k` are the globals table and a
    // string. The pointers are `items`' bytes, borrowed for the call, which copies what it
    // stores; new strings may raise only a real out-of-memory here (outside protected mode,
    // with the limit off), as `push_bytes` in `push_array` may.
    unsafe { redlab_refill_field(l, g, k, items.len() as c_int, ptrs.as_ptr(), lens.as_ptr()) != 0 }
}

/// Runs the function at registry reference `fref` and converts its result. `name` is what
/// error messages call the script (its SHA1, or the function's name): bytes, read as text
/// only when a message needs it (checking that a SHA1 is UTF-8 cost about 77 instructions on
/// every EVALSHA, under callgrind).
pub(crate) fn run(
    e: &mut Engine,
    h: Handles,
    fref: c_int,
    args: Args,
    name: &[u8],
    mut rc: RunCtx,
) -> Reply {
    let l = h.l;
    let frozen = e.time_frozen;
    let saved_now = e.now_ms;
    e.time_frozen = true;
    rc.busy_hook = e.busy_hook.take();
    rc.engine = e as *mut Engine;
    rc.arg_cache = h.arg_cache;
    // SAFETY: `h` comes from `Runtime::handles` of a runtime the engine owns, which no command
    // run from the script can drop (SCRIPT FLUSH and FUNCTION FLUSH are refused in scripts),
    // so `l` is live; this is the engine's thread. The pushes before lua_pcall run with the
    // memory limit off, outside protected mode, and borrow `args` only. The conversions after
    // it read the result with raw accesses and run no Lua code.
    let reply = unsafe {
        let base = lua_gettop(l);
        lua_checkstack(l, 8);
        let nargs = match args {
            Args::Globals { keys, argv } => {
                // The handler and the function, then the globals and the names KEYS and ARGV,
                // in one call (five lua_rawgeti cost about 120 instructions more).
                let refs = [
                    h.handler_ref,
                    fref,
                    h.globals_ref,
                    h.names_ref[0],
                    h.names_ref[1],
                ];
                redlab_push_refs(l, refs.len() as c_int, refs.as_ptr());
                let g = base + 3;
                for (k, items) in [(base + 4, keys), (base + 5, argv)] {
                    if refill_field(l, g, k, items) {
                        continue;
                    }
                    lua_pushvalue(l, k);
                    lua_rawget(l, g);
                    let refilled = refill_array(l, items);
                    lua_pop(l, 1);
                    if !refilled {
                        lua_pushvalue(l, k);
                        push_array(l, items);
                        lua_rawset(l, g);
                    }
                }
                lua_settop(l, base + 2);
                0
            }
            Args::Params { keys, argv } => {
                lua_rawgeti_(l, LUA_REGISTRYINDEX, h.handler_ref);
                lua_rawgeti_(l, LUA_REGISTRYINDEX, fref);
                push_array(l, keys);
                push_array(l, argv);
                2
            }
        };
        let status = {
            let _published = Published::new(&mut rc);
            enforce_limit(l, true);
            let status = lua_pcall(l, nargs, 1, base + 1);
            enforce_limit(l, false);
            status
        };
        if status == LUA_ERRMEM {
            lua_gc(l, LUA_GCCOLLECT, 0);
        }
        let reply = if status == 0 {
            super::convert::lua_to_reply(l, lua_gettop(l), rc.resp)
        } else {
            error_reply(l, status, &String::from_utf8_lossy(name), rc.stop)
        };
        lua_settop(l, base);
        match heap_after_run(l) {
            Heap::HitLimit => {
                // A memory bomb, failed or caught with pcall: its garbage is collected and
                // the memory it held goes back to the system now, not a second later.
                lua_gc(l, LUA_GCCOLLECT, 0);
                give_memory_back();
            }
            // Garbage a script leaves near the memory limit must not make the next script
            // fail to compile: collect it now.
            Heap::OverHalf => {
                lua_gc(l, LUA_GCCOLLECT, 0);
            }
            Heap::Fine => {}
        }
        // Restore the cheap periodic hook after a kill switched it to every line.
        lua_sethook(l, Some(hook), LUA_MASKCOUNT, HOOK_EVERY);
        reply
    };
    e.busy_hook = rc.busy_hook.take();
    if rc.stop == Some(Stop::Shutdown) {
        e.shutdown_requested = true;
    }
    e.time_frozen = frozen;
    if !frozen {
        e.frozen_time_us = None;
    }
    e.now_ms = saved_now;
    reply
}

/// Builds the client's error from what the script raised, as Redis 7.0 words it.
unsafe fn error_reply(l: *mut lua_State, status: c_int, name: &str, stop: Option<Stop>) -> Reply {
    // SAFETY: module contract (lua/ffi.rs); called by `run` after its protected call, with the
    // error value on top. Outside protected mode the limit is off, so the pushes here fail
    // only on a real out-of-memory, where Lua aborts instead of jumping.
    unsafe {
        // Bytes throughout: a message may quote a script's bytes, which Redis sends as
        // they are (`Reply::err_bytes`).
        let top = lua_gettop(l);
        if lua_type(l, top) != LUA_TTABLE {
            let msg: &[u8] = match (status, to_bytes(l, top)) {
                (LUA_ERRMEM, _) => errors::LUA_NOT_ENOUGH_MEMORY.as_bytes(),
                (_, Some(m)) => m,
                _ => errors::LUA_EXECUTION_FAILURE.as_bytes(),
            };
            return Reply::err_bytes(errors::script_run(name, msg));
        }
        let mut msg = match get_field(l, top, "err") {
            LUA_TSTRING => to_bytes(l, -1).unwrap_or_default().to_vec(),
            _ => errors::LUA_UNKNOWN_ERROR.as_bytes().to_vec(),
        };
        lua_pop(l, 1);
        if stop.is_some() {
            msg = errors::SCRIPT_KILLED.as_bytes().to_vec();
        }
        get_field(l, top, "source");
        let source = to_bytes(l, -1).map(<[u8]>::to_vec);
        lua_pop(l, 1);
        get_field(l, top, "line");
        let line = to_bytes(l, -1).map(<[u8]>::to_vec);
        lua_pop(l, 1);
        if let (Some(s), Some(n)) = (source, line) {
            errors::append_script_location(&mut msg, name, &s, &n);
        }
        Reply::err_bytes(msg)
    }
}
