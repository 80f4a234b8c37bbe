//! The RESTORE fuzzer: DUMP payloads of every type and encoding, captured from a real
//! redis-server (`tests/data/dump_payloads.txt`), mutated and given a valid CRC again so
//! the mutation reaches the decoders instead of the checksum check. Whatever RESTORE does
//! with it, the engine must not crash, and a key it accepts must read back consistently:
//! TYPE agrees with the commands that read the type, lengths agree with listings, lookups
//! find what listings show, writes still work, and DUMP of the key RESTOREs to the same
//! content. A refused payload must leave no key behind.

use crate::clock::Clock;
use crate::config::Config;
use crate::db::rdb::crc64::crc64;
use crate::engine::Engine;
use crate::reply::Reply;

/// One captured payload.
pub struct Seed {
    pub name: String,
    pub encoding: String,
    pub payload: Vec<u8>,
}

/// Reads `tests/data/dump_payloads.txt`: `name encoding hex` per line.
pub fn parse_seeds(text: &str) -> Vec<Seed> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split(' ');
            let name = it.next().unwrap_or_default().to_string();
            let encoding = it.next().unwrap_or_default().to_string();
            let hex = it.next().unwrap_or_default().as_bytes();
            let payload = hex
                .chunks(2)
                .map(|p| {
                    u8::from_str_radix(std::str::from_utf8(p).unwrap_or("zz"), 16)
                        .expect("hex payload")
                })
                .collect();
            Seed {
                name,
                encoding,
                payload,
            }
        })
        .collect()
}

/// Replaces the 8-byte CRC at the end with the one the rest deserves.
pub fn fix_crc(payload: &mut [u8]) {
    if payload.len() < 10 {
        return;
    }
    let n = payload.len() - 8;
    let crc = crc64(0, &payload[..n]);
    payload[n..].copy_from_slice(&crc.to_le_bytes());
}

/// Values that make lengths and tags interesting.
const BYTES: &[u8] = &[
    0, 1, 2, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x40, 0xc0, 0xc1, 0xc2, 0xc3, 0x0e, 0xf0, 0xf1, 0xf4,
    0xfe,
];
const WORDS: &[u32] = &[
    0,
    1,
    2,
    0x7fff_ffff,
    0xffff_ffff,
    0x8000_0000,
    0xffff,
    0x1_0000 - 1,
    6,
    7,
    0x100,
];

/// Mutates the body of a payload (everything before the 2-byte RDB version and the CRC),
/// now and then the version too, as the input bytes say; then fixes the CRC.
pub fn mutate(seed: &[u8], input: &mut super::generate::Choices) -> Vec<u8> {
    let mut body = seed[..seed.len() - 10].to_vec();
    let mut version = [seed[seed.len() - 10], seed[seed.len() - 9]];
    let ops = 1 + input.below(6);
    for _ in 0..ops {
        if input.done() {
            break;
        }
        let len = body.len().max(1);
        let pos = input.below(len);
        match input.byte() % 9 {
            0 => {
                if let Some(b) = body.get_mut(pos) {
                    *b ^= 1 << (input.byte() % 8);
                }
            }
            1 => {
                let v = *input.pick(BYTES);
                if let Some(b) = body.get_mut(pos) {
                    *b = v;
                }
            }
            2 => {
                let v = input.byte();
                body.insert(pos.min(body.len()), v);
            }
            3 => {
                let n = 1 + input.below(8);
                let end = (pos + n).min(body.len());
                body.drain(pos.min(end)..end);
            }
            4 => body.truncate(pos),
            5 => {
                let n = 1 + input.below(16);
                let end = (pos + n).min(body.len());
                let chunk = body[pos.min(end)..end].to_vec();
                let at = input.below(body.len() + 1);
                body.splice(at..at, chunk);
            }
            6 => {
                let w = input.pick(WORDS).to_le_bytes();
                for (i, b) in w.iter().enumerate() {
                    if let Some(x) = body.get_mut(pos + i) {
                        *x = *b;
                    }
                }
            }
            7 => {
                let v = input.byte();
                if let Some(b) = body.get_mut(pos) {
                    *b = b.wrapping_add(v % 5).wrapping_sub(2);
                }
            }
            _ => {
                if input.chance(32) {
                    version = *input.pick(&[[0, 0], [9, 0], [10, 0], [11, 0], [0xff, 0xff]]);
                }
            }
        }
    }
    body.extend_from_slice(&version);
    body.extend_from_slice(&[0; 8]);
    fix_crc(&mut body);
    body
}

