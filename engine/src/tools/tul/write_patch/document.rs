//! The result document of `workspace_write_patch` as types: the tool
//! builds them and serializes them (`super::render_result`,
//! `super::render_validation_errors`), and the tool catalog takes the
//! result schema from them. Field by field in `docs/clarifications.md`
//! (C-wp-result); optional members are left out when they do not apply.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::{StoredBatch, StoredChange, StoredFilePatch};

use super::batch::{FilePatch, LineChange, LineOp, ValidatedBatch};
use super::validate::ValidationError;

/// The whole document: `result` is `null` exactly when validation failed;
/// `errors` is empty exactly when `success` is true.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(title = "workspace_write_patch result")]
pub struct WritePatchDocument<'a> {
    /// True when every file was applied and written.
    pub success: bool,
    /// The batch echoed with its canonical IDs and each file's outcome;
    /// `null` when the batch failed validation.
    pub result: Option<BatchDoc<'a>>,
    /// Every validation error, or the errors that stopped the apply.
    pub errors: Vec<WritePatchError<'a>>,
}

/// The batch as echoed back.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchDoc<'a> {
    /// The canonical batch ID (`batch-<32 hex>`).
    pub batch_id: &'a str,
    /// Your `batchKey`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_key: Option<&'a str>,
    /// Your `batchLabel`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_label: Option<&'a str>,
    /// One entry per file, in request order.
    pub files: Vec<FileDoc<'a>>,
}

/// One file of the echoed batch, with what happened to it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDoc<'a> {
    /// The canonical file patch ID (`fp-<32 hex>`).
    pub file_patch_id: &'a str,
    /// Your `fileKey`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_key: Option<&'a str>,
    /// The docPath, as given.
    pub doc_path: &'a str,
    /// The SHA-256 you planned on, as given.
    pub original_sha256: &'a str,
    /// Your `fileLabel`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_label: Option<&'a str>,
    /// True when this file was written (always present in a tool result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
    /// The workspace path the docPath resolved to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    /// The SHA-256 of the file as written (when applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_sha256: Option<&'a str>,
    /// Why this file failed (also listed in `errors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<FileError<'a>>,
    /// Why this file was not written although it had no error of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_because: Option<&'a str>,
    /// The changes with their canonical IDs.
    pub changes: Vec<ChangeDoc<'a>>,
}

/// One change as echoed back.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeDoc<'a> {
    /// The canonical change ID (`chg-<32 hex>`).
    pub change_id: &'a str,
    /// Your `changeKey`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_key: Option<&'a str>,
    /// `insert`, `replace` or `delete`.
    #[schemars(extend("enum" = ["insert", "replace", "delete"]))]
    pub operation: &'static str,
    /// Your `description`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    /// An insert's anchor line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_line: Option<u64>,
    /// A replace's or delete's first line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    /// A replace's or delete's last line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// A replace's or delete's expected lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_original_lines: Option<&'a [String]>,
    /// An insert's or replace's new lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_lines: Option<&'a [String]>,
}

/// One entry of `errors`: a validation error, a file's failure, the
/// commit's failure, or an error with a code and a message only
/// (`io_error`, `internal_error`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum WritePatchError<'a> {
    /// The batch broke a rule of TUL-002 (`result` is then `null`).
    Validation(&'a ValidationError),
    /// A file could not be applied.
    File(FileError<'a>),
    /// Writing the batch failed.
    Commit(CommitError<'a>),
    /// Anything else.
    Plain(PlainError),
}

/// Why one file could not be applied.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileError<'a> {
    /// `sha256_mismatch`, `file_not_found`, `ambiguous_doc_path`, `line_mismatch`,
    /// `range_out_of_bounds`, `outside_workspace`, ... (docs/tools.md).
    pub code: &'static str,
    /// `files[i] (docPath): reason`.
    pub message: String,
    /// The file's index in `files`.
    pub file_index: usize,
    /// The file's docPath.
    pub doc_path: &'a str,
    /// The workspace path it resolved to, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    /// What the failure adds.
    #[serde(flatten)]
    pub detail: FileErrorDetail<'a>,
}

/// The members a file failure adds, by kind.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FileErrorDetail<'a> {
    /// `sha256_mismatch`: the hash you gave and the file's.
    Sha {
        /// `originalSha256` as given.
        expected: &'a str,
        /// The file's SHA-256.
        actual: &'a str,
    },
    /// `ambiguous_doc_path`: the files the docPath could mean.
    Ambiguous {
        /// Their workspace paths.
        candidates: &'a [String],
    },
    /// `duplicate_target`: another file of the batch resolved to the same path.
    Duplicate {
        /// That file's index.
        #[serde(rename = "relatedFileIndex")]
        related_file_index: usize,
    },
    /// A change could not be applied.
    Change {
        /// The change's index in its file's `changes`.
        #[serde(rename = "changeIndex")]
        change_index: usize,
        /// Its canonical ID.
        #[serde(rename = "changeId", skip_serializing_if = "Option::is_none")]
        change_id: Option<&'a str>,
        /// Its `changeKey`.
        #[serde(rename = "changeKey", skip_serializing_if = "Option::is_none")]
        change_key: Option<&'a str>,
        /// What the change met.
        #[serde(flatten)]
        detail: ChangeErrorDetail<'a>,
    },
    /// Nothing more (`not_found`, a path refusal, an I/O error).
    None {},
}

