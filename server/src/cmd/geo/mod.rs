//! The GEO commands: positions kept as sorted-set scores (see `hash`), so the members are
//! ordinary sorted-set members that ZRANGE, ZSCORE and ZREM see.
//!
//! GEOADD is ZADD with the scores computed (Redis literally rewrites the command into a ZADD);
//! the searches (GEORADIUS, GEORADIUSBYMEMBER, their _RO forms, GEOSEARCH and GEOSEARCHSTORE)
//! share one parser and one walk over the nine geohash boxes, in `search`.

pub(crate) mod hash;
mod search;
#[cfg(test)]
mod tests;

use bytes::Bytes;

use super::table::{self, flags::*, CmdResult, Command};
use crate::cmd::lookup::lookup;
use crate::cmd::{args, cfloat};
use crate::db::ZSet;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;

/// A float argument as Redis's `getDoubleFromObject` reads it (C's strtod: hexadecimal and
/// `inf` accepted), with `err` as the error text.
fn float_or(arg: &[u8], err: &str) -> Result<f64, Reply> {
    cfloat::string2d(arg).ok_or_else(|| Reply::err(err))
}

/// Redis's `extractLongLatOrReply`: two floats, then the WGS84 limits.
fn long_lat(a: &[u8], b: &[u8]) -> Result<(f64, f64), Reply> {
    let long = float_or(a, errors::NOT_FLOAT)?;
    let lat = float_or(b, errors::NOT_FLOAT)?;
    if !(hash::LONG_MIN..=hash::LONG_MAX).contains(&long)
        || !(hash::LAT_MIN..=hash::LAT_MAX).contains(&lat)
    {
        return Err(Reply::err(errors::geo_invalid_pair(long, lat)));
    }
    Ok((long, lat))
}

/// A unit's size in metres.
fn unit(arg: &[u8]) -> Result<f64, Reply> {
    match arg.to_ascii_lowercase().as_slice() {
        b"m" => Ok(1.0),
        b"km" => Ok(1000.0),
        b"ft" => Ok(0.3048),
        b"mi" => Ok(1609.34),
        _ => Err(Reply::err(errors::GEO_UNIT)),
    }
}

/// A distance as GEODIST and WITHDIST print it: four decimals.
fn distance_reply(d: f64) -> Reply {
    Reply::bulk(format!("{d:.4}"))
}

/// A coordinate as GEOPOS and WITHCOORD print it: Redis's human long double format in a bulk
/// string under RESP2; a double under RESP3 (Redis writes the same 17-decimal text after the
/// `,`, redlab the shortest text of the same double, which every client reads alike).
fn coord_reply(d: f64, resp: u8) -> Reply {
    if resp >= 3 {
        Reply::Double(d)
    } else {
        Reply::bulk(numfmt::format_human_float(d))
    }
}

/// GEOADD key [NX|XX] [CH] longitude latitude member [...]: rewritten into the ZADD it is.
fn geoadd(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut first = 2;
    let (mut nx, mut xx) = (false, false);
    while first < call.argc() {
        let a = call.arg(first);
        if args::is(a, "nx") {
            nx = true;
        } else if args::is(a, "xx") {
            xx = true;
        } else if !args::is(a, "ch") {
            break;
        }
        first += 1;
    }
    if !(call.argc() - first).is_multiple_of(3) || (nx && xx) {
        return Err(Reply::err(errors::SYNTAX));
    }
    let mut zadd: Vec<Bytes> = Vec::with_capacity(first + (call.argc() - first) / 3 * 2);
    zadd.push(Bytes::from_static(b"zadd"));
    zadd.extend(call.args[1..first].iter().cloned());
    for i in (first..call.argc()).step_by(3) {
        let (long, lat) = long_lat(call.arg(i), call.arg(i + 1))?;
        let score = hash::score_of(long, lat).unwrap_or(0);
        zadd.push(Bytes::from(score.to_string()));
        zadd.push(call.args[i + 2].clone());
    }
    let cmd = table::lookup(b"zadd").ok_or_else(|| Reply::err(errors::SYNTAX))?;
    let original = std::mem::replace(&mut call.args, zadd);
    let reply = cmd.handler.run(e, call);
    call.args = original;
    Ok(reply)
}

