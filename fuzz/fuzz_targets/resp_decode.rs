#![no_main]
//! See `redlab_client::fuzzing::resp_decode` for the input format and what is checked.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab_client::fuzzing::resp_decode(data));
