//! Sorted set: members ordered by (score, member), with O(1) score lookup.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use foldhash::fast::FixedState;
use std::collections::HashMap;

/// A score with a total order (scores are never NaN; Redis refuses NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

#[derive(Clone, Debug, Default)]
pub struct ZSet {
    scores: HashMap<Vec<u8>, f64, FixedState>,
    ordered: BTreeSet<(Score, Vec<u8>)>,
}

impl ZSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// Sets a member's score; returns the previous score.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let old = self.scores.insert(member.to_vec(), score);
        if let Some(old) = old {
            self.ordered.remove(&(Score(old), member.to_vec()));
        }
        self.ordered.insert((Score(score), member.to_vec()));
        old
    }

    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let old = self.scores.remove(member)?;
        self.ordered.remove(&(Score(old), member.to_vec()));
        Some(old)
    }

    /// Members in ascending (score, member) order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Vec<u8>, f64)> + '_ {
        self.ordered.iter().map(|(s, m)| (m, s.0))
    }

    /// Zero-based rank in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.ordered.range(..(Score(score), member.to_vec())).count())
    }
}
