//! `get_patch_change` (TUL-002 §7.1, §11): a stored `workspace_write_patch`
//! batch, file patch or change by its canonical ID, with its derived
//! unified diff (display only; see `crate::store::unified_diff`).
//!
//! `batchId` is required; `filePatchId` or `changeId` (not both) narrows
//! the answer to one file patch or one change of that batch. An ID that is
//! not of the engine's form (`batch-`/`fp-`/`chg-` and 32 lowercase hex
//! digits) is `invalid_params`; a well-formed ID the store does not hold,
//! or one that belongs to another batch, is `not_found`; a call without a
//! store is `store_not_configured` (docs/clarifications.md C-store-*).
//!
//! Cost: one lookup of the batch by its key in the store, then linear in
//! the batch's files and changes (finding the ID, building the diff).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::call::{ToolCall, ToolOutcome};
use crate::store::{unified_diff, StoredBatch, StoredChange, StoredFilePatch};
use crate::tools::wire::{document, Failed, Succeeded};
use crate::tools::{guarded, OpenFs};

/// The params of `get_patch_change`.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "get_patch_change params")]
// "Not both filePatchId and changeId" is the parser's alone: the tool
// formats of the catalog (MCP, OpenAI) allow no top-level `not`.
pub struct GetPatchChangeParams {
    /// The batch's canonical ID, from a `workspace_write_patch` result.
    #[schemars(regex(pattern = r"^batch-[0-9a-f]{32}$"))]
    pub batch_id: String,
    /// Only this file patch of the batch (not with `changeId`).
    #[schemars(regex(pattern = r"^fp-[0-9a-f]{32}$"))]
    pub file_patch_id: Option<String>,
    /// Only this change of the batch (not with `filePatchId`).
    #[schemars(regex(pattern = r"^chg-[0-9a-f]{32}$"))]
    pub change_id: Option<String>,
}

/// What `get_patch_change` answers.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "get_patch_change result")]
pub enum GetPatchChangeDocument {
    /// The stored batch, file patch or change.
    Found(Box<Found>),
    /// Why nothing is returned.
    Refused(Refused),
}

/// A stored item and its diff. Exactly one of `batch`, `filePatch` and
/// `change` is present: the one the params asked for.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// Always `true`.
    pub success: Succeeded,
    /// The batch the item belongs to.
    pub batch_id: String,
    /// The whole batch (only `batchId` was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<StoredBatch>,
    /// One file patch (`filePatchId` was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_patch: Option<StoredFilePatch>,
    /// One change (`changeId` was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<ChangeInFile>,
    /// The unified diff of what was asked for (every file of a batch, the
    /// file patch, or the one change), derived from the stored changes with
    /// no context lines; display only.
    pub diff: String,
}

/// A change with the file patch it belongs to.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeInFile {
    /// Its file patch's ID.
    pub file_patch_id: String,
    /// Its file's docPath.
    pub doc_path: String,
    /// True when its file was written (a batch is applied whole or not at all).
    pub applied: bool,
    /// The change as stored.
    #[serde(flatten)]
    pub change: StoredChange,
}

/// The refusal document.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Refused {
    /// Always `false`.
    pub success: Failed,
    /// What went wrong.
    pub error: RefusalError,
}

/// Why nothing was returned.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RefusalError {
    /// The error kind.
    pub kind: RefusalKind,
    /// What happened, naming the ID.
    pub message: String,
}

/// The error kinds of `get_patch_change`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// The params are not an object of the documented shape, an ID is not
    /// of the engine's form, or both `filePatchId` and `changeId` were given.
    InvalidParams,
    /// No stored batch has this ID, or the file patch or change is not in it.
    NotFound,
    /// The executor was started without a store: nothing is recorded.
    StoreNotConfigured,
    /// The store could not be read.
    StoreError,
    /// A bug in the engine.
    InternalError,
}

/// Run one `get_patch_change` call. It opens no workspace: the store is
/// the session's.
pub fn run_with(call: &ToolCall<'_>, _open: &OpenFs<'_>) -> ToolOutcome {
    guarded(
        || render(answer(call)),
        || {
            render(Err((
                RefusalKind::InternalError,
                "internal error: the engine failed unexpectedly (a bug)".into(),
            )))
        },
    )
}

type Answer = Result<Found, (RefusalKind, String)>;

fn render(answer: Answer) -> ToolOutcome {
    match answer {
        Ok(found) => ToolOutcome {
            success: true,
            result: document(&GetPatchChangeDocument::Found(Box::new(found))),
            error: None,
        },
        Err((kind, message)) => ToolOutcome {
            success: false,
            result: document(&GetPatchChangeDocument::Refused(Refused {
                success: Failed::default(),
                error: RefusalError {
                    kind,
                    message: message.clone(),
                },
            })),
            error: Some(message),
        },
    }
}

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Query {
    Batch,
    FilePatch(String),
    Change(String),
}

