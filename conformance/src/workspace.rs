//! Per-case workspaces: materialise `given`, snapshot the tree after the
//! call, compare it with `expect.files`, and watch everything around it.
//!
//! Main types: [`RunRoot`] (the per-run root every case directory lives in,
//! with its layout), [`CaseDir`] (one case's directory: the workspace, a
//! sentinel, the executor's TMPDIR and HOME) and [`Tree`] (a snapshot:
//! path → [`Entry`]).
//!
//! The outside check: anything that changes under the per-run root outside
//! the case's workspace — the sentinel, a new file next to the workspace, a
//! file left in the TMPDIR or HOME the runner gave the executor, a file
//! written at the root itself — means the executor wrote outside its
//! workspace. A case's own directory is compared around its call; the shared
//! part of the root around each call with `-j 1`, else once at the end of
//! the run (see [`RunRoot`]). What it cannot see: writes outside the per-run
//! root (an absolute path elsewhere, the runner's cwd, another TMPDIR), and
//! files created and removed again within the call. Cases about path safety
//! can point symlinks at `../outside`.
//!
//! Comparison is exact: bytes of regular files, targets of symlinks, and the
//! set of directories (an empty directory is part of the tree). Permission
//! bits of a file are compared where the expected tree has them: a file entry
//! that declares a `mode`, and every file of a tree expected `"unchanged"`
//! (the snapshot before the call). Paths the executor declares private
//! (globs, e.g. `.patchspec`) are left out together with everything below
//! them. Stray temporary files (`*.apply-patch.tmp`) are ordinary extra files.
//! What it leaves out: owners and timestamps.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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
        walk_one(&entry, &rel, tree)?;
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

/// The environment of an executor process: `TMPDIR` (also `TMP`, `TEMP`)
/// and `HOME`, both inside the per-run root so the outside check sees what
/// the executor leaves there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecEnv {
    /// `TMPDIR`, `TMP` and `TEMP`.
    pub tmp: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
}

impl ExecEnv {
    /// Set the variables on a command.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        for var in ["TMPDIR", "TMP", "TEMP"] {
            cmd.env(var, &self.tmp);
        }
        cmd.env("HOME", &self.home);
    }
}

/// The directory every case directory of one run lives in (the *per-run
/// root*), watched as a whole by the outside check. Layout:
///
/// ```text
/// <tmp>/patchspec-run-XXXX/        the per-run root
///   cases/<n>/ws/                  a case's workspace (workspaceRoot)
///   cases/<n>/outside/sentinel.txt must be untouched after the call
///   cases/<n>/tmp/  cases/<n>/home/  TMPDIR and HOME of a oneshot executor
///   exec/tmp/  exec/home/          TMPDIR and HOME of long-lived executors
///                                  (session processes, a started websocket plugin)
/// ```
///
/// A case's own directory minus its workspace is compared before and after
/// its call, whatever the parallelism. The *shared* part (the root minus
/// every case directory: `cases/` itself, `exec/`, the root's own entries)
/// is compared around each call only when calls do not overlap (`-j 1`);
/// otherwise once, at the end of the run ([`RunRoot::unattributed`]).
#[derive(Debug)]
pub struct RunRoot {
    temp: tempfile::TempDir,
    base: PathBuf,
    next: AtomicU64,
    /// Names under `cases/` the runner created (never removed: a name is
    /// never reused, and a walker may have listed it before it was deleted).
    created: Mutex<BTreeSet<String>>,
    /// The shared part when the root was made.
    start: Tree,
    /// Shared paths already blamed on a case.
    blamed: Mutex<BTreeSet<String>>,
}

impl RunRoot {
    /// A fresh per-run root in the system temporary directory.
    pub fn new() -> io::Result<RunRoot> {
        let temp = tempfile::Builder::new()
            .prefix("patchspec-run-")
            .tempdir()?;
        let base = temp.path().canonicalize()?;
        for d in ["cases", "exec/tmp", "exec/home"] {
            std::fs::create_dir_all(base.join(d))?;
        }
        let mut root = RunRoot {
            temp,
            base,
            next: AtomicU64::new(0),
            created: Mutex::new(BTreeSet::new()),
            start: Tree::new(),
            blamed: Mutex::new(BTreeSet::new()),
        };
        root.start = root.shared()?;
        Ok(root)
    }

    /// The per-run root (absolute, canonical).
    pub fn path(&self) -> &Path {
        &self.base
    }

    /// The environment of long-lived executors (session, websocket plugin).
    pub fn exec_env(&self) -> ExecEnv {
        ExecEnv {
            tmp: self.base.join("exec/tmp"),
            home: self.base.join("exec/home"),
        }
    }

