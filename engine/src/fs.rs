//! The filesystem seam: every byte the engine reads or writes goes through
//! [`Fs`], so tests can inject a failure at any single step (`FaultFs`) and
//! the committer's rollback can be proven step by step.
//!
//! Paths given to an [`Fs`] are workspace-relative, `/`-separated and already
//! resolved by [`crate::path_guard`]; `""` names the workspace root. The real
//! implementation, [`RealFs`], holds a directory handle on the root and
//! resolves every path beneath it (cap-std, `openat2(RESOLVE_BENEATH)` on
//! Linux): even if a directory is swapped for a symlink after the guard
//! checked the path, the kernel refuses to follow it out of the workspace.
//!
//! Reads open without blocking (`O_NONBLOCK`) and check the opened handle
//! with `fstat`: a path swapped for a FIFO, socket or device between a
//! tool's check and the open is refused, never waited on
//! (docs/clarifications.md, C-fs-nonblocking). The workspace lock of
//! [`crate::workspace`] is an `flock` held by a [`RealFs`] on its own handle
//! of the root directory ([`RealFs::lock_root`]; a lock file where a
//! filesystem cannot lock directories, [`RealFs::lock`]).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

#[cfg(any(test, feature = "testing"))]
mod fault;
#[cfg(any(test, feature = "testing"))]
pub use fault::{FaultFs, FsOp};

/// What a directory entry is, as `lstat` sees it (symlinks are not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link, whatever it points at.
    Symlink,
    /// Anything else (fifo, socket, device).
    Other,
}

impl EntryKind {
    fn of(ft: cap_std::fs::FileType) -> EntryKind {
        if ft.is_symlink() {
            EntryKind::Symlink
        } else if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        }
    }
}

/// The operations the engine performs on a workspace.
///
/// Mutating operations are few on purpose: a staged write is always a new
/// file (`write_new`), and it reaches its final name only by `rename`.
pub trait Fs: Send + Sync {
    /// The whole content of a file (following in-workspace symlinks).
    fn read(&self, path: &str) -> io::Result<Vec<u8>>;
    /// [`Fs::read`], and the [`crate::hash::sha256_hex`] of the bytes read.
    /// The real filesystem hashes a large file while reading it
    /// (`crate::hash::read_to_end_hashed`); the default reads, then hashes.
    fn read_hashed(&self, path: &str) -> io::Result<(Vec<u8>, String)> {
        let bytes = self.read(path)?;
        let digest = crate::hash::sha256_hex(&bytes);
        Ok((bytes, digest))
    }
    /// What `path` is, without following a final symlink; `Ok(None)` when absent.
    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>>;
    /// The target of a symlink, exactly as stored.
    fn read_link(&self, path: &str) -> io::Result<PathBuf>;
    /// The names in a directory with their kinds, sorted by name.
    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>>;
    /// Unix permission bits of a file (following in-workspace symlinks).
    fn mode(&self, path: &str) -> io::Result<u32>;
    /// Create `path` (which must not exist), write `bytes`, set `mode` when
    /// given, fsync it.
    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()>;
    /// [`Fs::write_new`] of the concatenation of `parts`. The real
    /// filesystem writes them with vectored writes, so spliced content
    /// ([`crate::content`]) is never assembled in memory; the default joins
    /// them first (fine for in-memory and test filesystems).
    fn write_new_parts(&self, path: &str, parts: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        self.write_new(path, &parts.concat(), mode)
    }
    /// Make `link` (which must not exist) a second name of the file `original`.
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()>;
    /// Rename `from` to `to`, replacing a file at `to`.
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    /// Remove a file or symlink.
    fn remove_file(&self, path: &str) -> io::Result<()>;
    /// Create one directory (its parent must exist).
    fn create_dir(&self, path: &str) -> io::Result<()>;
    /// Remove an empty directory.
    fn remove_dir(&self, path: &str) -> io::Result<()>;
    /// fsync a directory, making renames inside it durable.
    fn sync_dir(&self, path: &str) -> io::Result<()>;
    /// [`Fs::read`] of a file no longer than `limit` bytes: a larger one is
    /// an error, refused before it is read (what the engine reads from its
    /// own private folder is bounded, whatever a clone put there).
    fn read_at_most(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        let bytes = self.read(path)?;
        if bytes.len() as u64 > limit {
            return Err(too_large(path, limit));
        }
        Ok(bytes)
    }
    /// The identity (device, inode) of what `path` names, without following
    /// a final symlink; `Ok(None)` where the filesystem has none (in-memory
    /// filesystems). Journals are sealed to their folder's identity
    /// ([`crate::seal`]).
    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        let _ = path;
        Ok(None)
    }
    /// The sealing context of this workspace ([`crate::seal`]): `None` when
    /// there is none, and then no journal is ever proven.
    fn seal(&self) -> Option<&crate::seal::Seal> {
        None
    }
    /// The patch store's hook on this workspace's commits, when a store
    /// records them ([`CommitRecorder`]).
    fn recorder(&self) -> Option<&dyn CommitRecorder> {
        None
    }
}

