//! The applier over a workspace: locate each docPath, verify its SHA, apply
//! its changes in memory, then commit every file through [`crate::commit`]
//! in one transaction.
//!
//! All-or-nothing across files (C-wp-atomic-batch): nothing is written until
//! every file has been located, hashed and patched in memory; a failure in
//! any file leaves every file untouched, and a failure during the commit is
//! rolled back by the committer.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use super::apply::{splice_changes, ApplyError};
use super::batch::{FilePatch, ValidatedBatch};
use crate::commit::{commit, Change};
use crate::content::{Content, Shared, Splice};
use crate::fs::{EntryKind, Fs};
use crate::layout::join;
use crate::hash::same_digest;
use crate::path_guard::{resolve, GuardOptions, PathError};

/// What `skippedBecause` says of a file that was fine but not written
/// because another file of the batch failed.
pub const SKIPPED_BECAUSE_OTHER: &str = "another file in the batch failed";

/// What `skippedBecause` says when the commit itself failed and was rolled back.
pub const SKIPPED_BECAUSE_COMMIT: &str =
    "the batch could not be written; the commit was rolled back";

/// Why one file of a batch could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileFailure {
    /// The docPath breaks a path-safety rule (`code` is `outside_workspace`
    /// or `path_absolute`, `path_backslash`, `path_nul`, `path_empty`,
    /// `path_too_many_links`).
    Path {
        /// The wire code.
        code: &'static str,
        /// The guard's explanation.
        message: String,
    },
    /// No regular file answers to the docPath, exactly or case-insensitively.
    NotFound {
        /// Why (missing, a directory, ...).
        message: String,
    },
    /// More than one file matches the docPath case-insensitively.
    Ambiguous {
        /// The matching workspace paths, sorted.
        candidates: Vec<String>,
    },
    /// Two docPaths of the batch name the same file (through a symlink or
    /// case-insensitive resolution).
    DuplicateTarget {
        /// The workspace path both resolve to.
        path: String,
        /// The earlier file patch that resolved to it.
        related_file_index: usize,
    },
    /// Reading or probing the file failed.
    Io {
        /// The I/O error.
        message: String,
    },
    /// The file's bytes are not the ones the patch was planned on.
    ShaMismatch {
        /// `originalSha256` as given.
        expected: String,
        /// The SHA-256 of the file now.
        actual: String,
    },
    /// The changes do not fit the file.
    Apply(ApplyError),
}

impl FileFailure {
    /// The snake_case wire code.
    pub fn code(&self) -> &'static str {
        match self {
            FileFailure::Path { code, .. } => code,
            FileFailure::NotFound { .. } => "file_not_found",
            FileFailure::Ambiguous { .. } => "ambiguous_doc_path",
            FileFailure::DuplicateTarget { .. } => "duplicate_target",
            FileFailure::Io { .. } => "io_error",
            FileFailure::ShaMismatch { .. } => "sha256_mismatch",
            FileFailure::Apply(ApplyError::RangeOutOfBounds { .. }) => "range_out_of_bounds",
            FileFailure::Apply(ApplyError::LineMismatch { .. }) => "line_mismatch",
            FileFailure::Apply(ApplyError::InvalidChange { .. }) => "invalid_change",
        }
    }

    /// A human-readable explanation (without the file's location).
    pub fn message(&self) -> String {
        match self {
            FileFailure::Path { message, .. }
            | FileFailure::NotFound { message }
            | FileFailure::Io { message } => message.clone(),
            FileFailure::Ambiguous { candidates } => format!(
                "the docPath matches {} files case-insensitively ({}); no file has exactly this path",
                candidates.len(),
                candidates.join(", ")
            ),
            FileFailure::DuplicateTarget {
                path,
                related_file_index,
            } => format!("resolves to {path}, as files[{related_file_index}] does; a file may be patched once per batch"),
            FileFailure::ShaMismatch { expected, actual } => format!(
                "the file changed since the patch was planned: its SHA-256 is {actual}, originalSha256 is {expected}; read it again and re-plan"
            ),
            FileFailure::Apply(e) => e.to_string(),
        }
    }
}

/// What happened to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileStatus {
    /// Written (or already identical); the SHA-256 of the new content.
    Applied {
        /// Lowercase hex SHA-256 of the file after the batch.
        new_sha256: String,
    },
    /// This file is why the batch was not applied.
    Failed(FileFailure),
    /// Fine, but not written because the batch as a whole was not.
    Skipped(&'static str),
}

/// One file's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOutcome {
    /// The workspace path the docPath resolved to (when it did).
    pub path: Option<String>,
    /// Applied, failed or skipped.
    pub status: FileStatus,
}

/// The commit step that failed (after every file was fine in memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitFailure {
    /// `staging`, `renaming`, `trashing` or `syncing`.
    pub step: &'static str,
    /// The path being written.
    pub path: String,
    /// The committer's message.
    pub message: String,
    /// False when the rollback itself failed (the workspace may differ).
    pub rolled_back: bool,
}

