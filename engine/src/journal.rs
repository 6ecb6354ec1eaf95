//! The commit journal: the intent record a multi-step commit writes before
//! its first visible change, and the crash recovery that reads it.
//!
//! One folder per transaction, `.patchspec/txn/<transaction>/`, holds:
//! - `intent`: the plan as JSON (every temp file the commit will stage,
//!   every rename it will make, where each pre-image is kept), written and
//!   fsync'd, its folder fsync'd, before anything is staged;
//! - `pre-<i>`: the pre-image of the `i`-th change when it replaces a file,
//!   a hard link to the file being replaced (a copy when the filesystem
//!   refuses hard links), made after staging and before any rename;
//! - `renaming`: an empty marker written (and its folder fsync'd) after the
//!   pre-images and before the first rename.
//!
//! The design is **roll-back** (docs/clarifications.md, C-commit-journal):
//! while `intent` exists the commit has not happened, and [`recover`] puts
//! back the pre-state. Removing `intent` (and fsyncing its folder) is the
//! commit point; what is left after it (pre-image links, the marker, the
//! folder) is only cleaned up. Each recovery step tests a name that only
//! this transaction uses, so recovery is idempotent and may itself be
//! interrupted and re-run:
//! - replaced file: its temp still there means it was never renamed (unlink
//!   the temp); otherwise, once renaming began, the pre-image is renamed
//!   back over it;
//! - created file: temp still there, unlink it; otherwise, once renaming
//!   began, the created file is removed;
//! - deleted file: if its trash path exists, it is renamed back;
//! - created directory: removed (undone in reverse plan order, so after
//!   the files in it and before its parent); one that is not there was
//!   never made, one that is not empty holds what this transaction did not
//!   put there and stays.
//!
//! Cost: recovery reads one small intent per interrupted transaction and
//! makes a constant number of filesystem calls per planned change; a
//! workspace with nothing to recover costs one `lstat`.

use std::io;

use serde::{Deserialize, Serialize};

use crate::commit::{PRIVATE_DIR, TRASH_DIR};
use crate::fs::{parent_of, EntryKind, Fs};

/// Where the transaction folders live.
pub const TXN_DIR: &str = ".patchspec/txn";
/// The version of the intent record's format.
const INTENT_VERSION: u32 = 1;

/// One planned change, with the names recovery needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    /// Replace the file at `path` with the staged `temp`; the pre-image is kept at `pre`.
    Update {
        /// Workspace-relative target.
        path: String,
        /// The staged sibling temp file.
        temp: String,
        /// Where the pre-image is kept while the commit runs.
        pre: String,
    },
    /// Create `path` from the staged `temp` (nothing was there).
    Create {
        /// Workspace-relative target.
        path: String,
        /// The staged sibling temp file.
        temp: String,
    },
    /// Move `path` into the trash at `trash`.
    Delete {
        /// Workspace-relative file being deleted.
        path: String,
        /// Where it goes (and what is renamed back on recovery).
        trash: String,
    },
    /// Create the directory `path` (nothing was there), before any file is
    /// staged; removed again on rollback.
    CreateDir {
        /// Workspace-relative directory.
        path: String,
    },
}

impl Step {
    /// The workspace path this step changes.
    pub fn path(&self) -> &str {
        match self {
            Step::Update { path, .. }
            | Step::Create { path, .. }
            | Step::Delete { path, .. }
            | Step::CreateDir { path } => path,
        }
    }

    /// The staged temp file, for writes.
    pub fn temp(&self) -> Option<&str> {
        match self {
            Step::Update { temp, .. } | Step::Create { temp, .. } => Some(temp),
            Step::Delete { .. } | Step::CreateDir { .. } => None,
        }
    }
}

/// The intent record of one transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The record's format version.
    pub version: u32,
    /// The transaction id (also its trash folder's name).
    pub transaction: String,
    /// The changes, in plan (rename) order.
    pub steps: Vec<Step>,
}

