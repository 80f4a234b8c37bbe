//! Linearizability as an invariant: the clients record what they called and what came
//! back; the checker asks whether some order of those operations, each placed between its
//! call and its return, is a run of a sequential model.
//!
//! ```no_run
//! use redlab_client::explore::linearizable::{History, models::LockModel, models::LockOp};
//! use redlab_client::explore::Scenario;
//!
//! let h: History<LockModel> = History::new();
//! let h1 = h.clone();
//! let s = Scenario::new()
//!     .client("A", move |c| {
//!         let h = h1.clone();
//!         async move {
//!             let call = h.call("A", LockOp::Acquire("A".into()));
//!             let got = c.cmd(&["SET", "lock", "A", "NX"]).await;
//!             if let Ok(v) = got {
//!                 h.ret(call, v != redlab_client::Value::Nil);
//!             }
//!         }
//!     })
//!     .linearizable("acquire is a mutex", &h, LockModel::default());
//! ```
//!
//! The search is Wing and Gong's, with the memoization of Lowe's variant: it places, one
//! at a time, an operation that no unplaced operation returned before the call of, and
//! remembers every (placed set, model state) it has seen, so a history of a few dozen
//! operations checks in microseconds. An operation that never returned (its client crashed,
//! its connection failed, it timed out) may or may not have taken effect: the checker tries
//! both.
//!
//! A violation prints the history in call order with the steps of the schedule that saw
//! each call and return; the explorer shrinks the schedule first, so it is the smallest
//! history that breaks the model that it found.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::{self, Debug, Write as _};
use std::hash::Hash;
use std::rc::Rc;

use super::scenario::Scenario;
use super::view::View;

/// A sequential specification: a state machine whose states can be compared and hashed.
pub trait Model: Clone + Eq + Hash + Debug + 'static {
    type Op: Clone + Debug + 'static;
    type Ret: Clone + Debug + 'static;

    /// The state after `op`, if `ret` is an answer the object may give in this state.
    /// `ret` is None when the caller never saw the answer: the operation may have taken
    /// effect, with any answer.
    fn step(&self, op: &Self::Op, ret: Option<&Self::Ret>) -> Option<Self>;
}

/// Which operation of a history: what `History::call` returns and `History::ret` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpId(usize);

struct Entry<M: Model> {
    client: String,
    op: M::Op,
    ret: Option<M::Ret>,
    /// Order of the call and of the return among all calls and returns.
    call: u64,
    returned: Option<u64>,
    /// The schedule step after which the call and the return were seen (for printing).
    call_step: Option<usize>,
    ret_step: Option<usize>,
}

struct Inner<M: Model> {
    entries: Vec<Entry<M>>,
    tick: u64,
}

/// The history of one schedule, shared by the clients (who record) and the invariant
/// (which checks). Cheap to clone; clones share it.
pub struct History<M: Model> {
    inner: Rc<RefCell<Inner<M>>>,
}

impl<M: Model> Clone for History<M> {
    fn clone(&self) -> Self {
        History {
            inner: self.inner.clone(),
        }
    }
}

impl<M: Model> Default for History<M> {
    fn default() -> Self {
        History::new()
    }
}

/// At most this many operations per history (the placed set is a 128-bit mask).
pub const MAX_OPS: usize = 128;

impl<M: Model> History<M> {
    pub fn new() -> History<M> {
        History {
            inner: Rc::new(RefCell::new(Inner {
                entries: Vec::new(),
                tick: 0,
            })),
        }
    }

    /// `client` calls `op` now.
    pub fn call(&self, client: &str, op: M::Op) -> OpId {
        let mut h = self.inner.borrow_mut();
        h.tick += 1;
        let call = h.tick;
        h.entries.push(Entry {
            client: client.to_string(),
            op,
            ret: None,
            call,
            returned: None,
            call_step: None,
            ret_step: None,
        });
        OpId(h.entries.len() - 1)
    }

