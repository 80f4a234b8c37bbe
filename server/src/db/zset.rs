//! Sorted set: a member -> score map beside a skiplist ordered by (score, member).
//!
//! The skiplist is Redis's own design (spans on every link, so rank lookups and rank ranges
//! are O(log n)), kept in an arena of nodes addressed by index: no unsafe, no Rc. Levels are
//! drawn from a fixed-seed generator so runs are repeatable.
//!
//! This is only the large form (Redis's skiplist encoding): small sets are packed in
//! zset_packed.rs, which scans as Redis's listpack code does, and zset_value.rs chooses.

use std::cmp::Ordering;
use std::collections::HashMap;

use foldhash::fast::FixedState;

const MAX_LEVEL: usize = 32;
const NIL: u32 = u32::MAX;
const HEAD: u32 = 0;

/// A score interval as ZRANGEBYSCORE takes it: `(` makes an end exclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub max: f64,
    pub minex: bool,
    pub maxex: bool,
}

impl ScoreRange {
    pub fn gte_min(&self, v: f64) -> bool {
        if self.minex {
            v > self.min
        } else {
            v >= self.min
        }
    }

    pub fn lte_max(&self, v: f64) -> bool {
        if self.maxex {
            v < self.max
        } else {
            v <= self.max
        }
    }

    pub fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.minex || self.maxex))
    }
}

/// One end of a lex range: `-` and `+` are below and above every string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    Min,
    Str(Vec<u8>),
    Max,
}

impl LexBound {
    fn cmp_value(&self, v: &[u8]) -> Ordering {
        match self {
            LexBound::Min => Ordering::Less,
            LexBound::Max => Ordering::Greater,
            LexBound::Str(s) => s.as_slice().cmp(v),
        }
    }
}

/// A lex interval as ZRANGEBYLEX takes it (`[a`, `(a`, `-`, `+`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
    pub minex: bool,
    pub maxex: bool,
}

impl LexRange {
    pub fn gte_min(&self, v: &[u8]) -> bool {
        let c = self.min.cmp_value(v).reverse();
        if self.minex {
            c == Ordering::Greater
        } else {
            c != Ordering::Less
        }
    }

    pub fn lte_max(&self, v: &[u8]) -> bool {
        let c = self.max.cmp_value(v).reverse();
        if self.maxex {
            c == Ordering::Less
        } else {
            c != Ordering::Greater
        }
    }

    pub fn is_empty(&self) -> bool {
        let c = match (&self.min, &self.max) {
            (LexBound::Min, LexBound::Min) | (LexBound::Max, LexBound::Max) => Ordering::Equal,
            (LexBound::Min, _) | (_, LexBound::Max) => Ordering::Less,
            (LexBound::Max, _) | (_, LexBound::Min) => Ordering::Greater,
            (LexBound::Str(a), LexBound::Str(b)) => a.cmp(b),
        };
        c == Ordering::Greater || (c == Ordering::Equal && (self.minex || self.maxex))
    }
}

#[derive(Clone, Copy, Debug)]
struct Link {
    forward: u32,
    span: u32,
}

#[derive(Clone, Debug)]
struct Node {
    member: Vec<u8>,
    score: f64,
    backward: u32,
    levels: Links,
}

/// A node's links, level 0 first. Level 0 sits in the node itself: a range walk (ZRANGE,
/// GEOSEARCH's box scans) follows it from node to node, and a separate allocation would cost
/// a second cache miss per node. Three nodes in four have no other level, so `upper` is
/// empty for them and allocates nothing.
#[derive(Clone, Debug)]
struct Links {
    first: Link,
    upper: Vec<Link>,
}

impl Links {
    /// `n` links (at least one), all pointing nowhere.
    fn new(n: usize) -> Links {
        let none = Link {
            forward: NIL,
            span: 0,
        };
        Links {
            first: none,
            upper: vec![none; n.saturating_sub(1)],
        }
    }

    fn len(&self) -> usize {
        1 + self.upper.len()
    }

