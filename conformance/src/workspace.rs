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
//!
//! Cost (a hostile executor may leave anything behind): a snapshot streams
//! each regular file in 64 KiB chunks, keeping the bytes of a file of at
//! most [`SMALL_FILE_BYTES`] (to render its diff) and only the length and
//! SHA-256 of a bigger one ([`Entry::Large`]); it stops with an error, and
//! the case fails with that reason, once the files of one tree pass the
//! per-case limit ([`DEFAULT_WORKSPACE_LIMIT`], [`RunRoot::set_workspace_limit`])
//! or the tree passes [`MAX_ENTRIES`] entries. Memory is O(limit) whatever
//! is on disk, and a file past the limit is judged by its size alone, never
//! read. A workspace or case directory the executor replaced with a symlink
//! is reported, never followed. A case directory is removed even while a
//! detached child still writes into it: the processes working there are
//! killed and the removal retried ([`remove_dir_hard`]).

use std::collections::{BTreeSet, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::case::{Expect, ExpectFiles, Given};
use crate::rel_path::under;

// The snapshot kit, shared with the tests: the walker, its entries and limits.
pub use patchspec_snapshot::{
    ensure_real_dir, snapshot, Entry, Tree, DEFAULT_WORKSPACE_LIMIT, MAX_ENTRIES, SMALL_FILE_BYTES,
};
use patchspec_snapshot::{snapshot_within, walk_one, Budget};

/// The content of the sentinel file.
pub const SENTINEL_TEXT: &str =
    "patchspec sentinel: an executor must never change this file or this directory\n";

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

/// `entry` in the form a snapshot gives it: a file bigger than
/// [`SMALL_FILE_BYTES`] (from an expected tree) as its length and digest.
fn as_snapshotted(entry: &Entry) -> Entry {
    match entry {
        Entry::File(bytes, mode) if bytes.len() as u64 > SMALL_FILE_BYTES => {
            Entry::large(bytes, *mode)
        }
        other => other.clone(),
    }
}

/// `entry` without its permission bits.
fn without_mode(entry: Entry) -> Entry {
    match entry {
        Entry::File(bytes, _) => Entry::File(bytes, None),
        Entry::Large { len, sha256, .. } => Entry::Large {
            len,
            sha256,
            mode: None,
        },
        other => other,
    }
}

fn has_mode(entry: &Entry) -> bool {
    matches!(
        entry,
        Entry::File(_, Some(_)) | Entry::Large { mode: Some(_), .. }
    )
}

/// Compare two trees. A file's mode is compared only when the expected
/// entry has one; when it has none, the actual mode is left out of the
/// reported difference too. Files bigger than [`SMALL_FILE_BYTES`] are
/// compared by length and SHA-256.
pub fn diff(expected: &Tree, actual: &Tree) -> TreeDiff {
    let mut d = TreeDiff::default();
    for (path, want) in expected {
        let Some(got) = actual.get(path) else {
            d.missing.push((path.clone(), want.clone()));
            continue;
        };
        let (want, got) = (as_snapshotted(want), as_snapshotted(got));
        let got = if has_mode(&want) {
            got
        } else {
            without_mode(got)
        };
        if got != want {
            d.changed.push((path.clone(), want, got));
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

/// The tree [`materialise`] leaves for `given`, as a snapshot reads it:
/// `file_mode` (what a new file gets here, 0o666 less the umask) for each
/// file that declares no mode, large files by length and hash. Equal to a
/// snapshot of the materialised workspace without walking it.
pub fn materialised_tree(given: &Given, file_mode: u32) -> Tree {
    given_tree(given)
        .into_iter()
        .map(|(path, entry)| {
            let entry = match entry {
                Entry::File(bytes, None) => Entry::File(bytes, Some(file_mode)),
                other => other,
            };
            (path, as_snapshotted(&entry))
        })
        .collect()
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
    // The folders made so far: `create_dir_all` on one that exists costs a
    // failed mkdir and a stat, for every file of a generated workspace.
    let mut made: HashSet<PathBuf> = HashSet::new();
    let mut make_parent = |path: &Path| -> io::Result<()> {
        match path.parent() {
            Some(parent) if parent != root && !made.contains(parent) => {
                std::fs::create_dir_all(parent)?;
                made.insert(parent.to_path_buf());
                Ok(())
            }
            _ => Ok(()),
        }
    };
    for d in &given.dirs {
        std::fs::create_dir_all(under(root, d))?;
    }
    for (p, c) in &given.files {
        let path = under(root, p);
        make_parent(&path)?;
        std::fs::write(&path, c.bytes())?;
        if let Some(mode) = c.mode() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    for (p, t) in &given.symlinks {
        let path = under(root, p);
        make_parent(&path)?;
        std::os::unix::fs::symlink(t, &path)?;
    }
    Ok(())
}

/// The folder a run's per-run root is made in, and why that one: named in
/// the run header, so a slow run on a disk is never a mystery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkDir {
    /// The folder.
    pub path: PathBuf,
    /// Why it was chosen: `--work-dir`, `TMPDIR`, `memory` or `system temp`.
    pub reason: &'static str,
}

impl WorkDir {
    /// `explicit` (`--work-dir`) when given; else `$TMPDIR` when set; else
    /// `/dev/shm` when it is a writable directory (a memory filesystem: the
    /// engine fsyncs every commit, and on a disk that costs more than the
    /// whole call); else the system temporary directory.
    pub fn choose(explicit: Option<&Path>) -> WorkDir {
        WorkDir::choose_from(
            explicit,
            std::env::var_os("TMPDIR").is_some(),
            Path::new("/dev/shm"),
        )
    }

    fn choose_from(explicit: Option<&Path>, tmpdir_set: bool, shm: &Path) -> WorkDir {
        let (path, reason) = match explicit {
            Some(dir) => (dir.to_path_buf(), "--work-dir"),
            None if tmpdir_set => (std::env::temp_dir(), "TMPDIR"),
            None if shm.is_dir() && tempfile::tempdir_in(shm).is_ok() => {
                (shm.to_path_buf(), "memory")
            }
            None => (std::env::temp_dir(), "system temp"),
        };
        WorkDir { path, reason }
    }

    /// A fresh per-run root here; the error names the folder.
    pub fn run_root(&self) -> io::Result<RunRoot> {
        RunRoot::new_in(&self.path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create the per-run directory in {}: {e}",
                    self.path.display()
                ),
            )
        })
    }

    /// `PATH (REASON)`, as the run header prints it.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.path.display(), self.reason)
    }
}

