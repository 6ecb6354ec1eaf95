//! `workspace_create_file` (TUL-004): create a text file, or replace one
//! when `overwrite` is true, path-safe and atomic.
//!
//! Steps, in this order (the first failing one decides the `errorCode`):
//! arguments (`InvalidPath` for a missing/empty/non-string `path`,
//! `InvalidArgument` — an extension — for a missing or non-string `content`
//! or a non-boolean `overwrite`); the path guard with `\` as a separator
//! (`InvalidPath`; an I/O error while probing is `UnhandledException`);
//! the size limit on the normalised bytes (`TooLarge`, [`DEFAULT_MAX_BYTES`]
//! unless the session's `limits` set another);
//! the existence check (`FileExists`; a directory at the path is
//! `InvalidPath`); the missing parent directories, found
//! ([`missing_parents`]: an I/O error or a file in the way is
//! `DirectoryCreateFailed`) and then created by the one atomic committer in
//! the same commit as the file, so they are journaled, fsync'd and removed
//! again by a rollback or crash recovery like the file itself (a failure to
//! create one is `DirectoryCreateFailed`, any other commit failure
//! `WriteFailed`); reading the file back to hash it (`HashFailed`: the
//! content *was* written). This tool writes nothing itself.
//!
//! Content is written as UTF-8 without a leading BOM, with `\r\n` and lone
//! `\r` turned into `\n` ([`normalize_content`]). The `hash` is the
//! lowercase hex SHA-256 of the bytes read back. Unknown argument fields are
//! ignored. Left out: a lock against a concurrent writer creating the file
//! between the existence check and the rename (the rename would replace it).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::commit::{commit, missing_parents, Change, CREATING_DIRECTORY};
use crate::content::Content;
use crate::call::{ToolCall, ToolOutcome};
use crate::events::TARGET;
use crate::tools::ToolHooks;
use crate::fs::{EntryKind, Fs};
use crate::hash::sha256_hex;
use crate::path_guard::{resolve, GuardOptions, PathError};
use crate::tools::{guarded, OpenFs};

/// The default size limit: 10 MiB of normalised content.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Per-executor settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreateFileOptions {
    /// Largest content, in bytes after normalisation, that may be written.
    pub max_bytes: u64,
}

impl Default for CreateFileOptions {
    fn default() -> Self {
        CreateFileOptions {
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// The arguments of `workspace_create_file` (TUL-004 §4.2), as
/// [`parse_params`] reads them. Unknown fields are ignored; `null` counts as
/// absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[schemars(title = "workspace_create_file params")]
pub struct CreateFileParams<'a> {
    /// Workspace-relative path of the file, `/`-separated (`\` is accepted
    /// as a separator). Must not be absolute, must not leave the workspace
    /// (`..` above the root), must not name a directory. Missing parent
    /// directories are created.
    #[schemars(regex(pattern = r"\S"))]
    pub path: &'a str,
    /// The complete final text of the file (it may be empty). Written as
    /// UTF-8 without a BOM, with `\r\n` and lone `\r` turned into `\n`.
    pub content: &'a str,
    /// Replace the file if it already exists. Default `false`: an existing
    /// file is refused with `FileExists`.
    pub overwrite: Option<bool>,
}

/// The canonical error codes of TUL-004 §5.3, plus `InvalidArgument`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub enum CreateFileErrorCode {
    /// The file exists and `overwrite` is false.
    FileExists,
    /// The path is missing, empty, absolute, escapes the workspace, or names a directory.
    InvalidPath,
    /// A parent directory could not be created.
    DirectoryCreateFailed,
    /// Writing (staging, renaming, syncing) failed; nothing was changed.
    WriteFailed,
    /// The content is larger than the configured limit.
    TooLarge,
    /// The content was written, but reading it back to hash it failed.
    HashFailed,
    /// An unexpected error (an I/O error while probing, a panic).
    UnhandledException,
    /// Extension: `content` missing or not a string, `overwrite` not a
    /// boolean, or the arguments not an object.
    InvalidArgument,
}

impl CreateFileErrorCode {
    /// The wire code.
    pub fn as_str(self) -> &'static str {
        match self {
            CreateFileErrorCode::FileExists => "FileExists",
            CreateFileErrorCode::InvalidPath => "InvalidPath",
            CreateFileErrorCode::DirectoryCreateFailed => "DirectoryCreateFailed",
            CreateFileErrorCode::WriteFailed => "WriteFailed",
            CreateFileErrorCode::TooLarge => "TooLarge",
            CreateFileErrorCode::HashFailed => "HashFailed",
            CreateFileErrorCode::UnhandledException => "UnhandledException",
            CreateFileErrorCode::InvalidArgument => "InvalidArgument",
        }
    }
}

