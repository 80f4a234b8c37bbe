//! Engine-level tests for what the differential suite cannot show: blocking, MULTI and
//! script contexts, notifications, and large (skiplist-encoded) sets.

use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

#[test]
fn zadd_and_range_round_trip() {
    let mut e = Engine::new(Config::default());
    assert_eq!(e.execute(1, &["ZADD", "z", "2", "b", "1", "a"]), Reply::Int(2));
    assert_eq!(e.execute(1, &["ZRANGE", "z", "0", "-1"]), Reply::Array(vec![bulk("a"), bulk("b")]));
}
