//! patchspec-snapshot: the one tree-snapshot walker of patchspec. The
//! runner judges every case's workspace with it (`patchspec-conformance`'s
//! `workspace.rs`), and the integration tests of the engine and the runner
//! compare trees before and after a call with it ([`flat`]).
//!
//! A snapshot ([`Tree`]) maps each relative path (with `/`) to an
//! [`Entry`]: a regular file's bytes and permission bits, a directory, a
//! symlink's target as stored (never followed), anything else. It streams
//! each regular file in 64 KiB chunks, keeping the bytes of a file of at
//! most [`SMALL_FILE_BYTES`] and only the length and SHA-256 of a bigger one
//! ([`Entry::Large`]); it stops with an error once the files of one tree
//! pass its byte limit ([`DEFAULT_WORKSPACE_LIMIT`]) or the tree passes
//! [`MAX_ENTRIES`] entries. Memory is O(limit) whatever is on disk, and a
//! file past the limit is judged by its size alone, never read. A root that
//! was replaced with a symlink is reported, never followed
//! ([`ensure_real_dir`]). Tests take every byte with no limit
//! ([`Budget::unlimited`]).
//!
//! Its own crate, with no patchspec dependency, so the runner, the engine's
//! tests (a dev-dependency) and the fuzz oracles can all share it without a
//! cycle.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

/// A regular file larger than this is snapshotted as its length and
/// SHA-256 ([`Entry::Large`]), read in chunks; up to it, its bytes are kept
/// so a difference can be shown.
pub const SMALL_FILE_BYTES: u64 = 64 * 1024;

/// The default per-case limit on the bytes of the files in one snapshot (a
/// workspace, or the rest of a case directory): 256 MiB, far above any
/// corpus case; past it the case fails with the reason.
pub const DEFAULT_WORKSPACE_LIMIT: u64 = 256 * 1024 * 1024;

/// The most entries (files, directories, links) in one snapshot.
pub const MAX_ENTRIES: usize = 100_000;

/// One entry of a tree snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A regular file: its bytes, and its permission bits (`None` in an
    /// expected tree: not compared).
    File(Vec<u8>, Option<u32>),
    /// A regular file bigger than [`SMALL_FILE_BYTES`]: its length, the
    /// SHA-256 of its bytes and its permission bits, as for `File`.
    Large {
        /// Length in bytes.
        len: u64,
        /// SHA-256 of the bytes.
        sha256: [u8; 32],
        /// Permission bits (`None`: not compared).
        mode: Option<u32>,
    },
    /// A directory.
    Dir,
    /// A symbolic link and its target, as stored.
    Symlink(String),
    /// Anything else (fifo, socket, device).
    Other,
}

impl Entry {
    /// `file`, `directory`, `symlink` or `special file`.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::File(..) | Entry::Large { .. } => "file",
            Entry::Dir => "directory",
            Entry::Symlink(_) => "symlink",
            Entry::Other => "special file",
        }
    }

    /// A regular file of `bytes` as a snapshot gives one bigger than it
    /// keeps: its length and SHA-256 ([`Entry::Large`]). The runner compares
    /// an expected tree's big file with a snapshot's in this form, so the
    /// digest of a big file is made in this crate alone.
    pub fn large(bytes: &[u8], mode: Option<u32>) -> Entry {
        Entry::Large {
            len: bytes.len() as u64,
            sha256: Sha256::digest(bytes).into(),
            mode,
        }
    }
}

/// A snapshot: relative path (with `/`) → entry; directories included.
pub type Tree = BTreeMap<String, Entry>;

/// What one snapshot may still read: bytes of files and entries, and up
/// to what size a file's bytes are kept.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    bytes_left: u64,
    entries_left: usize,
    keep_bytes_up_to: u64,
}

impl Budget {
    /// The runner's budget: `limit` bytes of files, [`MAX_ENTRIES`]
    /// entries, the bytes of files up to [`SMALL_FILE_BYTES`] kept.
    pub fn new(limit: u64) -> Budget {
        Budget {
            limit,
            bytes_left: limit,
            entries_left: MAX_ENTRIES,
            keep_bytes_up_to: SMALL_FILE_BYTES,
        }
    }

    /// No limit, every file's bytes kept (never [`Entry::Large`]): for
    /// tests, on trees they made.
    pub fn unlimited() -> Budget {
        Budget {
            limit: u64::MAX,
            bytes_left: u64::MAX,
            entries_left: usize::MAX,
            keep_bytes_up_to: u64::MAX,
        }
    }

