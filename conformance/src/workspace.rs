//! Per-case workspaces: materialise `given`, snapshot the tree after the
//! call, and compare it with `expect.files`.
//!
//! Main types: [`CaseDir`] (a fresh temporary directory holding the
//! workspace and, beside it, a sentinel directory) and [`Tree`] (a snapshot:
//! path → [`Entry`]). Layout of a case directory:
//!
//! ```text
//! <tmp>/patchspec-XXXX/
//!   ws/                    the workspace (workspaceRoot, canonical path)
//!   outside/sentinel.txt   must be untouched after the call
//! ```
//!
//! Anything that changes in `<tmp>/patchspec-XXXX/` outside `ws/` (the
//! sentinel, or a new file next to `ws/`) means the executor wrote outside its
//! workspace. Cases about path safety can point symlinks at `../outside`.
//!
//! Comparison is exact: bytes of regular files, targets of symlinks, and the
//! set of directories (an empty directory is part of the tree). Permission
//! bits of a file are compared where the expected tree has them: a file entry
//! that declares a `mode`, and every file of a tree expected `"unchanged"`
//! (the snapshot before the call). Paths the executor declares private
//! (globs, e.g. `.patchspec`) are left out together with everything below
//! them. Stray temporary files (`*.apply-patch.tmp`) are ordinary extra files.
//! What it leaves out: owners and timestamps.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::case::{Content, Expect, ExpectFiles, Given};

/// The content of the sentinel file.
pub const SENTINEL_TEXT: &str =
    "patchspec sentinel: an executor must never change this file or this directory\n";

/// One entry of a tree snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A regular file: its bytes, and its permission bits (`None` in an
    /// expected tree: not compared).
    File(Vec<u8>, Option<u32>),
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
            Entry::File(..) => "file",
            Entry::Dir => "directory",
            Entry::Symlink(_) => "symlink",
            Entry::Other => "special file",
        }
    }
}

/// A snapshot: relative path (with `/`) → entry; directories included.
pub type Tree = BTreeMap<String, Entry>;

/// How a tree differs from the expected one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeDiff {
    /// Expected but not there.
    pub missing: Vec<(String, Entry)>,
    /// There but not expected.
    pub extra: Vec<(String, Entry)>,
    /// There with other content or of another kind: (path, expected, actual).
    pub changed: Vec<(String, Entry, Entry)>,
}

impl TreeDiff {
    /// No difference at all?
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.changed.is_empty()
    }
}

/// Compare two trees. A file's mode is compared only when the expected
/// entry has one; when it has none, the actual mode is left out of the
/// reported difference too.
pub fn diff(expected: &Tree, actual: &Tree) -> TreeDiff {
    let mut d = TreeDiff::default();
    for (path, want) in expected {
        let Some(got) = actual.get(path) else {
            d.missing.push((path.clone(), want.clone()));
            continue;
        };
        let got = match (want, got) {
            (Entry::File(_, None), Entry::File(bytes, Some(_))) => Entry::File(bytes.clone(), None),
            _ => got.clone(),
        };
        if &got != want {
            d.changed.push((path.clone(), want.clone(), got));
        }
    }
    for (path, got) in actual {
        if !expected.contains_key(path) {
            d.extra.push((path.clone(), got.clone()));
        }
    }
    d
}

/// Globs of implementation-private paths, matched against the path and each
/// of its ancestors (so `.patchspec` hides `.patchspec/trash/1/a.txt`).
#[derive(Clone, Debug)]
pub struct PrivatePaths {
    set: GlobSet,
    globs: Vec<String>,
}

impl PrivatePaths {
    /// Build from globs (`*` does not cross `/`, `**` does).
    pub fn new(globs: &[String]) -> Result<PrivatePaths, String> {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let glob = GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("invalid private path glob {g:?}: {e}"))?;
            b.add(glob);
        }
        let set = b
            .build()
            .map_err(|e| format!("invalid private path globs: {e}"))?;
        Ok(PrivatePaths {
            set,
            globs: globs.to_vec(),
        })
    }

    /// The globs as given.
    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Is this path (or one of its ancestors) private?
    pub fn hides(&self, path: &str) -> bool {
        let ancestors = path
            .char_indices()
            .filter(|&(_, c)| c == '/')
            .map(|(i, _)| &path[..i]);
        ancestors
            .chain(std::iter::once(path))
            .any(|p| self.set.is_match(p))
    }

    /// The tree without private entries.
    pub fn filter(&self, tree: &Tree) -> Tree {
        tree.iter()
            .filter(|(p, _)| !self.hides(p))
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect()
    }
}

