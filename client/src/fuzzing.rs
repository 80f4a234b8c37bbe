//! Fuzz body for the reply decoder, shared by `fuzz/fuzz_targets/resp3_decode.rs` and the
//! corpus test (`client/tests/fuzz_corpus.rs`).

use bytes::BytesMut;

use crate::codec::decode;

/// Decodes arbitrary bytes as a stream of replies, in RESP2 and RESP3 and split at the
/// point byte 0 chooses. It must never panic or overflow the stack; a reply it returns
/// consumes bytes, and feeding the stream in two parts must give the same replies.
pub fn resp_decode(data: &[u8]) {
    let Some((&split, wire)) = data.split_first() else {
        return;
    };
    for resp in [2u8, 3] {
        let whole = decode_all(&[wire], resp);
        let at = (split as usize).min(wire.len());
        let parts = decode_all(&[&wire[..at], &wire[at..]], resp);
        // An error can be reported earlier or later depending on the split; the replies
        // before it cannot differ.
        let n = whole.0.len().min(parts.0.len());
        assert_eq!(
            whole.0[..n],
            parts.0[..n],
            "replies depend on where the reads split (resp {resp})"
        );
        if !whole.1 && !parts.1 {
            assert_eq!(
                whole.0.len(),
                parts.0.len(),
                "replies depend on where the reads split (resp {resp})"
            );
        }
    }
}

/// The replies (as Debug text: a NaN double equals itself there) and whether it ended in an error.
fn decode_all(pieces: &[&[u8]], resp: u8) -> (Vec<String>, bool) {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            let before = buf.len();
            match decode(&mut buf, resp) {
                Ok(Some(v)) => {
                    assert!(buf.len() < before, "a reply consumed no bytes");
                    out.push(format!("{v:?}"));
                }
                Ok(None) => break,
                Err(_) => return (out, true),
            }
        }
    }
    (out, false)
}
