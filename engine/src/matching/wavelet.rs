//! A wavelet matrix over a sequence of small integers: how many values of a
//! position range fall in a value interval, and the first position at or
//! after a given one whose value does, each in O(log σ) rank steps (σ = the
//! value bound) — the second with a galloping search on top, so
//! O(log d · log σ) where d is the distance to the answer.
//!
//! The matcher stores here, for every line of the original file whose
//! Aho–Corasick state is not the root, the Euler-tour number of that state:
//! the lines where a hunk's old side ends are then exactly the positions whose
//! number falls in the interval of the hunk's subtree of the failure tree.
//! Left out: select, quantiles, updates (the sequence never changes).

/// Bits with O(1) rank: the number of ones before a position.
struct RankBits {
    words: Vec<u64>,
    /// Ones in `words[..i]`.
    before: Vec<usize>,
}

impl RankBits {
    fn new(len: usize, bit: impl Fn(usize) -> bool) -> RankBits {
        // One word more than needed, so `ones_before(len)` stays in bounds.
        let mut words = vec![0u64; len / 64 + 1];
        for i in (0..len).filter(|&i| bit(i)) {
            words[i / 64] |= 1 << (i % 64);
        }
        let mut before = Vec::with_capacity(words.len());
        let mut total = 0usize;
        for w in &words {
            before.push(total);
            total += w.count_ones() as usize;
        }
        RankBits { words, before }
    }

    fn ones_before(&self, i: usize) -> usize {
        let (w, b) = (i / 64, i % 64);
        self.before[w] + (self.words[w] & ((1u64 << b) - 1)).count_ones() as usize
    }
}

struct Level {
    bits: RankBits,
    zeros: usize,
}

/// The wavelet matrix of a sequence of `u32` values below a bound.
pub(super) struct Wavelet {
    len: usize,
    height: u32,
    /// Most significant bit first.
    levels: Vec<Level>,
}

impl Wavelet {
    /// Index `values`, each below `bound`.
    pub(super) fn new(values: &[u32], bound: u32) -> Wavelet {
        let height = (32 - bound.leading_zeros()).max(1);
        let mut cur = values.to_vec();
        let mut levels = Vec::with_capacity(height as usize);
        for shift in (0..height).rev() {
            let bit = |v: u32| (v >> shift) & 1 == 1;
            let bits = RankBits::new(cur.len(), |i| bit(cur[i]));
            let mut next: Vec<u32> = cur.iter().copied().filter(|&v| !bit(v)).collect();
            let zeros = next.len();
            next.extend(cur.iter().copied().filter(|&v| bit(v)));
            levels.push(Level { bits, zeros });
            cur = next;
        }
        Wavelet {
            len: values.len(),
            height,
            levels,
        }
    }

    /// The number of values in positions `a..b` that are below `x`.
    fn count_below(&self, mut a: usize, mut b: usize, x: u32) -> usize {
        if self.height < 32 && x >= 1 << self.height {
            return b - a;
        }
        let mut n = 0;
        for (i, level) in self.levels.iter().enumerate() {
            let shift = self.height - 1 - i as u32;
            let (oa, ob) = (level.bits.ones_before(a), level.bits.ones_before(b));
            if (x >> shift) & 1 == 1 {
                // Every value with a 0 here is below x.
                n += (b - a) - (ob - oa);
                a = level.zeros + oa;
                b = level.zeros + ob;
            } else {
                a -= oa;
                b -= ob;
            }
        }
        n
    }

    /// The number of values in positions `a..b` within `lo..hi`.
    pub(super) fn count(&self, a: usize, b: usize, lo: u32, hi: u32) -> usize {
        if a >= b || lo >= hi {
            return 0;
        }
        self.count_below(a, b, hi) - self.count_below(a, b, lo)
    }

    /// The first position at or after `a` whose value is within `lo..hi`.
    pub(super) fn first_in(&self, a: usize, lo: u32, hi: u32) -> Option<usize> {
        if a >= self.len || self.count(a, self.len, lo, hi) == 0 {
            return None;
        }
        // Gallop to a window that holds one, then halve it.
        let mut step = 1usize;
        let mut low = a; // count(a, low) == 0
        let mut high = loop {
            let end = a.saturating_add(step).min(self.len);
            if self.count(a, end, lo, hi) > 0 {
                break end;
            }
            low = end;
            step *= 2;
        };
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if self.count(a, mid, lo, hi) > 0 {
                high = mid;
            } else {
                low = mid;
            }
        }
        Some(high - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn agrees_with_a_scan(
            values in proptest::collection::vec(0u32..37, 0..300),
            a in 0usize..320, b in 0usize..320, lo in 0u32..40, hi in 0u32..40,
        ) {
            let w = Wavelet::new(&values, 37);
            let (a, b) = (a.min(values.len()), b.min(values.len()));
            let inside = |v: &u32| lo <= *v && *v < hi;
            let expected = if a < b { values[a..b].iter().filter(|v| inside(v)).count() } else { 0 };
            prop_assert_eq!(w.count(a, b, lo, hi), expected);
            let first = (a..values.len()).find(|&i| inside(&values[i]));
            prop_assert_eq!(w.first_in(a, lo, hi), first);
        }
    }

    #[test]
    fn a_bound_of_one_and_an_empty_sequence_work() {
        let w = Wavelet::new(&[0, 0, 0], 1);
        assert_eq!(w.count(0, 3, 0, 1), 3);
        assert_eq!(w.first_in(1, 0, 1), Some(1));
        let empty = Wavelet::new(&[], 5);
        assert_eq!(empty.first_in(0, 0, 5), None);
    }
}
