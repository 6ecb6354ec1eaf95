//! The validator (TUL-002's server side): batch JSON → [`ValidatedBatch`]
//! with fresh IDs, or every [`ValidationError`] found.
//!
//! It never stops at the first error: each file and each change is checked
//! on its own, and the ordering rule runs over every change whose line
//! fields were readable, so one bad change does not hide another. It reads
//! no file; whether a docPath exists, its SHA and its lines are the
//! applier's business.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::batch::{
    new_id, FilePatch, LineChange, LineOp, OrderCheck, Placement, Position, ValidatedBatch,
};
use crate::hash::is_sha256_hex;

impl ValidatedBatch {
    /// Check `workspace_write_patch` params (the TUL-002 batch, as JSON)
    /// against every rule of §4–§6: the batch with its canonical IDs, or
    /// every error found (not the first only).
    pub fn validate(params: &serde_json::Value) -> Result<ValidatedBatch, Vec<ValidationError>> {
        validate(params)
    }
}

/// Why a batch was refused. The wire form is [`ValidationCode::as_str`]
/// (serde's snake_case of the variant, which a test holds equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ValidationCode {
    /// The params are not a JSON object.
    BatchNotObject,
    /// A field the schema does not define (typos included).
    UnknownField,
    /// A field has the wrong JSON type (see `field`).
    FieldWrongType,
    /// `files` is absent.
    FilesMissing,
    /// `files` is an empty array.
    FilesEmpty,
    /// An entry of `files` is not an object.
    FileNotObject,
    /// `docPath` is absent.
    DocPathMissing,
    /// `docPath` is empty or only whitespace.
    DocPathEmpty,
    /// `docPath` has upper-case letters (AGN-007: docPaths are lowercase).
    DocPathNotLowercase,
    /// The same `docPath` appears twice.
    DuplicateDocPath,
    /// `originalSha256` is absent.
    Sha256Missing,
    /// `originalSha256` is not 64 hex digits.
    Sha256Malformed,
    /// `changes` is absent.
    ChangesMissing,
    /// `changes` is an empty array.
    ChangesEmpty,
    /// An entry of `changes` is not an object.
    ChangeNotObject,
    /// `operation` is absent.
    OperationMissing,
    /// `operation` is not `insert`, `replace` or `delete`.
    UnknownOperation,
    /// A known field that this operation does not take (`afterLine` on a replace, ...).
    FieldNotAllowed,
    /// `afterLine`, `startLine` or `endLine` is absent.
    LineFieldMissing,
    /// A line field is not an integer (`3.0` is not one).
    LineFieldNotInteger,
    /// `startLine` < 1.
    StartLineBelowOne,
    /// `endLine` < 1.
    EndLineBelowOne,
    /// `endLine` < `startLine`.
    EndLineBeforeStart,
    /// `afterLine` < 0.
    AfterLineNegative,
    /// `expectedOriginalLines` is absent on a replace or delete.
    ExpectedLinesMissing,
    /// `expectedOriginalLines` does not have `endLine - startLine + 1` entries.
    ExpectedLinesLengthMismatch,
    /// `newLines` is absent on an insert or replace.
    NewLinesMissing,
    /// `newLines` is empty on an insert.
    NewLinesEmpty,
    /// `newLines` is present on a delete.
    NewLinesOnDelete,
    /// A line entry contains `\n`, or a `newLines` entry ends with `\r`.
    LineContainsNewline,
    /// A change sorts before an earlier one.
    ChangesOutOfOrder,
    /// A change starts inside what an earlier one covers.
    ChangesOverlap,
    /// A bug in the validator (a batch refused without a reason); never expected.
    #[serde(rename = "internal_error")]
    Internal,
}

impl ValidationCode {
    /// The snake_case wire code.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationCode::BatchNotObject => "batch_not_object",
            ValidationCode::UnknownField => "unknown_field",
            ValidationCode::FieldWrongType => "field_wrong_type",
            ValidationCode::FilesMissing => "files_missing",
            ValidationCode::FilesEmpty => "files_empty",
            ValidationCode::FileNotObject => "file_not_object",
            ValidationCode::DocPathMissing => "doc_path_missing",
            ValidationCode::DocPathEmpty => "doc_path_empty",
            ValidationCode::DocPathNotLowercase => "doc_path_not_lowercase",
            ValidationCode::DuplicateDocPath => "duplicate_doc_path",
            ValidationCode::Sha256Missing => "sha256_missing",
            ValidationCode::Sha256Malformed => "sha256_malformed",
            ValidationCode::ChangesMissing => "changes_missing",
            ValidationCode::ChangesEmpty => "changes_empty",
            ValidationCode::ChangeNotObject => "change_not_object",
            ValidationCode::OperationMissing => "operation_missing",
            ValidationCode::UnknownOperation => "unknown_operation",
            ValidationCode::FieldNotAllowed => "field_not_allowed",
            ValidationCode::LineFieldMissing => "line_field_missing",
            ValidationCode::LineFieldNotInteger => "line_field_not_integer",
            ValidationCode::StartLineBelowOne => "start_line_below_one",
            ValidationCode::EndLineBelowOne => "end_line_below_one",
            ValidationCode::EndLineBeforeStart => "end_line_before_start",
            ValidationCode::AfterLineNegative => "after_line_negative",
            ValidationCode::ExpectedLinesMissing => "expected_lines_missing",
            ValidationCode::ExpectedLinesLengthMismatch => "expected_lines_length_mismatch",
            ValidationCode::NewLinesMissing => "new_lines_missing",
            ValidationCode::NewLinesEmpty => "new_lines_empty",
            ValidationCode::NewLinesOnDelete => "new_lines_on_delete",
            ValidationCode::LineContainsNewline => "line_contains_newline",
            ValidationCode::ChangesOutOfOrder => "changes_out_of_order",
            ValidationCode::ChangesOverlap => "changes_overlap",
            ValidationCode::Internal => "internal_error",
        }
    }
}