impl Intent {
    /// A new intent record for `transaction`.
    pub fn new(transaction: &str, steps: Vec<Step>) -> Intent {
        Intent {
            version: INTENT_VERSION,
            transaction: transaction.to_string(),
            steps,
        }
    }

    /// This transaction's folder.
    pub fn dir(&self) -> String {
        format!("{TXN_DIR}/{}", self.transaction)
    }

    /// Where the pre-image of step `index` is kept.
    pub fn pre_path(transaction: &str, index: usize) -> String {
        format!("{TXN_DIR}/{transaction}/pre-{index}")
    }
}

fn intent_path(dir: &str) -> String {
    format!("{dir}/intent")
}

fn marker_path(dir: &str) -> String {
    format!("{dir}/renaming")
}

/// What [`recover`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Interrupted transactions found (an intent record was present).
    pub interrupted: usize,
    /// Files put back to their pre-state (restored, un-created, un-deleted)
    /// and directories the transaction created removed again.
    pub rolled_back: usize,
    /// Staged temp files removed.
    pub temps_removed: usize,
    /// Transaction folders of finished commits whose clean-up was cut short.
    pub leftovers: usize,
}

impl Recovery {
    /// True when nothing had to be done.
    pub fn is_nothing(&self) -> bool {
        *self == Recovery::default()
    }
}

/// True when some transaction folder exists (something may need recovery).
/// Costs one `lstat` when the workspace is clean.
pub fn pending(fs: &dyn Fs) -> io::Result<bool> {
    match fs.kind(TXN_DIR)? {
        Some(EntryKind::Dir) => Ok(!fs.list_dir(TXN_DIR)?.is_empty()),
        _ => Ok(false),
    }
}

/// Finish every interrupted commit of the workspace by rolling it back, and
/// clean up after finished ones. The caller must hold the workspace lock
/// ([`crate::workspace`]): a live commit's journal looks just like a dead one's.
pub fn recover(fs: &dyn Fs) -> io::Result<Recovery> {
    let mut done = Recovery::default();
    if fs.kind(TXN_DIR)? != Some(EntryKind::Dir) {
        return Ok(done);
    }
    for (name, kind) in fs.list_dir(TXN_DIR)? {
        let dir = format!("{TXN_DIR}/{name}");
        if kind != EntryKind::Dir {
            fs.remove_file(&dir)?;
            continue;
        }
        match read_intent(fs, &dir)? {
            Some(intent) => {
                let renaming = fs.kind(&marker_path(&dir))?.is_some();
                let undone = undo(fs, &intent, renaming)?;
                done.interrupted += 1;
                done.rolled_back += undone.rolled_back;
                done.temps_removed += undone.temps_removed;
            }
            None if fs.kind(&intent_path(&dir))?.is_some() => {
                // A torn intent: the writer died while writing it, before
                // anything was staged (staging waits for the fsync'd record).
                done.interrupted += 1;
            }
            None => done.leftovers += 1,
        }
        discard(fs, &dir)?;
    }
    Ok(done)
}

