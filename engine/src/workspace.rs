//! Opening a workspace: the writer lock and crash recovery, the first thing
//! every writing entry point does (the writing tools through
//! [`crate::dispatch`], `patchspec apply`, `call`, `exec`, `mcp` and the
//! WebSocket plugin).
//!
//! - A **writer** ([`open_for_writing`]) takes the exclusive advisory lock,
//!   an `flock` on its own handle of the workspace root directory (no file
//!   is created for it; where the filesystem cannot lock a directory, as NFS,
//!   an `flock` on `.patchspec/lock`), after a shared `flock` on every folder
//!   above the root (`RealFs::lock_ancestors`), waiting for each. Writers
//!   whose roots overlap, one inside the other, therefore exclude each other;
//!   writers of disjoint roots do not. It then rolls back any interrupted
//!   commit it can prove its own (`crate::journal::recover`), reports
//!   anything foreign there and leaves it alone, and refuses to go on when an
//!   enclosing workspace holds a proven interrupted commit that names files
//!   of this one (its rollback would undo this writer's work later). The
//!   lock lives in the returned `RealFs` and is held until it is dropped:
//!   from the tool's stale checks and planning through the commit and the
//!   journal's clean-up. The kernel releases an `flock` when its holder
//!   dies, so a killed writer never blocks the next.
//! - A **reader** ([`open_for_reading`]) takes no lock and writes nothing:
//!   not even a dead writer's journal is rolled back by a read (a read-only
//!   call must not rename or remove anything, and a journal in a clone is
//!   not to be trusted by the mere act of reading). A reader may therefore
//!   see a commit a dead writer left half done, until the next writer or
//!   `patchspec recover` rolls it back.
//!
//! Cost: nothing for a reader but opening the root; for a writer one `open`
//! and `flock` per folder above the root and one for the root, one `lstat`
//! of `.patchspec/txn`, and one `lstat` of `.patchspec/txn` in each folder
//! above the root.
//! (docs/clarifications.md, C-commit-journal and C-commit-lock;
//! docs/security.md.)

use std::io;
use std::path::Path;

use crate::fs::{EntryKind, Fs, RealFs};
use crate::journal::{self, Foreign, Proven, Recovery};
use crate::layout::{is_temp_name, join, LOCK_FILE, PRIVATE_DIR};

fn recovery_failed(e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("cannot recover the interrupted commit in .patchspec/txn: {e}"),
    )
}

/// Open `root` to write: take the writer lock (waiting), then recover.
///
/// When something that is not a folder (a file, a symlink) stands where
/// `.patchspec` would be and the root cannot be locked itself, no lock can
/// be taken there (a symlink is never followed into: the lock file must
/// not land elsewhere); the call then goes on unlocked, its path checks
/// refuse what they refuse, and a commit fails at its first step (the
/// journal cannot be written), changing nothing.
pub fn open_for_writing(root: &Path) -> io::Result<RealFs> {
    let mut fs = RealFs::open(root)?;
    if lock_writers(&mut fs)? {
        let done = journal::recover(&fs).map_err(recovery_failed)?;
        report_foreign(&done.foreign);
    }
    refuse_enclosing_journals(&fs)?;
    Ok(fs)
}

