//! Zero-fuzz hunk location and application for one file: the hunks of an
//! `*** Update File` section, applied to the file's bytes in memory.
//!
//! The rule (patch-envelope.md, "Update File"): the concatenation of a hunk's
//! context and removal lines must occur exactly once in the file as left by
//! the prior hunks of the same section. No trimming, no case folding, no
//! fallback: lines compare byte for byte, without their endings.
//!
//! **Line ids** (`matching/line_ids.rs`). Every distinct line of the hunks'
//! old sides gets a small id, given by exact byte comparison (a hash only
//! places it; a line of up to 16 bytes is its own key), and every line of
//! the file and of the hunks' new
//! sides is looked up once: a line in no old side gets id 0, which no old
//! side contains. Equal ids are equal bytes, so no hash collision can ever
//! pass for a match.
//!
//! **Index.** One Aho–Corasick automaton (`matching/automaton.rs`) over the old sides
//! reads the file once. Every line where some old side's prefix ends is
//! recorded with the Euler-tour number of its state, so that the places where
//! hunk `k`'s old side ends in the *original* are one interval of numbers:
//! one slice of the lines sorted by number, checked one by one when it is
//! short (the usual case: a unique hunk ends at one place), else searched in
//! position order through a wavelet matrix (`matching/wavelet.rs`), built the first
//! time a hunk needs it. Either way, no other line is looked at.
//!
//! The file's lines are found and given their ids in one pass
//! (`Lines::new_with_keys`, [`crate::text`]): an id is looked up while the
//! split has the line in the cache, not in a second pass that would read
//! the file from memory again. The automaton's pass then reads only the
//! ids. Both are cut into parts run on every core (`index_original` for
//! the automaton's). Same index, same work, less wall time.
//!
//! **Post-state.** Applied hunks are blocks spliced into a view of the
//! original (no copy of the file). A match in the post-state is either
//! *clean* — original lines between two blocks, found through the index,
//! skipping whole stretches that earlier hunks consumed — or *touching*: it
//! contains a line an earlier hunk wrote or spans a place where one removed
//! lines. Touching matches can only end at a written line or at an original
//! line whose automaton state reaches back past the previous block; those
//! states are kept up to date (an *overlay*) by re-reading, after each
//! splice, the written lines and the lines after them until the automaton
//! state agrees again with the one recorded before. A hunk applies when it
//! has exactly one clean match and no touching one. When it does not, and
//! only then, one linear pass over the post-state names the failure exactly
//! (all match lines, the overlapped hunk): the section stops there.
//!
//! **Cost**, for a file of `n` lines (`F` bytes) and a section of `H` hunks
//! whose old sides total `P` lines (`B` bytes of patch): building is
//! O(F + B) hashing and comparing, O(n) automaton steps, and, only if some
//! old side ends at more than `SCAN_LIMIT` (64) places, O(m log P) for the
//! matrix (`m` ≤ `n` lines where some old side's prefix ends). Each hunk then
//! costs O((1 + j) log n log P) to find its clean matches (O(1 + j) checks
//! when it ends at few places), where `j` is the number of earlier hunks'
//! stretches that an occurrence of its old side overlaps (0 unless the hunks'
//! texts overlap each other), plus O(log) for touching ones; applying it
//! re-reads its new lines and `ρ` lines after them, O(log) each, where `ρ` is
//! how far a prefix of some old side that spans the edit keeps matching (at
//! most the longest old side, a line or two in practice). A failing hunk adds
//! one O(n + P) pass. Total, worst case:
//! O((F + B) + (n + P) log(n + P) + Σj · log² + Σρ · log) with Σj ≤ H² and
//! Σρ ≤ H·L_max — near-linear, and independent of how common the hunks'
//! lines are: a file of `}` or blank lines, or of two lines `a`/`b` where
//! every hunk is still unique, costs the same as any other (see the
//! `work_is_linear_*` tests, which count steps).
//!
//! **Overlap.** A hunk whose single match includes a line written by an
//! earlier hunk, or spans a place where an earlier hunk removed lines, is
//! `overlapping_edits` (the first such hunk in file order is named): hunks of
//! one section own disjoint stretches of the original (they may touch).
//! Matches inside earlier hunks' output still count for uniqueness, as the
//! spec's post-state rule requires.
//!
//! **Line endings** (see docs/clarifications.md): context lines keep their
//! original bytes; added lines take the file's ending ([`Lines::newline`]);
//! a missing final newline stays missing unless a hunk at the end says
//! otherwise with `\ No newline at end of file`; a BOM stays in front.

mod automaton;
mod line_ids;
mod wavelet;

#[cfg(test)]
use std::cell::Cell;
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

use crate::content::Splicing;
use crate::envelope::{Hunk, LineKind};
use crate::parallel;
use crate::text::{Lines, Offsets};
use automaton::{Automaton, MixHasher, ROOT};
use line_ids::LineIds;
use wavelet::Wavelet;

/// A file of at least twice this many lines has its lines identified on
/// more than one thread (`crate::parallel`).
const PARALLEL_PART_LINES: usize = 1 << 16;