/// What a commit tells a patch store ([`crate::store`]) around its commit
/// point, so that the store's record and the workspace agree after a
/// crash at any moment (docs/clarifications.md, C-store-what). Attached to
/// a workspace by [`Recorded`]; `dispatch` attaches one when its
/// session has a store.
pub trait CommitRecorder: Send + Sync {
    /// After the journal is durable, before the first visible change:
    /// record that `transaction` may commit. An error refuses the commit,
    /// which then changes nothing.
    fn begin(&self, fs: &dyn Fs, transaction: &str) -> io::Result<()>;
}

fn too_large(path: &str, limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{path} is larger than {limit} bytes"),
    )
}

/// The real filesystem, confined beneath a held handle on the workspace root.
pub struct RealFs {
    root: Dir,
    root_path: PathBuf,
    /// The locked file (the root directory, or the fallback lock file) while
    /// this handle holds the lock (released on drop, and by the kernel when
    /// the process dies).
    lock: Option<cap_std::fs::File>,
    /// The journal seal of this workspace, when a key is at hand.
    seal: Option<crate::seal::Seal>,
    /// Shared locks on every folder above the root, held with the writer
    /// lock: a writer of an enclosing workspace takes its root exclusively,
    /// so the two exclude each other ([`RealFs::lock_ancestors`]).
    ancestors: Vec<std::fs::File>,
}

/// `flock(fd, LOCK_EX)`: `Some(true)` taken, `Some(false)` held elsewhere
/// (only without `wait`), `None` when this filesystem cannot lock this kind
/// of file (NFS emulates `flock` with write locks, which a directory cannot
/// take).
fn flock_exclusive(fd: std::os::fd::RawFd, wait: bool) -> io::Result<Option<bool>> {
    flock(fd, libc::LOCK_EX, wait)
}

/// `flock(fd, mode)` (`LOCK_EX` or `LOCK_SH`), answered as
/// [`flock_exclusive`] answers.
fn flock(fd: std::os::fd::RawFd, mode: libc::c_int, wait: bool) -> io::Result<Option<bool>> {
    let operation = if wait { mode } else { mode | libc::LOCK_NB };
    loop {
        // SAFETY: flock on a descriptor the caller owns; no memory is shared.
        let rc = unsafe { libc::flock(fd, operation) };
        if rc == 0 {
            return Ok(Some(true));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if !wait => return Ok(Some(false)),
            Some(libc::EBADF | libc::ENOLCK | libc::EOPNOTSUPP | libc::EINVAL) => return Ok(None),
            _ => return Err(e),
        }
    }
}

