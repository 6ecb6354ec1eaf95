//! The committer: the one atomic writer. A [`Change`] list is committed
//! all-or-nothing, and a commit cut short — by an I/O fault or by the process
//! dying — is rolled back to its pre-state, exactly.
//!
//! Phases (patch-envelope.md "Atomicity", plus the journal of
//! docs/clarifications.md C-commit-journal):
//! 0. **journal**: the intent record `.patchspec/txn/<transaction>/intent`
//!    ([`crate::journal`]) lists every planned rename, every temp file to
//!    stage and where each pre-image will be kept; it is fsync'd with its
//!    folder before anything visible happens;
//! 1. **stage**: the directories the commit creates ([`Change::CreateDir`],
//!    outermost first) are made; every write goes to a sibling temp file
//!    `<path>.<16 hex>.apply-patch.tmp`, fsync'd (the name part cut short
//!    when the whole would exceed `NAME_MAX`: see [`temp_name`]); then each
//!    file to be replaced gets a second name in the transaction folder (a
//!    hard link: no copy, however large; a copy only where the filesystem
//!    refuses links), and a `renaming` marker is written and fsync'd;
//! 2. **commit**: in plan order, each temp file is renamed over its target
//!    and each deleted file is renamed into the workspace trash
//!    (`.patchspec/trash/<transaction>/<path>`); then every touched directory
//!    is fsync'd: the targets' parents (a created directory's parent among
//!    them), the trash folders a file went into and the parents of every
//!    folder the commit created;
//! 3. **commit point**: the intent record is removed (its folder fsync'd);
//!    the pre-image links and the folder are then cleaned up, and the trash
//!    is pruned to its bound ([`crate::trash`]). A fault in that clean-up
//!    does not fail the commit (the next entry finishes it);
//! 4. **rollback** (on any failure before the commit point): the same undo
//!    that crash recovery runs ([`crate::journal::undo`]): staged temp files
//!    are unlinked, replaced files get their pre-image renamed back, created
//!    files are removed, trashed files are renamed back, created directories
//!    are removed (deepest first, once empty), the transaction's trash
//!    folders and journal folder are removed; the touched directories are
//!    fsync'd again, and a failure of that fsync leaves the intent in place
//!    (the rollback is then incomplete, and the next entry runs it again).
//!
//! Roll-back, not roll-forward: while the intent exists the commit has not
//! happened, so a process killed anywhere in 0–3 leaves a state that the
//! next engine entry ([`crate::workspace`]) or `patchspec recover` turns
//! back into the exact pre-state; after a power loss the same holds, tested
//! under the durability model of docs/clarifications.md C-commit-power-loss
//! (`engine/tests/power_cut.rs` cuts the power at every step). Not promised: that a
//! commit whose success was never reported survives (it may be rolled back),
//! and isolation from writers that are not this engine (engine writers take
//! the workspace lock, C-commit-lock). A second fault during an in-process
//! rollback is reported as [`CommitError::rollback`]; the intent then stays,
//! and the next entry finishes the rollback.

use std::io;

use crate::content::{Content, Shared};
use crate::fs::{EntryKind, Fs};
use crate::journal::{self, Intent, Step};
use crate::layout::{parent_of, temp_name, TRASH_DIR};
use crate::parallel;


/// One file change of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Write `content` at `path`, creating or replacing it.
    Write {
        /// Workspace-relative, guarded path.
        path: String,
        /// The new content (it may be spliced from `before`: no copy).
        content: Content,
        /// The pre-image (`None`: the file did not exist). Only read where
        /// the filesystem refuses the hard link that keeps it for a
        /// rollback (it is then copied).
        before: Option<Shared>,
        /// Permission bits to give the file (keep an executable script executable).
        mode: Option<u32>,
    },
    /// Remove `path`, moving it into the workspace trash.
    Delete {
        /// Workspace-relative, guarded path.
        path: String,
        /// The file's size in bytes (what the trash receives: its bound).
        size: u64,
    },
    /// Create the directory `path`, where nothing is: its parent exists or
    /// is created by an earlier change of the same commit, and the changes
    /// inside it come after it. A rolled-back commit removes it again
    /// (when empty). [`missing_parents`] lists the ones a new file needs.
    CreateDir {
        /// Workspace-relative, guarded path.
        path: String,
    },
}

impl Change {
    /// The path this change touches.
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. }
            | Change::Delete { path, .. }
            | Change::CreateDir { path } => path,
        }
    }
}

/// Which step of a commit failed.
#[derive(Debug, thiserror::Error)]
#[error("{step} {path}: {source}{}", if *.rollback_incomplete { " (rollback incomplete: the workspace may differ from before)" } else { "" })]
pub struct CommitError {
    /// "recovering" (a nested workspace's interrupted commit could not be
    /// rolled back first), "journaling", "recording" (the patch store could
    /// not record the commit as pending), [`CREATING_DIRECTORY`], "staging",
    /// "renaming", "trashing", "syncing".
    pub step: &'static str,
    /// The path being written when it failed.
    pub path: String,
    /// The I/O error.
    pub source: io::Error,
    /// True when restoring the pre-images also failed.
    pub rollback_incomplete: bool,
}