    fn entry(&mut self, rel: &str) -> io::Result<()> {
        if self.entries_left == 0 {
            return Err(io::Error::other(format!(
                "more than {MAX_ENTRIES} files and directories were left (at {rel}): over the runner's per-case limit, so the rest was not read"
            )));
        }
        self.entries_left -= 1;
        Ok(())
    }

    fn bytes(&mut self, rel: &str, n: u64) -> io::Result<()> {
        if n > self.bytes_left {
            return Err(io::Error::other(format!(
                "the files left hold more than the per-case limit of {} bytes ({rel} alone is at least {n} bytes); the runner did not read past it",
                self.limit
            )));
        }
        self.bytes_left -= n;
        Ok(())
    }
}

/// Fail unless `dir` is a directory itself, not a symlink to one: an
/// executor may replace its workspace or case directory with a link to
/// anywhere, and the runner must not walk, chmod or delete through it.
pub fn ensure_real_dir(dir: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(dir).unwrap_or_default();
        return Err(io::Error::other(format!(
            "{} was replaced by a symlink to {}; the runner does not follow it",
            dir.display(),
            target.display()
        )));
    }
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} was replaced by a {}",
            dir.display(),
            if meta.is_file() {
                "file"
            } else {
                "special file"
            }
        )));
    }
    Ok(())
}

/// Snapshot a directory (not following symlinks), within the default
/// per-case limit.
pub fn snapshot(root: &Path) -> io::Result<Tree> {
    snapshot_within(root, DEFAULT_WORKSPACE_LIMIT, None)
}

/// Snapshot a directory within `limit` bytes of files, leaving out the
/// top-level entry named `skip`.
pub fn snapshot_within(root: &Path, limit: u64, skip: Option<&str>) -> io::Result<Tree> {
    snapshot_with(root, Budget::new(limit), skip)
}

/// Snapshot a directory within `budget`, leaving out the top-level entry
/// named `skip`.
pub fn snapshot_with(root: &Path, mut budget: Budget, skip: Option<&str>) -> io::Result<Tree> {
    ensure_real_dir(root)?;
    let mut tree = Tree::new();
    walk(root, "", &mut tree, &mut budget, skip)?;
    Ok(tree)
}

fn walk(
    dir: &Path,
    prefix: &str,
    tree: &mut Tree,
    budget: &mut Budget,
    skip: Option<&str>,
) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if prefix.is_empty() && skip == Some(name.as_str()) {
            continue;
        }
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        walk_one(&entry, &rel, tree, budget)?;
    }
    Ok(())
}

/// Read a regular file in chunks, within `budget`: its bytes if it has at
/// most the budget keeps ([`SMALL_FILE_BYTES`] for the runner), else its
/// length and SHA-256. Opened without
/// following a symlink (the executor may have swapped one in since it was
/// listed) and without blocking (nor on a FIFO swapped in).
fn read_file_entry(path: &Path, rel: &str, mode: u32, budget: &mut Budget) -> io::Result<Entry> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    // The size alone may already be past the limit (a sparse file costs
    // nothing to make): refuse before reading a byte.
    let size = file.metadata()?.len();
    budget.bytes(rel, size)?;
    let mut kept = Vec::new();
    let mut hasher: Option<Sha256> = None;
    let mut len = 0u64;
    // No bigger than the file (and one byte to see its end): a zeroed 64 KiB
    // buffer per small file was a tenth of `patchspec fuzz`'s own time.
    let mut buf =
        vec![0u8; usize::try_from(size).map_or(64 * 1024, |n| n.saturating_add(1).min(64 * 1024))];
    let mut reader = file;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // A file still growing is held to what is left of the same limit:
        // the bytes past its size are charged as they arrive.
        let past_size = (len + n as u64).saturating_sub(size.max(len));
        len += n as u64;
        if past_size > 0 && budget.bytes_left < past_size {
            return Err(io::Error::other(format!(
                "{rel} grew past the per-case limit of {} bytes while it was read",
                budget.limit
            )));
        }
        budget.bytes_left -= past_size;
        match &mut hasher {
            Some(h) => h.update(&buf[..n]),
            None if len > budget.keep_bytes_up_to => {
                let mut h = Sha256::new();
                h.update(&kept);
                h.update(&buf[..n]);
                kept = Vec::new();
                hasher = Some(h);
            }
            None => kept.extend_from_slice(&buf[..n]),
        }
    }
    Ok(match hasher {
        Some(h) => Entry::Large {
            len,
            sha256: h.finalize().into(),
            mode: Some(mode),
        },
        None => Entry::File(kept, Some(mode)),
    })
}

