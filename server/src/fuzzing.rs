//! Fuzz bodies, shared by the cargo-fuzz targets in `fuzz/` and by the regular test suite
//! (which runs each one over the committed corpus in `fuzz/corpus/<target>/`).
//!
//! Each function takes arbitrary bytes and panics when it finds a bug: a crash in the
//! code under test, or a broken invariant. They live in the library, not in `fuzz/`, so a
//! crash found once becomes a corpus file that every `cargo test` replays.

pub mod argspec;
pub mod differential;
pub mod generate;
pub mod resp;
pub mod restore;

use bytes::{Bytes, BytesMut};

use crate::busy::{BusyScript, BusyVerdict};
use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::net::parser::{Parsed, RequestParser, INLINE_MAX};
use crate::reply::Reply;

/// The request parser: parsing the input in one go and in chunks (of a size the input
/// chooses) must give the same requests and the same error, since a peer decides where
/// reads split.
///
/// Input: byte 0 = flags (bit 0: authenticated, bit 1: small proto-max-bulk-len), byte 1 =
/// chunk size, the rest = the bytes from the wire.
pub fn request_parser(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let authed = data[0] & 1 == 0;
    let max_bulk = if data[0] & 2 == 0 {
        512 * 1024 * 1024
    } else {
        16
    };
    let chunk = (data[1] as usize).max(1);
    let wire = &data[2..];
    let whole = parse_chunked(wire, wire.len().max(1), max_bulk, authed);
    // A line longer than INLINE_MAX is refused or accepted depending on how much of it was
    // buffered when its end arrived (in Redis too); below that the split must not matter.
    if wire.len() < INLINE_MAX {
        let split = parse_chunked(wire, chunk, max_bulk, authed);
        assert_eq!(
            whole, split,
            "parsing depends on where reads split (chunk {chunk})"
        );
    }
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Command(Vec<Bytes>),
    Empty,
    Error(String),
}

/// Parses as the connection does: arguments drawn from a pool and handed back to it after
/// each command (so a reused buffer that kept old bytes would show as a difference).
fn parse_chunked(wire: &[u8], chunk: usize, max_bulk: u64, authed: bool) -> Vec<Outcome> {
    let mut parser = RequestParser::new();
    let mut pool = crate::arg_buffer::ArgBuffer::default();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in wire.chunks(chunk) {
        buf.extend_from_slice(piece);
        loop {
            let before = buf.len();
            match parser.next_pooled(&mut buf, max_bulk, authed, &mut pool) {
                Ok(Parsed::Command(args)) => {
                    assert!(!args.is_empty(), "a command with no arguments");
                    assert!(buf.len() < before, "a command consumed no bytes");
                    out.push(Outcome::Command(
                        args.iter().map(|a| Bytes::copy_from_slice(a)).collect(),
                    ));
                    pool.recycle(args);
                }
                Ok(Parsed::Empty) => {
                    assert!(buf.len() < before, "an empty request consumed no bytes");
                    out.push(Outcome::Empty);
                }
                Ok(Parsed::Incomplete) => break,
                Err(e) => {
                    assert!(
                        e.0.starts_with("ERR Protocol error: "),
                        "not a protocol error: {}",
                        e.0
                    );
                    out.push(Outcome::Error(e.0));
                    return out;
                }
            }
        }
    }
    out
}

/// A little cursor over the fuzzer's bytes; past the end it reads zeros.
struct Bytes8<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes8<'a> {
    fn new(data: &'a [u8]) -> Self {
        Bytes8 { data, pos: 0 }
    }
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        &items[self.byte() as usize % items.len()]
    }
}

const KEYS: &[&str] = &["k0", "k1", "k2", "k3"];

