//! The params of `workspace_write_patch` as types, for the tool catalog's
//! JSON Schema. The parser is [`super::validate()`]: it collects *every*
//! error with its TUL-002 code and location, which a derived deserializer
//! cannot do, and produces a [`super::ValidatedBatch`]. These types state the
//! same shape rules (required fields, types, unknown fields refused, line
//! numbers' ranges, line content) and the catalog's corpus test
//! (`conformance/tests/catalog.rs`) holds the two in agreement. The rules a
//! JSON Schema cannot state (ordering and overlap of changes, `endLine ≥
//! startLine`, `expectedOriginalLines` counting the range, one file per
//! docPath, docPath lowercase in Unicode's sense) are the validator's alone.

use schemars::JsonSchema;

/// The params of `workspace_write_patch`: one batch of per-file line edits.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "workspace_write_patch params")]
pub struct WritePatchParams {
    /// Ignored on input (the engine assigns the canonical `batch-…` ID).
    pub batch_id: Option<String>,
    /// Your own key for the batch, echoed back verbatim.
    pub batch_key: Option<String>,
    /// A human-readable label, echoed back verbatim.
    pub batch_label: Option<String>,
    /// One entry per file (at least one). All files are applied, or none.
    #[schemars(length(min = 1))]
    pub files: Vec<FilePatchParams>,
}

/// One file of a batch.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilePatchParams {
    /// Ignored on input (the engine assigns the canonical `fp-…` ID).
    pub file_patch_id: Option<String>,
    /// Your own key for this file, echoed back verbatim.
    pub file_key: Option<String>,
    /// The file's workspace-relative path, lowercase, `/`-separated; each
    /// docPath at most once per batch. (The pattern refuses blank paths and
    /// ASCII capitals; the validator refuses every Unicode capital.)
    #[schemars(regex(pattern = r"^[^A-Z]*[^A-Z\s][^A-Z]*$"))]
    pub doc_path: String,
    /// The SHA-256 (64 hex digits) of the file content the changes were
    /// planned on — from `workspace.read_file`'s `file.sha256`, never
    /// invented. A file whose content hashes differently is refused
    /// (`sha256_mismatch`) and the batch is not applied.
    #[schemars(regex(pattern = r"^[0-9a-fA-F]{64}$"))]
    pub original_sha256: String,
    /// A human-readable label, echoed back verbatim.
    pub file_label: Option<String>,
    /// The changes, top to bottom by original line number, not overlapping
    /// (at least one). Line numbers all refer to the original file.
    #[schemars(length(min = 1))]
    pub changes: Vec<LineChangeParams>,
}

/// One line-level change; `operation` decides which fields it has (the
/// fields of the other operations may only be absent or `null`).
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
    #[serde(
    tag = "operation",
    rename_all = "lowercase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
#[allow(dead_code)] // Read by its derived schema only: the validator reads the params.
pub enum LineChangeParams {
    /// Insert `newLines` after original line `afterLine` (0: at the top).
    Insert {
        /// Ignored on input (the engine assigns the canonical `chg-…` ID).
        change_id: Option<String>,
        /// Your own key for this change, echoed back verbatim.
        change_key: Option<String>,
        /// What the change is for, echoed back verbatim.
        description: Option<String>,
        /// The original line the new lines follow; 0 inserts at the top.
        #[schemars(range(min = 0))]
        after_line: u64,
        /// The lines to insert, without line terminators (at least one).
        #[schemars(length(min = 1))]
        new_lines: Vec<NewLine>,
        /// Not used by an insert: absent or `null`.
        start_line: Option<()>,
        /// Not used by an insert: absent or `null`.
        end_line: Option<()>,
        /// Not used by an insert: absent or `null`.
        expected_original_lines: Option<()>,
    },
    /// Replace original lines `startLine..=endLine` (inclusive).
    Replace {
        /// Ignored on input (the engine assigns the canonical `chg-…` ID).
        change_id: Option<String>,
        /// Your own key for this change, echoed back verbatim.
        change_key: Option<String>,
        /// What the change is for, echoed back verbatim.
        description: Option<String>,
        /// First line replaced (1-based).
        #[schemars(range(min = 1))]
        start_line: u64,
        /// Last line replaced (≥ `startLine`).
        #[schemars(range(min = 1))]
        end_line: u64,
        /// The range's current lines, one entry per line, compared byte for
        /// byte (a mismatch refuses the batch with `line_mismatch`).
        expected_original_lines: Vec<OriginalLine>,
        /// The replacement lines (may be empty: the range is then removed).
        new_lines: Vec<NewLine>,
        /// Not used by a replace: absent or `null`.
        after_line: Option<()>,
    },
    /// Delete original lines `startLine..=endLine` (inclusive).
    Delete {
        /// Ignored on input (the engine assigns the canonical `chg-…` ID).
        change_id: Option<String>,
        /// Your own key for this change, echoed back verbatim.
        change_key: Option<String>,
        /// What the change is for, echoed back verbatim.
        description: Option<String>,
        /// First line deleted (1-based).
        #[schemars(range(min = 1))]
        start_line: u64,
        /// Last line deleted (≥ `startLine`).
        #[schemars(range(min = 1))]
        end_line: u64,
        /// The range's current lines, one entry per line, compared byte for byte.
        expected_original_lines: Vec<OriginalLine>,
        /// Not used by a delete: absent or `null`.
        after_line: Option<()>,
        /// Not used by a delete: absent or `null`.
        new_lines: Option<()>,
    },
}

/// One line to write: no `\n`, no trailing `\r` (C-wp-line-content).
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[schemars(inline)]
pub struct NewLine(#[schemars(regex(pattern = r"^([^\n]*[^\r\n])?$"))] pub String);

/// One original line as expected: no `\n` (a trailing `\r` can be content).
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[schemars(inline)]
pub struct OriginalLine(#[schemars(regex(pattern = r"^[^\n]*$"))] pub String);
