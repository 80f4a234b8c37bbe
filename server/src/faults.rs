//! Fault injection rules, shared between the server thread and the test thread.
//!
//! The rule table lives behind an `Arc` so a test can add and remove rules while the server
//! runs; the data plane only reads it between commands.

use std::sync::Arc;

use dashmap::DashMap;

/// A fault rule (filled out by the fault-injection work; see the issue on faults).
#[derive(Clone, Debug)]
pub struct FaultRule {
    pub id: u64,
    pub description: String,
}

#[derive(Clone, Debug, Default)]
pub struct Faults {
    rules: Arc<DashMap<u64, FaultRule>>,
}

impl Faults {
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }
}
