//! Known answers of redis-server 7.0.15 for the geohash arithmetic, and commands that must
//! not panic on odd scores.

use super::hash;
use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

#[test]
fn palermo_and_catania_as_redis_computes_them() {
    assert_eq!(hash::score_of(13.361389, 38.115556), Some(3479099956230698));
    assert_eq!(hash::score_of(15.087269, 37.502669), Some(3479447370796909));
    let (x1, y1) = hash::decode_score(3479099956230698.0).unwrap();
    let (x2, y2) = hash::decode_score(3479447370796909.0).unwrap();
    assert_eq!(
        format!("{:.4}", hash::distance(x1, y1, x2, y2)),
        "166274.1516"
    );
    assert_eq!(hash::geohash_string(x1, y1), "sqc8b49rny0");
}

#[test]
fn searches_over_arbitrary_scores_do_not_panic() {
    let mut e = Engine::new(Config::default());
    for s in [
        "-1",
        "1e300",
        "-inf",
        "inf",
        "4503599627370496",
        "9007199254740993",
    ] {
        e.execute(1, &["zadd", "z", s, s]);
    }
    for cmd in [
        &["geopos", "z", "-1", "inf", "-inf", "1e300"][..],
        &["geohash", "z", "-1", "inf", "-inf"],
        &["geodist", "z", "-1", "inf"],
        &[
            "georadius",
            "z",
            "0",
            "0",
            "20000",
            "km",
            "withcoord",
            "withdist",
            "withhash",
        ],
        &["georadiusbymember", "z", "-1", "1", "km"],
        &[
            "geosearch",
            "z",
            "fromlonlat",
            "180",
            "85",
            "bybox",
            "1e10",
            "1e10",
            "km",
        ],
        &[
            "geosearch",
            "z",
            "fromlonlat",
            "-180",
            "-85",
            "byradius",
            "0",
            "m",
        ],
    ] {
        let r = e.execute(1, cmd);
        assert!(!matches!(r, Reply::Error(_)), "{cmd:?}: {r:?}");
    }
}
