//! DEBUG POPULATE <count> [<prefix>] [<size>]: the bulk string keys Redis's tests create
//! in one command, as redis-server 7.0.15 makes them.
//!
//! Keys `<prefix>:<n>` (prefix `key`) for n in 0..count, each holding `value:<n>`, cut or
//! padded with zero bytes to `size` when a size is given. A key that exists is left alone.
//! Like Redis's dbAdd without the command's own event: `new` keyspace events, WATCH and
//! tracking see the keys, the dirty counter does not (Redis does not count them either).

use crate::cmd::table::CmdResult;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// Above this many keys the key table alone would need more memory than a machine has;
/// Redis answers this error when it cannot allocate the table (dictTryExpand).
const MAX_KEYS: i64 = 1 << 32;

/// Redis's snprintf into a 128-byte buffer: a longer key name is cut to 127 bytes.
const NAME_MAX: usize = 127;

/// getPositiveLongFromObjectOrReply: an integer >= 0, anything else "must be positive".
fn positive(arg: &[u8]) -> Result<i64, Reply> {
    match crate::cmd::args::int(arg) {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(Reply::err(errors::MUST_BE_POSITIVE)),
    }
}

pub(crate) fn populate(e: &mut Engine, call: &mut Call) -> CmdResult {
    let count = positive(call.arg(2))?;
    if count > MAX_KEYS {
        return Err(Reply::err("ERR OOM in dictTryExpand"));
    }
    let size = match call.args.get(4) {
        Some(a) => Some(positive(a)? as usize),
        None => None,
    };
    let prefix = call.args.get(3).map_or(&b"key"[..], |p| &p[..]).to_vec();
    let db = call.db;
    let mut name = Vec::with_capacity(prefix.len() + 21);
    for n in 0..count {
        name.clear();
        name.extend_from_slice(&prefix);
        name.push(b':');
        name.extend_from_slice(n.to_string().as_bytes());
        name.truncate(NAME_MAX);
        if e.db(db).contains(&name) {
            continue;
        }
        let mut value = format!("value:{n}").into_bytes();
        // A size of 0 is no size (Redis's valsize == 0).
        if let Some(size) = size.filter(|&s| s > 0) {
            value.resize(size, 0);
        }
        e.db(db).set(&name, Value::Str(value[..].into()));
        e.touch_watched(db, &name);
    }
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use crate::{Config, Engine, Reply};

    /// redis-server 7.0.15's answers, asked of the real server.
    #[test]
    fn populate_as_redis() {
        let mut e = Engine::new(Config::default());
        let mut run = |args: &[&str]| e.execute(1, args);
        assert_eq!(run(&["SET", "key:1", "x"]), Reply::ok());
        assert_eq!(run(&["DEBUG", "POPULATE", "3"]), Reply::ok());
        assert_eq!(run(&["DBSIZE"]), Reply::Int(3));
        assert_eq!(run(&["GET", "key:0"]), Reply::bulk("value:0"));
        assert_eq!(run(&["GET", "key:1"]), Reply::bulk("x"));
        assert_eq!(run(&["DEBUG", "POPULATE", "2", "p", "10"]), Reply::ok());
        assert_eq!(run(&["GET", "p:1"]), Reply::bulk(&b"value:1\0\0\0"[..]));
        assert_eq!(run(&["DEBUG", "POPULATE", "1", "q", "3"]), Reply::ok());
        assert_eq!(run(&["GET", "q:0"]), Reply::bulk("val"));
        assert_eq!(run(&["DEBUG", "POPULATE", "1", "z", "0"]), Reply::ok());
        assert_eq!(run(&["GET", "z:0"]), Reply::bulk("value:0"));
        assert_eq!(run(&["DEBUG", "POPULATE", "0"]), Reply::ok());
        let positive = Reply::err("ERR value is out of range, must be positive");
        for bad in [
            &["-1"][..],
            &["x"],
            &["1.5"],
            &["1", "b", "-5"],
            &["1", "b", "x"],
        ] {
            let mut line = vec!["DEBUG", "POPULATE"];
            line.extend_from_slice(bad);
            assert_eq!(run(&line), positive, "{bad:?}");
        }
        let wrong = Reply::err(
            "ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.",
        );
        assert_eq!(run(&["DEBUG", "POPULATE"]), wrong);
        assert_eq!(run(&["DEBUG", "POPULATE", "1", "2", "3", "4"]), wrong);
        assert_eq!(run(&["OBJECT", "ENCODING", "p:0"]), Reply::bulk("embstr"));
        assert_eq!(run(&["DEBUG", "POPULATE", "1", "c", "100"]), Reply::ok());
        assert_eq!(run(&["OBJECT", "ENCODING", "c:0"]), Reply::bulk("raw"));
    }
}
