//! The RESTORE fuzzer as a bounded test: DUMP payloads of every type and encoding captured
//! from Redis 7.0.15 (`tests/data/dump_payloads.txt`), each restored as is and then mutated
//! (with the CRC fixed) a fixed number of times; nothing may panic, a refused payload leaves
//! no key, an accepted one reads back consistently (see `redlab_server::fuzzing::restore`).
//! REDLAB_RESTORE_FUZZ_CASES=<n per seed> and REDLAB_RESTORE_FUZZ_SEED=<u64> run more.

use redlab_server::fuzzing::restore::{check_payload, parse_seeds, restore_seeded};

const SEEDS: &str = include_str!("data/dump_payloads.txt");

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn every_captured_payload_restores() {
    for seed in parse_seeds(SEEDS) {
        let accepted = std::panic::catch_unwind(|| check_payload(&seed.payload))
            .unwrap_or_else(|_| panic!("{} ({}) failed its checks", seed.name, seed.encoding));
        assert!(accepted, "{} ({}) was refused", seed.name, seed.encoding);
    }
}

#[test]
fn mutated_payloads_never_crash_and_read_back_consistently() {
    let n: u64 = std::env::var("REDLAB_RESTORE_FUZZ_CASES")
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(300);
    let base: u64 = std::env::var("REDLAB_RESTORE_FUZZ_SEED")
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(11);
    let seeds = parse_seeds(SEEDS);
    let mut accepted = 0;
    let mut total = 0;
    for seed in &seeds {
        for i in 0..n {
            let rng = base.wrapping_mul(1_000_003).wrapping_add(i);
            match std::panic::catch_unwind(|| restore_seeded(seed, rng)) {
                Ok((_, ok)) => accepted += ok as usize,
                Err(_) => {
                    let mut c = redlab_server::fuzzing::generate::Choices::seeded(rng);
                    let payload = redlab_server::fuzzing::restore::mutate(&seed.payload, &mut c);
                    panic!(
                        "seed {} ({}), rng {rng}: RESTORE k 0 (hex) {}",
                        seed.name,
                        seed.encoding,
                        hex(&payload)
                    );
                }
            }
            total += 1;
        }
    }
    eprintln!("restore fuzz: {accepted} of {total} mutated payloads accepted");
    // If no mutation survives, the CRC fixing or the mutator is broken and nothing past the
    // checksum check is being tested.
    assert!(
        accepted * 20 > total,
        "only {accepted} of {total} mutated payloads were accepted"
    );
}