    /// A snapshot of the shared part, paths relative to the root.
    pub fn shared(&self) -> io::Result<Tree> {
        let mut tree = Tree::new();
        let created = self.created.lock().unwrap_or_else(|p| p.into_inner());
        for entry in std::fs::read_dir(&self.base)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "cases" && entry.file_type()?.is_dir() {
                tree.insert(name, Entry::Dir);
                for case in std::fs::read_dir(entry.path())? {
                    let case = case?;
                    let n = case.file_name().to_string_lossy().into_owned();
                    if created.contains(&n) {
                        continue;
                    }
                    walk_one(&case, &format!("cases/{n}"), &mut tree)?;
                }
            } else {
                walk_one(&entry, &name, &mut tree)?;
            }
        }
        Ok(tree)
    }

    /// Record shared paths blamed on a case, so the end-of-run check does
    /// not report them twice.
    fn blame(&self, diff: &TreeDiff) {
        let mut blamed = self.blamed.lock().unwrap_or_else(|p| p.into_inner());
        for (p, _) in diff.missing.iter().chain(&diff.extra) {
            blamed.insert(p.clone());
        }
        for (p, _, _) in &diff.changed {
            blamed.insert(p.clone());
        }
    }

    /// Changes of the shared part over the whole run that no case was blamed
    /// for, with paths relative to the root.
    pub fn unattributed(&self) -> io::Result<TreeDiff> {
        let now = self.shared()?;
        let mut d = diff(&self.start, &now);
        let blamed = self.blamed.lock().unwrap_or_else(|p| p.into_inner());
        d.missing.retain(|(p, _)| !blamed.contains(p));
        d.extra.retain(|(p, _)| !blamed.contains(p));
        d.changed.retain(|(p, _, _)| !blamed.contains(p));
        Ok(d)
    }

    /// A fresh case directory with `given` materialised.
    pub fn case_dir(&self, given: &Given) -> io::Result<CaseDir<'_>> {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let name = n.to_string();
        self.created
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.clone());
        let base = self.base.join("cases").join(&name);
        let root = base.join("ws");
        let dir = CaseDir {
            run: self,
            env: ExecEnv {
                tmp: base.join("tmp"),
                home: base.join("home"),
            },
            base,
            root,
            before: Tree::new(),
            outside_before: Tree::new(),
            shared_before: None,
        };
        // From here on, Drop removes whatever was created.
        std::fs::create_dir(&dir.base)?;
        for d in ["ws", "outside", "tmp", "home"] {
            std::fs::create_dir(dir.base.join(d))?;
        }
        std::fs::write(dir.base.join("outside/sentinel.txt"), SENTINEL_TEXT)?;
        materialise(&dir.root, given)?;
        Ok(dir)
    }
}

/// Snapshot one directory entry (and everything below it) into `tree` as `rel`.
fn walk_one(entry: &std::fs::DirEntry, rel: &str, tree: &mut Tree) -> io::Result<()> {
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
        walk(&path, rel, tree)?;
    } else if kind.is_file() {
        use std::os::unix::fs::PermissionsExt;
        let mode = entry.metadata()?.permissions().mode() & 0o7777;
        tree.insert(
            rel.to_owned(),
            Entry::File(std::fs::read(&path)?, Some(mode)),
        );
    } else {
        tree.insert(rel.to_owned(), Entry::Other);
    }
    Ok(())
}

/// A fresh case directory under a [`RunRoot`]: the workspace, its sentinel,
/// and the TMPDIR and HOME of a oneshot executor. Removed on drop.
#[derive(Debug)]
pub struct CaseDir<'r> {
    run: &'r RunRoot,
    base: PathBuf,
    root: PathBuf,
    env: ExecEnv,
    before: Tree,
    outside_before: Tree,
    shared_before: Option<Tree>,
}

/// What the runner found after the call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct After {
    /// Differences against the expected tree (private paths left out).
    pub files: TreeDiff,
    /// Changes outside the workspace, with paths relative to the workspace
    /// (`../outside/sentinel.txt`, `../tmp/x`; `../../../x` for the per-run
    /// root's own entries): writes outside.
    pub outside: TreeDiff,
}

/// Prefix every path of a diff.
fn prefixed(d: TreeDiff, prefix: &str) -> TreeDiff {
    TreeDiff {
        missing: d
            .missing
            .into_iter()
            .map(|(p, e)| (format!("{prefix}{p}"), e))
            .collect(),
        extra: d
            .extra
            .into_iter()
            .map(|(p, e)| (format!("{prefix}{p}"), e))
            .collect(),
        changed: d
            .changed
            .into_iter()
            .map(|(p, a, b)| (format!("{prefix}{p}"), a, b))
            .collect(),
    }
}

