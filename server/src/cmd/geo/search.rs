//! GEORADIUS, GEORADIUSBYMEMBER (and _RO), GEOSEARCH and GEOSEARCHSTORE: one parser, as
//! Redis's `georadiusGeneric`, so option order, which errors win and when a missing key
//! short-circuits are the same for all six.
//!
//! The search visits the centre geohash box and its eight neighbours (`hash::areas`) in
//! Redis's order, each as a score range of the sorted set, keeps the points inside the
//! shape, then sorts by distance when asked (COUNT alone implies ASC, unless ANY).

use super::hash::{self, Shape};
use super::{coord_reply, distance_reply, float_or, long_lat, unit};
use crate::cmd::args;
use crate::cmd::lookup::lookup;
use crate::db::zset::ScoreRange;
use crate::db::{Value, ZSet};
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

use super::super::table::CmdResult;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// GEORADIUS: centre and radius are positional.
    Coords,
    /// GEORADIUSBYMEMBER: the centre is a member.
    Member,
    /// GEOSEARCH / GEOSEARCHSTORE: FROM... and BY... options.
    Search,
}

struct Flags {
    kind: Kind,
    /// The _RO forms refuse STORE and STOREDIST.
    no_store: bool,
    /// GEOSEARCHSTORE: the destination is argument 1.
    search_store: bool,
}

pub fn georadius(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, 1, flags(Kind::Coords, false, false))
}

pub fn georadius_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, 1, flags(Kind::Coords, true, false))
}

pub fn georadiusbymember(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, 1, flags(Kind::Member, false, false))
}

pub fn georadiusbymember_ro(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, 1, flags(Kind::Member, true, false))
}

pub fn geosearch(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, 1, flags(Kind::Search, false, false))
}

pub fn geosearchstore(e: &mut Engine, call: &mut Call) -> CmdResult {
    generic(e, call, 2, flags(Kind::Search, false, true))
}

fn flags(kind: Kind, no_store: bool, search_store: bool) -> Flags {
    Flags {
        kind,
        no_store,
        search_store,
    }
}

/// One point found: what the reply or the stored set needs.
struct Point {
    member: Vec<u8>,
    score: f64,
    dist: f64,
    long: f64,
    lat: f64,
}

/// A distance option's value: `<number> <unit>`, not negative.
fn distance_arg(n: &[u8], u: &[u8], what: &str) -> Result<(f64, f64), Reply> {
    let v = float_or(n, what)?;
    if v < 0.0 {
        return Err(Reply::err(errors::GEO_NEGATIVE_RADIUS));
    }
    Ok((v, unit(u)?))
}

/// The member's position, or Redis's error for a member that is not there.
fn member_pos(z: &ZSet, member: &[u8]) -> Result<(f64, f64), Reply> {
    z.score(member)
        .and_then(hash::decode_score)
        .ok_or_else(|| Reply::err(errors::GEO_NO_MEMBER))
}

