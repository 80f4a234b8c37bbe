//! A primary and its replica as one target, for `Scenario::replica` and
//! `Scenario::failover`: the clients talk to the primary; the primary's replication stream
//! waits, cut into units, until a schedule delivers the oldest one to the replica (`r`);
//! a failover (`^`) promotes the replica, moves every connection to it and drops the
//! units it never received.
//!
//! In-process (`PairTarget`) both are engines of the explorer on one manual clock. The
//! stream is the primary's own: a connection of the primary that ran SYNC receives it, as
//! a replica's link would, and the replica applies it on a session of its own.
//!
//! On real Redis (`RealPairTarget`) the explorer plays the replica's link: it attaches to
//! the primary with SYNC, reads the stream up to a marker it publishes after every command
//! (PUBLISH is always propagated, so everything before the marker has arrived), and passes
//! each unit on to the second redis-server when the schedule delivers it. That server is a
//! primary of its own (a replica after REPLICAOF NO ONE), so a failover is the clients
//! moving to it. Keys that expire reach the stream when the server's expiry finds them,
//! which on real Redis is its own cycle: keep clock steps out of replayed failovers.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use redlab_server::faults::Fault;
use redlab_server::{Clock, Config, ConnId, Engine, Reply, Snapshot};

use super::report::command_text;
use super::target::{exec_on, poll_blocked_on, Exec, RealTarget, Target, OBSERVER, START_MS};
use crate::codec;
use crate::value::Value;

type Command = Vec<Vec<u8>>;

/// The replication stream cut into what a replica applies at once: a command, or a
/// MULTI ... EXEC block (a transaction or a script's effects), with the SELECT before it.
/// PING and REPLCONF are the link's own traffic, not units.
#[derive(Default)]
struct Units {
    /// SELECT waiting for the command it goes with.
    prefix: Vec<Command>,
    /// A MULTI block still open.
    open: Option<Vec<Command>>,
    ready: VecDeque<Vec<Command>>,
}

impl Units {
    fn push(&mut self, cmd: Command) {
        let is = |name: &str| {
            cmd.first()
                .is_some_and(|a| a.eq_ignore_ascii_case(name.as_bytes()))
        };
        if is("ping") || is("replconf") {
            return;
        }
        if let Some(block) = &mut self.open {
            let end = is("exec");
            block.push(cmd);
            if end {
                let block = self.open.take().unwrap_or_default();
                self.ready.push_back(block);
            }
            return;
        }
        let mut unit = std::mem::take(&mut self.prefix);
        if is("select") {
            unit.push(cmd);
            self.prefix = unit;
        } else if is("multi") {
            unit.push(cmd);
            self.open = Some(unit);
        } else {
            unit.push(cmd);
            self.ready.push_back(unit);
        }
    }

    /// Units of the stream not applied yet, the one in the making included.
    fn pending(&self) -> usize {
        self.ready.len() + usize::from(self.open.is_some())
    }

    fn clear(&mut self) {
        *self = Units::default();
    }
}

/// Takes every complete command off the front of `buf` (the keep-alive newlines a primary
/// sends between them are skipped) and cuts them into `units`. `stop` ends the reading at
/// a command it recognises (not kept): true when it was seen.
fn take_commands(
    buf: &mut BytesMut,
    units: &mut Units,
    stop: &dyn Fn(&Command) -> bool,
) -> Result<bool, String> {
    loop {
        while buf.first() == Some(&b'\n') {
            buf.advance(1);
        }
        let Some(v) = codec::decode(buf, 2).map_err(|e| e.to_string())? else {
            return Ok(false);
        };
        let Value::Array(items) = v else {
            return Err(format!("the replication stream carried {:?}", v));
        };
        let cmd: Command = items
            .into_iter()
            .map(|a| match a {
                Value::Bulk(b) => b.to_vec(),
                other => format!("{:?}", other).into_bytes(),
            })
            .collect();
        if stop(&cmd) {
            return Ok(true);
        }
        units.push(cmd);
    }
}

