//! Runs each server fuzz body over its committed corpus (`fuzz/corpus/<target>/`), so every
//! seed and every crash the fuzzers once found (files named `regression-*`) is replayed by
//! the normal test suite. Run the fuzzers themselves as `fuzz/README.md` says.

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {}", dir.display(), e))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "empty corpus {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).expect("corpus file"),
            )
        })
        .collect()
}

fn replay(target: &str, body: fn(&[u8])) {
    for (name, data) in corpus(target) {
        let r = std::panic::catch_unwind(|| body(&data));
        assert!(r.is_ok(), "{target}: corpus file {name} fails");
    }
}

#[test]
fn request_parser_corpus() {
    replay("request_parser", redlab_server::fuzzing::request_parser);
}

#[test]
fn command_stream_corpus() {
    replay("command_stream", redlab_server::fuzzing::command_stream);
}

#[test]
fn lua_script_corpus() {
    replay("lua_script", redlab_server::fuzzing::lua_script);
}
