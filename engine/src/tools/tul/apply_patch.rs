//! `apply_patch`: the envelope tool (patch-envelope.md). A call is planned
//! whole — envelope parsed, every path guarded, every stale check made,
//! every hunk located — before the first byte is written; then the plan is
//! committed through `crate::commit`, all-or-nothing (`atomic: true`, the
//! default) or section by section (`atomic: false`).
//!
//! Params: `patch` (string, required), `expectedSha256ByPath` (object,
//! optional), `atomic` (bool, default true). Other keys are ignored, so the
//! WebSocket protocol's `projectKey`/`webSocketSessionId` may ride along.
//!
//! Result: `{"success": true, "data": {"changedFiles": [...], "atomic": b}}`
//! or `{"success": false, "error": {"kind", "message", "details"}, "data":
//! {"changedFiles": [...], "atomic": b}}` — `data` on failure is a patchspec
//! extension carrying the partial `changedFiles` of a non-atomic run.
//!
//! Refusals carry what an agent needs to retry (extensions, failure path
//! only): a `diagnosis` of a hunk that did not apply (`crate::diagnose`),
//! and `details.hint` with its stable companions (`similarPaths`,
//! `looksLike`, `relativePath`: `crate::hints`); the wire `message` ends
//! with `; hint: <hint>`. Their costs are bounded where they are computed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::commit::{commit, Change};
use crate::content::{Content, Splice, Splicing};
use crate::diagnose;
use crate::call::{ToolCall, ToolOutcome};
use crate::envelope::{self, Patch, Section, SectionKind};
pub use crate::error::ErrorKind;
use crate::error::{Reason, ToolError};
use crate::fs::{EntryKind, Fs};
use crate::layout::parent_of;
use crate::hash::{is_sha256_hex, same_digest, sha256_hex};
use crate::hints::{self, Looking};
use crate::matching::{HunkError, HunkFailure, Matcher};
use crate::path_guard::{resolve, GuardOptions, GuardedPath, PathError};
use crate::tools::wire::{Failed, Succeeded};
use crate::tools::{guarded, OpenFs};

#[cfg(feature = "testing")]
pub mod repair;
#[cfg(not(feature = "testing"))]
pub(crate) mod repair;

/// The params of `apply_patch`, as `read_params` reads them (into the
/// patch text and [`ApplyOptions`]). Other keys are ignored; `null` counts as
/// absent.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "apply_patch params")]
pub(crate) struct ApplyPatchParams {
    /// The whole envelope: `*** Begin Patch`, one or more file sections
    /// (`*** Add File: <path>`, `*** Update File: <path>` with `@@` hunks,
    /// `*** Delete File: <path>`, `*** Move File: <from> -> <to>` or an
    /// Update followed by `*** Move to: <path>`), then `*** End Patch`.
    /// Paths are workspace-relative and `/`-separated.
    pub patch: String,
    /// Stale-file guard: path → the lowercase or uppercase hex SHA-256 the
    /// file must have now, or `""` for "this path must not exist". A file
    /// whose hash differs refuses the whole call with `stale_file`.
    pub expected_sha256_by_path: Option<std::collections::BTreeMap<String, ExpectedSha256>>,
    /// `true` (the default): all sections or none. `false`: sections are
    /// committed one by one and the run stops at the first failing one
    /// (`data.changedFiles` lists what was written).
    pub atomic: Option<bool>,
}

/// One value of `expectedSha256ByPath`: 64 hex digits, or `""`.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[schemars(inline)]
pub(crate) struct ExpectedSha256(
    /// 64 hex digits (either case), or `""` for "must not exist".
    #[schemars(regex(pattern = r"^([0-9a-fA-F]{64})?$"))]
    pub String,
);

/// The result document of `apply_patch`: `data` on success and failure
/// alike (on failure a patchspec extension: what a non-atomic run wrote).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "apply_patch result")]
pub(crate) enum ApplyPatchDocument<'a> {
    /// Every section applied.
    Applied {
        /// Always `true` here.
        success: Succeeded,
        /// What changed.
        data: ApplyData<'a>,
    },
    /// The call was refused (atomic: nothing changed) or stopped
    /// (non-atomic: `data.changedFiles` were written).
    Refused {
        /// Always `false` here.
        success: Failed,
        /// Why.
        error: ApplyPatchError<'a>,
        /// What was written before the failure (empty when atomic).
        data: ApplyData<'a>,
    },
}

/// `data` of an `apply_patch` result.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplyData<'a> {
    /// The files changed, in section order.
    pub changed_files: &'a [ChangedFile],
    /// The `atomic` mode the call ran in.
    pub atomic: bool,
}

/// `error` of a refused `apply_patch` call.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub(crate) struct ApplyPatchError<'a> {
    /// The error kind (patch-envelope.md's vocabulary).
    pub kind: ErrorKind,
    /// One line naming the file, the hunk and the reason; ends with
    /// `; hint: …` when `details.hint` is set.
    pub message: String,
    /// Structured details: `path`, `hunkIndex`, `reason`, `line`,
    /// `expected`/`actual`, `diagnosis`, `hint`, `similarPaths`, `repair`,
    /// … (docs/tools.md).
    #[schemars(with = "DetailsSchema")]
    pub details: &'a Map<String, Value>,
}