impl RealFs {
    /// Open a regular file for reading, with its size. O_NONBLOCK: opening a
    /// FIFO must not wait for a writer; the handle is then checked, so a
    /// FIFO, socket or device is refused unread.
    fn open_regular(&self, path: &str) -> io::Result<(cap_std::fs::File, usize)> {
        use cap_std::fs::OpenOptionsExt;
        let file = self.root.open_with(
            rel(path),
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC),
        )?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path} is not a regular file"),
            ));
        }
        Ok((file, usize::try_from(meta.len()).unwrap_or(0)))
    }

    /// Open the workspace at `root`, which must be an existing directory,
    /// with its journal seal ([`crate::seal::Seal::for_root`]; none when no
    /// key is at hand).
    pub fn open(root: &Path) -> io::Result<RealFs> {
        let dir = Dir::open_ambient_dir(root, ambient_authority())?;
        Ok(RealFs {
            root: dir,
            root_path: root.to_path_buf(),
            lock: None,
            seal: crate::seal::Seal::for_root(root).ok(),
            ancestors: Vec::new(),
        })
    }

    /// [`RealFs::open`] without a seal: every journal of this workspace is
    /// then foreign to it (what an engine without the key sees). A test's
    /// seam.
    #[cfg(any(test, feature = "testing"))]
    pub fn open_unsealed(root: &Path) -> io::Result<RealFs> {
        let mut fs = RealFs::open(root)?;
        fs.seal = None;
        Ok(fs)
    }

    /// Take the exclusive advisory lock of this workspace on the root
    /// directory itself (`flock` on this handle's own descriptor of it: no
    /// file is created for it) and keep it until this handle is dropped or
    /// [`RealFs::unlock`]ed. With `wait`, block until it is free; without,
    /// `Some(false)` when another open handle holds it. `None` when the
    /// filesystem cannot lock a directory: use [`RealFs::lock`] on a file.
    pub fn lock_root(&mut self, wait: bool) -> io::Result<Option<bool>> {
        use cap_std::fs::OpenOptionsExt;
        use std::os::fd::AsRawFd;
        if self.holds_lock() {
            return Ok(Some(true));
        }
        // A descriptor of its own (the held root handle may be O_PATH,
        // which flock refuses), so the lock is this handle's alone.
        let dir = self.root.open_with(
            ".",
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC),
        )?;
        let taken = flock_exclusive(dir.as_raw_fd(), wait)?;
        if taken == Some(true) {
            self.lock = Some(dir);
        }
        Ok(taken)
    }

    /// The fallback: take the exclusive advisory lock as an `flock` on the
    /// file `lock_path` (created when absent, never through a symlink; its
    /// folder must exist), kept until this handle is dropped. With `wait`,
    /// block until it is free; without, return `Ok(false)` when another open
    /// file holds it. Taking it twice through one handle is a no-op.
    pub fn lock(&mut self, lock_path: &str, wait: bool) -> io::Result<bool> {
        use cap_std::fs::OpenOptionsExt;
        use std::os::fd::AsRawFd;
        if self.holds_lock() {
            return Ok(true);
        }
        let file = self.root.open_with(
            lock_path,
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC),
        )?;
        if !file.metadata()?.is_file() {
            return Err(io::Error::other(format!(
                "{lock_path} is not a regular file"
            )));
        }
        match flock_exclusive(file.as_raw_fd(), wait)? {
            Some(true) => {
                self.lock = Some(file);
                Ok(true)
            }
            Some(false) => Ok(false),
            None => Err(io::Error::other(format!(
                "{lock_path}: this filesystem cannot lock files"
            ))),
        }
    }

    /// Take a shared `flock` on every folder above the root (by its real
    /// path), outermost first, waiting for each, and keep them with the
    /// writer lock. Taken before the root's own exclusive lock, always in
    /// that order, so writers of nested roots cannot deadlock: a writer at
    /// `ws` holds `ws` exclusively, and one at `ws/sub` must take `ws`
    /// shared first, so they run one after the other, while writers of
    /// sibling roots share their common ancestors. A folder that cannot be
    /// opened or locked (no read permission; NFS) is passed over. Without
    /// `wait`, `Ok(false)` (and nothing held) when a writer of an enclosing
    /// root holds one of them.
    pub fn lock_ancestors(&mut self, wait: bool) -> io::Result<bool> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        if !self.ancestors.is_empty() {
            return Ok(true);
        }
        let real = std::fs::canonicalize(&self.root_path)?;
        let mut above: Vec<&Path> = real.ancestors().skip(1).collect();
        above.reverse();
        for folder in above {
            let Ok(dir) = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(folder)
            else {
                continue;
            };
            match flock(dir.as_raw_fd(), libc::LOCK_SH, wait)? {
                Some(true) => self.ancestors.push(dir),
                Some(false) => {
                    self.ancestors.clear();
                    return Ok(false);
                }
                None => {}
            }
        }
        Ok(true)
    }

    /// Release the workspace lock (and the ancestors' shared locks), if
    /// held. A test's seam: dropping the handle releases them.
    #[cfg(any(test, feature = "testing"))]
    pub fn unlock(&mut self) {
        self.lock = None;
        self.ancestors.clear();
    }

    /// True while this handle holds the workspace lock.
    pub fn holds_lock(&self) -> bool {
        self.lock.is_some()
    }

    /// The path this workspace was opened at.
    pub fn root_path(&self) -> &Path {
        &self.root_path
    }

    /// Create `path`, which must not exist, with `mode` when given.
    fn create_new(&self, path: &str, mode: Option<u32>) -> io::Result<cap_std::fs::File> {
        let file = self
            .root
            .open_with(path, OpenOptions::new().write(true).create_new(true))?;
        if let Some(mode) = mode {
            use std::os::unix::fs::PermissionsExt;
            let perms = std::fs::Permissions::from_mode(mode);
            file.set_permissions(cap_std::fs::Permissions::from_std(perms))?;
        }
        Ok(file)
    }
}

