//! The seam to a persistent patch store: the engine records every call of a
//! writing tool through [`PatchStore`] and `get_patch_change` reads batches
//! back through it, without the engine depending on a database.
//!
//! The engine owns the *shape* of what is stored ([`StoredBatch`],
//! [`StoredFilePatch`], [`StoredChange`], also the result types of
//! `get_patch_change`) and the derived unified diff (`unified_diff`); the
//! crate `patchspec-store` implements the trait on SQLite. A
//! [`crate::call::Session`] without a store records nothing.
//!
//! The diff is derived from the stored changes alone: the store keeps no
//! file content, so a hunk has no context lines (`diff -U0` form), and its
//! `-` lines are the change's `expectedOriginalLines`, which the engine
//! verified byte for byte against the file before applying.

use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A copy of a result document without the members that quote the
/// workspace's files: every `actual` (the file's side of a mismatch) and
/// every `text` (a matched or nearby line of the file). The store keeps
/// only what the calls carried (docs/security.md); the caller still gets
/// the whole document.
pub(crate) fn without_file_content(result: &Value) -> Value {
    match result {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(name, _)| !matches!(name.as_str(), "actual" | "text"))
                .map(|(name, value)| (name.clone(), without_file_content(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_file_content).collect()),
        other => other.clone(),
    }
}

/// One call of a writing tool, as the store receives it.
#[derive(Clone, Copy, Debug)]
pub struct RecordedCall<'a> {
    /// The transactions this call began ([`PatchStore::begin`]): recording
    /// the call settles them, in the same store transaction.
    pub transactions: &'a [String],
    /// The tool's wire name.
    pub tool: &'a str,
    /// The caller's call id.
    pub call_id: &'a str,
    /// The params as sent; `None` for a call filed as a [`batch`](Self::batch),
    /// whose request the batch holds.
    pub params: Option<&'a Value>,
    /// Did the tool do what was asked?
    pub success: bool,
    /// What the store keeps of the result document: the document without
    /// the lines it quotes from the workspace's files (docs/security.md);
    /// for a call filed as a batch, what the batch does not hold of it
    /// (its `errors`).
    pub result: &'a Value,
    /// The batch a `workspace_write_patch` call sent and what became of each
    /// file (the tool's registry entry makes it from its own document);
    /// `None` for every other call.
    pub batch: Option<&'a StoredBatch>,
    /// How long the tool ran.
    pub duration: Duration,
}

/// Why the store could not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    /// What failed, for people (names the store's path where it helps).
    pub message: String,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

/// A commit a writing call is about to make, recorded before its first
/// visible change ([`PatchStore::begin`]).
#[derive(Clone, Copy, Debug)]
pub struct PendingCommit<'a> {
    /// The commit's transaction (its journal folder's name).
    pub transaction: &'a str,
    /// The workspace's canonical path.
    pub workspace: &'a str,
    /// The tool's wire name.
    pub tool: &'a str,
    /// The caller's call id.
    pub call_id: &'a str,
}

/// A commit begun by a call whose record never came ([`PatchStore::pending`]):
/// its process died, or its store write failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The commit's transaction.
    pub transaction: String,
    /// The tool's wire name.
    pub tool: String,
    /// The caller's call id.
    pub call_id: String,
}

