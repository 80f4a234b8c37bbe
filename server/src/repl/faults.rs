//! Faults on the replication link, set on the replica side, from Rust (`Engine`) and over
//! the wire (`REDLAB.REPL`):
//!
//! - lag: the replica holds the stream back, applying a command only once `n` later ones
//!   arrived (`LAG COMMANDS n`) or once it is `n` ms old on the engine's clock (`LAG MS n`);
//! - partition: the link drops and stays down until healed, then reconnects with PSYNC
//!   (+CONTINUE when the primary's backlog still holds what was missed);
//! - promotion that loses writes: `PROMOTE` (REPLICAOF NO ONE) discards what the replica
//!   received but had not applied, as a failover to a lagging replica loses those writes.
//!
//! `REDLAB.REPL FOLLOW host port` makes a node follow a primary even in cluster mode, where
//! REPLICAOF is refused (redlab::Cluster wires its replicas with it).

use std::collections::VecDeque;

use bytes::Bytes;

use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

/// How far behind the replica applies the stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Lag {
    #[default]
    None,
    Commands(usize),
    Ms(i64),
}

/// The link faults of one replica, and the commands held back meanwhile.
#[derive(Debug, Default)]
pub(crate) struct LinkFaults {
    pub(crate) lag: Lag,
    pub(crate) partitioned: bool,
    /// Received, not applied yet: (arguments, their bytes in the stream, arrival ms).
    pub(crate) held: VecDeque<(Vec<Bytes>, Bytes, i64)>,
}

impl LinkFaults {
    /// Whether the oldest held command may be applied now.
    pub(crate) fn due(&self, now_ms: i64) -> bool {
        match (self.lag, self.held.front()) {
            (_, None) => false,
            (Lag::None, Some(_)) => true,
            (Lag::Commands(n), Some(_)) => self.held.len() > n,
            (Lag::Ms(ms), Some(h)) => now_ms.saturating_sub(h.2) >= ms,
        }
    }
}

impl Engine {
    /// Holds the stream back (see `Lag`); `Lag::None` applies what is held at the link's
    /// next step.
    pub fn set_replication_lag_commands(&mut self, n: usize) {
        self.repl.faults.lag = if n == 0 { Lag::None } else { Lag::Commands(n) };
    }

    pub fn set_replication_lag_ms(&mut self, ms: i64) {
        self.repl.faults.lag = if ms <= 0 { Lag::None } else { Lag::Ms(ms) };
    }

    /// Cuts (true) or heals (false) this replica's link to its primary.
    pub fn set_replication_partition(&mut self, on: bool) {
        self.repl.faults.partitioned = on;
        if on {
            if let Some(conn) = self.repl.following.as_ref().and_then(|f| f.conn) {
                self.disconnect(conn);
            }
        }
    }

    /// REPLICAOF NO ONE, losing what was received and not applied. Returns how many
    /// commands were lost.
    pub fn promote_replica(&mut self) -> usize {
        let lost = self.repl.faults.held.len();
        self.repl.faults.held.clear();
        super::commands::promote(self);
        lost
    }
}

/// REDLAB.REPL LAG COMMANDS n | LAG MS n | LAG OFF | PARTITION ON|OFF | PROMOTE |
/// FOLLOW host port | HELD.
pub(crate) fn redlab_repl(e: &mut Engine, call: &mut Call) -> CmdResult {
    let sub = call.arg(1).to_ascii_lowercase();
    let arg = |i: usize| call.args.get(i).map(|a| a.to_ascii_lowercase());
    match sub.as_slice() {
        b"lag" => match (arg(2).as_deref(), call.argc()) {
            (Some(b"off"), 3) => {
                e.set_replication_lag_commands(0);
                Ok(Reply::ok())
            }
            (Some(b"commands"), 4) => {
                let n = crate::cmd::args::int(call.arg(3))?;
                e.set_replication_lag_commands(n.max(0) as usize);
                Ok(Reply::ok())
            }
            (Some(b"ms"), 4) => {
                let n = crate::cmd::args::int(call.arg(3))?;
                e.set_replication_lag_ms(n);
                Ok(Reply::ok())
            }
            _ => Err(Reply::err(errors::SYNTAX)),
        },
        b"partition" if call.argc() == 3 => match arg(2).as_deref() {
            Some(b"on") => {
                e.set_replication_partition(true);
                Ok(Reply::ok())
            }
            Some(b"off") => {
                e.set_replication_partition(false);
                Ok(Reply::ok())
            }
            _ => Err(Reply::err(errors::SYNTAX)),
        },
        b"promote" if call.argc() == 2 => Ok(Reply::Int(e.promote_replica() as i64)),
        b"held" if call.argc() == 2 => Ok(Reply::Int(e.repl.faults.held.len() as i64)),
        b"follow" if call.argc() == 4 => {
            let port = crate::cmd::args::int(call.arg(3))?;
            if !(1..=65535).contains(&port) {
                return Err(Reply::err(errors::INVALID_MASTER_PORT));
            }
            let host = String::from_utf8_lossy(call.arg(2)).into_owned();
            super::commands::follow(e, &host, port as u16);
            Ok(Reply::ok())
        }
        _ => Err(Reply::err(errors::SYNTAX)),
    }
}
