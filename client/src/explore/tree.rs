//! The schedule tree that random walks and PCT have visited, kept so that a walk runs
//! nothing on the part of the tree it has seen before.
//!
//! A node is the state after a prefix of choices. It keeps what a walk needs to go on
//! through it without the server or the clients: the choices that were enabled there (the
//! chooser picks among them exactly as it would in a real run, so a seed gives the same
//! schedules with the cache as without), the child reached by each choice, and the reply
//! the step into it got. A branching node also keeps a `Fork` of the server at that point.
//!
//! A walk that reaches a node it has not seen (or a choice not taken before) departs
//! there: the server resumes from the deepest fork on the path, the clients run from the
//! start on the recorded replies (as exhaustive search's prefix sharing does; client
//! futures cannot be cloned, but they are deterministic), and the rest of the schedule
//! runs for real, recording new nodes as it goes. A walk that ends on a leaf it has seen
//! ran that exact schedule before, with every invariant holding at each step: it is counted
//! and costs nothing more. Invariants therefore run once per distinct step of the tree,
//! not once per walk.
//!
//! Memory is bounded twice. At most `MAX_NODES` nodes: past that the tree stops growing
//! (walks still use what it has, and run the rest of their schedule unrecorded). At most
//! `MAX_FORKS` forks: past that, the fork least recently used is dropped (a second-chance
//! "clock" over the nodes holding one); a walk departing from a node without its fork
//! resumes from a fork higher up the path and runs the steps between for real.

use std::collections::VecDeque;

use redlab_server::Fork;

use super::schedule::Choice;
use crate::value::Value;

/// Nodes kept at most (a 3-client x 4-command scenario has 110,251).
pub(crate) const MAX_NODES: usize = 1 << 17;
/// Server forks kept at most.
pub(crate) const MAX_FORKS: usize = 1 << 14;

/// No child recorded for this choice yet.
pub(crate) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Reached, but the run stopped before it chose here.
    Open,
    /// It chose here: its enabled choices, with the child each led to (`NONE` if not
    /// taken yet), are `count` arms from `first` in `Tree::arms`.
    Branch,
    /// The schedule ended here and the final check held.
    Leaf,
}

/// Small on purpose: a walk visits nodes all over the tree, and a node, its arms and its
/// fork pointer are what it reads at each step (the reply, read only on departure, lives
/// apart in `Tree::replies`).
pub(crate) struct Node {
    first: u32,
    count: u32,
    pub state: State,
    /// Resumed from since the clock hand last passed (second chance before eviction).
    used: bool,
    pub fork: Option<Box<Fork>>,
}

pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    /// Every branch node's (choice, child) pairs, contiguous per node.
    arms: Vec<(Choice, u32)>,
    /// The reply of the step into each node (None at the root), by node.
    replies: Vec<Option<Value>>,
    /// Nodes holding a fork, in the order the clock hand visits them.
    forked: VecDeque<u32>,
    max_nodes: usize,
    max_forks: usize,
    /// The scenario did something the tree cannot stand for (time passed, a client
    /// blocked or panicked, an invariant kept state, clients did not retrace their steps):
    /// it is not used again in this exploration.
    pub dead: bool,
}

impl Default for Tree {
    fn default() -> Tree {
        Tree::with_limits(MAX_NODES, MAX_FORKS)
    }
}

impl Tree {
    pub fn with_limits(max_nodes: usize, max_forks: usize) -> Tree {
        Tree {
            nodes: Vec::new(),
            arms: Vec::new(),
            replies: Vec::new(),
            forked: VecDeque::new(),
            max_nodes: max_nodes.max(1),
            max_forks,
            dead: false,
        }
    }

    /// Drops everything and refuses to be used again.
    pub fn kill(&mut self) {
        *self = Tree {
            dead: true,
            ..Tree::with_limits(self.max_nodes, self.max_forks)
        };
    }

    fn push(&mut self, reply: Option<Value>) -> u32 {
        self.nodes.push(Node {
            first: 0,
            count: 0,
            state: State::Open,
            used: false,
            fork: None,
        });
        self.replies.push(reply);
        (self.nodes.len() - 1) as u32
    }

    /// The root, made on first use.
    pub fn root(&mut self) -> u32 {
        if self.nodes.is_empty() {
            self.push(None);
        }
        0
    }

    /// The choices enabled at a branch node, into `out`.
    pub fn enabled_into(&self, node: u32, out: &mut Vec<Choice>) {
        let n = &self.nodes[node as usize];
        out.clear();
        let arms = &self.arms[n.first as usize..(n.first + n.count) as usize];
        out.extend(arms.iter().map(|a| a.0));
    }

    /// The child of a branch node by its `k`th choice (`NONE` if not taken yet).
    pub fn child_at(&self, node: u32, k: usize) -> u32 {
        let n = &self.nodes[node as usize];
        if k < n.count as usize {
            self.arms[n.first as usize + k].1
        } else {
            NONE
        }
    }

    /// The reply of the step into `node`.
    pub fn reply(&self, node: u32) -> Option<Value> {
        self.replies[node as usize].clone()
    }

