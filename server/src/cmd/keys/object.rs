//! OBJECT ENCODING / FREQ / IDLETIME / REFCOUNT / HELP. None of them touches the key.

use crate::cmd::table::CmdResult;
use crate::db::encoding;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

pub fn encoding(e: &mut Engine, call: &mut Call) -> CmdResult {
    let limits = e.encoding_limits();
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

/// The seconds since the key's last access by the LRU clock; refused under an LFU policy,
/// where the field holds a counter instead.
pub fn idletime(e: &mut Engine, call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let lfu = e.config.lfu();
    let Some(en) = e.db(call.db).peek(call.arg(2)) else {
        return Ok(Reply::Nil);
    };
    if lfu.is_some() {
        return Err(Reply::err(errors::LFU_SELECTED));
    }
    Ok(Reply::Int((en.access.idle_ms(now) / 1000) as i64))
}

/// The key's LFU counter, decayed by the minutes since it was last decremented (the stored
/// field only changes on an access); refused unless an LFU policy is selected.
pub fn freq(e: &mut Engine, call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let lfu = e.config.lfu();
    let Some(en) = e.db(call.db).peek(call.arg(2)) else {
        return Ok(Reply::Nil);
    };
    let Some(p) = lfu else {
        return Err(Reply::err(errors::LFU_NOT_SELECTED));
    };
    Ok(Reply::Int(i64::from(en.access.decayed(p, now))))
}

pub fn help(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
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
