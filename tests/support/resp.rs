//! Raw RESP frames as a server sent them, for byte-for-byte comparison.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Length of the first complete RESP2/RESP3 frame in `b`, or None if more bytes are needed.
pub fn frame_len(b: &[u8]) -> Option<usize> {
    let line_end = b.windows(2).position(|w| w == b"\r\n")?;
    let head = std::str::from_utf8(&b[1..line_end]).ok();
    let after = line_end + 2;
    match b[0] {
        b'+' | b'-' | b':' | b',' | b'#' | b'_' | b'(' => Some(after),
        b'$' | b'=' | b'!' => {
            let n: i64 = head?.parse().ok()?;
            if n < 0 {
                return Some(after);
            }
            let end = after + n as usize + 2;
            (b.len() >= end).then_some(end)
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n: i64 = head?.parse().ok()?;
            if n < 0 {
                return Some(after);
            }
            let count = if matches!(b[0], b'%' | b'|') {
                2 * n
            } else {
                n
            };
            let mut pos = after;
            for _ in 0..count {
                pos += frame_len(&b[pos..])?;
            }
            if b[0] == b'|' {
                // An attribute precedes the reply it annotates.
                pos += frame_len(&b[pos..])?;
            }
            Some(pos)
        }
        _ => Some(after),
    }
}

/// Splits an aggregate frame into its header line and its element frames.
pub fn elements(frame: &[u8]) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    if !matches!(frame.first(), Some(b'*' | b'~' | b'%' | b'>')) {
        return None;
    }
    let line_end = frame.windows(2).position(|w| w == b"\r\n")? + 2;
    let mut items = Vec::new();
    let mut pos = line_end;
    while pos < frame.len() {
        let n = frame_len(&frame[pos..])?;
        items.push(frame[pos..pos + n].to_vec());
        pos += n;
    }
    Some((frame[..line_end].to_vec(), items))
}

/// Sorts an aggregate's elements (pairs, for a map) so unordered replies compare equal.
pub fn sorted(frame: &[u8]) -> Vec<u8> {
    let Some((head, items)) = elements(frame) else {
        return frame.to_vec();
    };
    let mut out = head;
    if frame[0] == b'%' {
        let mut pairs: Vec<Vec<u8>> = items.chunks(2).map(|c| c.concat()).collect();
        pairs.sort();
        pairs.iter().for_each(|p| out.extend_from_slice(p));
    } else {
        let mut items = items;
        items.sort();
        items.iter().for_each(|i| out.extend_from_slice(i));
    }
    out
}

/// A blocking connection that sends commands and reads raw reply frames.
pub struct RawConn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl RawConn {
    pub fn connect(addr: std::net::SocketAddr) -> RawConn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        RawConn {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, args: &[Vec<u8>]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.send_raw(&out);
    }

    /// Writes bytes; a write error is ignored on purpose: a server may close the connection
    /// before a large hostile input is fully written (it answered a protocol error), and the
    /// test then reads that reply.
    /// Sends one command of text arguments and shows its reply (as `show` does), waiting
    /// up to `wait`; panics when none comes.
    pub fn call(&mut self, args: &[&str], wait: Duration) -> String {
        self.send_strs(args);
        show(
            &self
                .read_frame(wait)
                .unwrap_or_else(|| panic!("no answer to {args:?}")),
        )
    }

    /// Sends one command given as text arguments.
    pub fn send_strs(&mut self, args: &[&str]) {
        self.send(
            &args
                .iter()
                .map(|a| a.as_bytes().to_vec())
                .collect::<Vec<_>>(),
        );
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// Reads one reply frame; None when the connection closed or timed out.
    pub fn read_frame(&mut self, timeout: Duration) -> Option<Vec<u8>> {
        self.stream.set_read_timeout(Some(timeout)).unwrap();
        loop {
            if !self.buf.is_empty() {
                if let Some(n) = frame_len(&self.buf) {
                    return Some(self.buf.drain(..n).collect());
                }
            }
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

/// A frame in readable form for failure messages.
pub fn show(frame: &[u8]) -> String {
    let mut s = String::new();
    for &c in frame {
        match c {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            c if c.is_ascii_graphic() || c == b' ' => s.push(c as char),
            c => s.push_str(&format!("\\x{:02x}", c)),
        }
    }
    s
}