/// Snapshot one directory entry (and everything below it) into `tree` as `rel`.
pub fn walk_one(
    entry: &std::fs::DirEntry,
    rel: &str,
    tree: &mut Tree,
    budget: &mut Budget,
) -> io::Result<()> {
    budget.entry(rel)?;
    let path = entry.path();
    let kind = entry.file_type()?;
    if kind.is_symlink() {
        let target = std::fs::read_link(&path)?;
        tree.insert(
            rel.to_owned(),
            Entry::Symlink(target.to_string_lossy().into_owned()),
        );
    } else if kind.is_dir() {
        tree.insert(rel.to_owned(), Entry::Dir);
        walk(&path, rel, tree, budget, None)?;
    } else if kind.is_file() {
        use std::os::unix::fs::PermissionsExt;
        let mode = entry.metadata()?.permissions().mode() & 0o7777;
        let file = read_file_entry(&path, rel, mode, budget)?;
        tree.insert(rel.to_owned(), file);
    } else {
        tree.insert(rel.to_owned(), Entry::Other);
    }
    Ok(())
}

/// Every entry under `root` with every byte (no limit), as the tests
/// compare trees: a directory as `path/` (empty), a symlink as `path@`
/// (its target), anything else that is not a file as `path|` (empty), a
/// file as `path` (its bytes). The top-level entry named `skip` is left out
/// with everything below it (e.g. the engine's private `.patchspec`).
///
/// # Panics
///
/// When the tree cannot be read: tests read trees they made.
pub fn flat(root: &Path, skip: Option<&str>) -> BTreeMap<String, Vec<u8>> {
    let tree = snapshot_with(root, Budget::unlimited(), skip)
        .unwrap_or_else(|e| panic!("snapshot of {}: {e}", root.display()));
    tree.into_iter()
        .map(|(path, entry)| match entry {
            Entry::Dir => (format!("{path}/"), Vec::new()),
            Entry::Symlink(target) => (format!("{path}@"), target.into_bytes()),
            Entry::File(bytes, _) => (path, bytes),
            // Never made by an unlimited budget; kept apart all the same.
            Entry::Large { sha256, .. } => (format!("{path}#"), sha256.to_vec()),
            Entry::Other => (format!("{path}|"), Vec::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that holds more than its size said (one still growing; here
    /// a /proc file, whose size is 0) is charged to what is left of the
    /// snapshot's budget, not held to the whole limit again.
    #[test]
    fn bytes_past_a_files_size_are_charged_to_the_budget() {
        let path = Path::new("/proc/self/status");
        let mut roomy = Budget::new(1 << 20);
        let read = read_file_entry(path, "status", 0o644, &mut roomy).expect("read");
        let Entry::File(bytes, _) = read else {
            panic!("a small file is kept")
        };
        assert!(!bytes.is_empty());
        assert_eq!(roomy.bytes_left, (1 << 20) - bytes.len() as u64);
        let mut spent = Budget::new(1 << 20);
        spent.bytes_left = 16;
        let e = read_file_entry(path, "status", 0o644, &mut spent).expect_err("over");
        assert!(
            e.to_string().contains("grew past the per-case limit"),
            "{e}"
        );
    }

    /// A file past the kept size is snapshotted as [`Entry::large`] of
    /// its bytes, whatever the stretches it was read in.
    #[test]
    fn a_big_files_snapshot_is_its_large_entry() {
        let dir = tempfile::tempdir().expect("temp dir");
        let big: Vec<u8> = (0..3 * 64 * 1024 + 7).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("big.bin"), &big).expect("write");
        let mode = std::fs::metadata(dir.path().join("big.bin"))
            .expect("stat")
            .permissions();
        use std::os::unix::fs::PermissionsExt;
        let tree = snapshot(dir.path()).expect("snapshot");
        assert_eq!(
            tree.get("big.bin"),
            Some(&Entry::large(&big, Some(mode.mode() & 0o7777)))
        );
    }

    /// The flat form names every kind apart, skips the named top-level
    /// entry and keeps big files whole.
    #[test]
    fn flat_names_every_kind_and_skips_the_private_folder() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("d/e")).expect("mkdir");
        std::fs::create_dir(root.join(".private")).expect("mkdir");
        std::fs::write(root.join(".private/x"), "hidden").expect("write");
        let big = vec![b'x'; SMALL_FILE_BYTES as usize + 1];
        std::fs::write(root.join("d/big.bin"), &big).expect("write");
        std::os::unix::fs::symlink("../nowhere", root.join("link")).expect("symlink");
        let tree = flat(root, Some(".private"));
        let expected = BTreeMap::from([
            ("d/".to_owned(), Vec::new()),
            ("d/e/".to_owned(), Vec::new()),
            ("d/big.bin".to_owned(), big),
            ("link@".to_owned(), b"../nowhere".to_vec()),
        ]);
        assert_eq!(tree, expected);
    }
}