/// One thing wrong with a batch, located as precisely as the batch allows;
/// serialized as is into the result document's `errors` (absent members
/// left out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationError {
    /// What is wrong.
    pub code: ValidationCode,
    /// A human-readable sentence, prefixed with the location (`files[0].changes[2]: …`).
    pub message: String,
    /// Index into `files`, when the error is inside a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_index: Option<usize>,
    /// That file's `docPath`, when it is a string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc_path: Option<String>,
    /// Index into that file's `changes`, when the error is inside a change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_index: Option<usize>,
    /// That change's `changeKey`, when it is a string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_key: Option<String>,
    /// The field at fault (for `unknown_field`: the unknown name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// For `line_contains_newline`: the index of the entry in its array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_index: Option<usize>,
    /// For `duplicate_doc_path`: the file where the docPath first appeared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_file_index: Option<usize>,
    /// For ordering errors: the earlier change this one collides with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_change_index: Option<usize>,
    /// For `expected_lines_length_mismatch`: lines in the range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_count: Option<u64>,
    /// For `expected_lines_length_mismatch`: entries given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_count: Option<u64>,
}

impl ValidationError {
    /// The error as one object of the result document's `errors` array.
    pub fn to_json(&self) -> Value {
        crate::tools::wire::document(self)
    }
}

const BATCH_FIELDS: &[&str] = &["batchId", "batchKey", "batchLabel", "files"];
const FILE_FIELDS: &[&str] = &[
    "filePatchId",
    "fileKey",
    "docPath",
    "originalSha256",
    "fileLabel",
    "changes",
];
const CHANGE_FIELDS: &[&str] = &[
    "changeId",
    "changeKey",
    "operation",
    "description",
    "afterLine",
    "startLine",
    "endLine",
    "expectedOriginalLines",
    "newLines",
];

/// Where in the batch an error is.
#[derive(Clone, Copy, Default)]
struct Loc<'a> {
    file_index: Option<usize>,
    doc_path: Option<&'a str>,
    change_index: Option<usize>,
    change_key: Option<&'a str>,
}

#[derive(Default)]
struct Errors(Vec<ValidationError>);

impl Errors {
    fn push(
        &mut self,
        loc: Loc<'_>,
        code: ValidationCode,
        field: Option<&str>,
        message: String,
    ) -> &mut ValidationError {
        let prefix = match (loc.file_index, loc.change_index) {
            (Some(f), Some(c)) => format!("files[{f}].changes[{c}]: "),
            (Some(f), None) => format!("files[{f}]: "),
            _ => String::new(),
        };
        self.0.push(ValidationError {
            code,
            message: format!("{prefix}{message}"),
            file_index: loc.file_index,
            doc_path: loc.doc_path.map(str::to_string),
            change_index: loc.change_index,
            change_key: loc.change_key.map(str::to_string),
            field: field.map(str::to_string),
            line_index: None,
            related_file_index: None,
            related_change_index: None,
            expected_count: None,
            actual_count: None,
        });
        // Just pushed: the vector is not empty.
        let last = self.0.len() - 1;
        &mut self.0[last]
    }
}

/// A field's value, with JSON `null` read as absent.
fn get<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn unknown_fields(
    obj: &Map<String, Value>,
    allowed: &[&str],
    what: &str,
    loc: Loc<'_>,
    errs: &mut Errors,
) {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            errs.push(
                loc,
                ValidationCode::UnknownField,
                Some(key),
                format!(
                    "unknown field {key:?} in {what} (allowed: {})",
                    allowed.join(", ")
                ),
            );
        }
    }
}

/// An optional string field (keys, labels, description).
fn opt_string(
    obj: &Map<String, Value>,
    key: &str,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> Result<Option<String>, ()> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => {
            errs.push(
                loc,
                ValidationCode::FieldWrongType,
                Some(key),
                format!("{key} must be a string, got {}", type_name(other)),
            );
            Err(())
        }
    }
}

/// A required string field.
fn req_string<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    missing: ValidationCode,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> Option<&'v str> {
    match get(obj, key) {
        None => {
            errs.push(loc, missing, Some(key), format!("{key} is required"));
            None
        }
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            errs.push(
                loc,
                ValidationCode::FieldWrongType,
                Some(key),
                format!("{key} must be a string, got {}", type_name(other)),
            );
            None
        }
    }
}