/// A key's content, the way the read commands show it.
#[derive(Debug, PartialEq)]
enum Content {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    ZSet(Vec<(Vec<u8>, f64)>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    Other(String),
}

struct Checker {
    e: Engine,
}

impl Checker {
    fn run(&mut self, args: &[&[u8]]) -> Reply {
        self.e.execute(1, args)
    }

    fn int(&mut self, args: &[&[u8]]) -> i64 {
        match self.run(args) {
            Reply::Int(n) => n,
            other => panic!("{} answered {other:?}", show(args)),
        }
    }

    fn bulk(&mut self, args: &[&[u8]]) -> Vec<u8> {
        match self.run(args) {
            Reply::Bulk(b) => b.to_vec(),
            other => panic!("{} answered {other:?}", show(args)),
        }
    }

    fn list(&mut self, args: &[&[u8]]) -> Vec<Vec<u8>> {
        let r = self.run(args);
        let mut out = Vec::new();
        flatten(&r, &mut out).unwrap_or_else(|| panic!("{} answered {r:?}", show(args)));
        out
    }

    /// Reads the key with the commands of its type, asserting they agree with each other.
    fn read(&mut self, key: &[u8]) -> Content {
        let t = match self.run(&[b"TYPE", key]) {
            Reply::Status(s) => s,
            other => panic!("TYPE answered {other:?}"),
        };
        assert_eq!(self.int(&[b"EXISTS", key]), 1, "TYPE {t} but EXISTS 0");
        match self.run(&[b"OBJECT", b"ENCODING", key]) {
            Reply::Bulk(_) | Reply::Status(_) => {}
            other => panic!("OBJECT ENCODING of a {t} answered {other:?}"),
        }
        match t.as_str() {
            "string" => {
                let v = self.bulk(&[b"GET", key]);
                assert_eq!(
                    self.int(&[b"STRLEN", key]),
                    v.len() as i64,
                    "STRLEN disagrees with GET"
                );
                if !v.is_empty() {
                    assert_eq!(
                        self.bulk(&[b"GETRANGE", key, b"0", b"-1"]),
                        v,
                        "GETRANGE 0 -1 disagrees with GET"
                    );
                }
                Content::Str(v)
            }
            "list" => {
                let n = self.int(&[b"LLEN", key]);
                assert!(n > 0, "an empty list exists");
                let items = self.list(&[b"LRANGE", key, b"0", b"-1"]);
                assert_eq!(items.len() as i64, n, "LLEN disagrees with LRANGE");
                for i in [0, n - 1, n / 2] {
                    let idx = i.to_string();
                    assert_eq!(
                        self.bulk(&[b"LINDEX", key, idx.as_bytes()]),
                        items[i as usize],
                        "LINDEX {i}"
                    );
                }
                Content::List(items)
            }
            "set" => {
                let n = self.int(&[b"SCARD", key]);
                assert!(n > 0, "an empty set exists");
                let mut items = self.list(&[b"SMEMBERS", key]);
                assert_eq!(items.len() as i64, n, "SCARD disagrees with SMEMBERS");
                for m in items.iter().take(64) {
                    assert_eq!(
                        self.int(&[b"SISMEMBER", key, m]),
                        1,
                        "SMEMBERS lists {m:?}, SISMEMBER denies it"
                    );
                }
                items.sort();
                let before = items.len();
                items.dedup();
                assert_eq!(items.len(), before, "SMEMBERS lists a member twice");
                Content::Set(items)
            }
            "zset" => {
                let n = self.int(&[b"ZCARD", key]);
                assert!(n > 0, "an empty sorted set exists");
                let flat = self.list(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"]);
                assert_eq!(
                    flat.len() as i64,
                    2 * n,
                    "ZCARD disagrees with ZRANGE WITHSCORES"
                );
                let mut pairs = Vec::new();
                for p in flat.chunks(2) {
                    let s: f64 = std::str::from_utf8(&p[1])
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(f64::NAN);
                    assert!(!s.is_nan(), "score {:?} of {:?}", p[1], p[0]);
                    pairs.push((p[0].clone(), s));
                }
                for w in pairs.windows(2) {
                    assert!(
                        w[0].1 < w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0),
                        "ZRANGE out of order: {:?} before {:?}",
                        w[0],
                        w[1]
                    );
                }
                for (i, (m, s)) in pairs.iter().enumerate().take(64) {
                    let got = match self.run(&[b"ZSCORE", key, m]) {
                        Reply::Double(d) => d,
                        Reply::Bulk(b) => String::from_utf8_lossy(&b).parse().unwrap_or(f64::NAN),
                        other => panic!("ZSCORE of {m:?} answered {other:?}"),
                    };
                    assert_eq!(got, *s, "ZSCORE of {m:?}");
                    assert_eq!(self.int(&[b"ZRANK", key, m]), i as i64, "ZRANK of {m:?}");
                }
                Content::ZSet(pairs)
            }
            "hash" => {
                let n = self.int(&[b"HLEN", key]);
                assert!(n > 0, "an empty hash exists");
                let flat = self.list(&[b"HGETALL", key]);
                assert_eq!(flat.len() as i64, 2 * n, "HLEN disagrees with HGETALL");
                let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = flat
                    .chunks(2)
                    .map(|p| (p[0].clone(), p[1].clone()))
                    .collect();
                for (f, v) in pairs.iter().take(64) {
                    assert_eq!(&self.bulk(&[b"HGET", key, f]), v, "HGET of {f:?}");
                    assert_eq!(
                        self.int(&[b"HSTRLEN", key, f]),
                        v.len() as i64,
                        "HSTRLEN of {f:?}"
                    );
                }
                pairs.sort();
                let before = pairs.len();
                pairs.dedup_by(|a, b| a.0 == b.0);
                assert_eq!(pairs.len(), before, "HGETALL lists a field twice");
                Content::Hash(pairs)
            }
            "stream" => {
                // The whole stream as XINFO FULL shows it: entries, groups, PELs, consumers.
                let full = self.run(&[b"XINFO", b"STREAM", key, b"FULL", b"COUNT", b"0"]);
                assert!(!full.is_error(), "XINFO STREAM FULL answered {full:?}");
                let n = self.int(&[b"XLEN", key]);
                match self.run(&[b"XRANGE", key, b"-", b"+"]) {
                    Reply::Array(items) => assert_eq!(items.len() as i64, n, "XLEN and XRANGE"),
                    other => panic!("XRANGE answered {other:?}"),
                }
                Content::Other(format!("{full:?}"))
            }
            "none" => panic!("RESTORE answered OK but the key does not exist"),
            other => Content::Other(other.to_string()),
        }
    }

