//! Feature `redis-rs`: run code written against redis-rs's `ConnectionLike` (sync) and
//! `aio::ConnectionLike` (async) on an in-process redlab engine, with no socket.
//!
//! redis-rs hands a connection packed RESP commands; the adapter parses them with redlab's
//! own request parser, runs them on the engine and parses the RESP reply bytes with
//! redis-rs's parser, so the values are exactly what a TCP connection would produce.

use std::io::Cursor;

use bytes::{Bytes, BytesMut};
use redis::{RedisResult, Value};
use redlab_server::protocol::{Parsed, RequestParser};
use redlab_server::{Config, ConnId, Engine};

use crate::inprocess::{InProcess, RawConnection};

fn split_commands(packed: &[u8]) -> RedisResult<Vec<Vec<Bytes>>> {
    let mut parser = RequestParser::new();
    let mut buf = BytesMut::from(packed);
    let mut out = Vec::new();
    loop {
        match parser.next(&mut buf, u64::MAX, true) {
            Ok(Parsed::Command(args)) => out.push(args),
            Ok(Parsed::Empty) => {}
            Ok(Parsed::Incomplete) => return Ok(out),
            Err(e) => {
                return Err(redis::RedisError::from((
                    redis::ErrorKind::Client,
                    "bad packed command",
                    e.0,
                )))
            }
        }
    }
}

fn parse_values(bytes: &[u8], count: usize) -> RedisResult<Vec<Value>> {
    let mut parser = redis::Parser::new();
    let mut cursor = Cursor::new(bytes);
    (0..count)
        .map(|_| parser.parse_value(&mut cursor))
        .collect()
}

/// Picks `count` replies after `offset`; an error among the skipped ones (a MULTI's queued
/// replies) fails the whole call, as a real connection does.
fn select(values: Vec<Value>, offset: usize, count: usize) -> RedisResult<Vec<Value>> {
    let mut out = Vec::with_capacity(count);
    for (i, v) in values.into_iter().enumerate() {
        if i < offset {
            v.extract_error()?;
        } else if out.len() < count {
            out.push(v);
        }
    }
    Ok(out)
}

/// A synchronous redis-rs connection that owns an engine: every call runs in the caller's
/// thread.
pub struct EngineConnection {
    engine: Engine,
    conn: ConnId,
}

impl EngineConnection {
    pub fn new(config: Config) -> EngineConnection {
        let mut engine = Engine::new(config);
        let conn = engine.connect();
        EngineConnection { engine, conn }
    }

    /// The engine, to inspect state or move its clock between calls.
    pub fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }

    fn run(&mut self, packed: &[u8]) -> RedisResult<(Vec<u8>, usize)> {
        let commands = split_commands(packed)?;
        let n = commands.len();
        let mut out = BytesMut::new();
        for args in commands {
            let reply = self.engine.execute_args(self.conn, args);
            reply.encode(self.engine.resp(self.conn), &mut out);
        }
        Ok((out.to_vec(), n))
    }
}

impl redis::ConnectionLike for EngineConnection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let (bytes, _) = self.run(cmd)?;
        let mut values = parse_values(&bytes, 1)?;
        values.remove(0).extract_error()
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let (bytes, n) = self.run(cmd)?;
        select(parse_values(&bytes, n)?, offset, count)
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

/// An async redis-rs connection to an `InProcess` engine.
pub struct AsyncEngineConnection {
    raw: RawConnection,
}

impl AsyncEngineConnection {
    pub async fn new(engine: &InProcess) -> AsyncEngineConnection {
        AsyncEngineConnection {
            raw: engine.connect_raw().await,
        }
    }

    async fn run(&self, packed: &[u8]) -> RedisResult<Vec<Value>> {
        let commands = owned_commands(packed)?;
        let n = commands.len();
        let bytes = self.raw.exchange(commands).await.map_err(|e| {
            redis::RedisError::from((redis::ErrorKind::Io, "in-process engine", e.to_string()))
        })?;
        parse_values(&bytes, n)
    }
}

/// The commands in packed RESP, each an owned list of arguments, as a connection sends them.
fn owned_commands(packed: &[u8]) -> RedisResult<Vec<Vec<Vec<u8>>>> {
    Ok(split_commands(packed)?
        .into_iter()
        .map(|c| c.into_iter().map(|a| a.to_vec()).collect())
        .collect())
}