/// The TUL-004 §4.3 response: the tool's result document, serialized as
/// is (every field always present; `hash` and `errorCode` are `null` when
/// they do not apply).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "workspace_create_file result")]
pub struct CreateFileResult {
    /// True when the file was created or overwritten as asked.
    pub success: bool,
    /// A short human-readable outcome.
    pub message: String,
    /// The normalised workspace-relative path (`/`-separated); the path as
    /// given when it could not be normalised.
    pub path: String,
    /// Bytes written (0 when nothing was written).
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of the file as read back (`null` on failure).
    pub hash: Option<String>,
    /// The file did not exist before (and now does).
    pub created: bool,
    /// An existing file was replaced and the operation succeeded.
    pub overwritten: bool,
    /// `null` on success.
    pub error_code: Option<CreateFileErrorCode>,
}

impl CreateFileResult {
    /// The response document, fields exactly as §4.3.
    pub fn to_json(&self) -> Value {
        crate::tools::wire::document(self)
    }

    fn fail(code: CreateFileErrorCode, path: &str, message: String) -> CreateFileResult {
        CreateFileResult {
            success: false,
            message,
            path: path.to_string(),
            size_bytes: 0,
            hash: None,
            created: false,
            overwritten: false,
            error_code: Some(code),
        }
    }
}

/// The bytes written for `content`: a leading U+FEFF removed (one; a BOM
/// anywhere else is content), `\r\n` and lone `\r` turned into `\n`.
pub fn normalize_content(content: &str) -> Vec<u8> {
    let body = content
        .strip_prefix('\u{feff}')
        .unwrap_or(content)
        .as_bytes();
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while let Some(i) = memchr::memchr(b'\r', rest) {
        out.extend_from_slice(&rest[..i]);
        out.push(b'\n');
        rest = if rest.get(i + 1) == Some(&b'\n') {
            &rest[i + 2..]
        } else {
            &rest[i + 1..]
        };
    }
    out.extend_from_slice(rest);
    out
}

/// Read the arguments (the first step of [`create_file`]): `InvalidPath`
/// for a missing, non-string or blank `path`, `InvalidArgument` for the
/// rest; the refusal is the whole result document.
pub fn parse_params(params: &Value) -> Result<CreateFileParams<'_>, CreateFileResult> {
    use CreateFileErrorCode as E;
    let Some(obj) = params.as_object() else {
        return Err(CreateFileResult::fail(
            E::InvalidArgument,
            "",
            "The arguments must be a JSON object.".into(),
        ));
    };
    let raw = match obj.get("path") {
        Some(Value::String(s)) => s.as_str(),
        None | Some(Value::Null) => {
            return Err(CreateFileResult::fail(
                E::InvalidPath,
                "",
                "path is required.".into(),
            ))
        }
        Some(_) => {
            return Err(CreateFileResult::fail(
                E::InvalidPath,
                "",
                "path must be a string.".into(),
            ));
        }
    };
    let fail = |code, message: String| Err(CreateFileResult::fail(code, raw, message));
    if raw.trim().is_empty() {
        return fail(E::InvalidPath, "path is empty.".into());
    }
    let content = match obj.get("content") {
        Some(Value::String(s)) => s.as_str(),
        None | Some(Value::Null) => {
            return fail(
                E::InvalidArgument,
                "content is required (it may be empty).".into(),
            )
        }
        Some(_) => return fail(E::InvalidArgument, "content must be a string.".into()),
    };
    let overwrite = match obj.get("overwrite") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return fail(E::InvalidArgument, "overwrite must be a boolean.".into()),
    };
    Ok(CreateFileParams {
        path: raw,
        content,
        overwrite,
    })
}

