//! `MemFs`: an in-memory [`Fs`] so a fuzz execution costs microseconds, not
//! a temp directory and an fsync per file; and [`snapshot`], the byte-exact
//! view of any `Fs` tree that the "refusal changes nothing" and "no temp file
//! remains" oracles compare.
//!
//! Left out on purpose: symlinks (the oracles' model has none; `RealFs` runs
//! cover the real syscalls) and concurrency beyond a `Mutex`.

use std::collections::BTreeMap;
use std::io;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Mutex;

use patchspec_engine::fs::{EntryKind, Fs};
use patchspec_engine::layout::parent_of;

/// The permission bits a file gets when created without a mode.
pub const DEFAULT_FILE_MODE: u32 = 0o100644;
const DIR_MODE: u32 = 0o040755;

/// One entry of a tree (the generators' type: they build the trees the
/// oracles compare).
pub use patchspec_gen::tree::Node;

/// An in-memory workspace: path → node; `""` (the root) is implicit.
#[derive(Default)]
pub struct MemFs {
    nodes: Mutex<BTreeMap<String, Node>>,
}

fn err(kind: io::ErrorKind, what: &str, path: &str) -> io::Error {
    io::Error::new(kind, format!("memfs: {what}: {path}"))
}

impl MemFs {
    /// A workspace holding `files` (path, bytes, mode) and `dirs`; parent
    /// directories are created. `None` when the paths conflict (a file
    /// where a directory is needed, a path declared twice).
    pub fn with(files: &[(String, Vec<u8>, u32)], dirs: &[String]) -> Option<MemFs> {
        let mut nodes = BTreeMap::new();
        let mkdirs = |path: &str, nodes: &mut BTreeMap<String, Node>| -> Option<()> {
            let mut prefix = String::new();
            for part in path.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                match nodes.get(&prefix) {
                    Some(Node::Dir) => {}
                    Some(Node::File(..)) => return None,
                    None => {
                        nodes.insert(prefix.clone(), Node::Dir);
                    }
                }
            }
            Some(())
        };
        for d in dirs {
            if !valid_rel(d) {
                return None;
            }
            mkdirs(d, &mut nodes)?;
        }
        for (path, bytes, mode) in files {
            if !valid_rel(path) {
                return None;
            }
            let p = parent_of(path);
            if !p.is_empty() {
                mkdirs(p, &mut nodes)?;
            }
            if nodes.contains_key(path) {
                return None;
            }
            nodes.insert(path.clone(), Node::File(bytes.clone(), mode & 0o7777));
        }
        Some(MemFs {
            nodes: Mutex::new(nodes),
        })
    }

    /// What [`snapshot`] sees of this workspace, taken from the tree
    /// directly: one copy of it, not a walk through [`Fs`] that lists every
    /// folder and reads every file through the trait (the walk was a
    /// twentieth of an `envelope_apply` execution, twice per input, when
    /// listing a folder still scanned the whole tree).
    pub fn snapshot(&self) -> BTreeMap<String, Node> {
        self.with_nodes(|n| {
            n.iter()
                .filter(|(p, _)| !p.is_empty())
                .map(|(p, node)| {
                    let node = match node {
                        Node::File(bytes, mode) => Node::File(bytes.clone(), mode & 0o777),
                        Node::Dir => Node::Dir,
                    };
                    (p.clone(), node)
                })
                .collect()
        })
    }

    fn with_nodes<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Node>) -> T) -> T {
        let mut guard = match self.nodes.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}

/// A normalised relative path: non-empty `/`-separated names, no `.`/`..`.
pub fn valid_rel(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\0'))
}

fn is_dir(nodes: &BTreeMap<String, Node>, path: &str) -> bool {
    path.is_empty() || matches!(nodes.get(path), Some(Node::Dir))
}

/// The entries directly in the folder `dir` (`""`: the root), in path order.
///
/// A range of the map, not a scan of all of it: the paths below `dir/` sort
/// between `dir/` and `dir0` (`0` follows `/`), so listing every folder of a
/// wide tree costs about the tree's size, not the tree's size per folder.
/// The engine's similar-path hint lists up to 2,000 folders: on a seed of
/// 2,001 folders, an execution took 440 ms with the scan, most of it in the
/// fuzzer's tracing of the comparisons.
fn children<'a>(
    nodes: &'a BTreeMap<String, Node>,
    dir: &str,
) -> impl Iterator<Item = (&'a str, &'a Node)> + 'a {
    let (range, skip) = if dir.is_empty() {
        (nodes.range::<str, _>(..), 0)
    } else {
        let (start, end) = (format!("{dir}/"), format!("{dir}0"));
        let range = nodes.range::<str, _>((
            Bound::Included(start.as_str()),
            Bound::Excluded(end.as_str()),
        ));
        (range, start.len())
    };
    range.filter_map(move |(path, node)| {
        let name = &path[skip..];
        (!name.is_empty() && !name.contains('/')).then_some((name, node))
    })
}

/// The kind [`Fs::list_dir`] reports for a node.
fn entry_kind(node: &Node) -> EntryKind {
    match node {
        Node::File(..) => EntryKind::File,
        Node::Dir => EntryKind::Dir,
    }
}

