//! math.random and math.randomseed as Redis 7.0 defines them.
//!
//! Redis swaps Lua's own pair (which would use the C library's process-wide rand) for one
//! built on its lrand48: one generator for the whole server, drawn from by every script and
//! never reseeded between them, so two EVALs of `return math.random()` answer differently,
//! and `math.randomseed(n)` restarts it as srand48(n) would. Here the generator is the
//! engine's (`EngineRng::lua48`, seeded from the engine seed), so a seeded engine repeats
//! the whole sequence. The argument rules follow Redis's exactly, down to its quirks: the
//! number is drawn before the arguments are checked (an erroring call still moves the
//! sequence on), and bounds are C ints, so 2^31 wraps to -2^31 and `u - l + 1` wraps too.

use super::ffi::*;
use super::runtime::with_ctx;
use crate::lua_cfn;
use crate::rng::{lrand48_next, lrand48_seed};

/// lrand48's largest value plus one; Redis divides by it (after a `%` that keeps r < 1).
const LRAND48_MAX: i64 = i32::MAX as i64;

/// Runs `f` on the engine's math.random state. Scripts are the only place Lua code runs with
/// the math library reachable (FUNCTION LOAD code cannot see `math`), so outside one there is
/// none and this returns None.
fn with_state<R>(f: impl FnOnce(&mut u64) -> R) -> Option<R> {
    with_ctx(|c| {
        // SAFETY: a RunCtx's engine pointer is set by `runtime::run` to the engine that runs
        // the script, alive and otherwise unused for the script's whole duration; the borrow
        // ends with this closure.
        (!c.engine.is_null()).then(|| f(unsafe { &mut (*c.engine).rng.lua48 }))
    })
    .flatten()
}

/// A C `int` argument the way Lua 5.1's luaL_checkint reads it: a lua_Integer (64 bits
/// here) truncated to 32 bits.
unsafe fn check_int(l: *mut lua_State, arg: i32) -> i32 {
    // SAFETY: module contract (lua/ffi.rs); luaL_checkinteger may raise, with nothing owned alive.
    unsafe { luaL_checkinteger(l, arg) as i64 as i32 }
}

unsafe fn math_random_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let Some(drawn) = with_state(lrand48_next) else {
            push_positioned(l, "math.random is only available while a script runs");
            return Err(());
        };
        let r = (drawn as i64 % LRAND48_MAX) as f64 / LRAND48_MAX as f64;
        match lua_gettop(l) {
            0 => lua_pushnumber(l, r),
            1 => {
                let u = check_int(l, 1);
                if u < 1 {
                    luaL_argerror(l, 1, c"interval is empty".as_ptr());
                }
                lua_pushnumber(l, (r * u as f64).floor() + 1.0);
            }
            2 => {
                let lo = check_int(l, 1);
                let up = check_int(l, 2);
                if lo > up {
                    luaL_argerror(l, 2, c"interval is empty".as_ptr());
                }
                let width = up.wrapping_sub(lo).wrapping_add(1);
                lua_pushnumber(l, (r * width as f64).floor() + lo as f64);
            }
            _ => {
                push_positioned(l, "wrong number of arguments");
                return Err(());
            }
        }
        Ok(1)
    }
}
lua_cfn!(math_random, math_random_body);

unsafe fn math_randomseed_body(l: *mut lua_State) -> CResult {
    // SAFETY: a C function body run by its `lua_cfn!` wrapper, so the module contract (lua/ffi.rs)
    // holds with the function's arguments on the stack; what can raise here runs with only borrowed
    // or Copy values alive.
    unsafe {
        let s = check_int(l, 1);
        match with_state(|st| *st = lrand48_seed(s)) {
            Some(()) => {}
            None => {
                push_positioned(l, "math.randomseed is only available while a script runs");
                return Err(());
            }
        }
        Ok(0)
    }
}
lua_cfn!(math_randomseed, math_randomseed_body);
