//! Builds random, mostly valid commands by walking Redis's argument specifications, with
//! the values that break parsers: i64 and u64 bounds and one past them, NaN and the
//! infinities in every spelling, hex floats, empty and long strings, glob metacharacters.
//!
//! Every decision reads one byte from a `Choices`: the fuzzer's input (so libFuzzer's
//! mutations steer the generator) or a seeded generator (so the bounded test and long
//! random runs reproduce from a seed).

use super::argspec::{Arg, CommandSpec, Kind, Repeat};

/// Where the generator's decisions come from.
pub struct Choices<'a> {
    data: &'a [u8],
    pos: usize,
    /// xorshift64* state when the choices are seeded, not read from bytes.
    rng: Option<u64>,
}

impl<'a> Choices<'a> {
    /// Decisions read from the fuzzer's bytes; past the end, every choice is 0.
    pub fn from_bytes(data: &'a [u8]) -> Self {
        Choices {
            data,
            pos: 0,
            rng: None,
        }
    }

    pub fn seeded(seed: u64) -> Choices<'static> {
        Choices {
            data: &[],
            pos: 0,
            rng: Some(seed.wrapping_mul(0x9e3779b97f4a7c15) | 1),
        }
    }

    /// True once a byte-driven stream is used up (a seeded one never is).
    pub fn done(&self) -> bool {
        self.rng.is_none() && self.pos >= self.data.len()
    }

    pub fn byte(&mut self) -> u8 {
        if let Some(s) = &mut self.rng {
            *s ^= *s >> 12;
            *s ^= *s << 25;
            *s ^= *s >> 27;
            return (s.wrapping_mul(0x2545f4914f6cdd1d) >> 56) as u8;
        }
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A number below `n` (n > 0); two bytes, so lists longer than 256 are covered.
    pub fn below(&mut self, n: usize) -> usize {
        let v = (self.byte() as usize) << 8 | self.byte() as usize;
        v % n
    }

    /// True with probability about `num`/256.
    pub fn chance(&mut self, num: u8) -> bool {
        self.byte() < num
    }

    pub fn pick<'p, T>(&mut self, items: &'p [T]) -> &'p T {
        &items[self.below(items.len())]
    }
}

/// The keys commands work on: few, so commands meet each other's data.
pub const KEYS: &[&str] = &["k0", "k1", "k2", "k0", "k1", "{k}3"];

/// Odd keys, now and then.
const ODD_KEYS: &[&str] = &["", "k*", "k?[0]", "\u{0}key\r\n"];

/// Integers for counts, indexes and offsets. Valid large values stay where a correct server
/// does not allocate gigabytes (SETRANGE 536870911, SRANDMEMBER -2^40 would in Redis too);
/// the bounds themselves must be refused.
const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "5",
    "-5",
    "10",
    "-10",
    "100",
    "-100",
    "1000",
    "4294967296",
    "536870912",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "-0",
    "+1",
    "01",
    " 1",
    "1 ",
    "0x10",
    "1e3",
    "1.0",
    "1.5",
    "",
    "abc",
    "nan",
    "inf",
    "-inf",
];

const DOUBLES: &[&str] = &[
    "0",
    "1",
    "-1",
    "1.5",
    "-2.5",
    "-0",
    "0.0",
    "1e10",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "-infinity",
    "INF",
    "1e308",
    "1.7976931348623157e308",
    "1e309",
    "-1e309",
    "4.9e-324",
    "2e-324",
    "0x1p3",
    "0x1.8p1",
    "-0x1p-1074",
    "0x10",
    "0x",
    "1e",
    "1.",
    ".5",
    " 1",
    "1 ",
    "",
    "abc",
    "9223372036854775807",
    "18446744073709551616",
    "(1",
    "(inf",
    "1e-5",
];

/// Strings: empty, the encodings' length thresholds (44: embstr, 64: listpack entries),
/// long, binary, numbers (which some encodings store as integers), glob metacharacters.
fn strings() -> &'static [Vec<u8>] {
    static S: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let mut v: Vec<Vec<u8>> = [
            "",
            "a",
            "b",
            "c",
            "a",
            "b",
            "0",
            "1",
            "-1",
            "12345",
            "1.5",
            "abc",
            "hello world",
            "\u{0}\u{ff}\r\n",
            "*",
            "?",
            "[a-z]",
            "[^a]",
            "\\",
            "[",
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551616",
            "nan",
            "inf",
            "-inf",
            "k0",
            "k1",
            "\u{e9}t\u{e9}",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        v.push(vec![b'x'; 44]);
        v.push(vec![b'x'; 45]);
        v.push(vec![b'y'; 65]);
        v.push(vec![b'z'; 3000]);
        v.push((0..=255u8).collect());
        v
    })
}

