//! Zero-fuzz hunk location and application for one file: the hunks of an
//! `*** Update File` section, applied to the file's bytes in memory.
//!
//! The rule (patch-envelope.md, "Update File"): the concatenation of a hunk's
//! context and removal lines must occur exactly once in the file as left by
//! the prior hunks of the same section. No trimming, no case folding, no
//! fallback: lines compare byte for byte, without their endings.
//!
//! **Cost.** The file is scanned once: every line is hashed, and only lines
//! whose hash some hunk mentions are indexed (a bitset filters the rest).
//! Each hunk is then located from its *rarest* old line: every occurrence of
//! that line in the post-state (in the original, minus what prior hunks
//! consumed, plus what they wrote) is a candidate, verified by walking the
//! post-state view — original lines with the prior hunks' blocks spliced in —
//! with no copy of the file. Total work is O(file + patch + Σ candidates·L),
//! near-linear unless every line of a hunk is itself very common (a file of
//! identical lines); collisions of the fast line hash only add candidates
//! that fail verification.
//!
//! **Overlap.** A hunk whose single match includes a line written by an
//! earlier hunk, or spans a place where an earlier hunk removed lines, is
//! `overlapping_edits`: hunks of one section own disjoint stretches of the
//! original (they may touch). Matches inside earlier hunks' output still
//! count for uniqueness, as the spec's post-state rule requires.
//!
//! **Line endings** (see docs/clarifications.md): context lines keep their
//! original bytes; added lines take the file's ending ([`Lines::newline`]);
//! a missing final newline stays missing unless a hunk at the end says
//! otherwise with `\ No newline at end of file`; a BOM stays in front.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::envelope::{Hunk, LineKind};
use crate::text::Lines;

/// How many match locations a `multiple_matches` failure lists at most.
pub const MAX_REPORTED_MATCHES: usize = 20;

/// Why a hunk could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkFailure {
    /// The hunk's old lines occur nowhere in the post-state.
    ContextNotFound,
    /// They occur more than once; the 1-based lines where matches start
    /// (in the file before the patch; a match inside an earlier hunk's output
    /// is reported at the line where that hunk applied), at most
    /// [`MAX_REPORTED_MATCHES`].
    MultipleMatches {
        /// Start lines of the first matches found, ascending.
        lines: Vec<usize>,
        /// How many matches there are in all (for the diagnosis's `matchCount`).
        total: usize,
    },
    /// The one match overlaps what an earlier hunk of the section changed.
    Overlapping {
        /// Index of the earlier hunk.
        other_hunk: usize,
        /// 1-based line (file before the patch) where the earlier hunk applied.
        line: usize,
    },
    /// A `\ No newline at end of file` marker follows a line that is not the
    /// last of its side of the hunk.
    MisplacedNoNewlineMarker {
        /// The envelope line of the marker.
        envelope_line: usize,
    },
}

/// A failure and the hunk it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkError {
    /// 0-based index of the hunk in its section.
    pub hunk_index: usize,
    /// What went wrong.
    pub failure: HunkFailure,
}

