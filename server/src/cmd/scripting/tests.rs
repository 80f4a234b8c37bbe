//! What the differential suite cannot show: killing a busy script, limits, frozen time,
//! strict keys, maxmemory.

use std::cell::RefCell;
use std::rc::Rc;

use crate::busy::{BusyScript, BusyVerdict};
use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn eval(e: &mut Engine, script: &str, args: &[&str]) -> Reply {
    let mut v = vec!["EVAL", script];
    v.extend_from_slice(args);
    e.execute(1, &v)
}

fn err_text(r: &Reply) -> &str {
    match r {
        Reply::Error(s) => s,
        other => panic!("expected an error, got {:?}", other),
    }
}

/// An engine whose busy hook answers `verdict` and records what it was shown.
fn busy_engine(verdict: BusyVerdict) -> (Engine, Rc<RefCell<Vec<BusyScript>>>) {
    let mut e = Engine::new(Config::default());
    e.config_mut().busy_reply_threshold_ms = 10;
    let seen = Rc::new(RefCell::new(Vec::new()));
    let log = seen.clone();
    e.set_busy_hook(Box::new(move |s: &BusyScript| {
        log.borrow_mut().push(s.clone());
        verdict
    }));
    (e, seen)
}

#[test]
fn eval_returns_values() {
    let mut e = Engine::new(Config::default());
    assert_eq!(eval(&mut e, "return 1", &["0"]), Reply::Int(1));
    assert_eq!(
        eval(&mut e, "return {1,'a',{ok='x'}}", &["0"]),
        Reply::Array(vec![Reply::Int(1), Reply::bulk("a"), Reply::status("x")])
    );
    assert_eq!(
        eval(
            &mut e,
            "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])",
            &["1", "k", "v"]
        ),
        Reply::bulk("v")
    );
}

#[test]
fn killed_script_gets_redis_error_and_server_recovers() {
    let (mut e, seen) = busy_engine(BusyVerdict::Kill);
    let r = eval(&mut e, "local i = 0 while true do i = i + 1 end", &["0"]);
    let text = err_text(&r);
    assert!(
        text.starts_with("ERR Script killed by user with SCRIPT KILL... script: "),
        "{text}"
    );
    assert!(text.ends_with(", on @user_script:1."), "{text}");
    let info = seen.borrow()[0].clone();
    assert!(!info.is_function && !info.has_written && info.elapsed_ms >= 10);
    // The hook goes back to the engine and the server keeps working.
    assert!(e.busy_hook.is_some());
    assert_eq!(e.execute(2, &["PING"]), Reply::status("PONG"));
    assert_eq!(eval(&mut e, "return 2", &["0"]), Reply::Int(2));
}

#[test]
fn pcall_cannot_swallow_a_kill() {
    let (mut e, _) = busy_engine(BusyVerdict::Kill);
    let r = eval(
        &mut e,
        "while true do pcall(function() while true do end end) end",
        &["0"],
    );
    assert!(err_text(&r).starts_with("ERR Script killed by user with SCRIPT KILL..."));
}

#[test]
fn busy_hook_sees_writes_and_functions() {
    let (mut e, seen) = busy_engine(BusyVerdict::Kill);
    let r = eval(
        &mut e,
        "redis.call('set','w','1') while true do end",
        &["0"],
    );
    assert!(r.is_error());
    assert!(seen.borrow()[0].has_written);
    let lib = "#!lua name=busy\nredis.register_function('spin', function() while true do end end)";
    assert_eq!(
        e.execute(1, &["FUNCTION", "LOAD", lib]),
        Reply::bulk("busy")
    );
    let r = e.execute(1, &["FCALL", "spin", "0"]);
    assert_eq!(
        err_text(&r),
        "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2."
    );
    assert!(seen.borrow().last().is_some_and(|s| s.is_function));
}

#[test]
fn shutdown_verdict_stops_the_script_and_requests_shutdown() {
    let (mut e, _) = busy_engine(BusyVerdict::Shutdown);
    let r = eval(&mut e, "while true do end", &["0"]);
    assert!(r.is_error());
    assert!(e.shutdown_requested());
}

#[test]
fn continue_verdict_lets_the_script_finish() {
    let (mut e, seen) = busy_engine(BusyVerdict::Continue);
    let r = eval(
        &mut e,
        "local t = redis.call('time') local n = 0 for i = 1, 3e7 do n = n + 1 end return n",
        &["0"],
    );
    // TIME may not exist in this build; the loop result is what matters when it does.
    if !r.is_error() {
        assert_eq!(r, Reply::Int(30_000_000));
    }
    let r = eval(
        &mut e,
        "local n = 0 for i = 1, 3e7 do n = n + 1 end return n",
        &["0"],
    );
    assert_eq!(r, Reply::Int(30_000_000));
    let _ = seen;
}