const PATTERNS: &[&str] = &[
    "*",
    "k*",
    "?0",
    "[k]*",
    "[^a]*",
    "[a-",
    "\\*",
    "*[",
    "",
    "k[0-9]",
    "*a*a*a*a*a*a*a*a*a*a*b",
    "h[a-]",
    "[]",
    "[!a]*",
    "\\",
    "*\\",
    "k[\\]]",
    "k[z-a]*",
    "*x*",
    "nomatch",
];

/// Relative expiry times (seconds or milliseconds): none in the range where Redis and
/// redlab, answering a few milliseconds apart, could disagree about whether a key expired.
const DURATIONS: &[&str] = &[
    "-1",
    "0",
    "100000",
    "4611686018427387904",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775806",
    "9223372036854775808",
    "abc",
    "1.5",
    "",
];

/// Absolute expiry times: long past or far future.
const UNIX_TIMES: &[&str] = &[
    "0",
    "1",
    "-1",
    "1000000000000",
    "4102444800",
    "4102444800000",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "abc",
];

/// Timeouts of blocking commands: tiny or invalid, never 0 (forever) or long. The integer
/// edge is one past i64's range (an error on both servers): i64::MAX itself is a valid
/// timeout for WAIT and XREAD BLOCK, and both servers would block for ever.
const DOUBLE_TIMEOUTS: &[&str] = &[
    "0.01", "0.02", "-1", "-0.5", "nan", "inf", "-inf", "abc", "", "1e400",
];
const INT_TIMEOUTS: &[&str] = &["1", "5", "-1", "abc", "9223372036854775808", "1.5", ""];

const LEX_BOUNDS: &[&str] = &[
    "-", "+", "[a", "(a", "[b", "(c", "a", "", "[", "(", "-inf", "+inf", "(1", "0", "-1", "1.5",
    "[\u{0}",
];

const SCRIPTS: &[&str] = &[
    "return 1",
    "return redis.call('get', KEYS[1])",
    "return redis.pcall('incr', KEYS[1])",
    "return {1, 'a', {2}}",
    "return redis.call('set', KEYS[1], ARGV[1])",
    "return 3.7",
    "return {err='E fail'}",
    "error('x')",
    "return redis.call('nosuch')",
    "syntax error(",
    "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')",
];

const FUNCTION_CODE: &[&str] = &[
    "#!lua name=lib\nredis.register_function('f', function(keys, args) return #keys end)",
    "#!lua name=lib\nredis.register_function{function_name='f', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}}",
    "#!lua name=lib2\nredis.register_function('g', function() return redis.setresp(3) end)",
    "#!lua name=bad\nreturn 1",
    "#!lua\nredis.register_function('f', function() end)",
    "not a function",
];

fn p(c: &mut Choices, items: &[&str]) -> Vec<u8> {
    c.pick(items).as_bytes().to_vec()
}