impl CommitError {
    /// Was the rollback complete? (Always true unless a second fault hit it.)
    pub fn rollback(&self) -> bool {
        !self.rollback_incomplete
    }
}

/// The [`CommitError::step`] of a failure to create a [`Change::CreateDir`]
/// directory.
pub const CREATING_DIRECTORY: &str = "creating directory";



/// A new transaction id: `<unix millis>-<random>-<bytes trashed>`, and
/// `-<16 hex>` after it, the name's tag under this user's key
/// ([`crate::seal::Seal::name_tag`]) when the workspace has a seal. It
/// names both the journal folder and the trash folder; ids sort by time,
/// and the trash's size bound reads each folder's size from its name and
/// trusts only names whose tag verifies ([`crate::trash`]).
fn new_transaction(fs: &dyn Fs, changes: &[Change]) -> String {
    let millis = now_millis();
    let trashed: u64 = changes
        .iter()
        .map(|c| match c {
            Change::Delete { size, .. } => *size,
            Change::Write { .. } | Change::CreateDir { .. } => 0,
        })
        .sum();
    let name = format!("{millis:013}-{:08x}-{trashed}", fastrand::u32(..));
    match fs.seal() {
        Some(seal) => {
            let tag = seal.name_tag(&name);
            format!("{name}-{tag}")
        }
        None => name,
    }
}

/// The journal's view of `changes`: temp names, pre-image and trash paths.
fn plan(transaction: &str, changes: &[Change]) -> Intent {
    let steps = changes
        .iter()
        .enumerate()
        .map(|(i, change)| match change {
            Change::Write {
                path,
                before: Some(_),
                ..
            } => Step::Update {
                path: path.clone(),
                temp: temp_name(path),
                pre: Intent::pre_path(transaction, i),
            },
            Change::Write {
                path, before: None, ..
            } => Step::Create {
                path: path.clone(),
                temp: temp_name(path),
            },
            Change::Delete { path, .. } => Step::Delete {
                path: path.clone(),
                trash: format!("{TRASH_DIR}/{transaction}/{path}"),
            },
            Change::CreateDir { path } => Step::CreateDir { path: path.clone() },
        })
        .collect();
    Intent::new(transaction, steps)
}