impl CaseDir<'_> {
    /// Take the "before" snapshots, right before the call. `shared`: also
    /// the per-run root's shared part (only when no other call overlaps).
    pub fn arm(&mut self, shared: bool) -> io::Result<()> {
        self.before = snapshot(&self.root)?;
        self.outside_before = Self::outside(&self.base)?;
        self.shared_before = if shared {
            Some(self.run.shared()?)
        } else {
            None
        };
        Ok(())
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

    /// The TMPDIR and HOME of a oneshot executor for this case.
    pub fn env(&self) -> &ExecEnv {
        &self.env
    }

    /// The tree as materialised (before the call).
    pub fn before(&self) -> &Tree {
        &self.before
    }

    /// Snapshot and compare with the expectation (`None` = unchanged).
    pub fn check(&self, expected: Option<&Tree>, private: &PrivatePaths) -> io::Result<After> {
        let actual = private.filter(&snapshot(&self.root)?);
        let want = private.filter(expected.unwrap_or(&self.before));
        let outside_after = Self::outside(&self.base)?;
        let mut outside = diff(&self.outside_before, &outside_after);
        if let Some(before) = &self.shared_before {
            let shared = diff(before, &self.run.shared()?);
            self.run.blame(&shared);
            // The workspace is `<root>/cases/<n>/ws`.
            let shared = prefixed(shared, "../../../");
            outside.missing.extend(shared.missing);
            outside.extra.extend(shared.extra);
            outside.changed.extend(shared.changed);
        }
        Ok(After {
            files: diff(&want, &actual),
            outside,
        })
    }
}

/// Make every directory below `dir` writable, so it can be removed (an
/// executor may leave read-only directories behind).
fn unlock(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755));
                unlock(&e.path());
            }
        }
    }
}

impl Drop for CaseDir<'_> {
    fn drop(&mut self) {
        unlock(&self.base);
        // Best effort: whatever is left goes with the per-run root.
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

impl Drop for RunRoot {
    fn drop(&mut self) {
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
        let run = RunRoot::new().expect("run root");
        let mut dir = run.case_dir(&given).expect("case dir");
        dir.arm(false).expect("arm");
        assert!(diff(&given_tree(&given), dir.before()).is_empty());
        let none = PrivatePaths::new(&[]).expect("no globs");
        assert!(dir.check(None, &none).expect("check").files.is_empty());
        std::fs::write(dir.root().join("link/evil.txt"), "x").expect("write through the link");
        std::fs::write(dir.root().join("a.apply-patch.tmp"), "").expect("stray temp");
        std::fs::write(dir.env().tmp.join("left.txt"), "x").expect("a file left in TMPDIR");
        let after = dir.check(None, &none).expect("check");
        let outside: Vec<&str> = after
            .outside
            .extra
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        assert_eq!(outside, ["../outside/evil.txt", "../tmp/left.txt"]);
        let extra: Vec<(&str, &str)> = after
            .files
            .extra
            .iter()
            .map(|(p, e)| (p.as_str(), e.kind()))
            .collect();
        assert_eq!(extra, vec![("a.apply-patch.tmp", "file")]);
        let base = dir
            .root()
            .parent()
            .expect("the case directory")
            .to_path_buf();
        drop(dir);
        assert!(!base.exists(), "a case directory is removed when dropped");
    }

    #[test]
    fn modes_are_materialised_and_compared_where_declared() {
        use std::os::unix::fs::PermissionsExt;
        let given: Given = serde_json::from_value(serde_json::json!({
            "files": {"run.sh": {"text": "#!/bin/sh\n", "mode": "755"}, "a.txt": "x\n"}
        }))
        .expect("a valid given");
        let run_root = RunRoot::new().expect("run root");
        let mut dir = run_root.case_dir(&given).expect("case dir");
        dir.arm(false).expect("arm");
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
        let base = dir
            .root()
            .parent()
            .expect("the case directory")
            .to_path_buf();
        drop(dir);
        assert!(!base.exists(), "a case directory is removed when dropped");
    }

    /// The shared part of the per-run root: blamed on the call when it is
    /// watched around it (`-j 1`), else found at the end, never twice.
    #[test]
    fn the_shared_part_of_the_run_root_is_watched() {
        let run = RunRoot::new().expect("run root");
        let none = PrivatePaths::new(&[]).expect("no globs");
        let mut a = run.case_dir(&Given::default()).expect("case dir");
        a.arm(true).expect("arm");
        let b = run
            .case_dir(&Given::default())
            .expect("a concurrent case dir");
        std::fs::write(b.root().join("busy.txt"), "x").expect("another case's workspace");
        std::fs::write(run.path().join("root.txt"), "x").expect("the root");
        std::fs::write(run.path().join("cases/x.txt"), "x").expect("cases/");
        std::fs::write(run.exec_env().home.join(".cache"), "x").expect("exec HOME");
        let after = a.check(None, &none).expect("check");
        let outside: Vec<&str> = after
            .outside
            .extra
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        assert_eq!(
            outside,
            [
                "../../../cases/x.txt",
                "../../../exec/home/.cache",
                "../../../root.txt"
            ]
        );
        // Unwatched around the call: found at the end only, and what was
        // already blamed is not reported again.
        let mut c = run.case_dir(&Given::default()).expect("case dir");
        c.arm(false).expect("arm");
        std::fs::write(run.exec_env().tmp.join("late.txt"), "x").expect("exec TMPDIR");
        assert!(c.check(None, &none).expect("check").outside.is_empty());
        let end = run.unattributed().expect("end of run");
        let paths: Vec<&str> = end.extra.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["exec/tmp/late.txt"]);
    }
}