fn unit_text(unit: &[Command]) -> String {
    unit.iter()
        .map(|c| command_text(c))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Two in-process engines on one clock: `engines[0]` the primary, `engines[1]` the replica.
pub(crate) struct PairTarget {
    clock: Clock,
    engines: [Engine; 2],
    /// Which engine the clients talk to: 0, then 1 after a failover.
    current: usize,
    conns: Vec<ConnId>,
    observer: ConnId,
    /// The primary's connection that ran SYNC: the stream arrives in its output.
    feed: ConnId,
    /// The replica's session that applies the stream.
    link: ConnId,
    buf: BytesMut,
    units: Units,
    /// Both engines after the setup, for the next reset.
    snapshots: Option<(usize, Snapshot, Snapshot)>,
}

impl PairTarget {
    pub fn new(config: Config) -> PairTarget {
        let clock = Clock::manual(START_MS);
        let engines = [
            Engine::with_clock(config.clone(), clock.clone()),
            Engine::with_clock(config, clock.clone()),
        ];
        PairTarget {
            clock,
            engines,
            current: 0,
            conns: Vec::new(),
            observer: 0,
            feed: 0,
            link: 0,
            buf: BytesMut::new(),
            units: Units::default(),
            snapshots: None,
        }
    }

    /// Attaches the replica's feed to the primary: from now on every unit the primary
    /// writes arrives at `feed`.
    fn attach(&mut self) {
        self.buf.clear();
        self.units.clear();
        self.current = 0;
        self.feed = self.engines[0].connect();
        // The full copy goes nowhere: the replica holds the same data already (both were
        // empty, or both were restored from the snapshots taken together).
        let _ = self.engines[0].execute(self.feed, &["SYNC"]);
        let _ = self.engines[0].take_output(self.feed);
        self.link = self.engines[1].connect();
    }

    /// What the primary wrote to the stream since the last look.
    fn drain(&mut self) {
        if self.current != 0 {
            return;
        }
        for r in self.engines[0].take_output(self.feed) {
            if let Reply::Raw(b) = r {
                self.buf.extend_from_slice(&b);
            }
        }
        // In-process the stream is redlab's own: a malformed one is a redlab bug, and the
        // explorer's consistency checks (the replica's data) show it.
        let _ = take_commands(&mut self.buf, &mut self.units, &|_| false);
    }

    fn connect_clients(&mut self, clients: usize) {
        let e = &mut self.engines[self.current];
        self.conns = (0..clients).map(|_| e.connect()).collect();
        self.observer = e.connect();
    }

    fn apply_on_replica(&mut self, unit: &[Command]) {
        for cmd in unit {
            let _ = self.engines[1].execute(self.link, cmd);
        }
        let _ = self.engines[1].take_output(self.link);
    }
}

impl Target for PairTarget {
    fn reset(&mut self, clients: usize, setup: &[Vec<Vec<u8>>]) -> Result<(), String> {
        if let Some((n, p, r)) = &self.snapshots {
            if *n == clients {
                self.engines[0].restore(p);
                self.engines[1].restore(r);
                self.attach();
                self.connect_clients(clients);
                return Ok(());
            }
        }
        self.attach();
        let conn = self.engines[0].connect();
        for command in setup {
            if let Exec::Closed(_) = exec_on(&mut self.engines[0], conn, command) {
                return Err(format!(
                    "setup closed the connection at {}",
                    command_text(command)
                ));
            }
        }
        // The setup reaches the replica as a replica gets it: through the stream.
        self.drain();
        while let Some(unit) = self.units.ready.pop_front() {
            self.apply_on_replica(&unit);
        }
        let p = self.engines[0].snapshot();
        let r = self.engines[1].snapshot();
        self.engines[0].restore(&p);
        self.engines[1].restore(&r);
        self.snapshots = Some((clients, p, r));
        self.attach();
        self.connect_clients(clients);
        Ok(())
    }

    fn exec(&mut self, who: usize, command: &[Vec<u8>]) -> Exec {
        let conn = if who == OBSERVER {
            self.observer
        } else {
            self.conns[who]
        };
        let out = exec_on(&mut self.engines[self.current], conn, command);
        self.drain();
        out
    }

    fn poll_blocked(&mut self, who: usize) -> Option<Value> {
        let v = poll_blocked_on(&mut self.engines[self.current], self.conns[who]);
        self.drain();
        v
    }

    fn advance(&mut self, ms: u64) {
        self.clock.advance(Duration::from_millis(ms));
        for e in &mut self.engines {
            e.tick();
        }
        self.drain();
    }

    fn elapsed_ms(&self) -> i64 {
        self.clock.now_ms() - START_MS
    }

    fn crash(&mut self, who: usize) {
        self.engines[self.current].disconnect(self.conns[who]);
    }

    fn add_fault(&mut self, fault: &Fault) -> bool {
        self.engines[self.current].faults().add(fault.clone());
        true
    }

    fn is_real(&self) -> bool {
        false
    }

    fn unreplicated(&self) -> usize {
        if self.current == 0 {
            self.units.ready.len()
        } else {
            0
        }
    }

    fn replicate(&mut self) -> Result<String, String> {
        let Some(unit) = self.units.ready.pop_front().filter(|_| self.current == 0) else {
            return Err("the replica has received every unit of the stream".into());
        };
        self.apply_on_replica(&unit);
        Ok(unit_text(&unit))
    }

    fn failover(&mut self) -> Result<usize, String> {
        if self.current != 0 {
            return Err("the replica was promoted already".into());
        }
        let lost = self.units.pending();
        self.units.clear();
        self.buf.clear();
        let clients = self.conns.len();
        for c in std::mem::take(&mut self.conns) {
            self.engines[0].disconnect(c);
        }
        self.engines[0].disconnect(self.observer);
        self.engines[0].disconnect(self.feed);
        self.current = 1;
        self.connect_clients(clients);
        Ok(lost)
    }
}

/// The explorer's replication link to a real redis-server: a connection that ran SYNC.
struct Relay {
    stream: TcpStream,
    buf: BytesMut,
}

impl Relay {
    fn open(addr: SocketAddr) -> Result<Relay, String> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map_err(|e| format!("connect {}: {}", addr, e))?;
        let _ = stream.set_nodelay(true);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
        let mut relay = Relay {
            stream,
            buf: BytesMut::with_capacity(16 * 1024),
        };
        relay
            .stream
            .write_all(b"*1\r\n$4\r\nSYNC\r\n")
            .map_err(|e| e.to_string())?;
        // `$<len>\r\n` and the RDB file (no CRLF after it), newlines while it is made.
        let len = loop {
            while relay.buf.first() == Some(&b'\n') {
                relay.buf.advance(1);
            }
            if let Some(end) = relay.buf.windows(2).position(|w| w == b"\r\n") {
                let head = String::from_utf8_lossy(&relay.buf[..end]).into_owned();
                relay.buf.advance(end + 2);
                break head
                    .strip_prefix('$')
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(|| format!("SYNC answered {:?}", head))?;
            }
            relay.fill()?;
        };
        while relay.buf.len() < len {
            relay.fill()?;
        }
        relay.buf.advance(len);
        Ok(relay)
    }

    fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the primary closed the replication link".into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Reads the stream into `units` up to the marker `mark`.
    fn read_to(&mut self, units: &mut Units, mark: &[u8]) -> Result<(), String> {
        let stop = |c: &Command| {
            c.len() == 3
                && c[0].eq_ignore_ascii_case(b"publish")
                && c[1] == MARK_CHANNEL
                && c[2] == mark
        };
        while !take_commands(&mut self.buf, units, &stop)? {
            self.fill()?;
        }
        Ok(())
    }
}