/// The schema of `error.details`: free-form members (docs/tools.md), of
/// which the extension `repair` is typed. Never built: the wire writes the
/// map itself.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct DetailsSchema {
    /// Extension (docs/diagnostics.md, "Repairs"): the envelope corrected,
    /// present only when exactly one correction of a mechanical mistake
    /// fits the workspace as it is (checked by a dry run). The tool never
    /// applies it; a host may send `patch` as a new call.
    #[serde(default)]
    repair: repair::Repair,
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// What a section did, for `changedFiles` (serialized as is).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChangedFile {
    /// The path as normalised (for a move, the destination).
    pub path: String,
    /// `add`, `update`, `delete` or `move`.
    #[schemars(with = "String", extend("enum" = ["add", "update", "delete", "move"]))]
    pub operation: Operation,
    /// For a move, the source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// What a section of an envelope does to its file (`changedFiles[].operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `*** Add File`.
    Add,
    /// `*** Update File` without a move.
    Update,
    /// `*** Delete File`.
    Delete,
    /// `*** Update File` with `*** Move to`.
    Move,
}

impl Operation {
    /// The wire name: `add`, `update`, `delete` or `move`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Add => "add",
            Operation::Update => "update",
            Operation::Delete => "delete",
            Operation::Move => "move",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that a width (`{:<6}`) applies.
        f.pad(self.as_str())
    }
}

/// How to apply.
#[derive(Clone, Debug)]
pub struct ApplyOptions {
    /// All-or-nothing (true, the default) or section by section.
    pub atomic: bool,
    /// Plan everything, write nothing.
    pub dry_run: bool,
    /// `expectedSha256ByPath`: path → hex digest, or `""` for "must not exist".
    pub expected_sha256: BTreeMap<String, String>,
    /// The workspace's path as the caller names it. Used only for a hint:
    /// an absolute path inside it is refused with its workspace-relative
    /// form suggested (`crate::hints::relative_to_root`).
    pub workspace_root: Option<PathBuf>,
    /// Diagnose a refused hunk (and the hunks of a `stale_file` Update):
    /// `details.diagnosis`, its hint, and the cause in the message
    /// (docs/diagnostics.md). On by default. The fuzzers turn it off on
    /// most inputs: it costs more than the apply it explains, and they
    /// check the apply (docs/fuzzing.md). It also governs the repair
    /// search of a refused envelope (`repair`).
    pub diagnose: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            atomic: true,
            dry_run: false,
            expected_sha256: BTreeMap::new(),
            workspace_root: None,
            diagnose: true,
        }
    }
}

/// The outcome of `apply`: the files changed (or, on a dry run, that would
/// change), in plan order, or the refusal that stopped it.
pub type Applied = Result<Vec<ChangedFile>, Refusal>;

/// Why `apply_patch` stopped, and the sections it had applied by then: with
/// `atomic: true` none (the workspace is as it was), with `atomic: false`
/// the files of the sections before the refused one, which stay changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// Why it stopped: the error kind, its reason and where (boxed: a
    /// refusal is moved through every step of the apply).
    pub error: Box<ToolError>,
    /// The files a non-atomic apply changed before the refusal, in plan
    /// order; empty for an atomic one.
    pub changed_files: Vec<ChangedFile>,
}

