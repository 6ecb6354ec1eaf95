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
//! [`GRAM_PAIRS`] most similar pairs vote too; edit distances between
//! misquoted lines are paid from a fixed budget. So the work is O(file +
//! min(edit, cap) · candidates), never file × edit, and memory beyond the
//! file's line index is O(edit).
//!
//! Left out on purpose: guessing the intended edit (the diagnosis names the
//! difference; the caller re-sends), look-alikes between scripts (Cyrillic
//! `а` for Latin `a`), and Hangul NFC/NFD (only Latin, Greek, Cyrillic and
//! compatibility forms are decomposed for the loose key).

use std::collections::{BTreeMap, HashMap};

use unicode_normalization::char::decompose_compatible;
use unicode_normalization::UnicodeNormalization;

use crate::envelope::{Hunk, LineKind};
use crate::matching::{post_state, Segment};
use crate::text::Lines;

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

/// Why an edit does not apply. The wire name is [`Cause::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Cause {
    /// The edit's result is in the file and its old lines are not: it was applied already.
    AlreadyApplied,
    /// The old lines are in the original file, where an earlier hunk of the section changed them.
    ChangedByEarlierHunk,
    /// The file's hash is not the one given: it changed since it was read.
    FileChanged,
    /// The lines sit elsewhere than the stated line numbers (write_patch).
    LinesShifted,
    /// The lines carry line-number prefixes copied from a read output (`  12\t`, `12: `).
    LineNumberPrefix,
    /// A hunk line holds a literal `\n` where the file has a line break.
    LiteralNewlineEscape,
    /// A carriage return differs (CRLF content vs LF).
    LineEndings,
    /// Curly quotes, dashes, non-breaking or zero-width spaces, NFC vs NFD, compatibility forms.
    UnicodeLookalike,
    /// Leading whitespace differs (tabs vs spaces, or width).
    Indentation,
    /// Trailing whitespace differs.
    TrailingWhitespace,
    /// Whitespace inside the line differs.
    InnerWhitespace,
    /// The file has a blank line the edit leaves out.
    BlankLineMissing,
    /// The edit has a blank line the file does not.
    BlankLineExtra,
    /// The lines match, but the hunk is anchored at the end of the file and they are not last.
    NotAtEndOfFile,
    /// The hunk says the old last line has no final newline; the file has one.
    FinalNewline,
    /// The nearest region differs in content (not only in invisible characters).
    ContentDiffers,
    /// Nothing in the file resembles the edit.
    NoSimilarRegion,
    /// The old lines occur more than once.
    AmbiguousContext,
    /// A hunk with no context or removed lines, not anchored at the end of the file.
    NoContext,
}

impl Cause {
    /// The wire name (snake_case, stable).
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::AlreadyApplied => "already_applied",
            Cause::ChangedByEarlierHunk => "changed_by_earlier_hunk",
            Cause::FileChanged => "file_changed",
            Cause::LinesShifted => "lines_shifted",
            Cause::LineNumberPrefix => "line_number_prefix",
            Cause::LiteralNewlineEscape => "literal_newline_escape",
            Cause::LineEndings => "line_endings",
            Cause::UnicodeLookalike => "unicode_lookalike",
            Cause::Indentation => "indentation",
            Cause::TrailingWhitespace => "trailing_whitespace",
            Cause::InnerWhitespace => "inner_whitespace",
            Cause::BlankLineMissing => "blank_line_missing",
            Cause::BlankLineExtra => "blank_line_extra",
            Cause::NotAtEndOfFile => "not_at_end_of_file",
            Cause::FinalNewline => "final_newline",
            Cause::ContentDiffers => "content_differs",
            Cause::NoSimilarRegion => "no_similar_region",
            Cause::AmbiguousContext => "ambiguous_context",
            Cause::NoContext => "no_context",
        }
    }

    /// Every cause, in the order ties between line counts are broken.
    pub const ALL: [Cause; 19] = [
        Cause::AlreadyApplied,
        Cause::ChangedByEarlierHunk,
        Cause::FileChanged,
        Cause::LinesShifted,
        Cause::LineNumberPrefix,
        Cause::LiteralNewlineEscape,
        Cause::LineEndings,
        Cause::UnicodeLookalike,
        Cause::Indentation,
        Cause::TrailingWhitespace,
        Cause::InnerWhitespace,
        Cause::BlankLineMissing,
        Cause::BlankLineExtra,
        Cause::NotAtEndOfFile,
        Cause::FinalNewline,
        Cause::ContentDiffers,
        Cause::NoSimilarRegion,
        Cause::AmbiguousContext,
        Cause::NoContext,
    ];
}

/// How one comparison row relates the edit to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowStatus {
    /// The lines are equal.
    Same,
    /// The lines differ (see the row's causes).
    Differs,
    /// A file line the edit leaves out (`expected` is absent).
    Missing,
    /// An edit line the file does not have (`actual` is absent).
    Extra,
    /// A run of equal lines, not shown (`count` of them).
    Skipped,
}

impl RowStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Same => "same",
            RowStatus::Differs => "differs",
            RowStatus::Missing => "missing",
            RowStatus::Extra => "extra",
            RowStatus::Skipped => "skipped",
        }
    }
}

/// One row of the comparison of the edit's expected lines with the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// How the two relate.
    pub status: RowStatus,
    /// 1-based line of the file (before the patch) the row is about, when it has one.
    pub line: Option<usize>,
    /// The edit's line, made [`visible`].
    pub expected: Option<String>,
    /// The file's line, made [`visible`].
    pub actual: Option<String>,
    /// What differs, for a `differs`, `missing` or `extra` row.
    pub causes: Vec<Cause>,
    /// The first difference in words, with columns and code points.
    pub note: Option<String>,
    /// For a `skipped` row, how many equal lines it stands for.
    pub count: usize,
    /// When the file line was written by an earlier hunk of the section, its index.
    pub written_by: Option<usize>,
}

/// One location of an ambiguous hunk, and the nearest lines that tell it apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchSite {
    /// 1-based line where the match starts (file before the patch).
    pub line: usize,
    /// The nearest line above that differs from the line at the same distance above every other match.
    pub above: Option<(usize, String)>,
    /// The same below the match.
    pub below: Option<(usize, String)>,
}

/// The diagnosis of one failed edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnosis {
    /// The causes, primary first; never empty.
    pub causes: Vec<Cause>,
    /// One or two sentences: what to change.
    pub hint: String,
    /// 1-based line of the file (before the patch) where the edit's first
    /// expected line is, or would be: the nearest candidate.
    pub line: Option<usize>,
    /// The last line of that region.
    pub end_line: Option<usize>,
    /// write_patch: where the expected lines occur exactly (nearest to the stated line).
    pub found_at_line: Option<usize>,
    /// How many of the edit's expected lines were found in the region, exactly
    /// or up to invisible characters.
    pub matched: usize,
    /// How many expected lines the edit has.
    pub expected_lines: usize,
    /// The comparison, compacted (runs of equal lines are `skipped` rows).
    pub rows: Vec<Row>,
    /// Rows left out after [`MAX_ROWS`].
    pub omitted_rows: usize,
    /// Other candidate locations, best first.
    pub other_candidates: Vec<usize>,
    /// The earlier hunk that changed the region (`changed_by_earlier_hunk`).
    pub earlier_hunk: Option<usize>,
    /// The hunk the diagnosis is about, when the error itself does not say (`stale_file`).
    pub hunk_index: Option<usize>,
    /// `Some(true)` when a hash was given for the file and it matched: the
    /// file is the one the edit was written against.
    pub hash_verified: Option<bool>,
    /// The edit was longer than [`MAX_EXPECTED_LINES`]; only its start was compared.
    pub truncated: bool,
    /// `multiple_matches`: the matches and the lines that tell them apart.
    pub matches: Vec<MatchSite>,
    /// `multiple_matches`: how many matches there are in all (`matches`
    /// lists at most [`MAX_MATCHES`]).
    pub match_count: Option<usize>,
    /// `multiple_matches` of a hunk with `@@` header text: the file line
    /// that header text names, above the one match it tells apart.
    pub header_found: Option<HeaderFound>,
}

/// A hunk's `@@` header text found in the file: the header is not used for
/// matching (C-env-stacked-headers), but it says which match the model
/// meant, and that line, added as context, would make the hunk unique.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderFound {
    /// 1-based file line (before the patch) whose text the header names.
    pub line: usize,
    /// That line, in the visible form.
    pub text: String,
    /// The match it stands above (1-based, one of the listed matches).
    pub match_line: usize,
}

impl Diagnosis {
    /// Every diagnosis names a cause: when no class fits (input no parser
    /// produces, such as a line holding a line break), it is `content_differs`.
    fn total(mut self) -> Diagnosis {
        if self.causes.is_empty() {
            self.causes.push(Cause::ContentDiffers);
        }
        self
    }

    fn new(causes: Vec<Cause>, hint: String) -> Diagnosis {
        Diagnosis {
            causes,
            hint,
            line: None,
            end_line: None,
            found_at_line: None,
            matched: 0,
            expected_lines: 0,
            rows: Vec::new(),
            omitted_rows: 0,
            other_candidates: Vec::new(),
            earlier_hunk: None,
            hunk_index: None,
            hash_verified: None,
            truncated: false,
            matches: Vec::new(),
            match_count: None,
            header_found: None,
        }
    }

    /// The primary cause.
    pub fn cause(&self) -> Cause {
        self.causes
            .first()
            .copied()
            .unwrap_or(Cause::NoSimilarRegion)
    }
}

// ---------------------------------------------------------------------------
// Visible rendering

/// A line made visible: a trailing space is `·` (as is every space of a
/// line of only whitespace), a tab `→`, a carriage return `␍`, a
/// non-breaking space `⍽`; other invisible characters (Unicode spaces,
/// zero-width and format characters, controls) are `⟨U+XXXX⟩`; a byte that is
/// not UTF-8 is `⟨0xFF⟩`; a combining mark is `⟨U+0301⟩` (so NFC and NFD
/// differ visibly); and the mark characters themselves (`· → ␍ ⍽ ⟨ ⟩`),
/// when the text contains them, are written `⟨U+XXXX⟩` too, so the form is
/// unambiguous. Other characters, leading and inner spaces included, are
/// shown as they are. At most [`MAX_SHOWN_BYTES`] bytes of the line are
/// shown, around byte offset `focus` when the line is longer; a cut end is
/// `⟨…⟩`.
pub fn visible(line: &[u8], focus: usize) -> String {
    let trail_from = line
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
    let (mut from, mut to) = (0, line.len());
    if line.len() > MAX_SHOWN_BYTES {
        from = focus
            .saturating_sub(MAX_SHOWN_BYTES / 3)
            .min(line.len() - MAX_SHOWN_BYTES);
        while from > 0 && line[from] & 0xc0 == 0x80 {
            from -= 1;
        }
        to = (from + MAX_SHOWN_BYTES).min(line.len());
        while to < line.len() && line[to] & 0xc0 == 0x80 {
            to += 1;
        }
    }
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push_str("⟨…⟩");
    }
    let mut at = from;
    for chunk in line[from..to].utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                ' ' if at >= trail_from => out.push('·'),
                '\t' => out.push('→'),
                '\r' => out.push('␍'),
                '\u{a0}' => out.push('⍽'),
                c if needs_code_point(c) => out.push_str(&format!("⟨U+{:04X}⟩", c as u32)),
                c => out.push(c),
            }
            at += c.len_utf8();
        }
        for &b in chunk.invalid() {
            out.push_str(&format!("⟨0x{b:02X}⟩"));
            at += 1;
        }
    }
    if to < line.len() {
        out.push_str("⟨…⟩");
    }
    out
}

/// Characters [`visible`] writes as a code point.
fn needs_code_point(c: char) -> bool {
    matches!(c, '·' | '→' | '␍' | '⍽' | '⟨' | '⟩')
        || is_mark(c)
        || (c.is_whitespace() && c != ' ')
        || c.is_control()
        || is_invisible(c)
}

/// Zero-width and format characters that render as nothing.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}' | '\u{202a}'..='\u{202e}'
    )
}

// ---------------------------------------------------------------------------
// Keys and folding

/// The ASCII text a look-alike character stands for.
fn lookalike(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{2035}'
        | '\u{02bc}' | '\u{ff07}' => "'",
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{2036}'
        | '\u{ff02}' => "\"",
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => "-",
        '\u{2026}' => "...",
        '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => " ",
        '\u{2044}' | '\u{2215}' => "/",
        c if is_invisible(c) => "",
        _ => return None,
    })
}