/// Run `workspace_create_file` on the workspace of `fs`.
pub fn create_file(fs: &dyn Fs, params: &Value, options: &CreateFileOptions) -> CreateFileResult {
    match parse_params(params) {
        Ok(params) => create(fs, &params, options),
        Err(refusal) => refusal,
    }
}

/// [`create_file`] from params already read.
pub(crate) fn create(
    fs: &dyn Fs,
    params: &CreateFileParams<'_>,
    options: &CreateFileOptions,
) -> CreateFileResult {
    use CreateFileErrorCode as E;
    let CreateFileParams {
        path: raw,
        content,
        overwrite,
    } = *params;
    let overwrite = overwrite.unwrap_or(false);
    let fail = |code, message: String| CreateFileResult::fail(code, raw, message);
    let opts = GuardOptions {
        backslash_is_separator: true,
        writes: true,
    };
    let guarded = match resolve(fs, raw, opts) {
        Ok(g) => g,
        Err(e @ PathError::NotADirectory { .. }) => {
            return fail(
                E::DirectoryCreateFailed,
                format!("The parent directory cannot be created: {e}."),
            )
        }
        Err(e @ PathError::Io { .. }) => {
            return fail(
                E::UnhandledException,
                format!("Checking the path failed: {e}."),
            )
        }
        Err(e) => return fail(E::InvalidPath, format!("Invalid path: {e}.")),
    };
    let path = guarded.normalized.as_str();
    let target = guarded.target.as_str();
    let fail = |code, message: String| CreateFileResult::fail(code, path, message);
    let bytes = normalize_content(content);
    if bytes.len() as u64 > options.max_bytes {
        return fail(
            E::TooLarge,
            format!(
                "The content is {} bytes; the limit is {} bytes.",
                bytes.len(),
                options.max_bytes
            ),
        );
    }
    let existed = match fs.kind(target) {
        Ok(None) => false,
        Ok(Some(EntryKind::File)) => true,
        Ok(Some(EntryKind::Dir)) => {
            return fail(E::InvalidPath, format!("'{path}' is a directory."));
        }
        Ok(Some(EntryKind::Symlink | EntryKind::Other)) => {
            return fail(E::InvalidPath, format!("'{path}' is not a regular file."));
        }
        Err(e) => {
            return fail(
                E::UnhandledException,
                format!("Checking '{path}' failed: {e}."),
            )
        }
    };
    if existed && !overwrite {
        return fail(
            E::FileExists,
            format!("File '{path}' already exists; set overwrite to true to replace it."),
        );
    }
    let (before, mode) = if existed {
        let before = match fs.read(target) {
            Ok(b) => b,
            Err(e) => {
                return fail(
                    E::UnhandledException,
                    format!("Reading the existing '{path}' failed: {e}."),
                )
            }
        };
        let mode = match fs.mode(target) {
            Ok(m) => m,
            Err(e) => {
                return fail(
                    E::UnhandledException,
                    format!("Reading the mode of '{path}' failed: {e}."),
                )
            }
        };
        (Some(Arc::new(before)), Some(mode))
    } else {
        (None, None)
    };
    let mut changes = match missing_parents(fs, target) {
        Ok(dirs) => dirs,
        Err(e) => {
            return fail(
                E::DirectoryCreateFailed,
                format!("Creating the parent directory failed: {e}."),
            )
        }
    };
    changes.push(Change::Write {
        path: target.to_string(),
        content: Content::Whole(bytes),
        before,
        mode,
    });
    if let Err(e) = commit(fs, &changes) {
        if e.step == CREATING_DIRECTORY {
            return fail(
                E::DirectoryCreateFailed,
                format!(
                    "Creating the parent directory failed: {}: {}.",
                    e.path, e.source
                ),
            );
        }
        return fail(E::WriteFailed, format!("Writing '{path}' failed: {e}."));
    }
    let Some(Change::Write { content, .. }) = changes.last() else {
        return fail(
            E::UnhandledException,
            "internal: the change is not a write.".into(),
        );
    };
    let size_bytes = content.len() as u64;
    let hashed = match fs.read(target) {
        Ok(back) if content.equals(&back) => Ok(sha256_hex(&back)),
        Ok(_) => Err("the file changed after it was written".to_string()),
        Err(e) => Err(e.to_string()),
    };
    match hashed {
        Ok(hash) => CreateFileResult {
            success: true,
            message: if existed {
                "File overwritten."
            } else {
                "File created."
            }
            .into(),
            path: path.to_string(),
            size_bytes,
            hash: Some(hash),
            created: !existed,
            overwritten: existed,
            error_code: None,
        },
        Err(e) => CreateFileResult {
            success: false,
            message: format!(
                "The content was written to '{path}', but computing its hash failed: {e}."
            ),
            path: path.to_string(),
            size_bytes,
            hash: None,
            created: !existed,
            overwritten: false,
            error_code: Some(E::HashFailed),
        },
    }
}

