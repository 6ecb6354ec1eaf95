//! The validated batch: what [`super::validate::validate()`] returns and
//! `super::apply_changes` consumes, plus the one ordering rule both share.

use serde_json::Value;


/// A batch that passed validation, with its server-assigned IDs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidatedBatch {
    /// Canonical ID of the batch (`batch-<32 hex>`), assigned by the validator.
    pub batch_id: String,
    /// The caller's `batchKey`, verbatim.
    pub batch_key: Option<String>,
    /// The caller's `batchLabel`, verbatim.
    pub batch_label: Option<String>,
    /// One entry per file, in request order.
    pub files: Vec<FilePatch>,
}

/// One file of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePatch {
    /// Canonical ID of this file patch (`fp-<32 hex>`).
    pub file_patch_id: String,
    /// The caller's `fileKey`, verbatim.
    pub file_key: Option<String>,
    /// The docPath: non-empty and lowercase.
    pub doc_path: String,
    /// The SHA-256 the caller planned on, as given (64 hex digits, either case).
    pub original_sha256: String,
    /// The caller's `fileLabel`, verbatim.
    pub file_label: Option<String>,
    /// The changes, top to bottom, non-overlapping, never empty.
    pub changes: Vec<LineChange>,
}

/// One line-level change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineChange {
    /// Canonical ID of this change (`chg-<32 hex>`).
    pub change_id: String,
    /// The caller's `changeKey`, verbatim.
    pub change_key: Option<String>,
    /// The caller's `description`, verbatim.
    pub description: Option<String>,
    /// What the change does.
    pub op: LineOp,
}

/// The three operations of TUL-002 §5. Line numbers are 1-based and refer to
/// the original file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineOp {
    /// Insert `new_lines` after original line `after_line` (0: at the top).
    Insert {
        /// The original line the new lines follow; `0..=line count`.
        after_line: u64,
        /// The lines to insert (at least one; no line terminators).
        new_lines: Vec<String>,
    },
    /// Replace original lines `start_line..=end_line`.
    Replace {
        /// First line replaced (≥ 1).
        start_line: u64,
        /// Last line replaced (≥ `start_line`).
        end_line: u64,
        /// The range's current content, one entry per line, compared byte for byte.
        expected_original_lines: Vec<String>,
        /// The replacement (may be empty: the range is then removed).
        new_lines: Vec<String>,
    },
    /// Delete original lines `start_line..=end_line`.
    Delete {
        /// First line deleted (≥ 1).
        start_line: u64,
        /// Last line deleted (≥ `start_line`).
        end_line: u64,
        /// The range's current content, one entry per line, compared byte for byte.
        expected_original_lines: Vec<String>,
    },
}

impl LineOp {
    /// The wire name: `insert`, `replace` or `delete`.
    pub fn name(&self) -> &'static str {
        match self {
            LineOp::Insert { .. } => "insert",
            LineOp::Replace { .. } => "replace",
            LineOp::Delete { .. } => "delete",
        }
    }

    /// The lines this change writes (none for a delete).
    pub fn new_lines(&self) -> &[String] {
        match self {
            LineOp::Insert { new_lines, .. } | LineOp::Replace { new_lines, .. } => new_lines,
            LineOp::Delete { .. } => &[],
        }
    }

    /// Where the change sits in the original file (see [`Position`]).
    pub(crate) fn position(&self) -> Position {
        match self {
            LineOp::Insert { after_line, .. } => Position::insert(*after_line),
            LineOp::Replace {
                start_line,
                end_line,
                ..
            }
            | LineOp::Delete {
                start_line,
                end_line,
                ..
            } => Position::range(*start_line, *end_line),
        }
    }
}

/// The ordering rule, on a doubled line axis so that "between lines" is an
/// integer: an insert after line `k` sits at `2k + 1` (between `k` and
/// `k + 1`), a range `[s, e]` starts at `2s` and covers up to `2e`.
///
/// Changes must have non-decreasing keys (else *out of order*), and each key
/// must be at least the frontier left by all earlier changes (else
/// *overlap*): after an insert at `k` the frontier is `2k + 2` (a second
/// insert at `k` overlaps; a range starting at `k + 1` does not); after a
/// range `[s, e]` it is `2e + 1` (an insert after `e` or a range from `e + 1`
/// is fine; an insert after `s..e-1` lies inside the range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    /// Where the change sits.
    pub key: u128,
    /// The smallest key the next change may have.
    pub frontier: u128,
}