    /// A write that must work on any well-formed value of the type, and its effect.
    fn write(&mut self, key: &[u8], before: &Content) {
        match before {
            Content::Str(v) => {
                assert_eq!(
                    self.int(&[b"APPEND", key, b"!"]),
                    v.len() as i64 + 1,
                    "APPEND"
                );
            }
            Content::List(items) => {
                assert_eq!(
                    self.int(&[b"RPUSH", key, b"tail"]),
                    items.len() as i64 + 1,
                    "RPUSH"
                );
                assert_eq!(self.bulk(&[b"LPOP", key]), items[0], "LPOP");
                assert_eq!(
                    self.int(&[b"LINSERT", key, b"BEFORE", b"tail", b"mid"]),
                    items.len() as i64 + 1,
                    "LINSERT"
                );
            }
            Content::Set(items) => {
                let fresh = !items.iter().any(|m| m == b"777");
                assert_eq!(self.int(&[b"SADD", key, b"777"]), fresh as i64, "SADD 777");
                let fresh2 = !items.iter().any(|m| m == b"new member");
                assert_eq!(
                    self.int(&[b"SADD", key, b"new member"]),
                    fresh2 as i64,
                    "SADD a string"
                );
                assert_eq!(
                    self.int(&[b"SREM", key, &items[0]]),
                    1,
                    "SREM of a listed member"
                );
            }
            Content::ZSet(pairs) => {
                let fresh = !pairs.iter().any(|(m, _)| m == b"new");
                assert_eq!(
                    self.int(&[b"ZADD", key, b"0.5", b"new"]),
                    fresh as i64,
                    "ZADD"
                );
                assert_eq!(
                    self.int(&[b"ZREM", key, &pairs[0].0]),
                    1,
                    "ZREM of a listed member"
                );
            }
            Content::Hash(pairs) => {
                let fresh = !pairs.iter().any(|(f, _)| f == b"newfield");
                assert_eq!(
                    self.int(&[b"HSET", key, b"newfield", b"v"]),
                    fresh as i64,
                    "HSET"
                );
                assert_eq!(
                    self.int(&[b"HDEL", key, &pairs[0].0]),
                    1,
                    "HDEL of a listed field"
                );
            }
            Content::Other(_) => {}
        }
    }
}

fn show(args: &[&[u8]]) -> String {
    args.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn flatten(r: &Reply, out: &mut Vec<Vec<u8>>) -> Option<()> {
    match r {
        Reply::Bulk(b) => out.push(b.to_vec()),
        Reply::Int(n) => out.push(n.to_string().into_bytes()),
        Reply::Double(d) => out.push(crate::numfmt::format_double(*d).into_bytes()),
        Reply::Array(a) | Reply::Set(a) => {
            for x in a {
                flatten(x, out)?;
            }
        }
        Reply::Map(m) => {
            for (k, v) in m {
                flatten(k, out)?;
                flatten(v, out)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// The fuzz body. Input: a seed choice, then mutation choices (see `mutate`).
pub fn restore(seeds: &[Seed], data: &[u8]) {
    let mut input = super::generate::Choices::from_bytes(data);
    let seed = &seeds[input.byte() as usize % seeds.len()];
    let payload = mutate(&seed.payload, &mut input);
    check_payload(&payload);
}

/// `restore` with seeded choices, for the bounded test: returns the payload it tried.
pub fn restore_seeded(seed: &Seed, rng: u64) -> (Vec<u8>, bool) {
    let mut input = super::generate::Choices::seeded(rng);
    let payload = mutate(&seed.payload, &mut input);
    let accepted = check_payload(&payload);
    (payload, accepted)
}

/// RESTOREs one payload into a fresh engine and checks the outcome (see the module doc).
/// Returns whether RESTORE accepted it.
pub fn check_payload(payload: &[u8]) -> bool {
    let e = Engine::with_clock(Config::default(), Clock::manual(1_700_000_000_000));
    let mut c = Checker { e };
    let reply = c.run(&[b"RESTORE", b"k", b"0", payload]);
    match reply {
        Reply::Status(ref s) if s == "OK" => {}
        Reply::Error(_) | Reply::ErrorBytes(_) => {
            assert_eq!(
                c.int(&[b"EXISTS", b"k"]),
                0,
                "a refused RESTORE ({reply:?}) left a key"
            );
            return false;
        }
        other => panic!("RESTORE answered {other:?}"),
    }
    let content = c.read(b"k");
    let dump = c.bulk(&[b"DUMP", b"k"]);
    match c.run(&[b"RESTORE", b"copy", b"0", &dump]) {
        Reply::Status(s) if s == "OK" => {}
        other => panic!("RESTORE of redlab's own DUMP of an accepted key answered {other:?}"),
    }
    assert_eq!(
        c.read(b"copy"),
        content,
        "DUMP and RESTORE changed the content"
    );
    c.write(b"k", &content);
    c.read(b"k");
    true
}
