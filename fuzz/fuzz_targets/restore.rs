//! Mutated DUMP payloads of every type through RESTORE; see
//! `redlab_server::fuzzing::restore`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use redlab_server::fuzzing::restore::{parse_seeds, restore, Seed};

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| parse_seeds(include_str!("../../tests/data/dump_payloads.txt")))
}

fuzz_target!(|data: &[u8]| restore(seeds(), data));