/// Arguments the command stream draws from: keys, option words, edge numbers. Offsets and
/// counts stay below what would make a correct server allocate hundreds of megabytes
/// (Redis itself does that for SETRANGE 536870911), except values just past the limits,
/// which must be refused.
///
/// Alike in part to `generate.rs`'s tables, and kept apart on purpose: the committed corpus
/// of this target picks from this list by index, so the list is frozen with the corpus,
/// while the generator's tables grow with the argument specs.
const WORDS: &[&str] = &[
    "k0",
    "k1",
    "k2",
    "k3",
    "k0",
    "k1",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "5",
    "10",
    "-10",
    "100",
    "1.5",
    "-0",
    "+inf",
    "-inf",
    "inf",
    "nan",
    "1e400",
    "(1",
    "[a",
    "(a",
    "-",
    "+",
    "a",
    "b",
    "c",
    "",
    "*",
    "x*",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "536870912",
    "4294967296",
    "-4294967296",
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "KEEPTTL",
    "GET",
    "WITHSCORES",
    "LIMIT",
    "BYSCORE",
    "BYLEX",
    "REV",
    "COUNT",
    "MATCH",
    "TYPE",
    "STORE",
    "BY",
    "ASC",
    "DESC",
    "ALPHA",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "WEIGHTS",
    "REPLACE",
    "ABSTTL",
    "IDLETIME",
    "FREQ",
    "DB",
    "RANK",
    "MAXLEN",
    "LEN",
    "IDX",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "OVERFLOW",
    "WRAP",
    "SAT",
    "FAIL",
    "u8",
    "i16",
    "#1",
    "BIT",
    "BYTE",
    "PERSIST",
    "WITHVALUES",
    "NOVALUES",
    "SET",
    "INCRBY",
    "GET",
    "hello",
    "\x00\x7f",
];

/// Commands the stream never runs: they stop or pause the engine, sleep for real, block
/// the connection, or run scripts (the script target covers those). REDLAB.CLOCK is out
/// because the stream drives time itself: a RESUME would switch the engine to the real clock,
/// and a key with a deadline could then expire between two commands of one keyspace check
/// (an ASan run once saw TYPE say string and TTL say -2 that way).
fn excluded(name: &str, flags: u32) -> bool {
    use crate::cmd::table::flags as f;
    flags & f::BLOCKING != 0
        || matches!(
            name,
            "shutdown"
                | "debug"
                | "monitor"
                | "client"
                | "subscribe"
                | "psubscribe"
                | "ssubscribe"
                | "eval"
                | "evalsha"
                | "eval_ro"
                | "evalsha_ro"
                | "fcall"
                | "fcall_ro"
                | "function"
                | "script"
                | "wait"
                | "failover"
                | "replicaof"
                | "slaveof"
                | "sync"
                | "psync"
                | "quit"
                | "reset"
                | "hello"
                | "auth"
                | "config"
                | "select"
                | "save"
                | "bgsave"
                | "bgrewriteaof"
                | "redlab.fault"
                | "redlab.sleep"
                | "redlab.clock"
        )
}

fn type_of(e: &mut Engine, c: u64, key: &str) -> String {
    match e.execute(c, &["TYPE", key]) {
        Reply::Status(s) => s,
        other => panic!("TYPE {key} answered {other:?}"),
    }
}

fn int(r: &Reply, what: &str) -> i64 {
    match r {
        Reply::Int(n) => *n,
        other => panic!("{what} answered {other:?}"),
    }
}

fn count(r: &Reply, what: &str) -> usize {
    match r {
        Reply::Array(a) | Reply::Set(a) => a.len(),
        Reply::Map(m) => m.len() * 2,
        other => panic!("{what} answered {other:?}"),
    }
}