/// The channel of the relay's markers.
const MARK_CHANNEL: &[u8] = b"__redlab_explore_relay__";

/// A real primary and a second real server as its replica (see the module docs).
pub(crate) struct RealPairTarget {
    primary_addr: SocketAddr,
    primary: RealTarget,
    /// Its connection 0 applies the stream; after a failover it holds the clients'.
    replica: RealTarget,
    relay: Option<Relay>,
    units: Units,
    failed_over: bool,
    clients: usize,
    marks: u64,
}

impl RealPairTarget {
    pub fn new(primary: SocketAddr, replica: SocketAddr) -> RealPairTarget {
        RealPairTarget {
            primary_addr: primary,
            primary: RealTarget::new(primary),
            replica: RealTarget::new(replica),
            relay: None,
            units: Units::default(),
            failed_over: false,
            clients: 0,
            marks: 0,
        }
    }

    /// Everything the primary propagated so far, read into `units`.
    fn sync_stream(&mut self) -> Result<(), String> {
        let Some(relay) = self.relay.as_mut() else {
            return Err("no replication link".into());
        };
        self.marks += 1;
        let mark = self.marks.to_string().into_bytes();
        let publish = vec![b"PUBLISH".to_vec(), MARK_CHANNEL.to_vec(), mark.clone()];
        if let Exec::Closed(why) = self.primary.exec(OBSERVER, &publish) {
            return Err(why);
        }
        relay.read_to(&mut self.units, &mark)
    }