/// The members a change failure adds, by kind.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChangeErrorDetail<'a> {
    /// `line_mismatch`: the first line that differs.
    Mismatch {
        /// Its 1-based number.
        line: u64,
        /// What the change expected there.
        expected: &'a str,
        /// What the file has.
        actual: &'a str,
        /// Why, and where the expected lines are (docs/diagnostics.md).
        diagnosis: Value,
    },
    /// `range_out_of_bounds`: the file's line count.
    Range {
        /// Lines in the file.
        #[serde(rename = "lineCount")]
        line_count: usize,
    },
    /// Nothing more.
    None {},
}

/// `commit_failed`: writing the batch failed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitError<'a> {
    /// Always `commit_failed`.
    #[schemars(extend("const" = "commit_failed"))]
    pub code: &'static str,
    /// What failed and whether it was rolled back.
    pub message: String,
    /// `staging`, `renaming`, `trashing` or `syncing`.
    pub step: &'static str,
    /// The path being written.
    pub path: &'a str,
    /// False when the rollback itself failed (the workspace may differ).
    pub rolled_back: bool,
}

/// An error with a code and a message only.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PlainError {
    /// `io_error` or `internal_error`.
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

impl ValidatedBatch {
    /// The batch echoed: IDs, keys, labels and every change; `files`
    /// built by the caller (so the applier can add per-file outcomes).
    pub(crate) fn doc<'a>(&'a self, files: Vec<FileDoc<'a>>) -> BatchDoc<'a> {
        BatchDoc {
            batch_id: &self.batch_id,
            batch_key: self.batch_key.as_deref(),
            batch_label: self.batch_label.as_deref(),
            files,
        }
    }
}

impl FilePatch {
    /// This file echoed, without an outcome.
    pub(crate) fn doc(&self) -> FileDoc<'_> {
        FileDoc {
            file_patch_id: &self.file_patch_id,
            file_key: self.file_key.as_deref(),
            doc_path: &self.doc_path,
            original_sha256: &self.original_sha256,
            file_label: self.file_label.as_deref(),
            applied: None,
            path: None,
            new_sha256: None,
            error: None,
            skipped_because: None,
            changes: self.changes.iter().map(LineChange::doc).collect(),
        }
    }
}

impl LineChange {
    /// This change echoed.
    pub(crate) fn doc(&self) -> ChangeDoc<'_> {
        let mut doc = ChangeDoc {
            change_id: &self.change_id,
            change_key: self.change_key.as_deref(),
            operation: self.op.name(),
            description: self.description.as_deref(),
            after_line: None,
            start_line: None,
            end_line: None,
            expected_original_lines: None,
            new_lines: None,
        };
        match &self.op {
            LineOp::Insert {
                after_line,
                new_lines,
            } => {
                doc.after_line = Some(*after_line);
                doc.new_lines = Some(new_lines);
            }
            LineOp::Replace {
                start_line,
                end_line,
                expected_original_lines,
                new_lines,
            } => {
                doc.start_line = Some(*start_line);
                doc.end_line = Some(*end_line);
                doc.expected_original_lines = Some(expected_original_lines);
                doc.new_lines = Some(new_lines);
            }
            LineOp::Delete {
                start_line,
                end_line,
                expected_original_lines,
            } => {
                doc.start_line = Some(*start_line);
                doc.end_line = Some(*end_line);
                doc.expected_original_lines = Some(expected_original_lines);
            }
        }
        doc
    }
}

/// The result document read back as the patch store files it: the batch
/// (`result`) in its own tables, the `errors` on the call's row.
#[derive(Deserialize)]
struct Filed {
    success: bool,
    result: Option<FiledBatch>,
    #[serde(default)]
    errors: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FiledBatch {
    batch_id: String,
    batch_key: Option<String>,
    batch_label: Option<String>,
    files: Vec<FiledFile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FiledFile {
    file_patch_id: String,
    file_key: Option<String>,
    file_label: Option<String>,
    doc_path: String,
    path: Option<String>,
    original_sha256: String,
    new_sha256: Option<String>,
    applied: Option<bool>,
    error: Option<FiledError>,
    skipped_because: Option<String>,
    /// A [`ChangeDoc`] has a [`StoredChange`]'s members, one for one.
    changes: Vec<StoredChange>,
}

#[derive(Deserialize)]
struct FiledError {
    code: String,
    message: String,
}

/// The registry's store hook for `workspace_write_patch`
/// (`crate::tools::ToolHooks::filed`): the batch of a result document
/// (`kept`, this module's `WritePatchDocument` as serialized, without
/// the workspace's file content) as the store keeps it, and the document's
/// `errors`, which the call's row keeps beside it. `None` for a document
/// without a batch (one refused before it had IDs, or an internal error):
/// that call is kept as it came.
pub fn filed(call_id: &str, kept: &Value) -> Option<(StoredBatch, Value)> {
    let document = Filed::deserialize(kept).ok()?;
    let batch = document.result?;
    let files = batch
        .files
        .into_iter()
        .map(|file| StoredFilePatch {
            file_patch_id: file.file_patch_id,
            file_key: file.file_key,
            file_label: file.file_label,
            doc_path: file.doc_path,
            path: file.path,
            original_sha256: file.original_sha256,
            new_sha256: file.new_sha256,
            applied: file.applied.unwrap_or(false),
            error_code: file.error.as_ref().map(|e| e.code.clone()),
            error_message: file.error.map(|e| e.message),
            skipped_because: file.skipped_because,
            changes: file.changes,
        })
        .collect();
    let recorded_at_ms = crate::commit::now_millis().min(u64::MAX as u128) as u64;
    let stored = StoredBatch {
        batch_id: batch.batch_id,
        batch_key: batch.batch_key,
        batch_label: batch.batch_label,
        call_id: call_id.to_string(),
        recorded_at_ms,
        applied: document.success,
        files,
    };
    Some((stored, Value::Array(document.errors)))
}