/// The environment of an executor process: `TMPDIR` (also `TMP`, `TEMP`)
/// and `HOME`, both inside the per-run root so the outside check sees what
/// the executor leaves there, and `XDG_STATE_HOME`, one folder per run
/// outside it for the executor's per-user state (the reference engine keeps
/// its journal key there: docs/security.md), which the check does not
/// watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecEnv {
    /// `TMPDIR`, `TMP` and `TEMP`.
    pub tmp: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
    /// `XDG_STATE_HOME`.
    pub state: PathBuf,
}

impl ExecEnv {
    /// Set the variables on a command.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        for var in ["TMPDIR", "TMP", "TEMP"] {
            cmd.env(var, &self.tmp);
        }
        cmd.env("HOME", &self.home);
        cmd.env("XDG_STATE_HOME", &self.state);
        // The engine's own variable would win over XDG_STATE_HOME.
        cmd.env_remove("PATCHSPEC_STATE_DIR");
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
    /// The executors' `XDG_STATE_HOME`: beside the per-run root, not in it.
    state: tempfile::TempDir,
    base: PathBuf,
    next: AtomicU64,
    /// Names under `cases/` the runner created (never removed: a name is
    /// never reused, and a walker may have listed it before it was deleted).
    created: Mutex<BTreeSet<String>>,
    /// The shared part when the root was made.
    start: Tree,
    /// Shared paths already blamed on a case.
    blamed: Mutex<BTreeSet<String>>,
    /// The per-case limit on bytes of files in one snapshot.
    limit: u64,
}

