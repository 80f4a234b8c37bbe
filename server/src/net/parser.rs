//! The request parser, following Redis's `processMultibulkBuffer` and `processInlineBuffer`.
//!
//! Not a general RESP decoder: a client sends either an array of bulk strings or an inline
//! line, and Redis has precise rules and error texts for everything else (a `*` line whose
//! elements are not `$`, lengths over proto-max-bulk-len, inline lines over 64 KiB,
//! unbalanced quotes). The parser keeps its place between reads, never allocates a declared
//! size up front, and never recurses, so a hostile frame costs only the bytes it sent.

use crate::errors;
use bytes::{Buf, Bytes, BytesMut};

/// Longest inline request, and longest `*`/`$` header line, Redis accepts (PROTO_INLINE_MAX_SIZE).
pub const INLINE_MAX: usize = 64 * 1024;
/// Before AUTH, Redis refuses arrays of more than 10 elements and bulks over 16 KiB.
const UNAUTH_MAX_ARGS: i64 = 10;
const UNAUTH_MAX_BULK: i64 = 16384;

/// A protocol error: the reply text (`ERR Protocol error: ...`); the connection is closed
/// after it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(text: &str) -> Self {
        ProtocolError(text.to_string())
    }
}

/// Incremental parser state for one connection.
#[derive(Debug, Default)]
pub struct RequestParser {
    /// Elements still expected in the current multibulk request (0 = between requests).
    remaining: i64,
    /// Length of the bulk being read, once its `$` line was parsed.
    bulk_len: Option<usize>,
    args: Vec<Bytes>,
    /// Bytes of `args` (taken out of the read buffer, still part of the client's query).
    held: usize,
}

/// What one call to `next` found.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// A complete command.
    Command(Vec<Bytes>),
    /// An empty request (`*0`, `*-1`, a blank inline line): nothing to run, nothing to reply.
    Empty,
    /// More bytes are needed.
    Incomplete,
}

impl RequestParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of a request in progress that no longer sit in the read buffer: with it, the
    /// client's query buffer size as Redis counts it (client-query-buffer-limit, CLIENT LIST).
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Parses the next request from the front of `buf`, consuming what it used.
    /// `max_bulk` is proto-max-bulk-len; `authenticated` selects Redis's stricter limits for
    /// clients that have not authenticated yet.
    pub fn next(
        &mut self,
        buf: &mut BytesMut,
        max_bulk: u64,
        authenticated: bool,
    ) -> Result<Parsed, ProtocolError> {
        if self.remaining == 0 {
            if buf.is_empty() {
                return Ok(Parsed::Incomplete);
            }
            if buf[0] != b'*' {
                return inline(buf);
            }
            let Some(end) = line_end(buf, INLINE_MAX, errors::PROTOCOL_MBULK_COUNT_TOO_BIG)? else {
                return Ok(Parsed::Incomplete);
            };
            let n = crate::numfmt::parse_i64(&buf[1..end]);
            buf.advance(end + 2);
            let n = match n {
                Some(n) if n <= i32::MAX as i64 => n,
                _ => return Err(ProtocolError::new(errors::PROTOCOL_MULTIBULK_LENGTH)),
            };
            if n > UNAUTH_MAX_ARGS && !authenticated {
                return Err(ProtocolError::new(errors::PROTOCOL_UNAUTH_MULTIBULK_LENGTH));
            }
            if n <= 0 {
                return Ok(Parsed::Empty);
            }
            self.remaining = n;
            // Capacity grows with the bytes that arrive, not with the declared count.
            self.args = Vec::with_capacity(n.min(1024) as usize);
        }
        while self.remaining > 0 {
            let len = match self.bulk_len {
                Some(len) => len,
                None => {
                    // Like Redis, the whole header line must be there before its first byte
                    // is judged.
                    let Some(end) = line_end(buf, INLINE_MAX, errors::PROTOCOL_BULK_COUNT_TOO_BIG)?
                    else {
                        return Ok(Parsed::Incomplete);
                    };
                    let line = &buf[..end];
                    if line.first() != Some(&b'$') {
                        let got = line.first().map_or(' ', |&c| c as char);
                        return Err(ProtocolError(errors::protocol_expected_bulk(got)));
                    }
                    let len = match crate::numfmt::parse_i64(&line[1..]) {
                        Some(l) if l >= 0 && (l as u64) <= max_bulk => l,
                        _ => return Err(ProtocolError::new(errors::PROTOCOL_BULK_LENGTH)),
                    };
                    buf.advance(end + 2);
                    if len > UNAUTH_MAX_BULK && !authenticated {
                        return Err(ProtocolError::new(errors::PROTOCOL_UNAUTH_BULK_LENGTH));
                    }
                    self.bulk_len = Some(len as usize);
                    len as usize
                }
            };
            if buf.len() < len + 2 {
                return Ok(Parsed::Incomplete);
            }
            let arg = buf.split_to(len).freeze();
            // Like Redis, the two bytes after the data are skipped, not checked.
            buf.advance(2);
            self.held += arg.len();
            self.args.push(arg);
            self.bulk_len = None;
            self.remaining -= 1;
        }
        self.held = 0;
        Ok(Parsed::Command(std::mem::take(&mut self.args)))
    }
}

