//! The committer: the one atomic writer. A [`Change`] list is staged, then
//! committed all-or-nothing; any failure rolls the workspace back to its
//! captured pre-images.
//!
//! Phases, as patch-envelope.md "Atomicity" prescribes:
//! 1. **stage**: every write goes to a sibling temp file
//!    `<path>.<rand>.apply-patch.tmp`, fsync'd (the name part cut short when
//!    the whole would exceed [`NAME_MAX`]: see [`temp_name`]);
//! 2. **commit**: in plan order, each temp file is renamed over its target
//!    and each deleted file is renamed into the workspace trash
//!    (`.patchspec/trash/<transaction>/<path>`); then every touched directory
//!    is fsync'd: the targets' parents, the trash folders a file went into
//!    and the parents of every folder the commit created;
//! 3. **rollback** (on any failure in 1 or 2): renamed files are restored from
//!    their pre-image bytes (through a fresh temp file and rename, so a
//!    restore is itself atomic), created files are removed, trashed files are
//!    renamed back, staged temp files are unlinked and trash directories this
//!    transaction created are removed; then the same directories are
//!    fsync'd again, best effort (a failing fsync there is not reported:
//!    the files are already as they were).
//!
//! The trash is never pruned: the engine keeps no state between calls and
//! cannot know when a user no longer needs a deleted file (C-commit-trash).
//!
//! What is not promised: durability of a rollback across a power loss in the
//! middle of it, and isolation from a concurrent writer (there is no lock;
//! the stale checks of each tool narrow that window but cannot close it).
//! A second fault during rollback is reported as [`CommitError::rollback`]
//! so the caller can say the workspace may not be as it was.

use std::io;

use crate::fs::{file_name_of, parent_of, EntryKind, Fs};

/// The private folder of the engine inside a workspace.
pub const PRIVATE_DIR: &str = ".patchspec";
/// Where deleted files go, one folder per transaction.
pub const TRASH_DIR: &str = ".patchspec/trash";

/// One file change of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Write `bytes` at `path`, creating or replacing it.
    Write {
        /// Workspace-relative, guarded path.
        path: String,
        /// The new content.
        bytes: Vec<u8>,
        /// The pre-image (`None`: the file did not exist).
        before: Option<Vec<u8>>,
        /// Permission bits to give the file (keep an executable script executable).
        mode: Option<u32>,
    },
    /// Remove `path`, moving it into the workspace trash.
    Delete {
        /// Workspace-relative, guarded path.
        path: String,
        /// The pre-image.
        before: Vec<u8>,
    },
}

impl Change {
    /// The path this change touches.
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Delete { path, .. } => path,
        }
    }
}

/// Which step of a commit failed.
#[derive(Debug, thiserror::Error)]
#[error("{step} {path}: {source}{}", if *.rollback_incomplete { " (rollback incomplete: the workspace may differ from before)" } else { "" })]
pub struct CommitError {
    /// "staging", "renaming", "trashing", "syncing".
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

/// The longest file name, in bytes, that Linux, macOS and the BSDs take.
pub const NAME_MAX: usize = 255;

/// The name of a sibling temp file for `path`: `<path>.<rand>.apply-patch.tmp`,
/// except that the file name part of `path` is cut (at a character boundary)
/// so that the temp file's name stays within [`NAME_MAX`] bytes. Without the
/// cut, any name longer than 222 bytes could not be staged, hence not be
/// created or updated at all (docs/clarifications.md, C-commit-temp-name).
pub fn temp_name(path: &str) -> String {
    let suffix = format!(".{:016x}.apply-patch.tmp", fastrand::u64(..));
    let name = file_name_of(path);
    let dir = &path[..path.len() - name.len()];
    let mut keep = name.len().min(NAME_MAX - suffix.len());
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{dir}{}{suffix}", &name[..keep])
}

/// What has been done so far, for rollback.
enum Done {
    Renamed { index: usize },
    Trashed { index: usize, trash_path: String },
    CreatedDir(String),
}

/// Commit `changes` atomically: all of them, or none (see the module docs).
pub fn commit(fs: &dyn Fs, changes: &[Change]) -> Result<(), CommitError> {
    let transaction = format!(
        "{}-{:08x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0),
        fastrand::u32(..)
    );
    // Phase 1: stage every write.
    let mut temps: Vec<Option<String>> = vec![None; changes.len()];
    for (i, change) in changes.iter().enumerate() {
        if let Change::Write {
            path, bytes, mode, ..
        } = change
        {
            let tmp = temp_name(path);
            if let Err(source) = fs.write_new(&tmp, bytes, *mode) {
                // A failed write_new may have left a partial file behind.
                let mut clean = unlink_quietly(fs, &tmp);
                for t in temps.iter().flatten() {
                    clean &= unlink_quietly(fs, t);
                }
                return Err(CommitError {
                    step: "staging",
                    path: path.clone(),
                    source,
                    rollback_incomplete: !clean,
                });
            }
            temps[i] = Some(tmp);
        }
    }
    // Phase 2: rename into place, in plan order.
    let mut done: Vec<Done> = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        let result = match change {
            Change::Write { path, .. } => {
                let tmp = temps[i].as_deref().unwrap_or_default();
                fs.rename(tmp, path).map(|()| {
                    temps[i] = None;
                    done.push(Done::Renamed { index: i });
                })
            }
            Change::Delete { path, .. } => {
                let trash_path = format!("{TRASH_DIR}/{transaction}/{path}");
                ensure_dirs(fs, parent_of(&trash_path), &mut done)
                    .and_then(|()| fs.rename(path, &trash_path))
                    .map(|()| {
                        done.push(Done::Trashed {
                            index: i,
                            trash_path,
                        })
                    })
            }
        };
        if let Err(source) = result {
            let step = match change {
                Change::Write { .. } => "renaming",
                Change::Delete { .. } => "trashing",
            };
            let clean = rollback(fs, changes, &mut temps, done);
            return Err(CommitError {
                step,
                path: change.path().to_string(),
                source,
                rollback_incomplete: !clean,
            });
        }
    }
    // Phase 3: make the renames durable.
    for dir in touched_dirs(changes, &done) {
        if let Err(source) = fs.sync_dir(&dir) {
            let clean = rollback(fs, changes, &mut temps, done);
            return Err(CommitError {
                step: "syncing",
                path: dir.to_string(),
                source,
                rollback_incomplete: !clean,
            });
        }
    }
    Ok(())
}