    /// The operation `id` returned `ret` now. An operation that never returns (an error
    /// whose outcome is unknown) is simply not given a return.
    pub fn ret(&self, id: OpId, ret: M::Ret) {
        let mut h = self.inner.borrow_mut();
        h.tick += 1;
        let t = h.tick;
        if let Some(e) = h.entries.get_mut(id.0) {
            e.ret = Some(ret);
            e.returned = Some(t);
        }
    }

    pub fn clear(&self) {
        let mut h = self.inner.borrow_mut();
        h.entries.clear();
        h.tick = 0;
    }

    pub fn len(&self) -> usize {
        self.inner.borrow().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Notes the schedule step for calls and returns not stamped yet.
    fn stamp(&self, step: usize) {
        let mut h = self.inner.borrow_mut();
        for e in &mut h.entries {
            e.call_step.get_or_insert(step);
            if e.returned.is_some() {
                e.ret_step.get_or_insert(step);
            }
        }
    }

    /// Ok if the history is linearizable from `initial`; otherwise the history, printed.
    pub fn check(&self, initial: &M) -> Result<(), String> {
        let h = self.inner.borrow();
        if h.entries.len() > MAX_OPS {
            return Err(format!(
                "the history has {} operations; the checker takes at most {}",
                h.entries.len(),
                MAX_OPS
            ));
        }
        let ops: Vec<Op<'_, M>> = h
            .entries
            .iter()
            .map(|e| Op {
                op: &e.op,
                ret: e.ret.as_ref(),
                call: e.call,
                returned: e.returned.unwrap_or(u64::MAX),
            })
            .collect();
        let must: u128 = ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.ret.is_some())
            .fold(0, |m, (i, _)| m | 1 << i);
        let mut search = Search {
            ops: &ops,
            must,
            seen: HashSet::new(),
        };
        if search.from(initial.clone(), 0) {
            return Ok(());
        }
        Err(format!(
            "no order of these operations is a run of {:?}:\n{}",
            initial,
            self.describe(&h)
        ))
    }

    fn describe(&self, h: &Inner<M>) -> String {
        let mut out = String::new();
        let mut order: Vec<&Entry<M>> = h.entries.iter().collect();
        order.sort_by_key(|e| e.call);
        for e in order {
            let step = |s: Option<usize>| s.map_or("?".to_string(), |s| s.to_string());
            let _ = match &e.ret {
                Some(r) => writeln!(
                    out,
                    "    {}: {:?} -> {:?}   (called by step {}, returned at step {})",
                    e.client,
                    e.op,
                    r,
                    step(e.call_step),
                    step(e.ret_step)
                ),
                None => writeln!(
                    out,
                    "    {}: {:?} -> (no answer seen)   (called by step {})",
                    e.client,
                    e.op,
                    step(e.call_step)
                ),
            };
        }
        out
    }
}

impl<M: Model> fmt::Debug for History<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = self.inner.borrow();
        write!(f, "{}", self.describe(&h))
    }
}

struct Op<'a, M: Model> {
    op: &'a M::Op,
    ret: Option<&'a M::Ret>,
    call: u64,
    /// u64::MAX when it never returned.
    returned: u64,
}

struct Search<'a, M: Model> {
    ops: &'a [Op<'a, M>],
    /// The operations that returned: all of them must be placed.
    must: u128,
    seen: HashSet<(u128, M)>,
}

impl<M: Model> Search<'_, M> {
    fn from(&mut self, state: M, placed: u128) -> bool {
        if placed & self.must == self.must {
            return true;
        }
        // An operation can go next if it was called before every unplaced operation
        // returned.
        let first_return = self
            .ops
            .iter()
            .enumerate()
            .filter(|(i, _)| placed & (1 << i) == 0)
            .map(|(_, o)| o.returned)
            .min()
            .unwrap_or(u64::MAX);
        for (i, o) in self.ops.iter().enumerate() {
            if placed & (1 << i) != 0 || o.call > first_return {
                continue;
            }
            let Some(next) = state.step(o.op, o.ret) else {
                continue;
            };
            let p = placed | 1 << i;
            if self.seen.insert((p, next.clone())) && self.from(next, p) {
                return true;
            }
        }
        false
    }
}

