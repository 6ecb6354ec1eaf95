//! `workspace.read_file` (TUL-001): the content of one file by its DocPath,
//! optionally cut at `maxBytes`, with ActiveFiles precedence.
//!
//! Order of checks: arguments (`INVALID_ARGUMENT`: not an object, `path`
//! missing/non-string/empty, `maxBytes` not a positive integer — `3.0` is
//! not an integer); then `session.activeFiles`, an exact key match
//! (`ALREADY_IN_CONTEXT`); then the workspace through the path guard (a path
//! that escapes or is absolute is `INVALID_ARGUMENT`; missing, a directory
//! or not a regular file is `NOT_FOUND`); unexpected I/O errors are
//! `INTERNAL_ERROR`. The path is used as given: no case-insensitive lookup.
//!
//! Content: `maxBytes` cuts the bytes, backing off so that no UTF-8
//! character is split ([`truncation_point`]); bytes that are not UTF-8
//! become U+FFFD and the file object then says `"encoding": "utf-8-lossy"`.
//! A BOM and CRLF endings are returned as they are. Extension: the file
//! object carries `sha256`, the SHA-256 of the whole file — the value
//! `workspace_write_patch` wants as `originalSha256`. Unknown argument
//! fields are ignored (AGN-005 session identifiers may travel with them).

use std::borrow::Cow;
use std::io;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::tools::wire::{Failed, Succeeded};

use crate::call::{Session, ToolCall, ToolOutcome};
use crate::fs::{EntryKind, Fs};
use crate::hash::sha256_hex;
use crate::path_guard::{resolve, GuardOptions, PathError};
use crate::tools::{guarded, OpenFs};

/// The error codes of TUL-001 §4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReadFileErrorCode {
    /// The path is a key of `session.activeFiles`.
    AlreadyInContext,
    /// No regular file at the path.
    NotFound,
    /// Bad arguments, or a path that leaves the workspace.
    InvalidArgument,
    /// An unexpected failure.
    InternalError,
}

impl ReadFileErrorCode {
    /// The wire code.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadFileErrorCode::AlreadyInContext => "ALREADY_IN_CONTEXT",
            ReadFileErrorCode::NotFound => "NOT_FOUND",
            ReadFileErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ReadFileErrorCode::InternalError => "INTERNAL_ERROR",
        }
    }
}

/// A failed read: the code and the messages for `errors[]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFileError {
    /// What went wrong.
    pub code: ReadFileErrorCode,
    /// Human-readable messages (at least one).
    pub errors: Vec<String>,
}

impl ReadFileError {
    fn new(code: ReadFileErrorCode, message: String) -> ReadFileError {
        ReadFileError {
            code,
            errors: vec![message],
        }
    }
}

/// A successful read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileContent {
    /// The DocPath, as given.
    pub path: String,
    /// Size of the whole file in bytes.
    pub size_bytes: u64,
    /// The returned bytes as text.
    pub content: String,
    /// True when `maxBytes` cut the content short.
    pub is_truncated: bool,
    /// True when some returned bytes were not UTF-8 and became U+FFFD.
    pub lossy: bool,
    /// SHA-256 (lowercase hex) of the whole file.
    pub sha256: String,
}

/// Validated arguments: the params of `workspace.read_file` (TUL-001 §3),
/// as [`check_args`] reads them. Unknown fields are ignored; `null` counts
/// as absent.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "workspace.read_file params")]
pub struct ReadFileArgs {
    /// The DocPath: the file's path relative to the workspace root,
    /// `/`-separated, used exactly as given (no case folding, no `\`
    /// separators). A path that is a key of the session's ActiveFiles is
    /// refused with `ALREADY_IN_CONTEXT`: that content is already in context.
    #[schemars(regex(pattern = r"\S"))]
    pub path: String,
    /// Return at most this many bytes (cut back so that no UTF-8 character
    /// is split; `isTruncated` then says so). Absent: the whole file.
    #[schemars(range(min = 1))]
    pub max_bytes: Option<usize>,
}