/// The length of the `\r\n`-terminated line at the front of `buf` (without the terminator),
/// once all of it arrived. The caller reads the line in place and then advances past it:
/// a header line is a few bytes, not worth a split of the buffer (a reference count).
fn line_end(buf: &[u8], max: usize, too_big: &str) -> Result<Option<usize>, ProtocolError> {
    match memchr(b'\r', buf) {
        None if buf.len() > max => Err(ProtocolError::new(too_big)),
        // The '\n' after the '\r' has not arrived yet.
        None => Ok(None),
        Some(pos) if pos + 1 >= buf.len() => Ok(None),
        Some(pos) => Ok(Some(pos)),
    }
}

/// Finds `c` the way Redis's `strchr` on the query buffer does: the search stops at the
/// first NUL byte, so a line with a NUL before its terminator is "not complete yet" (and
/// eventually too big), exactly as Redis treats it.
fn memchr(c: u8, b: &[u8]) -> Option<usize> {
    memchr::memchr2(c, 0, b).filter(|&i| b[i] == c)
}

/// An inline command: one line, split like `sdssplitargs` (quotes and escapes).
fn inline(buf: &mut BytesMut) -> Result<Parsed, ProtocolError> {
    let Some(nl) = memchr(b'\n', buf) else {
        if buf.len() > INLINE_MAX {
            return Err(ProtocolError::new(errors::PROTOCOL_INLINE_TOO_BIG));
        }
        return Ok(Parsed::Incomplete);
    };
    let mut line = buf.split_to(nl + 1);
    line.truncate(nl);
    if line.last() == Some(&b'\r') {
        line.truncate(nl - 1);
    }
    match split_args(&line) {
        Some(args) if args.is_empty() => Ok(Parsed::Empty),
        Some(args) => Ok(Parsed::Command(args.into_iter().map(Bytes::from).collect())),
        None => Err(ProtocolError::new(errors::PROTOCOL_UNBALANCED_QUOTES)),
    }
}

