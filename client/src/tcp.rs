//! The TCP transport: any RESP server, redlab or real Redis.

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use crate::codec;
use crate::connection::{BoxFuture, Transport};
use crate::error::{Error, Result};
use crate::value::Value;

struct Stream {
    socket: TcpStream,
    buf: BytesMut,
    /// Set once the connection failed: later calls fail fast instead of reading garbage.
    broken: bool,
}

pub struct TcpTransport {
    stream: Mutex<Stream>,
}

impl TcpTransport {
    pub async fn connect(addr: impl tokio::net::ToSocketAddrs) -> Result<TcpTransport> {
        let socket = TcpStream::connect(addr).await.map_err(Error::io)?;
        let _ = socket.set_nodelay(true);
        Ok(TcpTransport {
            stream: Mutex::new(Stream {
                socket,
                buf: BytesMut::with_capacity(16 * 1024),
                broken: false,
            }),
        })
    }
}

impl Transport for TcpTransport {
    fn exchange<'a>(&'a self, commands: Vec<Vec<Vec<u8>>>) -> BoxFuture<'a, Result<Vec<Value>>> {
        Box::pin(async move {
            let mut s = self.stream.lock().await;
            if s.broken {
                return Err(Error::Connection(
                    "connection closed after an earlier failure".into(),
                ));
            }
            let result = exchange(&mut s, &commands).await;
            if result.is_err() {
                s.broken = true;
            }
            result
        })
    }
}

async fn exchange(s: &mut Stream, commands: &[Vec<Vec<u8>>]) -> Result<Vec<Value>> {
    let mut out = BytesMut::new();
    for c in commands {
        codec::encode_command(c, &mut out);
    }
    s.socket.write_all(&out).await.map_err(Error::io)?;
    let mut replies = Vec::with_capacity(commands.len());
    while replies.len() < commands.len() {
        if let Some(v) = codec::decode(&mut s.buf, 2)? {
            replies.push(v);
            continue;
        }
        let n = s.socket.read_buf(&mut s.buf).await.map_err(Error::io)?;
        if n == 0 {
            return Err(Error::Connection("server closed the connection".into()));
        }
    }
    Ok(replies)
}