/// Commit `changes` atomically: all of them, or none (see the module docs).
///
/// Changes passed by value (a `Vec` or an array) are dropped inside. Once
/// nothing can be rolled back, a large file's bytes are freed beside the
/// clean-up instead of after it. A caller that still needs them passes a
/// slice.
pub fn commit<C: AsRef<[Change]> + Send>(fs: &dyn Fs, changes: C) -> Result<(), CommitError> {
    // Taken once: every phase pairs the plan's steps with this one list.
    let list = changes.as_ref();
    // A nested workspace's dead commit, rolled back later, would undo this
    // one: roll it back now (the caller's writer lock excludes the nested
    // writers, crate::workspace). The caller planned against its half-done
    // files, so this commit is refused, with nothing written: sent again,
    // it is planned against the restored ones.
    let refused = |path: String, source: io::Error| CommitError {
        step: "recovering",
        path,
        source,
        rollback_incomplete: false,
    };
    match journal::recover_nested(fs, list.iter().map(Change::path)) {
        Err(e) => return Err(refused(String::new(), e)),
        Ok((rolled_back, _)) if !rolled_back.is_empty() => {
            let nested = rolled_back.join(", ");
            return Err(refused(
                nested.clone(),
                io::Error::other(format!(
                    "the nested workspace {nested} held an interrupted commit, now rolled back; \
                     this edit was planned against its half-done files: read them again and resend it"
                )),
            ));
        }
        Ok(_) => {}
    }
    let recorder = fs.recorder();
    let transaction = new_transaction(fs, list);
    let mut intent = plan(&transaction, list);
    intent.recorded = recorder.is_some();
    // Phase 0: the intent record, durable before anything is visible.
    // The private folders this commit makes (the journal's, the trash's):
    // a failed commit removes those, and only those.
    let private_dirs = std::cell::RefCell::new(Vec::new());
    let journaled = journal::write_intent(fs, &intent, &mut private_dirs.borrow_mut());
    if let Err(source) = journaled {
        // Nothing visible has happened: whatever is left of the journal
        // (when it cannot be removed either) is only the engine's, so the
        // workspace is as it was.
        let _ = journal::discard(fs, &intent.dir());
        remove_private_dirs(fs, &private_dirs.borrow(), &intent);
        return Err(CommitError {
            step: "journaling",
            path: intent.dir(),
            source,
            rollback_incomplete: false,
        });
    }
    let abort = |step: &'static str, path: &str, source: io::Error, renaming: bool| {
        let clean = journal::undo(fs, &intent, renaming).is_ok()
            && journal::discard(fs, &intent.dir()).is_ok();
        remove_private_dirs(fs, &private_dirs.borrow(), &intent);
        CommitError {
            step,
            path: path.to_string(),
            source,
            rollback_incomplete: !clean,
        }
    };
    // The store learns of the commit before anything is visible, so a
    // crash from here on leaves it a pending record the journal settles.
    if let Some(recorder) = recorder {
        if let Err(e) = recorder.begin(fs, &transaction) {
            return Err(abort("recording", &intent.dir(), e, false));
        }
    }
    // Phase 1: the new directories (outermost first: plan order), then
    // every write staged (a temp file is a sibling of its target, so it
    // needs the target's directory).
    for step in &intent.steps {
        if let Step::CreateDir { path } = step {
            if let Err(e) = fs.create_dir(path) {
                return Err(abort(CREATING_DIRECTORY, path, e, false));
            }
        }
    }
    for (step, change) in intent.steps.iter().zip(list) {
        if let (Some(temp), Change::Write { content, mode, .. }) = (step.temp(), change) {
            if let Err(e) = fs.write_new_parts(temp, &content.parts(), *mode) {
                return Err(abort("staging", change.path(), e, false));
            }
        }
    }
    // Phase 1b: keep every pre-image (a hard link; a copy where links fail),
    // then mark that renaming may begin.
    for (step, change) in intent.steps.iter().zip(list) {
        if let (
            Step::Update { path, pre, .. },
            Change::Write {
                before: Some(before),
                mode,
                ..
            },
        ) = (step, change)
        {
            let kept = match fs.hard_link(path, pre) {
                Err(e) if links_unsupported(&e) => fs.write_new(pre, before.as_slice(), *mode),
                other => other,
            };
            if let Err(e) = kept {
                return Err(abort("journaling", path, e, false));
            }
        }
    }
    if let Err(e) = journal::mark_renaming(fs, &intent) {
        return Err(abort("journaling", &intent.dir(), e, false));
    }
    // Phase 2: rename into place, in plan order.
    let mut created_dirs: Vec<String> = Vec::new();
    for (step, change) in intent.steps.iter().zip(list) {
        let result = match step {
            Step::Update { path, temp, .. } | Step::Create { path, temp } => fs.rename(temp, path),
            Step::Delete { path, trash } => {
                let mut made = Vec::new();
                let ensured = journal::ensure_dirs_into(fs, parent_of(trash), &mut made);
                private_dirs.borrow_mut().extend(made.iter().cloned());
                created_dirs.extend(made);
                ensured.and_then(|()| fs.rename(path, trash))
            }
            Step::CreateDir { .. } => Ok(()),
        };
        if let Err(e) = result {
            let what = match change {
                Change::Write { .. } => "renaming",
                Change::Delete { .. } => "trashing",
                Change::CreateDir { .. } => CREATING_DIRECTORY,
            };
            return Err(abort(what, change.path(), e, true));
        }
    }
    // Phase 3: make the renames durable.
    for dir in touched_dirs(&intent, &created_dirs) {
        if let Err(e) = fs.sync_dir(&dir) {
            return Err(abort("syncing", &dir, e, true));
        }
    }
    // Phase 4: the commit point, then clean-up that no longer decides anything.
    if let Err(e) = journal::commit_point(fs, &intent) {
        return Err(abort("journaling", &intent.dir(), e, true));
    }
    let trashed = list.iter().any(|c| matches!(c, Change::Delete { .. }));
    let clean_up = || {
        if intent.recorded {
            // The `committed` record stays until the store has the call's
            // outcome: it is the evidence that this commit happened.
            let _ = journal::keep_record_only(fs, &intent.dir());
        } else {
            let _ = journal::discard(fs, &intent.dir());
        }
        // A commit that trashed nothing leaves no private folder behind
        // (only the folders it made itself are removed: `.patchspec` may be
        // a user's folder behind a symlink).
        if trashed {
            journal::remove_created_dirs(fs, &[crate::layout::TXN_DIR.to_string()]);
        } else {
            remove_private_dirs(fs, &private_dirs.borrow(), &intent);
        }
        if trashed {
            let _ = crate::trash::prune(
                fs,
                &transaction,
                crate::trash::Bounds::default(),
                now_millis(),
            );
        }
    };
    // Nothing can be rolled back any more, so what the changes hold (a
    // large file's bytes, its pre-image) is freed on a second thread while
    // the clean-up unlinks the pre-images: both are the kernel giving back
    // memory or blocks, about 9 and 25 ms for a 100 MB file
    // (docs/performance.md, "Where the remaining time goes").
    // A borrowed list frees nothing when dropped: no thread for it.
    if std::mem::needs_drop::<C>() && held_bytes(list) >= FREE_BESIDE_CLEAN_UP {
        parallel::join(move || drop(changes), clean_up);
    } else {
        clean_up();
    }
    Ok(())
}