    /// Grows to `n` links; the new ones point nowhere.
    fn grow_to(&mut self, n: usize) {
        if n > self.len() {
            self.upper.resize(
                n - 1,
                Link {
                    forward: NIL,
                    span: 0,
                },
            );
        }
    }
}

impl std::ops::Index<usize> for Links {
    type Output = Link;

    fn index(&self, i: usize) -> &Link {
        if i == 0 {
            &self.first
        } else {
            &self.upper[i - 1]
        }
    }
}

impl std::ops::IndexMut<usize> for Links {
    fn index_mut(&mut self, i: usize) -> &mut Link {
        if i == 0 {
            &mut self.first
        } else {
            &mut self.upper[i - 1]
        }
    }
}

#[derive(Clone)]
pub struct ZSet {
    scores: HashMap<Vec<u8>, f64, FixedState>,
    /// Index 0 is the header; freed slots are reused.
    nodes: Vec<Node>,
    free: Vec<u32>,
    level: usize,
    tail: u32,
    rng: u64,
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet::new()
    }
}

/// (score, member) strictly before (s, m) in the set's order.
fn before(score: f64, member: &[u8], s: f64, m: &[u8]) -> bool {
    score < s || (score == s && member < m)
}

impl ZSet {
    pub fn new() -> Self {
        let header = Node {
            member: Vec::new(),
            score: 0.0,
            backward: NIL,
            // One link; more are added as the set's level grows (see `insert`).
            levels: Links::new(1),
        };
        ZSet {
            scores: HashMap::default(),
            nodes: vec![header],
            free: Vec::new(),
            level: 1,
            tail: NIL,
            rng: 0x2545_f491_4f6c_dd1d,
        }
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
        let old = match self.scores.get_mut(member) {
            Some(s) => {
                let old = *s;
                if old == score && old.is_sign_negative() == score.is_sign_negative() {
                    return Some(old);
                }
                *s = score;
                self.sl_delete(old, member);
                Some(old)
            }
            None => {
                self.scores.insert(member.to_vec(), score);
                None
            }
        };
        self.sl_insert(score, member.to_vec());
        old
    }

    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let old = self.scores.remove(member)?;
        self.sl_delete(old, member);
        Some(old)
    }

    /// Members in ascending (score, member) order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// Ascending from zero-based rank `start`.
    pub fn iter_from(&self, start: usize) -> Iter<'_> {
        let len = self.len();
        if start >= len {
            return Iter {
                zs: self,
                front: NIL,
                back: NIL,
                remaining: 0,
            };
        }
        Iter {
            zs: self,
            front: self.node_at(start),
            back: self.tail,
            remaining: len - start,
        }
    }

    /// Descending from zero-based rank `start` (the element at `start` first).
    pub fn rev_iter_from(&self, start: usize) -> std::iter::Rev<Iter<'_>> {
        let len = self.len();
        if start >= len {
            return Iter {
                zs: self,
                front: NIL,
                back: NIL,
                remaining: 0,
            }
            .rev();
        }
        let first = self.nodes[HEAD as usize].levels[0].forward;
        Iter {
            zs: self,
            front: first,
            back: self.node_at(start),
            remaining: start + 1,
        }
        .rev()
    }

    /// Zero-based rank in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        let mut x = HEAD;
        let mut rank = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.forward == NIL {
                    break;
                }
                let f = &self.nodes[l.forward as usize];
                if f.score < score || (f.score == score && f.member.as_slice() <= member) {
                    rank += l.span as usize;
                    x = l.forward;
                } else {
                    break;
                }
            }
            if x != HEAD && self.nodes[x as usize].member == member {
                return Some(rank - 1);
            }
        }
        None
    }

    /// The member and score at zero-based rank `rank`.
    pub fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        if rank >= self.len() {
            return None;
        }
        let n = &self.nodes[self.node_at(rank) as usize];
        Some((&n.member, n.score))
    }

    /// Zero-based rank of the first element within `r`.
    pub fn first_in_score_range(&self, r: &ScoreRange) -> Option<usize> {
        if !self.score_range_overlaps(r) {
            return None;
        }
        let (x, rank) = self.seek(|n| !r.gte_min(n.score));
        let next = self.nodes[x as usize].levels[0].forward;
        (next != NIL && r.lte_max(self.nodes[next as usize].score)).then_some(rank)
    }

    /// Zero-based rank of the last element within `r`.
    pub fn last_in_score_range(&self, r: &ScoreRange) -> Option<usize> {
        if !self.score_range_overlaps(r) {
            return None;
        }
        let (x, rank) = self.seek(|n| r.lte_max(n.score));
        (x != HEAD && r.gte_min(self.nodes[x as usize].score)).then(|| rank - 1)
    }

    /// Number of elements within `r`.
    pub fn count_in_score_range(&self, r: &ScoreRange) -> usize {
        match (self.first_in_score_range(r), self.last_in_score_range(r)) {
            (Some(a), Some(b)) if b >= a => b - a + 1,
            _ => 0,
        }
    }

    /// Zero-based rank of the first element of a lex range, searched as Redis's skiplist
    /// searches it (where members with different scores are not in lex order, this differs
    /// from the listpack's linear scan, zset_packed.rs).
    pub fn first_in_lex_range(&self, r: &LexRange) -> Option<usize> {
        if !self.lex_range_overlaps(r) {
            return None;
        }
        let (x, rank) = self.seek(|n| !r.gte_min(&n.member));
        let next = self.nodes[x as usize].levels[0].forward;
        if next == NIL {
            return None;
        }
        r.lte_max(&self.nodes[next as usize].member).then_some(rank)
    }

    /// Zero-based rank of the last element of a lex range (see `first_in_lex_range`).
    pub fn last_in_lex_range(&self, r: &LexRange) -> Option<usize> {
        if !self.lex_range_overlaps(r) {
            return None;
        }
        let (x, rank) = self.seek(|n| r.lte_max(&n.member));
        if x == HEAD {
            return None;
        }
        r.gte_min(&self.nodes[x as usize].member)
            .then_some(rank - 1)
    }

    /// Number of elements of a lex range, counted as Redis's skiplist counts them.
    pub fn count_in_lex_range(&self, r: &LexRange) -> usize {
        match (self.first_in_lex_range(r), self.last_in_lex_range(r)) {
            (Some(a), Some(b)) if b >= a => b - a + 1,
            _ => 0,
        }
    }

    /// Removes zero-based ranks `start..=end` and returns them in order.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> Vec<(Vec<u8>, f64)> {
        let len = self.len();
        if start > end || start >= len {
            return Vec::new();
        }
        let end = end.min(len - 1);
        // The same rank walk as `node_at`, kept inline on purpose: this one records the last
        // node of every level (`update`) for the unlinks, which `node_at` has no use for.
        let mut update = [HEAD; MAX_LEVEL];
        let mut x = HEAD;
        let mut traversed = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.forward != NIL && traversed + (l.span as usize) <= start {
                    traversed += l.span as usize;
                    x = l.forward;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        let mut out = Vec::with_capacity(end - start + 1);
        let mut x = self.nodes[x as usize].levels[0].forward;
        for _ in start..=end {
            if x == NIL {
                break;
            }
            let next = self.nodes[x as usize].levels[0].forward;
            self.unlink(x, &update);
            let node = &mut self.nodes[x as usize];
            let member = std::mem::take(&mut node.member);
            let score = node.score;
            node.levels = Links::new(1);
            self.free.push(x);
            self.scores.remove(&member);
            out.push((member, score));
            x = next;
        }
        out
    }

    // ---- the skiplist ---------------------------------------------------------------------

    fn score_range_overlaps(&self, r: &ScoreRange) -> bool {
        if r.is_empty() || self.tail == NIL {
            return false;
        }
        let first = self.nodes[HEAD as usize].levels[0].forward;
        r.gte_min(self.nodes[self.tail as usize].score)
            && r.lte_max(self.nodes[first as usize].score)
    }

    fn lex_range_overlaps(&self, r: &LexRange) -> bool {
        if r.is_empty() || self.tail == NIL {
            return false;
        }
        let first = self.nodes[HEAD as usize].levels[0].forward;
        r.gte_min(&self.nodes[self.tail as usize].member)
            && r.lte_max(&self.nodes[first as usize].member)
    }

    /// Walks forward while `go` holds for the next node; returns the last node it holds for
    /// (or the header) and that node's one-based rank (0 for the header).
    fn seek(&self, go: impl Fn(&Node) -> bool) -> (u32, usize) {
        let mut x = HEAD;
        let mut rank = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.forward != NIL && go(&self.nodes[l.forward as usize]) {
                    rank += l.span as usize;
                    x = l.forward;
                } else {
                    break;
                }
            }
        }
        (x, rank)
    }

    /// Node index at zero-based `rank` (which must exist).
    fn node_at(&self, rank: usize) -> u32 {
        let target = rank + 1;
        let mut x = HEAD;
        let mut traversed = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.forward != NIL && traversed + (l.span as usize) <= target {
                    traversed += l.span as usize;
                    x = l.forward;
                } else {
                    break;
                }
            }
            if traversed == target {
                return x;
            }
        }
        x
    }

    fn random_level(&mut self) -> usize {
        let mut level = 1;
        loop {
            // xorshift64*
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32;
            if (r & 0xFFFF) < 0xFFFF / 4 && level < MAX_LEVEL {
                level += 1;
            } else {
                return level;
            }
        }
    }

    fn alloc(&mut self, node: Node) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    #[allow(clippy::needless_range_loop)] // levels index several parallel arrays
    fn sl_insert(&mut self, score: f64, member: Vec<u8>) {
        let mut update = [HEAD; MAX_LEVEL];
        let mut rank = [0usize; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            rank[i] = if i == self.level - 1 { 0 } else { rank[i + 1] };
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.forward == NIL {
                    break;
                }
                let f = &self.nodes[l.forward as usize];
                if before(f.score, &f.member, score, &member) {
                    rank[i] += l.span as usize;
                    x = l.forward;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        let lvl = self.random_level();
        // The set's length before this insert: the member is already in `scores`.
        let len_before = self.scores.len() - 1;
        if lvl > self.level {
            // The header's links grow with the set's level (most small sets stay low).
            self.nodes[HEAD as usize].levels.grow_to(lvl);
            for i in self.level..lvl {
                rank[i] = 0;
                update[i] = HEAD;
                self.nodes[HEAD as usize].levels[i].span = len_before as u32;
            }
            self.level = lvl;
        }
        let idx = self.alloc(Node {
            member,
            score,
            backward: NIL,
            levels: Links::new(lvl),
        });
        for i in 0..lvl {
            let u = update[i] as usize;
            let ul = self.nodes[u].levels[i];
            let gap = (rank[0] - rank[i]) as u32;
            self.nodes[idx as usize].levels[i] = Link {
                forward: ul.forward,
                span: ul.span - gap,
            };
            self.nodes[u].levels[i] = Link {
                forward: idx,
                span: gap + 1,
            };
        }
        for i in lvl..self.level {
            self.nodes[update[i] as usize].levels[i].span += 1;
        }
        self.nodes[idx as usize].backward = if update[0] == HEAD { NIL } else { update[0] };
        let fwd = self.nodes[idx as usize].levels[0].forward;
        if fwd != NIL {
            self.nodes[fwd as usize].backward = idx;
        } else {
            self.tail = idx;
        }
    }

    #[allow(clippy::needless_range_loop)]
    fn unlink(&mut self, x: u32, update: &[u32; MAX_LEVEL]) {
        for i in 0..self.level {
            let u = update[i] as usize;
            if self.nodes[u].levels[i].forward == x {
                let xl = self.nodes[x as usize].levels[i];
                let ul = &mut self.nodes[u].levels[i];
                ul.span = ul.span + xl.span - 1;
                ul.forward = xl.forward;
            } else {
                self.nodes[u].levels[i].span -= 1;
            }
        }
        let (fwd, back) = (
            self.nodes[x as usize].levels[0].forward,
            self.nodes[x as usize].backward,
        );
        if fwd != NIL {
            self.nodes[fwd as usize].backward = back;
        } else {
            self.tail = back;
        }
        while self.level > 1 && self.nodes[HEAD as usize].levels[self.level - 1].forward == NIL {
            self.level -= 1;
        }
    }

    fn sl_delete(&mut self, score: f64, member: &[u8]) {
        let mut update = [HEAD; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.forward == NIL {
                    break;
                }
                let f = &self.nodes[l.forward as usize];
                if before(f.score, &f.member, score, member) {
                    x = l.forward;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        let x = self.nodes[x as usize].levels[0].forward;
        if x != NIL
            && self.nodes[x as usize].score == score
            && self.nodes[x as usize].member == member
        {
            self.unlink(x, &update);
            let node = &mut self.nodes[x as usize];
            node.member = Vec::new();
            node.levels = Links::new(1);
            self.free.push(x);
        }
    }
}

/// Iterates (member, score) pairs in order, from either end.
pub struct Iter<'a> {
    zs: &'a ZSet,
    front: u32,
    back: u32,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Vec<u8>, f64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let n = &self.zs.nodes[self.front as usize];
        self.remaining -= 1;
        self.front = n.levels[0].forward;
        Some((&n.member, n.score))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let n = &self.zs.nodes[self.back as usize];
        self.remaining -= 1;
        self.back = n.backward;
        Some((&n.member, n.score))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(z: &ZSet) {
        let mut v: Vec<(Vec<u8>, f64)> = z.scores.iter().map(|(m, s)| (m.clone(), *s)).collect();
        v.sort_by(|a, b| {
            a.1.partial_cmp(&b.1)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.0.cmp(&b.0))
        });
        let got: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.clone(), s)).collect();
        assert_eq!(got, v);
        let back: Vec<(Vec<u8>, f64)> = z.iter().rev().map(|(m, s)| (m.clone(), s)).collect();
        assert_eq!(back.into_iter().rev().collect::<Vec<_>>(), v);
        for (i, (m, s)) in v.iter().enumerate() {
            assert_eq!(z.rank(m), Some(i));
            assert_eq!(z.get_by_rank(i), Some((m.as_slice(), *s)));
        }
    }

    #[test]
    fn ranks_stay_right_through_churn() {
        let mut z = ZSet::new();
        let mut seed = 7u64;
        for step in 0..3000u64 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let m = format!("m{}", (seed >> 33) % 400).into_bytes();
            let s = ((seed >> 20) % 50) as f64;
            if (seed >> 60).is_multiple_of(3) {
                z.remove(&m);
            } else {
                z.insert(&m, s);
            }
            if step % 500 == 0 {
                check(&z);
            }
        }
        check(&z);
        let n = z.len();
        let removed = z.remove_rank_range(10, 19);
        assert_eq!(removed.len(), 10);
        assert_eq!(z.len(), n - 10);
        check(&z);
    }

    #[test]
    fn score_and_lex_ranges() {
        let mut z = ZSet::new();
        for (i, m) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            z.insert(m.as_bytes(), i as f64);
        }
        let r = ScoreRange {
            min: 1.0,
            max: 3.0,
            minex: true,
            maxex: false,
        };
        assert_eq!(z.first_in_score_range(&r), Some(2));
        assert_eq!(z.last_in_score_range(&r), Some(3));
        assert_eq!(z.count_in_score_range(&r), 2);
        let l = LexRange {
            min: LexBound::Str(b"b".to_vec()),
            max: LexBound::Max,
            minex: false,
            maxex: true,
        };
        assert_eq!(z.count_in_lex_range(&l), 4);
        assert_eq!(z.last_in_lex_range(&l), Some(4));
        let rev: Vec<_> = z.rev_iter_from(2).map(|(m, _)| m.clone()).collect();
        assert_eq!(rev, vec![b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    }
}