/// Snapshot a directory (not following symlinks).
pub fn snapshot(root: &Path) -> io::Result<Tree> {
    let mut tree = Tree::new();
    walk(root, "", &mut tree)?;
    Ok(tree)
}

fn walk(dir: &Path, prefix: &str, tree: &mut Tree) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&path)?;
            tree.insert(rel, Entry::Symlink(target.to_string_lossy().into_owned()));
        } else if kind.is_dir() {
            tree.insert(rel.clone(), Entry::Dir);
            walk(&path, &rel, tree)?;
        } else if kind.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let mode = entry.metadata()?.permissions().mode() & 0o7777;
            tree.insert(rel, Entry::File(std::fs::read(&path)?, Some(mode)));
        } else {
            tree.insert(rel, Entry::Other);
        }
    }
    Ok(())
}

/// Add every ancestor directory of every entry.
fn with_parents(mut tree: Tree) -> Tree {
    let paths: Vec<String> = tree.keys().cloned().collect();
    for p in paths {
        let mut at = p.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            tree.entry(parent.to_owned()).or_insert(Entry::Dir);
            at = parent;
        }
    }
    tree
}

/// The tree `given` declares.
pub fn given_tree(given: &Given) -> Tree {
    let mut tree = Tree::new();
    for (p, c) in &given.files {
        tree.insert(p.clone(), Entry::File(c.bytes(), c.mode()));
    }
    for d in &given.dirs {
        tree.insert(d.clone(), Entry::Dir);
    }
    for (p, t) in &given.symlinks {
        tree.insert(p.clone(), Entry::Symlink(t.clone()));
    }
    with_parents(tree)
}

/// The tree `expect` declares; `None` for `"unchanged"`.
pub fn expected_tree(expect: &Expect) -> Option<Tree> {
    match &expect.files {
        ExpectFiles::Unchanged(_) => None,
        ExpectFiles::Tree(files) => {
            let mut tree = Tree::new();
            for (p, c) in files {
                tree.insert(p.clone(), Entry::File(c.bytes(), c.mode()));
            }
            for d in &expect.dirs {
                tree.insert(d.clone(), Entry::Dir);
            }
            for (p, t) in &expect.symlinks {
                tree.insert(p.clone(), Entry::Symlink(t.clone()));
            }
            Some(with_parents(tree))
        }
    }
}

/// Write `given` into an existing, empty directory.
pub fn materialise(root: &Path, given: &Given) -> io::Result<()> {
    for d in &given.dirs {
        std::fs::create_dir_all(root.join(d))?;
    }
    for (p, c) in &given.files {
        let path = root.join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, c.bytes())?;
        if let Some(mode) = c.mode() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    for (p, t) in &given.symlinks {
        let path = root.join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::os::unix::fs::symlink(t, &path)?;
    }
    Ok(())
}

/// A fresh case directory: the workspace and its sentinel.
#[derive(Debug)]
pub struct CaseDir {
    temp: tempfile::TempDir,
    root: PathBuf,
    before: Tree,
    outside_before: Tree,
}

/// What the runner found after the call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct After {
    /// Differences against the expected tree (private paths left out).
    pub files: TreeDiff,
    /// Changes around the workspace (sentinel, siblings), with paths
    /// relative to the workspace (`../outside/sentinel.txt`): writes outside.
    pub outside: TreeDiff,
}

impl CaseDir {
    /// Create a temporary case directory and materialise `given` in it.
    pub fn new(given: &Given) -> io::Result<CaseDir> {
        let temp = tempfile::Builder::new().prefix("patchspec-").tempdir()?;
        let base = temp.path().canonicalize()?;
        let root = base.join("ws");
        std::fs::create_dir(&root)?;
        std::fs::create_dir(base.join("outside"))?;
        std::fs::write(base.join("outside").join("sentinel.txt"), SENTINEL_TEXT)?;
        materialise(&root, given)?;
        let before = snapshot(&root)?;
        let outside_before = Self::outside(&base)?;
        Ok(CaseDir {
            temp,
            root,
            before,
            outside_before,
        })
    }

    fn outside(base: &Path) -> io::Result<Tree> {
        let tree = snapshot(base)?;
        // Named relative to the workspace: `../outside/sentinel.txt`.
        Ok(tree
            .into_iter()
            .filter(|(p, _)| p != "ws" && !p.starts_with("ws/"))
            .map(|(p, e)| (format!("../{p}"), e))
            .collect())
    }

    /// The workspace root (absolute, canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The tree as materialised (before the call).
    pub fn before(&self) -> &Tree {
        &self.before
    }

