//! An Aho–Corasick automaton over the old sides of a section's hunks, as
//! sequences of line ids (see [`super`]). A state is the longest suffix of
//! the text read so far that is a prefix of some old side; the old sides
//! ending at a position are the terminal states on the failure chain of the
//! state there.
//!
//! Two additions to the textbook automaton make the matcher's queries cheap:
//! - an Euler tour of the failure tree: "old side `p` ends here" is
//!   `tin[p] <= tin[s] < tout[p]`, one comparison, and all positions where
//!   `p` ends form one value interval (searched in [`super::wavelet`]);
//! - skew-binary jump pointers on the failure chain ([`Automaton::within`]):
//!   the longest such suffix no longer than `r` lines, in O(log) steps.
//!
//! Transitions live in one hash map keyed by (state, line id); the root's
//! are also kept in an array by line id, which [`Automaton::step`] reads:
//! most lines of a file are read at the root (the line before matched
//! nothing), and every failure chain ends there. Line id 0 (a line in no
//! old side) always leads back to the root.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The start state: nothing matched.
pub(super) const ROOT: u32 = 0;

/// Mixes a packed (state, id) key, or a line number; the identity would
/// leave the high bits that hashbrown's control bytes use all zero.
#[derive(Default)]
pub(super) struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        let h = (n ^ (n >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

fn key(state: u32, id: u32) -> u64 {
    (u64::from(state) << 32) | u64::from(id)
}

/// The automaton of a set of line-id sequences.
pub(super) struct Automaton {
    edges: HashMap<u64, u32, BuildHasherDefault<MixHasher>>,
    /// The root's transitions by line id (the root when it has none).
    from_root: Vec<u32>,
    fail: Vec<u32>,
    /// Length, in lines, of the prefix a state stands for.
    depth: Vec<u32>,
    jump: Vec<u32>,
    tin: Vec<u32>,
    tout: Vec<u32>,
}

impl Automaton {
    /// Build the automaton of `patterns` (none may be empty, and no id
    /// may be 0); returns it and the terminal state of each pattern, in
    /// order.
    pub(super) fn new<'a>(patterns: impl Iterator<Item = &'a [u32]>) -> (Automaton, Vec<u32>) {
        let mut edges: HashMap<u64, u32, BuildHasherDefault<MixHasher>> = HashMap::default();
        let mut from_root: Vec<u32> = Vec::new();
        let mut parent = vec![ROOT];
        let mut via = vec![0u32];
        let mut depth = vec![0u32];
        let mut terminals = Vec::new();
        for pattern in patterns {
            let mut s = ROOT;
            for &id in pattern {
                let next = parent.len() as u32;
                let was = s;
                s = *edges.entry(key(s, id)).or_insert_with(|| {
                    parent.push(s);
                    via.push(id);
                    depth.push(depth[s as usize] + 1);
                    next
                });
                if was == ROOT {
                    let id = id as usize;
                    if from_root.len() <= id {
                        from_root.resize(id + 1, ROOT);
                    }
                    from_root[id] = s;
                }
            }
            terminals.push(s);
        }
        let n = parent.len();
        // States in order of depth: a failure link always points shallower.
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&v| depth[v as usize]);
        let mut fail = vec![ROOT; n];
        let mut jump = vec![ROOT; n];
        let mut level = vec![0u32; n];
        for &v in order.iter().skip(1) {
            let (v, u, c) = (v as usize, parent[v as usize], via[v as usize]);
            let f = if u == ROOT {
                ROOT
            } else {
                let mut f = fail[u as usize];
                loop {
                    if let Some(&t) = edges.get(&key(f, c)) {
                        break t;
                    }
                    if f == ROOT {
                        break ROOT;
                    }
                    f = fail[f as usize];
                }
            };
            fail[v] = f;
            let f = f as usize;
            level[v] = level[f] + 1;
            let j = jump[f] as usize;
            jump[v] = if level[f] - level[j] == level[j] - level[jump[j] as usize] {
                jump[j]
            } else {
                f as u32
            };
        }
        // Euler tour of the failure tree, without child lists: subtree sizes
        // deepest first, then each child takes the next slot of its parent.
        let mut size = vec![1u32; n];
        for &v in order.iter().skip(1).rev() {
            size[fail[v as usize] as usize] += size[v as usize];
        }
        let mut tin = vec![0u32; n];
        let mut next_slot = vec![0u32; n];
        next_slot[ROOT as usize] = 1;
        for &v in order.iter().skip(1) {
            let (v, f) = (v as usize, fail[v as usize] as usize);
            tin[v] = next_slot[f];
            next_slot[f] += size[v];
            next_slot[v] = tin[v] + 1;
        }
        let tout = (0..n).map(|v| tin[v] + size[v]).collect();
        (
            Automaton {
                edges,
                from_root,
                fail,
                depth,
                jump,
                tin,
                tout,
            },
            terminals,
        )
    }

    /// The number of states (an upper bound of every `tin`/`tout`).
    pub(super) fn len(&self) -> u32 {
        self.fail.len() as u32
    }

    /// The state after reading line `id` in state `s`.
    pub(super) fn step(&self, mut s: u32, id: u32) -> u32 {
        if id == 0 {
            return ROOT;
        }
        loop {
            if s == ROOT {
                return self.from_root.get(id as usize).copied().unwrap_or(ROOT);
            }
            if let Some(&t) = self.edges.get(&key(s, id)) {
                return t;
            }
            s = self.fail[s as usize];
        }
    }

    /// How many lines state `s` stands for.
    pub(super) fn depth(&self, s: u32) -> usize {
        self.depth[s as usize] as usize
    }

    /// The longest suffix of `s`'s lines, at most `r` long, that is a state.
    pub(super) fn within(&self, mut s: u32, r: usize) -> u32 {
        while self.depth(s) > r {
            let j = self.jump[s as usize];
            s = if self.depth(j) > r {
                j
            } else {
                self.fail[s as usize]
            };
        }
        s
    }

    /// The Euler-tour number of a state.
    pub(super) fn tin(&self, s: u32) -> u32 {
        self.tin[s as usize]
    }

    /// The Euler-tour interval of the states whose lines end with `p`'s.
    pub(super) fn subtree(&self, p: u32) -> (u32, u32) {
        (self.tin[p as usize], self.tout[p as usize])
    }

    /// Do the lines of state `s` end with those of state `p`?
    pub(super) fn ends_with(&self, s: u32, p: u32) -> bool {
        let (lo, hi) = self.subtree(p);
        (lo..hi).contains(&self.tin(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(ac: &Automaton, text: &[u32]) -> Vec<u32> {
        let mut s = ROOT;
        text.iter()
            .map(|&c| {
                s = ac.step(s, c);
                s
            })
            .collect()
    }

    proptest! {
        /// Every (pattern, end position) the automaton reports is an
        /// occurrence, and every occurrence is reported; `within` gives the
        /// longest pattern prefix ending there of at most r lines.
        #[test]
        fn finds_exactly_the_occurrences(
            patterns in proptest::collection::vec(proptest::collection::vec(1u32..4, 1..5), 1..6),
            text in proptest::collection::vec(0u32..4, 0..40),
            r in 0usize..6,
        ) {
            let (ac, terms) = Automaton::new(patterns.iter().map(Vec::as_slice));
            let states = run(&ac, &text);
            for (end, &s) in states.iter().enumerate() {
                for (p, &t) in patterns.iter().zip(&terms) {
                    let occurs = end + 1 >= p.len() && text[end + 1 - p.len()..=end] == p[..];
                    prop_assert_eq!(ac.ends_with(s, t), occurs);
                }
                let w = ac.within(s, r);
                let longest = (0..=r.min(end + 1)).rev().find(|&k| {
                    k == 0 || patterns.iter().any(|p| p.len() >= k && text[end + 1 - k..=end] == p[..k])
                });
                prop_assert_eq!(ac.depth(w), longest.unwrap_or(0));
            }
        }
    }
}
