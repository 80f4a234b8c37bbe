//! Per-connection state: selected db, protocol, name, transaction, subscriptions, output.

use std::collections::VecDeque;

use bytes::Bytes;
use foldhash::fast::FixedState;
use indexmap::IndexSet;

use crate::reply::Reply;

/// Identifies a connection to the engine; also its CLIENT ID.
pub type ConnId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    Skip,
    /// Set by SKIP; becomes `On` after the next command.
    SkipNext,
}

/// A queued MULTI transaction.
#[derive(Debug, Default)]
pub struct MultiState {
    pub queue: Vec<Vec<Bytes>>,
    /// A queued command was refused (unknown, wrong arity, ...): EXEC answers EXECABORT.
    pub aborted: bool,
}

/// A command waiting for data (BLPOP and friends).
#[derive(Debug)]
pub struct Blocked {
    pub db: usize,
    pub keys: Vec<Vec<u8>>,
    /// Absolute deadline in Unix ms; None waits forever.
    pub deadline: Option<i64>,
    /// The command, run again when one of its keys is ready.
    pub args: Vec<Bytes>,
    /// What the client gets on timeout (a null array or a null bulk string).
    pub timeout_reply: Reply,
}

#[derive(Debug)]
pub struct Session {
    pub id: ConnId,
    pub db: usize,
    pub resp: u8,
    pub name: Option<Vec<u8>>,
    pub lib_name: Option<Vec<u8>>,
    pub lib_ver: Option<Vec<u8>>,
    pub authenticated: bool,
    pub addr: String,
    pub laddr: String,
    pub created_ms: i64,
    pub last_interaction_ms: i64,
    pub last_command: std::borrow::Cow<'static, str>,
    pub multi: Option<MultiState>,
    /// (db, key) pairs under WATCH.
    pub watched: Vec<(usize, Vec<u8>)>,
    /// A watched key was modified: the next EXEC fails.
    pub watch_dirty: bool,
    pub channels: IndexSet<Vec<u8>, FixedState>,
    pub patterns: IndexSet<Vec<u8>, FixedState>,
    /// Shard channels (SSUBSCRIBE); counted apart from the others, as Redis does.
    pub shard_channels: IndexSet<Vec<u8>, FixedState>,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    pub no_touch: bool,
    pub monitor: bool,
    pub blocked: Option<Blocked>,
    /// Replies produced outside this connection's own request: pub/sub messages, MONITOR
    /// lines, the late reply of a blocked command. The shell drains it.
    pub outbox: VecDeque<Reply>,
    /// The connection must be closed after its pending output is written (QUIT, CLIENT KILL).
    pub close_requested: bool,
    /// Set by a fault: hold this connection's replies back this long (see faults.rs).
    pub fault_delay: Option<std::time::Duration>,
    /// Set by a fault: send only this many bytes of the last reply, then close.
    pub fault_truncate: Option<usize>,
}

impl Session {
    pub fn new(id: ConnId, now_ms: i64, authenticated: bool) -> Session {
        Session {
            id,
            db: 0,
            resp: 2,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated,
            addr: "127.0.0.1:0".into(),
            laddr: "127.0.0.1:0".into(),
            created_ms: now_ms,
            last_interaction_ms: now_ms,
            last_command: "NULL".into(),
            multi: None,
            watched: Vec::new(),
            watch_dirty: false,
            channels: IndexSet::default(),
            patterns: IndexSet::default(),
            shard_channels: IndexSet::default(),
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            monitor: false,
            blocked: None,
            outbox: VecDeque::new(),
            close_requested: false,
            fault_delay: None,
            fault_truncate: None,
        }
    }

    /// Subscribed to any channel, pattern or shard channel (RESP2 restricts the commands then).
    pub fn in_pubsub(&self) -> bool {
        !self.channels.is_empty() || !self.patterns.is_empty() || !self.shard_channels.is_empty()
    }

    pub fn subscription_count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }
}
