//! OBJECT ENCODING / FREQ / IDLETIME / REFCOUNT / HELP. None of them touches the key.

use crate::cmd::table::CmdResult;
use crate::db::encoding::{self, Limits};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// The LFU counter of a new object (LFU_INIT_VAL).
const LFU_INIT_VAL: i64 = 5;

fn lfu_policy(e: &Engine) -> bool {
    e.config.maxmemory_policy.contains("lfu")
}

pub fn encoding(e: &mut Engine, call: &mut Call) -> CmdResult {
    let limits = Limits::from_config(&e.config);
    Ok(match e.db(call.db).peek(call.arg(2)) {
        Some(en) => Reply::bulk(encoding::of_entry(en, &limits).name()),
        None => Reply::Nil,
    })
}

pub fn refcount(e: &mut Engine, call: &mut Call) -> CmdResult {
    let config = e.config.clone();
    let Some(en) = e.db(call.db).peek(call.arg(2)) else {
        return Ok(Reply::Nil);
    };
    let n = encoding::refcount(&en.value, &config);
    Ok(Reply::Int(n))
}

pub fn idletime(e: &mut Engine, call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let Some(en) = e.db(call.db).peek(call.arg(2)) else {
        return Ok(Reply::Nil);
    };
    let last = en.last_access;
    if lfu_policy(e) {
        return Err(Reply::err(errors::LFU_SELECTED));
    }
    Ok(Reply::Int((now - last).max(0) / 1000))
}

/// redlab does not count accesses: the counter is the initial one, decayed by one per idle
/// minute (lfu-decay-time 1), which is what Redis reports for a key not read since it was
/// written.
pub fn freq(e: &mut Engine, call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let Some(en) = e.db(call.db).peek(call.arg(2)) else {
        return Ok(Reply::Nil);
    };
    let last = en.last_access;
    if !lfu_policy(e) {
        return Err(Reply::err(errors::LFU_NOT_SELECTED));
    }
    let idle_minutes = (now - last).max(0) / 60_000;
    Ok(Reply::Int((LFU_INIT_VAL - idle_minutes).max(0)))
}

pub fn help(_: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        "OBJECT",
        &[
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
        ],
    ))
}
