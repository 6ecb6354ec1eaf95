//! The voting index: postings of the loose keys an edit mentions, in one
//! pass over the file, and candidate start lines voted for by them.

use super::keys::{
    ascii_signature, blank_key, key_and_signature, literal_newline_pieces, loose_key_in,
    strip_line_number, FastMap,
};
use super::view::View;
use super::{COMMON_KEY, MAX_CANDIDATES};

/// Postings of wanted keys: the first `COMMON_KEY + 1` view indices, and the count.
pub(super) struct Index {
    slot: FastMap<u64, usize>,
    counts: Vec<usize>,
    lists: Vec<Vec<usize>>,
}

impl Index {
    /// One pass over the view. A bitset on the key's high bits filters
    /// lines no wanted key can match; a run of lines with one key (a file
    /// of identical lines) costs no map lookup after the first.
    pub(super) fn build(view: &View<'_>, wanted: impl IntoIterator<Item = (u64, u64)>) -> Index {
        // 2^16 bits: both filters stay in the L1 cache.
        const BITS: u32 = 16;
        let bit_of = |h: u64| (h >> (64 - BITS)) as usize;
        let blank = blank_key();
        let mut slot: FastMap<u64, usize> = FastMap::default();
        let mut keys = vec![0u64; 1 << (BITS - 6)];
        let mut sigs = vec![0u64; 1 << (BITS - 6)];
        for (k, sig) in wanted {
            if k == blank {
                continue;
            }
            let b = bit_of(sig.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            sigs[b >> 6] |= 1 << (b & 63);
            if slot.contains_key(&k) {
                continue;
            }
            let n = slot.len();
            slot.insert(k, n);
            let b = bit_of(k);
            keys[b >> 6] |= 1 << (b & 63);
        }
        let mut counts = vec![0usize; slot.len()];
        let mut lists: Vec<Vec<usize>> = vec![Vec::new(); slot.len()];
        if !slot.is_empty() {
            let mut buf = Vec::new();
            let mut last: (u64, Option<usize>) = (blank, None);
            // The previous line that reached the key, and its slot: a run of
            // equal lines costs one comparison per line.
            let mut prev: Option<(&[u8], Option<usize>)> = None;
            view.for_each(|i, line| {
                if let Some((p, s)) = prev {
                    if p == line {
                        if let Some(s) = s {
                            counts[s] += 1;
                            if lists[s].len() <= COMMON_KEY {
                                lists[s].push(i);
                            }
                        }
                        return;
                    }
                }
                if line.is_ascii() {
                    let b = bit_of(ascii_signature(line).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    if sigs[b >> 6] & (1 << (b & 63)) == 0 {
                        return;
                    }
                }
                let k = loose_key_in(line, &mut buf);
                let b = bit_of(k);
                if keys[b >> 6] & (1 << (b & 63)) == 0 {
                    return;
                }
                let s = if k == last.0 {
                    last.1
                } else {
                    let s = slot.get(&k).copied();
                    last = (k, s);
                    s
                };
                prev = Some((line, s));
                if let Some(s) = s {
                    counts[s] += 1;
                    if lists[s].len() <= COMMON_KEY {
                        lists[s].push(i);
                    }
                }
            });
        }
        Index {
            slot,
            counts,
            lists,
        }
    }

    pub(super) fn count(&self, key: u64) -> usize {
        self.slot.get(&key).map_or(0, |&s| self.counts[s])
    }

    pub(super) fn list(&self, key: u64) -> &[usize] {
        self.slot
            .get(&key)
            .map_or(&[], |&s| self.lists[s].as_slice())
    }
}

/// The keys an expected line may be found under, with the offset (in file
/// lines) of each from the line's own position: the line itself; without a
/// line-number prefix; each piece of a literal-`\n` split.
pub(super) fn line_variants(line: &[u8]) -> Vec<(u64, u64, usize)> {
    let mut buf = Vec::new();
    let mut one = |l: &[u8], off: usize| {
        let (k, sig) = key_and_signature(l, &mut buf);
        (k, sig, off)
    };
    let mut v = vec![one(line, 0)];
    if let Some(rest) = strip_line_number(line) {
        v.push(one(rest, 0));
    }
    if let Some(pieces) = literal_newline_pieces(line) {
        for (k, p) in pieces.iter().enumerate().take(64) {
            v.push(one(p, k));
        }
    }
    v
}

/// The index entries for whole lines (key and signature).
pub(super) fn whole(lines: &[&[u8]]) -> Vec<(u64, u64)> {
    let mut buf = Vec::new();
    lines
        .iter()
        .map(|l| key_and_signature(l, &mut buf))
        .collect()
}

/// Candidate start positions (view indices) for `expected`, found by
/// voting, with their votes, and the first expected line that voted.
pub(super) struct Candidates {
    pub(super) ranked: Vec<(usize, usize)>,
    pub(super) first_voter: Option<usize>,
}

impl Candidates {
    /// Add, for the best few candidates, the starts up to `first_voter`
    /// lines earlier: the lines before the first voting line said nothing
    /// (short, common or misquoted), and the file may have lines there the
    /// edit leaves out (a blank line after a `}`); the alignment score
    /// chooses (C-diag-causes).
    pub(super) fn with_earlier_starts(mut self) -> Candidates {
        let f = self.first_voter.unwrap_or(0).min(MAX_EARLIER_START);
        let best: Vec<(usize, usize)> = self.ranked.iter().take(4).copied().collect();
        for (s, v) in best {
            for d in 1..=f {
                if s >= d && !self.ranked.iter().any(|&(x, _)| x == s - d) {
                    self.ranked.push((s - d, v));
                }
            }
        }
        self
    }
}

/// How many lines earlier than a voted start a candidate is also tried.
const MAX_EARLIER_START: usize = 4;

/// Find candidate start positions (view indices) for `expected` by voting.
pub(super) fn candidates(index: &Index, expected: &[&[u8]]) -> Candidates {
    let mut first_voter = None;
    let blank = blank_key();
    // Offsets of each expected line, counting literal-\n pieces as lines.
    let mut votes: FastMap<usize, usize> = FastMap::default();
    let variants: Vec<Vec<(u64, usize)>> = expected
        .iter()
        .map(|l| {
            line_variants(l)
                .into_iter()
                .map(|(k, _, o)| (k, o))
                .collect()
        })
        .collect();
    let mut offset = 0usize;
    let mut offsets = Vec::with_capacity(expected.len());
    for line in expected {
        offsets.push(offset);
        offset += literal_newline_pieces(line).map_or(1, |p| p.len().clamp(1, 64));
    }
    let rare = |k: u64| index.count(k) > 0 && index.count(k) <= COMMON_KEY;
    let any_rare = variants
        .iter()
        .flatten()
        .any(|(k, _)| *k != blank && rare(*k));
    let vote = |key: u64, off: usize, votes: &mut FastMap<usize, usize>| {
        for &p in index.list(key).iter().take(COMMON_KEY) {
            if p >= off {
                *votes.entry(p - off).or_default() += 1;
            }
        }
    };
    if any_rare {
        for (j, vs) in variants.iter().enumerate() {
            let mut seen = Vec::new();
            for &(k, piece) in vs {
                if k == blank || !rare(k) || seen.contains(&(k, piece)) {
                    continue;
                }
                seen.push((k, piece));
                vote(k, offsets[j] + piece, &mut votes);
                first_voter.get_or_insert(j);
            }
        }
    } else {
        // Only common keys: the least common one votes with its first postings.
        let best = variants
            .iter()
            .enumerate()
            .flat_map(|(j, vs)| vs.iter().map(move |&(k, piece)| (j, k, piece)))
            .filter(|&(_, k, _)| k != blank && index.count(k) > 0)
            .min_by_key(|&(j, k, _)| (index.count(k), j));
        if let Some((j, k, piece)) = best {
            vote(k, offsets[j] + piece, &mut votes);
            first_voter = Some(j);
        }
    }
    let mut ranked: Vec<(usize, usize)> = votes.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(MAX_CANDIDATES);
    Candidates {
        ranked,
        first_voter,
    }
}