/// The result document of `workspace.read_file` (TUL-001 §4): the file, or
/// an error code with its messages.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "workspace.read_file result")]
pub enum ReadFileDocument<'a> {
    /// The file was read.
    Read {
        /// Always `true` here.
        success: Succeeded,
        /// The file.
        file: FileObject<'a>,
    },
    /// The read was refused.
    Refused {
        /// Always `false` here.
        success: Failed,
        /// Why.
        #[serde(rename = "errorCode")]
        error_code: ReadFileErrorCode,
        /// Human-readable messages (at least one).
        errors: &'a [String],
    },
}

/// The `file` object of a successful read.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileObject<'a> {
    /// The DocPath, as given.
    pub path: &'a str,
    /// Size of the whole file in bytes.
    pub size_bytes: u64,
    /// The returned bytes as text (a BOM and CRLF endings as they are).
    pub content: &'a str,
    /// True when `maxBytes` cut the content short.
    pub is_truncated: bool,
    /// Present when some returned bytes were not UTF-8 and became U+FFFD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// Extension: the lowercase hex SHA-256 of the whole file (what
    /// `workspace_write_patch` wants as `originalSha256`).
    pub sha256: &'a str,
}

/// How `content` was decoded, when not plain UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub enum Encoding {
    /// Bytes that are not UTF-8 became U+FFFD.
    #[serde(rename = "utf-8-lossy")]
    Utf8Lossy,
}

impl<'a> ReadFileDocument<'a> {
    /// The document for a read's result.
    pub fn of(result: &'a Result<FileContent, ReadFileError>) -> ReadFileDocument<'a> {
        match result {
            Ok(f) => ReadFileDocument::Read {
                success: Succeeded::default(),
                file: FileObject {
                    path: &f.path,
                    size_bytes: f.size_bytes,
                    content: &f.content,
                    is_truncated: f.is_truncated,
                    encoding: f.lossy.then_some(Encoding::Utf8Lossy),
                    sha256: &f.sha256,
                },
            },
            Err(e) => ReadFileDocument::Refused {
                success: Failed::default(),
                error_code: e.code,
                errors: &e.errors,
            },
        }
    }
}

/// The result document for a read (TUL-001 §4).
pub fn to_json(result: &Result<FileContent, ReadFileError>) -> Value {
    crate::tools::wire::document(&ReadFileDocument::of(result))
}

/// Where to cut `bytes` to return at most `max` of them without splitting a
/// UTF-8 character: `max` itself, unless it falls inside a well-formed
/// multi-byte character, which is then left out whole. (Bytes that are not
/// UTF-8 are not characters and are cut anywhere.)
pub fn truncation_point(bytes: &[u8], max: usize) -> usize {
    if max >= bytes.len() {
        return bytes.len();
    }
    for i in (max.saturating_sub(3)..max).rev() {
        let b = bytes[i];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let width = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 1,
        };
        let splits = i + width > max && i + width <= bytes.len();
        return if splits && std::str::from_utf8(&bytes[i..i + width]).is_ok() {
            i
        } else {
            max
        };
    }
    max
}

/// Check the arguments and ActiveFiles (steps 1–3 of TUL-001 §5).
pub fn check_args(params: &Value, session: &Session) -> Result<ReadFileArgs, ReadFileError> {
    use ReadFileErrorCode::InvalidArgument;
    let Some(obj) = params.as_object() else {
        return Err(ReadFileError::new(
            InvalidArgument,
            "The arguments must be a JSON object with a 'path'.".into(),
        ));
    };
    let path = match obj.get("path") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => {
            return Err(ReadFileError::new(
                InvalidArgument,
                "'path' must not be empty.".into(),
            ))
        }
        None | Some(Value::Null) => {
            return Err(ReadFileError::new(
                InvalidArgument,
                "'path' is required.".into(),
            ))
        }
        Some(_) => {
            return Err(ReadFileError::new(
                InvalidArgument,
                "'path' must be a string.".into(),
            ))
        }
    };
    let max_bytes = match obj.get("maxBytes") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => {
                return Err(ReadFileError::new(
                    InvalidArgument,
                    format!("'maxBytes' must be a positive integer, got {v}."),
                ))
            }
        },
    };
    let mut errs = Vec::new();
    if session.active_files.contains_key(&path) {
        errs.push(format!(
            "File '{path}' is already present in activeFiles for this session; reuse that content."
        ));
        return Err(ReadFileError {
            code: ReadFileErrorCode::AlreadyInContext,
            errors: errs,
        });
    }
    Ok(ReadFileArgs { path, max_bytes })
}