impl Scenario {
    /// Checks, when every client has finished, that the history the clients recorded in
    /// `history` is linearizable from `initial` (and clears it before every schedule).
    pub fn linearizable<M: Model>(self, name: &str, history: &History<M>, initial: M) -> Scenario {
        let clear = history.clone();
        let h = history.clone();
        self.before_each(move || clear.clear())
            .invariant(name, move |v: &mut View| {
                h.stamp(v.step());
                if v.is_final() {
                    h.check(&initial)
                } else {
                    Ok(())
                }
            })
    }
}

/// Models of the client crate's patterns.
pub mod models {
    use super::Model;

    /// A mutex: acquire succeeds only when nobody holds it; release only by its holder.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct LockModel {
        pub holder: Option<String>,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum LockOp {
        /// Acquire for this owner; returns whether it got the lock.
        Acquire(String),
        /// Release by this owner; returns whether it held it.
        Release(String),
    }

    impl Model for LockModel {
        type Op = LockOp;
        type Ret = bool;

        fn step(&self, op: &LockOp, ret: Option<&bool>) -> Option<LockModel> {
            let (next, answer) = match op {
                LockOp::Acquire(who) => match &self.holder {
                    None => (
                        LockModel {
                            holder: Some(who.clone()),
                        },
                        true,
                    ),
                    Some(_) => (self.clone(), false),
                },
                LockOp::Release(who) => {
                    if self.holder.as_ref() == Some(who) {
                        (LockModel { holder: None }, true)
                    } else {
                        (self.clone(), false)
                    }
                }
            };
            match ret {
                Some(r) if *r != answer => None,
                _ => Some(next),
            }
        }
    }

