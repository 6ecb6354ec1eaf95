//! Opening a workspace: the writer lock and crash recovery, the first thing
//! every entry point does (the tools through [`crate::dispatch`], `patchspec
//! apply`, `call`, `exec` and the WebSocket plugin).
//!
//! - A **writer** ([`open_for_writing`]) takes the exclusive advisory lock,
//!   an `flock` on its own handle of the workspace root directory (no file
//!   is created for it; where the filesystem cannot lock a directory, as NFS,
//!   an `flock` on `.patchspec/lock`), waiting for it, then rolls back any
//!   interrupted commit ([`crate::journal::recover`]). The lock lives in the
//!   returned [`RealFs`] and is held until it is dropped: from the tool's
//!   stale checks and planning through the commit and the journal's removal.
//!   Two writers on one workspace therefore run one after the other, the
//!   second planning against what the first wrote. The kernel releases an
//!   `flock` when its holder dies, so a killed writer never blocks the next.
//! - A **reader** ([`open_for_reading`]) does not take the lock. Only when a
//!   transaction folder exists does it try the lock without waiting: free
//!   means the commit's writer is dead, so the reader recovers first; held
//!   means a live writer owns that journal, which the reader leaves alone.
//!
//! Cost: one `lstat` of `.patchspec/txn` for a reader of a clean workspace;
//! for a writer also one `open` and one `flock`.
//! (docs/clarifications.md, C-commit-journal and C-commit-lock.)

use std::io;
use std::path::Path;

use crate::commit::{is_temp_name, PRIVATE_DIR};
use crate::fs::{EntryKind, Fs, RealFs};
use crate::journal::{self, Recovery};

/// The writer lock's file, where the filesystem cannot lock the root
/// directory itself (NFS).
pub const LOCK_FILE: &str = ".patchspec/lock";

fn recovery_failed(e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("cannot recover the interrupted commit in .patchspec/txn: {e}"),
    )
}

/// Open `root` to write: take the writer lock (waiting), then recover.
///
/// When something that is not a folder (a file, a symlink) stands where
/// `.patchspec` would be, no lock can be taken there (a symlink is never
/// followed into: the lock file must not land elsewhere); the call then goes
/// on unlocked, its path checks refuse what they refuse, and a commit fails
/// at its first step (the journal cannot be written), changing nothing.
pub fn open_for_writing(root: &Path) -> io::Result<RealFs> {
    let mut fs = RealFs::open(root)?;
    if lock_writers(&mut fs)? {
        journal::recover(&fs).map_err(recovery_failed)?;
    }
    Ok(fs)
}

/// Take the writer lock: an `flock` on the root directory itself, or, where
/// the filesystem cannot lock a directory, on `.patchspec/lock` (created
/// with its folder when absent); `Ok(false)` when that fallback is needed
/// and `.patchspec` is not a folder.
fn lock_writers(fs: &mut RealFs) -> io::Result<bool> {
    if let Some(taken) = fs.lock_root(true)? {
        return Ok(taken);
    }
    match fs.kind(PRIVATE_DIR)? {
        Some(EntryKind::Dir) => {}
        None => {
            journal::ensure_dirs(fs, PRIVATE_DIR)?;
        }
        Some(_) => return Ok(false),
    }
    fs.lock(LOCK_FILE, true)
}

/// Try the lock without waiting (a reader's recovery): true when taken.
fn try_lock(fs: &mut RealFs) -> io::Result<bool> {
    match fs.lock_root(false)? {
        Some(taken) => Ok(taken),
        None if fs.kind(LOCK_FILE)? == Some(EntryKind::File) => fs.lock(LOCK_FILE, false),
        // No lock file: no writer on this filesystem ever took one.
        None => Ok(true),
    }
}