/// Every directory whose entries a commit changed: the targets' parents, the
/// trash folders files went into, the parents of created folders.
fn touched_dirs(changes: &[Change], done: &[Done]) -> Vec<String> {
    let mut dirs: Vec<String> = changes
        .iter()
        .map(|c| parent_of(c.path()).to_string())
        .collect();
    for step in done {
        match step {
            Done::Trashed { trash_path, .. } => dirs.push(parent_of(trash_path).to_string()),
            Done::CreatedDir(dir) => dirs.push(parent_of(dir).to_string()),
            Done::Renamed { .. } => {}
        }
    }
    dirs.sort_unstable();
    dirs.dedup();
    dirs
}

/// Create `dir` and its missing parents, recording each created one.
fn ensure_dirs(fs: &dyn Fs, dir: &str, done: &mut Vec<Done>) -> io::Result<()> {
    let mut prefix = String::new();
    for part in dir.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        match fs.kind(&prefix)? {
            Some(EntryKind::Dir) => {}
            None => {
                fs.create_dir(&prefix)?;
                done.push(Done::CreatedDir(prefix.clone()));
            }
            Some(_) => {
                return Err(io::Error::other(format!(
                    "{prefix} exists and is not a directory"
                )))
            }
        }
    }
    Ok(())
}

fn unlink_quietly(fs: &dyn Fs, path: &str) -> bool {
    match fs.remove_file(path) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        Err(_) => matches!(fs.kind(path), Ok(None)),
    }
}

/// Undo `done` in reverse and unlink staged temps; true when all of it worked.
fn rollback(
    fs: &dyn Fs,
    changes: &[Change],
    temps: &mut [Option<String>],
    done: Vec<Done>,
) -> bool {
    let dirs = touched_dirs(changes, &done);
    let mut clean = true;
    for step in done.into_iter().rev() {
        clean &= match step {
            Done::Renamed { index } => match &changes[index] {
                Change::Write {
                    path,
                    before: Some(before),
                    mode,
                    ..
                } => restore(fs, path, before, *mode),
                Change::Write {
                    path, before: None, ..
                } => unlink_quietly(fs, path),
                Change::Delete { .. } => false,
            },
            Done::Trashed { index, trash_path } => {
                let change = &changes[index];
                fs.rename(&trash_path, change.path()).is_ok() || {
                    // The rename back failed: fall back to the captured bytes.
                    match change {
                        Change::Delete { path, before } => {
                            restore(fs, path, before, None) && unlink_quietly(fs, &trash_path)
                        }
                        Change::Write { .. } => false,
                    }
                }
            }
            Done::CreatedDir(dir) => fs.remove_dir(&dir).is_ok(),
        };
    }
    for tmp in temps.iter_mut() {
        if let Some(t) = tmp.take() {
            clean &= unlink_quietly(fs, &t);
        }
    }
    // Best effort: a folder the rollback removed cannot be synced, and a
    // failing fsync does not make the restored files differ.
    for dir in dirs {
        let _ = fs.sync_dir(&dir);
    }
    clean
}

