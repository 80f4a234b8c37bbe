//! `Reply`: what a command answers, as the RESP3 superset, and its two wire encodings.
//!
//! Handlers build one `Reply` without knowing the client's protocol; the encoder maps the
//! RESP3-only types down to RESP2 exactly as Redis does (maps flatten to arrays, doubles
//! become bulk strings, booleans become integers, nulls become `$-1`/`*-1`).

use bytes::{BufMut, Bytes, BytesMut};

use crate::numfmt::format_double;

/// A reply in the RESP3 type system.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+text`
    Status(String),
    /// `-CODE text`: the text without the leading `-`, e.g. `ERR syntax error`.
    Error(String),
    /// An error whose text is not UTF-8: a Lua error that quotes a script's bytes (a compile
    /// error near `'\xff'`). Built only by `Reply::err_bytes`, so any UTF-8 text is an `Error`.
    ErrorBytes(Bytes),
    /// `:n`
    Int(i64),
    /// `$len\r\n...`
    Bulk(Bytes),
    /// The null bulk string (`$-1` in RESP2, `_` in RESP3).
    Nil,
    /// The null array (`*-1` in RESP2, `_` in RESP3).
    NilArray,
    /// `*n`
    Array(Vec<Reply>),
    /// `%n` in RESP3, a flat array of 2n in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// `~n` in RESP3, an array in RESP2.
    Set(Vec<Reply>),
    /// `,d` in RESP3, a bulk string in RESP2.
    Double(f64),
    /// `#t`/`#f` in RESP3, `:1`/`:0` in RESP2.
    Bool(bool),
    /// `(n` in RESP3, a bulk string in RESP2.
    BigNumber(String),
    /// `=len\r\nfmt:text` in RESP3, a bulk string in RESP2.
    Verbatim(&'static str, Bytes),
    /// `>n` in RESP3 (pub/sub messages, invalidations), an array in RESP2.
    Push(Vec<Reply>),
    /// `|n` attributes then the reply they annotate in RESP3; only the reply in RESP2.
    Attribute(Vec<(Reply, Reply)>, Box<Reply>),
    /// Several replies sent back to back for one command (SUBSCRIBE a b c).
    Multi(Vec<Reply>),
    /// Nothing is sent: CLIENT REPLY OFF/SKIP, or a blocked command whose reply comes later.
    None,
    /// Bytes written as they are in either protocol: what a primary sends a replica (the
    /// RDB payload of a full synchronisation, the replication stream), or a reply encoded as
    /// it was produced, in the client's protocol (a random-member reply watched against the
    /// client's output limit, `cmd::random_picks`).
    Raw(Bytes),
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Status("OK".into())
    }

    pub fn status(s: &str) -> Reply {
        Reply::Status(s.to_string())
    }

    /// An error reply; `text` includes the code (`ERR ...`, `WRONGTYPE ...`).
    pub fn err(text: impl Into<String>) -> Reply {
        Reply::Error(text.into())
    }

    /// An error reply from raw bytes: `Error` when they are UTF-8, `ErrorBytes` otherwise, so
    /// the client gets the bytes Redis would send rather than U+FFFD.
    pub fn err_bytes(text: impl Into<Vec<u8>>) -> Reply {
        match String::from_utf8(text.into()) {
            Ok(s) => Reply::Error(s),
            Err(e) => Reply::ErrorBytes(Bytes::from(e.into_bytes())),
        }
    }

    /// The text of an error reply (lossy for `ErrorBytes`); None for other replies.
    pub fn error_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Reply::Error(s) => Some(std::borrow::Cow::Borrowed(s)),
            Reply::ErrorBytes(b) => Some(String::from_utf8_lossy(b)),
            _ => None,
        }
    }

    pub fn bulk(b: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(b.as_ref()))
    }

    /// A bulk string, or the null bulk string for `None`.
    pub fn opt_bulk(b: Option<impl AsRef<[u8]>>) -> Reply {
        match b {
            Some(b) => Reply::bulk(b),
            None => Reply::Nil,
        }
    }

    pub fn bulk_array<I, B>(items: I) -> Reply
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        Reply::Array(items.into_iter().map(Reply::bulk).collect())
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_) | Reply::ErrorBytes(_))
    }

    /// Appends the wire form for a client speaking protocol `resp` (2 or 3).
    pub fn encode(&self, resp: u8, out: &mut BytesMut) {
        let resp3 = resp >= 3;
        match self {
            Reply::Status(s) => line(out, b'+', s.as_bytes()),
            Reply::Error(s) => line(out, b'-', s.as_bytes()),
            Reply::ErrorBytes(b) => line(out, b'-', b),
            Reply::Int(n) => int_line(out, b':', *n),
            Reply::Bulk(b) => bulk(out, b),
            Reply::Nil => out.put_slice(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
            Reply::NilArray => out.put_slice(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
            Reply::Array(items) => aggregate(out, b'*', items, resp),
            Reply::Set(items) => aggregate(out, if resp3 { b'~' } else { b'*' }, items, resp),
            Reply::Push(items) => aggregate(out, if resp3 { b'>' } else { b'*' }, items, resp),
            Reply::Map(pairs) => {
                if resp3 {
                    int_line(out, b'%', pairs.len() as i64);
                } else {
                    int_line(out, b'*', 2 * pairs.len() as i64);
                }
                for (k, v) in pairs {
                    k.encode(resp, out);
                    v.encode(resp, out);
                }
            }
            Reply::Double(d) => {
                let text = format_double(*d);
                if resp3 {
                    line(out, b',', text.as_bytes());
                } else {
                    bulk(out, text.as_bytes());
                }
            }
            Reply::Bool(b) => {
                if resp3 {
                    out.put_slice(if *b { b"#t\r\n" } else { b"#f\r\n" });
                } else {
                    out.put_slice(if *b { b":1\r\n" } else { b":0\r\n" });
                }
            }
            Reply::BigNumber(n) => {
                if resp3 {
                    line(out, b'(', n.as_bytes());
                } else {
                    bulk(out, n.as_bytes());
                }
            }
            Reply::Verbatim(fmt, text) => {
                if resp3 {
                    int_line(out, b'=', (text.len() + 4) as i64);
                    out.put_slice(fmt.as_bytes());
                    out.put_u8(b':');
                    out.put_slice(text);
                    out.put_slice(b"\r\n");
                } else {
                    bulk(out, text);
                }
            }
            Reply::Attribute(attrs, reply) => {
                if resp3 {
                    int_line(out, b'|', attrs.len() as i64);
                    for (k, v) in attrs {
                        k.encode(resp, out);
                        v.encode(resp, out);
                    }
                }
                reply.encode(resp, out);
            }
            Reply::Multi(items) => {
                for item in items {
                    item.encode(resp, out);
                }
            }
            Reply::None => {}
            Reply::Raw(bytes) => out.put_slice(bytes),
        }
    }

    /// The wire form as a fresh buffer; convenient in tests and the in-process transport.
    pub fn to_bytes(&self, resp: u8) -> Bytes {
        let mut out = BytesMut::new();
        self.encode(resp, &mut out);
        out.freeze()
    }
}

fn line(out: &mut BytesMut, prefix: u8, text: &[u8]) {
    out.put_u8(prefix);
    // A status or error line cannot hold CR or LF; Redis replaces them with spaces.
    if text.iter().any(|&c| c == b'\r' || c == b'\n') {
        out.extend(
            text.iter()
                .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
    } else {
        out.put_slice(text);
    }
    out.put_slice(b"\r\n");
}

fn int_line(out: &mut BytesMut, prefix: u8, n: i64) {
    out.put_u8(prefix);
    let mut buf = itoa::Buffer::new();
    out.put_slice(buf.format(n).as_bytes());
    out.put_slice(b"\r\n");
}

fn bulk(out: &mut BytesMut, b: &[u8]) {
    int_line(out, b'$', b.len() as i64);
    out.put_slice(b);
    out.put_slice(b"\r\n");
}

/// Writes an array header (`*n`), the same in both protocols, for a reply encoded as it is
/// produced.
pub(crate) fn put_array_len(out: &mut BytesMut, n: u64) {
    int_line(out, b'*', n as i64);
}

/// Writes a bulk string, the same in both protocols, for a reply encoded as it is produced.
pub(crate) fn put_bulk(out: &mut BytesMut, b: &[u8]) {
    bulk(out, b);
}

fn aggregate(out: &mut BytesMut, prefix: u8, items: &[Reply], resp: u8) {
    int_line(out, prefix, items.len() as i64);
    for item in items {
        item.encode(resp, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bytes_keep_what_is_not_utf8() {
        assert_eq!(Reply::err_bytes(b"ERR ok".to_vec()), Reply::err("ERR ok"));
        let r = Reply::err_bytes(b"ERR near '\xff'\r\n".to_vec());
        assert!(r.is_error());
        assert_eq!(&r.to_bytes(2)[..], b"-ERR near '\xff'  \r\n");
        assert_eq!(r.error_text().unwrap(), "ERR near '\u{fffd}'\r\n");
    }

    #[test]
    fn resp2_flattens_resp3_types() {
        let r = Reply::Map(vec![(Reply::bulk("a"), Reply::Double(1.5))]);
        assert_eq!(&r.to_bytes(2)[..], b"*2\r\n$1\r\na\r\n$3\r\n1.5\r\n");
        assert_eq!(&r.to_bytes(3)[..], b"%1\r\n$1\r\na\r\n,1.5\r\n");
        assert_eq!(&Reply::Nil.to_bytes(2)[..], b"$-1\r\n");
        assert_eq!(&Reply::NilArray.to_bytes(3)[..], b"_\r\n");
        assert_eq!(&Reply::Bool(true).to_bytes(2)[..], b":1\r\n");
    }

    #[test]
    fn status_lines_never_break_the_frame() {
        assert_eq!(&Reply::err("ERR a\r\nb").to_bytes(2)[..], b"-ERR a  b\r\n");
    }
}