/// Apply `hunks`, in order, to `original`; return the new file bytes.
pub fn apply_hunks(original: &[u8], hunks: &[Hunk<'_>]) -> Result<Vec<u8>, HunkError> {
    let lines = Lines::new(original);
    let shapes = hunks
        .iter()
        .enumerate()
        .map(|(i, h)| {
            HunkShape::of(h).map_err(|failure| HunkError {
                hunk_index: i,
                failure,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut state = PostState::new(&lines, hunks);
    for (index, (hunk, shape)) in hunks.iter().zip(&shapes).enumerate() {
        state
            .apply(index, hunk, shape)
            .map_err(|failure| HunkError {
                hunk_index: index,
                failure,
            })?;
    }
    Ok(state.render())
}

/// A stretch of a post-state, for the failure-path diagnosis
/// ([`crate::diagnose`]); see [`post_state`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment<'p> {
    /// Original lines `start..end` (0-based, half-open), untouched.
    Original {
        /// First line.
        start: usize,
        /// One past the last line.
        end: usize,
    },
    /// What hunk `hunk` wrote in place of original lines `start..end` (its
    /// context and added lines; empty for a pure removal). The tail block of
    /// pure additions at the end of the file has `start == end == line count`.
    Written {
        /// Index of the hunk in its section.
        hunk: usize,
        /// First original line the hunk consumed.
        start: usize,
        /// One past the last original line it consumed.
        end: usize,
        /// The lines it wrote, without endings.
        lines: Vec<&'p [u8]>,
    },
}

/// The file as left by `hunks`, as segments in file order; `None` when one
/// of them does not apply. Failure path only: the diagnosis of hunk `k`
/// re-runs hunks `0..k` (which applied) to see what the matcher saw. It
/// costs what applying them costs; [`apply_hunks`] does not call it.
pub fn post_state<'p>(original: &[u8], hunks: &[Hunk<'p>]) -> Option<Vec<Segment<'p>>> {
    let lines = Lines::new(original);
    let mut state = PostState::new(&lines, hunks);
    for (index, hunk) in hunks.iter().enumerate() {
        let shape = HunkShape::of(hunk).ok()?;
        state.apply(index, hunk, &shape).ok()?;
    }
    let mut out = Vec::with_capacity(2 * state.blocks.len() + 1);
    let mut at = 0usize;
    let written = |b: &Block<'p>| Segment::Written {
        hunk: b.hunk,
        start: b.start,
        end: b.end,
        lines: b.new_lines.iter().map(|l| l.text).collect(),
    };
    for &b in state.by_start.values() {
        let block = &state.blocks[b];
        if block.start > at {
            out.push(Segment::Original {
                start: at,
                end: block.start,
            });
        }
        out.push(written(block));
        at = block.end;
    }
    if at < lines.len() {
        out.push(Segment::Original {
            start: at,
            end: lines.len(),
        });
    }
    if let Some(t) = state.tail {
        out.push(written(&state.blocks[t]));
    }
    Some(out)
}

/// What the `\ No newline at end of file` markers of a hunk say.
struct HunkShape {
    /// The old side ends without a newline (anchors the hunk at the end).
    old_no_newline: bool,
    /// The new side ends without a newline.
    new_no_newline: bool,
}

impl HunkShape {
    fn of(hunk: &Hunk<'_>) -> Result<HunkShape, HunkFailure> {
        // The parser refuses misplaced markers; a hand-built hunk may still have one.
        if let Some(marked) = hunk.misplaced_no_newline_marker() {
            return Err(HunkFailure::MisplacedNoNewlineMarker {
                envelope_line: marked.span.line + 1,
            });
        }
        let mut shape = HunkShape {
            old_no_newline: false,
            new_no_newline: false,
        };
        for line in hunk.lines.iter().filter(|l| l.no_newline) {
            shape.old_no_newline |= line.kind != LineKind::Add;
            shape.new_no_newline |= line.kind != LineKind::Remove;
        }
        Ok(shape)
    }

    /// The hunk must end at the end of the file.
    fn anchored_at_end(&self, hunk: &Hunk<'_>) -> bool {
        hunk.end_of_file || self.old_no_newline || self.new_no_newline
    }
}

/// A fast 64-bit line hash (FxHash-style over 8-byte words). Not
/// DoS-resistant, and it need not be: a collision only adds a candidate that
/// byte comparison then rejects.
fn line_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    // Final avalanche so the high bits (used by the bitset) depend on every byte.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// Keys are already hashes: use them as they are.
#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type HashIndex<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// A position in the post-state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pos {
    /// An original line that no hunk consumed.
    Orig(usize),
    /// Line `o` of block `b`'s new side.
    New(usize, usize),
}

/// What one applied hunk did: it consumed original lines `start..end` and
/// wrote `new_lines` in their place. The tail block (pure additions at the
/// end of the file) has `start == end == lines.len()`.
struct Block<'a> {
    hunk: usize,
    start: usize,
    end: usize,
    /// New-side lines: `Some(orig)` for a context line (its original bytes are
    /// kept), `None` with the text for an added line.
    new_lines: Vec<NewLine<'a>>,
}

#[derive(Clone, Copy)]
struct NewLine<'a> {
    text: &'a [u8],
    orig: Option<usize>,
}