fn is_id(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hex| {
            hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
}

fn parse(params: &Value) -> Result<(String, Query), String> {
    let Some(object) = params.as_object() else {
        return Err("the params must be an object with batchId".into());
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "batchId" | "filePatchId" | "changeId"))
    {
        return Err(format!(
            "unknown field {unknown:?} (expected batchId and optionally filePatchId or changeId)"
        ));
    }
    let id = |name: &str, prefix: &str| -> Result<Option<String>, String> {
        match object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if is_id(s, prefix) => Ok(Some(s.clone())),
            Some(Value::String(s)) => Err(format!(
                "{name} {s:?} is not an ID of this engine ({prefix}- and 32 lowercase hex digits)"
            )),
            Some(other) => Err(format!("{name} must be a string, not {other}")),
        }
    };
    let batch_id = id("batchId", "batch")?.ok_or("batchId is required")?;
    let query = match (id("filePatchId", "fp")?, id("changeId", "chg")?) {
        (None, None) => Query::Batch,
        (Some(fp), None) => Query::FilePatch(fp),
        (None, Some(chg)) => Query::Change(chg),
        (Some(_), Some(_)) => return Err("give filePatchId or changeId, not both".into()),
    };
    Ok((batch_id, query))
}

fn answer(call: &ToolCall<'_>) -> Answer {
    let (batch_id, query) =
        parse(call.params).map_err(|message| (RefusalKind::InvalidParams, message))?;
    let Some(store) = call.session.store.as_deref() else {
        return Err((
            RefusalKind::StoreNotConfigured,
            "no patch store is configured for this executor: nothing was recorded \
             (start it with --store PATH)"
                .into(),
        ));
    };
    let batch = store
        .batch(&batch_id)
        .map_err(|e| {
            (
                RefusalKind::StoreError,
                format!("the store could not be read: {e}"),
            )
        })?
        .ok_or_else(|| {
            (
                RefusalKind::NotFound,
                format!("no batch {batch_id} is stored"),
            )
        })?;
    select(batch, query)
}

/// The part of `batch` that `query` names, with its diff.
fn select(batch: StoredBatch, query: Query) -> Answer {
    let batch_id = batch.batch_id.clone();
    match query {
        Query::Batch => {
            let diff = batch.files.iter().map(|f| unified_diff(f, None)).collect();
            Ok(Found {
                success: Succeeded::default(),
                batch_id,
                batch: Some(batch),
                file_patch: None,
                change: None,
                diff,
            })
        }
        Query::FilePatch(id) => {
            let file = batch
                .files
                .into_iter()
                .find(|f| f.file_patch_id == id)
                .ok_or_else(|| {
                    (
                        RefusalKind::NotFound,
                        format!("batch {batch_id} has no file patch {id}"),
                    )
                })?;
            Ok(Found {
                success: Succeeded::default(),
                batch_id,
                batch: None,
                diff: unified_diff(&file, None),
                file_patch: Some(file),
                change: None,
            })
        }
        Query::Change(id) => {
            for mut file in batch.files {
                if let Some(i) = file.changes.iter().position(|c| c.change_id == id) {
                    let diff = unified_diff(&file, Some(i));
                    let change = file.changes.swap_remove(i);
                    return Ok(Found {
                        success: Succeeded::default(),
                        batch_id,
                        batch: None,
                        file_patch: None,
                        change: Some(ChangeInFile {
                            file_patch_id: file.file_patch_id,
                            doc_path: file.doc_path,
                            applied: file.applied,
                            change,
                        }),
                        diff,
                    });
                }
            }
            Err((
                RefusalKind::NotFound,
                format!("batch {batch_id} has no change {id}"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const B: &str = "batch-0123456789abcdef0123456789abcdef";
    const FP: &str = "fp-0123456789abcdef0123456789abcdef";
    const CHG: &str = "chg-0123456789abcdef0123456789abcdef";

    #[test]
    fn ids_of_the_engine_form_parse_and_others_are_invalid_params() {
        assert_eq!(parse(&json!({"batchId": B})), Ok((B.into(), Query::Batch)));
        assert_eq!(
            parse(&json!({"batchId": B, "filePatchId": FP})),
            Ok((B.into(), Query::FilePatch(FP.into())))
        );
        assert_eq!(
            parse(&json!({"batchId": B, "changeId": CHG, "filePatchId": null})),
            Ok((B.into(), Query::Change(CHG.into())))
        );
        for bad in [
            json!({}),
            json!([]),
            json!({"batchId": "batch-XYZ"}),
            json!({"batchId": B.to_uppercase()}),
            json!({"batchId": FP}),
            json!({"batchId": 7}),
            json!({"batchId": B, "changeId": FP}),
            json!({"batchId": B, "changeId": CHG, "filePatchId": FP}),
            json!({"batchId": B, "extra": 1}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
    }
}