impl Refusal {
    /// A refusal before anything was applied.
    fn of(error: ToolError) -> Refusal {
        Refusal {
            error: Box::new(error),
            changed_files: Vec::new(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for Refusal {}

/// Run one call from its wire params, opening the workspace with `open`. A panic (a bug) is
/// `command_failed` with reason `internal_error`.
pub(crate) fn run_with(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    guarded(|| execute(call, open), || internal_error(call))
}

fn internal_error(call: &ToolCall<'_>) -> ToolOutcome {
    let atomic = call
        .params
        .get("atomic")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let error = ToolError::new(
        ErrorKind::CommandFailed,
        "internal error: the engine failed unexpectedly (a bug); the workspace may be partly written",
    )
    .because(Reason::InternalError);
    ToolOutcome::of_apply_patch(atomic, &Err(Refusal::of(error)))
}

fn execute(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    let (patch, mut options) = match read_params(call.params) {
        Ok(p) => p,
        Err(e) => {
            return ToolOutcome::of_apply_patch(true, &Err(Refusal::of(e)))
        }
    };
    let fs = match open(call.workspace_root) {
        Ok(fs) => fs,
        Err(e) => {
            let error = ToolError::new(
                ErrorKind::CommandFailed,
                format!("cannot open the workspace: {e}"),
            )
            .because(Reason::IoError);
            return ToolOutcome::of_apply_patch(options.atomic, &Err(Refusal::of(error)));
        }
    };
    options.workspace_root = std::path::absolute(call.workspace_root).ok();
    let applied = apply_text(&*fs, &patch, &options);
    ToolOutcome::of_apply_patch(options.atomic, &applied)
}

impl ToolOutcome {
    /// The wire outcome of an `apply_patch` (`atomic` as it ran): its
    /// result document, as [`crate::dispatch::call`] would answer.
    pub fn of_apply_patch(
        atomic: bool,
        applied: &Result<Vec<ChangedFile>, Refusal>,
    ) -> ToolOutcome {
        match applied {
            Ok(changed_files) => ToolOutcome {
                success: true,
                result: crate::tools::wire::document(&ApplyPatchDocument::Applied {
                    success: Succeeded::default(),
                    data: ApplyData {
                        changed_files,
                        atomic,
                    },
                }),
                error: None,
            },
            Err(Refusal {
                error: e,
                changed_files,
            }) => {
                let message = e.message_with_hint();
                let result = crate::tools::wire::document(&ApplyPatchDocument::Refused {
                    success: Failed::default(),
                    error: ApplyPatchError {
                        kind: e.kind,
                        message: message.clone(),
                        details: &e.details,
                    },
                    data: ApplyData {
                        changed_files,
                        atomic,
                    },
                });
                ToolOutcome {
                    success: false,
                    result,
                    error: Some(message),
                }
            }
        }
    }
}

fn invalid_params(message: &str) -> ToolError {
    ToolError::new(
        ErrorKind::CommandFailed,
        format!("invalid params: {message}"),
    )
    .because(Reason::InvalidParams)
}

/// Read `patch`, `expectedSha256ByPath` and `atomic` from the params.
#[cfg(feature = "testing")]
pub fn parse_params(params: &Value) -> Result<(String, ApplyOptions), ToolError> {
    read_params(params)
}

/// Read `patch`, `expectedSha256ByPath` and `atomic` from the params.
fn read_params(params: &Value) -> Result<(String, ApplyOptions), ToolError> {
    let Some(obj) = params.as_object() else {
        return Err(invalid_params("params must be an object"));
    };
    let patch = match obj.get("patch") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(invalid_params("\"patch\" must be a string")),
        None => return Err(invalid_params("\"patch\" is required")),
    };
    let mut options = ApplyOptions::default();
    match obj.get("atomic") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => options.atomic = *b,
        Some(_) => return Err(invalid_params("\"atomic\" must be a boolean")),
    }
    match obj.get("expectedSha256ByPath") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (path, sha) in map {
                let Value::String(sha) = sha else {
                    return Err(malformed_sha(path));
                };
                options.expected_sha256.insert(path.clone(), sha.clone());
            }
        }
        Some(_) => return Err(invalid_params("\"expectedSha256ByPath\" must be an object")),
    }
    Ok((patch, options))
}

fn malformed_sha(path: &str) -> ToolError {
    ToolError::new(
        ErrorKind::CommandFailed,
        format!("{path}: expectedSha256ByPath value is not a SHA-256 (64 hex digits) nor \"\""),
    )
    .with("path", path)
    .because(Reason::MalformedSha256)
}

/// Every `expectedSha256ByPath` value must be `""` or 64 hex digits.
fn check_expected(options: &ApplyOptions) -> Result<(), ToolError> {
    match options
        .expected_sha256
        .iter()
        .find(|(_, sha)| !sha.is_empty() && !is_sha256_hex(sha))
    {
        Some((path, _)) => Err(malformed_sha(path)),
        None => Ok(()),
    }
}

/// `apply` for an envelope given as bytes: invalid UTF-8 is a
/// `patch_parse_error` at the line where it occurs.
pub fn apply_bytes(fs: &dyn Fs, patch: &[u8], options: &ApplyOptions) -> Applied {
    match std::str::from_utf8(patch) {
        // `prepare` checks the hashes, once.
        Ok(text) => apply_text(fs, text, options),
        Err(_) => {
            // The same order as a text envelope: a malformed hash, then two
            // keys that disagree about one path, are named before the
            // envelope (found by fuzzing: fuzz/regressions/envelope_apply/b3-…).
            if let Err(e) = check_expected(options)
                .and_then(|()| expected_by_path(fs, &options.expected_sha256))
            {
                return Err(Refusal::of(e));
            }
            let e = envelope::parse_bytes(patch).err();
            let (line, message) = e
                .map_or((1, "the envelope is not valid UTF-8".to_string()), |e| {
                    (e.line, e.to_string())
                });
            let error = ToolError::new(ErrorKind::PatchParseError, message)
                .with("line", line)
                .because(Reason::PatchParseError);
            // Only the lines the shape check reads are decoded. Invalid
            // UTF-8 is reported where it stands, but a text that does not
            // start as an envelope is judged by its first line, as the
            // parser would have.
            Err(Refusal::of(with_shape_hint(
                error,
                &String::from_utf8_lossy(shape_prefix(patch)),
                if patch.starts_with(b"*** Begin Patch") {
                    line
                } else {
                    1
                },
            )))
        }
    }
}

/// Parse, plan and (unless a dry run) commit an envelope against `fs`.
/// A refusal with [`ApplyOptions::diagnose`] set that changed nothing is
/// searched for a repair ([`repair`]): `details.repair` when exactly
/// one correction of the envelope fits, never applied here.
#[cfg(any(test, feature = "testing"))]
pub fn apply(fs: &dyn Fs, patch_text: &str, options: &ApplyOptions) -> Applied {
    apply_text(fs, patch_text, options)
}

/// [`apply_bytes`] for an envelope given as text.
pub(crate) fn apply_text(fs: &dyn Fs, patch_text: &str, options: &ApplyOptions) -> Applied {
    match apply_once(fs, patch_text, options) {
        Err(refusal) if options.diagnose && refusal.changed_files.is_empty() => {
            let found = repair::search(fs, patch_text, options, &refusal.error);
            Err(Refusal::of(repair::annotate(*refusal.error, &found)))
        }
        applied => applied,
    }
}

