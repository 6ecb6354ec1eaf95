//! The wire entry point: params → validate → apply → the InvokeResult-style
//! result document (field by field in `docs/clarifications.md`,
//! C-wp-result):
//!
//! ```text
//! {"success": bool,
//!  "result": null | {batchId, batchKey?, batchLabel?, files: [
//!      {filePatchId, fileKey?, docPath, originalSha256, fileLabel?,
//!       applied, path?, newSha256?, error?, skippedBecause?, changes: [
//!          {changeId, changeKey?, operation, description?, afterLine | startLine, endLine,
//!           expectedOriginalLines?, newLines?}]}]},
//!  "errors": [{code, message, fileIndex?, docPath?, changeIndex?, changeId?, changeKey?, ...}]}
//! ```
//!
//! `result` is null exactly when validation failed; `errors` is empty
//! exactly when `success` is true.

use serde_json::Value;

use super::apply::ApplyError;
use super::batch::ValidatedBatch;
use super::document::{
    ChangeErrorDetail, CommitError, FileError, FileErrorDetail, PlainError, WritePatchDocument,
    WritePatchError,
};
use super::validate::{validate, ValidationError};
use super::workspace::{apply_batch, BatchReport, FileFailure, FileStatus};
use crate::call::{ToolCall, ToolOutcome};
use crate::events::{array_len, batch_id, TARGET};
use crate::tools::ToolHooks;
use crate::tools::wire::document;
use crate::tools::{guarded, OpenFs};

/// Run one call from its wire params, opening the workspace with `open`. A panic (a bug) is an
/// `internal_error` in `errors`, with `result` null.
pub fn run_with(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    guarded(
        || outcome(execute(call, open)),
        || {
            outcome(document(&WritePatchDocument {
                success: false,
                result: None,
                errors: vec![WritePatchError::Plain(PlainError {
                    code: "internal_error",
                    message: "internal error: the engine failed unexpectedly (a bug)".into(),
                })],
            }))
        },
    )
}

fn execute(call: &ToolCall<'_>, open: &OpenFs<'_>) -> Value {
    let batch = match validate(call.params) {
        Ok(batch) => batch,
        Err(errors) => return render_validation_errors(&errors),
    };
    let fs = match open(call.workspace_root) {
        Ok(fs) => fs,
        Err(e) => {
            let files = batch
                .files
                .iter()
                .map(|f| {
                    let mut doc = f.doc();
                    doc.applied = Some(false);
                    doc.skipped_because = Some("the workspace could not be opened");
                    doc
                })
                .collect();
            return document(&WritePatchDocument {
                success: false,
                result: Some(batch.doc(files)),
                errors: vec![WritePatchError::Plain(PlainError {
                    code: "io_error",
                    message: format!("the workspace could not be opened: {e}"),
                })],
            });
        }
    };
    let report = apply_batch(&*fs, &batch);
    render_result(&batch, &report)
}

/// The document for a batch that failed validation: `result` null, every error listed.
pub fn render_validation_errors(errors: &[ValidationError]) -> Value {
    document(&WritePatchDocument {
        success: false,
        result: None,
        errors: errors.iter().map(WritePatchError::Validation).collect(),
    })
}

fn file_error<'a>(
    batch: &'a ValidatedBatch,
    index: usize,
    path: Option<&'a str>,
    failure: &'a FileFailure,
) -> FileError<'a> {
    let file = &batch.files[index];
    let detail = match failure {
        FileFailure::ShaMismatch { expected, actual } => FileErrorDetail::Sha { expected, actual },
        FileFailure::Ambiguous { candidates } => FileErrorDetail::Ambiguous { candidates },
        FileFailure::DuplicateTarget {
            related_file_index, ..
        } => FileErrorDetail::Duplicate {
            related_file_index: *related_file_index,
        },
        FileFailure::Apply(e) => {
            let change_index = e.change_index();
            let change = file.changes.get(change_index);
            FileErrorDetail::Change {
                change_index,
                change_id: change.map(|c| c.change_id.as_str()),
                change_key: change.and_then(|c| c.change_key.as_deref()),
                detail: match e {
                    ApplyError::LineMismatch {
                        line,
                        expected,
                        actual,
                        diagnosis,
                        ..
                    } => ChangeErrorDetail::Mismatch {
                        line: *line,
                        expected,
                        actual,
                        diagnosis: crate::diagnose::diagnosis_json(diagnosis),
                    },
                    ApplyError::RangeOutOfBounds { line_count, .. } => ChangeErrorDetail::Range {
                        line_count: *line_count,
                    },
                    ApplyError::InvalidChange { .. } => ChangeErrorDetail::None {},
                },
            }
        }
        FileFailure::Path { .. } | FileFailure::NotFound { .. } | FileFailure::Io { .. } => {
            FileErrorDetail::None {}
        }
    };
    FileError {
        code: failure.code(),
        message: format!("files[{index}] ({}): {}", file.doc_path, failure.message()),
        file_index: index,
        doc_path: &file.doc_path,
        path,
        detail,
    }
}