fn generic(e: &mut Engine, call: &mut Call, src: usize, f: Flags) -> CmdResult {
    let db = call.db;
    let src_key = call.args[src].clone();
    let z = lookup::<ZSet>(e, db, &src_key)?;
    let mut center = (0.0, 0.0);
    let mut shape = None;
    let mut conv = 1.0;
    let mut store: Option<Vec<u8>> = None;
    let base = match f.kind {
        Kind::Coords => {
            center = long_lat(call.arg(2), call.arg(3))?;
            let (r, c) = distance_arg(call.arg(4), call.arg(5), errors::GEO_NEED_RADIUS)?;
            (shape, conv) = (Some(Shape::Radius(r)), c);
            6
        }
        Kind::Member => {
            if let Some(z) = z {
                center = member_pos(z, call.arg(2))?;
                let (r, c) = distance_arg(call.arg(3), call.arg(4), errors::GEO_NEED_RADIUS)?;
                (shape, conv) = (Some(Shape::Radius(r)), c);
            }
            5
        }
        Kind::Search => {
            if f.search_store {
                store = Some(call.args[1].to_vec());
                3
            } else {
                2
            }
        }
    };
    let search = f.kind == Kind::Search;
    let (mut withdist, mut withhash, mut withcoord) = (false, false, false);
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let mut sort: Option<bool> = None; // Some(true) = ascending
    let mut any = false;
    let mut count: i64 = 0;
    let mut storedist = false;
    let argc = call.argc();
    let mut i = base;
    while i < argc {
        let a = call.arg(i);
        let left = argc - i - 1;
        if args::is(a, "withdist") {
            withdist = true;
        } else if args::is(a, "withhash") {
            withhash = true;
        } else if args::is(a, "withcoord") {
            withcoord = true;
        } else if args::is(a, "any") {
            any = true;
        } else if args::is(a, "asc") {
            sort = Some(true);
        } else if args::is(a, "desc") {
            sort = Some(false);
        } else if args::is(a, "count") && left >= 1 {
            count = args::int(call.arg(i + 1))?;
            if count <= 0 {
                return Err(Reply::err(errors::GEO_COUNT));
            }
            i += 1;
        } else if (args::is(a, "store") || args::is(a, "storedist"))
            && left >= 1
            && !f.no_store
            && !search
        {
            storedist = args::is(a, "storedist");
            store = Some(call.args[i + 1].to_vec());
            i += 1;
        } else if args::is(a, "storedist") && search && f.search_store {
            storedist = true;
        } else if args::is(a, "frommember") && left >= 1 && search && !fromloc {
            if let Some(z) = z {
                center = member_pos(z, call.arg(i + 1))?;
            }
            frommember = true;
            i += 1;
        } else if args::is(a, "fromlonlat") && left >= 2 && search && !frommember {
            center = long_lat(call.arg(i + 1), call.arg(i + 2))?;
            fromloc = true;
            i += 2;
        } else if args::is(a, "byradius") && left >= 2 && search && !bybox {
            let (r, c) = distance_arg(call.arg(i + 1), call.arg(i + 2), errors::GEO_NEED_RADIUS)?;
            (shape, conv) = (Some(Shape::Radius(r)), c);
            byradius = true;
            i += 2;
        } else if args::is(a, "bybox") && left >= 3 && search && !byradius {
            let w = float_or(call.arg(i + 1), errors::GEO_NEED_WIDTH)?;
            let h = float_or(call.arg(i + 2), errors::GEO_NEED_HEIGHT)?;
            if w < 0.0 || h < 0.0 {
                return Err(Reply::err(errors::GEO_NEGATIVE_BOX));
            }
            conv = unit(call.arg(i + 3))?;
            shape = Some(Shape::Box(w, h));
            bybox = true;
            i += 3;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 1;
    }
    if store.is_some() && (withdist || withhash || withcoord) {
        let what = if f.search_store {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(Reply::err(errors::geo_store_with(what)));
    }
    let name = String::from_utf8_lossy(call.arg(0)).into_owned();
    if search && !(frommember || fromloc) {
        return Err(Reply::err(errors::geo_from_once(&name)));
    }
    if search && !(byradius || bybox) {
        return Err(Reply::err(errors::geo_by_once(&name)));
    }
    if any && count == 0 {
        return Err(Reply::err(errors::GEO_ANY_COUNT));
    }
    let (Some(z), Some(shape)) = (z, shape) else {
        return Ok(match store {
            Some(dst) => {
                if e.db(db).remove(&dst).is_some() {
                    e.modified(db, &dst, notify::GENERIC, "del");
                }
                Reply::Int(0)
            }
            None => Reply::Array(Vec::new()),
        });
    };
    if count != 0 && sort.is_none() && !any {
        sort = Some(true);
    }
    let limit = if any { count as usize } else { 0 };
    let mut points = collect(z, center, shape, conv, limit);
    if points.is_empty() && store.is_none() {
        return Ok(Reply::Array(Vec::new()));
    }
    if let Some(asc) = sort {
        // Stable, as glibc's qsort (a merge sort) is for the sizes a search returns.
        points.sort_by(|a, b| {
            let o = a
                .dist
                .partial_cmp(&b.dist)
                .unwrap_or(std::cmp::Ordering::Equal);
            if asc {
                o
            } else {
                o.reverse()
            }
        });
    }
    let returned = if count == 0 {
        points.len()
    } else {
        points.len().min(count as usize)
    };
    points.truncate(returned);
    for p in &mut points {
        p.dist /= conv;
    }
    match store {
        None => Ok(Reply::Array(
            points
                .into_iter()
                .map(|p| point_reply(p, withdist, withhash, withcoord, call.resp))
                .collect(),
        )),
        Some(dst) => {
            if points.is_empty() {
                if e.db(db).remove(&dst).is_some() {
                    e.modified(db, &dst, notify::GENERIC, "del");
                }
                return Ok(Reply::Int(0));
            }
            let limits = e.encoding_limits();
            let mut out = ZSet::new();
            for p in &points {
                out.insert(&p.member, if storedist { p.dist } else { p.score }, &limits);
            }
            out.fit_encoding(&limits);
            e.db(db).set(&dst, Value::ZSet(out));
            let event = if search {
                "geosearchstore"
            } else {
                "georadiusstore"
            };
            e.modified(db, &dst, notify::ZSET, event);
            e.signal_ready(db, &dst);
            Ok(Reply::Int(returned as i64))
        }
    }
}

fn point_reply(p: Point, withdist: bool, withhash: bool, withcoord: bool, resp: u8) -> Reply {
    if !(withdist || withhash || withcoord) {
        return Reply::bulk(p.member);
    }
    let mut item = vec![Reply::bulk(p.member)];
    if withdist {
        item.push(distance_reply(p.dist));
    }
    if withhash {
        item.push(Reply::Int(p.score as i64));
    }
    if withcoord {
        item.push(Reply::Array(vec![
            coord_reply(p.long, resp),
            coord_reply(p.lat, resp),
        ]));
    }
    Reply::Array(item)
}

/// The points inside the shape, box by box in Redis's order; with `limit` (COUNT ANY) the
/// walk stops as soon as that many were found.
fn collect(z: &ZSet, center: (f64, f64), shape: Shape, conv: f64, limit: usize) -> Vec<Point> {
    let areas = hash::areas(center.0, center.1, shape, conv);
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    for (i, b) in areas.boxes.iter().enumerate() {
        if b.is_zero() {
            continue;
        }
        // Redis compares with the last box it searched, but its "none yet" is index 0, so
        // a neighbour equal to the centre box is searched twice, as there.
        if let Some(l) = last.filter(|&l| l > 0) {
            if areas.boxes[l] == *b {
                continue;
            }
        }
        if limit != 0 && out.len() >= limit {
            break;
        }
        let min = hash::align52(*b) as f64;
        let max = hash::align52(hash::Bits {
            bits: b.bits.wrapping_add(1),
            step: b.step,
        }) as f64;
        let range = ScoreRange {
            min,
            max,
            minex: false,
            maxex: true,
        };
        if let Some(start) = z.first_in_score_range(&range) {
            for (member, score) in z.iter_from(start) {
                if !range.lte_max(score) {
                    break;
                }
                if let Some((long, lat)) = hash::decode_score(score) {
                    if let Some(dist) = hash::within(shape, conv, center.0, center.1, long, lat) {
                        out.push(Point {
                            member: member.to_vec(),
                            score,
                            dist,
                            long,
                            lat,
                        });
                    }
                }
                if limit != 0 && out.len() >= limit {
                    break;
                }
            }
        }
        last = Some(i);
    }
    out
}