    fn apply_on_replica(&mut self, unit: &[Command]) -> Result<(), String> {
        for cmd in unit {
            if let Exec::Closed(why) = self.replica.exec(0, cmd) {
                return Err(format!("the replica closed the link: {}", why));
            }
        }
        Ok(())
    }
}

impl Target for RealPairTarget {
    fn reset(&mut self, clients: usize, setup: &[Vec<Vec<u8>>]) -> Result<(), String> {
        self.clients = clients;
        self.failed_over = false;
        self.replica.reset(1, &[])?;
        if self.relay.is_none() {
            self.relay = Some(Relay::open(self.primary_addr)?);
        }
        self.primary.reset(clients, setup)?;
        // The flush and the setup reach the replica through the stream, all of it now.
        self.units.clear();
        self.sync_stream()?;
        while let Some(unit) = self.units.ready.pop_front() {
            self.apply_on_replica(&unit)?;
        }
        self.units.clear();
        Ok(())
    }

    fn exec(&mut self, who: usize, command: &[Vec<u8>]) -> Exec {
        if self.failed_over {
            return self.replica.exec(who, command);
        }
        let out = self.primary.exec(who, command);
        if let Err(e) = self.sync_stream() {
            return Exec::Closed(format!("the replication link failed: {}", e));
        }
        out
    }

    fn poll_blocked(&mut self, _who: usize) -> Option<Value> {
        None
    }

    fn advance(&mut self, ms: u64) {
        self.primary.advance(ms);
    }

    fn elapsed_ms(&self) -> i64 {
        self.primary.elapsed_ms()
    }

    fn crash(&mut self, who: usize) {
        if self.failed_over {
            self.replica.crash(who);
        } else {
            self.primary.crash(who);
        }
    }

    fn add_fault(&mut self, _fault: &Fault) -> bool {
        false
    }

    fn is_real(&self) -> bool {
        true
    }

    fn unreplicated(&self) -> usize {
        if self.failed_over {
            0
        } else {
            self.units.ready.len()
        }
    }

    fn replicate(&mut self) -> Result<String, String> {
        let Some(unit) = self.units.ready.pop_front().filter(|_| !self.failed_over) else {
            return Err("the replica has received every unit of the stream".into());
        };
        self.apply_on_replica(&unit)?;
        Ok(unit_text(&unit))
    }

    fn failover(&mut self) -> Result<usize, String> {
        if self.failed_over {
            return Err("the replica was promoted already".into());
        }
        let lost = self.units.pending();
        self.units.clear();
        self.failed_over = true;
        // The clients' connections to the old primary close; they reconnect to the new one.
        for who in 0..self.clients {
            self.primary.crash(who);
        }
        self.replica.open_clients(self.clients)?;
        Ok(lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(args: &[&str]) -> Command {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    #[test]
    fn units_keep_select_with_the_next_command_and_blocks_whole() {
        let mut u = Units::default();
        u.push(cmd(&["SELECT", "0"]));
        u.push(cmd(&["SET", "a", "1"]));
        u.push(cmd(&["PING"]));
        u.push(cmd(&["MULTI"]));
        u.push(cmd(&["INCR", "b"]));
        assert_eq!(u.ready.len(), 1);
        assert_eq!(u.pending(), 2, "an open block counts");
        u.push(cmd(&["EXEC"]));
        u.push(cmd(&["REPLCONF", "GETACK", "*"]));
        assert_eq!(u.ready.len(), 2);
        assert_eq!(unit_text(&u.ready[0]), "SELECT 0; SET a 1");
        assert_eq!(u.ready[1].len(), 3);
    }

    #[test]
    fn the_stream_is_read_to_the_marker() {
        let mut buf = BytesMut::from(
            &b"\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*3\r\n$7\r\nPUBLISH\r\n$1\r\nm\r\n$1\r\n1\r\n*1\r\n$4\r\nPING"[..],
        );
        let mut u = Units::default();
        let stop = |c: &Command| c[0] == b"PUBLISH";
        assert!(take_commands(&mut buf, &mut u, &stop).unwrap());
        assert_eq!(u.ready.len(), 1);
        assert!(
            !take_commands(&mut buf, &mut u, &stop).unwrap(),
            "an incomplete command waits"
        );
    }
}
