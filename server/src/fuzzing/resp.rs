//! A blocking RESP client just big enough for the differential fuzzer: send a command,
//! read one reply, and tell a closed connection (a crash) from a silent one (a hang).

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One reply, RESP2 or RESP3.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Status(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Vec<u8>),
    NilBulk,
    Array(Vec<Frame>),
    NilArray,
    /// RESP3 `%`, `~`, `|`, `>` (as pairs flattened for maps), `,`, `#`, `_`, `(`, `=`.
    Map(Vec<Frame>),
    Set(Vec<Frame>),
    Attribute(Vec<Frame>),
    Push(Vec<Frame>),
    Double(Vec<u8>),
    Bool(bool),
    Null,
    BigNumber(Vec<u8>),
    Verbatim(Vec<u8>),
}

impl Frame {
    /// The reply's type, as a client sees it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Frame::Status(_) => "status",
            Frame::Error(_) => "error",
            Frame::Int(_) => "integer",
            Frame::Bulk(_) => "bulk",
            Frame::NilBulk => "nil bulk",
            Frame::Array(_) => "array",
            Frame::NilArray => "nil array",
            Frame::Map(_) => "map",
            Frame::Set(_) => "set",
            Frame::Attribute(_) => "attribute",
            Frame::Push(_) => "push",
            Frame::Double(_) => "double",
            Frame::Bool(_) => "boolean",
            Frame::Null => "null",
            Frame::BigNumber(_) => "big number",
            Frame::Verbatim(_) => "verbatim",
        }
    }

    /// A short readable form for reports; long strings are cut.
    pub fn show(&self) -> String {
        fn text(b: &[u8]) -> String {
            let s = String::from_utf8_lossy(&b[..b.len().min(120)]).into_owned();
            let s = format!("{s:?}");
            if b.len() > 120 {
                format!("{s}...({} bytes)", b.len())
            } else {
                s
            }
        }
        fn list(items: &[Frame]) -> String {
            let shown: Vec<String> = items.iter().take(12).map(Frame::show).collect();
            let more = if items.len() > 12 {
                format!(", ...{} more", items.len() - 12)
            } else {
                String::new()
            };
            format!("[{}{more}]", shown.join(", "))
        }
        match self {
            Frame::Status(s) => format!("+{}", String::from_utf8_lossy(s).escape_debug()),
            Frame::Error(s) => format!("-{}", String::from_utf8_lossy(s).escape_debug()),
            Frame::Int(n) => format!(":{n}"),
            Frame::Bulk(b) => text(b),
            Frame::NilBulk => "(nil bulk)".into(),
            Frame::NilArray => "(nil array)".into(),
            Frame::Array(a) => list(a),
            Frame::Map(a) => format!("map{}", list(a)),
            Frame::Set(a) => format!("set{}", list(a)),
            Frame::Attribute(a) => format!("attr{}", list(a)),
            Frame::Push(a) => format!("push{}", list(a)),
            Frame::Double(d) => format!(",{}", String::from_utf8_lossy(d)),
            Frame::Bool(b) => format!("#{b}"),
            Frame::Null => "_".into(),
            Frame::BigNumber(d) => format!("({}", String::from_utf8_lossy(d)),
            Frame::Verbatim(b) => format!("={}", text(b)),
        }
    }

    /// The same reply with every array's elements sorted, for commands whose order is
    /// unspecified.
    pub fn sorted(&self) -> Frame {
        match self {
            Frame::Array(a) | Frame::Set(a) => {
                let mut a: Vec<Frame> = a.iter().map(Frame::sorted).collect();
                a.sort_by_key(Frame::show);
                Frame::Array(a)
            }
            other => other.clone(),
        }
    }
}

/// What went wrong reading a reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// The server closed the connection (or reset it).
    Closed,
    /// No complete reply within the timeout.
    Timeout,
    /// Bytes that are not RESP.
    Garbage(String),
}

pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    pub fn connect(addr: SocketAddr, timeout: Duration) -> std::io::Result<Conn> {
        let s = TcpStream::connect_timeout(&addr, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_nodelay(true)?;
        Ok(Conn {
            writer: s.try_clone()?,
            reader: BufReader::new(s),
        })
    }

    pub fn send(&mut self, args: &[Vec<u8>]) -> Result<(), ReadError> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).map_err(|_| ReadError::Closed)
    }

    pub fn call(&mut self, args: &[Vec<u8>]) -> Result<Frame, ReadError> {
        self.send(args)?;
        self.read()
    }

    pub fn read(&mut self) -> Result<Frame, ReadError> {
        let line = self.line()?;
        let (&t, rest) = line
            .split_first()
            .ok_or_else(|| ReadError::Garbage("empty line".into()))?;
        let text = || String::from_utf8_lossy(rest).into_owned();
        let num = || {
            text()
                .parse::<i64>()
                .map_err(|_| ReadError::Garbage(format!("bad length {:?}", text())))
        };
        Ok(match t {
            b'+' => Frame::Status(rest.to_vec()),
            b'-' => Frame::Error(rest.to_vec()),
            b':' => Frame::Int(num()?),
            b'$' => match num()? {
                n if n < 0 => Frame::NilBulk,
                n => Frame::Bulk(self.bulk(n as usize)?),
            },
            b'=' => Frame::Verbatim(self.bulk(num()? as usize)?),
            b'!' => Frame::Error(self.bulk(num()? as usize)?),
            b'*' => match num()? {
                n if n < 0 => Frame::NilArray,
                n => Frame::Array(self.items(n as usize)?),
            },
            b'%' => Frame::Map(self.items(2 * num()? as usize)?),
            b'|' => Frame::Attribute(self.items(2 * num()? as usize)?),
            b'~' => Frame::Set(self.items(num()? as usize)?),
            b'>' => Frame::Push(self.items(num()? as usize)?),
            b',' => Frame::Double(rest.to_vec()),
            b'#' => Frame::Bool(rest == b"t"),
            b'_' => Frame::Null,
            b'(' => Frame::BigNumber(rest.to_vec()),
            _ => {
                return Err(ReadError::Garbage(format!(
                    "unknown type byte {:?}",
                    t as char
                )))
            }
        })
    }

    fn items(&mut self, n: usize) -> Result<Vec<Frame>, ReadError> {
        (0..n).map(|_| self.read()).collect()
    }

    fn bulk(&mut self, n: usize) -> Result<Vec<u8>, ReadError> {
        let mut b = vec![0; n + 2];
        self.reader.read_exact(&mut b).map_err(io_error)?;
        if !b.ends_with(b"\r\n") {
            return Err(ReadError::Garbage("bulk without CRLF".into()));
        }
        b.truncate(n);
        Ok(b)
    }

    fn line(&mut self) -> Result<Vec<u8>, ReadError> {
        let mut line = Vec::new();
        let n = self.reader.read_until(b'\n', &mut line).map_err(io_error)?;
        if n == 0 {
            return Err(ReadError::Closed);
        }
        if !line.ends_with(b"\r\n") {
            return Err(ReadError::Garbage(format!(
                "line without CRLF: {:?}",
                String::from_utf8_lossy(&line)
            )));
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }
}

fn io_error(e: std::io::Error) -> ReadError {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => ReadError::Timeout,
        ErrorKind::UnexpectedEof => ReadError::Closed,
        _ => ReadError::Closed,
    }
}