/// Take the writer lock: shared locks on the folders above the root, then
/// an `flock` on the root directory itself, or, where the filesystem
/// cannot lock a directory, on `.patchspec/lock` (created with its folder
/// when absent); `Ok(false)` when that fallback is needed and `.patchspec`
/// is not a folder.
fn lock_writers(fs: &mut RealFs) -> io::Result<bool> {
    fs.lock_ancestors(true)?;
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

fn report_foreign(foreign: &[Foreign]) {
    for f in foreign {
        crate::events::foreign_journal(&f.path, &f.reason);
    }
}

/// Refuse to write under a folder above the root whose own workspace holds
/// a proven interrupted commit naming a file of this workspace: rolling it
/// back later would undo what this writer does. The writer holds a shared
/// lock on that folder, so the commit's writer is dead; the caller is told
/// to recover it (`patchspec recover --root <folder>`). Journals there that
/// are not proven are never executed by anyone, so they do not matter.
fn refuse_enclosing_journals(fs: &RealFs) -> io::Result<()> {
    let Ok(real) = std::fs::canonicalize(fs.root_path()) else {
        return Ok(());
    };
    for folder in real.ancestors().skip(1) {
        let txn = folder.join(crate::layout::TXN_DIR);
        match std::fs::symlink_metadata(&txn) {
            Ok(meta) if meta.is_dir() => {}
            _ => continue,
        }
        let Ok(inside) = real.strip_prefix(folder) else {
            continue;
        };
        let inside = inside.to_string_lossy().into_owned();
        let Ok(outer) = RealFs::open(folder) else {
            continue;
        };
        let Ok(entries) = outer.list_dir(crate::layout::TXN_DIR) else {
            continue;
        };
        for (name, _) in entries.iter().take(journal::MAX_TRANSACTIONS) {
            if let Ok(Proven::Interrupted(intent)) = journal::prove(&outer, name) {
                if let Some(step) = intent
                    .steps
                    .iter()
                    .find(|s| s.path().starts_with(&format!("{inside}/")))
                {
                    return Err(io::Error::other(format!(
                        "the enclosing workspace {} holds an interrupted commit ({}/{name}) that changes {}; \
                         recover it first: patchspec recover --root {}",
                        folder.display(),
                        crate::layout::TXN_DIR,
                        step.path(),
                        folder.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Open `root` to read: no lock, no recovery, nothing written. A journal
/// folder that is there (a dead writer's, or something planted) is only
/// reported as an event.
pub fn open_for_reading(root: &Path) -> io::Result<RealFs> {
    let fs = RealFs::open(root)?;
    if journal::pending(&fs).unwrap_or(false) {
        crate::events::journal_pending(&root.to_string_lossy());
    }
    Ok(fs)
}

/// What [`Workspace::recover`](crate::Workspace::recover) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The journal's roll-back, and what it found foreign.
    pub journal: Recovery,
    /// Orphaned temp files removed that no journal named (left by engines
    /// without a journal).
    pub orphans_removed: usize,
    /// Foreign entries removed (with `discard`), and how many files and
    /// folders they held.
    pub discarded: Vec<(Foreign, usize)>,
}

/// `patchspec recover`: take the lock, roll back interrupted commits this
/// engine can prove its own, and remove every engine temp file
/// (`is_temp_name`) left anywhere in the workspace outside `.patchspec/`
/// (a walk of the whole tree, symlinks not followed: the one entry point
/// whose cost is the size of the workspace). With `discard`, also remove
/// what recovery found foreign (`journal::discard_foreign`), after it is
/// listed; without, foreign entries are only listed.
pub fn recover(root: &Path, discard: bool) -> io::Result<Recovered> {
    let fs = open_for_writing_quietly(root)?;
    let journal = journal::recover(&fs).map_err(recovery_failed)?;
    let mut discarded = Vec::new();
    if discard {
        for foreign in &journal.foreign {
            let removed = journal::discard_foreign(&fs, foreign).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot discard {}: {e}", foreign.path))
            })?;
            discarded.push((foreign.clone(), removed));
        }
        if !discarded.is_empty() {
            let _ = fs.remove_dir(crate::layout::TXN_DIR);
        }
    }
    let mut orphans = 0;
    sweep(&fs, "", &mut orphans)?;
    Ok(Recovered {
        journal,
        orphans_removed: orphans,
        discarded,
    })
}

/// Lock without recovering (the caller recovers and wants the figures).
/// `.patchspec` that is not a folder is refused, unless the root itself
/// could be locked (then only the journal folder below it is unreadable,
/// which recovery reports).
fn open_for_writing_quietly(root: &Path) -> io::Result<RealFs> {
    let mut fs = RealFs::open(root)?;
    if !lock_writers(&mut fs)? {
        return Err(io::Error::other(format!(
            "{PRIVATE_DIR} exists and is not a folder: the engine can neither lock nor journal here; \
             it is the engine's private folder, so remove it"
        )));
    }
    Ok(fs)
}

fn sweep(fs: &dyn Fs, dir: &str, removed: &mut usize) -> io::Result<()> {
    for (name, kind) in fs.list_dir(dir)? {
        let path = join(dir, &name);
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
        let done = recover(root, false).unwrap();
        assert_eq!(done.orphans_removed, 2);
        assert!(done.journal.is_nothing());
        assert!(root.join("a.txt").exists());
        assert!(root.join("notes.apply-patch.tmp").exists());
        assert!(root.join("x.0123456789ABCDEF.apply-patch.tmp").exists());
        assert!(!root
            .join("d/b.txt.0123456789abcdef.apply-patch.tmp")
            .exists());
        assert_eq!(recover(root, false).unwrap(), Recovered::default());
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