/// A persistent record of the writing tools' calls.
///
/// Every commit of a writing call is recorded in two steps, so that a
/// change is never applied without its record nor recorded as applied when
/// it was not (docs/clarifications.md, C-store-what): [`begin`] before the
/// commit's first visible change, [`record`] once the call has its outcome.
/// A commit whose call died between them stays [`pending`] until the next
/// writing call on its workspace [`settle`]s it from what the journal shows.
///
/// Implementations must be safe to share between threads and between
/// processes on one store, write each call in one transaction, and never
/// panic on what they read back.
///
/// [`begin`]: PatchStore::begin
/// [`record`]: PatchStore::record
/// [`pending`]: PatchStore::pending
/// [`settle`]: PatchStore::settle
pub trait PatchStore: Send + Sync + fmt::Debug {
    /// Record one call of a writing tool and its outcome, and settle the
    /// pending commits it began (`call.transactions`), in one transaction.
    fn record(&self, call: &RecordedCall<'_>) -> Result<(), StoreError>;
    /// Record that a commit is about to change the workspace. An error
    /// refuses the commit (nothing is written).
    fn begin(&self, commit: &PendingCommit<'_>) -> Result<(), StoreError>;
    /// The commits begun on `workspace` whose call was never recorded.
    fn pending(&self, workspace: &str) -> Result<Vec<Pending>, StoreError>;
    /// Record a pending commit's call as the journal shows it ended:
    /// `applied` when its commit point passed, else not applied (rolled
    /// back or never begun); the pending entry goes, in one transaction.
    fn settle(&self, pending: &Pending, applied: bool) -> Result<(), StoreError>;
    /// The batch stored under `batch_id`, whole; `None` when none is.
    fn batch(&self, batch_id: &str) -> Result<Option<StoredBatch>, StoreError>;
}

/// A stored `workspace_write_patch` batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredBatch {
    /// The canonical batch ID (`batch-<32 hex>`).
    pub batch_id: String,
    /// The caller's `batchKey`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_key: Option<String>,
    /// The caller's `batchLabel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_label: Option<String>,
    /// The id of the call that sent the batch.
    pub call_id: String,
    /// When it was stored: milliseconds since the Unix epoch.
    pub recorded_at_ms: u64,
    /// True when every file was applied and written.
    pub applied: bool,
    /// The files, in request order.
    pub files: Vec<StoredFilePatch>,
}

/// A stored file patch of a batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredFilePatch {
    /// The canonical file patch ID (`fp-<32 hex>`).
    pub file_patch_id: String,
    /// The caller's `fileKey`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_key: Option<String>,
    /// The caller's `fileLabel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_label: Option<String>,
    /// The docPath as sent.
    pub doc_path: String,
    /// The workspace path it resolved to, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The SHA-256 before: `originalSha256` as sent (checked equal to the
    /// file's when `applied`).
    pub original_sha256: String,
    /// The SHA-256 after, when applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_sha256: Option<String>,
    /// True when this file was written.
    pub applied: bool,
    /// This file's error code, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// This file's error message, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Why it was not written although it had no error of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_because: Option<String>,
    /// The changes, in request order.
    pub changes: Vec<StoredChange>,
}

/// A stored change of a file patch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredChange {
    /// The canonical change ID (`chg-<32 hex>`).
    pub change_id: String,
    /// The caller's `changeKey`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_key: Option<String>,
    /// `insert`, `replace` or `delete`.
    #[schemars(extend("enum" = ["insert", "replace", "delete"]))]
    pub operation: String,
    /// The caller's `description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
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
    pub expected_original_lines: Option<Vec<String>>,
    /// An insert's or replace's new lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_lines: Option<Vec<String>>,
}

impl StoredChange {
    /// The original lines this change removes and the lines it writes.
    fn sides(&self) -> (&[String], &[String]) {
        (
            self.expected_original_lines.as_deref().unwrap_or_default(),
            self.new_lines.as_deref().unwrap_or_default(),
        )
    }

    /// The first original line the change touches (for an insert: the line
    /// after its anchor) and how many it removes.
    fn old_range(&self) -> (u64, u64) {
        match self.operation.as_str() {
            "insert" => (self.after_line.unwrap_or(0).saturating_add(1), 0),
            _ => {
                let start = self.start_line.unwrap_or(1);
                (start, self.sides().0.len() as u64)
            }
        }
    }
}