fn not_found(path: &str) -> ReadFileError {
    ReadFileError::new(
        ReadFileErrorCode::NotFound,
        format!("File '{path}' is not available in activeFiles or the workspace. Ask the user to upload it if needed."),
    )
}

/// Read validated `args` from the workspace of `fs` (step 4 of TUL-001 §5).
pub fn read_at(fs: &dyn Fs, args: &ReadFileArgs) -> Result<FileContent, ReadFileError> {
    use ReadFileErrorCode::{InternalError, InvalidArgument, NotFound};
    let path = args.path.as_str();
    let guarded = match resolve(fs, path, GuardOptions::default()) {
        Ok(g) => g,
        Err(PathError::NotADirectory { .. }) => return Err(not_found(path)),
        Err(e @ PathError::Io { .. }) => {
            return Err(ReadFileError::new(
                InternalError,
                format!("Reading '{path}' failed: {e}."),
            ))
        }
        Err(e) if e.is_escape() => {
            return Err(ReadFileError::new(
                InvalidArgument,
                format!("Path '{path}' is outside the workspace."),
            ))
        }
        Err(e) => {
            return Err(ReadFileError::new(
                InvalidArgument,
                format!("Invalid path: {e}."),
            ))
        }
    };
    match fs.kind(&guarded.target) {
        Ok(Some(EntryKind::File)) => {}
        Ok(Some(EntryKind::Dir)) => {
            return Err(ReadFileError::new(
                NotFound,
                format!(
                "'{path}' is a directory, not a file; read the files inside it by their own paths."
            ),
            ))
        }
        Ok(None | Some(EntryKind::Symlink | EntryKind::Other)) => return Err(not_found(path)),
        Err(e) => {
            return Err(ReadFileError::new(
                InternalError,
                format!("Reading '{path}' failed: {e}."),
            ))
        }
    }
    let bytes = match fs.read(&guarded.target) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(not_found(path)),
        Err(e) => {
            return Err(ReadFileError::new(
                InternalError,
                format!("Reading '{path}' failed: {e}."),
            ))
        }
    };
    let cut = args
        .max_bytes
        .map_or(bytes.len(), |max| truncation_point(&bytes, max));
    let decoded = String::from_utf8_lossy(&bytes[..cut]);
    let lossy = matches!(decoded, Cow::Owned(_));
    Ok(FileContent {
        path: path.to_string(),
        size_bytes: bytes.len() as u64,
        content: decoded.into_owned(),
        is_truncated: cut < bytes.len(),
        lossy,
        sha256: sha256_hex(&bytes),
    })
}

#[cfg(test)]
/// Run `workspace.read_file` on the workspace of `fs`.
pub fn read_file(
    fs: &dyn Fs,
    params: &Value,
    session: &Session,
) -> Result<FileContent, ReadFileError> {
    let args = check_args(params, session)?;
    read_at(fs, &args)
}