impl RunRoot {
    /// A fresh per-run root in the system temporary directory.
    pub fn new() -> io::Result<RunRoot> {
        RunRoot::new_in(&std::env::temp_dir())
    }

    /// A fresh per-run root in `dir` (`patchspec fuzz` prefers a memory
    /// filesystem: the engine fsyncs every commit).
    pub fn new_in(dir: &Path) -> io::Result<RunRoot> {
        let temp = tempfile::Builder::new()
            .prefix("patchspec-run-")
            .tempdir_in(dir)?;
        let base = temp.path().canonicalize()?;
        for d in ["cases", "exec/tmp", "exec/home"] {
            std::fs::create_dir_all(base.join(d))?;
        }
        let state = tempfile::Builder::new()
            .prefix("patchspec-state-")
            .tempdir_in(dir)?;
        let mut root = RunRoot {
            temp,
            state,
            base,
            next: AtomicU64::new(0),
            created: Mutex::new(BTreeSet::new()),
            start: Tree::new(),
            blamed: Mutex::new(BTreeSet::new()),
            limit: DEFAULT_WORKSPACE_LIMIT,
        };
        root.start = root.shared()?;
        Ok(root)
    }

    /// Set the per-case limit on the bytes of files a snapshot reads
    /// (default [`DEFAULT_WORKSPACE_LIMIT`]); past it the case fails.
    pub fn set_workspace_limit(&mut self, bytes: u64) {
        self.limit = bytes;
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
            state: self.state.path().to_path_buf(),
        }
    }

    /// A snapshot of the shared part, paths relative to the root.
    pub fn shared(&self) -> io::Result<Tree> {
        let mut tree = Tree::new();
        let mut budget = Budget::new(self.limit);
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
                    walk_one(&case, &format!("cases/{n}"), &mut tree, &mut budget)?;
                }
            } else {
                walk_one(&entry, &name, &mut tree, &mut budget)?;
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
        let dir = self.new_case_dir()?;
        for d in ["outside", "tmp", "home"] {
            std::fs::create_dir(dir.base.join(d))?;
        }
        std::fs::write(dir.base.join("outside/sentinel.txt"), SENTINEL_TEXT)?;
        materialise(&dir.root, given)?;
        Ok(dir)
    }

    /// A case directory with only its workspace, `given` materialised: for
    /// a run in this process that nothing is judged on but the workspace
    /// (`patchspec fuzz`'s reference), so no outside sentinel, TMPDIR or
    /// HOME to make, check and remove.
    pub fn workspace_only(&self, given: &Given) -> io::Result<CaseDir<'_>> {
        let dir = self.new_case_dir()?;
        materialise(&dir.root, given)?;
        Ok(dir)
    }

    /// `cases/<n>/` and its empty `ws/`, registered with the run.
    fn new_case_dir(&self) -> io::Result<CaseDir<'_>> {
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
                state: self.state.path().to_path_buf(),
            },
            base,
            root,
            before: None,
            outside_before: Tree::new(),
            shared_before: None,
        };
        // From here on, Drop removes whatever was created.
        std::fs::create_dir(&dir.base)?;
        std::fs::create_dir(&dir.root)?;
        Ok(dir)
    }
}