impl Fs for MemFs {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.with_nodes(|n| match n.get(path) {
            Some(Node::File(b, _)) => Ok(b.clone()),
            Some(Node::Dir) => Err(err(io::ErrorKind::Other, "is a directory", path)),
            None if path.is_empty() => Err(err(io::ErrorKind::Other, "is a directory", path)),
            None => Err(err(io::ErrorKind::NotFound, "no such file", path)),
        })
    }

    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        self.with_nodes(|n| {
            if path.is_empty() {
                return Ok(Some(EntryKind::Dir));
            }
            Ok(n.get(path).map(entry_kind))
        })
    }

    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        Err(err(io::ErrorKind::InvalidInput, "not a symlink", path))
    }

    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        self.with_nodes(|n| {
            if !is_dir(n, path) {
                return Err(err(io::ErrorKind::NotFound, "not a directory", path));
            }
            // In name order: the children share their folder's prefix, so
            // the map's path order is their name order.
            Ok(children(n, path)
                .map(|(name, node)| (name.to_string(), entry_kind(node)))
                .collect())
        })
    }

    fn mode(&self, path: &str) -> io::Result<u32> {
        self.with_nodes(|n| match n.get(path) {
            Some(Node::File(_, m)) => Ok(0o100000 | m),
            Some(Node::Dir) => Ok(DIR_MODE),
            None if path.is_empty() => Ok(DIR_MODE),
            None => Err(err(io::ErrorKind::NotFound, "no such file", path)),
        })
    }

    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.with_nodes(|n| {
            if path.is_empty() || n.contains_key(path) {
                return Err(err(io::ErrorKind::AlreadyExists, "exists", path));
            }
            if !is_dir(n, parent_of(path)) {
                return Err(err(io::ErrorKind::NotFound, "no parent directory", path));
            }
            let mode = mode.unwrap_or(DEFAULT_FILE_MODE) & 0o7777;
            n.insert(path.to_string(), Node::File(bytes.to_vec(), mode));
            Ok(())
        })
    }

    /// A copy: the model has no inodes, and the engine never changes a file
    /// in place, so a second name and a copy cannot be told apart here.
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.with_nodes(|n| {
            let Some(node @ Node::File(..)) = n.get(original).cloned() else {
                return Err(err(
                    io::ErrorKind::NotFound,
                    "link source is not a file",
                    original,
                ));
            };
            if n.contains_key(link) {
                return Err(err(io::ErrorKind::AlreadyExists, "link exists", link));
            }
            if !is_dir(n, parent_of(link)) {
                return Err(err(io::ErrorKind::NotFound, "no parent directory", link));
            }
            n.insert(link.to_string(), node);
            Ok(())
        })
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.with_nodes(|n| {
            let Some(Node::File(..)) = n.get(from) else {
                return Err(err(
                    io::ErrorKind::NotFound,
                    "rename source is not a file",
                    from,
                ));
            };
            if to.is_empty() || matches!(n.get(to), Some(Node::Dir)) {
                return Err(err(io::ErrorKind::Other, "rename onto a directory", to));
            }
            if !is_dir(n, parent_of(to)) {
                return Err(err(io::ErrorKind::NotFound, "no parent directory", to));
            }
            if from == to {
                return Ok(());
            }
            let node = n.remove(from).expect("checked above: from is a file");
            n.insert(to.to_string(), node);
            Ok(())
        })
    }

    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.with_nodes(|n| match n.get(path) {
            Some(Node::File(..)) => {
                n.remove(path);
                Ok(())
            }
            Some(Node::Dir) => Err(err(io::ErrorKind::Other, "is a directory", path)),
            None => Err(err(io::ErrorKind::NotFound, "no such file", path)),
        })
    }

    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.with_nodes(|n| {
            if path.is_empty() || n.contains_key(path) {
                return Err(err(io::ErrorKind::AlreadyExists, "exists", path));
            }
            if !is_dir(n, parent_of(path)) {
                return Err(err(io::ErrorKind::NotFound, "no parent directory", path));
            }
            n.insert(path.to_string(), Node::Dir);
            Ok(())
        })
    }

    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.with_nodes(|n| {
            if !matches!(n.get(path), Some(Node::Dir)) {
                return Err(err(io::ErrorKind::NotFound, "not a directory", path));
            }
            if children(n, path).next().is_some() {
                return Err(err(io::ErrorKind::Other, "directory not empty", path));
            }
            n.remove(path);
            Ok(())
        })
    }

    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.with_nodes(|n| {
            if is_dir(n, path) {
                Ok(())
            } else {
                Err(err(io::ErrorKind::NotFound, "not a directory", path))
            }
        })
    }
}

