//! A small blocking RESP2 client, for what the cluster's controller asks of its nodes over
//! their sockets (moving keys between engines that live on different threads).

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Resp>>),
}

/// A connection to one node.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

/// How long a controller request may wait (a node busy with a script answers late).
const WAIT: Duration = Duration::from_secs(30);

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("redlab: bad reply: {what}"),
    )
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(WAIT))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream),
        })
    }

    /// Connects within `timeout`, which also bounds every later read and write.
    pub fn connect_timeout(addr: SocketAddr, timeout: Duration) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream),
        })
    }

    /// Sends one command and reads its reply.
    pub fn call(&mut self, args: &[&[u8]]) -> io::Result<Resp> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.reader.get_mut().write_all(&out)?;
        self.read()
    }

    /// Like `call`, with an error reply turned into an `io::Error`.
    pub fn ok(&mut self, args: &[&[u8]]) -> io::Result<Resp> {
        match self.call(args)? {
            Resp::Error(e) => Err(io::Error::other(format!(
                "redlab: {} refused: {e}",
                String::from_utf8_lossy(args[0])
            ))),
            r => Ok(r),
        }
    }

    fn line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "redlab: the node closed the connection",
            ));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }

    fn read(&mut self) -> io::Result<Resp> {
        let line = self.line()?;
        let (kind, rest) = line.split_at(1.min(line.len()));
        let num = || rest.parse::<i64>().map_err(|_| bad(&line));
        Ok(match kind {
            "+" => Resp::Status(rest.to_string()),
            "-" => Resp::Error(rest.to_string()),
            ":" => Resp::Int(num()?),
            "$" => {
                let n = num()?;
                if n < 0 {
                    Resp::Bulk(None)
                } else {
                    let mut buf = vec![0; n as usize + 2];
                    std::io::Read::read_exact(&mut self.reader, &mut buf)?;
                    buf.truncate(n as usize);
                    Resp::Bulk(Some(buf))
                }
            }
            "*" => {
                let n = num()?;
                if n < 0 {
                    Resp::Array(None)
                } else {
                    let mut items = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        items.push(self.read()?);
                    }
                    Resp::Array(Some(items))
                }
            }
            _ => return Err(bad(&line)),
        })
    }
}