/// Redis's `sdssplitargs`: whitespace-separated words, `"..."` with C escapes and `\xHH`,
/// `'...'` with `\'`. A closing quote must be followed by a space or the end. None when the
/// quotes do not balance.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n {
            return Some(out);
        }
        let mut cur = Vec::new();
        let mut in_dq = false;
        let mut in_sq = false;
        loop {
            if in_dq {
                if i >= n {
                    return None;
                }
                if line[i] == b'\\'
                    && i + 3 < n
                    && line[i + 1] == b'x'
                    && is_hex(line[i + 2])
                    && is_hex(line[i + 3])
                {
                    cur.push(hex(line[i + 2]) * 16 + hex(line[i + 3]));
                    i += 3;
                } else if line[i] == b'\\' && i + 1 < n {
                    i += 1;
                    cur.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        c => c,
                    });
                } else if line[i] == b'"' {
                    if i + 1 < n && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(line[i]);
                }
            } else if in_sq {
                // Ends like the double-quoted branch above, kept apart on purpose: Redis's
                // sdssplitargs gives single quotes only the \' escape, and the two must not
                // drift into one rule.
                if i >= n {
                    return None;
                }
                if line[i] == b'\\' && i + 1 < n && line[i + 1] == b'\'' {
                    i += 1;
                    cur.push(b'\'');
                } else if line[i] == b'\'' {
                    if i + 1 < n && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(line[i]);
                }
            } else {
                if i >= n {
                    break;
                }
                match line[i] {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        i += 1;
                        break;
                    }
                    b'"' => in_dq = true,
                    b'\'' => in_sq = true,
                    c => cur.push(c),
                }
            }
            i += 1;
        }
        out.push(cur);
    }
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn hex(c: u8) -> u8 {
    (c as char).to_digit(16).unwrap_or(0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Result<Vec<Parsed>, ProtocolError> {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match p.next(&mut buf, 512 * 1024 * 1024, true)? {
                Parsed::Incomplete => return Ok(out),
                x => out.push(x),
            }
        }
    }

    fn cmd(args: &[&str]) -> Parsed {
        Parsed::Command(
            args.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect(),
        )
    }

    #[test]
    fn multibulk_and_inline() {
        assert_eq!(
            parse_all(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").unwrap(),
            vec![cmd(&["GET", "k"])]
        );
        assert_eq!(
            parse_all(b"PING\r\nSET a \"b c\"\n").unwrap(),
            vec![cmd(&["PING"]), cmd(&["SET", "a", "b c"])]
        );
        assert_eq!(
            parse_all(b"*0\r\n*-5\r\n").unwrap(),
            vec![Parsed::Empty, Parsed::Empty]
        );
    }

    #[test]
    fn byte_at_a_time() {
        let frame = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
        let mut p = RequestParser::new();
        let mut buf = BytesMut::new();
        let mut got = None;
        for &b in frame.iter() {
            buf.extend_from_slice(&[b]);
            if let Parsed::Command(c) = p.next(&mut buf, 1 << 29, true).unwrap() {
                got = Some(c);
            }
        }
        assert_eq!(got.unwrap().len(), 3);
    }

    #[test]
    fn redis_protocol_errors() {
        let err = |b: &[u8]| parse_all(b).unwrap_err().0;
        assert_eq!(
            err(b"*1\r\n$99999999999\r\n"),
            "ERR Protocol error: invalid bulk length"
        );
        assert_eq!(
            err(b"*3\r\nfoo\r\n"),
            "ERR Protocol error: expected '$', got 'f'"
        );
        assert!(
            parse_all(b"*3\r\nfoo").unwrap().is_empty(),
            "waits for the line end, as Redis"
        );
        assert_eq!(
            err(b"*1\r\n*1\r\n"),
            "ERR Protocol error: expected '$', got '*'"
        );
        assert_eq!(
            err(b"*abc\r\n"),
            "ERR Protocol error: invalid multibulk length"
        );
        assert_eq!(
            err(b"SET \"a\r\n"),
            "ERR Protocol error: unbalanced quotes in request"
        );
        assert_eq!(
            err(&vec![b'a'; INLINE_MAX + 10]),
            "ERR Protocol error: too big inline request"
        );
    }

    #[test]
    fn huge_declared_count_allocates_nothing_up_front() {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*2147483647\r\n"[..]);
        assert_eq!(p.next(&mut buf, 1 << 29, true).unwrap(), Parsed::Incomplete);
        assert!(p.args.capacity() <= 1024);
    }
}