/// redis-rs's async `ConnectionLike` for a type with an `async fn run(&self, packed: &[u8])
/// -> RedisResult<Vec<Value>>` that runs the packed commands and returns their replies: a
/// single command answers its one reply, a pipeline the replies `select` keeps. (A macro, not
/// a blanket impl: `ConnectionLike` is redis-rs's trait and the types are ours one by one.)
macro_rules! connection_like_via_run {
    ($ty:ty) => {
        impl redis::aio::ConnectionLike for $ty {
            fn req_packed_command<'a>(
                &'a mut self,
                cmd: &'a redis::Cmd,
            ) -> redis::RedisFuture<'a, Value> {
                Box::pin(async move {
                    let mut values = self.run(&cmd.get_packed_command()).await?;
                    if values.is_empty() {
                        return Err(redis::RedisError::from((
                            redis::ErrorKind::Client,
                            "empty command",
                        )));
                    }
                    values.remove(0).extract_error()
                })
            }

            fn req_packed_commands<'a>(
                &'a mut self,
                pipeline: &'a redis::Pipeline,
                offset: usize,
                count: usize,
            ) -> redis::RedisFuture<'a, Vec<Value>> {
                Box::pin(async move {
                    select(
                        self.run(&pipeline.get_packed_pipeline()).await?,
                        offset,
                        count,
                    )
                })
            }

            fn get_db(&self) -> i64 {
                0
            }
        }
    };
}

connection_like_via_run!(AsyncEngineConnection);

/// A redis-rs async connection over any redlab [`Connection`](crate::Connection): the
/// explorer's scheduled connections (`Scenario::redis_client`), an in-process engine, or
/// TCP. Cheap to clone, like redis-rs's `MultiplexedConnection`: clones share the
/// connection.
///
/// Each command redis-rs packs is one command on the connection; a pipeline's commands go
/// as one batch (under the explorer, each is a scheduling point, and a MULTI/EXEC block is
/// atomic on the server as it is on Redis). Replies go through redis-rs's own parser, so
/// errors come out as redis-rs reports them (NOSCRIPT as `ServerErrorKind::NoScript`, so
/// `Script::invoke_async` loads the script and retries), and a closed connection is an I/O
/// error.
#[derive(Clone)]
pub struct RedisConnection {
    conn: crate::Connection,
}

impl RedisConnection {
    pub fn new(conn: crate::Connection) -> RedisConnection {
        RedisConnection { conn }
    }

    /// The redlab connection underneath.
    pub fn connection(&self) -> &crate::Connection {
        &self.conn
    }

    async fn run(&self, packed: &[u8]) -> RedisResult<Vec<Value>> {
        let commands = owned_commands(packed)?;
        let n = commands.len();
        let values = self
            .conn
            .exchange(commands)
            .await
            .map_err(|e| redis::RedisError::from(std::io::Error::other(e.to_string())))?;
        let mut bytes = Vec::new();
        for v in &values {
            encode_value(v, &mut bytes);
        }
        parse_values(&bytes, n)
    }
}

impl From<crate::Connection> for RedisConnection {
    fn from(conn: crate::Connection) -> RedisConnection {
        RedisConnection::new(conn)
    }
}

connection_like_via_run!(RedisConnection);

/// A reply as RESP bytes (RESP3 types in their RESP3 form), for redis-rs's parser.
fn encode_value(v: &crate::Value, out: &mut Vec<u8>) {
    use crate::Value as V;
    use std::io::Write;
    let bulk = |out: &mut Vec<u8>, b: &[u8]| {
        let _ = write!(out, "${}\r\n", b.len());
        out.extend_from_slice(b);
        out.extend_from_slice(b"\r\n");
    };
    match v {
        V::Nil => out.extend_from_slice(b"$-1\r\n"),
        V::Int(n) => {
            let _ = write!(out, ":{}\r\n", n);
        }
        V::Bulk(b) => bulk(out, b),
        V::Status(s) => {
            let _ = write!(out, "+{}\r\n", s);
        }
        V::Error { code, message } => {
            if message.is_empty() {
                let _ = write!(out, "-{}\r\n", code);
            } else {
                let _ = write!(out, "-{} {}\r\n", code, message);
            }
        }
        V::Array(items) | V::Set(items) | V::Push(items) => {
            let tag = match v {
                V::Set(_) => '~',
                V::Push(_) => '>',
                _ => '*',
            };
            let _ = write!(out, "{}{}\r\n", tag, items.len());
            for i in items {
                encode_value(i, out);
            }
        }
        V::Map(pairs) => {
            let _ = write!(out, "%{}\r\n", pairs.len());
            for (k, v) in pairs {
                encode_value(k, out);
                encode_value(v, out);
            }
        }
        V::Double(d) => {
            let text = if d.is_nan() {
                "nan".to_string()
            } else if d.is_infinite() {
                if *d > 0.0 { "inf" } else { "-inf" }.to_string()
            } else {
                d.to_string()
            };
            let _ = write!(out, ",{}\r\n", text);
        }
        V::Bool(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
        V::BigNumber(s) => {
            let _ = write!(out, "({}\r\n", s);
        }
        V::Verbatim { format, text } => {
            let _ = write!(out, "={}\r\n{}:", text.len() + 4, format);
            out.extend_from_slice(text);
            out.extend_from_slice(b"\r\n");
        }
    }
}