/// A fresh case directory under a [`RunRoot`]: the workspace, its sentinel,
/// and the TMPDIR and HOME of a oneshot executor. Removed on drop.
#[derive(Debug)]
pub struct CaseDir<'r> {
    run: &'r RunRoot,
    base: PathBuf,
    root: PathBuf,
    env: ExecEnv,
    before: Option<Tree>,
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
    /// `workspace`: also the workspace's own, which only an expectation of
    /// "unchanged" is judged against (an explicit expected tree needs none:
    /// one walk of the workspace less per case).
    pub fn arm(&mut self, shared: bool, workspace: bool) -> io::Result<()> {
        ensure_real_dir(&self.base)?;
        self.before = if workspace {
            Some(snapshot_within(&self.root, self.run.limit, None)?)
        } else {
            None
        };
        self.outside_before = self.outside()?;
        self.shared_before = if shared {
            Some(self.run.shared()?)
        } else {
            None
        };
        Ok(())
    }

    /// The case directory minus its workspace (not read twice), named
    /// relative to the workspace: `../outside/sentinel.txt`.
    fn outside(&self) -> io::Result<Tree> {
        let tree = snapshot_within(&self.base, self.run.limit, Some("ws"))?;
        Ok(tree
            .into_iter()
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

    /// The tree as materialised (before the call), when [`CaseDir::arm`]
    /// was asked for it.
    pub fn before(&self) -> Option<&Tree> {
        self.before.as_ref()
    }

    /// Snapshot and compare with the expectation (`None` = unchanged).
    pub fn check(&self, expected: Option<&Tree>, private: &PrivatePaths) -> io::Result<After> {
        // The case directory first: through a symlink there, the
        // workspace's path would lead anywhere.
        ensure_real_dir(&self.base)?;
        let actual = private.filter(&snapshot_within(&self.root, self.run.limit, None)?);
        let want = match expected.or(self.before.as_ref()) {
            Some(tree) => private.filter(tree),
            None => {
                return Err(io::Error::other(
                    "no expected tree, and the workspace was not snapshotted before the call",
                ))
            }
        };
        let outside_after = self.outside()?;
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
/// executor may leave read-only directories behind). Never through a
/// symlink: `dir` itself may have been replaced by one.
fn unlock(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if ensure_real_dir(dir).is_err() {
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755));
                unlock(&e.path());
            }
        }
    }
}

/// Remove `dir` and everything below it, even while a process left behind
/// by an executor (detached from its process group, so not killed with it)
/// still writes there: on failure, kill the processes whose working
/// directory or open files are inside `dir`, make it writable and retry. A
/// symlink in `dir`'s place is removed, not followed. Returns the last error
/// when `dir` could not be removed.
pub fn remove_dir_hard(dir: &Path) -> io::Result<()> {
    let mut last = None;
    for attempt in 0..6u64 {
        // The first attempt removes as is: making every directory writable
        // first cost a chmod per directory of every case (7 % of a corpus
        // run), and only an executor that left a read-only directory needs it.
        if attempt > 0 {
            unlock(dir);
        }
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => last = Some(e),
        }
        kill_processes_inside(dir);
        std::thread::sleep(std::time::Duration::from_millis(20 * attempt));
    }
    Err(last.unwrap_or_else(|| io::Error::other("not removed")))
}