/// Write every part, in order, with as few `writev` calls as the kernel
/// allows (std caps each call at `IOV_MAX` slices); a short write resumes
/// where it stopped.
fn write_all_parts(out: &mut impl Write, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<io::IoSlice<'_>> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| io::IoSlice::new(p))
        .collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match out.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn rel(path: &str) -> &str {
    if path.is_empty() {
        "."
    } else {
        path
    }
}

impl Fs for RealFs {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let (mut file, size) = self.open_regular(path)?;
        let mut bytes = Vec::with_capacity(size);
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn read_hashed(&self, path: &str) -> io::Result<(Vec<u8>, String)> {
        let (mut file, size) = self.open_regular(path)?;
        crate::hash::read_to_end_hashed(&mut file, size)
    }

    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        match self.root.symlink_metadata(rel(path)) {
            Ok(meta) => Ok(Some(EntryKind::of(meta.file_type()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            // ENOTDIR: a parent component is a file; ENAMETOOLONG: no entry
            // can have this name. Either way nothing exists here.
            Err(e) if e.raw_os_error() == Some(libc_enotdir()) => Ok(None),
            Err(e) if e.raw_os_error() == Some(ENAMETOOLONG) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        self.root.read_link_contents(rel(path))
    }

    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        let mut out = Vec::new();
        for entry in self.root.read_dir(rel(path))? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                // Names that are not UTF-8 cannot be named by any tool call.
                continue;
            };
            out.push((name, EntryKind::of(entry.file_type()?)));
        }
        out.sort();
        Ok(out)
    }

    fn mode(&self, path: &str) -> io::Result<u32> {
        use cap_std::fs::PermissionsExt;
        Ok(self.root.metadata(rel(path))?.permissions().mode())
    }

    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        let mut file = self.create_new(path, mode)?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    fn write_new_parts(&self, path: &str, parts: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        let mut file = self.create_new(path, mode)?;
        write_all_parts(&mut file, parts)?;
        file.sync_all()
    }

    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.root.hard_link(original, &self.root, link)
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.root.rename(from, &self.root, to)
    }

    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.root.remove_file(path)
    }

    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.root.create_dir(path)
    }

    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.root.remove_dir(path)
    }

    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.root.open(rel(path))?.sync_all()
    }

    fn read_at_most(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let (file, size) = self.open_regular(path)?;
        if size as u64 > limit {
            return Err(too_large(path, limit));
        }
        let mut bytes = Vec::with_capacity(size);
        // One byte past the limit tells a file that grew meanwhile.
        file.take(limit + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > limit {
            return Err(too_large(path, limit));
        }
        Ok(bytes)
    }

    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        use cap_std::fs::MetadataExt;
        let meta = self.root.symlink_metadata(rel(path))?;
        Ok(Some((meta.dev(), meta.ino())))
    }

    fn seal(&self) -> Option<&crate::seal::Seal> {
        self.seal.as_ref()
    }
}