#[test]
fn memory_bomb_is_a_script_error_not_a_crash() {
    let mut cfg = Config::default();
    cfg.lua_memory_limit = 8 << 20;
    let mut e = Engine::new(cfg);
    let r = eval(
        &mut e,
        "local t = {} for i = 1, 1e8 do t[i] = string.rep('x', 1000) .. i end return #t",
        &["0"],
    );
    assert!(err_text(&r).contains("not enough memory"), "{:?}", r);
    let r = eval(
        &mut e,
        "local s = string.rep('x', 1024*1024*1024) return #s",
        &["0"],
    );
    assert!(r.is_error());
    assert_eq!(
        eval(&mut e, "return 'still alive'", &["0"]),
        Reply::bulk("still alive")
    );
}

#[test]
fn deep_recursion_is_a_stack_overflow_error() {
    let mut e = Engine::new(Config::default());
    let r = eval(
        &mut e,
        "local function f() return 1 + f() end return f()",
        &["0"],
    );
    assert!(
        err_text(&r).starts_with("ERR user_script:1: stack overflow script: "),
        "{:?}",
        r
    );
    let r = eval(&mut e, "local t = {} t[1] = t return t", &["0"]);
    assert!(format!("{:?}", r).contains("reached lua stack limit"));
    assert_eq!(eval(&mut e, "return 1", &["0"]), Reply::Int(1));
}

#[test]
fn time_stands_still_while_a_script_runs() {
    let clock = Clock::manual(1_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    e.execute(1, &["SET", "k", "v"]);
    // A key expiring "during" the script stays visible: now is the script's start.
    let now = e.now_ms;
    e.db(0).set_expire(b"k", Some(now + 5));
    clock.advance(std::time::Duration::from_millis(1));
    assert!(!e.time_frozen);
    let r = eval(&mut e, "return redis.call('get','k')", &["0"]);
    assert_eq!(r, Reply::bulk("v"));
    assert!(!e.time_frozen);
}

#[test]
fn maxmemory_refuses_writes_without_allow_oom() {
    let mut e = Engine::new(Config::default());
    e.config_mut().maxmemory = 1;
    let r = eval(&mut e, "return redis.call('set','k','v')", &["0"]);
    assert!(err_text(&r)
        .starts_with("OOM command not allowed when used memory > 'maxmemory'. script: "));
    assert_eq!(
        eval(&mut e, "return redis.pcall('set','k','v')", &["0"]),
        Reply::err(crate::errors::OOM)
    );
    assert_eq!(
        eval(&mut e, "#!lua\nreturn 1", &["0"]),
        Reply::err(crate::errors::OOM)
    );
    assert_eq!(
        eval(&mut e, "#!lua flags=no-writes\nreturn 1", &["0"]),
        Reply::Int(1)
    );
    assert_eq!(
        eval(
            &mut e,
            "#!lua flags=allow-oom\nreturn redis.call('set','k','v')",
            &["0"]
        ),
        Reply::ok()
    );
}

#[test]
fn strict_keys_rejects_undeclared_and_cross_slot_keys() {
    let mut e = Engine::new(Config::default());
    e.config_mut().strict_keys = true;
    assert_eq!(
        eval(
            &mut e,
            "return redis.call('set', KEYS[1], 'v')",
            &["1", "declared"]
        ),
        Reply::ok()
    );
    let r = eval(
        &mut e,
        "return redis.call('get', 'sneaky')",
        &["1", "declared"],
    );
    assert!(err_text(&r).contains("'sneaky'"), "{:?}", r);
    let r = eval(&mut e, "return 1", &["2", "a", "b"]);
    assert!(
        err_text(&r).starts_with("CROSSSLOT") && err_text(&r).contains("'b'"),
        "{:?}",
        r
    );
    assert_eq!(
        eval(&mut e, "return 1", &["2", "{user1}:a", "{user1}:b"]),
        Reply::Int(1)
    );
    assert_eq!(
        eval(
            &mut e,
            "#!lua flags=allow-cross-slot-keys\nreturn 1",
            &["2", "a", "b"]
        ),
        Reply::Int(1)
    );
    // Off by default, as in Redis.
    e.config_mut().strict_keys = false;
    assert_eq!(
        eval(&mut e, "return redis.call('get', 'sneaky')", &["0"]),
        Reply::Nil
    );
}

#[test]
fn key_slots_match_redis_cluster() {
    use super::key_slot;
    assert_eq!(key_slot(b"foo"), 12182);
    assert_eq!(
        key_slot(b"{user1000}.following"),
        key_slot(b"{user1000}.followers")
    );
    assert_eq!(key_slot(b"123456789"), 12739);
}

#[test]
fn script_cache_and_lazy_runtime() {
    let mut e = Engine::new(Config::default());
    assert!(
        e.scripting.eval_rt.is_none(),
        "no Lua state before the first script"
    );
    let sha = match e.execute(1, &["SCRIPT", "LOAD", "return ARGV[1]"]) {
        Reply::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        other => panic!("{:?}", other),
    };
    assert_eq!(
        e.execute(1, &["EVALSHA", &sha.to_uppercase(), "0", "x"]),
        Reply::bulk("x")
    );
    e.execute(1, &["SCRIPT", "FLUSH"]);
    assert!(e.execute(1, &["EVALSHA", &sha, "0", "x"]).is_error());
}