/// The outcome of `apply_batch`, one entry per file in request order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchReport {
    /// Per-file outcomes, aligned with `batch.files`.
    pub files: Vec<FileOutcome>,
    /// Set when every file was fine but writing them failed.
    pub commit_failure: Option<CommitFailure>,
}

impl BatchReport {
    /// True when every file was applied.
    pub fn success(&self) -> bool {
        self.commit_failure.is_none()
            && self
                .files
                .iter()
                .all(|f| matches!(f.status, FileStatus::Applied { .. }))
    }
}

/// A file ready to be written.
struct Prepared {
    target: String,
    /// The file's bytes, shared with the splice that reads from them.
    before: Shared,
    /// The new bytes; `None` when the changes leave the file as it was.
    after: Option<Content>,
    /// The SHA-256 of the file after the batch.
    new_sha256: String,
    mode: Option<u32>,
}

fn path_failure(e: PathError) -> FileFailure {
    let message = e.to_string();
    match e {
        PathError::Escapes(_) | PathError::SymlinkEscapes { .. } => FileFailure::Path {
            code: "outside_workspace",
            message,
        },
        PathError::Absolute(_) => FileFailure::Path {
            code: "path_absolute",
            message,
        },
        PathError::Backslash(_) => FileFailure::Path {
            code: "path_backslash",
            message,
        },
        PathError::Nul => FileFailure::Path {
            code: "path_nul",
            message,
        },
        PathError::Empty => FileFailure::Path {
            code: "path_empty",
            message,
        },
        PathError::TooManyLinks(_) => FileFailure::Path {
            code: "path_too_many_links",
            message,
        },
        PathError::Private(_) => FileFailure::Path {
            code: "private_path",
            message,
        },
        PathError::NotADirectory { .. } => FileFailure::NotFound { message },
        PathError::Io { .. } => FileFailure::Io { message },
    }
}

fn io_failure(path: &str, e: &io::Error) -> FileFailure {
    FileFailure::Io {
        message: format!("{path}: {e}"),
    }
}


/// Every on-disk path whose components equal `comps` case-insensitively.
fn walk_ci(
    fs: &dyn Fs,
    dir: &str,
    real_dir: bool,
    comps: &[&str],
    found: &mut Vec<String>,
) -> Result<(), FileFailure> {
    let Some((first, rest)) = comps.split_first() else {
        return Ok(());
    };
    let entries = match fs.list_dir(dir) {
        Ok(entries) => entries,
        // A symlink that does not lead to a listable directory (a file, a
        // dangling or escaping link) simply has no children.
        Err(_) if !real_dir => return Ok(()),
        Err(e) => return Err(io_failure(dir, &e)),
    };
    for (name, kind) in entries {
        if name.to_lowercase() != *first {
            continue;
        }
        let path = join(dir, &name);
        if rest.is_empty() {
            if matches!(kind, EntryKind::File | EntryKind::Symlink) {
                found.push(path);
            }
        } else if matches!(kind, EntryKind::Dir | EntryKind::Symlink) {
            walk_ci(fs, &path, kind == EntryKind::Dir, rest, found)?;
        }
    }
    Ok(())
}

/// The workspace file a docPath names: the exact path when it is a file,
/// else the one file matching it case-insensitively (C-wp-doc-path).
pub(crate) fn locate(fs: &dyn Fs, doc_path: &str) -> Result<String, FileFailure> {
    let guarded = resolve(fs, doc_path, GuardOptions::for_writing()).map_err(path_failure)?;
    match fs
        .kind(&guarded.target)
        .map_err(|e| io_failure(doc_path, &e))?
    {
        Some(EntryKind::File) => return Ok(guarded.target),
        Some(EntryKind::Dir) => {
            return Err(FileFailure::NotFound {
                message: format!("{doc_path} is a directory, not a file"),
            })
        }
        Some(EntryKind::Other | EntryKind::Symlink) => {
            return Err(FileFailure::NotFound {
                message: format!("{doc_path} is not a regular file"),
            })
        }
        None => {}
    }
    let comps: Vec<&str> = guarded.normalized.split('/').collect();
    let mut candidates = Vec::new();
    walk_ci(fs, "", true, &comps, &mut candidates)?;
    let mut targets: Vec<(String, String)> = Vec::new();
    let mut escape = None;
    for cand in candidates {
        match resolve(fs, &cand, GuardOptions::for_writing()) {
            Ok(g) => {
                if fs.kind(&g.target).map_err(|e| io_failure(&cand, &e))? == Some(EntryKind::File)
                    && !targets.iter().any(|(_, t)| *t == g.target)
                {
                    targets.push((cand, g.target));
                }
            }
            Err(e) if e.is_escape() || matches!(e, PathError::Private(_)) => escape = Some(e),
            Err(_) => {}
        }
    }
    match targets.len() {
        0 => Err(match escape {
            Some(e) => path_failure(e),
            None => FileFailure::NotFound {
                message: format!("no file {doc_path} in the workspace"),
            },
        }),
        1 => Ok(targets.swap_remove(0).1),
        _ => {
            let mut candidates: Vec<String> = targets.into_iter().map(|(c, _)| c).collect();
            candidates.sort();
            Err(FileFailure::Ambiguous { candidates })
        }
    }
}