/// ENAMETOOLONG on Linux (the BSDs and macOS use 63; there a too-long name
/// surfaces as an I/O error instead, which is only less precise).
const ENAMETOOLONG: i32 = 36;

fn libc_enotdir() -> i32 {
    // ENOTDIR is 20 on every Unix this engine targets (Linux, macOS, BSDs).
    20
}

/// A borrowed filesystem is one too: a test hands a tool (which takes a
/// `Box<dyn Fs>`) a `FaultFs` it keeps, as `Box::new(&fault_fs)`.
impl<T: Fs + ?Sized> Fs for &T {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        (**self).read(path)
    }
    fn read_hashed(&self, path: &str) -> io::Result<(Vec<u8>, String)> {
        (**self).read_hashed(path)
    }
    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        (**self).kind(path)
    }
    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        (**self).read_link(path)
    }
    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        (**self).list_dir(path)
    }
    fn mode(&self, path: &str) -> io::Result<u32> {
        (**self).mode(path)
    }
    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        (**self).write_new(path, bytes, mode)
    }
    fn write_new_parts(&self, path: &str, parts: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        (**self).write_new_parts(path, parts, mode)
    }
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        (**self).hard_link(original, link)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        (**self).rename(from, to)
    }
    fn remove_file(&self, path: &str) -> io::Result<()> {
        (**self).remove_file(path)
    }
    fn create_dir(&self, path: &str) -> io::Result<()> {
        (**self).create_dir(path)
    }
    fn remove_dir(&self, path: &str) -> io::Result<()> {
        (**self).remove_dir(path)
    }
    fn sync_dir(&self, path: &str) -> io::Result<()> {
        (**self).sync_dir(path)
    }
    fn read_at_most(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        (**self).read_at_most(path, limit)
    }
    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        (**self).identity(path)
    }
    fn seal(&self) -> Option<&crate::seal::Seal> {
        (**self).seal()
    }
    fn recorder(&self) -> Option<&dyn CommitRecorder> {
        (**self).recorder()
    }
}

/// A folder of a workspace seen as a workspace of its own: every path is
/// taken relative to `prefix`, and the seal is that of the nested root
/// ([`crate::seal::Seal::nested`]). A writer uses it to recover the journal
/// of a nested workspace it is about to write into ([`crate::workspace`]).
pub struct Subtree<'a> {
    inner: &'a dyn Fs,
    prefix: String,
    seal: Option<crate::seal::Seal>,
}

impl<'a> Subtree<'a> {
    /// The folder `prefix` (workspace-relative, not empty) of `inner`.
    pub fn new(inner: &'a dyn Fs, prefix: &str) -> Subtree<'a> {
        Subtree {
            inner,
            prefix: prefix.to_string(),
            seal: inner.seal().map(|s| s.nested(prefix)),
        }
    }

    fn at(&self, path: &str) -> String {
        if path.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}/{path}", self.prefix)
        }
    }
}