/// The keyspace as the checker connection sees it; asserts what must hold at any moment.
fn check_keyspace(e: &mut Engine, checker: u64) -> Vec<String> {
    let keys = count(&e.execute(checker, &["KEYS", "*"]), "KEYS *");
    let dbsize = int(&e.execute(checker, &["DBSIZE"]), "DBSIZE");
    assert_eq!(dbsize as usize, keys, "DBSIZE disagrees with KEYS *");
    let mut types = Vec::new();
    let mut present = 0;
    for k in KEYS {
        let t = type_of(e, checker, k);
        let exists = int(&e.execute(checker, &["EXISTS", k]), "EXISTS");
        let ttl = int(&e.execute(checker, &["TTL", k]), "TTL");
        let pttl = int(&e.execute(checker, &["PTTL", k]), "PTTL");
        assert_eq!(
            exists == 1,
            t != "none",
            "EXISTS {k} = {exists} but TYPE is {t}"
        );
        assert_eq!(ttl == -2, t == "none", "TTL {k} = {ttl} but TYPE is {t}");
        assert!(ttl >= -2 && pttl >= -2, "TTL {k} = {ttl}, PTTL {pttl}");
        assert_eq!(ttl < 0, pttl < 0, "TTL {k} = {ttl} but PTTL {pttl}");
        if ttl >= 0 {
            assert!(
                (pttl + 999) / 1000 == ttl || pttl / 1000 == ttl,
                "TTL {k} = {ttl} but PTTL {pttl}"
            );
        }
        let (len, all) = match t.as_str() {
            "list" => (
                e.execute(checker, &["LLEN", k]),
                e.execute(checker, &["LRANGE", k, "0", "-1"]),
            ),
            "set" => (
                e.execute(checker, &["SCARD", k]),
                e.execute(checker, &["SMEMBERS", k]),
            ),
            "hash" => (
                e.execute(checker, &["HLEN", k]),
                e.execute(checker, &["HKEYS", k]),
            ),
            "zset" => (
                e.execute(checker, &["ZCARD", k]),
                e.execute(checker, &["ZRANGE", k, "0", "-1"]),
            ),
            _ => (Reply::Int(1), Reply::Array(vec![Reply::Nil])),
        };
        let len = int(&len, "a length");
        assert!(
            len > 0,
            "{k} is an empty {t}: Redis deletes emptied collections"
        );
        assert_eq!(
            len as usize,
            count(&all, "a listing"),
            "{k}: the {t}'s length disagrees with its elements"
        );
        if t != "none" {
            present += 1;
        }
        types.push(t);
    }
    assert!(present <= keys, "KEYS * misses some of the keys that exist");
    types
}

/// The engine's command stream: random commands (from the whole command table, with
/// arguments over a small key space) on two connections, with clock jumps; after each
/// step the keyspace is checked from a third connection (see `check_keyspace`), and a
/// command that failed must not have changed any key's type.
pub fn command_stream(data: &[u8]) {
    let clock = Clock::manual(1_700_000_000_000);
    let mut e = Engine::with_clock(Config::default(), clock.clone());
    let commands: Vec<&'static crate::cmd::table::Command> = crate::cmd::table::all()
        .filter(|c| !excluded(c.name, c.flags))
        .collect();
    let checker = 1000;
    let mut types = check_keyspace(&mut e, checker);
    let mut input = Bytes8::new(data);
    let mut steps = 0;
    while !input.done() && steps < 200 {
        steps += 1;
        let op = input.byte();
        let conn = 1 + (op & 1) as u64;
        let args: Vec<Vec<u8>> = match op >> 1 {
            0..=3 => {
                clock.advance(std::time::Duration::from_millis(input.byte() as u64 * 50));
                e.tick();
                types = check_keyspace(&mut e, checker);
                continue;
            }
            4..=9 => typed_write(&mut input),
            _ => {
                let cmd = *input.pick(&commands);
                let mut args = vec![cmd.name.as_bytes().to_vec()];
                if let Some(sub) =
                    (!cmd.subcommands.is_empty()).then(|| input.pick(cmd.subcommands))
                {
                    let word = sub.name.rsplit('|').next().unwrap_or(sub.name);
                    args.push(word.as_bytes().to_vec());
                }
                let n = input.byte() % 7;
                for _ in 0..n {
                    args.push(input.pick(WORDS).as_bytes().to_vec());
                }
                args
            }
        };
        let in_multi = is_in_multi(&mut e, conn);
        let reply = e.execute(conn, &args);
        let mut out = BytesMut::new();
        reply.encode(2, &mut out);
        reply.encode(3, &mut out);
        let after = check_keyspace(&mut e, checker);
        let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        if reply.is_error() && !in_multi && name != "exec" {
            assert_eq!(
                types, after,
                "{args:?} failed ({reply:?}) yet changed key types"
            );
        }
        if !reply.is_error() && !in_multi {
            if let Some((key, t)) = expected_type(&args) {
                if let Some(i) = KEYS.iter().position(|k| k.as_bytes() == key) {
                    assert_eq!(after[i], t, "after {args:?} -> {reply:?}");
                }
            }
        }
        types = after;
    }
}

fn is_in_multi(e: &mut Engine, conn: u64) -> bool {
    e.sessions.get(&conn).is_some_and(|s| s.multi.is_some())
}

