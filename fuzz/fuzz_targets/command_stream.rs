#![no_main]
//! See `redlab_server::fuzzing::command_stream` for the input format and what is checked.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab_server::fuzzing::command_stream(data));