/// A required array field.
fn req_array<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    missing: ValidationCode,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> Option<&'v Vec<Value>> {
    match get(obj, key) {
        None => {
            errs.push(loc, missing, Some(key), format!("{key} is required"));
            None
        }
        Some(Value::Array(a)) => Some(a),
        Some(other) => {
            errs.push(
                loc,
                ValidationCode::FieldWrongType,
                Some(key),
                format!("{key} must be an array, got {}", type_name(other)),
            );
            None
        }
    }
}

/// A JSON number that is an integer (`3` yes, `3.0` no), widened so that
/// every i64 and u64 fits.
fn as_integer(v: &Value) -> Option<i128> {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
}

/// A required line-number field.
fn line_field(
    obj: &Map<String, Value>,
    key: &str,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> Option<i128> {
    let Some(v) = get(obj, key) else {
        errs.push(
            loc,
            ValidationCode::LineFieldMissing,
            Some(key),
            format!("{key} is required"),
        );
        return None;
    };
    let n = as_integer(v);
    if n.is_none() {
        errs.push(
            loc,
            ValidationCode::LineFieldNotInteger,
            Some(key),
            format!("{key} must be an integer, got {v}"),
        );
    }
    n
}

/// The `newLines` of an insert or a replace: required, each line without a
/// `\n` and not ending in `\r`.
fn new_lines(obj: &Map<String, Value>, loc: Loc<'_>, errs: &mut Errors) -> Option<Vec<String>> {
    line_array(
        obj,
        "newLines",
        ValidationCode::NewLinesMissing,
        true,
        loc,
        errs,
    )
}

/// A required array of line strings; `forbid_trailing_cr` for `newLines`.
fn line_array(
    obj: &Map<String, Value>,
    key: &str,
    missing: ValidationCode,
    forbid_trailing_cr: bool,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> Option<Vec<String>> {
    let arr = req_array(obj, key, missing, loc, errs)?;
    let mut out = Vec::with_capacity(arr.len());
    let mut ok = true;
    for (i, v) in arr.iter().enumerate() {
        match v {
            Value::String(s) => {
                if s.contains('\n') || (forbid_trailing_cr && s.ends_with('\r')) {
                    let e = errs.push(
                        loc,
                        ValidationCode::LineContainsNewline,
                        Some(key),
                        format!(
                            "{key}[{i}] contains a line terminator; each entry is one whole line without its ending"
                        ),
                    );
                    e.line_index = Some(i);
                    ok = false;
                }
                out.push(s.clone());
            }
            other => {
                let e = errs.push(
                    loc,
                    ValidationCode::FieldWrongType,
                    Some(key),
                    format!("{key}[{i}] must be a string, got {}", type_name(other)),
                );
                e.line_index = Some(i);
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

fn not_allowed(
    obj: &Map<String, Value>,
    fields: &[&str],
    op: &str,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> bool {
    let mut ok = true;
    for f in fields {
        if get(obj, f).is_some() {
            let code = if *f == "newLines" {
                ValidationCode::NewLinesOnDelete
            } else {
                ValidationCode::FieldNotAllowed
            };
            errs.push(loc, code, Some(f), format!("{f} is not allowed on a {op}"));
            ok = false;
        }
    }
    ok
}

/// What one change yields: its position (when its line fields were
/// readable, for the ordering check) and the change (when it was all valid).
struct Parsed {
    position: Option<Position>,
    change: Option<LineChange>,
}

fn change(v: &Value, loc: Loc<'_>, errs: &mut Errors) -> Parsed {
    let failed = Parsed {
        position: None,
        change: None,
    };
    let Some(obj) = v.as_object() else {
        errs.push(
            loc,
            ValidationCode::ChangeNotObject,
            None,
            format!("a change must be an object, got {}", type_name(v)),
        );
        return failed;
    };
    let key_value = get(obj, "changeKey").and_then(Value::as_str);
    let loc = Loc {
        change_key: key_value,
        ..loc
    };
    let before = errs.0.len();
    unknown_fields(obj, CHANGE_FIELDS, "a change", loc, errs);
    let change_key = opt_string(obj, "changeKey", loc, errs);
    let description = opt_string(obj, "description", loc, errs);
    let Some(op) = req_string(
        obj,
        "operation",
        ValidationCode::OperationMissing,
        loc,
        errs,
    ) else {
        return failed;
    };
    let (position, op) = match op {
        "insert" => insert(obj, loc, errs),
        "replace" | "delete" => replace_or_delete(obj, op, loc, errs),
        other => {
            errs.push(
                loc,
                ValidationCode::UnknownOperation,
                Some("operation"),
                format!("operation {other:?} is not one of \"insert\", \"replace\", \"delete\""),
            );
            return failed;
        }
    };
    let clean = errs.0.len() == before;
    let change = match (clean, op, change_key, description) {
        (true, Some(op), Ok(change_key), Ok(description)) => Some(LineChange {
            change_id: new_id("chg"),
            change_key,
            description,
            op,
        }),
        _ => None,
    };
    Parsed { position, change }
}

/// A line field's value when it is at least `min`; else the error `code`
/// (`None` in, from an unreadable field, is `None` out with no new error).
fn at_least(
    value: Option<i128>,
    min: i128,
    field: &'static str,
    code: ValidationCode,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> Option<u64> {
    let n = value?;
    if n < min {
        errs.push(
            loc,
            code,
            Some(field),
            format!("{field} must be {min} or more, got {n}"),
        );
        return None;
    }
    u64::try_from(n).ok()
}

/// The required line fields of an operation, each with its least value
/// and the error below it: all are read first (missing, not an integer),
/// then each readable one is held to its least, so the errors come in that
/// order whatever the operation.
fn line_fields<const N: usize>(
    obj: &Map<String, Value>,
    fields: [(&'static str, i128, ValidationCode); N],
    loc: Loc<'_>,
    errs: &mut Errors,
) -> [Option<u64>; N] {
    let mut read = fields
        .map(|(key, ..)| line_field(obj, key, loc, errs))
        .into_iter();
    fields.map(|(key, min, code)| at_least(read.next().flatten(), min, key, code, loc, errs))
}

/// The fields of an insert: where it goes (when `afterLine` was readable)
/// and the operation (when all were valid).
fn insert(
    obj: &Map<String, Value>,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> (Option<Position>, Option<LineOp>) {
    let op = "insert";
    not_allowed(
        obj,
        &["startLine", "endLine", "expectedOriginalLines"],
        op,
        loc,
        errs,
    );
    let [after] = line_fields(
        obj,
        [("afterLine", 0, ValidationCode::AfterLineNegative)],
        loc,
        errs,
    );
    let new_lines = new_lines(obj, loc, errs).and_then(|lines| {
        if lines.is_empty() {
            errs.push(
                loc,
                ValidationCode::NewLinesEmpty,
                Some("newLines"),
                "newLines of an insert must have at least one line".to_string(),
            );
            None
        } else {
            Some(lines)
        }
    });
    let op = match (after, new_lines) {
        (Some(after_line), Some(new_lines)) => Some(LineOp::Insert {
            after_line,
            new_lines,
        }),
        _ => None,
    };
    (after.map(Position::insert), op)
}

/// The fields of a replace or a delete (`op`): its range (when both line
/// fields were readable) and the operation (when all were valid).
fn replace_or_delete(
    obj: &Map<String, Value>,
    op: &str,
    loc: Loc<'_>,
    errs: &mut Errors,
) -> (Option<Position>, Option<LineOp>) {
    let is_delete = op == "delete";
    let forbidden: &[&str] = if is_delete {
        &["afterLine", "newLines"]
    } else {
        &["afterLine"]
    };
    not_allowed(obj, forbidden, op, loc, errs);
    let [start, end] = line_fields(
        obj,
        [
            ("startLine", 1, ValidationCode::StartLineBelowOne),
            ("endLine", 1, ValidationCode::EndLineBelowOne),
        ],
        loc,
        errs,
    );
    let range = match (start, end) {
        (Some(s), Some(e)) if e < s => {
            errs.push(
                loc,
                ValidationCode::EndLineBeforeStart,
                Some("endLine"),
                format!("endLine ({e}) is before startLine ({s})"),
            );
            None
        }
        (Some(s), Some(e)) => Some((s, e)),
        _ => None,
    };
    let expected = line_array(
        obj,
        "expectedOriginalLines",
        ValidationCode::ExpectedLinesMissing,
        false,
        loc,
        errs,
    );
    let expected = match (range, expected) {
        (Some((s, e)), Some(lines)) if lines.len() as u64 != e - s + 1 => {
            let want = e - s + 1;
            let err = errs.push(
                loc,
                ValidationCode::ExpectedLinesLengthMismatch,
                Some("expectedOriginalLines"),
                format!(
                    "expectedOriginalLines has {} entries but lines {s}..={e} are {want}",
                    lines.len()
                ),
            );
            err.expected_count = Some(want);
            err.actual_count = Some(lines.len() as u64);
            None
        }
        (_, expected) => expected,
    };
    let op = if is_delete {
        match (range, expected) {
            (Some((start_line, end_line)), Some(expected_original_lines)) => Some(LineOp::Delete {
                start_line,
                end_line,
                expected_original_lines,
            }),
            _ => None,
        }
    } else {
        let new_lines = new_lines(obj, loc, errs);
        match (range, expected, new_lines) {
            (Some((start_line, end_line)), Some(expected_original_lines), Some(new_lines)) => {
                Some(LineOp::Replace {
                    start_line,
                    end_line,
                    expected_original_lines,
                    new_lines,
                })
            }
            _ => None,
        }
    };
    (range.map(|(s, e)| Position::range(s, e)), op)
}

fn file(
    v: &Value,
    index: usize,
    seen: &mut HashMap<String, usize>,
    errs: &mut Errors,
) -> Option<FilePatch> {
    let loc = Loc {
        file_index: Some(index),
        ..Loc::default()
    };
    let Some(obj) = v.as_object() else {
        errs.push(
            loc,
            ValidationCode::FileNotObject,
            None,
            format!("a file patch must be an object, got {}", type_name(v)),
        );
        return None;
    };
    let loc = Loc {
        doc_path: get(obj, "docPath").and_then(Value::as_str),
        ..loc
    };
    let before = errs.0.len();
    unknown_fields(obj, FILE_FIELDS, "a file patch", loc, errs);
    let file_key = opt_string(obj, "fileKey", loc, errs);
    let file_label = opt_string(obj, "fileLabel", loc, errs);
    let doc_path = req_string(obj, "docPath", ValidationCode::DocPathMissing, loc, errs).and_then(|p| {
        if p.trim().is_empty() {
            errs.push(loc, ValidationCode::DocPathEmpty, Some("docPath"), "docPath is empty".to_string());
            return None;
        }
        let mut ok = true;
        if p != p.to_lowercase() {
            errs.push(
                loc,
                ValidationCode::DocPathNotLowercase,
                Some("docPath"),
                format!("docPath {p:?} is not lowercase (docPaths are lowercase identifiers)"),
            );
            ok = false;
        }
        if let Some(&first) = seen.get(p) {
            let e = errs.push(
                loc,
                ValidationCode::DuplicateDocPath,
                Some("docPath"),
                format!("docPath {p:?} already appears in files[{first}]; each docPath may appear once"),
            );
            e.related_file_index = Some(first);
            ok = false;
        } else {
            seen.insert(p.to_string(), index);
        }
        ok.then(|| p.to_string())
    });
    let sha = req_string(
        obj,
        "originalSha256",
        ValidationCode::Sha256Missing,
        loc,
        errs,
    )
    .and_then(|s| {
        if is_sha256_hex(s) {
            Some(s.to_string())
        } else {
            errs.push(
                loc,
                ValidationCode::Sha256Malformed,
                Some("originalSha256"),
                format!("originalSha256 must be 64 hex digits, got {s:?}"),
            );
            None
        }
    });
    let mut changes = Vec::new();
    if let Some(list) = req_array(obj, "changes", ValidationCode::ChangesMissing, loc, errs) {
        if list.is_empty() {
            errs.push(
                loc,
                ValidationCode::ChangesEmpty,
                Some("changes"),
                "changes must not be empty".to_string(),
            );
        }
        let mut order = OrderCheck::default();
        let mut last_ok: Option<usize> = None;
        let mut positions: Vec<(usize, Position)> = Vec::new();
        for (ci, cv) in list.iter().enumerate() {
            let cloc = Loc {
                change_index: Some(ci),
                ..loc
            };
            let parsed = change(cv, cloc, errs);
            if let Some(p) = parsed.position {
                let verdict = order.push(p);
                if verdict != Placement::Clear {
                    // Blame the earlier change this one collides with: the
                    // last one whose key is above (out of order) or whose
                    // frontier reaches past this key (overlap).
                    let related = positions
                        .iter()
                        .rev()
                        .find(|(_, q)| match verdict {
                            Placement::OutOfOrder => q.key > p.key,
                            Placement::Overlap | Placement::Clear => q.frontier > p.key,
                        })
                        .map(|(i, _)| *i)
                        .or(last_ok);
                    let cloc = Loc {
                        change_key: cv.get("changeKey").and_then(Value::as_str),
                        ..cloc
                    };
                    let (code, what) = match verdict {
                        Placement::OutOfOrder => (
                            ValidationCode::ChangesOutOfOrder,
                            "is out of order: changes must run top to bottom (an insert after line k sorts at k + 0.5, a range at its startLine)",
                        ),
                        Placement::Overlap | Placement::Clear => (
                            ValidationCode::ChangesOverlap,
                            "overlaps an earlier change (an insert may sit before or after a range, not inside it; one insert per afterLine)",
                        ),
                    };
                    let e = errs.push(cloc, code, None, format!("this change {what}"));
                    e.related_change_index = related;
                }
                positions.push((ci, p));
                last_ok = Some(ci);
            }
            changes.push(parsed.change);
        }
    }
    if errs.0.len() != before {
        return None;
    }
    Some(FilePatch {
        file_patch_id: new_id("fp"),
        file_key: file_key.ok()?,
        doc_path: doc_path?,
        original_sha256: sha?,
        file_label: file_label.ok()?,
        changes: changes.into_iter().collect::<Option<Vec<_>>>()?,
    })
}

/// Validate a `workspace_write_patch` request (TUL-002 §4–§6) and assign
/// fresh IDs; on failure, every error found.
///
/// Client-supplied `batchId`, `filePatchId` and `changeId` are accepted and
/// ignored (replaced). A field set to `null` counts as absent.
pub fn validate(params: &Value) -> Result<ValidatedBatch, Vec<ValidationError>> {
    let mut errs = Errors::default();
    let loc = Loc::default();
    let Some(obj) = params.as_object() else {
        errs.push(
            loc,
            ValidationCode::BatchNotObject,
            None,
            format!("the batch must be a JSON object, got {}", type_name(params)),
        );
        return Err(errs.0);
    };
    unknown_fields(obj, BATCH_FIELDS, "the batch", loc, &mut errs);
    let batch_key = opt_string(obj, "batchKey", loc, &mut errs);
    let batch_label = opt_string(obj, "batchLabel", loc, &mut errs);
    let mut files = Vec::new();
    if let Some(list) = req_array(obj, "files", ValidationCode::FilesMissing, loc, &mut errs) {
        if list.is_empty() {
            errs.push(
                loc,
                ValidationCode::FilesEmpty,
                Some("files"),
                "files must have at least one file patch".to_string(),
            );
        }
        let mut seen = HashMap::new();
        for (i, v) in list.iter().enumerate() {
            files.push(file(v, i, &mut seen, &mut errs));
        }
    }
    if !errs.0.is_empty() {
        return Err(errs.0);
    }
    match (
        batch_key,
        batch_label,
        files.into_iter().collect::<Option<Vec<_>>>(),
    ) {
        (Ok(batch_key), Ok(batch_label), Some(files)) if !files.is_empty() => Ok(ValidatedBatch {
            batch_id: new_id("batch"),
            batch_key,
            batch_label,
            files,
        }),
        // Every `None`/`Err` above pushed an error, so this arm means a bug
        // in this module; refuse rather than panic.
        _ => Err(vec![ValidationError {
            code: ValidationCode::Internal,
            message: "internal error: the batch failed validation without an error".to_string(),
            file_index: None,
            doc_path: None,
            change_index: None,
            change_key: None,
            field: None,
            line_index: None,
            related_file_index: None,
            related_change_index: None,
            expected_count: None,
            actual_count: None,
        }]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_serialized_code_is_the_wire_code() {
        for code in [
            ValidationCode::AfterLineNegative,
            ValidationCode::BatchNotObject,
            ValidationCode::ChangeNotObject,
            ValidationCode::ChangesEmpty,
            ValidationCode::ChangesMissing,
            ValidationCode::ChangesOutOfOrder,
            ValidationCode::ChangesOverlap,
            ValidationCode::DocPathEmpty,
            ValidationCode::DocPathMissing,
            ValidationCode::DocPathNotLowercase,
            ValidationCode::DuplicateDocPath,
            ValidationCode::EndLineBeforeStart,
            ValidationCode::EndLineBelowOne,
            ValidationCode::ExpectedLinesLengthMismatch,
            ValidationCode::ExpectedLinesMissing,
            ValidationCode::FieldNotAllowed,
            ValidationCode::FieldWrongType,
            ValidationCode::FileNotObject,
            ValidationCode::FilesEmpty,
            ValidationCode::FilesMissing,
            ValidationCode::Internal,
            ValidationCode::LineContainsNewline,
            ValidationCode::LineFieldMissing,
            ValidationCode::LineFieldNotInteger,
            ValidationCode::NewLinesEmpty,
            ValidationCode::NewLinesMissing,
            ValidationCode::NewLinesOnDelete,
            ValidationCode::OperationMissing,
            ValidationCode::Sha256Malformed,
            ValidationCode::Sha256Missing,
            ValidationCode::StartLineBelowOne,
            ValidationCode::UnknownField,
            ValidationCode::UnknownOperation,
        ] {
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(Value::from(code.as_str())),
                "{code:?}"
            );
        }
    }

    const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn batch_with(changes: Value) -> Value {
        json!({"files": [{"docPath": "a.txt", "originalSha256": SHA, "changes": changes}]})
    }

    fn codes(params: &Value) -> Vec<&'static str> {
        match validate(params) {
            Ok(_) => Vec::new(),
            Err(errs) => errs.iter().map(|e| e.code.as_str()).collect(),
        }
    }

    /// The one data-driven helper: a batch and the codes it must produce, in order.
    fn check(params: Value, expected: &[&str]) {
        assert_eq!(codes(&params), expected, "for {params}");
    }

    fn check_changes(changes: Value, expected: &[&str]) {
        check(batch_with(changes), expected);
    }

    #[test]
    fn a_well_formed_batch_validates_and_gets_ids() {
        let b = validate(&json!({
            "batchKey": "k", "batchLabel": "l",
            "files": [{"fileKey": "f", "docPath": "src/a.rs", "originalSha256": SHA.to_uppercase(), "fileLabel": "fl",
                "changes": [
                    {"changeKey": "c1", "operation": "insert", "afterLine": 0, "newLines": ["x"], "description": "d"},
                    {"operation": "replace", "startLine": 1, "endLine": 2, "expectedOriginalLines": ["a", "b"], "newLines": []},
                    {"operation": "delete", "startLine": 3, "endLine": 3, "expectedOriginalLines": [""]}
                ]}]
        }))
        .unwrap();
        assert!(b.batch_id.starts_with("batch-"));
        assert!(b.files[0].file_patch_id.starts_with("fp-"));
        assert_eq!(b.batch_key.as_deref(), Some("k"));
        assert_eq!(b.files[0].original_sha256, SHA.to_uppercase());
        assert_eq!(b.files[0].changes.len(), 3);
        assert_eq!(b.files[0].changes[0].description.as_deref(), Some("d"));
        assert!(b.files[0]
            .changes
            .iter()
            .all(|c| c.change_id.starts_with("chg-")));
    }

    #[test]
    fn client_ids_are_accepted_and_replaced() {
        let b = validate(&json!({"batchId": "mine", "files": [{"filePatchId": "mine", "docPath": "a", "originalSha256": SHA,
            "changes": [{"changeId": "mine", "operation": "insert", "afterLine": 0, "newLines": ["x"]}]}]}))
        .unwrap();
        assert_ne!(b.batch_id, "mine");
        assert_ne!(b.files[0].file_patch_id, "mine");
        assert_ne!(b.files[0].changes[0].change_id, "mine");
    }

    #[test]
    fn batch_level_rules() {
        check(json!([]), &["batch_not_object"]);
        check(json!(null), &["batch_not_object"]);
        check(json!({}), &["files_missing"]);
        check(json!({"files": null}), &["files_missing"]);
        check(json!({"files": []}), &["files_empty"]);
        check(json!({"files": {}}), &["field_wrong_type"]);
        check(json!({"files": [1]}), &["file_not_object"]);
        check(
            json!({"files": [], "batchKey": 3}),
            &["field_wrong_type", "files_empty"],
        );
        check(
            json!({"files": [], "fles": 1}),
            &["unknown_field", "files_empty"],
        );
    }

    #[test]
    fn file_level_rules() {
        let ok_change = json!([{"operation": "insert", "afterLine": 0, "newLines": ["x"]}]);
        check(
            json!({"files": [{"originalSha256": SHA, "changes": ok_change}]}),
            &["doc_path_missing"],
        );
        check(
            json!({"files": [{"docPath": 7, "originalSha256": SHA, "changes": ok_change}]}),
            &["field_wrong_type"],
        );
        check(
            json!({"files": [{"docPath": " ", "originalSha256": SHA, "changes": ok_change}]}),
            &["doc_path_empty"],
        );
        check(
            json!({"files": [{"docPath": "Src/A.rs", "originalSha256": SHA, "changes": ok_change}]}),
            &["doc_path_not_lowercase"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": SHA, "changes": ok_change},
                              {"docPath": "a", "originalSha256": SHA, "changes": ok_change}]}),
            &["duplicate_doc_path"],
        );
        check(
            json!({"files": [{"docPath": "a", "changes": ok_change}]}),
            &["sha256_missing"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": "abc", "changes": ok_change}]}),
            &["sha256_malformed"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": "g".repeat(64), "changes": ok_change}]}),
            &["sha256_malformed"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": SHA}]}),
            &["changes_missing"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": SHA, "changes": []}]}),
            &["changes_empty"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": SHA, "changes": [[]]}]}),
            &["change_not_object"],
        );
        check(
            json!({"files": [{"docPath": "a", "originalSha256": SHA, "changes": ok_change, "filekey": "x"}]}),
            &["unknown_field"],
        );
    }

    #[test]
    fn change_level_rules() {
        check_changes(
            json!([{"afterLine": 0, "newLines": ["x"]}]),
            &["operation_missing"],
        );
        check_changes(
            json!([{"operation": "Insert", "afterLine": 0, "newLines": ["x"]}]),
            &["unknown_operation"],
        );
        check_changes(
            json!([{"operation": "insert", "newLines": ["x"]}]),
            &["line_field_missing"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 1.0, "newLines": ["x"]}]),
            &["line_field_not_integer"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": "1", "newLines": ["x"]}]),
            &["line_field_not_integer"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 1e30, "newLines": ["x"]}]),
            &["line_field_not_integer"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": -1, "newLines": ["x"]}]),
            &["after_line_negative"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0}]),
            &["new_lines_missing"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": []}]),
            &["new_lines_empty"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": [1]}]),
            &["field_wrong_type"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": "x"}]),
            &["field_wrong_type"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": ["a\nb"]}]),
            &["line_contains_newline"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": ["a\r"]}]),
            &["line_contains_newline"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": ["a\rb"]}]),
            &[],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "startLine": 1, "newLines": ["x"]}]),
            &["field_not_allowed"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newlines": ["x"]}]),
            &["unknown_field", "new_lines_missing"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": ["x"], "descripton": "d"}]),
            &["unknown_field"],
        );
        check_changes(
            json!([{"operation": "insert", "afterLine": 0, "newLines": ["x"], "description": 5}]),
            &["field_wrong_type"],
        );
    }

    #[test]
    fn range_rules() {
        let rep = |s: Value, e: Value, exp: Value| json!([{"operation": "replace", "startLine": s, "endLine": e, "expectedOriginalLines": exp, "newLines": ["n"]}]);
        check_changes(
            rep(json!(0), json!(1), json!(["a", "b"])),
            &["start_line_below_one"],
        );
        check_changes(
            rep(json!(1), json!(0), json!(["a"])),
            &["end_line_below_one"],
        );
        check_changes(
            rep(json!(2), json!(1), json!(["a"])),
            &["end_line_before_start"],
        );
        // Both line fields are read before either is held to its least.
        check_changes(
            rep(json!(0), json!("1"), json!(["a"])),
            &["line_field_not_integer", "start_line_below_one"],
        );
        check_changes(
            rep(json!(1), json!(2), json!(["a"])),
            &["expected_lines_length_mismatch"],
        );
        check_changes(
            rep(json!(1), json!(u64::MAX), json!(["a"])),
            &["expected_lines_length_mismatch"],
        );
        check_changes(
            rep(json!(null), json!(1), json!(["a"])),
            &["line_field_missing"],
        );
        check_changes(
            rep(json!(1), json!(1), json!(["a\nb"])),
            &["line_contains_newline"],
        );
        // a trailing CR may be content of an original line
        check_changes(rep(json!(1), json!(1), json!(["a\r"])), &[]);
        check_changes(
            json!([{"operation": "replace", "startLine": 1, "endLine": 1, "newLines": ["n"]}]),
            &["expected_lines_missing"],
        );
        check_changes(
            json!([{"operation": "replace", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"]}]),
            &["new_lines_missing"],
        );
        check_changes(
            json!([{"operation": "delete", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"], "newLines": []}]),
            &["new_lines_on_delete"],
        );
        check_changes(
            json!([{"operation": "delete", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"], "newLines": null}]),
            &[],
        );
        check_changes(
            json!([{"operation": "delete", "afterLine": 3, "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"]}]),
            &["field_not_allowed"],
        );
    }

    #[test]
    fn ordering_and_overlap_rules() {
        let ins = |k: i64| json!({"operation": "insert", "afterLine": k, "newLines": ["x"]});
        let del = |s: i64, e: i64| {
            let exp: Vec<&str> = (s..=e).map(|_| "l").collect();
            json!({"operation": "delete", "startLine": s, "endLine": e, "expectedOriginalLines": exp})
        };
        check_changes(json!([del(10, 12), del(11, 11)]), &["changes_overlap"]);
        check_changes(json!([del(11, 11), del(10, 12)]), &["changes_out_of_order"]);
        check_changes(json!([ins(3), ins(3)]), &["changes_overlap"]);
        check_changes(json!([ins(4), ins(3)]), &["changes_out_of_order"]);
        check_changes(json!([del(10, 12), ins(11)]), &["changes_overlap"]);
        check_changes(json!([del(10, 12), ins(10)]), &["changes_overlap"]);
        check_changes(json!([ins(9), del(10, 12), ins(12), del(13, 13)]), &[]);
        check_changes(json!([del(10, 12), ins(9)]), &["changes_out_of_order"]);
        check_changes(json!([ins(10), del(10, 12)]), &["changes_out_of_order"]);
        // Every violation is reported, each against the change it collides with.
        let errs = validate(&batch_with(json!([ins(5), ins(5), del(1, 1), ins(7)]))).unwrap_err();
        let got: Vec<_> = errs
            .iter()
            .map(|e| (e.code.as_str(), e.change_index, e.related_change_index))
            .collect();
        assert_eq!(
            got,
            vec![
                ("changes_overlap", Some(1), Some(0)),
                ("changes_out_of_order", Some(2), Some(1)),
            ]
        );
    }

    #[test]
    fn every_error_is_collected_with_its_location() {
        let errs = validate(&json!({
            "files": [
                {"docPath": "A", "originalSha256": "x", "changes": [
                    {"changeKey": "k0", "operation": "delete", "startLine": 0, "endLine": 1},
                    {"operation": "nope"}
                ]},
                {"docPath": "b", "originalSha256": SHA, "changes": []}
            ]
        }))
        .unwrap_err();
        let got: Vec<_> = errs
            .iter()
            .map(|e| {
                (
                    e.code.as_str(),
                    e.file_index,
                    e.change_index,
                    e.change_key.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("doc_path_not_lowercase", Some(0), None, None),
                ("sha256_malformed", Some(0), None, None),
                ("start_line_below_one", Some(0), Some(0), Some("k0")),
                ("expected_lines_missing", Some(0), Some(0), Some("k0")),
                ("unknown_operation", Some(0), Some(1), None),
                ("changes_empty", Some(1), None, None),
            ]
        );
        assert_eq!(errs[0].doc_path.as_deref(), Some("A"));
        assert!(
            errs[2].message.starts_with("files[0].changes[0]: "),
            "{}",
            errs[2].message
        );
        let j = errs[2].to_json();
        assert_eq!(j["code"], "start_line_below_one");
        assert_eq!(j["fileIndex"], 0);
        assert_eq!(j["changeIndex"], 0);
        assert_eq!(j["changeKey"], "k0");
        assert_eq!(j["field"], "startLine");
    }

    #[test]
    fn the_echo_validates_again() {
        let b = validate(&json!({"batchKey": "", "files": [{"docPath": "a", "originalSha256": SHA, "fileKey": "f",
            "changes": [{"operation": "replace", "startLine": 2, "endLine": 2, "expectedOriginalLines": [""], "newLines": ["é"], "changeKey": "c"}]}]}))
        .unwrap();
        let again = validate(&b.to_json()).unwrap();
        assert_eq!(again.batch_key, b.batch_key);
        assert_eq!(again.files[0].changes[0].op, b.files[0].changes[0].op);
        assert_eq!(
            again.files[0].changes[0].change_key,
            b.files[0].changes[0].change_key
        );
    }

    #[test]
    fn null_optional_fields_count_as_absent() {
        let b = validate(&json!({"batchKey": null, "files": [{"docPath": "a", "originalSha256": SHA, "fileLabel": null,
            "changes": [{"operation": "insert", "afterLine": 0, "newLines": ["x"], "description": null}]}]}))
        .unwrap();
        assert_eq!(b.batch_key, None);
        assert_eq!(b.files[0].file_label, None);
        assert_eq!(b.files[0].changes[0].description, None);
    }
}