/// Writes whose resulting type is known, so the checker can hold the engine to it.
fn typed_write(input: &mut Bytes8) -> Vec<Vec<u8>> {
    let key = input.pick(KEYS).to_string();
    let v = input.pick(&["a", "b", "1", "2.5", "", "x"]).to_string();
    let w: Vec<String> = match input.byte() % 10 {
        0 => vec!["SET".into(), key, v],
        1 => vec!["LPUSH".into(), key, v],
        2 => vec!["RPUSH".into(), key, v.clone(), v],
        3 => vec!["SADD".into(), key, v],
        4 => vec!["HSET".into(), key, v.clone(), v],
        5 => vec!["ZADD".into(), key, (input.byte() % 5).to_string(), v],
        6 => vec!["DEL".into(), key],
        7 => vec![
            "PEXPIRE".into(),
            key,
            (input.byte() as u64 * 20).to_string(),
        ],
        8 => vec![
            "SET".into(),
            key,
            v,
            "PX".into(),
            (1 + input.byte() as u64 * 20).to_string(),
        ],
        _ => vec!["INCRBY".into(), key, (input.byte() as i8).to_string()],
    };
    w.into_iter().map(String::into_bytes).collect()
}

fn expected_type(args: &[Vec<u8>]) -> Option<(&[u8], &'static str)> {
    let t = match String::from_utf8_lossy(&args[0])
        .to_ascii_uppercase()
        .as_str()
    {
        // NX/XX may not set; EXAT/PXAT may name a moment already past, and then the key is
        // gone at once, as in Redis.
        "SET"
            if args.len() <= 5
                && !args.iter().skip(3).any(|a| {
                    [&b"NX"[..], b"XX", b"EXAT", b"PXAT"]
                        .iter()
                        .any(|w| a.eq_ignore_ascii_case(w))
                }) =>
        {
            "string"
        }
        "INCRBY" => "string",
        "LPUSH" | "RPUSH" => "list",
        "SADD" => "set",
        "HSET" => "hash",
        "ZADD" if args.len() == 4 => "zset",
        "DEL" | "UNLINK" | "GETDEL" => "none",
        _ => return None,
    };
    Some((args.get(1)?.as_slice(), t))
}

/// Lua fragments the script generator strings together: ordinary calls and every hostile
/// shape from the catalogue (loops, bombs, recursion, sandbox escapes).
const LUA_FRAGMENTS: &[&str] = &[
    "redis.call('set', KEYS[1], ARGV[1])",
    "redis.call('incr', KEYS[2])",
    "redis.pcall('lpush', KEYS[1], 'x')",
    "redis.call('del', KEYS[1])",
    "local v = redis.call('get', KEYS[1])",
    "redis.pcall('nosuchcommand')",
    "redis.setresp(3)",
    "redis.setresp(2)",
    "return redis.call('hgetall', KEYS[2])",
    "return {1, 2, {3, 'x', {4}}}",
    "return 3.99",
    "return true",
    "return false",
    "return nil",
    "return {err='E bad'}",
    "return {ok='fine'}",
    "return redis.error_reply('MY err')",
    "return redis.status_reply('S')",
    "error('boom')",
    "error({})",
    "error(setmetatable({}, {__tostring = function() return 'x' end}))",
    "while true do end",
    "for i = 1, 1e12 do end",
    "local t = {} for i = 1, 1e8 do t[i] = i end",
    "local s = string.rep('x', 1e9)",
    "local s = 'x' for i = 1, 40 do s = s .. s end",
    "local function f(n) return f(n + 1) + 1 end f(1)",
    "local function f() return f() end f()",
    "local t = {} t[1] = t return t",
    "local t = {} t.a = t return cjson.encode(t)",
    "return unpack({}, 1, 1e7)",
    "return unpack({1, 2, 3}, -1e9, 1e9)",
    "return cjson.decode(string.rep('[', 1e5))",
    "return cjson.decode(string.rep('{\"a\":', 1e4))",
    "return cjson.encode({{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}})",
    "return cmsgpack.unpack(string.rep('\\145', 1e5))",
    "return cmsgpack.pack(cmsgpack.unpack(cmsgpack.pack({1, {2, {3}}})))",
    "return struct.pack('>I', 1)",
    "return struct.unpack('>I', 'ab')",
    "return bit.band(1, 2)",
    "return loadstring(string.dump(function() return 1 end))",
    "return loadstring('\\27Lua')",
    "local f = loadstring('return 1') return f and f()",
    "setmetatable(_G, nil)",
    "rawset(_G, 'x', 1)",
    "x = 1",
    "return y",
    "getmetatable('').__index = {}",
    "getmetatable('').__index.upper = nil",
    "string.rep = nil",
    "redis = nil",
    "local co = coroutine.create(function() while true do coroutine.yield() end end) for i = 1, 1e6 do coroutine.resume(co) end",
    "coroutine.wrap(function() while true do end end)()",
    "pcall(function() while true do end end)",
    "while true do pcall(error, 'x') end",
    "local ok = pcall(string.rep, 'x', 1e10)",
    "return tostring(math.huge) .. tostring(-0/0)",
    "return {math.huge, -math.huge, 0/0}",
    "return redis.sha1hex(ARGV[1])",
    "redis.log(redis.LOG_WARNING, 'x')",
    "return os.time()",
    "return os.clock()",
    "return redis.call('eval', 'return 1', 0)",
    "return redis.call('time')",
    "return string.format('%99999d', 1)",
    "return ('x'):rep(1e6):len()",
    "return table.concat({}, ',', 1, 1e6)",
    "local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x",
    "local t = setmetatable({}, {__gc = function() end})",
    "collectgarbage('collect')",
    "return select('#', unpack({}, 1, 200))",
];