    /// Snapshot and compare with the expectation (`None` = unchanged).
    pub fn check(&self, expected: Option<&Tree>, private: &PrivatePaths) -> io::Result<After> {
        let actual = private.filter(&snapshot(&self.root)?);
        let want = private.filter(expected.unwrap_or(&self.before));
        let outside_after = Self::outside(self.temp.path())?;
        Ok(After {
            files: diff(&want, &actual),
            outside: diff(&self.outside_before, &outside_after),
        })
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        // An executor may leave read-only directories behind; make them
        // writable so the temporary directory can be removed.
        fn unlock(dir: &Path) {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        let _ = std::fs::set_permissions(
                            e.path(),
                            std::fs::Permissions::from_mode(0o755),
                        );
                        unlock(&e.path());
                    }
                }
            }
        }
        unlock(self.temp.path());
    }
}

/// Content for an entry, for reports.
pub fn entry_content(entry: &Entry) -> Option<Content> {
    match entry {
        Entry::File(bytes, _) => Some(Content::from_bytes(bytes)),
        Entry::Dir | Entry::Symlink(_) | Entry::Other => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_paths_hide_descendants() {
        let p = PrivatePaths::new(&[".patchspec".into(), "**/*.log".into()]).expect("valid globs");
        assert!(p.hides(".patchspec"));
        assert!(p.hides(".patchspec/trash/1/a.txt"));
        assert!(p.hides("x/y.log"));
        assert!(!p.hides("a.patchspec"));
        assert!(!p.hides("src/.patchspec.txt"));
    }

    #[test]
    fn materialise_snapshot_round_trip_and_sentinel() {
        let given: Given = serde_json::from_value(serde_json::json!({
            "files": {"a.txt": "x\n", "d/b.bin": {"base64": "/wA="}},
            "dirs": ["empty"],
            "symlinks": {"link": "../outside"}
        }))
        .expect("a valid given");
        let dir = CaseDir::new(&given).expect("case dir");
        assert!(diff(&given_tree(&given), dir.before()).is_empty());
        let none = PrivatePaths::new(&[]).expect("no globs");
        assert!(dir.check(None, &none).expect("check").files.is_empty());
        std::fs::write(dir.root().join("link/evil.txt"), "x").expect("write through the link");
        std::fs::write(dir.root().join("a.apply-patch.tmp"), "").expect("stray temp");
        let after = dir.check(None, &none).expect("check");
        assert_eq!(after.outside.extra.len(), 1, "{after:?}");
        let extra: Vec<(&str, &str)> = after
            .files
            .extra
            .iter()
            .map(|(p, e)| (p.as_str(), e.kind()))
            .collect();
        assert_eq!(extra, vec![("a.apply-patch.tmp", "file")]);
    }

    #[test]
    fn modes_are_materialised_and_compared_where_declared() {
        use std::os::unix::fs::PermissionsExt;
        let given: Given = serde_json::from_value(serde_json::json!({
            "files": {"run.sh": {"text": "#!/bin/sh\n", "mode": "755"}, "a.txt": "x\n"}
        }))
        .expect("a valid given");
        let dir = CaseDir::new(&given).expect("case dir");
        let run = dir.root().join("run.sh");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&run), 0o755);
        let none = PrivatePaths::new(&[]).expect("no globs");
        let expect = |files: serde_json::Value| -> Tree {
            let e: Expect =
                serde_json::from_value(serde_json::json!({"result": {}, "files": files}))
                    .expect("a valid expect");
            expected_tree(&e).expect("a full tree")
        };
        let declared = expect(serde_json::json!({
            "run.sh": {"text": "#!/bin/sh\n", "mode": "755"}, "a.txt": "x\n"
        }));
        let undeclared = expect(serde_json::json!({"run.sh": "#!/bin/sh\n", "a.txt": "x\n"}));
        assert!(dir
            .check(Some(&declared), &none)
            .expect("check")
            .files
            .is_empty());
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let after = dir.check(Some(&declared), &none).expect("check");
        assert_eq!(after.files.changed.len(), 1, "{after:?}");
        assert_eq!(
            after.files.changed[0].2,
            Entry::File(b"#!/bin/sh\n".to_vec(), Some(0o644))
        );
        assert!(dir
            .check(Some(&undeclared), &none)
            .expect("check")
            .files
            .is_empty());
        let unchanged = dir.check(None, &none).expect("check");
        assert_eq!(
            unchanged.files.changed.len(),
            1,
            "\"unchanged\" includes modes"
        );
    }
}
