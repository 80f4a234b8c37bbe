//! `Connection`: one logical connection to a Redis-compatible server, over TCP (redlab or
//! real Redis) or in-process (an engine with no socket), with the same API either way, so
//! the same test code runs against all of them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::explore::transport::ParkedTransport;
use crate::value::Value;

/// A boxed, sendable future; the transports are used from any tokio runtime flavour.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Moves commands to a server and replies back, in order, one batch at a time.
pub trait Transport: Send + Sync {
    /// Sends every command of the batch, then reads one reply per command. Error replies
    /// come back as `Value::Error`; `Err` means the connection failed.
    fn exchange<'a>(&'a self, commands: Vec<Vec<Vec<u8>>>) -> BoxFuture<'a, Result<Vec<Value>>>;
}

/// A connection; cheap to clone (clones share it, and their batches never interleave).
#[derive(Clone)]
pub struct Connection {
    link: Link,
}

/// The transport underneath. The explorer's own is known by type: its single commands
/// skip the boxed future and the batch vectors of `Transport::exchange`, and reuse their
/// buffers (see `explore::transport`), because the explorer replays every client's
/// commands for each of tens of thousands of schedules.
#[derive(Clone)]
enum Link {
    Any(Arc<dyn Transport>),
    Parked(Arc<ParkedTransport>),
}

/// Turns anything byte-like into a command argument.
pub fn arg(a: impl AsRef<[u8]>) -> Vec<u8> {
    a.as_ref().to_vec()
}

impl Connection {
    pub fn new(transport: Arc<dyn Transport>) -> Connection {
        Connection {
            link: Link::Any(transport),
        }
    }

    /// A logical client's connection under the explorer.
    pub(crate) fn parked(transport: Arc<ParkedTransport>) -> Connection {
        Connection {
            link: Link::Parked(transport),
        }
    }

    fn transport(&self) -> &dyn Transport {
        match &self.link {
            Link::Any(t) => &**t,
            Link::Parked(t) => &**t,
        }
    }

    /// Connects over TCP to `host:port` (RESP2).
    pub async fn tcp(addr: impl tokio::net::ToSocketAddrs) -> Result<Connection> {
        Ok(Connection::new(Arc::new(
            crate::tcp::TcpTransport::connect(addr).await?,
        )))
    }

    /// Runs one command; an error reply becomes `Err(Error::Redis)`.
    pub async fn cmd<A: AsRef<[u8]>>(&self, args: &[A]) -> Result<Value> {
        self.cmd_owned(self.command(args.iter().map(AsRef::as_ref)))
            .await
    }

    /// A command made of `parts`, to send with `cmd_owned` (in reused buffers under the
    /// explorer).
    pub(crate) fn command<'x>(&self, parts: impl IntoIterator<Item = &'x [u8]>) -> Vec<Vec<u8>> {
        match &self.link {
            Link::Any(_) => parts.into_iter().map(<[u8]>::to_vec).collect(),
            Link::Parked(t) => t.command(parts),
        }
    }

    /// `cmd` for a command already built as owned arguments (`command`, `Script::invoke`):
    /// sent as is, without copying every argument again.
    pub(crate) async fn cmd_owned(&self, command: Vec<Vec<u8>>) -> Result<Value> {
        match &self.link {
            Link::Parked(t) => t.one(command).await?.into_result(),
            Link::Any(t) => t
                .exchange(vec![command])
                .await?
                .pop()
                .ok_or_else(|| Error::Protocol("no reply".into()))?
                .into_result(),
        }
    }

    /// Sends raw commands as one batch; each reply is returned as is (errors included).
    pub async fn exchange(&self, commands: Vec<Vec<Vec<u8>>>) -> Result<Vec<Value>> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        self.transport().exchange(commands).await
    }

    /// Runs a batch in one round trip; each reply is returned as is (errors included).
    pub async fn pipeline(&self, pipeline: &Pipeline) -> Result<Vec<Value>> {
        if pipeline.commands.is_empty() {
            return Ok(Vec::new());
        }
        self.transport().exchange(pipeline.commands.clone()).await
    }
}

/// Commands sent together and answered together.
#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    commands: Vec<Vec<Vec<u8>>>,
}

impl Pipeline {
    pub fn new() -> Pipeline {
        Pipeline::default()
    }

    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> &mut Pipeline {
        self.commands.push(args.iter().map(arg).collect());
        self
    }

    pub fn len(&self) -> usize {
        self.commands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}