/// The document for a validated batch and what applying it did.
pub fn render_result(batch: &ValidatedBatch, report: &BatchReport) -> Value {
    let mut errors = Vec::new();
    let mut files = Vec::with_capacity(batch.files.len());
    for (i, (file, outcome)) in batch.files.iter().zip(&report.files).enumerate() {
        let mut doc = file.doc();
        doc.applied = Some(matches!(outcome.status, FileStatus::Applied { .. }));
        doc.path = outcome.path.as_deref();
        match &outcome.status {
            FileStatus::Applied { new_sha256 } => doc.new_sha256 = Some(new_sha256),
            FileStatus::Failed(failure) => {
                let err = file_error(batch, i, outcome.path.as_deref(), failure);
                errors.push(WritePatchError::File(err.clone()));
                doc.error = Some(err);
            }
            FileStatus::Skipped(because) => doc.skipped_because = Some(because),
        }
        files.push(doc);
    }
    if let Some(c) = &report.commit_failure {
        errors.push(WritePatchError::Commit(CommitError {
            code: "commit_failed",
            message: if c.rolled_back {
                format!("writing the batch failed and was rolled back: {}", c.message)
            } else {
                format!("writing the batch failed and the rollback was incomplete; the workspace may differ from before: {}", c.message)
            },
            step: c.step,
            path: &c.path,
            rolled_back: c.rolled_back,
        }));
    }
    document(&WritePatchDocument {
        success: errors.is_empty() && report.success(),
        result: Some(batch.doc(files)),
        errors,
    })
}

fn outcome(doc: Value) -> ToolOutcome {
    let success = doc.get("success").and_then(Value::as_bool).unwrap_or(false);
    let error = (!success).then(|| {
        let errors = doc.get("errors").and_then(Value::as_array);
        let n = errors.map_or(0, Vec::len);
        let first = errors
            .and_then(|e| e.first())
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the batch was not applied");
        let code = errors
            .and_then(|e| e.first())
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str);
        if code == Some("internal_error") {
            first.to_string()
        } else if doc.get("result").is_some_and(Value::is_null) {
            format!("batch rejected: {n} validation error(s); first: {first}")
        } else {
            format!("batch not applied: {first}")
        }
    });
    ToolOutcome {
        success,
        result: doc,
        error,
    }
}

/// `workspace_write_patch`'s own events (TUL-002 §9), beside the common
/// ones of every call ([`crate::events`]), and its calls filed by the store
/// as batches ([`super::document::filed`]).
pub(crate) const HOOKS: ToolHooks = ToolHooks {
    received: batch_received,
    finished: batch_failed,
    stored: batch_stored,
    filed: super::document::filed,
};

/// `Tool.WritePatch.BatchReceived`: the batch's size.
fn batch_received(tool: &str, call_id: &str, params: &Value) {
    let files = params.get("files").and_then(Value::as_array);
    let changes: usize = files.map_or(0, |files| {
        files.iter().map(|f| array_len(f.get("changes"))).sum()
    });
    tracing::info!(
        target: TARGET,
        event = "Tool.WritePatch.BatchReceived",
        tool,
        call_id,
        files = files.map_or(0, Vec::len),
        changes,
    );
}

/// `Tool.WritePatch.Error`, for a batch that failed.
fn batch_failed(
    tool: &str,
    call_id: &str,
    _params: &Value,
    outcome: &ToolOutcome,
    code: &str,
    _duration_ms: f64,
) {
    if outcome.success {
        return;
    }
    let result = &outcome.result;
    let errors = result.get("errors").and_then(Value::as_array);
    let validation_failures = if result.get("result").is_some_and(Value::is_null) {
        array_len(result.get("errors"))
    } else {
        0
    };
    let doc_path = errors
        .and_then(|e| e.iter().find_map(|e| e.get("docPath")))
        .and_then(Value::as_str)
        .unwrap_or("");
    tracing::warn!(
        target: TARGET,
        event = "Tool.WritePatch.Error",
        tool,
        call_id,
        batch_id = batch_id(result).unwrap_or(""),
        reason = outcome.error.as_deref().unwrap_or(""),
        error_code = code,
        doc_path,
        validation_failures,
    );
}

/// `Tool.WritePatch.BatchStored`: the store holds the batch.
fn batch_stored(tool: &str, call_id: &str, result: &Value, duration_ms: f64) {
    let Some(batch_id) = batch_id(result) else {
        return;
    };
    let files = result
        .get("result")
        .and_then(|r| r.get("files"))
        .and_then(Value::as_array);
    let changes: usize =
        files.map_or(0, |f| f.iter().map(|f| array_len(f.get("changes"))).sum());
    tracing::info!(
        target: TARGET,
        event = "Tool.WritePatch.BatchStored",
        tool,
        call_id,
        batch_id,
        files = files.map_or(0, Vec::len),
        changes,
        duration_ms,
    );
}