/// The original lines are cut into stretches of this many for
/// `PostState::orig_state` (a list entry of 8 bytes per stretch: about
/// 61 KiB per million lines). Under test, 4, so that the proptests' small
/// files cross stretches.
const OCC_STRETCH: usize = if cfg!(test) { 4 } else { 128 };

/// How many match locations a `multiple_matches` failure lists at most.
pub const MAX_REPORTED_MATCHES: usize = 20;

/// An old side that ends at no more places than this in the original is
/// located by checking each place; beyond, through the wavelet matrix, which
/// is only built when some hunk needs it.
const SCAN_LIMIT: usize = 64;

/// Why a hunk could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkFailure {
    /// The hunk's old lines occur nowhere in the post-state.
    ContextNotFound,
    /// They occur more than once; the 1-based lines where matches start
    /// (in the file before the patch; a match inside an earlier hunk's output
    /// is reported at the line where that hunk applied).
    MultipleMatches {
        /// Start lines of the first matches in file order, ascending, at
        /// most [`MAX_REPORTED_MATCHES`].
        lines: Vec<usize>,
        /// How many matches there are in all (for a hunk with no old lines,
        /// every line boundary of the file).
        count: usize,
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
    splice_hunks(original, hunks).map(|splicing| splicing.render(original))
}