/// The file as left by the hunks applied so far, as a view over the original.
struct PostState<'f, 'p> {
    lines: &'f Lines<'f>,
    blocks: Vec<Block<'p>>,
    /// Non-tail blocks by original start.
    by_start: BTreeMap<usize, usize>,
    /// Non-tail blocks by original end.
    by_end: HashMap<usize, usize>,
    /// The tail block, once a hunk appended at the end.
    tail: Option<usize>,
    /// Original positions of every line whose hash some hunk mentions.
    orig_index: HashIndex<Vec<usize>>,
    /// Positions of every line written by a block.
    new_index: HashIndex<Vec<(usize, usize)>>,
    /// Whether the post-state ends with a newline.
    final_newline: bool,
}

impl<'f, 'p> PostState<'f, 'p> {
    fn new(lines: &'f Lines<'f>, hunks: &[Hunk<'p>]) -> Self {
        const BITS: u32 = 22;
        let mut wanted: HashIndex<Vec<usize>> = HashIndex::default();
        let mut filter = vec![0u64; 1 << (BITS - 6)];
        for line in hunks.iter().flat_map(|h| h.old_lines()) {
            let h = line_hash(line.text.as_bytes());
            let bit = (h >> (64 - BITS)) as usize;
            filter[bit >> 6] |= 1 << (bit & 63);
            wanted.entry(h).or_default();
        }
        if !wanted.is_empty() {
            for i in 0..lines.len() {
                let h = line_hash(lines.content(i));
                let bit = (h >> (64 - BITS)) as usize;
                if filter[bit >> 6] & (1 << (bit & 63)) != 0 {
                    if let Some(postings) = wanted.get_mut(&h) {
                        postings.push(i);
                    }
                }
            }
        }
        PostState {
            lines,
            blocks: Vec::new(),
            by_start: BTreeMap::new(),
            by_end: HashMap::new(),
            tail: None,
            orig_index: wanted,
            new_index: HashIndex::default(),
            final_newline: lines.ends_with_newline(),
        }
    }

    fn text(&self, pos: Pos) -> &[u8] {
        match pos {
            Pos::Orig(i) => self.lines.content(i),
            Pos::New(b, o) => self.blocks[b].new_lines[o].text,
        }
    }

    /// Is original line `i` consumed by a block?
    fn consumed_by(&self, i: usize) -> Option<usize> {
        let (_, &b) = self.by_start.range(..=i).next_back()?;
        (self.blocks[b].end > i).then_some(b)
    }

    /// The first post-state position at or after original index `j`, and the
    /// block (if any) whose removal was stepped over to get there.
    fn first_from(&self, mut j: usize) -> (Option<Pos>, Option<usize>) {
        let mut crossed = None;
        loop {
            if j >= self.lines.len() {
                return match self.tail {
                    Some(t) if !self.blocks[t].new_lines.is_empty() => {
                        (Some(Pos::New(t, 0)), crossed)
                    }
                    _ => (None, crossed),
                };
            }
            match self.by_start.get(&j) {
                Some(&b) if !self.blocks[b].new_lines.is_empty() => {
                    return (Some(Pos::New(b, 0)), crossed)
                }
                Some(&b) => {
                    crossed = Some(b);
                    j = self.blocks[b].end;
                }
                None => return (Some(Pos::Orig(j)), crossed),
            }
        }
    }

    /// The last post-state position before original index `j`.
    fn last_before(&self, mut j: usize) -> (Option<Pos>, Option<usize>) {
        let mut crossed = None;
        loop {
            if j == 0 {
                return (None, crossed);
            }
            match self.by_end.get(&j) {
                Some(&b) if !self.blocks[b].new_lines.is_empty() => {
                    return (
                        Some(Pos::New(b, self.blocks[b].new_lines.len() - 1)),
                        crossed,
                    )
                }
                Some(&b) => {
                    crossed = Some(b);
                    j = self.blocks[b].start;
                }
                None => return (Some(Pos::Orig(j - 1)), crossed),
            }
        }
    }

    fn next(&self, pos: Pos) -> (Option<Pos>, Option<usize>) {
        match pos {
            Pos::Orig(i) => self.first_from(i + 1),
            Pos::New(b, o) if o + 1 < self.blocks[b].new_lines.len() => {
                (Some(Pos::New(b, o + 1)), None)
            }
            Pos::New(b, _) if Some(b) == self.tail => (None, None),
            Pos::New(b, _) => self.first_from(self.blocks[b].end),
        }
    }

    fn prev(&self, pos: Pos) -> (Option<Pos>, Option<usize>) {
        match pos {
            Pos::Orig(i) => self.last_before(i),
            Pos::New(b, o) if o > 0 => (Some(Pos::New(b, o - 1)), None),
            Pos::New(b, _) => self.last_before(self.blocks[b].start),
        }
    }

    /// The 1-based line (file before the patch) a position is reported at.
    fn report_line(&self, pos: Pos) -> usize {
        match pos {
            Pos::Orig(i) => i + 1,
            Pos::New(b, _) => self.blocks[b].start + 1,
        }
    }

    /// Check whether `old` occurs with `old[anchor]` at `at`. Returns the
    /// match's first position and the earlier block it touches, if any.
    fn verify(
        &self,
        old: &[&[u8]],
        anchor: usize,
        at: Pos,
        at_end: bool,
    ) -> Option<(Pos, Option<usize>)> {
        let mut touched = match at {
            Pos::New(b, _) => Some(b),
            Pos::Orig(_) => None,
        };
        // The anchor was found by hash: compare its bytes too, or a hash
        // collision would pass for a match.
        if self.text(at) != old[anchor] {
            return None;
        }
        let mut first = at;
        for want in old[..anchor].iter().rev() {
            let (p, crossed) = self.prev(first);
            let p = p?;
            if self.text(p) != *want {
                return None;
            }
            touched = touched.or(crossed).or(block_of(p));
            first = p;
        }
        let mut last = at;
        for want in &old[anchor + 1..] {
            let (p, crossed) = self.next(last);
            let p = p?;
            if self.text(p) != *want {
                return None;
            }
            touched = touched.or(crossed).or(block_of(p));
            last = p;
        }
        if at_end && self.next(last).0.is_some() {
            return None;
        }
        Some((first, touched))
    }

    fn apply(
        &mut self,
        index: usize,
        hunk: &Hunk<'p>,
        shape: &HunkShape,
    ) -> Result<(), HunkFailure> {
        let at_end = shape.anchored_at_end(hunk);
        let old: Vec<&[u8]> = hunk.old_lines().map(|l| l.text.as_bytes()).collect();
        if shape.old_no_newline && self.final_newline {
            return Err(HunkFailure::ContextNotFound);
        }
        if old.is_empty() {
            return self.append(index, hunk, shape, at_end);
        }
        // The rarest old line is the anchor.
        let hashes: Vec<u64> = old.iter().map(|t| line_hash(t)).collect();
        let frequency = |h: &u64| {
            self.orig_index.get(h).map_or(0, Vec::len) + self.new_index.get(h).map_or(0, Vec::len)
        };
        let anchor = (0..old.len())
            .min_by_key(|&i| frequency(&hashes[i]))
            .expect("old is not empty, so there is a minimum");
        let h = hashes[anchor];
        let mut matches: Vec<(Pos, Option<usize>)> = Vec::new();
        let mut total = 0usize;
        let orig_candidates = self.orig_index.get(&h).map(Vec::as_slice).unwrap_or(&[]);
        let new_candidates = self.new_index.get(&h).map(Vec::as_slice).unwrap_or(&[]);
        let candidates = orig_candidates
            .iter()
            .filter(|&&i| self.consumed_by(i).is_none())
            .map(|&i| Pos::Orig(i))
            .chain(new_candidates.iter().map(|&(b, o)| Pos::New(b, o)));
        for at in candidates {
            if let Some(found) = self.verify(&old, anchor, at, at_end) {
                total += 1;
                if matches.len() < MAX_REPORTED_MATCHES {
                    matches.push(found);
                }
            }
        }
        match total {
            0 => Err(HunkFailure::ContextNotFound),
            1 => {
                let (first, touched) = matches[0];
                if let Some(b) = touched {
                    return Err(HunkFailure::Overlapping {
                        other_hunk: self.blocks[b].hunk,
                        line: self.blocks[b].start + 1,
                    });
                }
                let Pos::Orig(start) = first else {
                    unreachable!("a match that touches no block starts at an original line")
                };
                self.splice(index, hunk, shape, start, start + old.len(), at_end);
                Ok(())
            }
            _ => {
                let mut lines: Vec<usize> =
                    matches.iter().map(|(p, _)| self.report_line(*p)).collect();
                lines.sort_unstable();
                Err(HunkFailure::MultipleMatches { lines, total })
            }
        }
    }

    /// A hunk with no old lines: it appends at the end of the file. It is
    /// unique only when anchored at the end or when the file is empty.
    fn append(
        &mut self,
        index: usize,
        hunk: &Hunk<'p>,
        shape: &HunkShape,
        at_end: bool,
    ) -> Result<(), HunkFailure> {
        let empty = self.first_from(0).0.is_none();
        if !at_end && !empty {
            // Every line boundary is a match; report the first two.
            return Err(HunkFailure::MultipleMatches {
                lines: vec![1, 2],
                total: self.lines.len() + 1,
            });
        }
        let n = self.lines.len();
        let added = hunk
            .new_lines()
            .map(|l| NewLine {
                text: l.text.as_bytes(),
                orig: None,
            })
            .collect::<Vec<_>>();
        let b = match self.tail {
            Some(t) => t,
            None => {
                self.blocks.push(Block {
                    hunk: index,
                    start: n,
                    end: n,
                    new_lines: Vec::new(),
                });
                self.tail = Some(self.blocks.len() - 1);
                self.blocks.len() - 1
            }
        };
        for line in added {
            let o = self.blocks[b].new_lines.len();
            self.new_index
                .entry(line_hash(line.text))
                .or_default()
                .push((b, o));
            self.blocks[b].new_lines.push(line);
        }
        if shape.new_no_newline {
            self.final_newline = false;
        }
        Ok(())
    }

    /// Record a clean match of original lines `start..end`.
    fn splice(
        &mut self,
        index: usize,
        hunk: &Hunk<'p>,
        shape: &HunkShape,
        start: usize,
        end: usize,
        at_end: bool,
    ) {
        let mut orig = start;
        let mut new_lines = Vec::with_capacity(hunk.lines.len());
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => {
                    new_lines.push(NewLine {
                        text: line.text.as_bytes(),
                        orig: Some(orig),
                    });
                    orig += 1;
                }
                LineKind::Remove => orig += 1,
                LineKind::Add => new_lines.push(NewLine {
                    text: line.text.as_bytes(),
                    orig: None,
                }),
            }
        }
        let b = self.blocks.len();
        for (o, line) in new_lines.iter().enumerate() {
            self.new_index
                .entry(line_hash(line.text))
                .or_default()
                .push((b, o));
        }
        self.blocks.push(Block {
            hunk: index,
            start,
            end,
            new_lines,
        });
        self.by_start.insert(start, b);
        self.by_end.insert(end, b);
        // After the insert, `first_from(end)` still looks past this block only.
        if at_end || self.first_from(end).0.is_none() {
            if shape.new_no_newline {
                self.final_newline = false;
            } else if shape.old_no_newline {
                self.final_newline = true;
            }
        }
    }

    /// Write the post-state out.
    fn render(&self) -> Vec<u8> {
        let bytes = self.lines.bytes();
        let nl = self.lines.newline().as_bytes();
        let extra: usize = self
            .blocks
            .iter()
            .flat_map(|b| b.new_lines.iter())
            .filter(|l| l.orig.is_none())
            .map(|l| l.text.len() + nl.len())
            .sum();
        let mut out = Writer {
            buf: Vec::with_capacity(bytes.len() + extra + nl.len()),
            nl,
            owes_newline: false,
        };
        // The region before line 0 (a BOM) always stays.
        let mut cursor = 0usize; // byte offset in the original
        let mut line = 0usize;
        for &b in self.by_start.values() {
            let block = &self.blocks[b];
            out.copy(
                &bytes[cursor..self.lines.start(block.start)],
                block.start > line,
            );
            for l in &block.new_lines {
                match l.orig {
                    Some(i) => out.copy(self.lines.full(i), true),
                    None => out.line(l.text),
                }
            }
            line = block.end;
            cursor = self.lines.start(block.end);
        }
        out.copy(&bytes[cursor..], line < self.lines.len());
        if let Some(t) = self.tail {
            for l in &self.blocks[t].new_lines {
                out.line(l.text);
            }
        }
        out.finish(self.final_newline)
    }
}