/// Open `root` to read: recover first only if a dead writer left a journal.
pub fn open_for_reading(root: &Path) -> io::Result<RealFs> {
    let mut fs = RealFs::open(root)?;
    if journal::pending(&fs)? && try_lock(&mut fs)? {
        journal::recover(&fs).map_err(recovery_failed)?;
        fs.unlock();
    }
    Ok(fs)
}

/// What [`recover`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The journal's roll-back.
    pub journal: Recovery,
    /// Orphaned temp files removed that no journal named (left by engines
    /// without a journal).
    pub orphans_removed: usize,
}

/// `patchspec recover`: take the lock, roll back interrupted commits, and
/// remove every engine temp file ([`is_temp_name`]) left anywhere in the
/// workspace outside `.patchspec/` (a walk of the whole tree, symlinks not
/// followed: the one entry point whose cost is the size of the workspace).
pub fn recover(root: &Path) -> io::Result<Recovered> {
    let fs = open_for_writing_quietly(root)?;
    let journal = journal::recover(&fs).map_err(recovery_failed)?;
    let mut orphans = 0;
    sweep(&fs, "", &mut orphans)?;
    Ok(Recovered {
        journal,
        orphans_removed: orphans,
    })
}

/// Lock without recovering (the caller recovers and wants the figures).
fn open_for_writing_quietly(root: &Path) -> io::Result<RealFs> {
    let mut fs = RealFs::open(root)?;
    if !lock_writers(&mut fs)? {
        return Err(io::Error::other(format!(
            "{PRIVATE_DIR} exists and is not a folder: the engine can neither lock nor journal here"
        )));
    }
    Ok(fs)
}

fn sweep(fs: &dyn Fs, dir: &str, removed: &mut usize) -> io::Result<()> {
    for (name, kind) in fs.list_dir(dir)? {
        let path = if dir.is_empty() {
            name.clone()
        } else {
            format!("{dir}/{name}")
        };
        match kind {
            EntryKind::Dir if path != PRIVATE_DIR => sweep(fs, &path, removed)?,
            EntryKind::File if is_temp_name(&name) => {
                fs.remove_file(&path)?;
                *removed += 1;
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recover_removes_the_engines_orphans_and_only_those() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        std::fs::create_dir(root.join("d")).unwrap();
        for f in [
            "a.txt",
            "d/b.txt.0123456789abcdef.apply-patch.tmp",
            "c.txt.fedcba9876543210.apply-patch.tmp",
            "notes.apply-patch.tmp",
            "x.0123456789ABCDEF.apply-patch.tmp",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let done = recover(root).unwrap();
        assert_eq!(done.orphans_removed, 2);
        assert!(done.journal.is_nothing());
        assert!(root.join("a.txt").exists());
        assert!(root.join("notes.apply-patch.tmp").exists());
        assert!(root.join("x.0123456789ABCDEF.apply-patch.tmp").exists());
        assert!(!root
            .join("d/b.txt.0123456789abcdef.apply-patch.tmp")
            .exists());
        assert_eq!(recover(root).unwrap(), Recovered::default());
    }

    #[test]
    fn a_writer_leaves_no_file_behind_for_its_lock() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        std::fs::create_dir(root.join("cache")).unwrap();
        std::os::unix::fs::symlink("cache", root.join(PRIVATE_DIR)).unwrap();
        let fs = open_for_writing(root).unwrap();
        assert!(fs.holds_lock());
        drop(fs);
        assert_eq!(std::fs::read_dir(root.join("cache")).unwrap().count(), 0);
        let fresh = tempfile::tempdir().unwrap();
        drop(open_for_writing(fresh.path()).unwrap());
        assert_eq!(std::fs::read_dir(fresh.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_writer_holds_the_lock_and_a_reader_does_not_wait_for_it() {
        let ws = tempfile::tempdir().unwrap();
        let writer = open_for_writing(ws.path()).unwrap();
        assert!(writer.holds_lock());
        let reader = open_for_reading(ws.path()).unwrap();
        assert!(!reader.holds_lock());
    }
}
