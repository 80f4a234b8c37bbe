//! Runs the reply-decoder fuzz body over its committed corpus (`fuzz/corpus/resp_decode/`),
//! seeds and past crashes (`regression-*`) alike.

use std::path::PathBuf;

#[test]
fn resp_decode_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/resp_decode");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for p in files {
        let data = std::fs::read(&p).expect("corpus file");
        let r = std::panic::catch_unwind(|| redlab_client::fuzzing::resp_decode(&data));
        assert!(r.is_ok(), "corpus file {} fails", p.display());
    }
}