/// A plausible value for one leaf argument, by its type and name.
fn leaf(c: &mut Choices, kind: &Kind, blocking: bool) -> Vec<u8> {
    let name = kind.name();
    // A timeout of 0 blocks forever, and a key given 1 ms to live expires in one server
    // and not yet in the other: times always come from their own lists.
    let timed = name == "timeout"
        || matches!(kind, Kind::UnixTime(_))
        || matches!(name, "seconds" | "milliseconds" | "ttl" | "ms");
    // One value in sixteen ignores the argument's meaning altogether.
    if !timed && c.chance(16) {
        return match c.below(3) {
            0 => p(c, INTS),
            1 => p(c, DOUBLES),
            _ => c.pick(strings()).clone(),
        };
    }
    match kind {
        Kind::Key(_) => {
            let keys = if c.chance(12) { ODD_KEYS } else { KEYS };
            p(c, keys)
        }
        Kind::Pattern(_) => p(c, PATTERNS),
        Kind::UnixTime(_) => p(c, UNIX_TIMES),
        Kind::Double(_) if name == "timeout" => p(c, DOUBLE_TIMEOUTS),
        Kind::Int(_) if name == "timeout" || (blocking && name == "milliseconds") => {
            p(c, INT_TIMEOUTS)
        }
        Kind::Int(_) if matches!(name, "seconds" | "milliseconds" | "ttl" | "ms") => {
            p(c, DURATIONS)
        }
        Kind::Int(_) if name == "cursor" => p(
            c,
            &[
                "0",
                "1",
                "7",
                "abc",
                "-1",
                "18446744073709551615",
                "18446744073709551616",
            ],
        ),
        Kind::Int(_) if matches!(name, "db" | "destination-db" | "index1" | "index2") => p(
            c,
            &["0", "1", "15", "16", "-1", "9223372036854775807", "abc"],
        ),
        Kind::Int(_) if name == "offset" && c.chance(40) => {
            p(c, &["#0", "#1", "#9223372036854775807", "#-1", "#"])
        }
        Kind::Int(_) => p(c, INTS),
        Kind::Double(_) if matches!(name, "longitude" | "latitude") && c.chance(128) => p(
            c,
            &[
                "13.361389",
                "38.115556",
                "180",
                "-180",
                "85.05112878",
                "85.05112879",
                "-85.06",
            ],
        ),
        Kind::Double(_) => p(c, DOUBLES),
        Kind::Str(_) => match name {
            "min" | "max" | "start" | "stop" | "end" => p(c, LEX_BOUNDS),
            "script" => p(c, SCRIPTS),
            "function-code" => p(c, FUNCTION_CODE),
            "function" => p(c, &["f", "g", "nosuch", ""]),
            "library-name" | "library-name-pattern" => p(c, &["lib", "lib2", "*", "nosuch"]),
            "sha1" => p(
                c,
                &[
                    "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
                    "0000000000000000000000000000000000000000",
                    "abc",
                ],
            ),
            "encoding" => p(
                c,
                &[
                    "u8", "i8", "u1", "i64", "u63", "u64", "i65", "u0", "i0", "x8", "",
                ],
            ),
            "section" => p(
                c,
                &[
                    "all",
                    "server",
                    "keyspace",
                    "everything",
                    "nosuch",
                    "default",
                ],
            ),
            "parameter" => p(
                c,
                &[
                    "*",
                    "maxmemory",
                    "save",
                    "lua-time-limit",
                    "*max*",
                    "nosuch",
                ],
            ),
            "type" => p(
                c,
                &["string", "list", "set", "zset", "hash", "stream", "nosuch"],
            ),
            "operation" => p(c, &["AND", "OR", "XOR", "NOT", "and", "nosuch"]),
            "username" => p(c, &["default", "nosuch", ""]),
            "command-name" | "command" | "subcommand" => {
                p(c, &["get", "set", "config|get", "config", "nosuch", "GET"])
            }
            "category" | "categoryname" => p(c, &["@read", "read", "string", "nosuch"]),
            "connection-name" | "clientname" => p(c, &["name", "", "a b", "x\n"]),
            "serialized-value" => dump_payload(c),
            "id" | "last-id" | "threshold" => p(
                c,
                &[
                    "0",
                    "0-0",
                    "1-1",
                    "*",
                    "$",
                    ">",
                    "+",
                    "-",
                    "1-*",
                    "abc",
                    "18446744073709551615-18446744073709551615",
                ],
            ),
            "member" | "field" | "element" | "pivot" | "member1" | "member2" if c.chance(160) => {
                p(c, &["a", "b", "c", "1", "2"])
            }
            _ => c.pick(strings()).clone(),
        },
        Kind::Pure | Kind::OneOf(_) | Kind::Block(_) => Vec::new(),
    }
}

/// A DUMP payload for RESTORE: Redis 7.0's serialisation of the string "hello" (valid), or
/// a broken one.
fn dump_payload(c: &mut Choices) -> Vec<u8> {
    let mut p = b"\x00\x05hello\x0a\x00".to_vec();
    let crc = crate::db::rdb::crc64::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    match c.below(4) {
        0 | 1 => p,
        2 => {
            let n = p.len();
            p[n - 1] ^= 1;
            p
        }
        _ => b"\x00\x05hello".to_vec(),
    }
}