/// [`apply_hunks`] without assembling the result: the new file as stretches
/// of `original` and added bytes, for the committer to write out directly
/// ([`crate::content`]).
pub fn splice_hunks(original: &[u8], hunks: &[Hunk<'_>]) -> Result<Splicing, HunkError> {
    Matcher::new(hunks).splice(original)
}

/// [`splice_hunks`], and the work it took (unit steps, each O(log(n + P))
/// at most), for the tests that prove the cost without timing it.
#[cfg(test)]
fn run(original: &[u8], hunks: &[Hunk<'_>]) -> (Result<Splicing, HunkError>, u64) {
    Matcher::new(hunks).run(original)
}

/// A section's hunks made ready to be applied, before the file is read:
/// their shapes checked, their old sides given ids and built into the
/// automaton. That takes no byte of the file, so the committer's caller
/// does it beside the read of a large file ([`crate::parallel::join`]),
/// which keeps both cores busy but not always both at once.
pub(crate) struct Matcher<'h, 'p> {
    hunks: &'h [Hunk<'p>],
    shapes: Result<Vec<HunkShape>, HunkError>,
    old: OldSides<'p>,
}

impl<'h, 'p> Matcher<'h, 'p> {
    /// Ready `hunks` (a section's, in order).
    pub(crate) fn new(hunks: &'h [Hunk<'p>]) -> Self {
        let shapes = hunks
            .iter()
            .enumerate()
            .map(|(i, h)| {
                HunkShape::of(h).map_err(|failure| HunkError {
                    hunk_index: i,
                    failure,
                })
            })
            .collect();
        Matcher {
            hunks,
            shapes,
            old: OldSides::of(hunks),
        }
    }

    /// How many old-side lines the hunks have in all: what
    /// [`Matcher::new`] costs, about.
    pub(crate) fn old_lines(hunks: &[Hunk<'_>]) -> usize {
        hunks.iter().map(|h| h.old_lines().count()).sum()
    }

    /// [`splice_hunks`] of the hunks made ready.
    pub(crate) fn splice(self, original: &[u8]) -> Result<Splicing, HunkError> {
        self.run(original).0
    }

    /// [`Matcher::splice`], and the work it took (unit steps, each
    /// O(log(n + P)) at most; the tests prove the cost with it).
    fn run(self, original: &[u8]) -> (Result<Splicing, HunkError>, u64) {
        let shapes = match self.shapes {
            Ok(s) => s,
            Err(e) => return (Err(e), 0),
        };
        let (lines, orig_ids) = self.old.read(original);
        let mut state = PostState::new(&lines, self.old, orig_ids);
        for (index, (hunk, shape)) in self.hunks.iter().zip(&shapes).enumerate() {
            if let Err(failure) = state.apply(index, hunk, shape) {
                let work = state.work();
                return (
                    Err(HunkError {
                        hunk_index: index,
                        failure,
                    }),
                    work,
                );
            }
        }
        let work = state.work();
        (Ok(state.render()), work)
    }
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
    let old = OldSides::of(hunks);
    let (lines, orig_ids) = old.read(original);
    let mut state = PostState::new(&lines, old, orig_ids);
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

/// The lines where the automaton, reading the original's line ids, is not
/// at its root, ascending, with those states: one pass over the ids, cut
/// into `parts` parts read on as many threads.
///
/// A part is read from its start only if it is the first: id 0 (a line in
/// no old side) sends the automaton to its root whatever state it was in,
/// so every other part is read from the line after its first id-0 line. The
/// lines before that (its *head*, usually a line or two) are read at the
/// end, in order, from the state the part before it ended in. Each line is
/// stepped once, as on one thread.
fn index_original(orig_ids: &[u32], ac: &Automaton, parts: usize) -> (Offsets, Vec<u32>) {
    /// What one part found. `first` is the part's first line (a line
    /// number of the file); `from` counts from `first`: the part was read
    /// at the root from its line `from` on (`None`: it has no id-0 line, so
    /// all of it is head).
    struct Part {
        first: usize,
        from: Option<usize>,
        occ_pos: Offsets,
        occ_state: Vec<u32>,
        last_state: u32,
    }
    let n = orig_ids.len();
    let size = n.div_ceil(parts.max(1)).max(1);
    let mut found: Vec<Part> = (0..n)
        .step_by(size)
        .map(|first| Part {
            first,
            from: None,
            occ_pos: Offsets::with_capacity(0),
            occ_state: Vec::new(),
            last_state: ROOT,
        })
        .collect();
    let work: Vec<(&[u32], &mut Part)> = orig_ids.chunks(size).zip(&mut found).collect();
    parallel::for_each(work, parts, |(part_ids, part)| {
        part.from = if part.first == 0 {
            Some(0)
        } else {
            part_ids.iter().position(|&id| id == 0).map(|k| k + 1)
        };
        if let Some(from) = part.from {
            let (pos, state) = (&mut part.occ_pos, &mut part.occ_state);
            part.last_state = read_ids(ac, ROOT, &part_ids[from..], part.first + from, pos, state);
        }
    });
    let total = found.iter().map(|p| p.occ_state.len()).sum::<usize>();
    let (mut occ_pos, mut occ_state) = (Offsets::with_capacity(total), Vec::with_capacity(total));
    let mut s = ROOT;
    for part in &found {
        let end = (part.first + size).min(n);
        let head_end = part.from.map_or(end, |from| part.first + from);
        let head = &orig_ids[part.first..head_end];
        s = read_ids(ac, s, head, part.first, &mut occ_pos, &mut occ_state);
        if part.from.is_some() {
            // Part 0 has no head; any other head ends on an id-0 line.
            debug_assert!(s == ROOT, "a head ends at the root");
            for i in 0..part.occ_pos.len() {
                occ_pos.push(part.occ_pos.get(i));
            }
            occ_state.extend_from_slice(&part.occ_state);
            s = part.last_state;
        }
    }
    (occ_pos, occ_state)
}

/// Step `ac` from state `s` through `ids` (the lines from `first` on),
/// recording each line where the state is not the root and that state;
/// returns the last state.
fn read_ids(
    ac: &Automaton,
    mut s: u32,
    ids: &[u32],
    first: usize,
    occ_pos: &mut Offsets,
    occ_state: &mut Vec<u32>,
) -> u32 {
    for (k, &id) in ids.iter().enumerate() {
        s = ac.step(s, id);
        if s != ROOT {
            occ_pos.push(first + k);
            occ_state.push(s);
        }
    }
    s
}

/// A position in the post-state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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
    id: u32,
    /// The automaton state after this line, in the post-state.
    state: u32,
}

/// How many clean matches an old side has ([`PostState::clean_match`]).
enum Clean {
    None,
    /// Exactly one, starting at this original line.
    One(usize),
    /// More than one.
    Several,
}

/// Where a hunk's old side is, as far as the index can tell.
enum Located {
    /// Exactly one clean match, starting at this original line.
    At(usize),
    /// No match at all.
    NotFound,
    /// Something else (several, or touching): the exhaustive pass decides.
    Refused,
}

/// The hunks' old sides, given ids and read into the automaton: what the
/// matcher knows before it reads the file.
pub(crate) struct OldSides<'p> {
    /// The id of every distinct old-side line.
    ids: LineIds<'p>,
    /// How many old-side lines there are, over all hunks.
    count: usize,
    ac: Automaton,
    /// The automaton state of each hunk's whole old side (`None`: no old lines).
    terminals: Vec<Option<u32>>,
}

impl<'p> OldSides<'p> {
    fn of(hunks: &[Hunk<'p>]) -> Self {
        let count = Matcher::old_lines(hunks);
        let mut ids = LineIds::new(count);
        // Every old side's ids, one after the other (one allocation, not one
        // per hunk): hunk `k`'s are `old_ids[old_ends[k - 1]..old_ends[k]]`.
        let mut old_ids = Vec::with_capacity(count);
        let mut old_ends = Vec::with_capacity(hunks.len());
        for h in hunks {
            old_ids.extend(h.old_lines().map(|l| ids.intern(l.text.as_bytes())));
            old_ends.push(old_ids.len());
        }
        let patterns = || {
            let starts = std::iter::once(0).chain(old_ends.iter().copied());
            starts.zip(&old_ends).map(|(s, &e)| &old_ids[s..e])
        };
        let (ac, terms) = Automaton::new(patterns().filter(|p| !p.is_empty()));
        let mut terms = terms.into_iter();
        let terminals = patterns()
            .map(|p| if p.is_empty() { None } else { terms.next() })
            .collect();
        OldSides {
            ids,
            count,
            ac,
            terminals,
        }
    }

    /// The original's lines and the id of each (0: in no old side), found
    /// in one pass: each line is given its id while the split has it in
    /// the cache ([`Lines::new_with_keys`]).
    fn read<'f>(&self, original: &'f [u8]) -> (Lines<'f>, Vec<u32>) {
        if self.count == 0 {
            let lines = Lines::new(original);
            let n = lines.len();
            (lines, vec![0; n])
        } else {
            Lines::new_with_keys(original, |line| self.ids.get(line))
        }
    }
}

