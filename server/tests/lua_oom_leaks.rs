//! Lua raises errors with longjmp, which skips Rust frames without running their destructors:
//! a library function that owned a Rust buffer when Lua raised "not enough memory" would leak
//! it, once per call. This binary counts the Rust heap with a counting global allocator (Lua's
//! own heap is mimalloc, outside it) while scripts run out of Lua memory inside library calls,
//! many times over. The live bytes must not grow with the number of runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use redlab_server::{Config, Engine, Reply};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged,
// and only adds bookkeeping on an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc`/`realloc` above, that is from the system allocator.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`; the system allocator keeps the block on failure.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Lua that fills the heap to within a few bytes of the limit (live data in `hog`); the unit
/// tests in server/src/lua/oom_tests.rs use the same file.
const FILL: &str = include_str!("../src/lua/oom_fill.lua");

/// Runs `call` (a function value prepared by `setup`) on a full heap `runs` times; returns the
/// growth of the Rust heap between the tenth run and the last.
fn growth(setup: &str, call: &str, runs: usize) -> isize {
    let mut config = Config::default();
    config.lua_memory_limit = 4 << 20;
    let mut e = Engine::new(config);
    let script = format!(
        "{setup}\nlocal f = {call}\n{FILL}\nlocal ok, err = pcall(f)\nhog = nil\ncollectgarbage()\n\
         return tostring(ok) .. ': ' .. tostring(err)"
    );
    let mut base = 0;
    for i in 0..runs {
        if i == 10 {
            base = LIVE.load(Ordering::Relaxed);
        }
        let r = e.execute(1, &["EVAL", &script, "0"]);
        match &r {
            Reply::Bulk(b) if b.starts_with(b"false: not enough memory") => {}
            other => panic!("run {i}: the call did not run out of memory: {other:?}"),
        }
    }
    LIVE.load(Ordering::Relaxed) - base
}

/// Far less than what the runs would leak: each one makes a 4 KiB string in Rust.
const BOUND: isize = 256 * 1024;
const RUNS: usize = 200;

#[test]
fn library_calls_that_run_out_of_lua_memory_leak_nothing() {
    let long = "local long = string.rep('y', 4096)";
    let cases = [
        // The decoded string (a new one: Lua interns strings) is pushed at the end: it must not
        // sit in a Rust Vec meanwhile.
        (
            format!("{long} local text = '\"' .. long .. 'z\"'"),
            "function() return cjson.decode(text) end",
        ),
        // The message names the global: it must not sit in a Rust String while Lua adds the
        // position.
        (
            long.to_string(),
            "function() return _G[long] end",
        ),
        // redis.log turns numbers into strings (one of them fails): the line built so far must
        // not be owned then.
        (
            long.to_string(),
            "function() return redis.log(redis.LOG_DEBUG, long, 1.25, 2.25, 3.25, 4.25, 5.25, 6.25) end",
        ),
    ];
    for (setup, call) in cases {
        let grew = growth(&setup, call, RUNS);
        assert!(
            grew < BOUND,
            "{call}: the Rust heap grew by {grew} bytes over {RUNS} runs"
        );
    }
}