/// Remove the private folders a commit made (`made`), but its transaction
/// folder, which [`journal::discard`] removed already.
fn remove_private_dirs(fs: &dyn Fs, made: &[String], intent: &Intent) {
    let own = intent.dir();
    let others: Vec<String> = made.iter().filter(|d| **d != own).cloned().collect();
    journal::remove_created_dirs(fs, &others);
}

/// From this many bytes owned by a commit's changes on ([`held_bytes`]),
/// they are freed on a second thread ([`commit`], phase 4): below, starting
/// the thread costs more than the freeing.
const FREE_BESIDE_CLEAN_UP: usize = 8 << 20;

/// The bytes `changes` own, about: each pre-image, and each new content
/// assembled whole. A spliced content shares its pre-image's buffer, so
/// only the lines it adds would count, and they are left out.
fn held_bytes(changes: &[Change]) -> usize {
    changes
        .iter()
        .map(|c| match c {
            Change::Write {
                content, before, ..
            } => {
                let whole = match content {
                    Content::Whole(bytes) => bytes.len(),
                    Content::Spliced(_) => 0,
                };
                whole + before.as_ref().map_or(0, |b| b.len())
            }
            Change::Delete { .. } | Change::CreateDir { .. } => 0,
        })
        .sum()
}

/// True when a hard link failed because this filesystem (or this file)
/// cannot have one, not because of a fault: the pre-image is then copied.
fn links_unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EXDEV | libc::EMLINK | libc::EOPNOTSUPP | libc::ENOSYS)
    )
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_millis() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// Every directory whose entries a commit changed: the targets' parents
/// (for a [`Change::CreateDir`], the new directory's parent), the trash
/// folders files went into, the parents of the trash folders it created.
fn touched_dirs(intent: &Intent, created_dirs: &[String]) -> Vec<String> {
    let mut dirs: Vec<String> = intent
        .steps
        .iter()
        .map(|s| parent_of(s.path()).to_string())
        .collect();
    for step in &intent.steps {
        if let Step::Delete { trash, .. } = step {
            dirs.push(parent_of(trash).to_string());
        }
    }
    for dir in created_dirs {
        dirs.push(parent_of(dir).to_string());
    }
    dirs.sort_unstable();
    dirs.dedup();
    dirs
}

/// The [`Change::CreateDir`] changes a new file at `path` needs: one per
/// directory above it that does not exist, outermost first. A component
/// that exists and is not a directory (a file, a symlink the guard did not
/// resolve, ...) is an error naming it; so is an I/O error while probing.
/// Read-only: the directories are made by [`commit`], in the same commit
/// as the file, so a rolled-back commit removes them again.
pub fn missing_parents(fs: &dyn Fs, path: &str) -> io::Result<Vec<Change>> {
    let mut missing = Vec::new();
    let dir = parent_of(path);
    if dir.is_empty() {
        return Ok(missing);
    }
    let ends = dir.match_indices('/').map(|(i, _)| i);
    for end in ends.chain(std::iter::once(dir.len())) {
        let prefix = &dir[..end];
        // Below a missing directory nothing exists: no need to ask.
        let kind = if missing.is_empty() {
            fs.kind(prefix)
                .map_err(|e| io::Error::new(e.kind(), format!("{prefix}: {e}")))?
        } else {
            None
        };
        match kind {
            Some(EntryKind::Dir) => {}
            None => missing.push(Change::CreateDir {
                path: prefix.to_string(),
            }),
            Some(_) => {
                return Err(io::Error::other(format!(
                    "{prefix} exists and is not a directory"
                )))
            }
        }
    }
    Ok(missing)
}