/// Put `bytes` back at `path` atomically (temp file, then rename).
fn restore(fs: &dyn Fs, path: &str, bytes: &[u8], mode: Option<u32>) -> bool {
    let tmp = temp_name(path);
    if fs.write_new(&tmp, bytes, mode).is_err() {
        unlink_quietly(fs, &tmp);
        // Last resort: the slot may be empty (a rename that half happened).
        return fs.kind(path).ok().flatten().is_none() && fs.write_new(path, bytes, mode).is_ok();
    }
    if fs.rename(&tmp, path).is_err() {
        unlink_quietly(fs, &tmp);
        return false;
    }
    true
}

/// True when `name` looks like a staged temp file of this engine.
pub fn is_temp_name(name: &str) -> bool {
    file_name_of(name).ends_with(".apply-patch.tmp")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
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

    fn setup() -> (tempfile::TempDir, Vec<Change>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a1\n").unwrap();
        std::fs::write(dir.path().join("d/b.txt"), "b1\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        let changes = vec![
            Change::Write {
                path: "a.txt".into(),
                bytes: b"a2\n".to_vec(),
                before: Some(b"a1\n".to_vec()),
                mode: None,
            },
            Change::Write {
                path: "d/new.txt".into(),
                bytes: b"new\n".to_vec(),
                before: None,
                mode: None,
            },
            Change::Delete {
                path: "gone.txt".into(),
                before: b"bye\n".to_vec(),
            },
            Change::Write {
                path: "d/b.txt".into(),
                bytes: b"b2\n".to_vec(),
                before: Some(b"b1\n".to_vec()),
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
        assert!(!after.contains_key("gone.txt"));
        let trashed: Vec<_> = after
            .iter()
            .filter(|(k, _)| k.starts_with(".patchspec/trash/") && k.ends_with("/gone.txt"))
            .collect();
        assert_eq!(trashed.len(), 1);
        assert_eq!(trashed[0].1, b"bye\n");
        assert!(after.keys().all(|k| !is_temp_name(k)));
    }

    /// The fault-injection proof: fail every step of the commit, one at a
    /// time, and the tree must be byte-for-byte as before, with no temp files.
    #[test]
    fn a_fault_at_any_step_leaves_the_tree_as_it_was() {
        let steps = {
            let (dir, changes) = setup();
            let real = RealFs::open(dir.path()).unwrap();
            let counting = FaultFs::new(&real, |_| true, None);
            commit(&counting, &changes).unwrap();
            counting.count()
        };
        assert!(steps >= 10, "the commit has {steps} steps");
        let mut failures = 0;
        for k in 0..steps {
            let (dir, changes) = setup();
            let before = snapshot(dir.path());
            let real = RealFs::open(dir.path()).unwrap();
            let faulty = FaultFs::new(&real, |_| true, Some(k));
            match commit(&faulty, &changes) {
                Ok(()) => {
                    // Only a fault in a read-only probe that the commit can
                    // tolerate may let it succeed; it must then be complete.
                    let after = snapshot(dir.path());
                    assert_eq!(after["a.txt"], b"a2\n", "step {k}");
                }
                Err(e) => {
                    failures += 1;
                    assert!(e.rollback(), "step {k}: {e}");
                    assert_eq!(snapshot(dir.path()), before, "step {k}: {:?}", faulty.log());
                }
            }
        }
        assert!(
            failures >= steps - 2,
            "{failures} of {steps} injected faults surfaced"
        );
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
        // Fail the last rename (d/b.txt into place): a.txt, d/new.txt and
        // the trash rename are undone.
        let renames = changes.len();
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
            bytes: bytes.to_vec(),
            before: before.map(<[u8]>::to_vec),
            mode: None,
        };
        commit(&fs, &[write(None, b"1\n")]).unwrap();
        commit(&fs, &[write(Some(b"1\n"), b"2\n")]).unwrap();
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
            bytes: b"#!/bin/sh\necho\n".to_vec(),
            before: Some(b"#!/bin/sh\n".to_vec()),
            mode: Some(0o755),
        };
        commit(&fs, &[change]).unwrap();
        let mode = std::fs::metadata(dir.path().join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        let _ = FsOp::Read;
    }
}
