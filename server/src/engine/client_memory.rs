//! Clients' memory, counted as Redis 7.0.15 counts it, and client eviction.
//!
//! Each client costs what CLIENT LIST's tot-mem shows (`cmd::connection::client_memory`):
//! a fixed part, its query buffer, a queued transaction and the output waiting to be sent.
//! These sums are part of used_memory (INFO mem_clients_normal and mem_clients_slaves,
//! MEMORY STATS clients.*), so clients that pile up output (a reader that stopped reading,
//! subscribers of a busy channel) or half-sent requests push a server past maxmemory and
//! make it evict keys, as in Redis. Replicas' output is left out of the figure eviction
//! compares with maxmemory (INFO mem_not_counted_for_evict), so a replica catching up
//! never makes the primary evict.
//!
//! With `maxmemory-clients` set (bytes, or a percentage of maxmemory), clients are evicted
//! first, largest first, before every command, while all normal and pub/sub clients
//! together use at least that much (never less than 128 KiB, Redis's floor). A client with
//! CLIENT NO-EVICT on, a replica and the link to a primary are never evicted; INFO
//! evicted_clients counts the others.

use super::Engine;
use crate::session::ConnId;

/// Redis's floor for maxmemory-clients, so a small setting cannot lock every client out.
const CLIENT_EVICTION_FLOOR: u64 = 128 * 1024;

/// The memory of the clients, by INFO's classes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientsMemory {
    /// Replicas' (mem_clients_slaves): not counted against maxmemory.
    pub replicas: u64,
    /// Every other client's (mem_clients_normal), pub/sub clients included.
    pub normal: u64,
}

impl Engine {
    pub(crate) fn is_replica_conn(&self, conn: ConnId) -> bool {
        self.repl.replicas.iter().any(|r| r.conn == conn)
    }

    pub(crate) fn clients_memory(&self) -> ClientsMemory {
        let mut m = ClientsMemory::default();
        // A client being closed for good (evicted, over its output limit) is gone for Redis.
        for s in self.sessions.values().filter(|s| !s.close_now) {
            let bytes = crate::cmd::connection::client_memory(s, self.profile());
            if self.is_replica_conn(s.id) {
                m.replicas += bytes;
            } else {
                m.normal += bytes;
            }
        }
        m
    }

    /// maxmemory-clients in bytes, 0 when off (a percentage of an unlimited maxmemory is
    /// off too).
    fn client_eviction_limit(&self) -> u64 {
        let raw = &self.config.maxmemory_clients;
        if raw == "0" {
            return 0;
        }
        let limit = match raw.strip_suffix('%') {
            Some(pct) => {
                let pct: u64 = pct.parse().unwrap_or(0);
                self.config.maxmemory / 100 * pct + self.config.maxmemory % 100 * pct / 100
            }
            None => raw.parse().unwrap_or(0),
        };
        if limit == 0 {
            0
        } else {
            limit.max(CLIENT_EVICTION_FLOOR)
        }
    }

    /// Redis's evictClients, run before each command and on each tick (Redis runs it before
    /// each sleep of its event loop, so clients go before the eviction timer takes keys):
    /// while the normal and pub/sub clients use maxmemory-clients or more, the largest
    /// evictable one is closed at once. Returns whether `current` (the client whose command
    /// is about to run, or that just read a request; None on a tick) was closed: its command
    /// then does not run. Each client counts as it stood after its last command or read, as
    /// Redis's figures are updated then: the command about to run is not in them.
    pub(crate) fn evict_clients(&mut self, current: Option<ConnId>) -> bool {
        let limit = self.client_eviction_limit();
        if limit == 0 {
            return false;
        }
        let mut total = self.clients_memory().normal;
        let mut current_evicted = false;
        while total >= limit {
            let victim = self
                .sessions
                .values()
                .filter(|s| {
                    !s.no_evict
                        && !s.close_now
                        && !self.is_replica_conn(s.id)
                        && !self.repl.is_primary_link(s.id)
                })
                .map(|s| {
                    (
                        crate::cmd::connection::client_memory(s, self.profile()),
                        s.id,
                    )
                })
                .max();
            let Some((bytes, id)) = victim else {
                tracing::warn!("Over client maxmemory after evicting all evictable clients");
                break;
            };
            if let Some(s) = self.sessions.get(&id) {
                let info = crate::cmd::connection::client_info_line(s, self.now_ms, self.profile());
                tracing::info!("Evicting client: {}", info);
            }
            self.stats.evicted_clients += 1;
            if Some(id) == current {
                // Closed without a reply, what it had pending dropped.
                if let Some(s) = self.sessions.get_mut(&id) {
                    s.close_now = true;
                }
                current_evicted = true;
            } else {
                self.disconnect(id);
                self.wakeups.push(id);
            }
            total = total.saturating_sub(bytes);
        }
        current_evicted
    }
}