/// Characters whose compatibility decomposition the loose key uses (Latin,
/// Greek and Cyrillic letters with marks, ligatures, full-width forms,
/// letter-like symbols).
fn decomposes(c: char) -> bool {
    matches!(c as u32,
        0x00a0..=0x024f | 0x0370..=0x04ff | 0x1e00..=0x1fff | 0x2100..=0x218f | 0xfb00..=0xfb4f | 0xff00..=0xffef)
}

/// Combining marks dropped by the loose key (the diacritical-mark blocks).
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036f | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff | 0xfe20..=0xfe2f)
}

/// Push the loose form of a character (see [`loose_key`]).
fn push_char(c: char, buf: &mut Vec<u8>) {
    if c.is_ascii() {
        if c > ' ' && c != '\u{7f}' {
            buf.push(c as u8);
        }
        return;
    }
    if let Some(s) = lookalike(c) {
        buf.extend(s.bytes().filter(|&b| b > b' '));
        return;
    }
    if is_mark(c) || c.is_whitespace() {
        return;
    }
    let u = c as u32;
    if (0xa0..0x250).contains(&u) {
        buf.extend_from_slice(latin_fold()[(u - 0xa0) as usize].as_bytes());
        return;
    }
    if decomposes(c) {
        let mut tmp = [0u8; 4];
        decompose_compatible(c, |d| {
            if d.is_ascii() {
                if d > ' ' {
                    buf.push(d as u8);
                }
            } else if let Some(s) = lookalike(d) {
                buf.extend(s.bytes().filter(|&b| b > b' '));
            } else if !(is_mark(d) || d.is_whitespace()) {
                buf.extend_from_slice(d.encode_utf8(&mut tmp).as_bytes());
            }
        });
        return;
    }
    let mut tmp = [0u8; 4];
    buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
}

/// The loose forms of U+00A0..U+024F (Latin-1 and Latin Extended), built
/// once from their compatibility decompositions.
fn latin_fold() -> &'static [String] {
    static TABLE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0xa0u32..0x250)
            .map(|u| {
                let mut out = String::new();
                if let Some(c) = char::from_u32(u) {
                    if let Some(s) = lookalike(c) {
                        out.extend(s.chars().filter(|&d| d > ' '));
                    } else if !c.is_whitespace() {
                        decompose_compatible(c, |d| {
                            if !(is_mark(d) || d.is_whitespace()) {
                                out.push(d);
                            }
                        });
                    }
                }
                out
            })
            .collect()
    })
}

/// A 64-bit hash of bytes (FxHash-style over 8-byte words, with a final avalanche).
fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64 ^ 0x243f_6a88_85a3_08d3;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// [`loose_key`] with a caller-owned buffer (no allocation per line).
fn loose_key_in(line: &[u8], buf: &mut Vec<u8>) -> u64 {
    compact_into(line, buf);
    hash_bytes(buf)
}

/// The loose form of a line, into `buf`.
fn compact_into(line: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    if line.is_ascii() {
        // Eight bytes at a time while none is whitespace, a control or DEL.
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let mut chunks = line.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            let low = w.wrapping_sub(0x21 * ONES) & !w & HIGH;
            let x = w ^ (0x7f * ONES);
            let del = x.wrapping_sub(ONES) & !x & HIGH;
            if low | del == 0 {
                buf.extend_from_slice(c);
            } else {
                buf.extend(c.iter().copied().filter(|&b| b > b' ' && b != 0x7f));
            }
        }
        buf.extend(
            chunks
                .remainder()
                .iter()
                .copied()
                .filter(|&b| b > b' ' && b != 0x7f),
        );
    } else {
        for chunk in line.utf8_chunks() {
            let text = chunk.valid();
            let bytes = text.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 {
                    if b > b' ' && b != 0x7f {
                        buf.push(b);
                    }
                    i += 1;
                } else if (0xe4..=0xed).contains(&b)
                    || (b == 0xe3 && bytes[i + 1..i + 3] != [0x80, 0x80])
                {
                    // U+3001..U+DFFF (kana, CJK ideographs, Yi, Hangul): no
                    // look-alike, mark, space or decomposition there (U+3000,
                    // the ideographic space, is a look-alike).
                    buf.extend_from_slice(&bytes[i..i + 3]);
                    i += 3;
                } else {
                    let c = text[i..].chars().next().unwrap_or(' ');
                    push_char(c, buf);
                    i += c.len_utf8();
                }
            }
            // Bytes that are not UTF-8 stay themselves (marked, so they
            // cannot collide with the text of a character).
            for &b in chunk.invalid() {
                buf.extend_from_slice(&[0xff, b]);
            }
        }
    }
    // A run of dashes is one dash: `--` written for `—` locates like it.
    if memchr::memchr(b'-', buf).is_some() {
        buf.dedup_by(|a, b| *a == b'-' && *b == b'-');
    }
}

/// A cheap signature of a loose form: the length and byte sum of its bytes
/// other than `-` (dash runs fold to one dash, see [`compact_into`]). For
/// an ASCII line it is computed without building the loose form
/// ([`ascii_signature`]), so most lines of a file are rejected by the
/// index at memory speed.
fn signature(compacted: &[u8]) -> u64 {
    let (mut n, mut sum) = (0u64, 0u64);
    for &b in compacted {
        let keep = u64::from(b != b'-');
        n += keep;
        sum += keep * u64::from(b);
    }
    mix(n, sum)
}

/// [`signature`] of an ASCII line's loose form, from the line itself.
fn ascii_signature(line: &[u8]) -> u64 {
    let (mut n, mut sum) = (0u64, 0u64);
    for &b in line {
        let keep = u64::from(b > b' ' && b != 0x7f && b != b'-');
        n += keep;
        sum += keep * u64::from(b);
    }
    mix(n, sum)
}

