//! Why an edit did not apply, and where: the failure-path diagnosis of both
//! edit tools (issue 10; the wire fields are in `docs/diagnostics.md`).
//!
//! The main type is [`Diagnosis`]: the nearest candidate location, a compact
//! line-by-line comparison ([`Row`]) with invisible characters made visible
//! ([`visible`]), and the [`Cause`]s, primary first. Entry points:
//! [`hunk_not_found`] and [`multiple_matches`] for `apply_patch` hunks,
//! [`stale_file`] for an `apply_patch` file whose hash changed, and
//! [`line_mismatch`] for a `workspace_write_patch` replace/delete.
//!
//! **Never changes what is applied.** Nothing here is called unless the
//! matcher already refused; the diagnosis only reads.
//!
//! **Bounded cost.** One pass over the file computes a *loose key* per line
//! (whitespace removed, look-alike characters folded, accents and
//! compatibility forms decomposed; ASCII lines take a byte loop) and keeps
//! postings only for keys the failing edit mentions, at most
//! [`COMMON_KEY`] + 1 per key. Candidate start lines are found by voting
//! from those postings (a key seen more than [`COMMON_KEY`] times votes only
//! when no rarer key exists), the best [`MAX_CANDIDATES`] are compared line
//! by line over at most [`MAX_EXPECTED_LINES`] lines each, and every list in
//! the result is capped. When no rare substantive line is found even
//! loosely (a typo with nothing else to anchor on), a second pass compares
//! each file line with the edit's lines by shared 4-grams, and the
//! `GRAM_PAIRS` most similar pairs vote too; edit distances between
//! misquoted lines are paid from a fixed budget. So the work is O(file +
//! min(edit, cap) · candidates), never file × edit, and memory beyond the
//! file's line index is O(edit).
//!
//! Left out on purpose: guessing the intended edit (the diagnosis names the
//! difference; the caller re-sends), look-alikes between scripts (Cyrillic
//! `а` for Latin `a`), and Hangul NFC/NFD (only Latin, Greek, Cyrillic and
//! compatibility forms are decomposed for the loose key).
//!
//! The files, one job each: `diagnosis` the result types;
//! `fold` the loose form of a line and `keys` its hash; `classify` the
//! classes of difference of a pair of lines; `invisible` the visible form
//! ([`visible`]); `view` the text diagnosed against; `vote` the index and
//! its voting; `ngram` the 4-gram fallback; `distance` edit distance; `walk`
//! the line-by-line comparison; `locate` the choice of the nearest region;
//! `english` the notes and hints; `json` the wire form both tools send;
//! and one file per entry point:
//! `not_found`, `ambiguous`, `stale`, `mismatch`.

mod ambiguous;
mod chars;
mod classify;
mod diagnosis;
mod distance;
mod english;
mod fold;
mod invisible;
mod json;
mod keys;
mod locate;
mod mismatch;
mod ngram;
mod not_found;
mod stale;
mod view;
mod vote;
mod walk;

#[cfg(test)]
mod tests;

pub use ambiguous::multiple_matches;
pub use diagnosis::{Cause, Diagnosis, HeaderFound, MatchSite, Row, RowStatus};
pub use invisible::{visible, visible_line, VisibleStyle};
pub(crate) use json::diagnosis_json;
#[cfg(test)]
use keys::{loose_key, strip_line_number};
pub use mismatch::line_mismatch;
pub use not_found::hunk_not_found;
pub use stale::stale_file;

/// How many candidate locations are compared line by line.
pub const MAX_CANDIDATES: usize = 8;
/// How many lines of an edit are used (a longer edit is diagnosed on its
/// first lines and the diagnosis says `truncated`).
pub const MAX_EXPECTED_LINES: usize = 2_000;
/// A loose key seen more often than this in the file is *common*: it votes
/// only when the edit has no rarer line.
pub const COMMON_KEY: usize = 32;
/// At most this many comparison rows are reported.
pub const MAX_ROWS: usize = 40;
/// At most this many bytes of a line are shown (around the first difference).
pub const MAX_SHOWN_BYTES: usize = 200;
/// How far above and below a match the lines that tell matches apart are sought.
pub const MAX_DISTINGUISH_DISTANCE: usize = 50;
/// How many matches a `multiple_matches` diagnosis describes.
pub const MAX_MATCHES: usize = 20;
/// How many of a hunk's `@@` header lines (the last ones) are looked for
/// above its matches.
pub const MAX_HEADERS_SOUGHT: usize = 8;
/// At most this many differing rows are classified (and explained) per edit.
const MAX_CLASSIFIED: usize = 256;
/// Lines longer than this are classified by their ends only.
const MAX_CLASSIFY_BYTES: usize = 16 * 1024;
/// Total line comparisons spent looking for an edit in the original file
/// under an earlier hunk's output.
const EARLIER_HUNK_BUDGET: usize = 200_000;