impl Fs for Subtree<'_> {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.inner.read(&self.at(path))
    }
    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        self.inner.kind(&self.at(path))
    }
    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        self.inner.read_link(&self.at(path))
    }
    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        self.inner.list_dir(&self.at(path))
    }
    fn mode(&self, path: &str) -> io::Result<u32> {
        self.inner.mode(&self.at(path))
    }
    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.inner.write_new(&self.at(path), bytes, mode)
    }
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.inner.hard_link(&self.at(original), &self.at(link))
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.inner.rename(&self.at(from), &self.at(to))
    }
    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.inner.remove_file(&self.at(path))
    }
    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.inner.create_dir(&self.at(path))
    }
    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.inner.remove_dir(&self.at(path))
    }
    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.inner.sync_dir(&self.at(path))
    }
    fn read_at_most(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        self.inner.read_at_most(&self.at(path), limit)
    }
    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        self.inner.identity(&self.at(path))
    }
    fn seal(&self) -> Option<&crate::seal::Seal> {
        self.seal.as_ref()
    }
}

/// A workspace whose commits a patch store hears of
/// ([`CommitRecorder`]): every operation goes to `inner`.
pub struct Recorded<'a> {
    inner: Box<dyn Fs + 'a>,
    recorder: std::sync::Arc<dyn CommitRecorder + 'a>,
}

impl<'a> Recorded<'a> {
    /// `inner`, its commits told to `recorder`.
    pub fn new(
        inner: Box<dyn Fs + 'a>,
        recorder: std::sync::Arc<dyn CommitRecorder + 'a>,
    ) -> Recorded<'a> {
        Recorded { inner, recorder }
    }
}

