//! The typed front door: a [`Workspace`] opened once, then one method per
//! tool, each taking Rust values and returning `Result<Success, ToolError>`
//! — the same tool code [`crate::dispatch`] runs for a JSON call, without
//! the JSON.
//!
//! A workspace is opened read-only ([`Workspace::open`]: no writer lock,
//! no recovery, nothing written) or for writing ([`Workspace::open_for_writing`]:
//! the writer lock, held until the value is dropped, and the recovery of a
//! commit a dead writer left). Only a writable workspace has the editing
//! tools; the type says which one you hold.

use std::io;
use std::marker::PhantomData;
use std::path::Path;

use crate::error::ToolError;
use crate::fs::RealFs;
use crate::tools::tul::apply_patch::{self, ApplyOptions, ChangedFile, Refusal};
use crate::tools::tul::create_file::{
    self, CreateFileErrorCode, CreateFileOptions, CreateFileParams, CreateFileResult,
};
use crate::tools::tul::read_file::{self, FileContent, ReadFileArgs, ReadFileErrorCode};
use crate::tools::tul::write_patch::{self, BatchReport, ValidatedBatch};

/// What a [`Workspace`] may do: [`ReadOnly`] or [`Writable`].
pub trait Access: sealed::Sealed {}

/// A workspace opened by [`Workspace::open`]: the reading tools only.
#[derive(Debug)]
pub enum ReadOnly {}

/// A workspace opened by [`Workspace::open_for_writing`]: every tool,
/// under the writer lock.
#[derive(Debug)]
pub enum Writable {}

impl Access for ReadOnly {}
impl Access for Writable {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ReadOnly {}
    impl Sealed for super::Writable {}
}

/// A workspace: a folder every path of every call is relative to, held
/// open (a directory handle: a folder swapped for a symlink later cannot
/// lead a call outside it).
///
/// ```
/// use patchspec_engine::{ApplyOptions, Operation, Workspace};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
///
/// let workspace = Workspace::open_for_writing(dir.path())?;
/// let patch = "*** Begin Patch\n\
///              *** Update File: hello.txt\n\
///              @@\n\
///              -hello\n\
///              +hello, world\n\
///              *** End Patch\n";
/// let changed = workspace.apply_patch(patch, &ApplyOptions::default())?;
/// assert_eq!(changed[0].path, "hello.txt");
/// assert_eq!(changed[0].operation, Operation::Update);
///
/// // A refusal is a value: its kind, reason and message name what and why
/// // (and, for a non-atomic apply, which sections stayed applied).
/// let refusal = workspace
///     .apply_patch(patch, &ApplyOptions::default())
///     .unwrap_err();
/// assert_eq!(refusal.error.kind.as_str(), "patch_apply_error");
/// assert_eq!(refusal.error.reason.map(|r| r.as_str()), Some("context_not_found"));
/// assert!(refusal.changed_files.is_empty());
///
/// let read = workspace.read_file("hello.txt", None)?;
/// assert_eq!(read.content, "hello, world\n");
/// # Ok(())
/// # }
/// ```
pub struct Workspace<A: Access = ReadOnly> {
    fs: RealFs,
    access: PhantomData<A>,
}

impl<A: Access> std::fmt::Debug for Workspace<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.fs.root_path())
            .finish_non_exhaustive()
    }
}

impl Workspace<ReadOnly> {
    /// Open the folder at `root` for reading: no lock is taken and nothing
    /// is written, not even the recovery of an interrupted commit (a
    /// pending one is reported as an event; the next writer recovers it).
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Workspace {
            fs: crate::workspace::open_for_reading(root.as_ref())?,
            access: PhantomData,
        })
    }
}