fn block_of(pos: Pos) -> Option<usize> {
    match pos {
        Pos::New(b, _) => Some(b),
        Pos::Orig(_) => None,
    }
}

/// The output buffer: owes a newline when the last thing copied was the
/// original's unterminated last line and more follows.
struct Writer<'n> {
    buf: Vec<u8>,
    nl: &'n [u8],
    owes_newline: bool,
}

impl Writer<'_> {
    fn pay(&mut self) {
        if self.owes_newline {
            self.buf.extend_from_slice(self.nl);
            self.owes_newline = false;
        }
    }

    /// Copy original bytes (whole lines); `has_lines` says whether any line is in them.
    fn copy(&mut self, region: &[u8], has_lines: bool) {
        if region.is_empty() {
            return;
        }
        if has_lines {
            self.pay();
        }
        self.buf.extend_from_slice(region);
        if has_lines && !region.ends_with(b"\n") {
            self.owes_newline = true;
        }
    }

    fn line(&mut self, text: &[u8]) {
        self.pay();
        self.buf.extend_from_slice(text);
        self.buf.extend_from_slice(self.nl);
    }

    fn finish(mut self, final_newline: bool) -> Vec<u8> {
        let has_content = !self.buf.is_empty() && self.buf != crate::text::BOM;
        if final_newline {
            self.pay();
        } else if has_content && !self.owes_newline {
            if self.buf.ends_with(b"\r\n") {
                self.buf.truncate(self.buf.len() - 2);
            } else if self.buf.ends_with(b"\n") {
                self.buf.truncate(self.buf.len() - 1);
            }
        }
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{HunkLine, Span};

    /// Build hunks from a compact notation: lines starting with ' ', '-', '+',
    /// a lone `\` marks the previous line "no newline", `@@` starts a hunk,
    /// `$` after `@@` marks end-of-file.
    fn hunks(spec: &str) -> Vec<Hunk<'_>> {
        let mut out: Vec<Hunk<'_>> = Vec::new();
        for (n, raw) in spec.split('\n').enumerate() {
            let span = Span { line: n + 1 };
            if let Some(rest) = raw.strip_prefix("@@") {
                out.push(Hunk {
                    span,
                    header: "",
                    lines: Vec::new(),
                    end_of_file: rest == "$",
                });
                continue;
            }
            let hunk = out.last_mut().expect("spec starts with @@");
            if raw == "\\" {
                hunk.lines.last_mut().expect("a line before \\").no_newline = true;
                continue;
            }
            let kind = match raw.as_bytes().first() {
                Some(b' ') => LineKind::Context,
                Some(b'-') => LineKind::Remove,
                Some(b'+') => LineKind::Add,
                _ => panic!("bad spec line {raw:?}"),
            };
            hunk.lines.push(HunkLine {
                span,
                kind,
                text: &raw[1..],
                no_newline: false,
            });
        }
        out
    }

    fn check(file: &str, spec: &str, expected: Result<&str, HunkError>) {
        let got = apply_hunks(file.as_bytes(), &hunks(spec));
        let got = got.map(|b| String::from_utf8(b).unwrap());
        assert_eq!(
            got.as_deref().map_err(Clone::clone),
            expected,
            "file {file:?} spec {spec:?}"
        );
    }

    fn fail(hunk_index: usize, failure: HunkFailure) -> Result<&'static str, HunkError> {
        Err(HunkError {
            hunk_index,
            failure,
        })
    }

    /// Found by fuzzing (fuzz/regressions/envelope_apply/b2-…): `""` and
    /// `" "` have the same line hash; the anchor line must still be compared.
    #[test]
    fn a_hash_collision_is_not_a_match() {
        assert_eq!(line_hash(b""), line_hash(b" "));
        check(
            "x\n \nz\n",
            "@@\n-\n+y",
            fail(0, HunkFailure::ContextNotFound),
        );
    }

    #[test]
    fn replaces_a_unique_line() {
        check("a\nb\nc\n", "@@\n a\n-b\n+B\n c", Ok("a\nB\nc\n"));
    }

    #[test]
    fn whitespace_is_never_fuzzed() {
        check(
            "a \nb\n",
            "@@\n-a\n+x",
            fail(0, HunkFailure::ContextNotFound),
        );
        check(
            "\ta\n",
            "@@\n-    a\n+x",
            fail(0, HunkFailure::ContextNotFound),
        );
        check("A\n", "@@\n-a\n+x", fail(0, HunkFailure::ContextNotFound));
    }

    #[test]
    fn two_matches_are_refused_with_their_lines() {
        check(
            "x\ny\nx\n",
            "@@\n-x\n+z",
            fail(
                0,
                HunkFailure::MultipleMatches {
                    lines: vec![1, 3],
                    total: 2,
                },
            ),
        );
    }

    #[test]
    fn context_that_becomes_unique_after_a_prior_hunk_applies() {
        // Hunk 0 turns the first `x` into `z`; hunk 1's `x` is then unique.
        check(
            "x\n1\nx\n2\n",
            "@@\n-x\n+w",
            fail(
                0,
                HunkFailure::MultipleMatches {
                    lines: vec![1, 3],
                    total: 2,
                },
            ),
        );
        check(
            "x\n1\nx\n2\n",
            "@@\n-x\n+z\n 1\n@@\n-x\n+w\n 2",
            Ok("z\n1\nw\n2\n"),
        );
    }

    #[test]
    fn a_match_in_a_prior_hunks_output_counts_for_uniqueness() {
        // Hunk 0 adds `foo`; hunk 1 removes `foo`: two in the post-state.
        check(
            "a\nfoo\nb\n",
            "@@\n a\n+foo\n@@\n-foo\n+bar",
            fail(
                1,
                HunkFailure::MultipleMatches {
                    lines: vec![1, 2],
                    total: 2,
                },
            ),
        );
        // With `b` after it, the original `foo` is the only match.
        check(
            "a\nfoo\nb\n",
            "@@\n a\n+foo\n@@\n-foo\n b",
            Ok("a\nfoo\nb\n"),
        );
        // Only in the prior output: an overlap.
        check(
            "a\nb\n",
            "@@\n a\n+foo\n@@\n-foo\n b",
            fail(
                1,
                HunkFailure::Overlapping {
                    other_hunk: 0,
                    line: 1,
                },
            ),
        );
    }

    #[test]
    fn hunks_may_touch_but_not_share_lines() {
        check(
            "a\nb\nc\nd\n",
            "@@\n-a\n+A\n b\n@@\n c\n-d\n+D",
            Ok("A\nb\nc\nD\n"),
        );
        check(
            "a\nb\nc\n",
            "@@\n-a\n+A\n b\n@@\n b\n-c\n+C",
            fail(
                1,
                HunkFailure::Overlapping {
                    other_hunk: 0,
                    line: 1,
                },
            ),
        );
        // Spanning a place where an earlier hunk removed lines.
        check(
            "a\nb\nc\n",
            "@@\n-b\n@@\n a\n c",
            fail(
                1,
                HunkFailure::Overlapping {
                    other_hunk: 0,
                    line: 2,
                },
            ),
        );
    }

    #[test]
    fn hunks_out_of_file_order_apply() {
        check("a\nb\nc\n", "@@\n-c\n+C\n@@\n-a\n+A", Ok("A\nb\nC\n"));
    }

    #[test]
    fn end_of_file_anchors_the_match() {
        check("x\ny\nx\n", "@@$\n-x\n+z", Ok("x\ny\nz\n"));
        check(
            "x\ny\n",
            "@@$\n-x\n+z",
            fail(0, HunkFailure::ContextNotFound),
        );
    }

    #[test]
    fn crlf_files_stay_crlf() {
        check(
            "a\r\nb\r\nc\r\n",
            "@@\n a\n-b\n+B\n+B2\n c",
            Ok("a\r\nB\r\nB2\r\nc\r\n"),
        );
    }

    #[test]
    fn a_missing_final_newline_stays_missing() {
        check("a\nb", "@@\n-b\n+c", Ok("a\nc"));
        check("a\nb", "@@\n b\n+c", Ok("a\nb\nc"));
        check("a\nb", "@@\n a\n-b", Ok("a"));
        check("a\nb\n", "@@\n a\n-b", Ok("a\n"));
    }

    #[test]
    fn no_newline_markers_work_in_both_directions() {
        // Remove the final newline.
        check("a\nb\n", "@@\n-b\n+b\n\\", Ok("a\nb"));
        // Add one.
        check("a\nb", "@@\n-b\n\\\n+b", Ok("a\nb\n"));
        // The old side says "no newline" but the file has one.
        check(
            "a\nb\n",
            "@@\n-b\n\\\n+b",
            fail(0, HunkFailure::ContextNotFound),
        );
        // A marker on a line that is not last of its side.
        check(
            "a\nb\n",
            "@@\n-a\n\\\n-b",
            fail(
                0,
                HunkFailure::MisplacedNoNewlineMarker { envelope_line: 3 },
            ),
        );
    }

    #[test]
    fn a_bom_stays_in_front_and_is_not_content() {
        check("\u{feff}a\nb\n", "@@\n-a\n+A", Ok("\u{feff}A\nb\n"));
    }

    #[test]
    fn pure_additions_need_an_anchor() {
        check("", "@@\n+a\n+b", Ok("a\nb\n"));
        check("x\n", "@@$\n+a", Ok("x\na\n"));
        check(
            "x\n",
            "@@\n+a",
            fail(
                0,
                HunkFailure::MultipleMatches {
                    lines: vec![1, 2],
                    total: 2,
                },
            ),
        );
        check("x", "@@$\n+a", Ok("x\na"));
    }

    #[test]
    fn first_and_last_lines_and_whole_file() {
        check("a\nb\nc\n", "@@\n-a\n+A\n b", Ok("A\nb\nc\n"));
        check("a\nb\nc\n", "@@\n b\n-c\n+C", Ok("a\nb\nC\n"));
        check("a\nb\n", "@@\n-a\n-b", Ok(""));
        check("only\n", "@@\n-only\n+one", Ok("one\n"));
    }

    #[test]
    fn non_utf8_lines_are_kept_byte_for_byte() {
        let file = b"\xff\xfe\nkeep\n";
        let got = apply_hunks(file, &hunks("@@\n-keep\n+kept")).unwrap();
        assert_eq!(got, b"\xff\xfe\nkept\n");
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Replacing each of a set of unique lines gives the same file as
            /// a direct substitution, whatever the hunk order.
            #[test]
            fn unique_line_edits_match_a_model(
                n in 1usize..40,
                picks in proptest::collection::btree_set(0usize..40, 1..8),
                reverse in any::<bool>(),
                crlf in any::<bool>(),
                final_nl in any::<bool>(),
            ) {
                let nl = if crlf { "\r\n" } else { "\n" };
                let lines: Vec<String> = (0..n).map(|i| format!("line {i}")).collect();
                let mut file = lines.join(nl);
                if final_nl { file.push_str(nl); }
                let mut picks: Vec<usize> = picks.into_iter().filter(|&p| p < n).collect();
                prop_assume!(!picks.is_empty());
                if reverse { picks.reverse(); }
                let mut spec = String::new();
                for &p in &picks {
                    spec.push_str(&format!("@@\n-line {p}\n+LINE {p}\n"));
                }
                spec.pop();
                let got = apply_hunks(file.as_bytes(), &hunks(&spec)).unwrap();
                let expected: Vec<String> = (0..n)
                    .map(|i| if picks.contains(&i) { format!("LINE {i}") } else { format!("line {i}") })
                    .collect();
                let mut expected = expected.join(nl);
                if final_nl { expected.push_str(nl); }
                prop_assert_eq!(String::from_utf8(got).unwrap(), expected);
            }
        }
    }
}
