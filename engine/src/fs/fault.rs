//! Fault injection for tests: [`FaultFs`] wraps a workspace and fails,
//! panics or "dies" at the n-th operation of a chosen kind ([`FsOp`]).
//! Compiled for the engine's own tests and with the `testing` feature.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{EntryKind, Fs};

/// Which operation a [`FaultFs`] counts and fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsOp {
    /// [`Fs::read`]
    Read,
    /// [`Fs::kind`]
    Kind,
    /// [`Fs::read_link`]
    ReadLink,
    /// [`Fs::list_dir`]
    ListDir,
    /// [`Fs::mode`]
    Mode,
    /// [`Fs::write_new`]
    WriteNew,
    /// [`Fs::hard_link`]
    HardLink,
    /// [`Fs::rename`]
    Rename,
    /// [`Fs::remove_file`]
    RemoveFile,
    /// [`Fs::create_dir`]
    CreateDir,
    /// [`Fs::remove_dir`]
    RemoveDir,
    /// [`Fs::sync_dir`]
    SyncDir,
}

impl FsOp {
    /// True for the operations that change the workspace.
    pub fn is_mutation(self) -> bool {
        matches!(
            self,
            FsOp::WriteNew
                | FsOp::HardLink
                | FsOp::Rename
                | FsOp::RemoveFile
                | FsOp::CreateDir
                | FsOp::RemoveDir
        )
    }
}

/// A wrapper that fails exactly one chosen operation, for fault injection.
///
/// It counts the operations selected by its filter; the `fail_at`-th of them
/// (0-based) returns an error instead of reaching the inner [`Fs`]. Every
/// other operation, including those after the failure (rollback), succeeds,
/// which is the model of a single transient fault. Built with
/// [`FaultFs::panicking`], it panics there instead: the model of a bug,
/// which each tool must turn into its internal-error result. Built with
/// [`FaultFs::dying`], every operation from the chosen one on fails: the
/// model of a process killed there, which never gets to roll back (crash
/// recovery, [`crate::journal::recover`], must then restore the workspace).
pub struct FaultFs<'a> {
    inner: &'a dyn Fs,
    filter: fn(FsOp) -> bool,
    fail_at: Option<usize>,
    panics: bool,
    dies: bool,
    dead: std::sync::atomic::AtomicBool,
    seen: AtomicUsize,
    log: Mutex<Vec<(FsOp, String)>>,
}

impl<'a> FaultFs<'a> {
    /// Fail the `fail_at`-th operation that `filter` selects (`None`: never fail, only count).
    pub fn new(inner: &'a dyn Fs, filter: fn(FsOp) -> bool, fail_at: Option<usize>) -> Self {
        FaultFs {
            inner,
            filter,
            fail_at,
            panics: false,
            dies: false,
            dead: std::sync::atomic::AtomicBool::new(false),
            seen: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
        }
    }

    /// Panic at the `panic_at`-th operation that `filter` selects.
    pub fn panicking(inner: &'a dyn Fs, filter: fn(FsOp) -> bool, panic_at: usize) -> Self {
        FaultFs {
            panics: true,
            ..FaultFs::new(inner, filter, Some(panic_at))
        }
    }

    /// "Die" at the `die_at`-th operation that `filter` selects: it and every
    /// later operation fail, as if the process had been killed there.
    pub fn dying(inner: &'a dyn Fs, filter: fn(FsOp) -> bool, die_at: usize) -> Self {
        FaultFs {
            dies: true,
            ..FaultFs::new(inner, filter, Some(die_at))
        }
    }

    /// How many operations the filter selected so far.
    pub fn count(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }

    /// Every operation performed (or failed), in order, with its path.
    pub fn log(&self) -> Vec<(FsOp, String)> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The index in [`FaultFs::log`] of the operation that was made to fail,
    /// once it has been reached (`None` before, or when nothing is to fail).
    pub fn failed_entry(&self) -> Option<usize> {
        let fail_at = self.fail_at?;
        self.log()
            .iter()
            .enumerate()
            .filter(|(_, (op, _))| (self.filter)(*op))
            .nth(fail_at)
            .map(|(i, _)| i)
    }

    // The injected panic is this seam's purpose (`FaultFs::panicking`): tests
    // use it to prove that a panic mid-commit loses nothing.
    #[allow(clippy::panic)]
    fn gate(&self, op: FsOp, path: &str) -> io::Result<()> {
        if let Ok(mut log) = self.log.lock() {
            log.push((op, path.to_string()));
        }
        if self.dead.load(Ordering::SeqCst) {
            return Err(io::Error::other(format!(
                "the process died before {op:?} ({path})"
            )));
        }
        if !(self.filter)(op) {
            return Ok(());
        }
        let n = self.seen.fetch_add(1, Ordering::SeqCst);
        if Some(n) == self.fail_at {
            if self.dies {
                self.dead.store(true, Ordering::SeqCst);
                return Err(io::Error::other(format!(
                    "the process died at {op:?} #{n} ({path})"
                )));
            }
            if self.panics {
                panic!("injected panic at {op:?} #{n} ({path})");
            }
            return Err(io::Error::other(format!(
                "injected fault at {op:?} #{n} ({path})"
            )));
        }
        Ok(())
    }
}

impl Fs for FaultFs<'_> {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.gate(FsOp::Read, path)?;
        self.inner.read(path)
    }
    fn read_hashed(&self, path: &str) -> io::Result<(Vec<u8>, String)> {
        self.gate(FsOp::Read, path)?;
        self.inner.read_hashed(path)
    }
    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        self.gate(FsOp::Kind, path)?;
        self.inner.kind(path)
    }
    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        self.gate(FsOp::ReadLink, path)?;
        self.inner.read_link(path)
    }
    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        self.gate(FsOp::ListDir, path)?;
        self.inner.list_dir(path)
    }
    fn mode(&self, path: &str) -> io::Result<u32> {
        self.gate(FsOp::Mode, path)?;
        self.inner.mode(path)
    }
    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.gate(FsOp::WriteNew, path)?;
        self.inner.write_new(path, bytes, mode)
    }
    fn write_new_parts(&self, path: &str, parts: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        self.gate(FsOp::WriteNew, path)?;
        self.inner.write_new_parts(path, parts, mode)
    }
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.gate(FsOp::HardLink, link)?;
        self.inner.hard_link(original, link)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.gate(FsOp::Rename, from)?;
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.gate(FsOp::RemoveFile, path)?;
        self.inner.remove_file(path)
    }
    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.gate(FsOp::CreateDir, path)?;
        self.inner.create_dir(path)
    }
    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.gate(FsOp::RemoveDir, path)?;
        self.inner.remove_dir(path)
    }
    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.gate(FsOp::SyncDir, path)?;
        self.inner.sync_dir(path)
    }
    fn read_at_most(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        self.gate(FsOp::Read, path)?;
        self.inner.read_at_most(path, limit)
    }
    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        self.gate(FsOp::Kind, path)?;
        self.inner.identity(path)
    }
    fn seal(&self) -> Option<&crate::seal::Seal> {
        self.inner.seal()
    }
    fn recorder(&self) -> Option<&dyn super::CommitRecorder> {
        self.inner.recorder()
    }
}