#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::layout::{is_temp_name, NAME_MAX};
    use crate::fs::{FaultFs, FsOp, RealFs};
    use std::collections::BTreeMap;
    use std::path::Path;

    /// Every file under `root` (symlinks as their target text), for byte-exact comparison.
    pub(crate) fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap())
                .collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let p = e.path();
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                let ft = e.file_type().unwrap();
                if ft.is_dir() {
                    out.insert(format!("{rel}/"), Vec::new());
                    walk(root, &p, out);
                } else if ft.is_symlink() {
                    let t = std::fs::read_link(&p).unwrap();
                    out.insert(
                        format!("{rel}@"),
                        t.to_string_lossy().into_owned().into_bytes(),
                    );
                } else {
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(root, root, &mut out);
        out
    }

    /// [`snapshot`] without the engine's private folder (its lock file and
    /// journal folders are not workspace content).
    pub(crate) fn visible_snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut all = snapshot(root);
        all.retain(|k, _| !k.starts_with(".patchspec/"));
        all
    }

    fn setup() -> (tempfile::TempDir, Vec<Change>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a1\n").unwrap();
        std::fs::write(dir.path().join("d/b.txt"), "b1\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        let b1 = std::sync::Arc::new(b"b1\n".to_vec());
        let changes = vec![
            Change::Write {
                path: "a.txt".into(),
                content: b"a2\n".to_vec().into(),
                before: Some(std::sync::Arc::new(b"a1\n".to_vec())),
                mode: None,
            },
            Change::Write {
                path: "d/new.txt".into(),
                content: b"new\n".to_vec().into(),
                before: None,
                mode: None,
            },
            Change::Delete {
                path: "gone.txt".into(),
                size: 4,
            },
            // Nested new directories, then a file in the deepest.
            Change::CreateDir { path: "n".into() },
            Change::CreateDir { path: "n/e".into() },
            Change::Write {
                path: "n/e/w.txt".into(),
                content: b"w\n".to_vec().into(),
                before: None,
                mode: None,
            },
            // Spliced from its pre-image: written by parts, no copy.
            Change::Write {
                path: "d/b.txt".into(),
                content: Content::Spliced(
                    crate::content::Splice::new(b1.clone(), {
                        let mut s = crate::content::Splicing::default();
                        s.base(0..1);
                        s.add(b"2\n");
                        s
                    })
                    .unwrap(),
                ),
                before: Some(b1),
                mode: None,
            },
        ];
        (dir, changes)
    }

    #[test]
    fn a_clean_commit_applies_everything_and_trashes_deletes() {
        let (dir, changes) = setup();
        let fs = RealFs::open(dir.path()).unwrap();
        commit(&fs, &changes).unwrap();
        let after = snapshot(dir.path());
        assert_eq!(after["a.txt"], b"a2\n");
        assert_eq!(after["d/new.txt"], b"new\n");
        assert_eq!(after["d/b.txt"], b"b2\n");
        assert_eq!(after["n/e/w.txt"], b"w\n");
        assert!(!after.contains_key("gone.txt"));
        let trashed: Vec<_> = after
            .iter()
            .filter(|(k, _)| k.starts_with(".patchspec/trash/") && k.ends_with("/gone.txt"))
            .collect();
        assert_eq!(trashed.len(), 1);
        assert_eq!(trashed[0].1, b"bye\n");
        assert!(after.keys().all(|k| !is_temp_name(k)));
    }

    /// A large commit passed by value is freed inside, beside its
    /// clean-up: by the time it returns, nothing holds the pre-image any
    /// more, and the clean-up still ran in full, even when one of its steps
    /// fails.
    #[test]
    fn a_large_commit_passed_by_value_is_freed_beside_its_clean_up() {
        let big: Vec<u8> = (0..FREE_BESIDE_CLEAN_UP)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .take(FREE_BESIDE_CLEAN_UP + 10)
            .collect();
        let make = |dir: &Path| {
            std::fs::write(dir.join("big.txt"), &big).unwrap();
            let before: Shared = std::sync::Arc::new(big.clone());
            let mut splicing = crate::content::Splicing::default();
            splicing.add(b"new first line\n");
            splicing.base(0..before.len());
            let content =
                Content::Spliced(crate::content::Splice::new(before.clone(), splicing).unwrap());
            let weak = std::sync::Arc::downgrade(&before);
            let change = Change::Write {
                path: "big.txt".into(),
                content,
                before: Some(before),
                mode: None,
            };
            (vec![change], weak)
        };
        let mut expected = b"new first line\n".to_vec();
        expected.extend_from_slice(&big);
        let (steps, point) = {
            let dir = tempfile::tempdir().unwrap();
            let (changes, weak) = make(dir.path());
            assert!(held_bytes(&changes) >= FREE_BESIDE_CLEAN_UP);
            let real = RealFs::open(dir.path()).unwrap();
            let counting = FaultFs::new(&real, |_| true, None);
            // Passed by reference, the caller keeps them.
            commit(&counting, &changes).unwrap();
            assert!(weak.upgrade().is_some());
            (counting.count(), commit_point_of(&counting.log()))
        };
        // Every clean-up step failed in turn, and none at all.
        for fault in (point + 1..steps).map(Some).chain([None]) {
            let dir = tempfile::tempdir().unwrap();
            let (changes, weak) = make(dir.path());
            let real = RealFs::open(dir.path()).unwrap();
            let faulty = FaultFs::new(&real, |_| true, fault);
            commit(&faulty, changes).unwrap();
            assert!(weak.upgrade().is_none(), "fault {fault:?}: freed");
            let after = snapshot(dir.path());
            assert_eq!(after["big.txt"], expected, "fault {fault:?}");
            assert!(after.keys().all(|k| !is_temp_name(k)));
            if fault.is_none() {
                assert!(after.keys().all(|k| !k.starts_with(".patchspec")));
            }
        }
    }

    /// The index, in a commit's operation log, of the commit point's last
    /// step (the fsync of the folder where the intent record was renamed
    /// to `committed`): faults after it are clean-up faults; a process that
    /// dies at it or after finds the commit made.
    pub(crate) fn commit_point_of(log: &[(FsOp, String)]) -> usize {
        log.iter()
            .position(|(op, p)| *op == FsOp::Rename && p.ends_with("/intent"))
            .map(|rename| rename + 1)
            .expect("the commit renamed its intent record")
    }

    /// The fault-injection proof: fail every step of the commit, one at a
    /// time; up to the commit point the tree must be byte-for-byte as before,
    /// after it (clean-up) the commit stands; never a temp file.
    #[test]
    fn a_fault_at_any_step_leaves_the_tree_as_it_was() {
        let (steps, commit_point, post) = {
            let (dir, changes) = setup();
            let real = RealFs::open(dir.path()).unwrap();
            let counting = FaultFs::new(&real, |_| true, None);
            commit(&counting, &changes).unwrap();
            let mut post = visible_snapshot(dir.path());
            post.retain(|k, _| !k.starts_with(".patchspec"));
            (counting.count(), commit_point_of(&counting.log()), post)
        };
        assert!(steps >= 10, "the commit has {steps} steps");
        let mut dirs_undone = 0;
        for k in 0..steps {
            let (dir, changes) = setup();
            let before = snapshot(dir.path());
            let real = RealFs::open(dir.path()).unwrap();
            let faulty = FaultFs::new(&real, |_| true, Some(k));
            let result = commit(&faulty, &changes);
            let after = snapshot(dir.path());
            assert!(after.keys().all(|p| !is_temp_name(p)), "step {k}");
            if k > commit_point {
                assert!(
                    result.is_ok(),
                    "step {k}: a clean-up fault is not a failure"
                );
                let mut visible = visible_snapshot(dir.path());
                visible.retain(|k, _| !k.starts_with(".patchspec"));
                assert_eq!(visible, post, "step {k}");
                continue;
            }
            let e = result.expect_err(&format!("step {k} ({:?}) surfaced", faulty.log().get(k)));
            assert!(e.rollback(), "step {k}: {e}");
            // Folders included: the ones the commit created are gone again.
            assert_eq!(after, before, "step {k}: {:?}", faulty.log());
            let log = faulty.log();
            dirs_undone += usize::from(
                log[..k].contains(&(FsOp::CreateDir, "n/e".to_string()))
                    && log[k..].contains(&(FsOp::RemoveDir, "n/e".to_string())),
            );
        }
        assert!(dirs_undone >= 5, "faults after n/e was made: {dirs_undone}");
    }

    /// The crash proof: the process "dies" at every step of the commit (no
    /// rollback runs); recovery then gives exactly the pre-state (before the
    /// commit point) or the post-state (after it), no temp file, no journal.
    #[test]
    fn a_crash_at_any_step_is_recovered_to_the_pre_or_post_state() {
        let (steps, commit_point, post) = {
            let (dir, changes) = setup();
            let real = RealFs::open(dir.path()).unwrap();
            let counting = FaultFs::new(&real, |_| true, None);
            commit(&counting, &changes).unwrap();
            (
                counting.count(),
                commit_point_of(&counting.log()),
                visible_snapshot(dir.path()),
            )
        };
        let mut rolled_back = 0;
        for k in 0..steps {
            let (dir, changes) = setup();
            let before = visible_snapshot(dir.path());
            let real = RealFs::open(dir.path()).unwrap();
            let dying = FaultFs::dying(&real, |_| true, k);
            let _ = commit(&dying, &changes);
            let recovery = crate::journal::recover(&real).unwrap();
            rolled_back += recovery.rolled_back;
            let mut after = visible_snapshot(dir.path());
            assert!(
                after.keys().all(|p| !is_temp_name(p)),
                "step {k}: {after:?}"
            );
            assert!(
                !crate::journal::pending(&real).unwrap(),
                "step {k}: a journal is left"
            );
            // The trash keeps what a finished commit deleted; compare the
            // workspace proper.
            after.retain(|p, _| !p.starts_with(".patchspec"));
            let mut post = post.clone();
            post.retain(|p, _| !p.starts_with(".patchspec"));
            let mut before = before.clone();
            before.retain(|p, _| !p.starts_with(".patchspec"));
            if k >= commit_point {
                assert_eq!(after, post, "step {k}");
            } else {
                assert_eq!(after, before, "step {k} ({:?})", dying.log().get(k));
                // Nothing of the dead transaction is left in the trash.
                let trash = snapshot(dir.path())
                    .into_keys()
                    .filter(|p| p.starts_with(".patchspec/trash/") && !p.ends_with('/'))
                    .count();
                assert_eq!(trash, 0, "step {k}");
            }
            // Recovery is idempotent.
            assert!(
                crate::journal::recover(&real).unwrap().is_nothing(),
                "step {k}"
            );
        }
        assert!(
            rolled_back >= 4,
            "some crashes came after renames: {rolled_back}"
        );
    }

    /// The new directories are made before anything is staged in them, and
    /// each one's entry is made durable before the commit point: the parent
    /// of every created directory is fsync'd, as the directory itself.
    #[test]
    fn created_directories_and_their_parents_are_synced() {
        let (dir, changes) = setup();
        let real = RealFs::open(dir.path()).unwrap();
        let fs = FaultFs::new(&real, |_| true, None);
        commit(&fs, &changes).unwrap();
        let log = fs.log();
        let at = |op: FsOp, path: &str| {
            log.iter()
                .position(|(o, p)| *o == op && p == path)
                .unwrap_or_else(|| panic!("no {op:?} {path}: {log:?}"))
        };
        let staged = log
            .iter()
            .position(|(op, p)| *op == FsOp::WriteNew && p.starts_with("n/e/w.txt."))
            .expect("n/e/w.txt staged");
        assert!(at(FsOp::CreateDir, "n") < at(FsOp::CreateDir, "n/e"));
        assert!(at(FsOp::CreateDir, "n/e") < staged);
        let renamed = log
            .iter()
            .position(|(op, p)| *op == FsOp::Rename && p.starts_with("n/e/w.txt."))
            .expect("n/e/w.txt renamed");
        let point = commit_point_of(&log);
        for synced in ["", "n", "n/e"] {
            let s = log[renamed..point]
                .iter()
                .position(|(op, p)| *op == FsOp::SyncDir && p == synced);
            assert!(
                s.is_some(),
                "{synced:?} not synced before the commit point: {log:?}"
            );
        }
    }

    /// A failed commit removes the directories it made, deepest first, and
    /// one that is no longer empty (something else was put there) stays.
    #[test]
    fn a_rollback_removes_created_directories_unless_something_else_is_in_them() {
        let dir = tempfile::tempdir().unwrap();
        let real = RealFs::open(dir.path()).unwrap();
        let changes = vec![
            Change::CreateDir { path: "n".into() },
            Change::CreateDir { path: "n/e".into() },
            Change::Write {
                path: "n/e/w.txt".into(),
                content: b"w\n".to_vec().into(),
                before: None,
                mode: None,
            },
        ];
        let fs = FaultFs::new(&real, |op| op == FsOp::Rename, Some(0));
        let e = commit(&fs, &changes).unwrap_err();
        assert!(e.rollback(), "{e}");
        assert_eq!(snapshot(dir.path()), BTreeMap::new());
        let log = fs.log();
        let removed: Vec<&str> = log
            .iter()
            .filter(|(op, _)| *op == FsOp::RemoveDir)
            .map(|(_, p)| p.as_str())
            .filter(|p| !p.starts_with(".patchspec"))
            .collect();
        assert_eq!(removed, ["n/e", "n"]);
        // Undo of the same plan when a stranger's file sits in `n`.
        std::fs::create_dir_all(dir.path().join("n/e")).unwrap();
        std::fs::write(dir.path().join("n/other.txt"), "keep\n").unwrap();
        let intent = plan("t", &changes);
        crate::journal::undo(&real, &intent, true).unwrap();
        let after = snapshot(dir.path());
        assert_eq!(after.keys().collect::<Vec<_>>(), ["n/", "n/other.txt"]);
    }

    #[test]
    fn missing_parents_lists_the_directories_a_new_file_needs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        let fs = RealFs::open(dir.path()).unwrap();
        let dirs = |path: &str| -> Vec<String> {
            missing_parents(&fs, path)
                .unwrap()
                .iter()
                .map(|c| c.path().to_string())
                .collect()
        };
        assert!(dirs("top.txt").is_empty());
        assert!(dirs("a/x.txt").is_empty());
        assert_eq!(dirs("a/b/c/x.txt"), ["a/b", "a/b/c"]);
        assert_eq!(dirs("n/x.txt"), ["n"]);
        let e = missing_parents(&fs, "f/x.txt").unwrap_err();
        assert!(
            e.to_string().contains("f exists and is not a directory"),
            "{e}"
        );
        // Below the first missing one, nothing is asked.
        let counting = FaultFs::new(&fs, |_| true, None);
        missing_parents(&counting, "a/b/c/d/x.txt").unwrap();
        assert_eq!(counting.count(), 2, "{:?}", counting.log());
    }

    /// The rename into the trash is made durable: its folder, and the parent
    /// of every trash folder the commit created, are fsync'd after it.
    #[test]
    fn the_trash_folder_is_synced_after_a_delete() {
        let (dir, changes) = setup();
        let real = RealFs::open(dir.path()).unwrap();
        let fs = FaultFs::new(&real, |_| true, None);
        commit(&fs, &changes).unwrap();
        let log = fs.log();
        let into_trash = log
            .iter()
            .position(|(op, p)| *op == FsOp::Rename && p == "gone.txt")
            .expect("the delete renamed gone.txt");
        let synced: Vec<&str> = log[into_trash..]
            .iter()
            .filter(|(op, _)| *op == FsOp::SyncDir)
            .map(|(_, p)| p.as_str())
            .collect();
        let created: Vec<&str> = log
            .iter()
            .filter(|(op, _)| *op == FsOp::CreateDir)
            .map(|(_, p)| p.as_str())
            .collect();
        let transaction = created.last().expect("a trash folder was created");
        assert!(transaction.starts_with(".patchspec/trash/"), "{created:?}");
        for dir in [*transaction, ".patchspec/trash", ".patchspec", ""] {
            assert!(synced.contains(&dir), "{dir:?} not synced: {synced:?}");
        }
    }

    /// After a rollback, the directories it changed are synced again.
    #[test]
    fn a_rollback_is_synced() {
        let (dir, changes) = setup();
        let real = RealFs::open(dir.path()).unwrap();
        // Fail the last rename (d/b.txt into place): a.txt, d/new.txt,
        // n/e/w.txt and the trash rename are undone.
        let renames = changes
            .iter()
            .filter(|c| !matches!(c, Change::CreateDir { .. }))
            .count();
        let fs = FaultFs::new(&real, |op| op == FsOp::Rename, Some(renames - 1));
        let before = snapshot(dir.path());
        let e = commit(&fs, &changes).unwrap_err();
        assert!(e.rollback(), "{e}");
        assert_eq!(snapshot(dir.path()), before);
        let log = fs.log();
        let fault = log
            .iter()
            .position(|(op, p)| *op == FsOp::Rename && p.starts_with("d/b.txt."))
            .expect("the failed rename");
        let synced: Vec<&str> = log[fault..]
            .iter()
            .filter(|(op, _)| *op == FsOp::SyncDir)
            .map(|(_, p)| p.as_str())
            .collect();
        for dir in ["", "d"] {
            assert!(synced.contains(&dir), "{dir:?} not synced: {synced:?}");
        }
    }

    #[test]
    fn temp_names_are_siblings_within_name_max() {
        // Short names keep the spec's literal form.
        let t = temp_name("d/a.txt");
        assert!(
            t.starts_with("d/a.txt.") && t.ends_with(".apply-patch.tmp"),
            "{t}"
        );
        assert_eq!(t.len(), "d/a.txt".len() + 33);
        for name in [
            "n".repeat(222),
            "n".repeat(223),
            "n".repeat(250),
            "n".repeat(255),
            "é".repeat(125),
            format!("x{}", "€".repeat(84)),
        ] {
            let t = temp_name(&format!("dir/sub/{name}"));
            let temp_file = t.strip_prefix("dir/sub/").expect("a sibling");
            assert!(!temp_file.contains('/'), "{t}");
            assert!(
                temp_file.len() <= NAME_MAX,
                "{} bytes: {t}",
                temp_file.len()
            );
            assert!(is_temp_name(&t));
            let kept = temp_file.len() - 33;
            assert!(name.starts_with(&temp_file[..kept]), "a prefix of the name");
            assert!(
                kept >= name.len().min(222) - 2,
                "cut no more than a character"
            );
        }
    }

    /// A 250-byte name is created, replaced and deleted through the real
    /// filesystem: staging fits.
    #[test]
    fn a_250_byte_name_commits() {
        let dir = tempfile::tempdir().unwrap();
        let fs = RealFs::open(dir.path()).unwrap();
        let name = format!("{}.txt", "n".repeat(246));
        assert_eq!(name.len(), 250);
        let write = |before: Option<&[u8]>, bytes: &[u8]| Change::Write {
            path: name.clone(),
            content: bytes.to_vec().into(),
            before: before.map(|b| std::sync::Arc::new(b.to_vec())),
            mode: None,
        };
        commit(&fs, [write(None, b"1\n")]).unwrap();
        commit(&fs, [write(Some(b"1\n"), b"2\n")]).unwrap();
        assert_eq!(std::fs::read(dir.path().join(&name)).unwrap(), b"2\n");
        let after = snapshot(dir.path());
        assert!(after.keys().all(|k| !is_temp_name(k)), "{after:?}");
    }

    #[test]
    fn a_mode_is_given_to_the_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\n").unwrap();
        let fs = RealFs::open(dir.path()).unwrap();
        let change = Change::Write {
            path: "run.sh".into(),
            content: b"#!/bin/sh\necho\n".to_vec().into(),
            before: Some(std::sync::Arc::new(b"#!/bin/sh\n".to_vec())),
            mode: Some(0o755),
        };
        commit(&fs, [change]).unwrap();
        let mode = std::fs::metadata(dir.path().join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        let _ = FsOp::Read;
    }
}