/// The file as left by the hunks applied so far, as a view over the original.
struct PostState<'f, 'p> {
    lines: &'f Lines<'f>,
    blocks: Vec<Block<'p>>,
    /// Non-tail blocks by original start.
    by_start: BTreeMap<usize, usize>,
    /// Non-tail blocks by original end.
    by_end: HashMap<usize, usize, BuildHasherDefault<MixHasher>>,
    /// The tail block, once a hunk appended at the end.
    tail: Option<usize>,
    /// Whether the post-state ends with a newline.
    final_newline: bool,
    /// Lines in the post-state.
    len: usize,
    ids: LineIds<'p>,
    /// The id of every original line.
    orig_ids: Vec<u32>,
    ac: Automaton,
    /// The automaton state of each hunk's whole old side (`None`: no old lines).
    terminals: Vec<Option<u32>>,
    /// Original lines whose automaton state (reading the original) is not
    /// the root, ascending, and those states.
    occ_pos: Offsets,
    occ_state: Vec<u32>,
    /// Where in `occ_pos` the lines of each stretch of [`OCC_STRETCH`]
    /// original lines start, from stretch 0 to stretch `n / OCC_STRETCH`
    /// (empty when the stretch size divides `n`), and one more entry at the
    /// end holding the list's length: `orig_state` searches one stretch, a
    /// few entries, not the whole list, whose first probes each missed the
    /// cache.
    occ_from: Vec<usize>,
    /// The same lines grouped by the Euler-tour number of their state (in
    /// line order within a group): where an old side ends is one slice,
    /// `by_tin[tin_start[lo]..tin_start[hi]]`.
    by_tin: Offsets,
    tin_start: Vec<usize>,
    /// The Euler-tour numbers of `occ_state`, indexed, for old sides that
    /// end at more than [`SCAN_LIMIT`] places.
    occ_index: OnceCell<Wavelet>,
    /// Consumed original lines, as maximal runs: start → end.
    consumed: BTreeMap<usize, usize>,
    /// Original lines still in the post-state whose automaton state there
    /// reaches back past the start of their run of original lines; every
    /// other such line's state is its original state cut to that run.
    overlay: BTreeMap<usize, u32>,
    /// (Euler-tour number, position) of every overlay line and every written
    /// line whose state is not the root: where touching matches can end.
    touch: BTreeSet<(u32, Pos)>,
    #[cfg(test)]
    work: Cell<u64>,
}

impl<'f, 'p> PostState<'f, 'p> {
    fn new(lines: &'f Lines<'f>, old: OldSides<'p>, orig_ids: Vec<u32>) -> Self {
        let parts = parallel::parts(lines.len(), PARALLEL_PART_LINES);
        PostState::with_parts(lines, old, orig_ids, parts)
    }

    /// [`PostState::new`] with the automaton's pass over the original cut
    /// into `parts` parts, one thread each ([`index_original`]).
    fn with_parts(
        lines: &'f Lines<'f>,
        old: OldSides<'p>,
        orig_ids: Vec<u32>,
        parts: usize,
    ) -> Self {
        let OldSides {
            ids,
            count: old_count,
            ac,
            terminals,
        } = old;
        debug_assert_eq!(orig_ids.len(), lines.len(), "one id per original line");
        let (occ_pos, occ_state) = if old_count == 0 {
            (Offsets::with_capacity(0), Vec::new())
        } else {
            index_original(&orig_ids, &ac, parts)
        };
        // Counting sort of the lines by the Euler-tour number of their state.
        let mut tin_start = vec![0usize; ac.len() as usize + 1];
        for &s in &occ_state {
            tin_start[ac.tin(s) as usize + 1] += 1;
        }
        for t in 1..tin_start.len() {
            tin_start[t] += tin_start[t - 1];
        }
        let mut by_tin = Offsets::zeros(occ_pos.len());
        let mut slot = tin_start.clone();
        for (i, &s) in occ_state.iter().enumerate() {
            let t = ac.tin(s) as usize;
            by_tin.set(slot[t], occ_pos.get(i));
            slot[t] += 1;
        }
        let mut occ_from = Vec::with_capacity(lines.len() / OCC_STRETCH + 2);
        let mut i = 0;
        for stretch in 0..=lines.len() / OCC_STRETCH {
            let first = stretch * OCC_STRETCH;
            while i < occ_pos.len() && occ_pos.get(i) < first {
                i += 1;
            }
            occ_from.push(i);
        }
        occ_from.push(occ_pos.len());
        let state = PostState {
            lines,
            blocks: Vec::new(),
            by_start: BTreeMap::new(),
            by_end: HashMap::with_capacity_and_hasher(
                terminals.len(),
                BuildHasherDefault::default(),
            ),
            tail: None,
            final_newline: lines.ends_with_newline(),
            len: lines.len(),
            ids,
            orig_ids,
            ac,
            terminals,
            occ_pos,
            occ_state,
            occ_from,
            by_tin,
            tin_start,
            occ_index: OnceCell::new(),
            consumed: BTreeMap::new(),
            overlay: BTreeMap::new(),
            touch: BTreeSet::new(),
            #[cfg(test)]
            work: Cell::new(0),
        };
        state.tick(lines.len() as u64 + old_count as u64);
        state
    }