impl Fs for Recorded<'_> {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn read_hashed(&self, path: &str) -> io::Result<(Vec<u8>, String)> {
        self.inner.read_hashed(path)
    }
    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        self.inner.kind(path)
    }
    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        self.inner.read_link(path)
    }
    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        self.inner.list_dir(path)
    }
    fn mode(&self, path: &str) -> io::Result<u32> {
        self.inner.mode(path)
    }
    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.inner.write_new(path, bytes, mode)
    }
    fn write_new_parts(&self, path: &str, parts: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        self.inner.write_new_parts(path, parts, mode)
    }
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.inner.hard_link(original, link)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.inner.create_dir(path)
    }
    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.inner.remove_dir(path)
    }
    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn read_at_most(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        self.inner.read_at_most(path, limit)
    }
    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        self.inner.identity(path)
    }
    fn seal(&self) -> Option<&crate::seal::Seal> {
        self.inner.seal()
    }
    fn recorder(&self) -> Option<&dyn CommitRecorder> {
        Some(self.recorder.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_fs_refuses_a_symlink_that_leads_out() {
        let ws = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", ws.path().join("out")).unwrap();
        let fs = RealFs::open(ws.path()).unwrap();
        assert!(fs.read("out/hostname").is_err());
        assert_eq!(fs.kind("out").unwrap(), Some(EntryKind::Symlink));
    }

    /// A writer that takes at most 3 bytes a call, and fails every 5th
    /// call with `Interrupted`: the short-write and retry paths.
    struct Trickle {
        out: Vec<u8>,
        calls: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[io::IoSlice::new(buf)])
        }
        fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(5) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(3 - n);
                self.out.extend_from_slice(&b[..take]);
                n += take;
                if n == 3 {
                    break;
                }
            }
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn parts_survive_short_and_interrupted_writes() {
        let parts: Vec<&[u8]> = vec![b"ab", b"", b"cdefg", b"h", b"", b"ijklmnop"];
        let mut out = Trickle {
            out: Vec::new(),
            calls: 0,
        };
        write_all_parts(&mut out, &parts).unwrap();
        assert_eq!(out.out, b"abcdefghijklmnop");
    }

    #[test]
    fn more_parts_than_one_writev_takes_are_all_written() {
        // Linux's IOV_MAX is 1024: 5,000 parts need several calls.
        let ws = tempfile::tempdir().unwrap();
        let fs = RealFs::open(ws.path()).unwrap();
        let numbers: Vec<String> = (0..5000).map(|i| format!("{i}\n")).collect();
        let parts: Vec<&[u8]> = numbers.iter().map(|n| n.as_bytes()).collect();
        fs.write_new_parts("many", &parts, Some(0o640)).unwrap();
        assert_eq!(fs.read("many").unwrap(), numbers.concat().into_bytes());
        assert_eq!(fs.mode("many").unwrap() & 0o777, 0o640);
        assert!(fs.write_new_parts("many", &[b"x"], None).is_err());
        assert_eq!(fs.read("many").unwrap(), numbers.concat().into_bytes());
    }

    #[test]
    fn write_new_refuses_an_existing_file() {
        let ws = tempfile::tempdir().unwrap();
        let fs = RealFs::open(ws.path()).unwrap();
        fs.write_new("a", b"1", None).unwrap();
        assert!(fs.write_new("a", b"2", None).is_err());
        assert_eq!(fs.read("a").unwrap(), b"1");
    }

    #[test]
    fn kind_of_a_path_below_a_file_is_absent() {
        let ws = tempfile::tempdir().unwrap();
        let fs = RealFs::open(ws.path()).unwrap();
        fs.write_new("a", b"1", None).unwrap();
        assert_eq!(fs.kind("a/b").unwrap(), None);
        assert_eq!(fs.kind("").unwrap(), Some(EntryKind::Dir));
    }

    #[test]
    fn fault_fs_fails_exactly_the_chosen_step() {
        let ws = tempfile::tempdir().unwrap();
        let real = RealFs::open(ws.path()).unwrap();
        let fs = FaultFs::new(&real, FsOp::is_mutation, Some(1));
        fs.write_new("a", b"1", None).unwrap();
        assert!(fs.write_new("b", b"2", None).is_err());
        fs.write_new("c", b"3", None).unwrap();
        assert_eq!(fs.count(), 3);
        assert_eq!(real.kind("b").unwrap(), None);
    }

    #[test]
    fn the_lock_is_exclusive_until_its_holder_drops() {
        let ws = tempfile::tempdir().unwrap();
        let mut first = RealFs::open(ws.path()).unwrap();
        let mut second = RealFs::open(ws.path()).unwrap();
        assert!(first.lock("lock", true).unwrap());
        assert!(
            first.lock("lock", true).unwrap(),
            "taking it twice is a no-op"
        );
        assert!(
            !second.lock("lock", false).unwrap(),
            "held by the first handle"
        );
        drop(first);
        assert!(second.lock("lock", false).unwrap());
        assert!(second.holds_lock());
        second.unlock();
        assert!(!second.holds_lock());
    }

    #[test]
    fn the_root_lock_is_exclusive_until_its_holder_drops() {
        let ws = tempfile::tempdir().unwrap();
        let mut first = RealFs::open(ws.path()).unwrap();
        let mut second = RealFs::open(ws.path()).unwrap();
        assert_eq!(first.lock_root(true).unwrap(), Some(true));
        assert_eq!(second.lock_root(false).unwrap(), Some(false));
        first.unlock();
        assert_eq!(second.lock_root(false).unwrap(), Some(true));
        assert_eq!(first.lock_root(false).unwrap(), Some(false));
        drop(second);
        assert_eq!(first.lock_root(false).unwrap(), Some(true));
        assert_eq!(
            std::fs::read_dir(ws.path()).unwrap().count(),
            0,
            "no file made"
        );
    }

    #[test]
    fn the_lock_file_is_never_followed_through_a_symlink() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("target"), "keep").unwrap();
        std::os::unix::fs::symlink("target", ws.path().join("lock")).unwrap();
        let mut fs = RealFs::open(ws.path()).unwrap();
        assert!(fs.lock("lock", false).is_err());
    }
}