/// Run one call from its wire params, opening the workspace with `open`. A panic (a bug) is
/// `UnhandledException`.
pub fn run_with(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    let raw_path = || {
        call.params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let done = |result: CreateFileResult| ToolOutcome {
        success: result.success,
        error: (!result.success).then(|| result.message.clone()),
        result: result.to_json(),
    };
    guarded(
        || {
            let options = CreateFileOptions {
                max_bytes: call
                    .session
                    .limits
                    .create_file_max_bytes
                    .unwrap_or(DEFAULT_MAX_BYTES),
            };
            done(match open(call.workspace_root) {
                Ok(fs) => create_file(&*fs, call.params, &options),
                Err(e) => CreateFileResult::fail(
                    CreateFileErrorCode::UnhandledException,
                    raw_path(),
                    format!("The workspace could not be opened: {e}."),
                ),
            })
        },
        || {
            done(CreateFileResult::fail(
                CreateFileErrorCode::UnhandledException,
                raw_path(),
                "An unexpected error occurred.".into(),
            ))
        },
    )
}

/// `workspace_create_file`'s own events (TUL-004 §6), beside the common
/// ones of every call ([`crate::events`]).
pub(crate) const HOOKS: ToolHooks = ToolHooks {
    received: forwarded,
    finished: executed,
    stored: crate::tools::NO_HOOKS.stored,
    filed: crate::tools::NO_HOOKS.filed,
};

/// `Tool.CreateFile.Forwarded`: what the call asks for.
fn forwarded(tool: &str, call_id: &str, params: &Value) {
    let path = params.get("path").and_then(Value::as_str).unwrap_or("");
    let overwrite = params
        .get("overwrite")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    tracing::info!(
        target: TARGET,
        event = "Tool.CreateFile.Forwarded",
        tool,
        call_id,
        path,
        overwrite,
    );
}

/// `Tool.CreateFile.Executed` and `Tool.CreateFile.ResultReceived`.
fn executed(
    tool: &str,
    call_id: &str,
    params: &Value,
    outcome: &ToolOutcome,
    code: &str,
    duration_ms: f64,
) {
    let result = &outcome.result;
    let size_bytes = result.get("sizeBytes").and_then(Value::as_u64).unwrap_or(0);
    let hash = result.get("hash").and_then(Value::as_str).unwrap_or("");
    let path = result.get("path").and_then(Value::as_str).unwrap_or("");
    let overwrite = params
        .get("overwrite")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let success = outcome.success;
    tracing::info!(
        target: TARGET,
        event = "Tool.CreateFile.Executed",
        tool, call_id, path, overwrite, success, error_code = code, size_bytes, hash, duration_ms,
    );
    tracing::info!(
        target: TARGET,
        event = "Tool.CreateFile.ResultReceived",
        tool, call_id, success, error_code = code, size_bytes, hash,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One call through the tool's wire entry, on the real filesystem.
    fn run(call: &ToolCall<'_>) -> ToolOutcome {
        run_with(call, &crate::tools::open_for_writing)
    }
    use crate::layout::is_temp_name;
    use crate::commit::tests::snapshot;
    use crate::fs::{FaultFs, FsOp, RealFs};
    use proptest::prelude::*;
    use serde_json::json;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn ws() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("old.txt"), "old\n").unwrap();
        symlink("/etc", dir.path().join("out")).unwrap();
        dir
    }

    fn create_in(dir: &Path, params: Value) -> CreateFileResult {
        create_with(dir, params, CreateFileOptions::default())
    }

    fn create_with(dir: &Path, params: Value, options: CreateFileOptions) -> CreateFileResult {
        let fs = RealFs::open(dir).unwrap();
        create_file(&fs, &params, &options)
    }

    use std::path::Path;

    fn code(r: &CreateFileResult) -> Option<&'static str> {
        r.error_code.map(CreateFileErrorCode::as_str)
    }

    #[test]
    fn a_new_file_is_created_with_its_parents_and_the_exact_response() {
        let dir = ws();
        let r = create_in(
            dir.path(),
            json!({"path": "src/Services/A.cs", "content": "using System;\r\n"}),
        );
        assert_eq!(
            r.to_json(),
            json!({
                "success": true, "message": "File created.", "path": "src/Services/A.cs",
                "sizeBytes": 14, "hash": sha256_hex(b"using System;\n"),
                "created": true, "overwritten": false, "errorCode": null
            })
        );
        assert_eq!(
            std::fs::read(dir.path().join("src/Services/A.cs")).unwrap(),
            b"using System;\n"
        );
    }

    #[test]
    fn an_existing_file_needs_overwrite() {
        let dir = ws();
        let before = snapshot(dir.path());
        let r = create_in(dir.path(), json!({"path": "old.txt", "content": "new"}));
        assert_eq!(code(&r), Some("FileExists"));
        assert!(!r.created && !r.overwritten && r.hash.is_none());
        let r = create_in(
            dir.path(),
            json!({"path": "old.txt", "content": "new", "overwrite": false}),
        );
        assert_eq!(code(&r), Some("FileExists"));
        assert_eq!(snapshot(dir.path()), before);
        std::fs::set_permissions(
            dir.path().join("old.txt"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        let r = create_in(
            dir.path(),
            json!({"path": "old.txt", "content": "new", "overwrite": true}),
        );
        assert!(r.success);
        assert_eq!(
            (r.created, r.overwritten, r.message.as_str()),
            (false, true, "File overwritten.")
        );
        assert_eq!(std::fs::read(dir.path().join("old.txt")).unwrap(), b"new");
        let mode = std::fs::metadata(dir.path().join("old.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o750);
        let r = create_in(
            dir.path(),
            json!({"path": "fresh.txt", "content": "", "overwrite": true}),
        );
        assert_eq!(
            (r.success, r.created, r.overwritten, r.size_bytes),
            (true, true, false, 0)
        );
    }

    #[test]
    fn invalid_paths_are_refused() {
        let dir = ws();
        let before = snapshot(dir.path());
        for p in [
            json!(""),
            json!("   "),
            json!(null),
            json!(5),
            json!("/etc/x"),
            json!("C:\\x"),
            json!("c:x"),
            json!("\\\\server\\share\\x"),
            json!("//server/share/x"),
            json!("../x"),
            json!("a/../../x"),
            json!("a\\..\\..\\x"),
            json!("out/x"),
            json!("d"),
            json!("."),
            json!("a\0b"),
        ] {
            let r = create_in(dir.path(), json!({"path": p, "content": "x"}));
            assert_eq!(code(&r), Some("InvalidPath"), "{p}: {}", r.message);
            assert!(!r.success);
        }
        let r = create_in(dir.path(), json!({"content": "x"}));
        assert_eq!(code(&r), Some("InvalidPath"));
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn backslashes_are_separators_and_the_path_is_normalised() {
        let dir = ws();
        let r = create_in(
            dir.path(),
            json!({"path": "d\\sub\\.\\n.txt", "content": "x"}),
        );
        assert!(r.success, "{}", r.message);
        assert_eq!(r.path, "d/sub/n.txt");
        assert!(dir.path().join("d/sub/n.txt").is_file());
    }

    #[test]
    fn content_is_normalised() {
        assert_eq!(
            normalize_content("\u{feff}a\r\nb\rc\n\r\r\nd"),
            b"a\nb\nc\n\n\nd"
        );
        assert_eq!(normalize_content("a\u{feff}b"), "a\u{feff}b".as_bytes());
        assert_eq!(
            normalize_content("\u{feff}\u{feff}x"),
            "\u{feff}x".as_bytes()
        );
        assert_eq!(normalize_content("\r"), b"\n");
        assert_eq!(normalize_content(""), b"");
        let dir = ws();
        let r = create_in(
            dir.path(),
            json!({"path": "bom.txt", "content": "\u{feff}x\r\n"}),
        );
        assert_eq!(std::fs::read(dir.path().join("bom.txt")).unwrap(), b"x\n");
        assert_eq!(r.size_bytes, 2);
    }

    #[test]
    fn the_size_limit_counts_normalised_bytes() {
        let dir = ws();
        let small = CreateFileOptions { max_bytes: 5 };
        let r = create_with(dir.path(), json!({"path": "a", "content": "123456"}), small);
        assert_eq!(code(&r), Some("TooLarge"));
        assert!(!dir.path().join("a").exists());
        let r = create_with(dir.path(), json!({"path": "a", "content": "12345"}), small);
        assert!(r.success);
        let r = create_with(
            dir.path(),
            json!({"path": "b", "content": "ab\r\ncd"}),
            small,
        );
        assert!(r.success, "6 bytes given, 5 written");
        assert_eq!(CreateFileOptions::default().max_bytes, 10 * 1024 * 1024);
        let r = create_in(
            dir.path(),
            json!({"path": "big", "content": "x".repeat(10 * 1024 * 1024 + 1)}),
        );
        assert_eq!(code(&r), Some("TooLarge"));
    }

    #[test]
    fn bad_arguments_are_invalid_argument() {
        let dir = ws();
        for params in [
            json!({"path": "a"}),
            json!({"path": "a", "content": null}),
            json!({"path": "a", "content": 3}),
            json!({"path": "a", "content": ["x"]}),
            json!({"path": "a", "content": "x", "overwrite": "true"}),
            json!({"path": "a", "content": "x", "overwrite": 1}),
            json!([]),
            json!("a"),
        ] {
            let r = create_in(dir.path(), params.clone());
            assert_eq!(code(&r), Some("InvalidArgument"), "{params}");
        }
        // Unknown fields are ignored; a null overwrite is the default.
        let r = create_in(
            dir.path(),
            json!({"path": "a", "content": "x", "overwrite": null, "sessionId": "s"}),
        );
        assert!(r.success);
    }

    #[test]
    fn a_file_in_the_way_of_a_parent_is_directory_create_failed() {
        let dir = ws();
        let r = create_in(dir.path(), json!({"path": "old.txt/x.txt", "content": "x"}));
        assert_eq!(code(&r), Some("DirectoryCreateFailed"));
    }

    /// One row per filesystem step of a call: the code a fault there gives.
    fn fault_table(setup: fn() -> tempfile::TempDir, params: Value, expected: &[&str]) {
        let steps = {
            let dir = setup();
            let real = RealFs::open(dir.path()).unwrap();
            let counting = FaultFs::new(&real, |_| true, None);
            let r = create_file(&counting, &params, &CreateFileOptions::default());
            assert!(r.success, "{}", r.message);
            counting.log()
        };
        let ops: Vec<FsOp> = steps.iter().map(|(op, _)| *op).collect();
        assert_eq!(ops.len(), expected.len(), "steps: {steps:?}");
        for (k, want) in expected.iter().enumerate() {
            let dir = setup();
            let before = snapshot(dir.path());
            let real = RealFs::open(dir.path()).unwrap();
            let faulty = FaultFs::new(&real, |_| true, Some(k));
            let r = create_file(&faulty, &params, &CreateFileOptions::default());
            if *want == "ok" {
                // A fault in the commit's clean-up, after its commit point.
                assert!(r.success, "step {k} ({:?}): {}", steps[k], r.message);
                continue;
            }
            assert_eq!(
                code(&r),
                Some(*want),
                "step {k} ({:?}): {}",
                steps[k],
                r.message
            );
            assert!(!r.success && r.hash.is_none() && !r.overwritten);
            let after = snapshot(dir.path());
            assert!(after.keys().all(|p| !is_temp_name(p)), "step {k}");
            if *want == "HashFailed" {
                assert_ne!(after, before, "the content was written");
                assert!(r.size_bytes > 0);
            } else {
                assert_eq!(after, before, "step {k} ({:?})", steps[k]);
            }
        }
    }

    #[test]
    fn a_fault_at_any_step_of_a_create_gives_its_code_and_leaves_no_trace() {
        fault_table(
            || tempfile::tempdir().unwrap(),
            json!({"path": "n/e/w.txt", "content": "hello\n"}),
            &[
                "UnhandledException",    // kind n (guard, parent)
                "UnhandledException",    // kind n (guard, target)
                "UnhandledException",    // kind n/e/w.txt (exists?)
                "DirectoryCreateFailed", // kind n (missing parents)
                "WriteFailed",           // kind n/.patchspec/txn (a nested workspace's journal?)
                "WriteFailed",           // kind n/e/.patchspec/txn
                "WriteFailed",           // kind .patchspec (journal)
                "WriteFailed",           // create .patchspec
                "WriteFailed",           // kind .patchspec/txn
                "WriteFailed",           // create .patchspec/txn
                "WriteFailed",           // kind the transaction folder
                "WriteFailed",           // create it
                "WriteFailed",           // its identity (the seal)
                "WriteFailed",           // write the intent record
                "WriteFailed",           // sync its folder
                "WriteFailed",           // sync the root (.patchspec created)
                "WriteFailed",           // sync .patchspec (txn created)
                "WriteFailed",           // sync .patchspec/txn
                "DirectoryCreateFailed", // create n (a commit step)
                "DirectoryCreateFailed", // create n/e
                "WriteFailed",           // stage
                "WriteFailed",           // mark renaming
                "WriteFailed",           // sync the transaction folder
                "WriteFailed",           // rename
                "WriteFailed",           // sync the root (n created in it)
                "WriteFailed",           // sync n (n/e created in it)
                "WriteFailed",           // sync n/e (the file renamed in it)
                "WriteFailed",           // rename the intent to committed (the commit point)
                "WriteFailed",           // sync the transaction folder (makes it durable)
                "ok",                    // list it (clean-up)
                "ok",                    // remove the marker
                "ok",                    // remove the committed record
                "ok",                    // remove the folder
                "ok",                    // remove .patchspec/txn (empty)
                "ok",                    // remove .patchspec (empty)
                "HashFailed",            // read back
            ],
        );
    }

    #[test]
    fn a_fault_at_any_step_of_an_overwrite_gives_its_code_and_leaves_no_trace() {
        fn setup() -> tempfile::TempDir {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("f.txt"), "before\n").unwrap();
            dir
        }
        fault_table(
            setup,
            json!({"path": "f.txt", "content": "after\n", "overwrite": true}),
            &[
                "UnhandledException", // kind f.txt (guard)
                "UnhandledException", // kind f.txt (exists?)
                "UnhandledException", // read the pre-image
                "UnhandledException", // mode
                "WriteFailed",        // kind .patchspec (journal)
                "WriteFailed",        // create .patchspec
                "WriteFailed",        // kind .patchspec/txn
                "WriteFailed",        // create .patchspec/txn
                "WriteFailed",        // kind the transaction folder
                "WriteFailed",        // create it
                "WriteFailed",        // its identity (the seal)
                "WriteFailed",        // write the intent record
                "WriteFailed",        // sync its folder
                "WriteFailed",        // sync the root (.patchspec created)
                "WriteFailed",        // sync .patchspec (txn created)
                "WriteFailed",        // sync .patchspec/txn
                "WriteFailed",        // stage
                "WriteFailed",        // keep the pre-image (hard link)
                "WriteFailed",        // mark renaming
                "WriteFailed",        // sync the transaction folder
                "WriteFailed",        // rename
                "WriteFailed",        // sync dir
                "WriteFailed",        // rename the intent to committed (the commit point)
                "WriteFailed",        // sync the transaction folder (makes it durable)
                "ok",                 // list it (clean-up)
                "ok",                 // remove the pre-image link
                "ok",                 // remove the marker
                "ok",                 // remove the committed record
                "ok",                 // remove the folder
                "ok",                 // remove .patchspec/txn (empty)
                "ok",                 // remove .patchspec (empty)
                "HashFailed",         // read back
            ],
        );
    }

    #[test]
    fn run_reports_through_the_tool_outcome() {
        let dir = ws();
        let session = crate::call::Session::default();
        let params = json!({"path": "old.txt", "content": "x"});
        let out = run(&ToolCall {
            tool_name: "workspace_create_file",
            params: &params,
            workspace_root: dir.path(),
            session: &session,
        });
        assert!(!out.success);
        assert_eq!(out.result["errorCode"], "FileExists");
        assert_eq!(out.error.as_deref(), out.result["message"].as_str());
        let out = run(&ToolCall {
            tool_name: "workspace_create_file",
            params: &params,
            workspace_root: Path::new("/nonexistent/patchspec"),
            session: &session,
        });
        assert_eq!(out.result["errorCode"], "UnhandledException");
    }

    #[test]
    fn run_takes_the_size_limit_from_the_session() {
        let dir = ws();
        let mut session = crate::call::Session::default();
        session.limits.create_file_max_bytes = Some(4);
        let call = |params: &Value, session: &crate::call::Session| {
            run(&ToolCall {
                tool_name: "workspace_create_file",
                params,
                workspace_root: dir.path(),
                session,
            })
        };
        let out = call(&json!({"path": "big.txt", "content": "12345"}), &session);
        assert_eq!(out.result["errorCode"], "TooLarge");
        assert!(!dir.path().join("big.txt").exists());
        let out = call(&json!({"path": "fits.txt", "content": "1234"}), &session);
        assert!(out.success, "{}", out.result);
        let out = call(
            &json!({"path": "big.txt", "content": "12345"}),
            &crate::call::Session::default(),
        );
        assert!(
            out.success,
            "the default limit is back without the session's"
        );
    }

    proptest! {
        #[test]
        fn create_file_never_panics(v in crate::tools::tul::write_patch::tests::arb_json()) {
            let dir = tempfile::tempdir().unwrap();
            let fs = RealFs::open(dir.path()).unwrap();
            let r = create_file(&fs, &v, &CreateFileOptions::default());
            prop_assert_eq!(r.success, r.error_code.is_none());
        }

        #[test]
        fn normalised_content_has_no_cr_and_keeps_everything_else(s in "[a\r\n\u{feff}é]{0,12}") {
            let out = normalize_content(&s);
            prop_assert!(!out.contains(&b'\r'));
            let body = s.strip_prefix('\u{feff}').unwrap_or(&s);
            prop_assert_eq!(String::from_utf8(out).unwrap(), body.replace("\r\n", "\n").replace('\r', "\n"));
        }
    }
}