/// Generates the argument vector of one command (name first; a subcommand's container
/// name, then its own).
pub fn command(c: &mut Choices, spec: &CommandSpec) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = spec
        .name
        .split('|')
        .map(|w| w.as_bytes().to_vec())
        .collect();
    let blocking = spec.flags.iter().any(|f| f == "blocking")
        || matches!(spec.name.as_str(), "xread" | "xreadgroup" | "wait");
    seq(c, &spec.args, blocking, &mut out);
    // Now and then, break the shape: drop, duplicate or append an argument. Not for
    // blocking commands, where a shifted argument could become a timeout of 0.
    if !blocking && c.chance(12) && out.len() > 1 {
        let i = 1 + c.below(out.len() - 1);
        match c.below(3) {
            0 => {
                out.remove(i);
            }
            1 => {
                let dup = out[i].clone();
                out.insert(i, dup);
            }
            _ => out.push(c.pick(strings()).clone()),
        }
    }
    out
}

fn seq(c: &mut Choices, args: &[Arg], blocking: bool, out: &mut Vec<Vec<u8>>) {
    let mut forced: Option<usize> = None;
    for (i, arg) in args.iter().enumerate() {
        if arg.optional && forced.is_none() && c.chance(128) {
            continue;
        }
        // numkeys is followed by that many keys: keep them agreeing, mostly.
        if matches!(&arg.kind, Kind::Int(n) if n == "numkeys")
            && args.get(i + 1).is_some_and(|a| a.repeat != Repeat::Once)
        {
            if c.chance(24) {
                one(c, arg, blocking, out);
            } else {
                let n = 1 + c.below(3);
                out.push(n.to_string().into_bytes());
                forced = Some(n);
            }
            continue;
        }
        let times = match (arg.repeat, forced.take()) {
            (Repeat::Once, _) => 1,
            (_, Some(n)) => n,
            _ => 1 + c.below(3),
        };
        for _ in 0..times {
            if arg.repeat == Repeat::MultipleToken || times == 1 || arg.token.is_none() {
                one(c, arg, blocking, out);
            } else {
                // A repeated argument with a token: the token once, then the values.
                one(c, arg, blocking, out);
                for _ in 1..times {
                    value(c, arg, blocking, out);
                }
                break;
            }
        }
    }
}

/// One occurrence of an argument: its token (if any), then its value.
fn one(c: &mut Choices, arg: &Arg, blocking: bool, out: &mut Vec<Vec<u8>>) {
    if let Some(t) = &arg.token {
        let t = if c.chance(24) {
            t.to_ascii_lowercase()
        } else {
            t.clone()
        };
        out.push(t.into_bytes());
    }
    value(c, arg, blocking, out);
}

fn value(c: &mut Choices, arg: &Arg, blocking: bool, out: &mut Vec<Vec<u8>>) {
    match &arg.kind {
        Kind::Pure => {}
        Kind::OneOf(alts) => {
            let alt = c.pick(alts);
            one(c, alt, blocking, out)
        }
        Kind::Block(inner) => seq(c, inner, blocking, out),
        leafkind => out.push(leaf(c, leafkind, blocking)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::argspec::parse;

    #[test]
    fn builds_set_commands_that_follow_the_spec() {
        let specs = parse(include_str!("../../../tests/data/command_args.txt")).unwrap();
        let set = specs.iter().find(|s| s.name == "set").unwrap();
        let mut c = Choices::seeded(7);
        let mut with_options = 0;
        for _ in 0..200 {
            let cmd = command(&mut c, set);
            assert_eq!(cmd[0], b"set");
            with_options += (cmd.len() > 3) as usize;
        }
        assert!(
            with_options > 50,
            "options are rarely generated: {with_options}"
        );
        let eval = specs.iter().find(|s| s.name == "eval").unwrap();
        let cmd = command(&mut Choices::seeded(3), eval);
        assert!(cmd.len() >= 3);
    }

    #[test]
    fn byte_choices_run_out_into_zeros() {
        let mut c = Choices::from_bytes(&[5]);
        assert_eq!(c.byte(), 5);
        assert!(c.done());
        assert_eq!(c.byte(), 0);
    }
}