/// Locate, read, verify and patch one file in memory.
fn prepare(fs: &dyn Fs, file: &FilePatch) -> Result<Prepared, (Option<String>, FileFailure)> {
    let target = locate(fs, &file.doc_path).map_err(|f| (None, f))?;
    let fail = |f: FileFailure| (Some(target.clone()), f);
    // Hashed while read: the check adds little to a large file's read.
    let (before, actual) = fs.read_hashed(&target).map_err(|e| {
        fail(if e.kind() == io::ErrorKind::NotFound {
            FileFailure::NotFound {
                message: format!("{target} disappeared while it was read"),
            }
        } else {
            io_failure(&target, &e)
        })
    })?;
    if !same_digest(&actual, &file.original_sha256) {
        return Err(fail(FileFailure::ShaMismatch {
            expected: file.original_sha256.clone(),
            actual,
        }));
    }
    let splicing =
        splice_changes(&before, &file.changes).map_err(|e| fail(FileFailure::Apply(e)))?;
    let before = Arc::new(before);
    let after = Splice::new(Arc::clone(&before), splicing)
        .map(Content::Spliced)
        .ok_or_else(|| {
            fail(io_failure(
                &target,
                &io::Error::other("internal error: the planned edit does not fit the file"),
            ))
        })?;
    if after.equals(&before) {
        return Ok(Prepared {
            target,
            before,
            after: None,
            new_sha256: actual,
            mode: None,
        });
    }
    let mode = fs
        .mode(&target)
        .map_err(|e| fail(io_failure(&target, &e)))?;
    Ok(Prepared {
        target,
        before,
        new_sha256: after.sha256_hex(),
        after: Some(after),
        mode: Some(mode),
    })
}

/// Apply a validated batch to the workspace of `fs`, all files or none.
///
/// Each file: its docPath is located (C-wp-doc-path), its bytes hashed once
/// and compared with `originalSha256` (case-insensitively), its changes
/// applied in memory (`splice_changes`). Only when every file got that far
/// are the changed files committed, in one transaction; a file whose content
/// does not change is not rewritten. Any failure leaves every file as it was.
pub fn apply_batch(fs: &dyn Fs, batch: &ValidatedBatch) -> BatchReport {
    let mut results: Vec<Result<Prepared, (Option<String>, FileFailure)>> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, file) in batch.files.iter().enumerate() {
        let mut r = prepare(fs, file);
        if let Ok(p) = &r {
            if let Some(&first) = seen.get(&p.target) {
                r = Err((
                    Some(p.target.clone()),
                    FileFailure::DuplicateTarget {
                        path: p.target.clone(),
                        related_file_index: first,
                    },
                ));
            } else {
                seen.insert(p.target.clone(), i);
            }
        }
        results.push(r);
    }
    let skip = |results: Vec<Result<Prepared, (Option<String>, FileFailure)>>,
                because: &'static str| {
        results
            .into_iter()
            .map(|r| match r {
                Ok(p) => FileOutcome {
                    path: Some(p.target),
                    status: FileStatus::Skipped(because),
                },
                Err((path, f)) => FileOutcome {
                    path,
                    status: FileStatus::Failed(f),
                },
            })
            .collect()
    };
    if results.iter().any(Result::is_err) {
        return BatchReport {
            files: skip(results, SKIPPED_BECAUSE_OTHER),
            commit_failure: None,
        };
    }
    let prepared: Vec<Prepared> = results.into_iter().flatten().collect();
    let mut new_hashes = Vec::with_capacity(prepared.len());
    let mut targets = Vec::with_capacity(prepared.len());
    let mut changes = Vec::new();
    for p in prepared {
        targets.push(p.target.clone());
        new_hashes.push(p.new_sha256);
        if let Some(content) = p.after {
            changes.push(Change::Write {
                path: p.target,
                content,
                before: Some(p.before),
                mode: p.mode,
            });
        }
    }
    if let Err(e) = commit(fs, changes) {
        return BatchReport {
            files: targets
                .into_iter()
                .map(|t| FileOutcome {
                    path: Some(t),
                    status: FileStatus::Skipped(SKIPPED_BECAUSE_COMMIT),
                })
                .collect(),
            commit_failure: Some(CommitFailure {
                step: e.step,
                path: e.path.clone(),
                message: e.to_string(),
                rolled_back: e.rollback(),
            }),
        };
    }
    BatchReport {
        files: targets
            .into_iter()
            .zip(new_hashes)
            .map(|(t, new_sha256)| FileOutcome {
                path: Some(t),
                status: FileStatus::Applied { new_sha256 },
            })
            .collect(),
        commit_failure: None,
    }
}