/// Lua scripts through EVAL, under a 20 ms time limit and a 4 MB Lua memory limit. Input:
/// byte 0 even = the rest is the script's text as is; odd = the rest picks fragments and
/// wrappers. Whatever the script does, the engine must answer and stay usable: a later
/// script runs, and the keyspace passes `check_keyspace`.
pub fn lua_script(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let script = if mode & 1 == 0 {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        generated_script(rest)
    };
    let mut config = Config::default();
    config.busy_reply_threshold_ms = 5;
    // Small, so a string.rep bomb in a tight loop (which the instruction-count hook does not
    // interrupt, in Redis either) fails fast instead of copying 32 MB per iteration.
    config.lua_memory_limit = 4 * 1024 * 1024;
    let mut e = Engine::with_clock(config, Clock::manual(1_700_000_000_000));
    // No one can send SCRIPT KILL in-process: the hook plays that client. A script that
    // already wrote cannot be killed, so it is stopped the only other way Redis allows.
    e.set_busy_hook(Box::new(|s: &BusyScript| {
        if s.elapsed_ms < 20 {
            BusyVerdict::Continue
        } else if s.has_written {
            BusyVerdict::Shutdown
        } else {
            BusyVerdict::Kill
        }
    }));
    let reply = e.execute(1, &["EVAL", script.as_str(), "2", "k0", "k1", "v", "7"]);
    let mut out = BytesMut::new();
    reply.encode(2, &mut out);
    reply.encode(3, &mut out);
    check_keyspace(&mut e, 2);
    let after = e.execute(3, &["EVAL", "return 1", "0"]);
    let scripting_missing =
        matches!(&after, Reply::Error(m) if m.starts_with("ERR unknown command"));
    if !scripting_missing && !e.shutdown_requested() {
        assert_eq!(
            after,
            Reply::Int(1),
            "the engine does not run scripts after {script:?} -> {reply:?}"
        );
    }
    assert_eq!(e.execute(3, &["PING"]), Reply::status("PONG"));
}

fn generated_script(data: &[u8]) -> String {
    let mut input = Bytes8::new(data);
    let mut parts = Vec::new();
    while !input.done() && parts.len() < 16 {
        let frag = *input.pick(LUA_FRAGMENTS);
        let wrapped = match input.byte() % 6 {
            0 => format!("pcall(function() {frag} end)"),
            1 => format!("for i = 1, {} do {frag} end", input.byte()),
            2 => format!(
                "local ok, err = pcall(function() {frag} end) if not ok then return err end"
            ),
            3 => format!("do {frag} end"),
            _ => frag.to_string(),
        };
        parts.push(wrapped);
    }
    parts.join("\n")
}