/// `apply` without the repair search.
fn apply_once(fs: &dyn Fs, patch_text: &str, options: &ApplyOptions) -> Applied {
    let fail = |error| Err(Refusal::of(error));
    let (patch, mut planner) = match prepare(fs, patch_text, options) {
        Ok(ready) => ready,
        Err(e) => return fail(e),
    };
    if options.atomic {
        let (changes, changed_files) = match plan_all(&mut planner, &patch) {
            Ok(planned) => planned,
            Err(e) => return fail(e),
        };
        if !options.dry_run {
            if let Err(e) = commit(fs, changes) {
                return fail(commit_error(e));
            }
        }
        Ok(changed_files)
    } else {
        sequential(&mut planner, &patch, options.dry_run)
    }
}

/// The hash checks, the envelope parsed, and the planner over `fs`.
fn prepare<'t, 'f>(
    fs: &'f dyn Fs,
    patch_text: &'t str,
    options: &'f ApplyOptions,
) -> Result<(Patch<'t>, Planner<'f>), ToolError> {
    check_expected(options)?;
    let expected = expected_by_path(fs, &options.expected_sha256)?;
    let patch = envelope::parse(patch_text).map_err(|e| {
        let error = ToolError::new(ErrorKind::PatchParseError, e.to_string())
            .with("line", e.line)
            .because(Reason::PatchParseError);
        with_shape_hint(error, patch_text, e.line)
    })?;
    let planner = Planner {
        fs,
        expected,
        claimed: HashMap::new(),
        workspace_root: options.workspace_root.as_deref(),
        diagnose: options.diagnose,
    };
    Ok((patch, planner))
}

/// Every section planned, in order; the first refusal stops it.
fn plan_all(
    planner: &mut Planner<'_>,
    patch: &Patch<'_>,
) -> Result<(Vec<Change>, Vec<ChangedFile>), ToolError> {
    let mut changes = Vec::new();
    let mut changed_files = Vec::new();
    for (index, section) in patch.sections.iter().enumerate() {
        let (c, f) = planner.section(index, section)?;
        changes.extend(c);
        changed_files.push(f);
    }
    Ok((changes, changed_files))
}

/// A repair's dry run: the envelope planned whole against `fs`, nothing
/// written, no diagnosis; on success and with `hash`, the SHA-256 of what
/// the commit would do (each change's path and new bytes, or its removal),
/// so that two candidates with the same effect count as one correction.
pub(crate) fn planned_effect(
    fs: &dyn Fs,
    patch_text: &str,
    options: &ApplyOptions,
    hash: bool,
) -> Result<Option<String>, ToolError> {
    let quiet = ApplyOptions {
        diagnose: false,
        ..options.clone()
    };
    let (patch, mut planner) = prepare(fs, patch_text, &quiet)?;
    let (changes, _) = plan_all(&mut planner, &patch)?;
    if !hash {
        return Ok(None);
    }
    let mut effect: Vec<u8> = Vec::new();
    for change in &changes {
        match change {
            Change::Write { path, content, .. } => {
                effect.extend_from_slice(format!("W {path} {}\n", content.sha256_hex()).as_bytes());
            }
            Change::Delete { path, .. } => {
                effect.extend_from_slice(format!("D {path}\n").as_bytes())
            }
            Change::CreateDir { path } => {
                effect.extend_from_slice(format!("M {path}\n").as_bytes())
            }
        }
    }
    Ok(Some(sha256_hex(&effect)))
}

/// `atomic: false`: plan and commit one section at a time, stop at the first failure.
fn sequential(planner: &mut Planner<'_>, patch: &Patch<'_>, dry_run: bool) -> Applied {
    let mut changed_files = Vec::new();
    for (index, section) in patch.sections.iter().enumerate() {
        let result = planner.section(index, section).and_then(|(changes, file)| {
            if !dry_run {
                commit(planner.fs, changes).map_err(commit_error)?;
            }
            Ok(file)
        });
        match result {
            Ok(file) => changed_files.push(file),
            Err(error) => {
                return Err(Refusal {
                    error: Box::new(error),
                    changed_files,
                })
            }
        }
    }
    Ok(changed_files)
}

fn commit_error(e: crate::commit::CommitError) -> ToolError {
    ToolError::new(ErrorKind::CommandFailed, format!("commit failed: {e}"))
        .with("path", e.path.clone())
        .because(Reason::IoError)
        .with("step", e.step)
        .with("rolledBack", e.rollback())
}

/// Key the stale checks by normalised path, so `./a.txt` in the map names
/// `a.txt`. Two keys that name the same path with different digests are
/// refused (`conflicting_expected_sha256`): keeping either would silently drop
/// the other's check. The same digest twice (in either case) is fine.
fn expected_by_path(
    fs: &dyn Fs,
    map: &BTreeMap<String, String>,
) -> Result<HashMap<String, (String, String)>, ToolError> {
    let mut out: HashMap<String, (String, String)> = HashMap::new();
    for (path, sha) in map {
        let Ok(guarded) = resolve(fs, path, GuardOptions::default()) else {
            // A key no section can name; the section's own path is refused.
            continue;
        };
        if let Some((first, first_sha)) = out.get(&guarded.normalized) {
            if same_digest(first_sha, sha) {
                continue;
            }
            return Err(ToolError::new(
                ErrorKind::CommandFailed,
                format!(
                    "expectedSha256ByPath: the keys {first:?} and {path:?} both name {} but expect different digests",
                    guarded.normalized
                ),
            )
            .with("path", guarded.normalized.as_str())
            .with("keys", vec![first.clone(), path.clone()])
            .because(Reason::ConflictingExpectedSha256));
        }
        out.insert(guarded.normalized, (path.clone(), sha.clone()));
    }
    Ok(out)
}

