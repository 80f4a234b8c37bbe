#![no_main]
//! See `redlab_server::fuzzing::request_parser` for the input format and what is checked.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab_server::fuzzing::request_parser(data));
