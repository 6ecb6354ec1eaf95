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

use serde_json::{json, Map, Value};

use super::apply::ApplyError;
use super::batch::ValidatedBatch;
use super::validate::{validate, ValidationError};
use super::workspace::{apply_batch, BatchReport, FileFailure, FileStatus};
use crate::dispatch::{ToolCall, ToolOutcome};
use crate::tools::{guarded, OpenFs};

/// Run one `workspace_write_patch` call: validate, then apply atomically.
pub fn run(call: &ToolCall<'_>) -> ToolOutcome {
    run_with(call, &crate::tools::open_for_writing)
}

/// [`run`], opening the workspace with `open`. A panic (a bug) is an
/// `internal_error` in `errors`, with `result` null.
pub fn run_with(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    guarded(
        || outcome(execute(call, open)),
        || {
            outcome(error_doc(
                Value::Null,
                vec![
                    json!({"code": "internal_error", "message": "internal error: the engine failed unexpectedly (a bug)"}),
                ],
            ))
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
                    let mut obj = f.head_json_map();
                    obj.insert("applied".into(), json!(false));
                    obj.insert(
                        "skippedBecause".into(),
                        json!("the workspace could not be opened"),
                    );
                    obj.insert("changes".into(), f.changes_json());
                    Value::Object(obj)
                })
                .collect();
            return error_doc(
                Value::Object(batch.to_json_map(files)),
                vec![
                    json!({"code": "io_error", "message": format!("the workspace could not be opened: {e}")}),
                ],
            );
        }
    };
    let report = apply_batch(&*fs, &batch);
    render_result(&batch, &report)
}

fn error_doc(result: Value, errors: Vec<Value>) -> Value {
    json!({"success": false, "result": result, "errors": errors})
}

/// The document for a batch that failed validation: `result` null, every error listed.
pub fn render_validation_errors(errors: &[ValidationError]) -> Value {
    error_doc(
        Value::Null,
        errors.iter().map(ValidationError::to_json).collect(),
    )
}

fn failure_json(
    batch: &ValidatedBatch,
    index: usize,
    path: Option<&str>,
    failure: &FileFailure,
) -> Value {
    let file = &batch.files[index];
    let message = failure.message();
    let mut obj = Map::new();
    obj.insert("code".into(), json!(failure.code()));
    obj.insert(
        "message".into(),
        json!(format!("files[{index}] ({}): {message}", file.doc_path)),
    );
    obj.insert("fileIndex".into(), json!(index));
    obj.insert("docPath".into(), json!(file.doc_path));
    if let Some(p) = path {
        obj.insert("path".into(), json!(p));
    }
    match failure {
        FileFailure::ShaMismatch { expected, actual } => {
            obj.insert("expected".into(), json!(expected));
            obj.insert("actual".into(), json!(actual));
        }
        FileFailure::Ambiguous { candidates } => {
            obj.insert("candidates".into(), json!(candidates));
        }
        FileFailure::DuplicateTarget {
            related_file_index, ..
        } => {
            obj.insert("relatedFileIndex".into(), json!(related_file_index));
        }
        FileFailure::Apply(e) => {
            let ci = e.change_index();
            obj.insert("changeIndex".into(), json!(ci));
            if let Some(change) = file.changes.get(ci) {
                obj.insert("changeId".into(), json!(change.change_id));
                if let Some(k) = &change.change_key {
                    obj.insert("changeKey".into(), json!(k));
                }
            }
            match e {
                ApplyError::LineMismatch {
                    line,
                    expected,
                    actual,
                    diagnosis,
                    ..
                } => {
                    obj.insert("line".into(), json!(line));
                    obj.insert("expected".into(), json!(expected));
                    obj.insert("actual".into(), json!(actual));
                    obj.insert(
                        "diagnosis".into(),
                        crate::diagnose::diagnosis_json(diagnosis),
                    );
                }
                ApplyError::RangeOutOfBounds { line_count, .. } => {
                    obj.insert("lineCount".into(), json!(line_count));
                }
                ApplyError::InvalidChange { .. } => {}
            }
        }
        FileFailure::Path { .. } | FileFailure::NotFound { .. } | FileFailure::Io { .. } => {}
    }
    Value::Object(obj)
}

/// The document for a validated batch and what applying it did.
pub fn render_result(batch: &ValidatedBatch, report: &BatchReport) -> Value {
    let mut errors = Vec::new();
    let mut files = Vec::with_capacity(batch.files.len());
    for (i, (file, outcome)) in batch.files.iter().zip(&report.files).enumerate() {
        let mut obj = file.head_json_map();
        obj.insert(
            "applied".into(),
            json!(matches!(outcome.status, FileStatus::Applied { .. })),
        );
        if let Some(p) = &outcome.path {
            obj.insert("path".into(), json!(p));
        }
        match &outcome.status {
            FileStatus::Applied { new_sha256 } => {
                obj.insert("newSha256".into(), json!(new_sha256));
            }
            FileStatus::Failed(failure) => {
                let err = failure_json(batch, i, outcome.path.as_deref(), failure);
                obj.insert("error".into(), err.clone());
                errors.push(err);
            }
            FileStatus::Skipped(because) => {
                obj.insert("skippedBecause".into(), json!(because));
            }
        }
        obj.insert("changes".into(), file.changes_json());
        files.push(Value::Object(obj));
    }
    if let Some(c) = &report.commit_failure {
        errors.push(json!({
            "code": "commit_failed",
            "message": if c.rolled_back {
                format!("writing the batch failed and was rolled back: {}", c.message)
            } else {
                format!("writing the batch failed and the rollback was incomplete; the workspace may differ from before: {}", c.message)
            },
            "step": c.step,
            "path": c.path,
            "rolledBack": c.rolled_back,
        }));
    }
    let result = Value::Object(batch.to_json_map(files));
    if errors.is_empty() && report.success() {
        json!({"success": true, "result": result, "errors": []})
    } else {
        error_doc(result, errors)
    }
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