impl Workspace<Writable> {
    /// Open the folder at `root` for writing: take the writer lock (waiting
    /// for another writer to finish) and recover a commit a dead writer
    /// left; an error when recovery is impossible (docs/reliability.md).
    pub fn open_for_writing(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Workspace {
            fs: crate::workspace::open_for_writing(root.as_ref())?,
            access: PhantomData,
        })
    }

    /// `apply_patch`: apply an envelope (patch-envelope.md), all-or-nothing
    /// unless `options.atomic` is false. On success, the files changed (or,
    /// with `options.dry_run`, that would change), in envelope order.
    ///
    /// On a refusal with `atomic: false`, the sections before the refused
    /// one stay applied: [`Refusal::changed_files`] lists them.
    pub fn apply_patch(
        &self,
        patch: &str,
        options: &ApplyOptions,
    ) -> Result<Vec<ChangedFile>, Refusal> {
        apply_patch::apply_text(&self.fs, patch, options)
    }

    /// `workspace_write_patch`: apply a validated batch
    /// (`write_patch::validate` builds one from the wire params), every
    /// file or none. `Err` holds the same report when a file was refused
    /// or the commit failed: each file's outcome says why.
    pub fn write_patch(&self, batch: &ValidatedBatch) -> Result<BatchReport, BatchReport> {
        let report = write_patch::apply_batch(&self.fs, batch);
        if report.success() {
            Ok(report)
        } else {
            Err(report)
        }
    }

    /// `workspace_create_file`: create the text file `path` with `content`
    /// (line endings normalised to LF), or replace it when `overwrite` is
    /// true; the default size limit applies.
    pub fn create_file(
        &self,
        path: &str,
        content: &str,
        overwrite: bool,
    ) -> Result<CreateFileResult, ToolError<CreateFileErrorCode>> {
        let params = CreateFileParams {
            path,
            content,
            overwrite: Some(overwrite),
        };
        let result = create_file::create(&self.fs, &params, &CreateFileOptions::default());
        match result.error_code {
            None => Ok(result),
            Some(code) => Err(ToolError::new(code, result.message)),
        }
    }
}

impl<A: Access> Workspace<A> {
    /// `workspace.read_file`: the file at `path`, its content cut at
    /// `max_bytes` (on a character boundary) when given.
    pub fn read_file(
        &self,
        path: &str,
        max_bytes: Option<usize>,
    ) -> Result<FileContent, ToolError<ReadFileErrorCode>> {
        let args = ReadFileArgs {
            path: path.to_string(),
            max_bytes,
        };
        read_file::read_at(&self.fs, &args).map_err(|e| ToolError::new(e.code, e.errors.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::tul::apply_patch::ErrorKind;

    #[test]
    fn a_read_only_workspace_writes_nothing_and_reads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        assert_eq!(workspace.read_file("a.txt", None).unwrap().content, "a\n");
        let missing = workspace.read_file("b.txt", None).unwrap_err();
        assert_eq!(missing.kind, ReadFileErrorCode::NotFound);
        drop(workspace);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"], "no private folder, no lock file");
    }

    #[test]
    fn each_writing_tool_returns_its_typed_success_or_error() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open_for_writing(dir.path()).unwrap();
        let created = workspace.create_file("d/a.txt", "one\r\n", false).unwrap();
        assert!(created.created);
        assert_eq!(std::fs::read(dir.path().join("d/a.txt")).unwrap(), b"one\n");
        let exists = workspace
            .create_file("d/a.txt", "two\n", false)
            .unwrap_err();
        assert_eq!(exists.kind, CreateFileErrorCode::FileExists);

        let refused = workspace
            .apply_patch("*** Begin Patch\n", &ApplyOptions::default())
            .unwrap_err()
            .error;
        assert_eq!(refused.kind, ErrorKind::PatchParseError);
        assert_eq!(refused.reason, Some(crate::error::Reason::PatchParseError));

        let sha = crate::hash::sha256_hex(b"one\n");
        let batch = write_patch::validate(&serde_json::json!({"files": [{
            "docPath": "d/a.txt", "originalSha256": sha,
            "changes": [{"operation": "insert", "afterLine": 1, "newLines": ["two"]}]
        }]}))
        .unwrap();
        workspace.write_patch(&batch).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("d/a.txt")).unwrap(),
            b"one\ntwo\n"
        );
        let stale = workspace.write_patch(&batch).unwrap_err();
        assert!(!stale.success());
    }
}