    /// A limiter within one window: the first `limit` hits are admitted, the rest refused.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct LimiterModel {
        pub limit: u64,
        pub used: u64,
    }

    impl LimiterModel {
        pub fn new(limit: u64) -> LimiterModel {
            LimiterModel { limit, used: 0 }
        }
    }

    /// One hit; the answer is whether it was admitted.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Hit;

    impl Model for LimiterModel {
        type Op = Hit;
        type Ret = bool;

        fn step(&self, _op: &Hit, ret: Option<&bool>) -> Option<LimiterModel> {
            let admit = self.used < self.limit;
            if ret.is_some_and(|r| *r != admit) {
                return None;
            }
            Some(LimiterModel {
                limit: self.limit,
                used: self.used + admit as u64,
            })
        }
    }

    /// A max register: an update stores its value if it is greater; a read returns it.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct MaxModel {
        pub value: i64,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum MaxOp {
        Update(i64),
        Get,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum MaxRet {
        /// Whether the update stored its value.
        Stored(bool),
        Value(i64),
    }

    impl Model for MaxModel {
        type Op = MaxOp;
        type Ret = MaxRet;

        fn step(&self, op: &MaxOp, ret: Option<&MaxRet>) -> Option<MaxModel> {
            let (next, answer) = match op {
                MaxOp::Update(v) if *v > self.value => {
                    (MaxModel { value: *v }, MaxRet::Stored(true))
                }
                MaxOp::Update(_) => (self.clone(), MaxRet::Stored(false)),
                MaxOp::Get => (self.clone(), MaxRet::Value(self.value)),
            };
            match ret {
                Some(r) if *r != answer => None,
                _ => Some(next),
            }
        }
    }

    /// A versioned record: a write applies only with a version above the stored one.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct VersionedModel {
        pub version: i64,
        pub value: String,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum VersionedOp {
        Write { version: i64, value: String },
        Read,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum VersionedRet {
        /// Whether the write applied.
        Applied(bool),
        /// What a read saw: (version, value).
        Current(i64, String),
    }

    impl Model for VersionedModel {
        type Op = VersionedOp;
        type Ret = VersionedRet;

        fn step(&self, op: &VersionedOp, ret: Option<&VersionedRet>) -> Option<VersionedModel> {
            let (next, answer) = match op {
                VersionedOp::Write { version, value } if *version > self.version => (
                    VersionedModel {
                        version: *version,
                        value: value.clone(),
                    },
                    VersionedRet::Applied(true),
                ),
                VersionedOp::Write { .. } => (self.clone(), VersionedRet::Applied(false)),
                VersionedOp::Read => (
                    self.clone(),
                    VersionedRet::Current(self.version, self.value.clone()),
                ),
            };
            match ret {
                Some(r) if *r != answer => None,
                _ => Some(next),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::models::*;
    use super::*;

    #[test]
    fn overlapping_acquires_linearize_one_way_or_the_other() {
        let h: History<LockModel> = History::new();
        let a = h.call("A", LockOp::Acquire("A".into()));
        let b = h.call("B", LockOp::Acquire("B".into()));
        h.ret(b, true);
        h.ret(a, false);
        assert!(h.check(&LockModel::default()).is_ok());
    }

    #[test]
    fn two_winners_are_not_linearizable() {
        let h: History<LockModel> = History::new();
        let a = h.call("A", LockOp::Acquire("A".into()));
        let b = h.call("B", LockOp::Acquire("B".into()));
        h.ret(b, true);
        h.ret(a, true);
        let err = h.check(&LockModel::default()).unwrap_err();
        assert!(err.contains("Acquire(\"A\") -> true"), "{}", err);
    }

    #[test]
    fn real_time_order_is_respected() {
        // A's update finished before B's read began, so B must see it.
        let h: History<MaxModel> = History::new();
        let a = h.call("A", MaxOp::Update(5));
        h.ret(a, MaxRet::Stored(true));
        let b = h.call("B", MaxOp::Get);
        h.ret(b, MaxRet::Value(0));
        assert!(h.check(&MaxModel::default()).is_err());
        // Overlapping, the read may go first.
        let h: History<MaxModel> = History::new();
        let a = h.call("A", MaxOp::Update(5));
        let b = h.call("B", MaxOp::Get);
        h.ret(a, MaxRet::Stored(true));
        h.ret(b, MaxRet::Value(0));
        assert!(h.check(&MaxModel::default()).is_ok());
    }

    #[test]
    fn an_unanswered_operation_may_or_may_not_have_happened() {
        let h: History<LimiterModel> = History::new();
        let _lost = h.call("A", Hit);
        let b = h.call("B", Hit);
        h.ret(b, false);
        assert!(
            h.check(&LimiterModel::new(1)).is_ok(),
            "A's hit took the slot"
        );
        let h: History<LimiterModel> = History::new();
        let _lost = h.call("A", Hit);
        let b = h.call("B", Hit);
        h.ret(b, true);
        assert!(
            h.check(&LimiterModel::new(1)).is_ok(),
            "A's hit never landed"
        );
        let c = h.call("C", Hit);
        h.ret(c, true);
        assert!(h.check(&LimiterModel::new(1)).is_err());
    }

    #[test]
    fn versioned_writes_apply_in_version_order() {
        let h: History<VersionedModel> = History::new();
        let a = h.call(
            "A",
            VersionedOp::Write {
                version: 2,
                value: "x".into(),
            },
        );
        h.ret(a, VersionedRet::Applied(true));
        let b = h.call(
            "B",
            VersionedOp::Write {
                version: 1,
                value: "y".into(),
            },
        );
        h.ret(b, VersionedRet::Applied(true));
        assert!(h.check(&VersionedModel::default()).is_err());
    }

    #[test]
    fn a_long_history_checks_quickly() {
        // 60 overlapping hits of a limit of 30: memoization keeps this small.
        let h: History<LimiterModel> = History::new();
        let ids: Vec<OpId> = (0..60).map(|i| h.call(&format!("c{}", i), Hit)).collect();
        for (k, id) in ids.into_iter().enumerate() {
            h.ret(id, k % 2 == 0);
        }
        assert!(h.check(&LimiterModel::new(30)).is_ok());
    }
}