/// The intent record in `dir`, `None` when absent or torn.
fn read_intent(fs: &dyn Fs, dir: &str) -> io::Result<Option<Intent>> {
    match fs.read(&intent_path(dir)) {
        Ok(bytes) => Ok(serde_json::from_slice::<Intent>(&bytes)
            .ok()
            .filter(|i| i.version == INTENT_VERSION)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Write the intent record durably: create the transaction folder (and the
/// folders above it), write `intent` (fsync'd), fsync its folder and the
/// parent of every folder created.
pub fn write_intent(fs: &dyn Fs, intent: &Intent) -> io::Result<()> {
    let dir = intent.dir();
    let created = ensure_dirs(fs, &dir)?;
    let bytes = serde_json::to_vec(intent).map_err(io::Error::other)?;
    fs.write_new(&intent_path(&dir), &bytes, None)?;
    fs.sync_dir(&dir)?;
    for created_dir in &created {
        fs.sync_dir(parent_of(created_dir))?;
    }
    Ok(())
}

/// Write the marker that says renaming may have begun, durably (with the
/// pre-images beside it).
pub fn mark_renaming(fs: &dyn Fs, intent: &Intent) -> io::Result<()> {
    let dir = intent.dir();
    fs.write_new(&marker_path(&dir), b"", None)?;
    fs.sync_dir(&dir)
}

/// The commit point: remove the intent record. Its folder is then fsync'd;
/// a failure of that fsync is not an error (the files are already the
/// post-state; only a power loss could bring the record back, and recovery
/// would then roll back to the pre-state, which is also consistent).
pub fn commit_point(fs: &dyn Fs, intent: &Intent) -> io::Result<()> {
    let dir = intent.dir();
    fs.remove_file(&intent_path(&dir))?;
    let _ = fs.sync_dir(&dir);
    Ok(())
}

/// True when the operation at `index` of a commit's operation log (as
/// [`crate::fs::FaultFs::log`] records it) comes after a commit point: the
/// last intent record touched before it was removed, not written. A fault
/// there is a clean-up fault, which does not fail the commit (the module
/// doc of [`crate::commit`], phase 3); fault-injection oracles use this to
/// tell which faults must be reported.
pub fn after_commit_point(log: &[(crate::fs::FsOp, String)], index: usize) -> bool {
    use crate::fs::FsOp;
    let is_intent = |p: &str| p.starts_with(TXN_DIR) && p.ends_with("/intent");
    log.iter()
        .take(index)
        .rev()
        .find_map(|(op, p)| match op {
            FsOp::RemoveFile if is_intent(p) => Some(true),
            FsOp::WriteNew if is_intent(p) => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// Remove a transaction folder: everything in it, the intent last.
pub fn discard(fs: &dyn Fs, dir: &str) -> io::Result<()> {
    let entries = match fs.list_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let intent = intent_path(dir);
    let mut has_intent = false;
    for (name, _) in entries {
        let path = format!("{dir}/{name}");
        if path == intent {
            has_intent = true;
        } else {
            remove_if_present(fs, &path)?;
        }
    }
    if has_intent {
        remove_if_present(fs, &intent)?;
    }
    match fs.remove_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What [`undo`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Undone {
    /// Files put back, and created directories removed.
    pub rolled_back: usize,
    /// Temp files removed.
    pub temps_removed: usize,
}

/// Put back the pre-state of `intent`'s changes, in reverse plan order
/// (`renaming`: whether renames may have begun), then fsync the folders it
/// changed (a failure is returned, so the caller keeps the intent) and
/// remove the trash folders the transaction made.
/// The intent record itself is left for the caller to discard.
pub fn undo(fs: &dyn Fs, intent: &Intent, renaming: bool) -> io::Result<Undone> {
    let mut done = Undone::default();
    let mut first_error: Option<io::Error> = None;
    for step in intent.steps.iter().rev() {
        if let Err(e) = undo_step(fs, step, renaming, &mut done) {
            first_error.get_or_insert(e);
        }
    }
    let mut dirs: Vec<&str> = intent.steps.iter().map(|s| parent_of(s.path())).collect();
    dirs.sort_unstable();
    dirs.dedup();
    // A failed fsync is an error like a failed rename: the caller then keeps
    // the intent, so the undo is run again, rather than discarding the only
    // record of a rollback that a power loss could still lose. A folder the
    // undo itself removed (a created one) is not there to sync.
    for dir in dirs {
        match fs.sync_dir(dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                first_error.get_or_insert(e);
            }
            _ => {}
        }
    }
    // Trash folders this transaction made, deepest first; one that is not
    // empty (or already gone) is left as it is.
    let trash_root = format!("{TRASH_DIR}/{}", intent.transaction);
    let mut trash_dirs: Vec<String> = Vec::new();
    for step in &intent.steps {
        if let Step::Delete { trash, .. } = step {
            let mut dir = parent_of(trash);
            while dir.len() >= trash_root.len() {
                trash_dirs.push(dir.to_string());
                dir = parent_of(dir);
            }
        }
    }
    trash_dirs.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    trash_dirs.dedup();
    for dir in trash_dirs {
        let _ = fs.remove_dir(&dir);
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

fn undo_step(fs: &dyn Fs, step: &Step, renaming: bool, done: &mut Undone) -> io::Result<()> {
    match step {
        Step::Update { path, temp, pre } => {
            if fs.kind(temp)?.is_some() {
                fs.remove_file(temp)?;
                done.temps_removed += 1;
            } else if renaming && fs.kind(pre)?.is_some() {
                // Renaming a hard link over another name of the same file
                // does nothing, so this is right even if the rename of the
                // temp never reached the disk.
                fs.rename(pre, path)?;
                done.rolled_back += 1;
            }
            remove_if_present(fs, pre)
        }
        Step::Create { path, temp } => {
            if fs.kind(temp)?.is_some() {
                fs.remove_file(temp)?;
                done.temps_removed += 1;
            } else if renaming && fs.kind(path)?.is_some() {
                fs.remove_file(path)?;
                done.rolled_back += 1;
            }
            Ok(())
        }
        Step::Delete { path, trash } => {
            if fs.kind(trash)?.is_some() {
                fs.rename(trash, path)?;
                done.rolled_back += 1;
            }
            Ok(())
        }
        Step::CreateDir { path } => match fs.remove_dir(path) {
            Ok(()) => {
                done.rolled_back += 1;
                Ok(())
            }
            Err(e) => match fs.kind(path)? {
                // Never made (the commit stopped before it), or gone already.
                None => Ok(()),
                // Not empty: it holds what this transaction did not put
                // there (its own files were undone first), so it stays.
                Some(EntryKind::Dir) if not_empty(&e) => Ok(()),
                Some(_) => Err(e),
            },
        },
    }
}

/// True when removing a directory failed because it has entries.
fn not_empty(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST))
}

fn remove_if_present(fs: &dyn Fs, path: &str) -> io::Result<()> {
    match fs.remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => match fs.kind(path) {
            Ok(None) => Ok(()),
            _ => Err(e),
        },
        Ok(()) => Ok(()),
    }
}

/// Create `dir` and its missing parents; the folders created, outermost first.
pub fn ensure_dirs(fs: &dyn Fs, dir: &str) -> io::Result<Vec<String>> {
    let mut created = Vec::new();
    let mut prefix = String::new();
    for part in dir.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        match fs.kind(&prefix)? {
            Some(EntryKind::Dir) => {}
            None => match fs.create_dir(&prefix) {
                Ok(()) => created.push(prefix.clone()),
                // Another process made it in between: fine, it is a folder.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            },
            Some(_) => {
                return Err(io::Error::other(format!(
                    "{prefix} exists and is not a directory"
                )))
            }
        }
    }
    Ok(created)
}

/// Remove the engine's empty private folders (best effort): what a failed
/// commit made in a workspace that had none is taken away again.
pub fn remove_empty_private_dirs(fs: &dyn Fs) {
    for dir in [TXN_DIR, TRASH_DIR, PRIVATE_DIR] {
        let _ = fs.remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FaultFs, FsOp, RealFs};

    /// A failed fsync during an undo is returned, so that the caller keeps
    /// the intent (and the undo runs again) instead of discarding it.
    #[test]
    fn an_undo_whose_fsync_fails_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt.tmp"), b"staged").unwrap();
        let real = RealFs::open(dir.path()).unwrap();
        let intent = Intent::new(
            "t",
            vec![Step::Create {
                path: "a.txt".into(),
                temp: "a.txt.tmp".into(),
            }],
        );
        let failing = FaultFs::new(&real, |op| op == FsOp::SyncDir, Some(0));
        assert!(undo(&failing, &intent, false).is_err());
        assert!(
            !dir.path().join("a.txt.tmp").exists(),
            "the temp is still removed"
        );
        assert_eq!(
            undo(&real, &intent, false).map(|d| d.temps_removed).ok(),
            Some(0)
        );
    }
}