impl Position {
    pub(crate) fn insert(after_line: u64) -> Position {
        let k = u128::from(after_line);
        Position {
            key: 2 * k + 1,
            frontier: 2 * k + 2,
        }
    }

    pub(crate) fn range(start_line: u64, end_line: u64) -> Position {
        Position {
            key: 2 * u128::from(start_line),
            frontier: 2 * u128::from(end_line) + 1,
        }
    }
}

/// How a change relates to the changes before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// In order and clear of every earlier change.
    Clear,
    /// Sorts before an earlier change.
    OutOfOrder,
    /// Sorts after, but starts inside what an earlier change covers.
    Overlap,
}

/// Running check of [`Position`]s in request order.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OrderCheck {
    max_key: u128,
    frontier: u128,
}

impl OrderCheck {
    /// Classify `p` against everything seen so far, then record it.
    pub(crate) fn push(&mut self, p: Position) -> Placement {
        let verdict = if p.key < self.max_key {
            Placement::OutOfOrder
        } else if p.key < self.frontier {
            Placement::Overlap
        } else {
            Placement::Clear
        };
        self.max_key = self.max_key.max(p.key);
        self.frontier = self.frontier.max(p.frontier);
        verdict
    }
}

impl ValidatedBatch {
    /// The batch echoed as JSON: IDs, keys, labels and every change field
    /// (the `result` of a validation-only rendering). It validates again.
    pub fn to_json(&self) -> Value {
        let files = self.files.iter().map(FilePatch::doc).collect();
        crate::tools::wire::document(&self.doc(files))
    }
}

/// A fresh canonical ID: `<prefix>-` and 128 random bits in hex.
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:032x}", fastrand::u128(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(ps: &[Position]) -> Vec<Placement> {
        let mut check = OrderCheck::default();
        ps.iter().map(|p| check.push(*p)).collect()
    }

    #[test]
    fn an_insert_inside_a_range_overlaps_and_at_its_edges_does_not() {
        let r = Position::range(10, 12);
        // after the range: afterLine = 12
        assert_eq!(classify(&[r, Position::insert(12)])[1], Placement::Clear);
        // strictly inside: afterLine 10 and 11
        assert_eq!(classify(&[r, Position::insert(10)])[1], Placement::Overlap);
        assert_eq!(classify(&[r, Position::insert(11)])[1], Placement::Overlap);
        // before the range: afterLine 9 must come first
        assert_eq!(classify(&[Position::insert(9), r])[1], Placement::Clear);
        assert_eq!(
            classify(&[r, Position::insert(9)])[1],
            Placement::OutOfOrder
        );
    }

    #[test]
    fn ranges_and_inserts_follow_each_other_by_the_rule() {
        // delete 10-12 then replace 11: overlap (the spec's example)
        let v = classify(&[Position::range(10, 12), Position::range(11, 11)]);
        assert_eq!(v[1], Placement::Overlap);
        // adjacent ranges are fine
        let v = classify(&[Position::range(10, 12), Position::range(13, 13)]);
        assert_eq!(v[1], Placement::Clear);
        // same start: overlap
        let v = classify(&[Position::range(3, 3), Position::range(3, 4)]);
        assert_eq!(v[1], Placement::Overlap);
        // two inserts at the same line overlap; at consecutive lines they do not
        let v = classify(&[Position::insert(4), Position::insert(4)]);
        assert_eq!(v[1], Placement::Overlap);
        let v = classify(&[Position::insert(4), Position::insert(5)]);
        assert_eq!(v[1], Placement::Clear);
        // an insert after k, then a range starting at k+1
        let v = classify(&[Position::insert(4), Position::range(5, 6)]);
        assert_eq!(v[1], Placement::Clear);
        // a range starting at k sorts before an insert after k
        let v = classify(&[Position::insert(4), Position::range(4, 4)]);
        assert_eq!(v[1], Placement::OutOfOrder);
        let v = classify(&[Position::range(4, 4), Position::insert(4)]);
        assert_eq!(v[1], Placement::Clear);
    }

    #[test]
    fn huge_line_numbers_do_not_overflow() {
        let v = classify(&[
            Position::range(u64::MAX, u64::MAX),
            Position::insert(u64::MAX),
        ]);
        assert_eq!(v, vec![Placement::Clear, Placement::Clear]);
    }

    #[test]
    fn ids_carry_their_prefix_and_128_bits() {
        let id = new_id("chg");
        assert!(id.starts_with("chg-"));
        assert_eq!(id.len(), 4 + 32);
        assert_ne!(new_id("chg"), new_id("chg"));
    }
}