#[cfg(test)]
mod tests {
    use crate::session::NetMeters;
    use crate::{Config, Engine, Reply};

    fn set_unsent(e: &Engine, conn: u64, bytes: usize) {
        NetMeters::set(&e.sessions[&conn].net.unsent, bytes);
    }

    #[test]
    fn output_waiting_for_a_client_makes_keys_go() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]);
        for i in 0..20 {
            let key = format!("k{i}");
            e.execute(1, &[b"SET".as_slice(), key.as_bytes(), &[b'x'; 10_000]]);
        }
        let limit = (e.used_memory() + 50_000).to_string();
        e.execute(1, &["CONFIG", "SET", "maxmemory", &limit]);
        e.execute(1, &["PING"]);
        assert_eq!(e.stats.evicted_keys, 0);
        e.execute(2, &["PING"]);
        set_unsent(&e, 2, 100_000);
        assert!(e.clients_memory().normal > 100_000);
        e.execute(1, &["PING"]);
        assert!(e.stats.evicted_keys > 0, "the client's output counts");
        assert!(e.used_memory() <= e.config.maxmemory);
    }

    #[test]
    fn the_largest_evictable_client_goes_first() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["CONFIG", "SET", "maxmemory-clients", "200kb"]);
        e.execute(1, &["CLIENT", "NO-EVICT", "on"]);
        e.execute(2, &["PING"]);
        e.execute(3, &["PING"]);
        set_unsent(&e, 2, 150_000);
        set_unsent(&e, 3, 60_000);
        assert_eq!(e.execute(1, &["PING"]), Reply::status("PONG"));
        assert!(!e.is_connected(2), "the largest client is evicted");
        assert!(e.is_connected(3), "then the total is under the limit");
        assert_eq!(e.stats.evicted_clients, 1);
        // A NO-EVICT client stays, even over the limit on its own.
        set_unsent(&e, 1, 300_000);
        assert_eq!(e.execute(1, &["PING"]), Reply::status("PONG"));
        assert!(e.is_connected(1));
        assert!(!e.is_connected(3));
        assert_eq!(e.stats.evicted_clients, 2);
    }

    #[test]
    fn a_tick_evicts_clients_before_the_eviction_timer_takes_keys() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]);
        for i in 0..20 {
            let key = format!("k{i}");
            e.execute(1, &[b"SET".as_slice(), key.as_bytes(), &[b'x'; 10_000]]);
        }
        let limit = (e.used_memory() + 50_000).to_string();
        e.execute(1, &["CONFIG", "SET", "maxmemory", &limit]);
        e.execute(1, &["CONFIG", "SET", "maxmemory-clients", "150kb"]);
        e.execute(1, &["CLIENT", "NO-EVICT", "on"]);
        e.execute(2, &["PING"]);
        // A client that sends nothing more holds output past both limits.
        set_unsent(&e, 2, 200_000);
        e.tick();
        assert!(!e.is_connected(2));
        assert_eq!(e.stats.evicted_clients, 1);
        assert_eq!(e.stats.evicted_keys, 0, "the client went, not the keys");
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(20));
    }

    #[test]
    fn a_client_evicted_before_its_command_gets_no_reply() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["CONFIG", "SET", "maxmemory-clients", "1"]);
        e.execute(2, &["PING"]);
        // Under Redis's 128 KiB floor for maxmemory-clients, nobody is evicted.
        set_unsent(&e, 2, 90_000);
        assert_eq!(e.execute(2, &["PING"]), Reply::status("PONG"));
        set_unsent(&e, 2, 200_000);
        assert_eq!(e.execute(2, &["SET", "k", "v"]), Reply::None);
        assert!(e.must_close_now(2));
        assert_eq!(e.execute(1, &["EXISTS", "k"]), Reply::Int(0));
    }

    /// Replies wait in the client's reply buffer (16 KiB for a new client) before its reply
    /// list, and only the list is output. Redis's unit/client-eviction sets maxmemory-clients
    /// to the exact sum of five clients and the control client's tot-mem: the control's
    /// CLIENT LIST reply waiting to be written must not tip it over and evict a sixth.
    #[test]
    fn eviction_stops_at_the_limit_with_a_reply_in_the_reply_buffer() {
        let mut e = Engine::new(Config::default());
        let memory =
            |e: &Engine, id| crate::cmd::connection::client_memory(&e.sessions[&id], e.profile());
        e.execute(1, &["CLIENT", "NO-EVICT", "on"]);
        for id in 2..12 {
            e.execute(id, &["PING"]);
            set_unsent(&e, id, 100_000);
        }
        let idle = memory(&e, 1);
        set_unsent(&e, 1, 1690);
        assert_eq!(
            memory(&e, 1),
            idle,
            "a reply within the buffer is not output"
        );
        set_unsent(&e, 1, 16 * 1024 + 100);
        assert_eq!(
            memory(&e, 1),
            idle + 20504,
            "what overflows it is, in whole blocks of the reply list"
        );
        set_unsent(&e, 1, 0);
        // As the test takes it: the control's tot-mem from its own CLIENT LIST (its argv
        // included).
        let Reply::Verbatim(_, list) = e.execute(1, &["CLIENT", "LIST"]) else {
            panic!("CLIENT LIST")
        };
        let list = String::from_utf8_lossy(&list).into_owned();
        let control: u64 = list
            .lines()
            .find(|l| l.starts_with("id=1 "))
            .and_then(|l| l.split(' ').find_map(|f| f.strip_prefix("tot-mem=")))
            .and_then(|v| v.parse().ok())
            .expect("the control's tot-mem");
        let limit = 5 * memory(&e, 2) + control;
        e.execute(
            1,
            &["CONFIG", "SET", "maxmemory-clients", &limit.to_string()],
        );
        set_unsent(&e, 1, 1690);
        e.execute(1, &["CLIENT", "LIST"]);
        assert_eq!(e.stats.evicted_clients, 5);
        assert_eq!((2..12).filter(|&id| e.is_connected(id)).count(), 5);
    }

    /// A request whose big argument is still arriving holds a buffer made for all of it:
    /// that counts, so the client goes before the request completes (unit/client-eviction,
    /// "client evicted due to large argv").
    #[test]
    fn a_big_argument_being_read_counts_toward_its_client() {
        let mut e = Engine::new(Config::default());
        e.execute(1, &["CONFIG", "SET", "maxmemory-clients", "300000"]);
        e.execute(1, &["CLIENT", "NO-EVICT", "on"]);
        e.execute(2, &["PING"]);
        let mut batch = crate::client_query::Batch::default();
        batch.begin(0, 100_000);
        batch.pending_big_arg = Some(400_000);
        e.sessions[&2].net.query.after_batch(&batch);
        assert!(e.evict_clients(Some(2)));
        assert!(e.must_close_now(2));
        assert_eq!(e.stats.evicted_clients, 1);
    }

    /// Watched keys, subscriptions and tracking prefixes cost what Redis counts for them, so a
    /// client piling them up is evicted as in Redis.
    #[test]
    fn watched_keys_and_subscriptions_count_toward_a_clients_memory() {
        let mut e = Engine::new(Config::default());
        let memory =
            |e: &Engine, id| crate::cmd::connection::client_memory(&e.sessions[&id], e.profile());
        e.execute(2, &["PING"]);
        let idle = memory(&e, 2);
        e.execute(2, &["WATCH", "a", "b"]);
        assert_eq!(memory(&e, 2) - idle, 2 * 56);
        e.execute(3, &["PSUBSCRIBE", "p1", "p2"]);
        e.execute(4, &["SUBSCRIBE", "c1"]);
        e.execute(5, &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x"]);
        // A pattern is a list node; a channel a dict entry and a table of 4 slots; a prefix
        // about a tree node of its own plus the root.
        assert_eq!(memory(&e, 3) - idle, 2 * 24);
        assert_eq!(memory(&e, 4) - idle, 24 + 4 * 8);
        assert_eq!(memory(&e, 5) - idle, 2 * 32);
        e.execute(1, &["CONFIG", "SET", "maxmemory-clients", "200000"]);
        e.execute(1, &["CLIENT", "NO-EVICT", "on"]);
        let mut evicted = false;
        for i in 0..10_000 {
            if e.execute(2, &["WATCH", &format!("k{i}")]) == Reply::None {
                evicted = true;
                break;
            }
        }
        assert!(evicted && e.must_close_now(2));
    }
}
