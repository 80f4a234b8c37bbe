//! Library calls that run out of Lua memory half-way: the error reaches the script, and what the
//! call was doing leaves nothing behind (no borrow, no lent-out context) that breaks later calls.
//!
//! Each script fills the Lua heap to within a few bytes of its limit, then runs the call in a
//! coroutine made beforehand, so that the first allocation the call makes fails. (That nothing
//! Rust owned leaks is checked by `server/tests/lua_oom_leaks.rs`, which counts the heap.)

use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

/// Lua that fills the heap (live data in `hog`) in ever smaller steps, each step's failure caught.
const FILL: &str = include_str!("oom_fill.lua");

/// Runs `setup`, then `call` in a coroutine on a full heap, frees the heap and runs `after`;
/// returns `{resume's error, after's result}`.
fn run(setup: &str, call: &str, after: &str) -> Reply {
    let mut cfg = Config::default();
    cfg.lua_memory_limit = 4 << 20;
    let mut e = Engine::new(cfg);
    e.execute(
        1,
        &["RPUSH", "list", "a", "b", "c", "d", "e", "f", "g", "h"],
    );
    let script = format!(
        "{setup}\nlocal co = coroutine.create(function() {call} end)\n{FILL}\n\
         local ok, err = coroutine.resume(co)\nhog = nil\ncollectgarbage()\n\
         return {{tostring(ok) .. ': ' .. tostring(err), {after}}}"
    );
    e.execute(1, &["EVAL", &script, "0"])
}

fn check(reply: Reply, after: Reply) {
    let Reply::Array(items) = reply else {
        panic!("expected an array, got {reply:?}");
    };
    match &items[0] {
        Reply::Bulk(b) => {
            let s = String::from_utf8_lossy(b);
            assert!(
                s.contains("not enough memory"),
                "the call did not run out: {s}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(items[1], after);
}

/// A nested table deep enough that encoding it grows the coroutine's stack.
const DEEP: &str = "local deep = {} local cur = deep for i = 1, 60 do cur[1] = {} cur = cur[1] end";

#[test]
fn cjson_encode_out_of_memory_leaves_cjson_usable() {
    // A settings borrow left behind by a jump would make the setter panic.
    let r = run(
        DEEP,
        "return cjson.encode(deep)",
        "cjson.encode_max_depth(1000) .. cjson.encode({1, {2}})",
    );
    check(r, Reply::bulk(b"1000[1,[2]]"));
}

#[test]
fn cjson_decode_out_of_memory_leaves_cjson_usable() {
    let r = run(
        "local text = string.rep('[', 60) .. string.rep(']', 60)",
        "return cjson.decode(text)",
        "cjson.decode('{\"a\":[1,\"b\"]}').a[2] .. cjson.decode_max_depth(1000)",
    );
    check(r, Reply::bulk(b"b1000"));
}

#[test]
fn cmsgpack_pack_out_of_memory_leaves_cmsgpack_usable() {
    let r = run(
        "local deep = {} local cur = deep for i = 1, 15 do cur[1] = {1, 2} cur = cur[1] end",
        "return cmsgpack.pack(deep, deep, deep, deep)",
        "#cmsgpack.pack({1, 2, 3})",
    );
    check(r, Reply::Int(4));
}

#[test]
fn redis_call_out_of_memory_gives_the_context_back() {
    // The reply's conversion runs out; redis.call must still find the script's context after.
    let r = run(
        "",
        "return redis.call('LRANGE', 'list', 0, -1)",
        "redis.call('PING').ok",
    );
    check(r, Reply::bulk(b"PONG"));
}
