//! What the code under test used that its production server lacks.
//!
//! Every command a profile refuses because it arrived in a later version (HEXPIRE under
//! redis-7.2, DELEX under valkey-8.1) or every option (SET IFEQ under redis-7.0) is refused as
//! that version would refuse it and recorded here. The report is shared between the engine
//! and the test thread (`Server::compat_report`), and readable from any client with
//! `REDLAB.COMPAT REPORT`, so a suite can fail at its end when the list is not empty.

use std::sync::{Arc, Mutex, MutexGuard};

use super::Since;

/// One command or option the profile refused, with how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `hexpire`, `client|setinfo`, or `set IFEQ` for an option.
    pub what: String,
    /// Where it exists: "Redis 7.4", "Redis 8.4, Valkey 8.1".
    pub available_in: String,
    /// How many times it was refused.
    pub count: u64,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (refused {} time{}; available in {})",
            self.what,
            self.count,
            if self.count == 1 { "" } else { "s" },
            self.available_in
        )
    }
}

/// The shared list, in the order things were first refused.
#[derive(Clone, Debug, Default)]
pub struct Report(Arc<Mutex<Vec<Refusal>>>);

impl Report {
    fn lock(&self) -> MutexGuard<'_, Vec<Refusal>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes one refusal of `what`, which exists from `since`.
    pub fn record(&self, what: &str, since: Since) {
        let mut list = self.lock();
        match list.iter_mut().find(|r| r.what == what) {
            Some(r) => r.count += 1,
            None => list.push(Refusal {
                what: what.to_string(),
                available_in: since.describe(),
                count: 1,
            }),
        }
    }

    /// Everything refused so far.
    pub fn entries(&self) -> Vec<Refusal> {
        self.lock().clone()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Forgets what was recorded (REDLAB.COMPAT RESET).
    pub fn clear(&self) {
        self.lock().clear();
    }
}