/// GEOPOS key member [...]: each member's position, or a null array when it is missing.
fn geopos(e: &mut Engine, call: &mut Call) -> CmdResult {
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    let out = call.args[2..]
        .iter()
        .map(
            |m| match z.and_then(|z| z.score(m)).and_then(hash::decode_score) {
                Some((long, lat)) => Reply::Array(vec![
                    coord_reply(long, call.resp),
                    coord_reply(lat, call.resp),
                ]),
                None => Reply::NilArray,
            },
        )
        .collect();
    Ok(Reply::Array(out))
}

/// GEOHASH key member [...]: the standard 11-character geohash strings.
fn geohash(e: &mut Engine, call: &mut Call) -> CmdResult {
    let z = lookup::<ZSet>(e, call.db, call.arg(1))?;
    let out = call.args[2..]
        .iter()
        .map(
            |m| match z.and_then(|z| z.score(m)).and_then(hash::decode_score) {
                Some((long, lat)) => Reply::bulk(hash::geohash_string(long, lat)),
                None => Reply::Nil,
            },
        )
        .collect();
    Ok(Reply::Array(out))
}

/// GEODIST key member1 member2 [M|KM|FT|MI].
fn geodist(e: &mut Engine, call: &mut Call) -> CmdResult {
    let to_m = match call.argc() {
        5 => unit(call.arg(4))?,
        n if n > 5 => return Err(Reply::err(errors::SYNTAX)),
        _ => 1.0,
    };
    let Some(z) = lookup::<ZSet>(e, call.db, call.arg(1))? else {
        return Ok(Reply::Nil);
    };
    let (Some(s1), Some(s2)) = (z.score(call.arg(2)), z.score(call.arg(3))) else {
        return Ok(Reply::Nil);
    };
    match (hash::decode_score(s1), hash::decode_score(s2)) {
        (Some((x1, y1)), Some((x2, y2))) => {
            Ok(distance_reply(hash::distance(x1, y1, x2, y2) / to_m))
        }
        _ => Ok(Reply::Nil),
    }
}

/// Keys of GEORADIUS (from 6) and GEORADIUSBYMEMBER (from 5): the source, and the key after
/// STORE or STOREDIST.
fn store_keys(args: &[Bytes], from: usize) -> Vec<usize> {
    let mut out = vec![1];
    if let Some(i) = (from..args.len().saturating_sub(1))
        .find(|&i| args::is(&args[i], "store") || args::is(&args[i], "storedist"))
    {
        out.push(i + 1);
    }
    out
}

fn georadius_keys(args: &[Bytes]) -> Vec<usize> {
    store_keys(args, 6)
}

fn georadiusbymember_keys(args: &[Bytes]) -> Vec<usize> {
    store_keys(args, 5)
}

pub static COMMANDS: &[Command] = &[
    Command::new("geoadd", -5, WRITE | DENYOOM, "geo", geoadd).keys(1, 1, 1),
    Command::new("geopos", -2, READONLY, "geo", geopos).keys(1, 1, 1),
    Command::new("geohash", -2, READONLY, "geo", geohash).keys(1, 1, 1),
    Command::new("geodist", -4, READONLY, "geo", geodist).keys(1, 1, 1),
    Command::new("georadius", -6, WRITE | DENYOOM, "geo", search::georadius)
        .keys(1, 1, 1)
        .movable_keys(georadius_keys),
    Command::new("georadius_ro", -6, READONLY, "geo", search::georadius_ro).keys(1, 1, 1),
    Command::new(
        "georadiusbymember",
        -5,
        WRITE | DENYOOM,
        "geo",
        search::georadiusbymember,
    )
    .keys(1, 1, 1)
    .movable_keys(georadiusbymember_keys),
    Command::new(
        "georadiusbymember_ro",
        -5,
        READONLY,
        "geo",
        search::georadiusbymember_ro,
    )
    .keys(1, 1, 1),
    Command::new("geosearch", -7, READONLY, "geo", search::geosearch).keys(1, 1, 1),
    Command::new(
        "geosearchstore",
        -8,
        WRITE | DENYOOM,
        "geo",
        search::geosearchstore,
    )
    .keys(1, 2, 1),
];