fn mix(n: u64, sum: u64) -> u64 {
    let h = (n << 40 ^ sum).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// The loose key and the signature of a line.
fn key_and_signature(line: &[u8], buf: &mut Vec<u8>) -> (u64, u64) {
    compact_into(line, buf);
    (hash_bytes(buf), signature(buf))
}

/// The loose key of a line: whitespace (and ASCII controls) removed,
/// look-alikes folded to ASCII, accents and compatibility forms decomposed
/// with their marks dropped. Two lines that differ only in invisible
/// characters have the same key.
pub fn loose_key(line: &[u8]) -> u64 {
    loose_key_in(line, &mut Vec::new())
}

/// A hasher for keys that are already hashes (or small integers, spread).
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The key of a line of only whitespace.
fn blank_key() -> u64 {
    hash_bytes(b"")
}

/// Does a line say enough to locate an edit by (at least four characters
/// that are not whitespace; `}` or `end` do not)?
fn substantive(line: &[u8]) -> bool {
    line.iter()
        .filter(|b| !b.is_ascii_whitespace())
        .take(4)
        .count()
        >= 4
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

/// A prefix copied from a read output: optional spaces, an optional `L`, 1–7
/// digits, then a tab, `→`, `:` (and one optional space) or `|` (with
/// optional spaces). Returns the rest of the line.
pub fn strip_line_number(line: &[u8]) -> Option<&[u8]> {
    let mut i = line.iter().take_while(|&&b| b == b' ').count();
    if line.get(i) == Some(&b'L') {
        i += 1;
    }
    let digits = line[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 7 {
        return None;
    }
    i += digits;
    let rest = &line[i..];
    if let Some(r) = rest.strip_prefix(b"\t") {
        return Some(r);
    }
    if let Some(r) = rest.strip_prefix("→".as_bytes()) {
        return Some(r);
    }
    if let Some(r) = rest.strip_prefix(b":") {
        return Some(r.strip_prefix(b" ").unwrap_or(r));
    }
    let spaces = rest.iter().take_while(|&&b| b == b' ').count();
    if let Some(r) = rest[spaces..].strip_prefix(b"|") {
        return Some(r.strip_prefix(b" ").unwrap_or(r));
    }
    None
}

/// The pieces of a line split at literal `\n` (backslash, n), when it has one.
fn literal_newline_pieces(line: &[u8]) -> Option<Vec<&[u8]>> {
    memchr::memmem::find(line, b"\\n")?;
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < line.len() {
        if &line[i..i + 2] == b"\\n" {
            pieces.push(&line[start..i]);
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    pieces.push(&line[start..]);
    Some(pieces)
}

// ---------------------------------------------------------------------------
// Classifying one pair of lines

/// The look-alike fold used to classify: NFKC, then quotes, dashes and
/// spaces to ASCII, zero-width characters removed.
fn fold_lookalikes(s: &str, dash_runs: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.nfkc() {
        match lookalike(c) {
            Some(r) => out.push_str(r),
            None => out.push(c),
        }
        if dash_runs && out.ends_with("--") {
            out.pop();
        }
    }
    out
}

/// A typographic dash (en, em, figure dash, horizontal bar, minus sign…):
/// when either line of a pair has one, a run of dashes folds to one hyphen,
/// so `--` or `-` written for `—` is a look-alike (C-diag-causes).
fn has_typographic_dash(s: &str) -> bool {
    s.chars()
        .any(|c| c != '-' && !c.is_ascii() && lookalike(c) == Some("-"))
}

fn ascii_ws(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// The normalisers a pair of lines is compared under; each erases one class.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Norm {
    Cr,
    Look,
    Trail,
    Indent,
    Inner,
}

const NORMS: [Norm; 5] = [Norm::Cr, Norm::Look, Norm::Trail, Norm::Indent, Norm::Inner];

fn normalise(s: &str, skip: Option<Norm>, dash_runs: bool) -> String {
    let on = |n: Norm| skip != Some(n);
    let mut t: String = if on(Norm::Cr) {
        s.strip_suffix('\r').unwrap_or(s).to_string()
    } else {
        s.to_string()
    };
    if on(Norm::Look) {
        t = fold_lookalikes(&t, dash_runs);
    }
    // Split into leading whitespace, middle, trailing whitespace.
    let lead_end = t.len() - t.trim_start_matches(ascii_ws).len();
    let trail_start = lead_end + t[lead_end..].trim_end_matches(ascii_ws).len();
    let lead = &t[..lead_end];
    let mid = &t[lead_end..trail_start];
    let trail = &t[trail_start..];
    let mut out = String::with_capacity(t.len());
    if !on(Norm::Indent) {
        out.push_str(lead);
    }
    if on(Norm::Inner) {
        // Spacing inside the line, added, removed or changed: `foo(a,b)`
        // and `foo(a, b)` differ only by it.
        out.extend(mid.chars().filter(|&c| !ascii_ws(c)));
    } else {
        out.push_str(mid);
    }
    if !on(Norm::Trail) {
        out.push_str(trail);
    }
    out
}

fn norm_cause(n: Norm) -> Cause {
    match n {
        Norm::Cr => Cause::LineEndings,
        Norm::Look => Cause::UnicodeLookalike,
        Norm::Trail => Cause::TrailingWhitespace,
        Norm::Indent => Cause::Indentation,
        Norm::Inner => Cause::InnerWhitespace,
    }
}

/// The causes that explain why `expected` (the edit's line) and `actual`
/// (the file's) differ: every class of difference whose normaliser is needed
/// for them to compare equal, or `[ContentDiffers]`.
fn classify_pair(expected: &[u8], actual: &[u8]) -> Vec<Cause> {
    if expected.len() > MAX_CLASSIFY_BYTES || actual.len() > MAX_CLASSIFY_BYTES {
        let strip = |s: &[u8]| -> Vec<u8> {
            let s = s.strip_suffix(b"\r").unwrap_or(s);
            let end = s
                .iter()
                .rposition(|&b| b != b' ' && b != b'\t')
                .map_or(0, |i| i + 1);
            s[..end].to_vec()
        };
        return if strip(expected) == strip(actual) {
            vec![Cause::TrailingWhitespace]
        } else {
            vec![Cause::ContentDiffers]
        };
    }
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let dashes = has_typographic_dash(&e) || has_typographic_dash(&a);
    let norm = |s: &str, skip: Option<Norm>| normalise(s, skip, dashes);
    if norm(&e, None) != norm(&a, None) {
        return vec![Cause::ContentDiffers];
    }
    let mut causes: Vec<Cause> = NORMS
        .iter()
        .filter(|&&n| norm(&e, Some(n)) != norm(&a, Some(n)))
        .map(|&n| norm_cause(n))
        .collect();
    if causes.is_empty() {
        // Two normalisers erase the same difference; name what changes.
        causes = NORMS
            .iter()
            .filter(|&&n| {
                let only = |s: &str| norm(s, Some(n)) != norm(s, None);
                only(&e) || only(&a)
            })
            .map(|&n| norm_cause(n))
            .take(1)
            .collect();
    }
    if causes.is_empty() {
        causes.push(Cause::ContentDiffers);
    }
    causes
}

fn describe_char(c: char) -> String {
    let shown = match c {
        ' ' => "space".to_string(),
        '\t' => "tab".to_string(),
        '\r' => "CR".to_string(),
        c if needs_code_point(c) => "an invisible character".to_string(),
        c => format!("'{c}'"),
    };
    format!("{shown} (U+{:04X})", c as u32)
}

fn leading_ws(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches(ascii_ws).len()]
}

fn trailing_ws(s: &str) -> &str {
    let t = s.trim_end_matches(ascii_ws);
    &s[t.len()..]
}

fn describe_ws(ws: &str) -> String {
    if ws.is_empty() {
        return "none".into();
    }
    let tabs = ws.chars().filter(|&c| c == '\t').count();
    let spaces = ws.chars().count() - tabs;
    let mut parts = Vec::new();
    if tabs > 0 {
        parts.push(format!("{tabs} tab{}", if tabs == 1 { "" } else { "s" }));
    }
    if spaces > 0 {
        parts.push(format!(
            "{spaces} space{}",
            if spaces == 1 { "" } else { "s" }
        ));
    }
    parts.join(" + ")
}

/// The first byte where two lines differ, at a character boundary.
fn first_diff_byte(expected: &[u8], actual: &[u8]) -> usize {
    let mut i = expected
        .iter()
        .zip(actual)
        .take_while(|(x, y)| x == y)
        .count();
    while i > 0 && expected.get(i).is_some_and(|b| b & 0xc0 == 0x80) {
        i -= 1;
    }
    i
}

/// The 1-based column (in characters) of the first difference.
fn first_diff_col(expected: &[u8], actual: &[u8]) -> usize {
    let b = first_diff_byte(expected, actual);
    String::from_utf8_lossy(&expected[..b]).chars().count() + 1
}

/// A sentence on the first difference of a pair, given its causes.
fn note_for(expected: &[u8], actual: &[u8], causes: &[Cause]) -> String {
    if expected.len() > MAX_CLASSIFY_BYTES || actual.len() > MAX_CLASSIFY_BYTES {
        // Long lines: say it from the bytes, without decoding them whole.
        let trail = |s: &[u8]| {
            let s = s.strip_suffix(b"\r").unwrap_or(s);
            let n = s
                .iter()
                .rev()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            std::str::from_utf8(&s[s.len() - n..]).map_or(String::new(), describe_ws)
        };
        return if causes.contains(&Cause::TrailingWhitespace) {
            format!(
                "trailing whitespace: the file has {}, the edit has {}",
                trail(actual),
                trail(expected)
            )
        } else {
            format!(
                "the text differs from byte {}",
                first_diff_byte(expected, actual) + 1
            )
        };
    }
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let mut notes = Vec::new();
    for cause in causes {
        let n = match cause {
            Cause::LineEndings => {
                if e.ends_with('\r') && !a.ends_with('\r') {
                    "the edit's line ends with a carriage return (␍) the file's line does not have"
                        .to_string()
                } else {
                    "the file's line ends with a carriage return (␍) the edit's line does not have"
                        .to_string()
                }
            }
            Cause::TrailingWhitespace => format!(
                "trailing whitespace: the file has {}, the edit has {}",
                describe_ws(trailing_ws(a.strip_suffix('\r').unwrap_or(&a))),
                describe_ws(trailing_ws(e.strip_suffix('\r').unwrap_or(&e)))
            ),
            Cause::Indentation => format!(
                "indentation: the file has {}, the edit has {}",
                describe_ws(leading_ws(&a)),
                describe_ws(leading_ws(&e))
            ),
            Cause::InnerWhitespace => {
                "whitespace inside the line differs (spacing between words)".to_string()
            }
            Cause::UnicodeLookalike => {
                let ec: Vec<char> = e.chars().collect();
                let ac: Vec<char> = a.chars().collect();
                let col = ec.iter().zip(&ac).take_while(|(x, y)| x == y).count();
                if e.nfc().eq(a.nfc()) {
                    format!(
                        "same text in a different Unicode normal form (NFC vs NFD) from column {}: the {} is {}",
                        col + 1,
                        if e.nfc().eq(e.chars()) { "file" } else { "edit" },
                        "decomposed (a letter followed by a combining mark)"
                    )
                } else {
                    match (ec.get(col), ac.get(col)) {
                        (Some(x), Some(y)) => format!(
                            "column {}: the edit has {}, the file has {}",
                            col + 1,
                            describe_char(*x),
                            describe_char(*y)
                        ),
                        (Some(x), None) => {
                            format!(
                                "column {}: the edit has {}, the file's line ends",
                                col + 1,
                                describe_char(*x)
                            )
                        }
                        (None, Some(y)) => {
                            format!(
                                "column {}: the file has {}, the edit's line ends",
                                col + 1,
                                describe_char(*y)
                            )
                        }
                        (None, None) => "look-alike characters differ".to_string(),
                    }
                }
            }
            Cause::ContentDiffers => {
                format!(
                    "the text differs from column {}",
                    first_diff_col(expected, actual)
                )
            }
            _ => continue,
        };
        notes.push(n);
    }
    notes.join("; ")
}

// ---------------------------------------------------------------------------
// The text diagnosed against

/// One stretch of a [`View`].
enum ViewSeg<'a> {
    /// Original lines `start..end`.
    Orig { start: usize, end: usize },
    /// Lines an earlier hunk wrote where it consumed original lines from `report`.
    Written {
        hunk: usize,
        report: usize,
        lines: Vec<&'a [u8]>,
    },
}

/// The lines an edit is diagnosed against: the original file, or the
/// post-state of the hunks before the failing one, without copying the file.
struct View<'a> {
    orig: &'a Lines<'a>,
    /// (first view index, segment)
    segs: Vec<(usize, ViewSeg<'a>)>,
    len: usize,
}

impl<'a> View<'a> {
    fn original(orig: &'a Lines<'a>) -> View<'a> {
        View {
            orig,
            segs: vec![(
                0,
                ViewSeg::Orig {
                    start: 0,
                    end: orig.len(),
                },
            )],
            len: orig.len(),
        }
    }

    fn from_segments(orig: &'a Lines<'a>, segments: Vec<Segment<'a>>) -> View<'a> {
        let mut segs = Vec::with_capacity(segments.len());
        let mut len = 0;
        for s in segments {
            match s {
                Segment::Original { start, end } => {
                    segs.push((len, ViewSeg::Orig { start, end }));
                    len += end - start;
                }
                Segment::Written {
                    hunk, start, lines, ..
                } => {
                    if lines.is_empty() {
                        continue;
                    }
                    let n = lines.len();
                    segs.push((
                        len,
                        ViewSeg::Written {
                            hunk,
                            report: start + 1,
                            lines,
                        },
                    ));
                    len += n;
                }
            }
        }
        View { orig, segs, len }
    }

    fn seg(&self, i: usize) -> (usize, &ViewSeg<'a>) {
        let k = self.segs.partition_point(|(s, _)| *s <= i) - 1;
        let (s, seg) = &self.segs[k];
        (i - s, seg)
    }

    fn line(&self, i: usize) -> &'a [u8] {
        match self.seg(i) {
            (o, ViewSeg::Orig { start, .. }) => self.orig.content(start + o),
            (o, ViewSeg::Written { lines, .. }) => lines[o],
        }
    }

    /// The 1-based line of the file before the patch that view line `i` is reported at.
    fn report(&self, i: usize) -> usize {
        match self.seg(i) {
            (o, ViewSeg::Orig { start, .. }) => start + o + 1,
            (_, ViewSeg::Written { report, .. }) => *report,
        }
    }

    fn written_by(&self, i: usize) -> Option<usize> {
        match self.seg(i) {
            (_, ViewSeg::Orig { .. }) => None,
            (_, ViewSeg::Written { hunk, .. }) => Some(*hunk),
        }
    }

    /// Call `f(index, line)` for every line, in order.
    fn for_each(&self, mut f: impl FnMut(usize, &'a [u8])) {
        for (first, seg) in &self.segs {
            match seg {
                ViewSeg::Orig { start, end } => {
                    for (o, i) in (*start..*end).enumerate() {
                        f(first + o, self.orig.content(i));
                    }
                }
                ViewSeg::Written { lines, .. } => {
                    for (o, l) in lines.iter().enumerate() {
                        f(first + o, l);
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The index: postings of the keys an edit mentions

/// Postings of wanted keys: the first `COMMON_KEY + 1` view indices, and the count.
struct Index {
    slot: FastMap<u64, usize>,
    counts: Vec<usize>,
    lists: Vec<Vec<usize>>,
}

impl Index {
    /// One pass over the view. A bitset on the key's high bits filters
    /// lines no wanted key can match; a run of lines with one key (a file
    /// of identical lines) costs no map lookup after the first.
    fn build(view: &View<'_>, wanted: impl IntoIterator<Item = (u64, u64)>) -> Index {
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

    fn count(&self, key: u64) -> usize {
        self.slot.get(&key).map_or(0, |&s| self.counts[s])
    }

    fn list(&self, key: u64) -> &[usize] {
        self.slot
            .get(&key)
            .map_or(&[], |&s| self.lists[s].as_slice())
    }
}

/// The keys an expected line may be found under, with the offset (in file
/// lines) of each from the line's own position: the line itself; without a
/// line-number prefix; each piece of a literal-`\n` split.
fn line_variants(line: &[u8]) -> Vec<(u64, u64, usize)> {
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
fn whole(lines: &[&[u8]]) -> Vec<(u64, u64)> {
    let mut buf = Vec::new();
    lines
        .iter()
        .map(|l| key_and_signature(l, &mut buf))
        .collect()
}

/// Candidate start positions (view indices) for `expected`, found by
/// voting, with their votes, and the first expected line that voted.
struct Candidates {
    ranked: Vec<(usize, usize)>,
    first_voter: Option<usize>,
}

impl Candidates {
    /// Add, for the best few candidates, the starts up to `first_voter`
    /// lines earlier: the lines before the first voting line said nothing
    /// (short, common or misquoted), and the file may have lines there the
    /// edit leaves out (a blank line after a `}`); the alignment score
    /// chooses (C-diag-causes).
    fn with_earlier_starts(mut self) -> Candidates {
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
fn candidates(index: &Index, expected: &[&[u8]]) -> Candidates {
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

// ---------------------------------------------------------------------------
// The fallback: shared character 4-grams, for content mistakes

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
fn grams(loose: &[u8]) -> impl Iterator<Item = u32> + '_ {
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
fn gram_candidates(view: &View<'_>, expected: &[&[u8]]) -> Candidates {
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

// ---------------------------------------------------------------------------
// Similarity of two lines that differ in content

/// How many cells of edit-distance tables one diagnosis may fill.
const SIMILARITY_BUDGET: usize = 2_000_000;
/// Differing middles longer than this are not measured (their distance is
/// taken as the longer one's length).
const MAX_MIDDLE: usize = 256;

/// The similarity of two loose forms, in permille (1000: equal), from
/// their edit distance (optimal string alignment: insert, delete,
/// substitute, swap two neighbours) over bytes, and whether they are
/// *close*: at least 4 bytes, and a distance of at most a quarter of the
/// longer. `budget` pays for the table; `None` once it is spent.
fn similarity(a: &[u8], b: &[u8], budget: &mut usize) -> Option<(u32, bool)> {
    let n = a.len().max(b.len());
    if n == 0 {
        return Some((1000, false));
    }
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let s = a[p..]
        .iter()
        .rev()
        .zip(b[p..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (x, y) = (&a[p..a.len() - s], &b[p..b.len() - s]);
    let d = if x.is_empty() || y.is_empty() || x.len() > MAX_MIDDLE || y.len() > MAX_MIDDLE {
        x.len().max(y.len())
    } else {
        let cells = x.len() * y.len();
        if *budget < cells {
            return None;
        }
        *budget -= cells;
        osa_distance(x, y)
    };
    let sim = ((n - d.min(n)) * 1000 / n) as u32;
    Some((sim, n >= 4 && d * 4 <= n))
}

/// How much of two loosely equal lines is byte-identical, in permille:
/// their common prefix and suffix over the longer (a cheap tiebreak).
fn raw_closeness(a: &[u8], b: &[u8]) -> u32 {
    let n = a.len().max(b.len()).max(1);
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let s = a[p..]
        .iter()
        .rev()
        .zip(b[p..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    ((p + s).min(n) * 1000 / n) as u32
}

/// Optimal-string-alignment distance, three rolling rows.
fn osa_distance(x: &[u8], y: &[u8]) -> usize {
    let w = y.len() + 1;
    let mut before: Vec<usize> = vec![0; w];
    let mut prev: Vec<usize> = (0..w).collect();
    let mut cur: Vec<usize> = vec![0; w];
    for i in 1..=x.len() {
        cur[0] = i;
        for j in 1..w {
            let cost = usize::from(x[i - 1] != y[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[w - 1]
}

// ---------------------------------------------------------------------------
// The walk: one candidate compared line by line

/// A comparison row before compaction.
struct RawRow {
    status: RowStatus,
    view: Option<usize>,
    /// How many view lines the row covers (a literal-\n row covers several).
    span: usize,
    expected: Option<usize>,
    causes: Vec<Cause>,
    /// The first difference in words.
    note: Option<String>,
}

struct Walk {
    rows: Vec<RawRow>,
    first_view: Option<usize>,
    last_view: Option<usize>,
    /// Expected lines found exactly or up to invisible characters.
    matched: usize,
    /// ... of which substantive (see [`substantive`]).
    substantive: usize,
    /// ... and of those, not common.
    informative: usize,
    exact: usize,
    /// Substantive expected lines that differ in content but are close
    /// (see [`similarity`]) to their file line: a typo.
    close: usize,
    /// The similarity (permille) summed over the rows that differ in content.
    sim: u64,
    score: i64,
}

impl Walk {
    /// Evidence that the region is the edit's, misquoted: a substantive
    /// line that is rare in the file found loosely, or a substantive line
    /// close to its file line.
    fn strong(&self) -> bool {
        self.informative > 0 || self.close > 0
    }
}

struct Walker<'v, 'a> {
    view: &'v View<'a>,
    index: &'v Index,
    keys: FastMap<usize, u64>,
    buf: Vec<u8>,
    /// Classify differing rows (the final walk); a ranking walk only scores.
    classify: bool,
    /// Rows classified so far (at most [`MAX_CLASSIFIED`]).
    classified: usize,
    /// What similarity measures may still cost ([`SIMILARITY_BUDGET`]).
    sim_budget: usize,
    /// Scratch buffers for loose forms.
    bufs: (Vec<u8>, Vec<u8>),
}

impl<'a> Walker<'_, 'a> {
    fn key(&mut self, i: usize) -> u64 {
        if let Some(&k) = self.keys.get(&i) {
            return k;
        }
        let k = loose_key_in(self.view.line(i), &mut self.buf);
        self.keys.insert(i, k);
        k
    }

    /// How similar two lines that differ in content are, within the budget.
    fn similarity(&mut self, e: &[u8], a: &[u8]) -> (u32, bool) {
        let (mut x, mut y) = std::mem::take(&mut self.bufs);
        compact_into(e, &mut x);
        compact_into(a, &mut y);
        let r = similarity(&x, &y, &mut self.sim_budget).unwrap_or((0, false));
        self.bufs = (x, y);
        r
    }

    /// Classify a loose-equal pair, within the budget.
    fn classify(&mut self, e: &[u8], a: &[u8]) -> (Vec<Cause>, Option<String>) {
        if !self.classify || self.classified >= MAX_CLASSIFIED {
            return (Vec::new(), None);
        }
        self.classified += 1;
        let causes = classify_pair(e, a);
        let note = note_for(e, a, &causes);
        (causes, Some(note))
    }

    fn walk(&mut self, expected: &[&[u8]], ekeys: &[u64], start: usize) -> Walk {
        let n = self.view.len;
        let m = expected.len();
        let blank = blank_key();
        let mut w = Walk {
            rows: Vec::new(),
            first_view: None,
            last_view: None,
            matched: 0,
            substantive: 0,
            informative: 0,
            exact: 0,
            close: 0,
            sim: 0,
            score: 0,
        };
        let (mut i, mut j) = (0usize, start);
        let touch = |w: &mut Walk, v: usize| {
            w.first_view.get_or_insert(v);
            w.last_view = Some(v);
        };
        while i < m {
            let e = expected[i];
            if j >= n {
                w.rows.push(RawRow {
                    status: RowStatus::Extra,
                    view: None,
                    span: 0,
                    expected: Some(i),
                    causes: vec![if ekeys[i] == blank {
                        Cause::BlankLineExtra
                    } else {
                        Cause::ContentDiffers
                    }],
                    note: Some("the file ends before this line".into()),
                });
                w.score -= 2;
                i += 1;
                continue;
            }
            let a = self.view.line(j);
            if e == a {
                touch(&mut w, j);
                w.rows.push(RawRow {
                    status: RowStatus::Same,
                    view: Some(j),
                    span: 1,
                    expected: Some(i),
                    causes: Vec::new(),
                    note: None,
                });
                w.matched += 1;
                w.exact += 1;
                if substantive(e) {
                    w.substantive += 1;
                    if self.index.count(ekeys[i]) <= COMMON_KEY {
                        w.informative += 1;
                    }
                }
                w.score += 3;
                i += 1;
                j += 1;
                continue;
            }
            let ka = self.key(j);
            if ekeys[i] == ka {
                touch(&mut w, j);
                let (causes, note) = self.classify(e, a);
                let content = causes == [Cause::ContentDiffers];
                w.rows.push(RawRow {
                    status: RowStatus::Differs,
                    view: Some(j),
                    span: 1,
                    expected: Some(i),
                    note,
                    causes,
                });
                if !content {
                    w.matched += 1;
                    if substantive(e) {
                        w.substantive += 1;
                        if self.index.count(ekeys[i]) <= COMMON_KEY {
                            w.informative += 1;
                        }
                    }
                }
                // Among loosely equal lines, the one whose bytes differ
                // least (a CR alone, not a CR and the indentation) is nearer.
                w.sim += u64::from(raw_closeness(e, a));
                w.score += 2;
                i += 1;
                j += 1;
                continue;
            }
            let next_e = ekeys.get(i + 1).copied();
            // The edit has a blank line the file does not.
            if ekeys[i] == blank && next_e == Some(ka) {
                w.rows.push(RawRow {
                    status: RowStatus::Extra,
                    view: Some(j),
                    span: 0,
                    expected: Some(i),
                    causes: vec![Cause::BlankLineExtra],
                    note: Some("the edit has a blank line here; the file does not".into()),
                });
                w.score += 1;
                i += 1;
                continue;
            }
            // Before the first expected line, a file line the edit does not
            // have only means the candidate starts one line later.
            if i == 0 && j + 1 < n && self.key(j + 1) == ekeys[0] {
                j += 1;
                continue;
            }
            // The file has a blank line the edit leaves out.
            if ka == blank && j + 1 < n && self.key(j + 1) == ekeys[i] {
                touch(&mut w, j);
                w.rows.push(RawRow {
                    status: RowStatus::Missing,
                    view: Some(j),
                    span: 1,
                    expected: None,
                    causes: vec![Cause::BlankLineMissing],
                    note: Some("the file has a blank line here; the edit leaves it out".into()),
                });
                w.score += 1;
                j += 1;
                continue;
            }
            // A literal \n standing for line breaks.
            if let Some(pieces) = literal_newline_pieces(e) {
                let p = pieces.len();
                if p >= 2
                    && j + p <= n
                    && pieces
                        .iter()
                        .enumerate()
                        .all(|(k, piece)| loose_key(piece) == self.key(j + k))
                {
                    touch(&mut w, j);
                    touch(&mut w, j + p - 1);
                    w.rows.push(RawRow {
                        status: RowStatus::Differs,
                        view: Some(j),
                        span: p,
                        expected: Some(i),
                        causes: vec![Cause::LiteralNewlineEscape],
                        note: Some(format!(
                            "the edit's line contains {} literal \\n; the file has {p} lines here",
                            p - 1
                        )),
                    });
                    w.matched += 1;
                    w.informative += 1;
                    w.substantive += 1;
                    w.score += 2;
                    i += 1;
                    j += p;
                    continue;
                }
            }
            // A line-number prefix copied from a read output.
            if let Some(rest) = strip_line_number(e) {
                if rest == a || loose_key(rest) == ka {
                    touch(&mut w, j);
                    let mut causes = vec![Cause::LineNumberPrefix];
                    let mut note = format!(
                        "the edit's line starts with a line-number prefix {:?}",
                        String::from_utf8_lossy(&e[..e.len() - rest.len()])
                    );
                    if rest != a {
                        let (more, more_note) = self.classify(rest, a);
                        if let Some(n) = more_note {
                            note.push_str("; ");
                            note.push_str(&n);
                        }
                        causes.extend(more);
                    }
                    w.rows.push(RawRow {
                        status: RowStatus::Differs,
                        view: Some(j),
                        span: 1,
                        expected: Some(i),
                        causes,
                        note: Some(note),
                    });
                    w.matched += 1;
                    if substantive(rest) {
                        w.substantive += 1;
                        if self.index.count(loose_key(rest)) <= COMMON_KEY {
                            w.informative += 1;
                        }
                    }
                    w.score += 2;
                    i += 1;
                    j += 1;
                    continue;
                }
            }
            // Resynchronise over one line of content the other side lacks.
            if j + 1 < n && ka != blank && self.key(j + 1) == ekeys[i] && ekeys[i] != blank {
                touch(&mut w, j);
                w.rows.push(RawRow {
                    status: RowStatus::Missing,
                    view: Some(j),
                    span: 1,
                    expected: None,
                    causes: vec![Cause::ContentDiffers],
                    note: Some("the file has this line here; the edit does not".into()),
                });
                w.score -= 1;
                j += 1;
                continue;
            }
            if next_e == Some(ka) && ka != blank {
                w.rows.push(RawRow {
                    status: RowStatus::Extra,
                    view: Some(j),
                    span: 0,
                    expected: Some(i),
                    causes: vec![Cause::ContentDiffers],
                    note: Some("the edit has this line here; the file does not".into()),
                });
                w.score -= 1;
                i += 1;
                continue;
            }
            touch(&mut w, j);
            let note = self
                .classify
                .then(|| note_for(e, a, &[Cause::ContentDiffers]));
            w.rows.push(RawRow {
                status: RowStatus::Differs,
                view: Some(j),
                span: 1,
                expected: Some(i),
                causes: vec![Cause::ContentDiffers],
                note,
            });
            let (sim, close) = self.similarity(e, a);
            w.sim += u64::from(sim);
            if close && substantive(e) {
                w.close += 1;
                w.score += 1;
            } else {
                w.score -= 1;
            }
            i += 1;
            j += 1;
        }
        w
    }
}

/// Order causes: `content_differs` first when any row has it (copying the
/// invisible characters right would not be enough: the model must re-read
/// the lines), then by how many rows each explains, ties by [`Cause::ALL`]
/// (C-diag-causes).
fn rank_causes(counts: &BTreeMap<Cause, usize>) -> Vec<Cause> {
    let mut v: Vec<(Cause, usize)> = counts.iter().map(|(c, n)| (*c, *n)).collect();
    let pos = |c: Cause| {
        Cause::ALL
            .iter()
            .position(|&x| x == c)
            .unwrap_or(usize::MAX)
    };
    let content = |c: Cause| c != Cause::ContentDiffers;
    v.sort_by(|a, b| {
        content(a.0)
            .cmp(&content(b.0))
            .then(b.1.cmp(&a.1))
            .then(pos(a.0).cmp(&pos(b.0)))
    });
    v.into_iter().map(|(c, _)| c).collect()
}

fn row_causes(rows: &[RawRow]) -> BTreeMap<Cause, usize> {
    let mut counts = BTreeMap::new();
    for r in rows {
        for c in &r.causes {
            *counts.entry(*c).or_insert(0) += 1;
        }
    }
    counts
}

/// Turn raw rows into reported rows: equal lines next to a difference are
/// kept (one on each side), longer runs become one `skipped` row; at most
/// [`MAX_ROWS`] rows.
fn compact(view: &View<'_>, expected: &[&[u8]], raw: &[RawRow]) -> (Vec<Row>, usize) {
    let interesting: Vec<bool> = raw.iter().map(|r| r.status != RowStatus::Same).collect();
    let next_to = |k: usize| {
        interesting[k] || (k > 0 && interesting[k - 1]) || (k + 1 < raw.len() && interesting[k + 1])
    };
    // A lone equal line between two shown ones is shown, not skipped.
    let near =
        |k: usize| next_to(k) || (k > 0 && k + 1 < raw.len() && next_to(k - 1) && next_to(k + 1));
    let mut out: Vec<Row> = Vec::new();
    let mut k = 0;
    while k < raw.len() {
        let run = raw[k..]
            .iter()
            .enumerate()
            .take_while(|&(o, _)| !near(k + o))
            .count();
        // A run of one is shown: folding it saves nothing.
        if run >= 2 {
            let from = k;
            k += run;
            out.push(Row {
                status: RowStatus::Skipped,
                line: raw[from].view.map(|v| view.report(v)),
                expected: None,
                actual: None,
                causes: Vec::new(),
                note: None,
                count: k - from,
                written_by: None,
            });
            continue;
        }
        let r = &raw[k];
        let e = r.expected.map(|i| expected[i]);
        let a: Option<std::borrow::Cow<'_, [u8]>> = match (r.status, r.view) {
            (RowStatus::Extra, _) | (_, None) => None,
            (_, Some(v)) if r.span > 1 => {
                let parts: Vec<&[u8]> = (v..v + r.span).map(|x| view.line(x)).collect();
                Some(parts.join(&b"\\n"[..]).into())
            }
            (_, Some(v)) => Some(view.line(v).into()),
        };
        let focus = match (e, &a) {
            (Some(e), Some(a)) => first_diff_byte(e, a),
            _ => 0,
        };
        out.push(Row {
            status: r.status,
            line: r.view.map(|v| view.report(v)),
            expected: e.map(|e| visible(e, focus)),
            actual: a.as_deref().map(|a| visible(a, focus)),
            causes: r.causes.clone(),
            note: r.note.clone(),
            count: 0,
            written_by: r.view.and_then(|v| view.written_by(v)),
        });
        k += 1;
    }
    let omitted = out.len().saturating_sub(MAX_ROWS);
    out.truncate(MAX_ROWS);
    (out, omitted)
}

// ---------------------------------------------------------------------------
// Locating an edit

/// The result of locating `expected` in a view.
struct Located {
    walk: Walk,
    others: Vec<usize>,
}

/// Exact occurrences of `lines` in the view (view indices), at most `limit`.
fn exact_occurrences(view: &View<'_>, index: &Index, lines: &[&[u8]], limit: usize) -> Vec<usize> {
    if lines.is_empty() {
        return Vec::new();
    }
    let blank = blank_key();
    let keys: Vec<u64> = lines.iter().map(|l| loose_key(l)).collect();
    let Some(anchor) = (0..lines.len())
        .filter(|&k| keys[k] != blank)
        .min_by_key(|&k| index.count(keys[k]))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &p in index.list(keys[anchor]) {
        if p < anchor || p - anchor + lines.len() > view.len {
            continue;
        }
        let s = p - anchor;
        if lines
            .iter()
            .enumerate()
            .all(|(k, l)| view.line(s + k) == *l)
        {
            out.push(s);
            if out.len() >= limit {
                break;
            }
        }
    }
    out
}

fn locate(view: &View<'_>, index: &Index, expected: &[&[u8]]) -> Option<Located> {
    let ekeys: Vec<u64> = expected.iter().map(|l| loose_key(l)).collect();
    let mut walker = Walker {
        view,
        index,
        keys: FastMap::default(),
        buf: Vec::new(),
        classify: false,
        classified: 0,
        sim_budget: SIMILARITY_BUDGET,
        bufs: Default::default(),
    };
    let mut walks: Vec<(Walk, usize, usize)> = Vec::new();
    let walk_all = |walker: &mut Walker<'_, '_>, c: Candidates, walks: &mut Vec<_>| {
        for (start, votes) in c.with_earlier_starts().ranked {
            if !walks.iter().any(|(_, _, s)| *s == start) {
                walks.push((walker.walk(expected, &ekeys, start), votes, start));
            }
        }
    };
    walk_all(&mut walker, candidates(index, expected), &mut walks);
    // No rare substantive line found, even loosely, and no candidate that
    // has every line: a content mistake has nothing to anchor on (a close
    // line alone may be a near-duplicate elsewhere); look for lines sharing
    // the edit's 4-grams too.
    if !walks
        .iter()
        .any(|(w, _, _)| w.informative > 0 || w.matched == expected.len())
    {
        walk_all(&mut walker, gram_candidates(view, expected), &mut walks);
    }
    // Best first: alignment score, then similarity (among near-duplicate
    // regions the closer wins), votes, and the earlier start.
    walks.sort_by(|a, b| {
        b.0.score
            .cmp(&a.0.score)
            .then(b.0.sim.cmp(&a.0.sim))
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    // Similar means strong evidence (see [`Walk::strong`]); failing that,
    // at least half the expected lines found loosely, a substantive one
    // among them if the edit has any (an edit of short lines, or of lines
    // each common in the file).
    let any_strong = walks.iter().any(|(w, _, _)| w.strong());
    let subst = expected.iter().any(|l| substantive(l));
    let mut good = walks.into_iter().filter(|(w, _, _)| {
        if any_strong {
            w.strong()
        } else {
            w.matched > 0 && 2 * w.matched >= expected.len() && (!subst || w.substantive > 0)
        }
    });
    let (_, _, best_start) = good.next()?;
    walker.classify = true;
    let best = walker.walk(expected, &ekeys, best_start);
    let mut others: Vec<usize> = Vec::new();
    for (w, _, _) in good {
        if let (Some(f), Some(l)) = (w.first_view, w.last_view) {
            let line = view.report(f);
            // A candidate overlapping the chosen region is the same place.
            let same = match (best.first_view, best.last_view) {
                (Some(bf), Some(bl)) => f <= bl + 2 && l + 2 >= bf,
                _ => false,
            };
            if !same && !others.contains(&line) {
                others.push(line);
            }
        }
    }
    others.truncate(4);
    Some(Located { walk: best, others })
}

/// Fill a diagnosis from a located walk.
fn from_walk(view: &View<'_>, expected: &[&[u8]], located: &Located, d: &mut Diagnosis) {
    let w = &located.walk;
    // The line where the edit's first line is: the first row about expected
    // line 0 that has a file line, else the first file line of the region.
    let first = w
        .rows
        .iter()
        .find(|r| r.expected == Some(0) && r.status != RowStatus::Extra && r.view.is_some())
        .and_then(|r| r.view)
        .or_else(|| {
            w.rows
                .iter()
                .find(|r| r.status != RowStatus::Missing && r.view.is_some())
                .and_then(|r| r.view)
        })
        .or(w.first_view);
    d.line = first.map(|v| view.report(v));
    d.end_line = w.last_view.map(|v| view.report(v));
    d.matched = w.matched;
    let (rows, omitted) = compact(view, expected, &w.rows);
    d.rows = rows;
    d.omitted_rows = omitted;
    d.other_candidates = located.others.clone();
}

// ---------------------------------------------------------------------------
// apply_patch: a hunk whose context was not found

/// The old side of a hunk, capped at [`MAX_EXPECTED_LINES`].
fn old_side<'h>(hunk: &Hunk<'h>) -> (Vec<&'h [u8]>, bool) {
    let all = hunk.old_lines().count();
    let lines = hunk
        .old_lines()
        .take(MAX_EXPECTED_LINES)
        .map(|l| l.text.as_bytes())
        .collect();
    (lines, all > MAX_EXPECTED_LINES)
}

fn new_side<'h>(hunk: &Hunk<'h>) -> Vec<&'h [u8]> {
    hunk.new_lines()
        .take(MAX_EXPECTED_LINES)
        .map(|l| l.text.as_bytes())
        .collect()
}

/// Is the new side distinctive enough that finding it means "already applied"?
fn new_side_is_evidence(hunk: &Hunk<'_>) -> bool {
    let added = hunk
        .lines
        .iter()
        .any(|l| l.kind == LineKind::Add && !is_blank(l.text.as_bytes()));
    let removed = hunk.lines.iter().any(|l| l.kind == LineKind::Remove);
    let non_blank = hunk
        .new_lines()
        .filter(|l| !is_blank(l.text.as_bytes()))
        .count();
    added || (removed && non_blank >= 2)
}

fn anchored_at_end(hunk: &Hunk<'_>) -> bool {
    hunk.end_of_file || hunk.lines.iter().any(|l| l.no_newline)
}

fn old_no_newline(hunk: &Hunk<'_>) -> bool {
    hunk.lines
        .iter()
        .any(|l| l.no_newline && l.kind != LineKind::Add)
}

fn span_text(from: Option<usize>, to: Option<usize>) -> String {
    match (from, to) {
        (Some(a), Some(b)) if b > a => format!("lines {a}–{b}"),
        (Some(a), _) => format!("line {a}"),
        _ => "the file".into(),
    }
}

/// Where in the original file the old lines of `expected` occur exactly,
/// overlapping what an earlier hunk consumed: (line index, hunk).
fn under_earlier_hunk(
    orig: &Lines<'_>,
    segments: &[Segment<'_>],
    expected: &[&[u8]],
) -> Option<(usize, usize)> {
    let m = expected.len();
    let n = orig.len();
    if m == 0 || m > n {
        return None;
    }
    let mut budget = EARLIER_HUNK_BUDGET;
    for seg in segments {
        let Segment::Written {
            hunk, start, end, ..
        } = seg
        else {
            continue;
        };
        if start == end {
            continue;
        }
        let from = start.saturating_sub(m - 1);
        let to = (*end).min(n - m + 1);
        for p in from..to {
            let mut ok = true;
            for (k, l) in expected.iter().enumerate() {
                if budget == 0 {
                    return None;
                }
                budget -= 1;
                if orig.content(p + k) != *l {
                    ok = false;
                    break;
                }
            }
            if ok {
                return Some((p, *hunk));
            }
        }
    }
    None
}

/// Diagnose hunk `index` of a section whose context was not found.
/// `original` is the file before the patch; `hash_verified` says whether an
/// expected hash was given for the file (and, since the call got this far,
/// matched).
pub fn hunk_not_found(
    original: &[u8],
    hunks: &[Hunk<'_>],
    index: usize,
    hash_verified: bool,
) -> Diagnosis {
    let mut d = diagnose_hunk(original, hunks, index).total();
    if hash_verified {
        d.hash_verified = Some(true);
        if d.cause() == Cause::ContentDiffers {
            d.hint.push_str(
                " The file's hash matches the one given, so the file is the one the patch was written against: the hunk misquotes it.",
            );
        }
    }
    d
}

fn diagnose_hunk(original: &[u8], hunks: &[Hunk<'_>], index: usize) -> Diagnosis {
    let Some(hunk) = hunks.get(index) else {
        return Diagnosis::new(vec![Cause::NoSimilarRegion], "no such hunk".into());
    };
    let orig = Lines::new(original);
    let segments = if index > 0 {
        post_state(original, &hunks[..index])
    } else {
        None
    };
    let view = match &segments {
        Some(s) => View::from_segments(&orig, s.clone()),
        None => View::original(&orig),
    };
    let (expected, truncated) = old_side(hunk);
    let new = new_side(hunk);
    // A new side longer than the cap cannot be verified whole.
    let evidence = new_side_is_evidence(hunk) && hunk.new_lines().count() <= MAX_EXPECTED_LINES;
    let mut wanted: Vec<(u64, u64)> = Vec::with_capacity(expected.len() * 2 + new.len());
    for l in &expected {
        wanted.extend(line_variants(l).into_iter().map(|(k, sig, _)| (k, sig)));
    }
    if evidence {
        wanted.extend(whole(&new));
    }
    let index_ = Index::build(&view, wanted);
    let mut d = Diagnosis::new(Vec::new(), String::new());
    d.expected_lines = hunk.old_lines().count();
    d.truncated = truncated;

    // A replayed edit: the new side is there, the old side is not.
    if evidence {
        if let Some(&at) = exact_occurrences(&view, &index_, &new, 1).first() {
            d.causes = vec![Cause::AlreadyApplied];
            d.line = Some(view.report(at));
            d.end_line = Some(view.report(at + new.len().max(1) - 1));
            d.matched = 0;
            d.hint = format!(
                "the hunk's result (its context and added lines) is already in the file at {}, and its old lines are not: this edit has already been applied; do not send it again",
                span_text(d.line, d.end_line)
            );
            return d;
        }
    }
    // The old lines are in the original, under an earlier hunk's output.
    if let Some(segs) = &segments {
        if index > 0 {
            if let Some((p, h)) = under_earlier_hunk(&orig, segs, &expected) {
                d.causes = vec![Cause::ChangedByEarlierHunk];
                d.line = Some(p + 1);
                d.end_line = Some(p + expected.len());
                d.matched = expected.len();
                d.earlier_hunk = Some(h);
                let applied_at = segs.iter().find_map(|s| match s {
                    Segment::Written { hunk, start, .. } if *hunk == h => Some(start + 1),
                    _ => None,
                });
                d.hint = format!(
                    "the hunk's old lines are in the original file at {}, but hunk {h} of this section (applied at line {}) changed them; a hunk is matched against the file as the earlier hunks leave it: merge the two hunks into one, or write this hunk's lines as hunk {h} leaves them",
                    span_text(d.line, d.end_line),
                    applied_at.unwrap_or(p + 1)
                );
                return d;
            }
        }
    }
    if expected.is_empty() {
        d.causes = vec![Cause::NoContext];
        d.hint = "the hunk has no context or removed lines, so it can only append at the end of the file: add context lines, or end it with *** End of File".into();
        return d;
    }
    let Some(located) = locate(&view, &index_, &expected) else {
        d.causes = vec![Cause::NoSimilarRegion];
        d.hint = no_similar_hint(&index_, &expected, "the hunk's old lines");
        return d;
    };
    from_walk(&view, &expected, &located, &mut d);
    let counts = row_causes(&located.walk.rows);
    d.causes = rank_causes(&counts);
    if d.causes.is_empty() {
        // Every compared line is equal: the anchoring failed, or the
        // difference lies beyond the compared part.
        let end_view = located.walk.last_view.map_or(0, |v| v + 1);
        if old_no_newline(hunk) && orig.ends_with_newline() {
            d.causes.push(Cause::FinalNewline);
        } else if anchored_at_end(hunk) && end_view < view.len {
            d.causes.push(Cause::NotAtEndOfFile);
        } else {
            d.causes.push(Cause::ContentDiffers);
        }
    } else if old_no_newline(hunk) && orig.ends_with_newline() {
        d.causes.push(Cause::FinalNewline);
    }
    d.hint = hint_for(&d, &located.walk);
    d
}

/// The hint of `no_similar_region`: "check the path" only when no
/// substantive line of the edit is in the file at all, even loosely.
fn no_similar_hint(index: &Index, expected: &[&[u8]], what: &str) -> String {
    let found = expected.iter().filter(|l| substantive(l)).find_map(|l| {
        let n = index.count(loose_key(l));
        (n > 0).then_some((l, n))
    });
    match found {
        None => format!(
            "no region of the file resembles {what}, even ignoring whitespace and look-alike characters: check the path, and re-read the file before writing the edit"
        ),
        Some((l, n)) => format!(
            "no region of the file has {what} together, even loosely, though some occur on their own (e.g. {:?}, {n} time{}): re-read the region you mean and copy it exactly, with context lines that occur only there",
            visible(l, 0),
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The hint sentence for a located diagnosis.
fn hint_for(d: &Diagnosis, w: &Walk) -> String {
    let region = span_text(d.line, d.end_line);
    let lines_with = |c: Cause| -> String {
        let mut ls: Vec<String> = d
            .rows
            .iter()
            .filter(|r| r.causes.contains(&c))
            .filter_map(|r| r.line.map(|l| l.to_string()))
            .collect();
        ls.dedup();
        if ls.len() > 6 {
            ls.truncate(6);
            ls.push("…".into());
        }
        ls.join(", ")
    };
    let first_note = |c: Cause| -> String {
        w.rows
            .iter()
            .find(|r| r.causes.contains(&c))
            .and_then(|r| r.note.clone())
            .unwrap_or_default()
    };
    let at = |c: Cause| {
        let l = lines_with(c);
        if l.is_empty() {
            String::new()
        } else {
            format!(" (file line {l})")
        }
    };
    let what = match d.cause() {
        Cause::LineNumberPrefix => format!(
            "the hunk's lines start with line numbers copied from a read output; remove the prefixes and send the lines as they are in the file ({region})"
        ),
        Cause::LiteralNewlineEscape => format!(
            "a hunk line contains a literal \\n where the file has separate lines{}; write each line of the file on its own hunk line",
            at(Cause::LiteralNewlineEscape)
        ),
        Cause::LineEndings => format!(
            "{}{}; send the lines without carriage returns (the engine matches LF hunks to CRLF files)",
            first_note(Cause::LineEndings),
            at(Cause::LineEndings)
        ),
        Cause::UnicodeLookalike => format!(
            "look-alike characters differ{}: {}; copy the characters exactly",
            at(Cause::UnicodeLookalike),
            first_note(Cause::UnicodeLookalike)
        ),
        Cause::Indentation => format!(
            "{}{}; copy the indentation exactly",
            first_note(Cause::Indentation),
            at(Cause::Indentation)
        ),
        Cause::TrailingWhitespace => format!(
            "{}{}; copy the lines exactly, trailing whitespace included",
            first_note(Cause::TrailingWhitespace),
            at(Cause::TrailingWhitespace)
        ),
        Cause::InnerWhitespace => format!(
            "the spacing inside a line differs{}; copy the lines exactly",
            at(Cause::InnerWhitespace)
        ),
        Cause::BlankLineMissing => format!(
            "the file has a blank line{} that the hunk leaves out; add it as a context line (a single space)",
            at(Cause::BlankLineMissing)
        ),
        Cause::BlankLineExtra => format!(
            "the hunk has a blank line that is not in the file near{}; remove it",
            at(Cause::BlankLineExtra)
        ),
        Cause::NotAtEndOfFile => format!(
            "the lines match at {region}, but the hunk is anchored at the end of the file (*** End of File or a no-newline marker) and they are not its last lines; drop the anchor"
        ),
        Cause::FinalNewline => format!(
            "the lines are at {region}, but the hunk says the old last line has no final newline (\\ No newline at end of file) and the file ends with one; drop the marker from the old side"
        ),
        _ => format!(
            "the nearest region ({region}) differs in content{}; re-read those lines and copy them exactly",
            at(Cause::ContentDiffers)
        ),
    };
    let mut hint = what;
    if d.causes.len() > 1 {
        hint.push_str(&format!(
            ". Also: {}",
            d.causes[1..]
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if d.truncated {
        hint.push_str(&format!(
            ". Only the hunk's first {MAX_EXPECTED_LINES} old lines were compared"
        ));
    }
    hint
}

// ---------------------------------------------------------------------------
// apply_patch: a hunk that matches more than once

/// Diagnose hunk `index`, whose old lines occur more than once: every match
/// (up to [`MAX_MATCHES`]) and the nearest lines that tell it apart.
/// `total` is how many matches the matcher counted
/// ([`crate::matching::HunkFailure::MultipleMatches`]).
pub fn multiple_matches(
    original: &[u8],
    hunks: &[Hunk<'_>],
    index: usize,
    total: usize,
) -> Diagnosis {
    multiple_matches_inner(original, hunks, index, total).total()
}

fn multiple_matches_inner(
    original: &[u8],
    hunks: &[Hunk<'_>],
    index: usize,
    total: usize,
) -> Diagnosis {
    let Some(hunk) = hunks.get(index) else {
        return Diagnosis::new(vec![Cause::AmbiguousContext], "no such hunk".into());
    };
    let (expected, truncated) = old_side(hunk);
    if expected.is_empty() {
        let mut d = Diagnosis::new(
            vec![Cause::NoContext],
            "the hunk has no context or removed lines, so it fits anywhere: add context lines that occur once, or end it with *** End of File to append".into(),
        );
        d.truncated = truncated;
        return d;
    }
    let orig = Lines::new(original);
    let segments = if index > 0 {
        post_state(original, &hunks[..index])
    } else {
        None
    };
    let view = match segments {
        Some(s) => View::from_segments(&orig, s),
        None => View::original(&orig),
    };
    let index_ = Index::build(&view, whole(&expected));
    let mut starts = exact_occurrences(&view, &index_, &expected, MAX_MATCHES);
    if anchored_at_end(hunk) {
        starts.retain(|&s| s + expected.len() == view.len);
    }
    let m = expected.len();
    let mut d = Diagnosis::new(vec![Cause::AmbiguousContext], String::new());
    d.expected_lines = hunk.old_lines().count();
    d.truncated = truncated;
    let text_at = |i: Option<usize>| i.map(|i| view.line(i));
    for (k, &s) in starts.iter().enumerate() {
        let mut site = MatchSite {
            line: view.report(s),
            above: None,
            below: None,
        };
        for dist in 1..=MAX_DISTINGUISH_DISTANCE {
            let at = |x: usize| x.checked_sub(dist);
            let mine = text_at(at(s));
            let Some(my) = mine else { break };
            let unique = starts
                .iter()
                .enumerate()
                .all(|(l, &o)| l == k || text_at(at(o)) != Some(my));
            if unique {
                let i = s - dist;
                site.above = Some((view.report(i), visible(my, 0)));
                break;
            }
        }
        for dist in 1..=MAX_DISTINGUISH_DISTANCE {
            let at = |x: usize| Some(x + m - 1 + dist).filter(|&i| i < view.len);
            let Some(my) = text_at(at(s)) else { break };
            let unique = starts
                .iter()
                .enumerate()
                .all(|(l, &o)| l == k || text_at(at(o)) != Some(my));
            if unique {
                let i = s + m - 1 + dist;
                site.below = Some((view.report(i), visible(my, 0)));
                break;
            }
        }
        d.matches.push(site);
    }
    d.line = d.matches.first().map(|s| s.line);
    let total = total.max(d.matches.len());
    d.match_count = Some(total);
    let more = match total.saturating_sub(d.matches.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let example = d.matches.iter().find_map(|s| {
        s.above
            .as_ref()
            .map(|(l, t)| format!("line {l} ({t}) above the match at line {}", s.line))
            .or_else(|| {
                s.below
                    .as_ref()
                    .map(|(l, t)| format!("line {l} ({t}) below the match at line {}", s.line))
            })
    });
    let at_lines = d
        .matches
        .iter()
        .map(|s| s.line.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // With matches left unlisted, a header seen above one listed match may
    // as well stand above an unlisted one: no claim then.
    if total == starts.len() {
        d.header_found = header_found(&view, hunk, &starts);
    }
    d.hint = match (&d.header_found, example) {
        (Some(h), _) => format!(
            "the hunk's old lines occur {total} times, at lines {at_lines}{more}; its @@ header names line {} ({}) above the match at line {}: extend the hunk with context lines up to line {} to choose that match",
            h.line, h.text, h.match_line, h.line
        ),
        (None, Some(e)) => format!(
            "the hunk's old lines occur {total} times, at lines {at_lines}{more}; extend the hunk with context lines up to a line that tells the intended place apart, e.g. {e}"
        ),
        (None, None) => format!("the hunk's old lines occur {total} times and no nearby line tells the matches apart: add more context, or anchor the hunk with *** End of File"),
    };
    let headers: Vec<&str> = hunk
        .headers
        .iter()
        .map(|h| h.trim())
        .filter(|h| !h.is_empty())
        .collect();
    if !headers.is_empty() {
        let quoted: Vec<String> = headers
            .iter()
            .map(|h| visible(h.as_bytes(), 0))
            .map(|h| format!("\"{h}\""))
            .collect();
        d.hint = format!(
            "the text after @@ ({}) is informational: matching uses the context and removed lines only, so it does not choose among the matches; {}",
            quoted.join(", "),
            d.hint
        );
    }
    d
}

/// The first of the hunk's last [`MAX_HEADERS_SOUGHT`] non-empty header
/// texts (the innermost first: `@@ def bar` after `@@ class Foo`) found, as
/// a line's start up to its indentation, within [`MAX_DISTINGUISH_DISTANCE`]
/// lines above exactly one of the matches `starts`, at a distance where
/// every other match has a different line. Cost: headers × matches ×
/// distance line comparisons, all capped.
fn header_found(view: &View<'_>, hunk: &Hunk<'_>, starts: &[usize]) -> Option<HeaderFound> {
    let names = |line: &[u8], header: &[u8]| line.trim_ascii().starts_with(header);
    let sought = hunk
        .headers
        .iter()
        .rev()
        .map(|h| h.trim().as_bytes())
        .filter(|h| !h.is_empty())
        .take(MAX_HEADERS_SOUGHT);
    for header in sought {
        // The nearest line above each match that the header names.
        let found: Vec<(usize, usize)> = starts
            .iter()
            .enumerate()
            .filter_map(|(k, &s)| {
                (1..=MAX_DISTINGUISH_DISTANCE.min(s))
                    .find(|&dist| names(view.line(s - dist), header))
                    .map(|dist| (k, dist))
            })
            .collect();
        let [(k, dist)] = found[..] else {
            continue;
        };
        let s = starts[k];
        let mine = view.line(s - dist);
        let apart = starts
            .iter()
            .enumerate()
            .all(|(l, &o)| l == k || o.checked_sub(dist).map(|i| view.line(i)) != Some(mine));
        if apart {
            return Some(HeaderFound {
                line: view.report(s - dist),
                text: visible(mine, 0),
                match_line: view.report(s),
            });
        }
    }
    None
}

// ---------------------------------------------------------------------------
// apply_patch: the file changed (a hash was given and does not match)

/// Diagnose an `Update` section whose expected hash does not match the
/// file: `Some` with `file_changed` first, then what the first hunk that no
/// longer applies to the current file shows (`hunk_index`); `None` when
/// there are no hunks.
pub fn stale_file(current: &[u8], hunks: &[Hunk<'_>]) -> Option<Diagnosis> {
    stale_file_inner(current, hunks).map(Diagnosis::total)
}

fn stale_file_inner(current: &[u8], hunks: &[Hunk<'_>]) -> Option<Diagnosis> {
    if hunks.is_empty() {
        return None;
    }
    let failing = crate::matching::apply_hunks(current, hunks).err();
    let Some(err) = failing else {
        let mut d = Diagnosis::new(
            vec![Cause::FileChanged],
            "the file changed since the patch was written (its SHA-256 is not the one given), though every hunk still matches it: re-read the file, check the hunks still mean what you want, and send its current hash".into(),
        );
        d.expected_lines = 0;
        return Some(d);
    };
    let k = err.hunk_index;
    let mut d = match err.failure {
        crate::matching::HunkFailure::MultipleMatches { count: total, .. } => {
            multiple_matches(current, hunks, k, total)
        }
        _ => diagnose_hunk(current, hunks, k),
    };
    d.causes.retain(|&c| c != Cause::FileChanged);
    d.causes.insert(0, Cause::FileChanged);
    d.hunk_index = Some(k);
    d.hint = format!(
        "the file changed since the patch was written (its SHA-256 is not the one given); in the file as it is now, hunk {k}: {}",
        d.hint
    );
    Some(d)
}

// ---------------------------------------------------------------------------
// workspace_write_patch: expectedOriginalLines do not match

/// Diagnose a replace/delete whose `expectedOriginalLines` differ from lines
/// `start_line..` (1-based) of `original`. `new_lines` are the change's
/// replacement lines (empty for a delete), used to recognise a replay.
pub fn line_mismatch(
    original: &[u8],
    start_line: usize,
    expected: &[String],
    new_lines: &[String],
) -> Diagnosis {
    line_mismatch_inner(original, start_line, expected, new_lines).total()
}

fn line_mismatch_inner(
    original: &[u8],
    start_line: usize,
    expected: &[String],
    new_lines: &[String],
) -> Diagnosis {
    let orig = Lines::new(original);
    let view = View::original(&orig);
    let truncated = expected.len() > MAX_EXPECTED_LINES;
    let exp: Vec<&[u8]> = expected
        .iter()
        .take(MAX_EXPECTED_LINES)
        .map(|s| s.as_bytes())
        .collect();
    let new: Vec<&[u8]> = new_lines
        .iter()
        .take(MAX_EXPECTED_LINES)
        .map(|s| s.as_bytes())
        .collect();
    let mut d = Diagnosis::new(Vec::new(), String::new());
    d.expected_lines = expected.len();
    d.truncated = truncated;
    let start = start_line.saturating_sub(1);

    // The stated range, line by line.
    let mut direct = Vec::new();
    let mut direct_counts: BTreeMap<Cause, usize> = BTreeMap::new();
    let mut matched = 0;
    for (k, e) in exp.iter().enumerate() {
        let i = start + k;
        if i >= orig.len() {
            break;
        }
        let a = orig.content(i);
        if *e == a {
            matched += 1;
            direct.push(RawRow {
                status: RowStatus::Same,
                view: Some(i),
                span: 1,
                expected: Some(k),
                causes: Vec::new(),
                note: None,
            });
            continue;
        }
        let mut causes = classify_pair(e, a);
        let mut note = note_for(e, a, &causes);
        if causes == [Cause::ContentDiffers] {
            if let Some(rest) = strip_line_number(e) {
                if rest == a || loose_key(rest) == loose_key(a) {
                    causes = vec![Cause::LineNumberPrefix];
                    note = format!(
                        "the expected line starts with a line-number prefix {:?}",
                        String::from_utf8_lossy(&e[..e.len() - rest.len()])
                    );
                    if rest != a {
                        let more = classify_pair(rest, a);
                        note.push_str("; ");
                        note.push_str(&note_for(rest, a, &more));
                        causes.extend(more);
                    }
                }
            }
        }
        if causes != [Cause::ContentDiffers] {
            matched += 1;
        }
        for c in &causes {
            *direct_counts.entry(*c).or_insert(0) += 1;
        }
        direct.push(RawRow {
            status: RowStatus::Differs,
            view: Some(i),
            span: 1,
            expected: Some(k),
            causes,
            note: Some(note),
        });
    }
    let explained =
        !direct_counts.is_empty() && !direct_counts.contains_key(&Cause::ContentDiffers);

    let mut wanted: Vec<(u64, u64)> = Vec::new();
    for l in &exp {
        wanted.extend(line_variants(l).into_iter().map(|(k, sig, _)| (k, sig)));
    }
    wanted.extend(whole(&new));
    let index = Index::build(&view, wanted);

    // The lines, exactly, elsewhere: the file shifted (not asserted for an
    // edit longer than the cap, which cannot be verified whole).
    if !explained && !truncated && new_lines.len() <= MAX_EXPECTED_LINES {
        let found = exact_occurrences(&view, &index, &exp, MAX_MATCHES)
            .into_iter()
            .min_by_key(|&s| s.abs_diff(start));
        if let Some(s) = found {
            d.causes = vec![Cause::LinesShifted];
            d.found_at_line = Some(s + 1);
            d.line = Some(s + 1);
            d.end_line = Some(s + exp.len());
            d.matched = exp.len();
            let delta = s as i64 - start as i64;
            d.hint = format!(
                "the expected lines are at {} ({} {} line{} from startLine {start_line}): the file shifted; use startLine {} and endLine {}",
                span_text(d.line, d.end_line),
                if delta > 0 { "moved down" } else { "moved up" },
                delta.unsigned_abs(),
                if delta.unsigned_abs() == 1 { "" } else { "s" },
                s + 1,
                s + exp.len()
            );
            let (rows, omitted) = compact(&view, &exp, &direct);
            d.rows = rows;
            d.omitted_rows = omitted;
            return d;
        }
        // A replay: the replacement is there and the expected lines are not.
        let replay = !new.is_empty() && new.iter().any(|l| !is_blank(l)) && new != exp;
        if replay {
            let at = exact_occurrences(&view, &index, &new, MAX_MATCHES)
                .into_iter()
                .min_by_key(|&s| s.abs_diff(start));
            if let Some(s) = at {
                d.causes = vec![Cause::AlreadyApplied];
                d.line = Some(s + 1);
                d.end_line = Some(s + new.len());
                d.hint = format!(
                    "the change's newLines are already in the file at {} and its expectedOriginalLines are not: this change has already been applied; do not send it again",
                    span_text(d.line, d.end_line)
                );
                let (rows, omitted) = compact(&view, &exp, &direct);
                d.rows = rows;
                d.omitted_rows = omitted;
                return d;
            }
        }
    }
    if explained {
        d.line = Some(start_line);
        d.end_line = Some(start + direct.len());
        d.matched = matched;
        d.causes = rank_causes(&direct_counts);
        let (rows, omitted) = compact(&view, &exp, &direct);
        d.rows = rows;
        d.omitted_rows = omitted;
        let w = Walk {
            rows: direct,
            first_view: None,
            last_view: None,
            matched,
            substantive: 0,
            informative: 0,
            exact: 0,
            close: 0,
            sim: 0,
            score: 0,
        };
        d.hint = hint_for(&d, &w).replace("hunk", "expected line");
        return d;
    }
    // Elsewhere, loosely?
    if let Some(located) = locate(&view, &index, &exp) {
        let counts = row_causes(&located.walk.rows);
        let mut causes = rank_causes(&counts);
        from_walk(&view, &exp, &located, &mut d);
        if d.line.is_some_and(|l| l != start_line) {
            causes.push(Cause::LinesShifted);
        }
        d.causes = causes;
        if d.causes.is_empty() {
            d.causes.push(Cause::ContentDiffers);
        }
        d.hint = hint_for(&d, &located.walk).replace("hunk", "expected line");
        if d.line.is_some_and(|l| l != start_line) {
            d.hint.push_str(&format!(
                "; the nearest lines are at {}, not at startLine {start_line}",
                span_text(d.line, d.end_line)
            ));
        }
        return d;
    }
    if matched == 0 && direct_counts.keys().all(|&c| c == Cause::ContentDiffers) {
        d.causes = vec![Cause::NoSimilarRegion];
        d.hint = no_similar_hint(&index, &exp, "expectedOriginalLines");
        let (rows, omitted) = compact(&view, &exp, &direct);
        d.rows = rows;
        d.omitted_rows = omitted;
        return d;
    }
    d.line = Some(start_line);
    d.end_line = Some(start + direct.len());
    d.matched = matched;
    d.causes = rank_causes(&direct_counts);
    let (rows, omitted) = compact(&view, &exp, &direct);
    d.rows = rows;
    d.omitted_rows = omitted;
    d.hint = format!(
        "lines {start_line}–{} differ in content from expectedOriginalLines; re-read them and copy them exactly",
        start + exp.len()
    );
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_marks_invisibles_unambiguously() {
        assert_eq!(visible(b"a b  ", 0), "a b··");
        assert_eq!(visible(b"\tx\r", 0), "→x␍");
        assert_eq!(visible("x\u{a0}y".as_bytes(), 0), "x⍽y");
        assert_eq!(visible("a\u{200b}b".as_bytes(), 0), "a⟨U+200B⟩b");
        assert_eq!(visible("a·b".as_bytes(), 0), "a⟨U+00B7⟩b");
        assert_eq!(visible(b"\xff", 0), "⟨0xFF⟩");
        assert_eq!(visible(b"   ", 0), "···");
    }

    #[test]
    fn pairs_are_classified_by_the_normaliser_they_need() {
        let c = |e: &str, a: &str| classify_pair(e.as_bytes(), a.as_bytes());
        assert_eq!(c("x = 1", "x = 1  "), vec![Cause::TrailingWhitespace]);
        assert_eq!(c("    x", "\tx"), vec![Cause::Indentation]);
        assert_eq!(c("x\r", "x"), vec![Cause::LineEndings]);
        assert_eq!(c("it’s", "it's"), vec![Cause::UnicodeLookalike]);
        assert_eq!(c("caf\u{e9}", "cafe\u{301}"), vec![Cause::UnicodeLookalike]);
        assert_eq!(c("a\u{a0}b", "a b"), vec![Cause::UnicodeLookalike]);
        assert_eq!(c("a  =  b", "a = b"), vec![Cause::InnerWhitespace]);
        assert_eq!(c("foo(1)", "foo(2)"), vec![Cause::ContentDiffers]);
    }

    #[test]
    fn loose_keys_ignore_invisible_differences() {
        assert_eq!(loose_key(b"  foo(a, b)"), loose_key(b"\tfoo(a,b)  "));
        assert_eq!(loose_key("it’s".as_bytes()), loose_key(b"it's"));
        assert_eq!(
            loose_key("caf\u{e9}".as_bytes()),
            loose_key("cafe\u{301}".as_bytes())
        );
        assert_ne!(loose_key(b"foo(1)"), loose_key(b"foo(2)"));
    }

    #[test]
    fn line_number_prefixes_are_recognised() {
        assert_eq!(strip_line_number(b"    12\tfoo"), Some(&b"foo"[..]));
        assert_eq!(strip_line_number(b"12: foo"), Some(&b"foo"[..]));
        assert_eq!(strip_line_number("  7→x".as_bytes()), Some(&b"x"[..]));
        assert_eq!(strip_line_number(b"3 | y"), Some(&b"y"[..]));
        assert_eq!(strip_line_number(b"foo"), None);
        assert_eq!(strip_line_number(b"12345678\tx"), None);
    }

    /// A source-like file of `n` distinct lines with `special` lines
    /// (1-based line, text) put in place.
    fn source(n: usize, special: &[(usize, &str)]) -> String {
        let mut lines: Vec<String> = (1..=n)
            .map(|i| match i % 7 {
                0 => "    }".to_string(),
                3 => String::new(),
                _ => format!("        let total_{i} = account_{i}.balance() + fees({i});"),
            })
            .collect();
        for (at, text) in special {
            lines[at - 1] = text.to_string();
        }
        lines.join("\n") + "\n"
    }

    /// Diagnose the first hunk of an envelope's one Update section.
    fn diagnose(file: &str, body: &str) -> Diagnosis {
        let text = format!("*** Begin Patch\n*** Update File: f\n@@\n{body}*** End Patch\n");
        let patch = crate::envelope::parse(&text).expect("the test envelope parses");
        let crate::envelope::SectionKind::Update { hunks, .. } = &patch.sections[0].kind else {
            unreachable!("one Update section")
        };
        let err = crate::matching::apply_hunks(file.as_bytes(), hunks)
            .expect_err("the test hunk does not apply");
        match err.failure {
            crate::matching::HunkFailure::MultipleMatches { count: total, .. } => {
                multiple_matches(file.as_bytes(), hunks, 0, total)
            }
            _ => hunk_not_found(file.as_bytes(), hunks, 0, false),
        }
    }

    #[test]
    fn a_header_above_one_match_names_the_line_that_tells_it_apart() {
        let file = "class A:\n    def run(self):\n        x = 1\n        return x\n\n\
                    class B:\n    def run(self):\n        x = 1\n        return x\n";
        let hunk = "-        x = 1\n+        x = 2\n         return x\n";
        // `def run` stands above both matches; `class B` above one.
        let d = diagnose(file, &format!("@@ class B\n@@     def run(self):\n{hunk}"));
        assert_eq!(d.cause(), Cause::AmbiguousContext);
        assert_eq!(
            d.header_found,
            Some(HeaderFound {
                line: 6,
                text: "class B:".into(),
                match_line: 8
            })
        );
        assert!(d.hint.contains("informational"), "{}", d.hint);
        assert!(d.hint.contains("up to line 6"), "{}", d.hint);
        // A header the file does not have: said to be unused, nothing found.
        let d = diagnose(file, &format!("@@ class C\n{hunk}"));
        assert_eq!(d.header_found, None);
        assert!(
            d.hint.contains("\"class C\") is informational"),
            "{}",
            d.hint
        );
        assert!(d.hint.contains("e.g. line 1 (class A:)"), "{}", d.hint);
        // A header above every match tells nothing apart.
        let d = diagnose(file, &format!("@@ def run\n{hunk}"));
        assert_eq!(d.header_found, None);
        // No header text: nothing said about headers.
        let d = diagnose(file, hunk);
        assert!(!d.hint.contains("informational"), "{}", d.hint);
    }

    #[test]
    fn a_typo_among_common_words_is_located_by_its_grams() {
        // Every word of the line is common in the file; the misspelt one
        // is absent. Only the 4-grams of the whole line tell.
        let mut lines: Vec<String> = (0..300)
            .map(|i| format!("        optional($.rule_{i}),"))
            .collect();
        lines[149] = "        optional($.guard),".into();
        let file = lines.join("\n") + "\n";
        let d = diagnose(
            &file,
            "-        optional($.guarrd),\n+        optional($.guard2),\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(150)));
    }

    #[test]
    fn a_one_or_two_line_typo_is_located() {
        let file = source(1500, &[(1201, "    print(\"Hello, \" + name)")]);
        let d = diagnose(&file, "-    print(\"Hello, \" + nme)\n+    print(name)\n");
        assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(1201)));
        // Both lines of a two-line hunk misquoted.
        let file = source(
            1500,
            &[
                (900, "    let widget = Widget::new(config);"),
                (901, "    widget.render(&mut frame);"),
            ],
        );
        let d = diagnose(
            &file,
            "-    let widget = Widget::new(cfg);\n-    widget.rendr(&mut frame);\n+    draw();\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(900)));
        // A misquoted line between short ones.
        let file = source(
            1500,
            &[
                (700, "    }"),
                (701, "    register_handler(router, \"/health\"));"),
                (702, "));"),
            ],
        );
        let d = diagnose(
            &file,
            " }\n-    register_handlr(router, \"/health\"));\n+    x();\n ));\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(700)));
    }

    #[test]
    fn a_blank_line_dropped_after_a_short_first_line_is_named() {
        let file = source(
            1500,
            &[
                (1098, "    }"),
                (1099, ""),
                (1100, "    /// One level of the tree."),
                (1101, "    fn level(&self) -> usize {"),
            ],
        );
        let d = diagnose(
            &file,
            "     }\n     /// One level of the tree.\n-    fn level(&self) -> usize {\n+    fn depth(&self) -> usize {\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::BlankLineMissing, Some(1098)));
    }

    #[test]
    fn similarity_breaks_ties_between_near_duplicates() {
        let file = source(
            300,
            &[
                (100, "    config.retry_limit = compute_limit(alpha);"),
                (200, "    config.retry_limit = compute_limit(beta);"),
            ],
        );
        let d = diagnose(
            &file,
            "-    config.retry_limit = compute_limit(betta);\n+    x();\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(200)));
        assert_eq!(d.other_candidates, vec![100]);
    }

    #[test]
    fn among_loose_matches_the_byte_closest_wins() {
        // Line 100 differs from the hunk in indentation and CR, line 200
        // in the CR only.
        let file = source(
            300,
            &[
                (100, "      if (is_relevant(child)) {"),
                (200, "        if (is_relevant(child)) {"),
            ],
        );
        let d = diagnose(
            &file,
            "-        if (is_relevant(child)) {\r\n+        if (x) {\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::LineEndings, Some(200)));
    }

    #[test]
    fn a_content_difference_ranks_first() {
        let file = source(
            300,
            &[(100, "    let alpha = 1;  "), (101, "    let beta = 2;")],
        );
        let d = diagnose(
            &file,
            "-    let alpha = 1;\n-    let betta = 2;\n+    x();\n",
        );
        assert_eq!(
            d.causes,
            vec![Cause::ContentDiffers, Cause::TrailingWhitespace]
        );
        assert_eq!(d.line, Some(100));
    }

    #[test]
    fn lines_each_common_in_the_file_are_still_similar() {
        // Every line of the hunk occurs more than COMMON_KEY times.
        let mut lines = Vec::new();
        for i in 0..100 {
            lines.push(format!("fn f{i}() {{"));
            lines.push("    return result;".to_string());
            lines.push("}".to_string());
        }
        let file = lines.join("\n") + "\n";
        let d = diagnose(&file, "-    return result; \n+    return other;\n }\n");
        assert_eq!(d.cause(), Cause::TrailingWhitespace);
        assert!(d.line.is_some());
    }

    #[test]
    fn no_similar_region_says_check_the_path_only_when_nothing_is_there() {
        let mut lines = Vec::new();
        for i in 0..50 {
            lines.push(format!("fn f{i}() -> u32 {{"));
            lines.push("    return result;".to_string());
            lines.push("}".to_string());
        }
        let file = lines.join("\n") + "\n";
        let d = diagnose(
            &file,
            "-    return result;\n-    frobnicate(widget_handle);\n-    quux_the_thing(now);\n+    x();\n",
        );
        assert_eq!((d.cause(), d.line), (Cause::NoSimilarRegion, None));
        assert!(d.hint.contains("50 times"), "{}", d.hint);
        assert!(!d.hint.contains("check the path"), "{}", d.hint);
        let d = diagnose(&file, "-    frobnicate(widget_handle);\n+    x();\n");
        assert!(d.hint.contains("check the path"), "{}", d.hint);
    }

    #[test]
    fn spacing_and_dashes_are_classified_as_documented() {
        let c = |e: &str, a: &str| classify_pair(e.as_bytes(), a.as_bytes());
        assert_eq!(c("foo(a,b)", "foo(a, b)"), vec![Cause::InnerWhitespace]);
        assert_eq!(c("a -- b", "a \u{2014} b"), vec![Cause::UnicodeLookalike]);
        assert_eq!(c("a - b", "a \u{2014} b"), vec![Cause::UnicodeLookalike]);
        assert_eq!(c("x--", "x-"), vec![Cause::ContentDiffers]);
        assert_eq!(loose_key("a \u{2014} b".as_bytes()), loose_key(b"a--b"));
    }

    #[test]
    fn similarity_is_an_edit_distance_on_a_budget() {
        let mut budget = SIMILARITY_BUDGET;
        assert_eq!(osa_distance(b"name", b"nmae"), 1);
        assert_eq!(osa_distance(b"kitten", b"sitting"), 3);
        let (sim, close) = similarity(b"print(name)", b"print(nme)", &mut budget).unwrap();
        assert!(close && sim > 900);
        let (_, close) = similarity(b"returnNone", b"returnself", &mut budget).unwrap();
        assert!(!close);
        let mut none = 0;
        assert_eq!(similarity(b"abcdef", b"abXYef", &mut none), None);
    }

    mod props {
        use super::*;
        use crate::envelope::{HunkLine, Span};
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec(
                prop_oneof![
                    Just("a".to_string()),
                    Just("b b".to_string()),
                    Just("".to_string()),
                    Just(" \t".to_string()),
                    Just("\u{2019}x\r".to_string()),
                    Just("1\tc".to_string()),
                    Just("e\u{301}".to_string()),
                    Just("x\\ny".to_string()),
                ],
                0..12,
            )
            .prop_map(|v| v.join("\n"))
        }

        proptest! {
            /// Every entry point returns a diagnosis with a cause, and
            /// every line it names is inside the file, for any input.
            #[test]
            fn diagnoses_are_total_and_in_bounds(
                file in text(),
                hunk in proptest::collection::vec((0u8..3, text()), 0..10),
                anchored in any::<bool>(),
                start in 0usize..15,
            ) {
                let lines: Vec<HunkLine<'_>> = hunk
                    .iter()
                    .flat_map(|(k, t)| t.split('\n').map(move |l| (*k, l)))
                    .map(|(k, l)| HunkLine {
                        span: Span { line: 1 },
                        kind: [LineKind::Context, LineKind::Remove, LineKind::Add][k as usize],
                        text: l,
                        no_newline: false,
                    })
                    .collect();
                let hunks = vec![
                    Hunk { span: Span { line: 1 }, headers: vec![""], lines: lines.clone(), end_of_file: false },
                    Hunk { span: Span { line: 2 }, headers: vec![""], lines, end_of_file: anchored },
                ];
                let n = Lines::new(file.as_bytes()).len();
                let check = |d: &Diagnosis| {
                    assert!(!d.causes.is_empty());
                    for l in d.line.iter().chain(&d.end_line).chain(&d.found_at_line) {
                        assert!(*l >= 1 && *l <= n.max(1), "line {l} of {n}: {d:?}");
                    }
                };
                for i in 0..hunks.len() {
                    check(&hunk_not_found(file.as_bytes(), &hunks, i, anchored));
                    check(&multiple_matches(file.as_bytes(), &hunks, i, 2));
                }
                if let Some(d) = stale_file(file.as_bytes(), &hunks) {
                    check(&d);
                }
                let expected: Vec<String> = hunk.iter().map(|(_, t)| t.replace('\n', " ")).collect();
                check(&line_mismatch(file.as_bytes(), start.max(1), &expected, &["z".to_string()]));
            }
        }
    }
}
