//! How a command that changed the dataset reaches the replicas: as it was sent, or rewritten
//! the way Redis 7.0.15 rewrites it so that a replica applying it later, on another clock
//! and with another random generator, ends with the same data. Each rule below was checked
//! against a real redis-server's replication stream (relative deadlines become absolute
//! PXAT/PEXPIREAT, random or blocking pops become the plain pop of what was taken, float
//! increments become the value they produced, `*` stream IDs become the ID chosen).

use bytes::Bytes;

use crate::db::Value;
use crate::engine::Engine;
use crate::reply::Reply;

type Op = Vec<Bytes>;

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn is(a: &[u8], name: &str) -> bool {
    a.eq_ignore_ascii_case(name.as_bytes())
}

/// The deadline `key` has now in `db`, or None when the key is gone (or has none).
fn deadline(e: &Engine, db: usize, key: &[u8]) -> Option<Option<i64>> {
    e.dbs[db].get_shared(key).map(|en| en.expire_at())
}

/// What to propagate for `args`, which ran in `db` and answered `reply`, having changed the
/// dataset: None when that is `args` as they came (most writes, a plain SET among them), so
/// the caller encodes them without a copy of the list.
pub(super) fn rewrite(e: &Engine, db: usize, args: &[Bytes], reply: &Reply) -> Option<Vec<Op>> {
    // Lower-cased on the stack: every write a primary with replicas runs comes through
    // here. A name longer than any below matches none of them and goes out as it came.
    let mut lower = [0u8; 16];
    let name: &[u8] = match lower.get_mut(..args[0].len()) {
        Some(room) => {
            room.copy_from_slice(&args[0]);
            room.make_ascii_lowercase();
            room
        }
        None => b"",
    };
    let key = || args[1].clone();
    let del = || vec![vec![b("DEL"), args[1].clone()]];
    let ops = match name {
        b"set" => return set(e, db, args),
        b"setex" | b"psetex" => match deadline(e, db, &args[1]) {
            Some(Some(at)) => vec![vec![
                b("SET"),
                key(),
                args[3].clone(),
                b("PXAT"),
                b(&at.to_string()),
            ]],
            _ => del(),
        },
        b"getex" => {
            let persist = args.iter().skip(2).any(|a| is(a, "persist"));
            match deadline(e, db, &args[1]) {
                None => del(),
                Some(_) if persist => vec![vec![b("PERSIST"), key()]],
                Some(Some(at)) => vec![vec![b("PEXPIREAT"), key(), b(&at.to_string())]],
                Some(None) => Vec::new(),
            }
        }
        b"getdel" => del(),
        b"expire" | b"pexpire" | b"expireat" | b"pexpireat" => match deadline(e, db, &args[1]) {
            None => del(),
            Some(Some(at)) => vec![vec![b("PEXPIREAT"), key(), b(&at.to_string())]],
            Some(None) => Vec::new(),
        },
        b"incrbyfloat" => match reply {
            Reply::Bulk(v) => vec![vec![b("SET"), key(), v.clone(), b("KEEPTTL")]],
            _ => Vec::new(),
        },
        b"hincrbyfloat" => match reply {
            Reply::Bulk(v) => vec![vec![b("HSET"), key(), args[2].clone(), v.clone()]],
            _ => Vec::new(),
        },
        b"spop" => spop(e, db, args, reply),
        b"blpop" | b"brpop" => match reply {
            Reply::Array(kv) if kv.len() == 2 => match &kv[0] {
                Reply::Bulk(k) => {
                    let pop = if name == b"blpop" { "LPOP" } else { "RPOP" };
                    vec![vec![b(pop), k.clone()]]
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        },
        b"blmove" => vec![vec![
            b("LMOVE"),
            args[1].clone(),
            args[2].clone(),
            args[3].clone(),
            args[4].clone(),
        ]],
        b"brpoplpush" => vec![vec![b("RPOPLPUSH"), args[1].clone(), args[2].clone()]],
        b"lmpop" | b"blmpop" => mpop(args, reply, name == b"blmpop", ("LPOP", "RPOP")),
        b"zmpop" | b"bzmpop" => mpop(args, reply, name == b"bzmpop", ("ZPOPMIN", "ZPOPMAX")),
        b"bzpopmin" | b"bzpopmax" => match reply {
            Reply::Array(kv) if kv.len() == 3 => match &kv[0] {
                Reply::Bulk(k) => {
                    let pop = if name == b"bzpopmin" {
                        "ZPOPMIN"
                    } else {
                        "ZPOPMAX"
                    };
                    vec![vec![b(pop), k.clone()]]
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        },
        b"xadd" => xadd(e, db, args, reply),
        b"xtrim" => {
            let mut out = args.to_vec();
            approx_trim(e, db, &mut out, 2);
            vec![out]
        }
        b"restore" => restore(e, db, args),
        _ => return None,
    };
    Some(ops)
}

/// SET: any deadline (EX, PX, EXAT, PXAT) becomes `SET key value PXAT ms`, as Redis writes
/// it whatever the client typed; GET is dropped (the replica has no one to answer). None:
/// as it came.
fn set(e: &Engine, db: usize, args: &[Bytes]) -> Option<Vec<Op>> {
    let opts = &args[3.min(args.len())..];
    let relative = opts
        .iter()
        .any(|a| is(a, "ex") || is(a, "px") || is(a, "exat") || is(a, "pxat"));
    if relative {
        return Some(match deadline(e, db, &args[1]) {
            Some(Some(at)) => vec![vec![
                b("SET"),
                args[1].clone(),
                args[2].clone(),
                b("PXAT"),
                b(&at.to_string()),
            ]],
            _ => vec![vec![b("DEL"), args[1].clone()]],
        });
    }
    if !opts.iter().any(|a| is(a, "get")) {
        return None;
    }
    let mut out: Op = args[..3].to_vec();
    out.extend(opts.iter().filter(|a| !is(a, "get")).cloned());
    Some(vec![out])
}

/// SPOP key: `SREM key member`. SPOP key count: one SREM per member taken, or DEL when the
/// set is gone.
fn spop(e: &Engine, db: usize, args: &[Bytes], reply: &Reply) -> Vec<Op> {
    let srem = |m: &Bytes| vec![b("SREM"), args[1].clone(), m.clone()];
    match reply {
        Reply::Bulk(m) => vec![srem(m)],
        Reply::Array(ms) | Reply::Set(ms) => {
            if deadline(e, db, &args[1]).is_none() {
                return vec![vec![b("DEL"), args[1].clone()]];
            }
            ms.iter()
                .filter_map(|m| match m {
                    Reply::Bulk(m) => Some(srem(m)),
                    _ => None,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// [B]LMPOP / [B]ZMPOP: the plain pop of the key served, with the count taken.
fn mpop(args: &[Bytes], reply: &Reply, blocking: bool, pops: (&str, &str)) -> Vec<Op> {
    let numkeys_at = if blocking { 2 } else { 1 };
    let Some(n) = args
        .get(numkeys_at)
        .and_then(|a| std::str::from_utf8(a).ok())
        .and_then(|a| a.parse::<usize>().ok())
    else {
        return Vec::new();
    };
    let Some(dir) = args.get(numkeys_at + 1 + n) else {
        return Vec::new();
    };
    let pop = if is(dir, "left") || is(dir, "min") {
        pops.0
    } else {
        pops.1
    };
    match reply {
        Reply::Array(kv) if kv.len() == 2 => match (&kv[0], &kv[1]) {
            (Reply::Bulk(k), Reply::Array(items)) => {
                vec![vec![b(pop), k.clone(), b(&items.len().to_string())]]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// XADD: the ID the stream chose replaces `*`; an approximate trim becomes exact.
fn xadd(e: &Engine, db: usize, args: &[Bytes], reply: &Reply) -> Vec<Op> {
    let mut out = args.to_vec();
    let mut i = 2;
    while i < out.len() {
        let a = &out[i];
        if is(a, "nomkstream") {
            i += 1;
        } else if is(a, "maxlen") || is(a, "minid") {
            i += 1;
            if out.get(i).is_some_and(|a| &a[..] == b"~" || &a[..] == b"=") {
                i += 1;
            }
            i += 1;
        } else if is(a, "limit") {
            i += 2;
        } else {
            break;
        }
    }
    if let (Some(id), Reply::Bulk(chosen)) = (out.get(i), reply) {
        if &id[..] == b"*" || id.ends_with(b"-*") {
            out[i] = chosen.clone();
        }
    }
    approx_trim(e, db, &mut out, 2);
    vec![out]
}

/// `MAXLEN ~ n` / `MINID ~ id` become `= <what is left>`: the replica trims to exactly what
/// the primary kept.
fn approx_trim(e: &Engine, db: usize, out: &mut [Bytes], from: usize) {
    let Some(pos) = (from..out.len()).find(|&i| is(&out[i], "maxlen") || is(&out[i], "minid"))
    else {
        return;
    };
    if out.get(pos + 1).is_none_or(|a| &a[..] != b"~") || pos + 2 >= out.len() {
        return;
    }
    let Some(Value::Stream(s)) = e.dbs[db].get_shared(&out[1]).map(|en| &en.value) else {
        return;
    };
    out[pos + 1] = b("=");
    out[pos + 2] = if is(&out[pos], "maxlen") {
        b(&s.len().to_string())
    } else {
        b(&s.first_id().to_string())
    };
}

/// RESTORE with a relative TTL: the absolute deadline and ABSTTL.
fn restore(e: &Engine, db: usize, args: &[Bytes]) -> Vec<Op> {
    let absttl = args.iter().skip(4).any(|a| is(a, "absttl"));
    let mut out = args.to_vec();
    if !absttl && &args[2][..] != b"0" {
        if let Some(Some(at)) = deadline(e, db, &args[1]) {
            out[2] = b(&at.to_string());
            out.push(b("ABSTTL"));
        }
    }
    vec![out]
}