    /// Count `n` unit steps of work (tests only).
    #[cfg(test)]
    fn tick(&self, n: u64) {
        self.work.set(self.work.get() + n);
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn tick(&self, _n: u64) {}

    #[cfg(test)]
    fn work(&self) -> u64 {
        self.work.get()
    }

    #[cfg(not(test))]
    fn work(&self) -> u64 {
        0
    }

    fn id_at(&self, pos: Pos) -> u32 {
        match pos {
            Pos::Orig(i) => self.orig_ids[i],
            Pos::New(b, o) => self.blocks[b].new_lines[o].id,
        }
    }

    /// The first post-state position at or after original index `j`, and the
    /// first block (if any) whose removal was stepped over to get there.
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
                    crossed = crossed.or(Some(b));
                    j = self.blocks[b].end;
                }
                None => return (Some(Pos::Orig(j)), crossed),
            }
        }
    }

    /// The last post-state position before original index `j`.
    fn last_before(&self, mut j: usize) -> Option<Pos> {
        loop {
            if j == 0 {
                return None;
            }
            match self.by_end.get(&j) {
                Some(&b) if !self.blocks[b].new_lines.is_empty() => {
                    return Some(Pos::New(b, self.blocks[b].new_lines.len() - 1))
                }
                Some(&b) => j = self.blocks[b].start,
                None => return Some(Pos::Orig(j - 1)),
            }
        }
    }

    /// The last position of the post-state.
    fn last_pos(&self) -> Option<Pos> {
        match self.tail {
            Some(t) if !self.blocks[t].new_lines.is_empty() => {
                Some(Pos::New(t, self.blocks[t].new_lines.len() - 1))
            }
            _ => self.last_before(self.lines.len()),
        }
    }

    /// The next position, and the first block whose removal lies between.
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

    /// The 1-based line (file before the patch) a position is reported at.
    fn report_line(&self, pos: Pos) -> usize {
        match pos {
            Pos::Orig(i) => i + 1,
            Pos::New(b, _) => self.blocks[b].start + 1,
        }
    }

    /// Where the run of unconsumed original lines holding `y` starts.
    fn run_start(&self, y: usize) -> usize {
        self.consumed
            .range(..=y)
            .next_back()
            .map_or(0, |(_, &end)| end)
    }

    /// The automaton state at original line `y` when reading the original.
    fn orig_state(&self, y: usize) -> u32 {
        let stretch = y / OCC_STRETCH;
        let within = self.occ_from[stretch]..self.occ_from[stretch + 1];
        self.occ_pos
            .position_sorted_within(within, y)
            .map_or(ROOT, |i| self.occ_state[i])
    }

    /// The automaton state at a position, reading the post-state.
    fn state_at(&self, pos: Pos) -> u32 {
        match pos {
            Pos::New(b, o) => self.blocks[b].new_lines[o].state,
            Pos::Orig(y) => match self.overlay.get(&y) {
                Some(&s) => s,
                None => self
                    .ac
                    .within(self.orig_state(y), y + 1 - self.run_start(y)),
            },
        }
    }

    fn set_run_state(&mut self, y: usize, state: Option<u32>) {
        let old = match state {
            Some(s) => self.overlay.insert(y, s),
            None => self.overlay.remove(&y),
        };
        if let Some(o) = old {
            self.touch.remove(&(self.ac.tin(o), Pos::Orig(y)));
        }
        if let Some(s) = state.filter(|&s| s != ROOT) {
            self.touch.insert((self.ac.tin(s), Pos::Orig(y)));
        }
    }

    fn set_written_state(&mut self, b: usize, o: usize, s: u32) {
        let old = std::mem::replace(&mut self.blocks[b].new_lines[o].state, s);
        if old != ROOT {
            self.touch.remove(&(self.ac.tin(old), Pos::New(b, o)));
        }
        if s != ROOT {
            self.touch.insert((self.ac.tin(s), Pos::New(b, o)));
        }
    }

    /// The end of the consumed run that original lines `s..e` overlap, if any.
    fn consumed_overlap(&self, s: usize, e: usize) -> Option<usize> {
        let (_, &end) = self.consumed.range(..e).next_back()?;
        (end > s).then_some(end)
    }

    /// The clean matches (original lines, between blocks) of the old side
    /// with automaton state `p` and `len` lines: none, one (its start line)
    /// or several.
    fn clean_match(&self, p: u32, len: usize) -> Clean {
        let (lo, hi) = self.ac.subtree(p);
        let ends = self.tin_start[lo as usize]..self.tin_start[hi as usize];
        let mut found = Clean::None;
        let mut add = |start: usize| {
            found = match found {
                Clean::None => Clean::One(start),
                _ => Clean::Several,
            };
            matches!(found, Clean::Several)
        };
        if ends.len() <= SCAN_LIMIT {
            for end in ends.map(|i| self.by_tin.get(i)) {
                self.tick(1);
                let start = end + 1 - len;
                if self.consumed_overlap(start, end + 1).is_none() && add(start) {
                    break;
                }
            }
            return found;
        }
        let index = self.occ_index.get_or_init(|| {
            self.tick(self.occ_state.len() as u64);
            let tins: Vec<u32> = self.occ_state.iter().map(|&s| self.ac.tin(s)).collect();
            Wavelet::new(&tins, self.ac.len())
        });
        let mut cursor = len - 1; // the first line where it can end
        loop {
            self.tick(1);
            let from = self.occ_pos.partition_point(|y| y < cursor);
            let Some(i) = index.first_in(from, lo, hi) else {
                break;
            };
            let end = self.occ_pos.get(i);
            let start = end + 1 - len;
            match self.consumed_overlap(start, end + 1) {
                // Skip the whole consumed run: a match must start after it.
                Some(run_end) => cursor = (end + 1).max(run_end + len - 1),
                None if add(start) => break,
                None => cursor = end + 1,
            }
        }
        found
    }

    /// Does the old side with state `p` and `len` lines have a touching match?
    fn touches(&self, p: u32, len: usize) -> bool {
        let (lo, hi) = self.ac.subtree(p);
        for &(_, pos) in self.touch.range((lo, Pos::Orig(0))..(hi, Pos::Orig(0))) {
            self.tick(1);
            match pos {
                Pos::New(..) => return true,
                // Ending here and reaching past the start of the run.
                Pos::Orig(y) if y + 1 - self.run_start(y) < len => return true,
                // A clean match that ends on an overlay line: counted already.
                Pos::Orig(_) => {}
            }
        }
        false
    }

    fn locate(&self, p: u32, len: usize) -> Located {
        match self.clean_match(p, len) {
            Clean::Several => Located::Refused,
            _ if self.touches(p, len) => Located::Refused,
            Clean::One(start) => Located::At(start),
            Clean::None => Located::NotFound,
        }
    }

    /// A hunk anchored at the end can only match the last `len` lines.
    fn locate_at_end(&self, p: u32, len: usize) -> Located {
        let Some(last) = self.last_pos() else {
            return Located::NotFound;
        };
        if !self.ac.ends_with(self.state_at(last), p) {
            return Located::NotFound;
        }
        match last {
            Pos::Orig(y) if y + 1 - self.run_start(y) >= len => Located::At(y + 1 - len),
            _ => Located::Refused,
        }
    }

    /// The exact answer, by one pass over the whole post-state: every match
    /// (of the last `old.len()` lines only, when `at_end`). Failure path only.
    fn exhaustive(&self, old: &[u32], at_end: bool) -> Result<usize, HunkFailure> {
        let mut seq = Vec::with_capacity(self.len);
        let mut crossed = Vec::with_capacity(self.len);
        let mut at = self.first_from(0).0;
        while let Some(pos) = at {
            seq.push(pos);
            let (next, c) = self.next(pos);
            crossed.push(c);
            at = next;
        }
        self.tick(seq.len() as u64 + old.len() as u64);
        // Knuth–Morris–Pratt over line ids.
        let border = borders(old);
        let (mut count, mut first, mut lines) = (0usize, None, Vec::new());
        let mut k = 0;
        for (i, &pos) in seq.iter().enumerate() {
            let id = self.id_at(pos);
            while k > 0 && old[k] != id {
                k = border[k - 1];
            }
            if old[k] == id {
                k += 1;
            }
            if k == old.len() {
                let start = i + 1 - k;
                if !at_end || i + 1 == seq.len() {
                    count += 1;
                    first.get_or_insert(start);
                    if lines.len() < MAX_REPORTED_MATCHES {
                        lines.push(self.report_line(seq[start]));
                    }
                }
                k = border[k - 1];
            }
        }
        match (count, first) {
            (0, _) | (_, None) => Err(HunkFailure::ContextNotFound),
            (1, Some(start)) => {
                let end = start + old.len();
                let touched = (start..end).find_map(|i| match seq[i] {
                    Pos::New(b, _) => Some(b),
                    Pos::Orig(_) if i + 1 < end => crossed[i],
                    Pos::Orig(_) => None,
                });
                match (touched, seq[start]) {
                    (Some(b), _) => Err(HunkFailure::Overlapping {
                        other_hunk: self.blocks[b].hunk,
                        line: self.blocks[b].start + 1,
                    }),
                    (None, Pos::Orig(s)) => Ok(s),
                    (None, Pos::New(b, _)) => Err(HunkFailure::Overlapping {
                        other_hunk: self.blocks[b].hunk,
                        line: self.blocks[b].start + 1,
                    }),
                }
            }
            _ => Err(HunkFailure::MultipleMatches { lines, count }),
        }
    }

    fn apply(
        &mut self,
        index: usize,
        hunk: &Hunk<'p>,
        shape: &HunkShape,
    ) -> Result<(), HunkFailure> {
        let at_end = shape.anchored_at_end(hunk);
        if shape.old_no_newline && self.final_newline {
            return Err(HunkFailure::ContextNotFound);
        }
        let Some(p) = self.terminals[index] else {
            return self.append(index, hunk, shape, at_end);
        };
        let len = hunk.old_lines().count();
        let located = if at_end {
            self.locate_at_end(p, len)
        } else {
            self.locate(p, len)
        };
        let start = match located {
            Located::At(start) => start,
            Located::NotFound => return Err(HunkFailure::ContextNotFound),
            Located::Refused => {
                let old: Vec<u32> = hunk
                    .old_lines()
                    .map(|l| self.ids.get(l.text.as_bytes()))
                    .collect();
                let start = self.exhaustive(&old, at_end)?;
                debug_assert!(false, "the index refused a hunk that applies");
                start
            }
        };
        self.splice(index, hunk, shape, start, start + len, at_end);
        Ok(())
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
        let last = self.last_pos();
        if !at_end && last.is_some() {
            // Every line boundary is a match; report the first two.
            return Err(HunkFailure::MultipleMatches {
                lines: vec![1, 2],
                count: self.len + 1,
            });
        }
        let mut s = last.map_or(ROOT, |p| self.state_at(p));
        let n = self.lines.len();
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
        for line in hunk.new_lines() {
            let text = line.text.as_bytes();
            let id = self.ids.get(text);
            self.blocks[b].new_lines.push(NewLine {
                text,
                orig: None,
                id,
                state: ROOT,
            });
            s = self.ac.step(s, id);
            let o = self.blocks[b].new_lines.len() - 1;
            self.set_written_state(b, o, s);
            self.len += 1;
            self.tick(1);
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
        // Read before the block exists: the state in front of it, and the
        // start of the run it is cut out of.
        let before = self.last_before(start).map_or(ROOT, |p| self.state_at(p));
        let old_run_start = self.run_start(start);
        let mut orig = start;
        let mut new_lines = Vec::with_capacity(hunk.lines.len());
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => {
                    new_lines.push(NewLine {
                        text: line.text.as_bytes(),
                        orig: Some(orig),
                        id: self.orig_ids[orig],
                        state: ROOT,
                    });
                    orig += 1;
                }
                LineKind::Remove => orig += 1,
                LineKind::Add => {
                    let text = line.text.as_bytes();
                    new_lines.push(NewLine {
                        text,
                        orig: None,
                        id: self.ids.get(text),
                        state: ROOT,
                    });
                }
            }
        }
        let b = self.blocks.len();
        self.len = self.len - (end - start) + new_lines.len();
        self.blocks.push(Block {
            hunk: index,
            start,
            end,
            new_lines,
        });
        self.by_start.insert(start, b);
        self.by_end.insert(end, b);
        self.consume(start, end);
        self.rescan(b, before, old_run_start);
        // After the insert, `first_from(end)` still looks past this block only.
        if at_end || self.first_from(end).0.is_none() {
            if shape.new_no_newline {
                self.final_newline = false;
            } else if shape.old_no_newline {
                self.final_newline = true;
            }
        }
    }

    /// Mark original lines `start..end` consumed.
    fn consume(&mut self, start: usize, end: usize) {
        let (mut s, mut e) = (start, end);
        if let Some((&ps, &pe)) = self.consumed.range(..start).next_back() {
            if pe == start {
                s = ps;
                self.consumed.remove(&ps);
            }
        }
        if let Some(ne) = self.consumed.remove(&end) {
            e = ne;
        }
        self.consumed.insert(s, e);
        let gone: Vec<usize> = self.overlay.range(start..end).map(|(&y, _)| y).collect();
        for y in gone {
            self.set_run_state(y, None);
        }
    }

    /// Bring the automaton states after the new block `b` up to date: its
    /// written lines, then the following lines until the state read agrees
    /// with the one recorded before the splice (from there on nothing
    /// changed). `old_run_start` is where the run of original lines that
    /// follows the block started before the splice.
    fn rescan(&mut self, b: usize, mut s: u32, old_run_start: usize) {
        for o in 0..self.blocks[b].new_lines.len() {
            self.tick(1);
            s = self.ac.step(s, self.blocks[b].new_lines[o].id);
            self.set_written_state(b, o, s);
        }
        let (mut at, crossed) = self.first_from(self.blocks[b].end);
        // In the run right after the block, the recorded states were cut to
        // the longer run it was part of.
        let mut first_run = crossed.is_none();
        while let Some(pos) = at {
            self.tick(1);
            match pos {
                Pos::Orig(y) => {
                    s = self.ac.step(s, self.orig_ids[y]);
                    let run_start = self.run_start(y);
                    let was_cut_at = if first_run { old_run_start } else { run_start };
                    let old = match self.overlay.get(&y) {
                        Some(&o) => o,
                        None => self.ac.within(self.orig_state(y), y + 1 - was_cut_at),
                    };
                    let in_run = self.ac.depth(s) <= y + 1 - run_start;
                    self.set_run_state(y, (!in_run).then_some(s));
                    if s == old && (in_run || !first_run) {
                        return;
                    }
                }
                Pos::New(d, o) => {
                    first_run = false;
                    s = self.ac.step(s, self.blocks[d].new_lines[o].id);
                    let old = self.blocks[d].new_lines[o].state;
                    self.set_written_state(d, o, s);
                    if s == old {
                        return;
                    }
                }
            }
            let (next, crossed) = self.next(pos);
            first_run &= crossed.is_none();
            at = next;
        }
    }

    /// The post-state as a splice of the original: untouched stretches
    /// by range, written lines as added bytes.
    fn render(&self) -> Splicing {
        let bytes = self.lines.bytes();
        let nl = self.lines.newline().as_bytes();
        let mut out = Writer {
            out: Splicing::default(),
            original: bytes,
            nl,
            owes_newline: false,
            last_ending: 0,
        };
        // The region before line 0 (a BOM) always stays.
        let mut cursor = 0usize; // byte offset in the original
        let mut line = 0usize;
        for &b in self.by_start.values() {
            let block = &self.blocks[b];
            out.copy(cursor..self.lines.start(block.start), block.start > line);
            for l in &block.new_lines {
                match l.orig {
                    Some(i) => out.copy(self.lines.start(i)..self.lines.start(i + 1), true),
                    None => out.line(l.text),
                }
            }
            line = block.end;
            cursor = self.lines.start(block.end);
        }
        out.copy(cursor..bytes.len(), line < self.lines.len());
        if let Some(t) = self.tail {
            for l in &self.blocks[t].new_lines {
                out.line(l.text);
            }
        }
        out.finish(self.final_newline)
    }
}