struct Planner<'f> {
    fs: &'f dyn Fs,
    /// normalised path → (path as the caller wrote it, expected digest).
    expected: HashMap<String, (String, String)>,
    /// Resolved path → envelope line of the section that uses it.
    claimed: HashMap<String, usize>,
    /// [`ApplyOptions::workspace_root`], for the absolute-path hint.
    workspace_root: Option<&'f Path>,
    /// [`ApplyOptions::diagnose`].
    diagnose: bool,
}

impl Planner<'_> {
    fn section(
        &mut self,
        index: usize,
        section: &Section<'_>,
    ) -> Result<(Vec<Change>, ChangedFile), ToolError> {
        let line = section.span.line;
        let here = |e: ToolError| e.with("section", index).with("sectionLine", line);
        match &section.kind {
            SectionKind::Add {
                path,
                lines,
                no_newline_at_end,
            } => {
                let p = self.guard(path, line).map_err(here)?;
                self.stale_check(&p, None, None, true).map_err(here)?;
                self.must_be_absent(&p, path, hints::add_exists_hint(path))
                    .map_err(here)?;
                self.parent_must_exist(&p, path).map_err(here)?;
                let bytes = add_content(lines, *no_newline_at_end);
                Ok((
                    vec![Change::Write {
                        path: p.target.clone(),
                        content: Content::Whole(bytes),
                        before: None,
                        mode: None,
                    }],
                    ChangedFile {
                        operation: Operation::Add,
                        path: p.normalized,
                        from: None,
                    },
                ))
            }
            SectionKind::Delete { path } => {
                let p = self.guard(path, line).map_err(here)?;
                let before = self.read_checked(&p, path, true).map_err(here)?;
                Ok((
                    vec![Change::Delete {
                        path: p.entry.clone(),
                        size: before.len() as u64,
                    }],
                    ChangedFile {
                        operation: Operation::Delete,
                        path: p.normalized,
                        from: None,
                    },
                ))
            }
            SectionKind::Update {
                path,
                move_to,
                hunks,
            } => {
                let source = self.guard(path, line).map_err(here)?;
                let dest = match move_to {
                    Some(to) => Some(self.guard(to, line).map_err(here)?),
                    None => None,
                };
                if let Some(dest) = &dest {
                    if dest.target == source.target || dest.normalized == source.normalized {
                        return Err(here(
                            ToolError::new(
                                ErrorKind::CommandFailed,
                                format!(
                                    "{path}: a move onto itself (\"{path}\" -> \"{}\")",
                                    move_to.unwrap_or_default()
                                ),
                            )
                            .with("path", *path)
                            .because(Reason::SamePath),
                        ));
                    }
                }
                let (before, planned) = self
                    .read_checked_and_plan(&source, path, hunks)
                    .map_err(|e| self.stale_diagnosis(e, &source, path, hunks))
                    .map_err(here)?;
                if let Some(dest) = &dest {
                    self.stale_check(dest, None, None, true).map_err(here)?;
                }
                let mode = self.fs.mode(&source.target).ok();
                let verified = self.expected.contains_key(&source.normalized);
                let after = planned.map_err(|e| {
                    here(hunk_error(path, hunks, e, &before, verified, self.diagnose))
                })?;
                // The new file is written from stretches of the old one: the
                // file is held in memory once (crate::content).
                let before = Arc::new(before);
                let content = Splice::new(Arc::clone(&before), after)
                    .map(Content::Spliced)
                    .ok_or_else(|| here(unplannable(path)))?;
                match (dest, move_to) {
                    (Some(dest), Some(to)) => {
                        self.must_be_absent(&dest, to, hints::move_destination_exists_hint(to))
                            .map_err(here)?;
                        self.parent_must_exist(&dest, to).map_err(here)?;
                        Ok((
                            vec![
                                Change::Write {
                                    path: dest.target.clone(),
                                    content,
                                    before: None,
                                    mode,
                                },
                                Change::Delete {
                                    path: source.entry.clone(),
                                    size: before.len() as u64,
                                },
                            ],
                            ChangedFile {
                                operation: Operation::Move,
                                path: dest.normalized,
                                from: Some(source.normalized),
                            },
                        ))
                    }
                    _ => Ok((
                        vec![Change::Write {
                            path: source.target.clone(),
                            content,
                            before: Some(before),
                            mode,
                        }],
                        ChangedFile {
                            operation: Operation::Update,
                            path: source.normalized,
                            from: None,
                        },
                    )),
                }
            }
        }
    }

    /// Guard a path and claim it for this section.
    fn guard(&mut self, raw: &str, line: usize) -> Result<GuardedPath, ToolError> {
        let p = resolve(self.fs, raw, GuardOptions::for_writing()).map_err(|e| {
            let relative = match &e {
                PathError::Absolute(_) => Some(
                    self.workspace_root
                        .and_then(|root| hints::relative_to_root(raw, root)),
                ),
                _ => None,
            };
            let error = path_error(raw, e);
            match relative {
                None => error,
                Some(None) => error.with("hint", hints::absolute_path_hint(raw, None)),
                Some(Some(rel)) => error
                    .with("hint", hints::absolute_path_hint(raw, Some(&rel)))
                    .with("relativePath", rel),
            }
        })?;
        for key in [&p.target, &p.entry] {
            if let Some(&first) = self.claimed.get(key.as_str()) {
                if first != line {
                    return Err(ToolError::new(
                        ErrorKind::PatchParseError,
                        format!(
                            "line {line}: path \"{raw}\" names the same file as the section at line {first}; each path may appear in one section"
                        ),
                    )
                    .with("path", raw)
                    .with("line", line)
                    .because(Reason::DuplicatePath));
                }
            }
        }
        self.claimed.insert(p.target.clone(), line);
        self.claimed.insert(p.entry.clone(), line);
        Ok(p)
    }

    /// Check `expectedSha256ByPath` for `p`. `current` is the file's content
    /// when the caller already read it (so no file is read twice), `None`
    /// when it is absent or was not read; `digest` its SHA-256 when the
    /// caller already has that too (so no file is hashed twice). `creates`
    /// is set for an Add and a move destination, where only `""` can hold
    /// (patch-envelope.md: "any other value is treated as stale").
    fn stale_check(
        &self,
        p: &GuardedPath,
        current: Option<&[u8]>,
        digest: Option<&str>,
        creates: bool,
    ) -> Result<(), ToolError> {
        let Some((raw, expected)) = self.expected.get(&p.normalized) else {
            return Ok(());
        };
        let stale = |actual: Value| {
            ToolError::new(
                ErrorKind::StaleFile,
                format!("{raw}: the file is not the one the patch was written against"),
            )
            .with("path", raw.as_str())
            .with("expectedSha256", expected.as_str())
            .with("actualSha256", actual)
        };
        let exists = current.is_some()
            || self.kind(&p.target, raw)?.is_some()
            || self.kind(&p.entry, raw)?.is_some();
        if !exists {
            return if expected.is_empty() {
                Ok(())
            } else {
                Err(stale(Value::Null))
            };
        }
        let read;
        let bytes = match current {
            Some(b) => Some(b),
            None => {
                read = self.fs.read(&p.target).ok();
                read.as_deref()
            }
        };
        let Some(bytes) = bytes else {
            return Err(stale(Value::Null));
        };
        let actual = digest.map_or_else(|| sha256_hex(bytes), str::to_string);
        if !creates && !expected.is_empty() && same_digest(expected, &actual) {
            Ok(())
        } else {
            Err(stale(actual.into()))
        }
    }

    /// A `stale_file` refusal of an Update carries the diagnosis of its
    /// hunks against the file as it is now (failure path only; the file is
    /// read again). Other errors pass through.
    fn stale_diagnosis(
        &self,
        e: ToolError,
        p: &GuardedPath,
        raw: &str,
        hunks: &[envelope::Hunk<'_>],
    ) -> ToolError {
        if e.kind != ErrorKind::StaleFile || !self.diagnose {
            return e;
        }
        let Ok(Some(current)) = self.current(p, raw) else {
            return e;
        };
        match diagnose::stale_file(&current, hunks) {
            Some(d) => e
                .with("hint", d.hint.clone())
                .with("diagnosis", diagnose::diagnosis_json(&d)),
            None => e,
        }
    }

    fn kind(&self, path: &str, raw: &str) -> Result<Option<EntryKind>, ToolError> {
        self.fs.kind(path).map_err(|e| io_error(raw, &e))
    }

    /// `already_exists` (with `hint`) when something is at `p`.
    fn must_be_absent(&self, p: &GuardedPath, raw: &str, hint: String) -> Result<(), ToolError> {
        if self.kind(&p.entry, raw)?.is_some() || self.kind(&p.target, raw)?.is_some() {
            return Err(ToolError::new(
                ErrorKind::AlreadyExists,
                format!("{raw}: the file already exists"),
            )
            .with("path", raw)
            .with("hint", hint));
        }
        Ok(())
    }

    fn parent_must_exist(&self, p: &GuardedPath, raw: &str) -> Result<(), ToolError> {
        let parent = parent_of(&p.target);
        if self.kind(parent, raw)? != Some(EntryKind::Dir) {
            let wanted = parent_of(&p.normalized);
            let similar = hints::similar_paths(self.fs, wanted, Looking::Dir);
            let error = ToolError::new(
                ErrorKind::NotFound,
                format!("{raw}: the parent directory does not exist (apply_patch never creates directories)"),
            )
            .with("path", raw)
            .because(Reason::MissingParent)
            .with("hint", hints::missing_parent_hint(wanted, &similar));
            return Err(with_similar_paths(error, &similar));
        }
        Ok(())
    }

    /// `not_found` of a file to update, move or delete (`deleting`), with
    /// the closest existing paths.
    fn missing_file(&self, p: &GuardedPath, raw: &str, deleting: bool) -> ToolError {
        let similar = hints::similar_paths(self.fs, &p.normalized, Looking::File);
        let error =
            missing_file(raw).with("hint", hints::missing_file_hint(raw, &similar, deleting));
        with_similar_paths(error, &similar)
    }

    /// The file's bytes, `None` when nothing is there; a directory or other
    /// non-file is refused.
    fn current(&self, p: &GuardedPath, raw: &str) -> Result<Option<Vec<u8>>, ToolError> {
        self.current_with(p, raw, |fs, path| fs.read(path))
    }

    /// [`Self::current`] read through `read` ([`Fs::read`] or [`Fs::read_hashed`]).
    fn current_with<T>(
        &self,
        p: &GuardedPath,
        raw: &str,
        read: impl FnOnce(&dyn Fs, &str) -> std::io::Result<T>,
    ) -> Result<Option<T>, ToolError> {
        match self.kind(&p.target, raw)? {
            Some(EntryKind::File) => read(self.fs, &p.target)
                .map(Some)
                .map_err(|e| io_error(raw, &e)),
            None => Ok(None),
            Some(_) => Err(ToolError::new(
                ErrorKind::CommandFailed,
                format!("{raw}: not a regular file"),
            )
            .with("path", raw)
            .because(Reason::NotAFile)),
        }
    }

    /// The file's bytes, after the stale check; `not_found` when absent.
    fn read_checked(
        &self,
        p: &GuardedPath,
        raw: &str,
        deleting: bool,
    ) -> Result<Vec<u8>, ToolError> {
        let current = self.current(p, raw)?;
        self.stale_check(p, current.as_deref(), None, false)?;
        current.ok_or_else(|| self.missing_file(p, raw, deleting))
    }

    /// [`Self::read_checked`] for an Update, and its hunks applied in
    /// memory. The stale check hashes the whole file: with a digest to check,
    /// the file is hashed while it is read ([`Fs::read_hashed`]), so the
    /// check adds little to the latency of a large file, and a stale file
    /// is refused before any hunk is matched against it. The hunks are made
    /// ready ([`Matcher::new`], bounded by the envelope's size) before or
    /// beside the read, stale file or not.
    fn read_checked_and_plan(
        &self,
        p: &GuardedPath,
        raw: &str,
        hunks: &[envelope::Hunk<'_>],
    ) -> Result<(Vec<u8>, Planned), ToolError> {
        let checked = self
            .expected
            .get(&p.normalized)
            .is_some_and(|(_, expected)| !expected.is_empty());
        let read = || -> Result<_, ToolError> {
            if !checked {
                return Ok((self.current(p, raw)?, None));
            }
            let read = self.current_with(p, raw, |fs, path| fs.read_hashed(path))?;
            Ok(read.map_or((None, None), |(bytes, digest)| (Some(bytes), Some(digest))))
        };
        // Many hunks are made ready beside the read: the read and its hash
        // keep both cores busy, but not without gaps, and this fills them
        // instead of running after the read on one core (about 4 ms for
        // 10,000 hunks; docs/performance.md, "Where the remaining time goes").
        let (matcher, read) = if Matcher::old_lines(hunks) >= MATCHER_BESIDE_READ {
            crate::parallel::join(|| Matcher::new(hunks), read)
        } else {
            (Matcher::new(hunks), read())
        };
        let (current, digest) = read?;
        self.stale_check(p, current.as_deref(), digest.as_deref(), false)?;
        match current {
            Some(bytes) => {
                let planned = matcher.splice(&bytes);
                Ok((bytes, planned))
            }
            None => Err(self.missing_file(p, raw, false)),
        }
    }
}

/// The bytes of an Add section: lines joined by `\n`, and a final `\n` iff
/// the last line is non-empty and no `\ No newline at end of file` follows.
pub(crate) fn add_content(lines: &[&str], no_newline_at_end: bool) -> Vec<u8> {
    let mut out = lines.join("\n").into_bytes();
    if !no_newline_at_end && lines.last().is_some_and(|l| !l.is_empty()) {
        out.push(b'\n');
    }
    out
}

/// From this many old-side lines on, an Update's hunks are made ready on a
/// second thread while its file is read: below, starting the thread costs
/// more than the work (about 0.1 µs a line).
const MATCHER_BESIDE_READ: usize = 4096;

/// An Update's hunks planned in memory: the new file as a splice of the
/// old one, or the hunk that failed.
type Planned = Result<Splicing, HunkError>;

/// `similarPaths` in the details, when there are any.
fn with_similar_paths(error: ToolError, similar: &hints::Similar) -> ToolError {
    if similar.paths.is_empty() {
        return error;
    }
    let paths: Vec<Value> = similar
        .paths
        .iter()
        .map(|s| json!({"path": s.path, "relation": s.relation.as_str()}))
        .collect();
    error.with("similarPaths", paths)
}

/// The first [`hints::MAX_SHAPE_LINES`] lines of an envelope.
fn shape_prefix(patch: &[u8]) -> &[u8] {
    let end = memchr::memchr_iter(b'\n', patch)
        .nth(hints::MAX_SHAPE_LINES)
        .unwrap_or(patch.len());
    &patch[..end]
}

/// A parse error of a text that is really a unified diff, a fenced block
/// or a heredoc says so (`looksLike` and a hint).
fn with_shape_hint(error: ToolError, text: &str, line: usize) -> ToolError {
    match hints::envelope_shape(text, line) {
        Some((Some(shape), hint)) => error.with("looksLike", shape.as_str()).with("hint", hint),
        Some((None, hint)) => error.with("hint", hint),
        None => error,
    }
}

/// A plan whose stretches do not fit the file it was planned on: a bug,
/// refused before anything is written.
fn unplannable(raw: &str) -> ToolError {
    ToolError::new(
        ErrorKind::CommandFailed,
        format!("{raw}: internal error: the planned edit does not fit the file (a bug); nothing was written"),
    )
    .with("path", raw)
    .because(Reason::InternalError)
}

fn missing_file(raw: &str) -> ToolError {
    ToolError::new(ErrorKind::NotFound, format!("{raw}: no such file"))
        .with("path", raw)
        .because(Reason::MissingFile)
}

fn io_error(raw: &str, e: &std::io::Error) -> ToolError {
    ToolError::new(ErrorKind::CommandFailed, format!("{raw}: {e}"))
        .with("path", raw)
        .because(Reason::IoError)
}

fn path_error(raw: &str, e: PathError) -> ToolError {
    let (kind, reason) = match &e {
        PathError::Empty => (ErrorKind::CommandFailed, Reason::EmptyPath),
        PathError::Nul => (ErrorKind::CommandFailed, Reason::InvalidPath),
        PathError::Backslash(_) => (ErrorKind::CommandFailed, Reason::BackslashInPath),
        PathError::Absolute(_) => (ErrorKind::CommandFailed, Reason::AbsolutePath),
        PathError::Escapes(_) => (ErrorKind::OutsideWorkspace, Reason::EscapesWorkspace),
        PathError::SymlinkEscapes { .. } => {
            (ErrorKind::OutsideWorkspace, Reason::SymlinkEscapesWorkspace)
        }
        PathError::TooManyLinks(_) => (ErrorKind::CommandFailed, Reason::TooManySymlinks),
        PathError::Private(_) => (ErrorKind::CommandFailed, Reason::PrivatePath),
        PathError::NotADirectory { .. } => (ErrorKind::NotFound, Reason::MissingParent),
        PathError::Io { .. } => (ErrorKind::CommandFailed, Reason::IoError),
    };
    let mut err = ToolError::new(kind, e.to_string())
        .with("path", raw)
        .because(reason);
    if let PathError::SymlinkEscapes { link, .. } = &e {
        err = err.with("symlink", link.as_str());
    }
    err
}

fn hunk_error(
    path: &str,
    hunks: &[envelope::Hunk<'_>],
    e: crate::matching::HunkError,
    original: &[u8],
    hash_verified: bool,
    diagnose: bool,
) -> ToolError {
    let i = e.hunk_index;
    let at = hunks.get(i).map_or(0, |h| h.span.line);
    let base = |kind, what: String, reason: Reason| {
        ToolError::new(
            kind,
            format!("{path}: hunk {i} (envelope line {at}): {what}"),
        )
        .with("path", path)
        .with("hunkIndex", i)
        .because(reason)
        .with("hunkLine", at)
    };
    match e.failure {
        HunkFailure::ContextNotFound => {
            let mut what =
                "context not found: its context and removed lines do not occur in the file"
                    .to_string();
            if !diagnose {
                return base(ErrorKind::PatchApplyError, what, Reason::ContextNotFound);
            }
            let d = diagnose::hunk_not_found(original, hunks, i, hash_verified);
            what.push_str(&format!(" ({}", d.cause().as_str()));
            if let Some(line) = d.line {
                what.push_str(&format!(", nearest at line {line}"));
            }
            what.push(')');
            base(ErrorKind::PatchApplyError, what, Reason::ContextNotFound)
                .with("hint", d.hint.clone())
                .with("diagnosis", diagnose::diagnosis_json(&d))
        }
        HunkFailure::MultipleMatches { lines, count: total } => {
            let error = base(
                ErrorKind::MultipleMatches,
                format!(
                    "its context and removed lines occur more than once (at lines {}{}); add context to make it unique",
                    lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
                    match total.saturating_sub(lines.len()) {
                        0 => String::new(),
                        more => format!(" … and {more} more"),
                    }
                ),
                Reason::MultipleMatches,
            )
            .with("matchLines", lines);
            if !diagnose {
                return error;
            }
            let d = diagnose::multiple_matches(original, hunks, i, total);
            error
                .with("hint", d.hint.clone())
                .with("diagnosis", diagnose::diagnosis_json(&d))
        }
        HunkFailure::Overlapping { other_hunk, line } => base(
            ErrorKind::OverlappingEdits,
            format!("overlaps hunk {other_hunk} (which applied at line {line}); merge the two hunks"),
            Reason::OverlappingEdits,
        )
        .with("overlapsHunk", other_hunk),
        HunkFailure::MisplacedNoNewlineMarker { envelope_line } => ToolError::new(
            ErrorKind::PatchParseError,
            format!(
                "line {envelope_line}: '\\ No newline at end of file' may only follow the last line of a side of the hunk"
            ),
        )
        .with("path", path)
        .with("hunkIndex", i)
        .with("line", envelope_line)
        .because(Reason::MisplacedNoNewlineMarker),
    }
}
