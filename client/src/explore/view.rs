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
        let v = match self.target.exec(OBSERVER, command) {
            Exec::Reply(v) => v,
            Exec::Closed(why) => Value::error(&format!("ERR observer connection failed: {}", why)),
            Exec::Blocked => Value::Nil,
        };
        if let (Some(log), Some(text)) = (self.log.as_deref_mut(), text) {
            log.push(format!("{} -> {}", text, super::report::value_text(&v)));
        }
        v
    }

    /// GET as text; None when the key is missing.
    pub fn get(&mut self, key: &str) -> Option<String> {
        self.cmd(&["GET", key]).as_str().map(str::to_string)
    }

    /// GET parsed as an integer; None when missing or not an integer.
    pub fn get_int(&mut self, key: &str) -> Option<i64> {
        self.cmd(&["GET", key]).as_int()
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