/// The unified diff of a file patch's changes (`--- a/docPath`, `+++
/// b/docPath`, one zero-context hunk per change), or of the changes named
/// by `only` (indexes into `file.changes`; the hunks keep the new-side line
/// numbers the whole patch gives them). Empty when the file patch has no
/// change. Linear in the changes' lines.
pub(crate) fn unified_diff(file: &StoredFilePatch, only: Option<usize>) -> String {
    let mut out = format!("--- a/{}\n+++ b/{}\n", file.doc_path, file.doc_path);
    // How far the new side's line numbers have moved from the old side's.
    let mut shift: i128 = 0;
    for (i, change) in file.changes.iter().enumerate() {
        let (removed, added) = change.sides();
        let (old_start, old_count) = change.old_range();
        let new_count = added.len() as u64;
        if only.is_none_or(|o| o == i) {
            // A zero-length side names the line before it (diff -U0's rule).
            let old_at = if old_count == 0 {
                old_start.saturating_sub(1)
            } else {
                old_start
            };
            let new_first = i128::from(old_start) + shift;
            let new_at = if new_count == 0 {
                new_first - 1
            } else {
                new_first
            };
            out.push_str(&format!(
                "@@ -{old_at},{old_count} +{},{new_count} @@\n",
                new_at.max(0)
            ));
            for line in removed {
                out.push('-');
                out.push_str(line);
                out.push('\n');
            }
            for line in added {
                out.push('+');
                out.push_str(line);
                out.push('\n');
            }
        }
        shift += i128::from(new_count) - i128::from(old_count);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(op: &str, at: (u64, u64), old: &[&str], new: &[&str]) -> StoredChange {
        let lines = |l: &[&str]| Some(l.iter().map(|s| s.to_string()).collect());
        StoredChange {
            change_id: "chg-0".into(),
            change_key: None,
            operation: op.into(),
            description: None,
            after_line: (op == "insert").then_some(at.0),
            start_line: (op != "insert").then_some(at.0),
            end_line: (op != "insert").then_some(at.1),
            expected_original_lines: (op != "insert").then(|| lines(old)).flatten(),
            new_lines: (op != "delete").then(|| lines(new)).flatten(),
        }
    }

    fn file(changes: Vec<StoredChange>) -> StoredFilePatch {
        StoredFilePatch {
            file_patch_id: "fp-0".into(),
            file_key: None,
            file_label: None,
            doc_path: "src/a.txt".into(),
            path: None,
            original_sha256: String::new(),
            new_sha256: None,
            applied: true,
            error_code: None,
            error_message: None,
            skipped_because: None,
            changes,
        }
    }

    #[test]
    fn hunks_follow_diff_u0_and_shift_the_new_side() {
        // a b c d e → insert X after 1, replace c with Y Z, delete e
        let f = file(vec![
            change("insert", (1, 0), &[], &["X"]),
            change("replace", (3, 3), &["c"], &["Y", "Z"]),
            change("delete", (5, 5), &["e"], &[]),
        ]);
        assert_eq!(
            unified_diff(&f, None),
            "--- a/src/a.txt\n+++ b/src/a.txt\n\
             @@ -1,0 +2,1 @@\n+X\n\
             @@ -3,1 +4,2 @@\n-c\n+Y\n+Z\n\
             @@ -5,1 +6,0 @@\n-e\n"
        );
        assert_eq!(
            unified_diff(&f, Some(1)),
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -3,1 +4,2 @@\n-c\n+Y\n+Z\n"
        );
    }

    #[test]
    fn an_insert_at_the_top_and_odd_rows_do_not_underflow() {
        let f = file(vec![change("insert", (0, 0), &[], &["top"])]);
        assert!(unified_diff(&f, None).ends_with("@@ -0,0 +1,1 @@\n+top\n"));
        let mut odd = change("delete", (0, 0), &[], &[]);
        odd.start_line = Some(u64::MAX);
        odd.operation = "bogus".into();
        let _ = unified_diff(&file(vec![odd.clone(), odd]), None);
    }
}
