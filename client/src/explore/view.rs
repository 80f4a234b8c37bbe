//! `View`: what an invariant sees. It reads the server through an observer connection (the
//! reads are not scheduled and change nothing a client can see) and knows how the logical
//! clients stand: finished with which result, crashed when, how many commands sent.

use std::any::Any;

use super::executor::{ClientRun, Status};
use super::scenario::Scenario;
use super::target::{Exec, Target, OBSERVER};
use crate::value::Value;

pub struct View<'a> {
    pub(crate) target: &'a mut dyn Target,
    pub(crate) scenario: &'a Scenario,
    pub(crate) clients: &'a [ClientRun],
    pub(crate) scratch: &'a mut Option<Box<dyn Any>>,
    pub(crate) is_final: bool,
    pub(crate) step: usize,
    /// The reads and their replies, kept when the run is recorded for a report.
    pub(crate) log: Option<&'a mut Vec<String>>,
}

impl View<'_> {
    /// Runs a command on the observer connection; an error reply comes back as
    /// `Value::Error`. Use reads: a write here would be a step no schedule shows.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Value {
        let command: Vec<Vec<u8>> = args.iter().map(|a| a.as_ref().to_vec()).collect();
        let text = self
            .log
            .is_some()
            .then(|| super::report::command_text(&command));
        let v = observed(self.target.exec(OBSERVER, &command));
        self.log_read(text, &v);
        v
    }

    /// GET `key`, the read invariants make most: in-process it looks at the keyspace
    /// directly (`Target::observe_get`) instead of running a command, with the same reply.
    fn read_get(&mut self, key: &str) -> Value {
        let text = self
            .log
            .is_some()
            .then(|| super::report::command_text(&[b"GET".to_vec(), key.as_bytes().to_vec()]));
        let v = observed(self.target.observe_get(key.as_bytes()));
        self.log_read(text, &v);
        v
    }

    /// Keeps a read and its reply for the report, when the run is recorded.
    fn log_read(&mut self, text: Option<String>, v: &Value) {
        if let (Some(log), Some(text)) = (self.log.as_deref_mut(), text) {
            log.push(format!("{} -> {}", text, super::report::value_text(v)));
        }
    }

    /// GET as text; None when the key is missing.
    pub fn get(&mut self, key: &str) -> Option<String> {
        self.read_get(key).as_str().map(str::to_string)
    }

    /// GET parsed as an integer; None when missing or not an integer.
    pub fn get_int(&mut self, key: &str) -> Option<i64> {
        self.read_get(key).as_int()
    }

    pub fn hget(&mut self, key: &str, field: &str) -> Option<String> {
        self.cmd(&["HGET", key, field]).as_str().map(str::to_string)
    }

    pub fn exists(&mut self, key: &str) -> bool {
        self.cmd(&["EXISTS", key]).as_int() == Some(1)
    }

    /// PTTL: -2 missing, -1 no TTL, else milliseconds left.
    pub fn pttl(&mut self, key: &str) -> i64 {
        self.cmd(&["PTTL", key]).as_int().unwrap_or(-2)
    }

    /// SMEMBERS, sorted.
    pub fn smembers(&mut self, key: &str) -> Vec<String> {
        let v = self.cmd(&["SMEMBERS", key]);
        let mut out: Vec<String> = v
            .as_array()
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        out.sort();
        out
    }

    /// Server time since the schedule started, in ms (real time on a real redis-server).
    pub fn elapsed_ms(&self) -> i64 {
        self.target.elapsed_ms()
    }

    /// Steps run so far.
    pub fn step(&self) -> usize {
        self.step
    }

    /// True on the check after the last step (every client finished, crashed or is stuck).
    pub fn is_final(&self) -> bool {
        self.is_final
    }

    pub fn on_real_redis(&self) -> bool {
        self.target.is_real()
    }

    fn client(&self, name: &str) -> &ClientRun {
        match self.scenario.clients.iter().position(|(n, _)| n == name) {
            Some(i) => &self.clients[i],
            None => panic!("redlab explore: no client named {:?}", name),
        }
    }

    /// Whether the client's closure has returned.
    pub fn finished(&self, client: &str) -> bool {
        self.client(client).status == Status::Done
    }

    pub fn crashed(&self, client: &str) -> bool {
        self.client(client).status == Status::Crashed
    }

    /// When the client crashed (server time since the start, ms).
    pub fn crashed_at_ms(&self, client: &str) -> Option<i64> {
        self.client(client).crashed_at
    }

    /// Commands the client has had run so far.
    pub fn commands_run(&self, client: &str) -> usize {
        self.client(client).commands
    }

    /// The client's return value once it finished, if it is a `T`.
    pub fn result<T: 'static>(&self, client: &str) -> Option<&T> {
        let r: &dyn Any = self.client(client).result.as_deref()?;
        r.downcast_ref::<T>()
    }

    /// Memory for this invariant that lasts one schedule (a value to compare the next step
    /// with: "never decreases").
    pub fn scratch<T: Default + 'static>(&mut self) -> &mut T {
        if !self.scratch.as_ref().is_some_and(|b| b.is::<T>()) {
            *self.scratch = Some(Box::new(T::default()));
        }
        self.scratch
            .as_mut()
            .and_then(|b| b.downcast_mut::<T>())
            .expect("just set")
    }
}

/// What the observer connection's command gave, as an invariant reads it.
fn observed(exec: Exec) -> Value {
    match exec {
        Exec::Reply(v) => v,
        Exec::Closed(why) => Value::error(&format!("ERR observer connection failed: {}", why)),
        Exec::Blocked => Value::Nil,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use super::super::scenario::Scenario;
    use super::View;

    /// `View::get` reads the keyspace directly in-process: it must give what GET gives at
    /// every step (a key past its TTL on the virtual clock reads as missing, a key of
    /// another type is no string), and leave what a client can read of a key's use (OBJECT FREQ) alone.
    #[test]
    fn direct_reads_answer_as_get_does_and_count_nothing() {
        let checked = Rc::new(RefCell::new(0u32));
        let seen = checked.clone();
        let report = Scenario::new()
            .setup(&[
                &["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"],
                &["SET", "k", "7", "PX", "150"],
                &["SADD", "s", "x"],
            ])
            .clock_step(Duration::from_millis(100), 2)
            .client("A", |c| async move {
                c.cmd(&["SET", "j", "1"]).await?;
                c.cmd(&["DEL", "j"]).await
            })
            .invariant("get agrees with GET", move |v: &mut View| {
                // Under an LFU policy every lookup a command makes counts in OBJECT FREQ
                // (which reads without counting).
                let freq = |v: &mut View| format!("{:?}", v.cmd(&["OBJECT", "FREQ", "k"]));
                let before = freq(v);
                let direct: Vec<Option<String>> =
                    ["k", "j", "s", "none"].iter().map(|k| v.get(k)).collect();
                let counted = freq(v);
                let by_get: Vec<Option<String>> = ["k", "j", "s", "none"]
                    .iter()
                    .map(|k| v.cmd(&["GET", k]).as_str().map(str::to_string))
                    .collect();
                let expired = v.elapsed_ms() > 150;
                *seen.borrow_mut() += 1;
                direct == by_get
                    && before == counted
                    && (direct[0].is_none() == expired)
                    && direct[2].is_none()
            })
            .exhaustive();
        report.assert_holds();
        assert!(*checked.borrow() > 10, "the invariant ran at every step");
    }
}