/// Run one call from its wire params, opening the workspace with `open`. A panic (a bug) is
/// `INTERNAL_ERROR`.
pub fn run_with(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    let done = |result: Result<FileContent, ReadFileError>| ToolOutcome {
        success: result.is_ok(),
        error: result
            .as_ref()
            .err()
            .and_then(|e| e.errors.first().cloned()),
        result: to_json(&result),
    };
    guarded(
        || {
            done((|| {
                let args = check_args(call.params, call.session)?;
                let fs = open(call.workspace_root).map_err(|e| {
                    ReadFileError::new(
                        ReadFileErrorCode::InternalError,
                        format!("The workspace could not be opened: {e}."),
                    )
                })?;
                read_at(&*fs, &args)
            })())
        },
        || {
            done(Err(ReadFileError::new(
                ReadFileErrorCode::InternalError,
                "An unexpected error occurred.".into(),
            )))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One call through the tool's wire entry, on the real filesystem.
    fn run(call: &ToolCall<'_>) -> ToolOutcome {
        run_with(call, &crate::tools::open_real)
    }
    use crate::fs::{FaultFs, FsOp, RealFs};
    use proptest::prelude::*;
    use serde_json::json;
    use std::os::unix::fs::symlink;

    fn ws() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "héllo\r\n").unwrap();
        std::fs::write(dir.path().join("bom.txt"), "\u{feff}x\n").unwrap();
        std::fs::write(dir.path().join("bin"), b"\xffa\xfe").unwrap();
        symlink("/etc", dir.path().join("out")).unwrap();
        symlink("a.txt", dir.path().join("link.txt")).unwrap();
        dir
    }

    fn read_in(dir: &tempfile::TempDir, params: Value, active: &[&str]) -> Value {
        let fs = RealFs::open(dir.path()).unwrap();
        let mut session = Session::default();
        for p in active {
            session.active_files.insert(p.to_string(), "content".into());
        }
        to_json(&read_file(&fs, &params, &session))
    }

    fn error_code(doc: &Value) -> &str {
        doc["errorCode"].as_str().unwrap_or("<success>")
    }

    #[test]
    fn a_file_is_returned_whole_with_the_exact_document() {
        let dir = ws();
        let doc = read_in(&dir, json!({"path": "a.txt"}), &[]);
        assert_eq!(
            doc,
            json!({"success": true, "file": {"path": "a.txt", "sizeBytes": 8, "content": "héllo\r\n",
                "isTruncated": false, "sha256": sha256_hex("héllo\r\n".as_bytes())}})
        );
        assert_eq!(
            read_in(&dir, json!({"path": "bom.txt"}), &[])["file"]["content"],
            "\u{feff}x\n"
        );
        assert_eq!(
            read_in(&dir, json!({"path": "link.txt"}), &[])["file"]["path"],
            "link.txt"
        );
        assert_eq!(
            read_in(&dir, json!({"path": "d/../a.txt", "maxBytes": null}), &[])["file"]
                ["sizeBytes"],
            8
        );
    }

    #[test]
    fn active_files_come_first_by_exact_key() {
        let dir = ws();
        let doc = read_in(&dir, json!({"path": "a.txt", "maxBytes": 1}), &["a.txt"]);
        assert_eq!(
            doc,
            json!({"success": false, "errorCode": "ALREADY_IN_CONTEXT",
                "errors": ["File 'a.txt' is already present in activeFiles for this session; reuse that content."]})
        );
        // Even for a file the workspace does not have.
        assert_eq!(
            error_code(&read_in(&dir, json!({"path": "gone.txt"}), &["gone.txt"])),
            "ALREADY_IN_CONTEXT"
        );
        // Only an exact key matches.
        assert_eq!(
            error_code(&read_in(&dir, json!({"path": "./a.txt"}), &["a.txt"])),
            "<success>"
        );
        assert_eq!(
            error_code(&read_in(&dir, json!({"path": "A.txt"}), &["a.txt"])),
            "NOT_FOUND"
        );
        // Arguments are checked before ActiveFiles.
        assert_eq!(
            error_code(&read_in(
                &dir,
                json!({"path": "a.txt", "maxBytes": 0}),
                &["a.txt"]
            )),
            "INVALID_ARGUMENT"
        );
    }

    #[test]
    fn missing_files_and_directories_are_not_found() {
        let dir = ws();
        for p in ["nope.txt", "d", "a.txt/x", "d/nope"] {
            let doc = read_in(&dir, json!({"path": p}), &[]);
            assert_eq!(error_code(&doc), "NOT_FOUND", "{p}");
            assert!(doc["errors"][0].as_str().unwrap().contains(p));
        }
    }

    #[test]
    fn bad_arguments_and_escapes_are_invalid_argument() {
        let dir = ws();
        for params in [
            json!({}),
            json!({"path": ""}),
            json!({"path": "  "}),
            json!({"path": null}),
            json!({"path": 1}),
            json!({"path": "a.txt", "maxBytes": 0}),
            json!({"path": "a.txt", "maxBytes": -1}),
            json!({"path": "a.txt", "maxBytes": 3.0}),
            json!({"path": "a.txt", "maxBytes": "3"}),
            json!({"path": "a.txt", "maxBytes": true}),
            json!({"path": "../x"}),
            json!({"path": "d/../../x"}),
            json!({"path": "out/hostname"}),
            json!({"path": "/etc/hostname"}),
            json!({"path": "d\\a.txt"}),
            json!([]),
            json!(null),
        ] {
            let doc = read_in(&dir, params.clone(), &[]);
            assert_eq!(error_code(&doc), "INVALID_ARGUMENT", "{params}");
            assert!(!doc["errors"][0].as_str().unwrap().is_empty());
        }
    }

    #[test]
    fn truncation_never_splits_a_character() {
        let dir = ws();
        // "héllo\r\n": h(1) é(2) l l o \r \n = 8 bytes
        let cases = [
            (1, "h", true),
            (2, "h", true),
            (3, "hé", true),
            (7, "héllo\r", true),
            (8, "héllo\r\n", false),
            (u64::MAX, "héllo\r\n", false),
        ];
        for (max, content, truncated) in cases {
            let doc = read_in(&dir, json!({"path": "a.txt", "maxBytes": max}), &[]);
            assert_eq!(doc["file"]["content"], content, "maxBytes {max}");
            assert_eq!(doc["file"]["isTruncated"], truncated, "maxBytes {max}");
            assert_eq!(doc["file"]["sizeBytes"], 8);
        }
        let four = "😀".as_bytes();
        for max in 1..4 {
            assert_eq!(truncation_point(four, max), 0);
        }
        assert_eq!(truncation_point(four, 4), 4);
        assert_eq!(truncation_point(b"ab", 1), 1);
        // Bytes that are not a character are cut anywhere.
        assert_eq!(truncation_point(b"\xe2\x82", 1), 1);
        assert_eq!(truncation_point(b"a\xe2\x82x", 2), 2);
        assert_eq!(truncation_point(b"\xff\xff\xff", 2), 2);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced_and_flagged() {
        let dir = ws();
        let doc = read_in(&dir, json!({"path": "bin"}), &[]);
        assert_eq!(doc["file"]["content"], "\u{fffd}a\u{fffd}");
        assert_eq!(doc["file"]["encoding"], "utf-8-lossy");
        assert_eq!(doc["file"]["sizeBytes"], 3);
        let doc = read_in(&dir, json!({"path": "bin", "maxBytes": 2}), &[]);
        assert_eq!(doc["file"]["content"], "\u{fffd}a");
        assert!(read_in(&dir, json!({"path": "a.txt"}), &[])["file"]
            .get("encoding")
            .is_none());
    }

    #[test]
    fn unexpected_io_errors_are_internal_errors() {
        let dir = ws();
        let real = RealFs::open(dir.path()).unwrap();
        let args = check_args(&json!({"path": "a.txt"}), &Session::default()).unwrap();
        for op in [FsOp::Kind, FsOp::Read] {
            let filter: fn(FsOp) -> bool = match op {
                FsOp::Kind => |op| op == FsOp::Kind,
                _ => |op| op == FsOp::Read,
            };
            let faulty = FaultFs::new(&real, filter, Some(0));
            let err = read_at(&faulty, &args).unwrap_err();
            assert_eq!(err.code, ReadFileErrorCode::InternalError, "{op:?}");
        }
        let session = Session::default();
        let params = json!({"path": "a.txt"});
        let out = run(&ToolCall {
            tool_name: "workspace.read_file",
            params: &params,
            workspace_root: std::path::Path::new("/nonexistent/patchspec"),
            session: &session,
        });
        assert_eq!(out.result["errorCode"], "INTERNAL_ERROR");
        assert_eq!(out.error.as_deref(), out.result["errors"][0].as_str());
    }

    proptest! {
        #[test]
        fn read_file_never_panics(v in crate::tools::tul::write_patch::tests::arb_json()) {
            let dir = ws();
            let doc = read_in(&dir, v, &["a.txt"]);
            prop_assert!(doc["success"].is_boolean());
        }

        #[test]
        fn truncation_is_a_prefix_that_is_valid_utf8_when_the_file_is(s in "[aé😀\u{800}]{0,8}", max in 1usize..40) {
            let bytes = s.as_bytes();
            let cut = truncation_point(bytes, max);
            prop_assert!(cut <= max.min(bytes.len()));
            prop_assert!(std::str::from_utf8(&bytes[..cut]).is_ok());
            // It backs off at most one character.
            prop_assert!(max.min(bytes.len()) - cut < 4);
        }
    }
}
