//! The fallback for content mistakes: candidate starts from the character
//! 4-grams an edit's lines share with the file's, when no line of the edit
//! is in the file even loosely.

use super::fold::compact_into;
use super::keys::{hash_bytes, substantive, FastMap};
use super::view::View;
use super::vote::Candidates;

/// At most this many distinct expected lines (by loose form) are looked
/// for by their 4-grams.
const GRAM_LINES: usize = 256;
/// At most this many distinct 4-grams of an edit are looked for.
const MAX_GRAMS: usize = 8_192;
/// A 4-gram held by more distinct expected lines than this tells nothing
/// (a stop-gram, like `self` in every line) and is not counted.
const GRAM_HOLDERS: usize = 8;
/// At most this many counts are made per file line.
const GRAM_WORK_PER_LINE: usize = 256;
/// How many (file line, expected line) pairs, the most similar, vote.
pub const GRAM_PAIRS: usize = 64;
/// How many gram-voted candidates are compared.
const GRAM_CANDIDATES: usize = 16;

/// The 4-grams of a loose form, each packed in a `u32`.
pub(super) fn grams(loose: &[u8]) -> impl Iterator<Item = u32> + '_ {
    loose
        .windows(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// The edit's 4-grams: an open-addressing table from gram to slot (a gram
/// is never 0: the loose form has no NUL), a probe or two per file gram.
struct GramTable {
    keys: Vec<u32>,
    slots: Vec<u32>,
    shift: u32,
}

impl GramTable {
    fn new(capacity: usize) -> GramTable {
        let size = (2 * capacity).next_power_of_two().max(256);
        GramTable {
            keys: vec![0; size],
            slots: vec![0; size],
            shift: 32 - size.trailing_zeros(),
        }
    }

    fn home(&self, g: u32) -> usize {
        (g.wrapping_mul(0x9e37_79b1) >> self.shift) as usize
    }

    fn get(&self, g: u32) -> Option<usize> {
        let mask = self.keys.len() - 1;
        let mut h = self.home(g);
        loop {
            match self.keys[h] {
                0 => return None,
                k if k == g => return Some(self.slots[h] as usize),
                _ => h = (h + 1) & mask,
            }
        }
    }

    /// Insert a gram that is not there yet.
    fn insert(&mut self, g: u32, slot: usize) {
        let mask = self.keys.len() - 1;
        let mut h = self.home(g);
        while self.keys[h] != 0 {
            h = (h + 1) & mask;
        }
        self.keys[h] = g;
        self.slots[h] = slot as u32;
    }
}

/// Candidate starts for an edit none of whose informative lines is in the
/// file even loosely (a typo, a renamed identifier): one pass over the
/// file counts, for each line, the 4-grams of its loose form it shares with
/// each distinct substantive expected line (the first [`GRAM_LINES`]); the
/// [`GRAM_PAIRS`] most similar pairs (Dice coefficient, at least 0.3: one
/// typo in a short line spoils up to four of its grams) vote for the start
/// that would align them. The walk then decides, by edit distance.
///
/// Bounded for hostile input: expected lines with the same loose form are
/// one entry; a gram held by more than [`GRAM_HOLDERS`] entries is not
/// counted; at most [`GRAM_WORK_PER_LINE`] counts per file line; a line
/// whose loose form equals the previous line's reuses its result.
pub(super) fn gram_candidates(view: &View<'_>, expected: &[&[u8]]) -> Candidates {
    let none = Candidates {
        ranked: Vec::new(),
        first_voter: None,
    };
    // Entries: distinct loose forms of substantive expected lines, with
    // the expected lines that have them and their gram count.
    let mut entry_of: FastMap<u64, usize> = FastMap::default();
    let mut entries: Vec<(Vec<usize>, usize)> = Vec::new();
    // gram -> slot; slot -> entries holding it.
    // Sized for the grams there can be, so a short edit's table stays in
    // the L1 cache.
    let bound: usize = expected
        .iter()
        .filter(|l| substantive(l))
        .take(GRAM_LINES)
        .map(|l| l.len())
        .sum();
    let mut table = GramTable::new(bound.min(MAX_GRAMS));
    let mut holders: Vec<Vec<u32>> = Vec::new();
    let mut buf = Vec::new();
    for (j, line) in expected.iter().enumerate() {
        if !substantive(line) {
            continue;
        }
        compact_into(line, &mut buf);
        let key = hash_bytes(&buf);
        if let Some(&e) = entry_of.get(&key) {
            entries[e].0.push(j);
            continue;
        }
        if entries.len() >= GRAM_LINES || holders.len() >= MAX_GRAMS {
            continue;
        }
        let k = entries.len() as u32;
        entry_of.insert(key, entries.len());
        let mut n = 0;
        for g in grams(&buf) {
            n += 1;
            let s = match table.get(g) {
                Some(s) => s,
                // The table is at most half full: every probe ends.
                None if holders.len() < MAX_GRAMS.min(table.keys.len() / 2) => {
                    let s = holders.len();
                    table.insert(g, s);
                    holders.push(Vec::new());
                    s
                }
                None => continue,
            };
            if holders[s].last() != Some(&k) {
                holders[s].push(k);
            }
        }
        entries.push((vec![j], n));
    }
    if entries.is_empty() {
        return none;
    }
    for h in &mut holders {
        if h.len() > GRAM_HOLDERS {
            h.clear();
        }
    }
    // Per file line: shared grams with each entry.
    let mut shared = vec![0u32; entries.len()];
    let mut touched: Vec<u32> = Vec::new();
    // The last file line each gram slot was counted for (distinct grams
    // of a line count once).
    let mut stamp = vec![usize::MAX; holders.len()];
    // The best pairs, as a min-heap: (similarity in permille, the later
    // line first out on ties, view line, entry).
    let mut best: std::collections::BinaryHeap<std::cmp::Reverse<(u32, usize, usize)>> =
        std::collections::BinaryHeap::new();
    let mut prev: Vec<u8> = Vec::new();
    let mut prev_raw: Option<&[u8]> = None;
    let mut prev_hits: Vec<(u32, usize)> = Vec::new();
    view.for_each(|i, line| {
        // A run of equal lines (a file of identical lines), or of lines
        // equal but for invisible characters, is measured once.
        if prev_raw != Some(line) {
            prev_raw = Some(line);
            compact_into(line, &mut buf);
        } else {
            buf.clone_from(&prev);
        }
        if buf != prev {
            std::mem::swap(&mut buf, &mut prev);
            prev_hits.clear();
            if prev.len() < 4 {
                return;
            }
            let mut work = 0;
            for g in grams(&prev) {
                let Some(s) = table.get(g) else { continue };
                if stamp[s] == i {
                    continue;
                }
                stamp[s] = i;
                for &k in &holders[s] {
                    if shared[k as usize] == 0 {
                        touched.push(k);
                    }
                    shared[k as usize] += 1;
                }
                work += holders[s].len();
                if work >= GRAM_WORK_PER_LINE {
                    break;
                }
            }
            let own = prev.len() - 3;
            for k in touched.drain(..) {
                let c = shared[k as usize] as usize;
                shared[k as usize] = 0;
                let dice = (2000 * c / (own + entries[k as usize].1).max(1)) as u32;
                if dice >= 300 {
                    prev_hits.push((dice, k as usize));
                }
            }
        }
        for &(dice, k) in &prev_hits {
            let item = std::cmp::Reverse((dice, usize::MAX - i, k));
            if best.len() < GRAM_PAIRS {
                best.push(item);
            } else if best.peek().is_some_and(|m| m.0 .0 < dice) {
                best.pop();
                best.push(item);
            }
        }
    });
    let mut votes: FastMap<usize, usize> = FastMap::default();
    let mut first_voter: Option<usize> = None;
    for std::cmp::Reverse((dice, inv, k)) in best {
        let i = usize::MAX - inv;
        for &j in entries[k].0.iter().take(GRAM_HOLDERS) {
            if i >= j {
                *votes.entry(i - j).or_default() += dice as usize;
                first_voter = Some(first_voter.map_or(j, |f| f.min(j)));
            }
        }
    }
    let mut ranked: Vec<(usize, usize)> = votes.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(GRAM_CANDIDATES);
    Candidates {
        ranked,
        first_voter,
    }
}