    /// Records what is enabled at `node`. False when the node saw something else before:
    /// the clients are not deterministic.
    pub fn visit(&mut self, node: u32, enabled: &[Choice]) -> bool {
        let n = &self.nodes[node as usize];
        match n.state {
            State::Open => {
                let first = self.arms.len() as u32;
                self.arms.extend(enabled.iter().map(|&c| (c, NONE)));
                let n = &mut self.nodes[node as usize];
                n.first = first;
                n.count = enabled.len() as u32;
                n.state = State::Branch;
                true
            }
            State::Branch => {
                let arms = &self.arms[n.first as usize..(n.first + n.count) as usize];
                arms.len() == enabled.len() && arms.iter().zip(enabled).all(|(a, e)| a.0 == *e)
            }
            State::Leaf => false,
        }
    }

    /// Whether `node` should get a fork: it branches and has none.
    pub fn wants_fork(&self, node: u32) -> bool {
        let n = &self.nodes[node as usize];
        n.fork.is_none() && n.state == State::Branch && n.count > 1
    }

    /// Keeps `fork` at `node`, dropping the least recently used fork if over the limit.
    pub fn keep_fork(&mut self, node: u32, fork: Fork) {
        if self.max_forks == 0 {
            return;
        }
        while self.forked.len() >= self.max_forks {
            let Some(old) = self.forked.pop_front() else {
                break;
            };
            let n = &mut self.nodes[old as usize];
            if n.used {
                n.used = false;
                self.forked.push_back(old);
            } else {
                n.fork = None;
            }
        }
        self.nodes[node as usize].fork = Some(Box::new(fork));
        self.forked.push_back(node);
    }

    /// Marks `node`'s fork as just used.
    pub fn touch(&mut self, node: u32) {
        self.nodes[node as usize].used = true;
    }

    /// The child of `node` by its `k`th enabled choice: the one recorded, or a new one with
    /// `reply`. None when the node does not branch there or the tree is full.
    pub fn child(&mut self, node: u32, k: usize, reply: Option<Value>) -> Option<u32> {
        let n = &self.nodes[node as usize];
        if n.state != State::Branch || k >= n.count as usize {
            return None;
        }
        let arm = n.first as usize + k;
        let next = self.arms[arm].1;
        if next != NONE {
            return Some(next);
        }
        if self.nodes.len() >= self.max_nodes {
            return None;
        }
        let id = self.push(reply);
        self.arms[arm].1 = id;
        Some(id)
    }

    /// The schedule ended at `node` with every invariant holding.
    pub fn leaf(&mut self, node: u32) {
        let n = &mut self.nodes[node as usize];
        if n.state == State::Open {
            n.state = State::Leaf;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_server::{Clock, Config, Engine};

    fn fork() -> Fork {
        let e = Engine::with_clock(Config::default(), Clock::manual(1_000));
        let snap = e.snapshot();
        e.fork(&snap).expect("a fresh engine forks")
    }

    const THREE: [Choice; 3] = [Choice::Run(0), Choice::Run(1), Choice::Run(2)];

    #[test]
    fn forks_past_the_limit_drop_the_least_recently_used() {
        let mut t = Tree::with_limits(100, 2);
        let r = t.root();
        assert!(t.visit(r, &THREE));
        let kids: Vec<u32> = (0..3).map(|k| t.child(r, k, None).unwrap()).collect();
        t.keep_fork(kids[0], fork());
        t.keep_fork(kids[1], fork());
        t.touch(kids[0]);
        t.keep_fork(kids[2], fork());
        let has = |t: &Tree, n: u32| t.nodes[n as usize].fork.is_some();
        assert!(has(&t, kids[0]), "used lately: kept");
        assert!(!has(&t, kids[1]), "the least recently used goes");
        assert!(has(&t, kids[2]));
        assert_eq!(t.forked.len(), 2);
    }

    #[test]
    fn the_tree_stops_growing_at_its_node_limit() {
        let mut t = Tree::with_limits(3, 0);
        let r = t.root();
        assert!(t.visit(r, &THREE));
        let a = t.child(r, 0, None).unwrap();
        assert_eq!(t.child(r, 0, None), Some(a), "a child is found again");
        assert!(t.child(r, 1, None).is_some());
        assert_eq!(t.child(r, 2, None), None, "full");
        assert_eq!(t.child_at(r, 2), NONE);
        t.keep_fork(a, fork());
        assert!(
            t.nodes[a as usize].fork.is_none(),
            "no forks at a limit of 0"
        );
    }

    #[test]
    fn a_node_that_sees_other_choices_is_refused() {
        let mut t = Tree::default();
        let r = t.root();
        assert!(t.visit(r, &THREE));
        assert!(t.visit(r, &THREE));
        assert!(
            !t.visit(r, &THREE[..2]),
            "clients that do not retrace their steps"
        );
        let mut out = Vec::new();
        t.enabled_into(r, &mut out);
        assert_eq!(out, THREE);
        let leaf = t.child(r, 1, Some(Value::Int(7))).unwrap();
        t.leaf(leaf);
        assert!(t.nodes[leaf as usize].state == State::Leaf);
        assert_eq!(t.reply(leaf), Some(Value::Int(7)));
        assert!(!t.visit(leaf, &THREE));
    }
}