/// Every entry below the root of `fs`, through the [`Fs`] trait only (so it
/// works for `MemFs` and `RealFs` alike). File modes keep their `0o777` bits.
pub fn snapshot(fs: &dyn Fs) -> BTreeMap<String, Node> {
    fn walk(fs: &dyn Fs, dir: &str, out: &mut BTreeMap<String, Node>) {
        let entries = fs.list_dir(dir).expect("snapshot: list a directory");
        for (name, kind) in entries {
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            match kind {
                EntryKind::Dir => {
                    out.insert(path.clone(), Node::Dir);
                    walk(fs, &path, out);
                }
                EntryKind::File => {
                    let bytes = fs.read(&path).expect("snapshot: read a file");
                    let mode = fs.mode(&path).expect("snapshot: mode of a file") & 0o777;
                    out.insert(path, Node::File(bytes, mode));
                }
                other => panic!("snapshot: unexpected {other:?} at {path}"),
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(fs, "", &mut out);
    out
}

/// Whether a path is the engine's private folder (`.patchspec/`, its
/// trash) or in it.
fn private(path: &str) -> bool {
    path == ".patchspec" || path.starts_with(".patchspec/")
}

/// The snapshot without the engine's private folder.
pub fn visible(tree: &BTreeMap<String, Node>) -> BTreeMap<String, Node> {
    tree.iter()
        .filter(|(p, _)| !private(p))
        .map(|(p, n)| (p.clone(), n.clone()))
        .collect()
}

/// `visible(a) == visible(b)`, without copying either tree.
pub fn same_visible(a: &BTreeMap<String, Node>, b: &BTreeMap<String, Node>) -> bool {
    let shown = |(p, _): &(&String, &Node)| !private(p);
    a.iter().filter(shown).eq(b.iter().filter(shown))
}

/// Paths of staged temp files (`*.apply-patch.tmp`) in `after` that were
/// not in `before` (a workspace may hold a file of that name to begin with).
pub fn temp_files(before: &BTreeMap<String, Node>, after: &BTreeMap<String, Node>) -> Vec<String> {
    after
        .keys()
        .filter(|p| p.ends_with(".apply-patch.tmp") && !before.contains_key(*p))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchspec_engine::layout::file_name_of;

    fn tree() -> MemFs {
        let files = [
            ("a.txt", &b"a\n"[..], 0o100644),
            ("src/lib.rs", b"fn x() {}\n", 0o100755),
            ("src/deep/er/z", b"", 0o104600),
            (".patchspec/trash/1", b"old", 0o100600),
        ];
        let files: Vec<(String, Vec<u8>, u32)> = files
            .iter()
            .map(|(p, b, m)| (p.to_string(), b.to_vec(), *m))
            .collect();
        MemFs::with(&files, &["empty/dir".to_string()]).expect("a valid tree")
    }

    /// The direct copy is the walk through `Fs`, entry for entry and mode
    /// for mode (the setuid bit above is cut by both).
    #[test]
    fn a_memfs_snapshot_is_the_walk() {
        let fs = tree();
        assert_eq!(fs.snapshot(), snapshot(&fs));
        assert!(fs.snapshot().len() > 5);
    }

    /// Each folder lists exactly the paths whose parent it is, among names
    /// that sort right before, at and after the `dir/` range (`a.b`, `a-`,
    /// `a0`, `a0z`, `ab`), and an empty folder can be removed, a full one not.
    #[test]
    fn a_folder_lists_its_children_only() {
        let files: Vec<(String, Vec<u8>, u32)> = [
            "a/b", "a/c/d", "a.b", "a-", "a0", "a0z", "ab/c", "d/a/b", "d/a.b", "d/a0z", "d/ab",
            "e/é/f",
        ]
        .iter()
        .map(|p| (p.to_string(), p.as_bytes().to_vec(), 0o100644))
        .collect();
        let fs = MemFs::with(&files, &["d/empty".to_string()]).expect("a valid tree");
        let tree = fs.snapshot();
        let folders = std::iter::once("").chain(
            tree.iter()
                .filter(|(_, n)| matches!(n, Node::Dir))
                .map(|(p, _)| p.as_str()),
        );
        for dir in folders {
            let mut scanned: Vec<(String, EntryKind)> = tree
                .iter()
                .filter(|(p, _)| parent_of(p) == dir)
                .map(|(p, node)| (file_name_of(p).to_string(), entry_kind(node)))
                .collect();
            scanned.sort();
            assert_eq!(
                fs.list_dir(dir).expect("a folder"),
                scanned,
                "folder {dir:?}"
            );
        }
        assert!(fs.remove_dir("d/a").is_err(), "d/a is not empty");
        fs.remove_dir("d/empty").expect("an empty folder");
        assert!(fs
            .list_dir("d")
            .expect("d")
            .iter()
            .all(|(n, _)| n != "empty"));
    }

    #[test]
    fn same_visible_ignores_the_private_folder_only() {
        let a = tree().snapshot();
        let mut b = a.clone();
        b.remove(".patchspec/trash/1");
        assert!(same_visible(&a, &b));
        assert_eq!(same_visible(&a, &b), visible(&a) == visible(&b));
        b.insert("a.txt".into(), Node::File(b"b\n".to_vec(), 0o644));
        assert!(!same_visible(&a, &b));
        b.insert("a.txt".into(), Node::File(b"a\n".to_vec(), 0o600));
        assert!(!same_visible(&a, &b));
    }
}
