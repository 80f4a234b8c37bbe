//! Doubles as Redis 7.2+ and Valkey print them (the shortest digits that read back, in
//! fpconv's layout), checked against a real valkey-server 8.1 with random scores: the sorted
//! set replies, a script's view of them, and Lua numbers passed to `redis.call`.

mod support;

use std::time::Duration;

use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};
use support::resp::{show, RawConn};

/// A seeded generator, so a failure names the same doubles again.
struct Rng(TestRng);

impl Rng {
    fn new() -> Rng {
        Rng(TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Doubles of every kind a user stores: any bit pattern, decimals of assorted
    /// magnitudes, sums that do not round-trip short, and large integers.
    fn double(&mut self) -> f64 {
        let r = self.next();
        let d = match r % 4 {
            0 => f64::from_bits(self.next()),
            1 => {
                let digits = (self.next() % 1_000_000_000) as f64;
                digits * 10f64.powi((self.next() % 40) as i32 - 25)
            }
            2 => (self.next() % 1000) as f64 / 10.0 + (self.next() % 1000) as f64 / 100.0,
            _ => (self.next() >> (self.next() % 64)) as f64,
        };
        // No -0: a ZADD of more elements than a listpack holds builds a skiplist at once in
        // Redis 7.2 and Valkey, where -0 survives, while the profile keeps 7.0's listpack
        // start, which turns it into 0 (DIFFERENCES.md). Printing is what this test checks.
        if d.is_finite() && d != 0.0 {
            if self.next().is_multiple_of(2) {
                d
            } else {
                -d
            }
        } else {
            0.5
        }
    }
}

fn replies(conn: &mut RawConn, cmds: &[Vec<Vec<u8>>]) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in cmds.chunks(64) {
        for c in chunk {
            conn.send(c);
        }
        for _ in chunk {
            let frame = conn.read_frame(Duration::from_secs(30)).unwrap_or_default();
            out.push(show(&frame));
        }
    }
    out
}

fn words(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

#[test]
fn random_scores_print_as_valkey_prints_them() {
    let Some(valkey) = support::valkey_or_skip("valkey_doubles") else {
        return;
    };
    let redlab = redlab::Server::builder()
        .compat(redlab::Profile::Valkey81)
        .start();
    let mut rng = Rng::new();
    let mut cmds = Vec::new();
    for batch in 0..40 {
        let key = format!("z{batch}");
        let mut zadd = words(&[b"ZADD", key.as_bytes()]);
        for i in 0..500 {
            zadd.push(format!("{:e}", rng.double()).into_bytes());
            zadd.push(format!("m{i}").into_bytes());
        }
        cmds.push(zadd);
        cmds.push(words(&[
            b"ZRANGE",
            key.as_bytes(),
            b"0",
            b"-1",
            b"WITHSCORES",
        ]));
    }
    for i in 0..2000 {
        let d = format!("{:e}", rng.double());
        let key = format!("z{}", i % 40);
        cmds.push(words(&[
            b"ZSCORE",
            key.as_bytes(),
            format!("m{}", i % 500).as_bytes(),
        ]));
        cmds.push(words(&[
            b"EVAL",
            b"redis.call('SET', KEYS[1], tonumber(ARGV[1])) return redis.call('GET', KEYS[1])",
            b"1",
            b"s",
            d.as_bytes(),
        ]));
        cmds.push(words(&[
            b"EVAL",
            b"redis.call('ZADD', KEYS[1], ARGV[1], 'x') return redis.call('ZSCORE', KEYS[1], 'x')",
            b"1",
            b"small",
            d.as_bytes(),
        ]));
    }
    let theirs = replies(&mut RawConn::connect(valkey.addr()), &cmds);
    let ours = replies(&mut RawConn::connect(redlab.addr()), &cmds);
    let differing: Vec<String> = cmds
        .iter()
        .zip(theirs.iter().zip(&ours))
        .filter(|(_, (t, o))| t != o)
        .map(|(c, (t, o))| {
            let c: Vec<String> = c
                .iter()
                .map(|a| String::from_utf8_lossy(a).into())
                .collect();
            // A whole sorted set is one reply: show where the two first part.
            let at = t.bytes().zip(o.bytes()).take_while(|(a, b)| a == b).count();
            let from = at.saturating_sub(40);
            let clip = |s: &str| s.get(from..(at + 60).min(s.len())).unwrap_or(s).to_string();
            let cmd: String = c.join(" ").chars().take(120).collect();
            format!("{cmd}\n  valkey: ...{}\n  redlab: ...{}", clip(t), clip(o))
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} replies differ:\n{}",
        differing.len(),
        cmds.len(),
        differing
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