/// Kill (SIGKILL) every process of ours whose working directory or an open
/// file lies inside `dir`: what an executor left running after its process
/// group was killed (a child that called `setsid` or double-forked away).
/// Linux: read from `/proc`; elsewhere it does nothing. The runner itself is
/// never killed.
fn kill_processes_inside(dir: &Path) {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    let me = std::process::id();
    for p in procs.flatten() {
        let Some(pid) = p
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&pid| pid != me)
        else {
            continue;
        };
        let base = p.path();
        let inside = |link: &Path| std::fs::read_link(link).is_ok_and(|t| t.starts_with(dir));
        let open_inside = || {
            std::fs::read_dir(base.join("fd"))
                .map(|fds| fds.flatten().any(|fd| inside(&fd.path())))
                .unwrap_or(false)
        };
        if inside(&base.join("cwd")) || open_inside() {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill has no memory-safety preconditions; a process
                // we may not signal just returns EPERM.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl Drop for CaseDir<'_> {
    fn drop(&mut self) {
        // Whatever cannot be removed now goes with the per-run root.
        let _ = remove_dir_hard(&self.base);
    }
}

impl Drop for RunRoot {
    fn drop(&mut self) {
        if let Err(e) = remove_dir_hard(self.temp.path()) {
            eprintln!(
                "patchspec: the run folder {} could not be removed: {e}",
                self.temp.path().display()
            );
        }
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

    /// `patchspec fuzz`'s reference computes the tree before a call with
    /// `materialised_tree` instead of walking it: the two must be equal,
    /// modes (declared or not), large files, empty folders and links included.
    #[test]
    fn materialised_tree_equals_the_snapshot_of_what_materialise_wrote() {
        let big = "x".repeat(SMALL_FILE_BYTES as usize + 10);
        let given: Given = serde_json::from_value(serde_json::json!({
            "files": {
                "a.txt": "x\n",
                "d/e/run.sh": {"text": "#!/bin/sh\n", "mode": "0755"},
                "d/big.txt": big,
                "d/private.txt": {"text": "", "mode": "0600"}
            },
            "dirs": ["empty", "d/e/deeper"],
            "symlinks": {"link": "../outside", "d/up": "../a.txt"}
        }))
        .expect("a valid given");
        let run = RunRoot::new().expect("run root");
        let dir = run.workspace_only(&given).expect("workspace");
        let snapshot = snapshot(dir.root()).expect("snapshot");
        let Some(Entry::File(_, Some(file_mode))) = snapshot.get("a.txt") else {
            panic!("a.txt: {:?}", snapshot.get("a.txt"));
        };
        assert_eq!(materialised_tree(&given, *file_mode), snapshot);
        // And it is not vacuous: a mode changed after the fact shows.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.root().join("a.txt"),
            std::fs::Permissions::from_mode(0o640),
        )
        .expect("chmod");
        assert_ne!(
            materialised_tree(&given, *file_mode),
            super::snapshot(dir.root()).expect("snapshot")
        );
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
        dir.arm(false, true).expect("arm");
        assert!(diff(&given_tree(&given), dir.before().expect("armed")).is_empty());
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
        dir.arm(false, true).expect("arm");
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
        a.arm(true, true).expect("arm");
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
        c.arm(false, true).expect("arm");
        std::fs::write(run.exec_env().tmp.join("late.txt"), "x").expect("exec TMPDIR");
        assert!(c.check(None, &none).expect("check").outside.is_empty());
        let end = run.unattributed().expect("end of run");
        let paths: Vec<&str> = end.extra.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["exec/tmp/late.txt"]);
    }
    /// A file over SMALL_FILE_BYTES is kept as its length and digest, and
    /// compares equal to an expected file with those bytes; one byte
    /// changed is a difference, shown by digest.
    #[test]
    fn big_files_are_hashed_not_kept() {
        let big = vec![b'x'; SMALL_FILE_BYTES as usize + 1];
        let run = RunRoot::new().expect("run root");
        let mut dir = run.case_dir(&Given::default()).expect("case dir");
        std::fs::write(dir.root().join("big.bin"), &big).expect("write");
        dir.arm(false, true).expect("arm");
        assert!(matches!(
            dir.before().expect("armed")["big.bin"],
            Entry::Large { len, .. } if len == big.len() as u64
        ));
        let none = PrivatePaths::new(&[]).expect("no globs");
        let expected = Tree::from([("big.bin".to_owned(), Entry::File(big.clone(), None))]);
        assert!(dir
            .check(Some(&expected), &none)
            .expect("check")
            .files
            .is_empty());
        let mut other = big.clone();
        other[0] = b'y';
        std::fs::write(dir.root().join("big.bin"), &other).expect("write");
        let d = dir.check(Some(&expected), &none).expect("check").files;
        assert_eq!(d.changed.len(), 1, "{d:?}");
        assert!(
            matches!(d.changed[0].2, Entry::Large { .. }),
            "{:?}",
            d.changed[0]
        );
    }

    /// Past the per-case limit the snapshot stops with the reason, before
    /// reading the file (it is sparse: its size alone decides).
    #[test]
    fn a_workspace_past_the_limit_is_refused_unread() {
        let mut run = RunRoot::new().expect("run root");
        run.set_workspace_limit(1024 * 1024);
        let mut dir = run.case_dir(&Given::default()).expect("case dir");
        dir.arm(false, true).expect("arm");
        let f = std::fs::File::create(dir.root().join("sparse.bin")).expect("create");
        f.set_len(1 << 40).expect("a 1 TiB sparse file");
        let none = PrivatePaths::new(&[]).expect("no globs");
        let e = dir.check(None, &none).expect_err("over the limit");
        let text = e.to_string();
        assert!(text.contains("per-case limit of 1048576 bytes"), "{text}");
        assert!(text.contains("sparse.bin"), "{text}");
    }

    /// A case directory replaced by a symlink: not snapshotted through,
    /// and on drop the link is removed while its target (with a read-only
    /// directory that `unlock` would have opened up) is left as it was.
    #[test]
    fn a_case_directory_replaced_by_a_symlink_is_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let elsewhere = tempfile::tempdir().expect("temp dir");
        let locked = elsewhere.path().join("locked");
        std::fs::create_dir(&locked).expect("mkdir");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).expect("chmod");
        let run = RunRoot::new().expect("run root");
        let mut dir = run.case_dir(&Given::default()).expect("case dir");
        dir.arm(false, true).expect("arm");
        let base = dir
            .root()
            .parent()
            .expect("the case directory")
            .to_path_buf();
        std::fs::remove_dir_all(&base).expect("remove the case directory");
        std::os::unix::fs::symlink(elsewhere.path(), &base).expect("symlink");
        let none = PrivatePaths::new(&[]).expect("no globs");
        let e = dir.check(None, &none).expect_err("a symlink");
        assert!(e.to_string().contains("replaced by a symlink"), "{e}");
        drop(dir);
        assert!(
            std::fs::symlink_metadata(&base).is_err(),
            "the link is gone"
        );
        let mode = std::fs::metadata(&locked)
            .expect("stat")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o500, "nothing was changed through the link");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }

    /// A read-only directory an executor left behind is made writable and
    /// removed on a later attempt (the first attempt does not chmod). As
    /// root (this machine and its CI) permissions do not stop the removal,
    /// so there the test holds the outcome, not the retry path; run as
    /// another user it takes the retry path.
    #[test]
    fn a_read_only_directory_left_behind_is_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let case = dir.path().join("case");
        std::fs::create_dir_all(case.join("ro/inner")).expect("mkdir");
        std::fs::write(case.join("ro/inner/f.txt"), "x").expect("write");
        for d in ["ro/inner", "ro"] {
            std::fs::set_permissions(case.join(d), std::fs::Permissions::from_mode(0o500))
                .expect("chmod");
        }
        remove_dir_hard(&case).expect("removed");
        assert!(!case.exists());
    }

    /// A detached process (its own session, so out of the executor's
    /// process group) that keeps writing into the case directory does not
    /// keep it from being removed.
    #[test]
    fn a_case_directory_is_removed_while_a_detached_child_writes() {
        let run = RunRoot::new().expect("run root");
        let dir = run.case_dir(&Given::default()).expect("case dir");
        let base = dir
            .root()
            .parent()
            .expect("the case directory")
            .to_path_buf();
        let mut child = std::process::Command::new("setsid")
            .args([
                "sh",
                "-c",
                "i=0; while :; do i=$((i+1)); mkdir -p d$i && : > d$i/f; done",
            ])
            .current_dir(dir.root())
            .spawn()
            .expect("spawn a writer");
        while std::fs::read_dir(dir.root()).expect("list").count() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(dir);
        assert!(!base.exists(), "the case directory was removed");
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn work_dir_prefers_the_flag_then_tmpdir_then_memory() {
        let shm = tempfile::tempdir().expect("a writable stand-in for /dev/shm");
        let flag = Path::new("/somewhere/else");
        let chosen = WorkDir::choose_from(Some(flag), true, shm.path());
        assert_eq!((chosen.path.as_path(), chosen.reason), (flag, "--work-dir"));
        assert_eq!(
            WorkDir::choose_from(None, true, shm.path()).reason,
            "TMPDIR"
        );
        let memory = WorkDir::choose_from(None, false, shm.path());
        assert_eq!(
            (memory.path.as_path(), memory.reason),
            (shm.path(), "memory")
        );
        let missing = shm.path().join("absent");
        assert_eq!(
            WorkDir::choose_from(None, false, &missing).reason,
            "system temp"
        );
    }

    #[test]
    fn a_work_dir_that_cannot_hold_a_run_root_is_named_in_the_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("absent");
        let err = WorkDir::choose(Some(&missing))
            .run_root()
            .expect_err("no such folder");
        assert!(
            err.to_string().contains(&missing.display().to_string()),
            "{err}"
        );
    }
}