/// The output splice: owes a newline when the last thing copied was the
/// original's unterminated last line and more follows.
struct Writer<'n> {
    out: Splicing,
    original: &'n [u8],
    nl: &'n [u8],
    owes_newline: bool,
    /// The length of the last line's ending in `out`. Dropping a final
    /// newline drops exactly that many bytes: a written line `x\r` in an LF
    /// file ends in `\r\n`, but only its `\n` is an ending (found by
    /// fuzzing: fuzz/regressions/envelope_apply/b5-…).
    last_ending: usize,
}

impl Writer<'_> {
    fn pay(&mut self) {
        if self.owes_newline {
            self.out.add(self.nl);
            self.owes_newline = false;
            self.last_ending = self.nl.len();
        }
    }

    /// Copy original bytes `range` (whole lines); `has_lines` says whether
    /// any line is in them.
    fn copy(&mut self, range: std::ops::Range<usize>, has_lines: bool) {
        if range.is_empty() {
            return;
        }
        if has_lines {
            self.pay();
        }
        let region = &self.original[range.clone()];
        if has_lines {
            // Original lines keep their own endings (`\r\n` is one, as in
            // `Lines`).
            if region.ends_with(b"\r\n") {
                self.last_ending = 2;
            } else if region.ends_with(b"\n") {
                self.last_ending = 1;
            } else {
                self.owes_newline = true;
            }
        }
        self.out.base(range);
    }

    fn line(&mut self, text: &[u8]) {
        self.pay();
        self.out.add(text);
        self.out.add(self.nl);
        self.last_ending = self.nl.len();
    }

    fn finish(mut self, final_newline: bool) -> Splicing {
        if final_newline {
            self.pay();
        } else if !self.owes_newline && self.out.last_byte(self.original) == Some(b'\n') {
            // Ending in `\n` holds only after a line was ended (an empty
            // result or a lone BOM does not end in one), which set
            // `last_ending` to that ending's length (1 or 2, within `out`).
            self.out.truncate_end(self.last_ending);
        }
        self.out
    }
}

/// Knuth–Morris–Pratt's failure function over any sequence: `table[i]` is
/// the length of the longest proper border (a prefix that is also a suffix)
/// of `s[..=i]`. O(`s`) time. Shared by the matcher's failure pass (over
/// line ids) and `apply_change`'s occurrence count (over bytes).
pub(crate) fn borders<T: Eq>(s: &[T]) -> Vec<usize> {
    let mut table = vec![0; s.len()];
    let mut k = 0;
    for i in 1..s.len() {
        while k > 0 && s[k] != s[i] {
            k = table[k - 1];
        }
        if s[k] == s[i] {
            k += 1;
        }
        table[i] = k;
    }
    table
}

#[cfg(test)]
mod tests;
