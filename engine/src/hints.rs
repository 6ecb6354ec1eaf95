//! Agent hints for the refusals the diagnosis ([`crate::diagnose`]) does
//! not cover: a file that is not there (the closest existing paths), an Add
//! onto an existing file, a unified diff or a Markdown fence sent where an
//! envelope was expected, an absolute path that lies inside the workspace.
//! The wire fields are in `docs/diagnostics.md` ("Hints on other refusals").
//!
//! **Failure path only, and read-only.** Nothing here runs unless a tool
//! already refused; nothing here changes what a call does.
//!
//! **Bounded cost.** [`similar_paths`] walks the workspace breadth-first
//! through the [`Fs`] seam, in sorted order, skipping hidden folders and
//! the build/dependency folders of [`crate::layout::SKIPPED_DIRS`]; it
//! lists at most [`MAX_WALK_DIRS`] directories and stops listing once it
//! has seen [`MAX_WALK_ENTRIES`] entries (a directory is read whole by
//! [`Fs::list_dir`], so one huge directory costs what listing it costs).
//! The comparison is linear in the entries seen. [`envelope_shape`] reads
//! at most [`MAX_SHAPE_LINES`] lines of the envelope.

use std::collections::VecDeque;
use std::path::Path;

use crate::fs::{EntryKind, Fs};
use crate::layout::file_name_of;

/// At most this many directory entries are looked at for similar paths.
pub const MAX_WALK_ENTRIES: usize = 20_000;
/// At most this many directories are listed for similar paths.
pub const MAX_WALK_DIRS: usize = 2_000;
/// At most this many similar paths are suggested.
pub const MAX_SIMILAR_PATHS: usize = 5;
/// At most this many envelope lines are read to recognise its shape.
pub const MAX_SHAPE_LINES: usize = 200;

/// How an existing path relates to the one asked for; the wire name is
/// [`Relation::as_str`]. Declared best first: suggestions are ranked so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Relation {
    /// The same path up to letter case (`Src/App.py` for `src/app.py`).
    CaseVariant,
    /// The existing path has leading folders the one asked for lacks
    /// (`src/app.py` exists, `app.py` was asked for): it keeps all of
    /// the path asked for, so it ranks before the reverse.
    MissingLeadingFolder,
    /// The path asked for has leading folders the existing one lacks
    /// (`app.py` exists, `src/app.py` was asked for).
    ExtraLeadingFolder,
    /// The same file name (up to letter case) in another folder.
    SameName,
}

impl Relation {
    /// The wire name (snake_case, stable).
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::CaseVariant => "case_variant",
            Relation::ExtraLeadingFolder => "extra_leading_folder",
            Relation::MissingLeadingFolder => "missing_leading_folder",
            Relation::SameName => "same_name",
        }
    }

    /// The relation in words, for the hint.
    fn words(self) -> &'static str {
        match self {
            Relation::CaseVariant => "differs in letter case",
            Relation::ExtraLeadingFolder => "without the leading folder",
            Relation::MissingLeadingFolder => "under a leading folder",
            Relation::SameName => "the same name elsewhere",
        }
    }
}

/// An existing path close to one that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimilarPath {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// How it relates to the path asked for.
    pub relation: Relation,
}

/// What [`similar_paths`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Similar {
    /// Best first, at most [`MAX_SIMILAR_PATHS`].
    pub paths: Vec<SimilarPath>,
    /// True when the walk stopped at a bound before it saw every entry.
    pub cut_short: bool,
}

/// What a similar path may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Looking {
    /// A regular file (a file to update or delete).
    File,
    /// A directory (the missing parent of a file to add).
    Dir,
}

/// The existing files (or directories) closest to `wanted`, a normalised
/// workspace-relative path that does not exist: a case variant, the path
/// without (or with more) leading folders, the same name elsewhere. Best
/// first: by [`Relation`], then by how many folders the two paths differ
/// in, then by path. A folder that cannot be listed is skipped, and
/// symbolic links are neither followed nor suggested (a hint is best
/// effort).
pub fn similar_paths(fs: &dyn Fs, wanted: &str, looking: Looking) -> Similar {
    let wanted_lower = wanted.to_lowercase();
    let name_lower = file_name_of(wanted).to_lowercase();
    let depth = |p: &str| p.split('/').count();
    let mut found: Vec<(Relation, usize, String)> = Vec::new();
    let mut consider = |path: String| {
        if path == wanted {
            return;
        }
        let lower = path.to_lowercase();
        let relation = if lower == wanted_lower {
            Relation::CaseVariant
        } else if lower
            .strip_suffix(wanted_lower.as_str())
            .is_some_and(|head| head.ends_with('/'))
        {
            Relation::MissingLeadingFolder
        } else if wanted_lower
            .strip_suffix(lower.as_str())
            .is_some_and(|head| head.ends_with('/'))
        {
            Relation::ExtraLeadingFolder
        } else if file_name_of(&lower) == name_lower {
            Relation::SameName
        } else {
            return;
        };
        let apart = depth(&path).abs_diff(depth(wanted));
        found.push((relation, apart, path));
    };
    let mut queue: VecDeque<String> = VecDeque::from([String::new()]);
    let (mut dirs, mut entries) = (0, 0);
    let mut cut_short = false;
    while let Some(dir) = queue.pop_front() {
        if dirs == MAX_WALK_DIRS || entries >= MAX_WALK_ENTRIES {
            cut_short = true;
            break;
        }
        dirs += 1;
        let Ok(list) = fs.list_dir(&dir) else {
            continue;
        };
        entries += list.len();
        for (name, kind) in list {
            let path = crate::layout::join(&dir, &name);
            match kind {
                EntryKind::Dir => {
                    if looking == Looking::Dir {
                        consider(path.clone());
                    }
                    if !skipped_dir(&name) {
                        queue.push_back(path);
                    }
                }
                EntryKind::File if looking == Looking::File => consider(path),
                _ => {}
            }
        }
    }
    found.sort();
    found.truncate(MAX_SIMILAR_PATHS);
    Similar {
        paths: found
            .into_iter()
            .map(|(relation, _, path)| SimilarPath { path, relation })
            .collect(),
        cut_short,
    }
}

/// Folders the similar-path walk does not enter: hidden ones (`.git`, the
/// engine's private folder) and the build and dependency folders the IDE
/// tools skip too.
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.') || crate::layout::SKIPPED_DIRS.contains(&name)
}

/// The hint of a file to update or delete that does not exist.
pub fn missing_file_hint(raw: &str, similar: &Similar, deleting: bool) -> String {
    let mut hint = match similar.paths.first() {
        Some(_) => format!("no file {raw}; did you mean {}?", list(similar)),
        None if deleting => format!("no file {raw} and no file of that name elsewhere in the workspace: nothing to delete"),
        None => format!(
            "no file {raw} and no file of that name elsewhere in the workspace; to create it, use *** Add File: {raw} with '+' lines"
        ),
    };
    if similar.cut_short {
        hint.push_str(&format!(
            " (the search stopped at {MAX_WALK_DIRS} folders or {MAX_WALK_ENTRIES} entries)"
        ));
    }
    hint
}

/// The hint of a file to add whose folder does not exist.
pub fn missing_parent_hint(parent: &str, similar: &Similar) -> String {
    match similar.paths.first() {
        Some(_) => format!(
            "apply_patch never creates folders and {parent}/ does not exist; did you mean {}?",
            list(similar)
        ),
        None => format!(
            "apply_patch never creates folders: {parent}/ must exist before the patch adds a file in it"
        ),
    }
}

/// The suggestions in words: `src/app.py (under a leading folder), …`.
fn list(similar: &Similar) -> String {
    similar
        .paths
        .iter()
        .map(|s| format!("{} ({})", s.path, s.relation.words()))
        .collect::<Vec<_>>()
        .join(", or ")
}

/// The hint of an Add onto a path that exists.
pub fn add_exists_hint(raw: &str) -> String {
    format!(
        "{raw} already exists: to change it, use *** Update File: {raw} with @@ hunks (an Add only creates new files)"
    )
}

/// The hint of a move whose destination exists.
pub fn move_destination_exists_hint(to: &str) -> String {
    format!(
        "the move's destination {to} already exists: move to a path that does not exist, or edit {to} with *** Update File: {to}"
    )
}

/// The workspace-relative form of an absolute `raw` path that lies inside
/// `root` (compared as text, after removing `.` segments and repeated
/// slashes; symlinks are not resolved). `None` when it lies elsewhere, has
/// a `..` segment, or names the root itself.
pub fn relative_to_root(raw: &str, root: &Path) -> Option<String> {
    let root = root.to_str()?;
    let clean = |p: &str| -> Option<Vec<String>> {
        let mut out = Vec::new();
        for seg in p.split('/') {
            match seg {
                "" | "." => {}
                ".." => return None,
                s => out.push(s.to_string()),
            }
        }
        Some(out)
    };
    if !raw.starts_with('/') || !root.starts_with('/') {
        return None;
    }
    let (raw, root) = (clean(raw)?, clean(root)?);
    let rest = raw.strip_prefix(root.as_slice())?;
    (!rest.is_empty()).then(|| rest.join("/"))
}

/// The hint of an absolute path.
pub fn absolute_path_hint(raw: &str, relative: Option<&str>) -> String {
    match relative {
        Some(rel) => format!(
            "paths are relative to the workspace root: {raw} lies inside the workspace, write it as {rel}"
        ),
        None => format!(
            "paths are relative to the workspace root, and {raw} is absolute: write the path from the workspace root, without a leading /"
        ),
    }
}

/// What a text sent as an envelope looks like, when it is not one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A unified diff (`--- a/x`, `+++ b/x`, `@@ -1,2 +1,2 @@`), fenced or not.
    UnifiedDiff,
    /// A Markdown fenced block (```` ``` ```` or `~~~`), around an envelope or not.
    FencedBlock,
    /// A shell heredoc around the envelope (`apply_patch <<'EOF'`).
    Heredoc,
}

impl Shape {
    /// The wire name (snake_case, stable).
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::UnifiedDiff => "unified_diff",
            Shape::FencedBlock => "fenced_block",
            Shape::Heredoc => "heredoc",
        }
    }
}

/// Recognise a unified diff, a fenced block or a heredoc in an envelope
/// refused by the parser at `error_line` (1-based), and say what to send
/// instead; or, with no such shape, text before `*** Begin Patch` or a
/// miscased `*** begin patch` on line 1 (a hint without a shape). `None`
/// when the text looks like none of them (or the error is elsewhere than
/// these produce it: line 1, a `---`/`+++`/`diff` line where a hunk was
/// expected, a closing fence after `*** End Patch`).
pub fn envelope_shape(text: &str, error_line: usize) -> Option<(Option<Shape>, String)> {
    let (shape, hint) = match recognise(text, error_line) {
        Some((shape, hint)) => (Some(shape), hint),
        None => (None, misplaced_begin(text, error_line)?),
    };
    Some((shape, hint))
}

/// Line 1 is not `*** Begin Patch`, but a later line (or line 1 in another
/// letter case) is.
fn misplaced_begin(text: &str, error_line: usize) -> Option<String> {
    if error_line != 1 {
        return None;
    }
    let mut lines = text
        .split('\n')
        .take(MAX_SHAPE_LINES)
        .map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next()?.trim().eq_ignore_ascii_case("*** Begin Patch") {
        return Some("the markers are written exactly: *** Begin Patch (that letter case, no surrounding spaces)".into());
    }
    let at = lines.position(|l| l == "*** Begin Patch")? + 2;
    Some(format!(
        "the envelope must start on line 1 with *** Begin Patch: remove the {} line{} before it (it is on line {at}), and any text after *** End Patch",
        at - 1,
        if at == 2 { "" } else { "s" }
    ))
}

/// [`envelope_shape`]'s shapes.
fn recognise(text: &str, error_line: usize) -> Option<(Shape, String)> {
    let lines: Vec<&str> = text
        .split('\n')
        .take(MAX_SHAPE_LINES)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let first = *lines.first()?;
    let fenced = is_fence(first);
    if error_line == 1 {
        let body = if fenced { &lines[1..] } else { &lines[..] };
        if let Some(target) = unified_diff(body) {
            let fence = if fenced {
                " (in a Markdown fence, which is not stripped either)"
            } else {
                ""
            };
            return Some((
                Shape::UnifiedDiff,
                format!(
                    "this is a unified diff{fence}; send an apply_patch envelope instead, with context lines and no line numbers: {}",
                    target.example()
                ),
            ));
        }
        if fenced {
            let inside = match body.first() {
                Some(&"*** Begin Patch") => {
                    "the envelope is wrapped in a Markdown fence: send the text from *** Begin Patch to *** End Patch alone, without the ``` lines".to_string()
                }
                _ => format!(
                    "this is a Markdown fenced block; send an apply_patch envelope, without fences: {}",
                    DiffTarget::Update("path/to/file".into()).example()
                ),
            };
            return Some((Shape::FencedBlock, inside));
        }
        if is_heredoc(first) {
            return Some((
                Shape::Heredoc,
                "the envelope is wrapped in a shell heredoc: send the text from *** Begin Patch to *** End Patch alone".into(),
            ));
        }
        return None;
    }
    let found = *lines.get(error_line.checked_sub(1)?)?;
    let before = error_line.checked_sub(2).and_then(|i| lines.get(i));
    if is_fence(found) && before == Some(&"*** End Patch") {
        return Some((
            Shape::FencedBlock,
            "a Markdown fence follows *** End Patch: send the envelope alone, without the ``` lines".into(),
        ));
    }
    let diff_header = found.starts_with("--- ")
        || found.starts_with("+++ ")
        || found.starts_with("diff --git ")
        || found.starts_with("index ");
    if diff_header {
        return Some((
            Shape::UnifiedDiff,
            "unified diff file headers (diff, index, ---, +++) do not belong in an envelope: the *** Update File: line names the file; start each hunk with @@".into(),
        ));
    }
    None
}

/// A Markdown fence line: three or more backticks or tildes, then an
/// optional info string (```` ```diff ````).
pub(crate) fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// A shell heredoc opener: `<<` followed by a quoted word or an
/// upper-case one (`<<'EOF'`, `<< "PATCH"`, `<<-EOF`), not a shift
/// (`cout << x`, `1 << 4`).
pub(crate) fn is_heredoc(line: &str) -> bool {
    line.split_once("<<").is_some_and(|(_, rest)| {
        let word = rest.trim_start_matches('-').trim_start();
        let bare: String = word
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        word.starts_with(['\'', '"'])
            || (bare.starts_with(|c: char| c.is_ascii_uppercase())
                && bare.chars().all(|c| !c.is_ascii_lowercase()))
    })
}

/// What the unified diff changes, for the example envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
enum DiffTarget {
    Add(String),
    Delete(String),
    Update(String),
}

impl DiffTarget {
    /// A tiny envelope of the right kind for the path, as a quoted string
    /// with `\n` escapes (the hint is one line).
    fn example(&self) -> String {
        let text = match self {
            DiffTarget::Add(p) => format!(
                "*** Begin Patch\n*** Add File: {p}\n+first line\n+second line\n*** End Patch\n"
            ),
            DiffTarget::Delete(p) => format!("*** Begin Patch\n*** Delete File: {p}\n*** End Patch\n"),
            DiffTarget::Update(p) => format!(
                "*** Begin Patch\n*** Update File: {p}\n@@\n a line kept as context\n-a line removed\n+a line added\n*** End Patch\n"
            ),
        };
        format!("{text:?}")
    }
}

/// The file a unified diff changes, when `lines` (after an optional fence)
/// start like one: `diff --git`, `Index:` or `---` then `+++` before the
/// first `@@ -N,N +N,N @@`, or such an `@@` line among the first lines.
fn unified_diff(lines: &[&str]) -> Option<DiffTarget> {
    let first = lines.iter().position(|l| !l.trim().is_empty())?;
    let lines = &lines[first..];
    let opens = lines[0].starts_with("diff ")
        || lines[0].starts_with("--- ")
        || lines[0].starts_with("Index: ")
        || numbered_hunk_header(lines[0]);
    if !opens {
        return None;
    }
    let (mut old, mut new) = (None, None);
    for pair in lines.windows(2) {
        if let (Some(o), Some(n)) = (pair[0].strip_prefix("--- "), pair[1].strip_prefix("+++ ")) {
            old = Some(diff_path(o, "a/"));
            new = Some(diff_path(n, "b/"));
            break;
        }
        if numbered_hunk_header(pair[0]) {
            break;
        }
    }
    let has_hunk = lines.iter().any(|l| numbered_hunk_header(l));
    match (old, new) {
        (Some(o), Some(n)) if o == "/dev/null" => Some(DiffTarget::Add(n)),
        (Some(o), Some(n)) if n == "/dev/null" => Some(DiffTarget::Delete(o)),
        (Some(_), Some(n)) => Some(DiffTarget::Update(n)),
        _ if has_hunk => Some(DiffTarget::Update("path/to/file".into())),
        _ => None,
    }
}

/// A path on a `---`/`+++` line: a timestamp after a tab cut, the `a/` or
/// `b/` prefix of git removed.
fn diff_path(rest: &str, prefix: &str) -> String {
    let path = rest.split('\t').next().unwrap_or(rest).trim();
    path.strip_prefix(prefix).unwrap_or(path).to_string()
}

/// `@@ -12,3 +12,4 @@` (the counts optional): a unified diff's hunk header,
/// which the envelope does not use.
fn numbered_hunk_header(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("@@ -") else {
        return false;
    };
    let range = |s: &str| {
        !s.is_empty()
            && s.split(',').count() <= 2
            && s.split(',')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut parts = rest.splitn(3, ' ');
    let (Some(old), Some(new), Some(tail)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    range(old) && new.strip_prefix('+').is_some_and(range) && tail.starts_with("@@")
}

#[cfg(test)]
mod tests {
    //! The similar-path ranking over a memory workspace (the walk's bound
    //! counted through the `Fs` seam), and every envelope shape.

    use std::collections::BTreeMap;
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A read-only tree in memory that counts `list_dir` calls.
    struct Tree {
        entries: BTreeMap<String, EntryKind>,
        listed: AtomicUsize,
    }

    impl Tree {
        fn new(files: &[&str]) -> Tree {
            let mut entries = BTreeMap::new();
            for f in files {
                let mut at = String::new();
                let parts: Vec<&str> = f.split('/').collect();
                for (i, part) in parts.iter().enumerate() {
                    if !at.is_empty() {
                        at.push('/');
                    }
                    at.push_str(part);
                    let kind = if i + 1 == parts.len() {
                        EntryKind::File
                    } else {
                        EntryKind::Dir
                    };
                    entries.insert(at.clone(), kind);
                }
            }
            Tree {
                entries,
                listed: AtomicUsize::new(0),
            }
        }
    }

    fn unsupported<T>() -> io::Result<T> {
        Err(io::Error::other("read-only test tree"))
    }

    impl Fs for Tree {
        fn read(&self, _: &str) -> io::Result<Vec<u8>> {
            unsupported()
        }
        fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
            Ok(self.entries.get(path).copied())
        }
        fn read_link(&self, _: &str) -> io::Result<PathBuf> {
            unsupported()
        }
        fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
            self.listed.fetch_add(1, Ordering::Relaxed);
            let prefix = if path.is_empty() {
                String::new()
            } else {
                format!("{path}/")
            };
            Ok(self
                .entries
                .iter()
                .filter_map(|(p, k)| {
                    let rest = p.strip_prefix(&prefix)?;
                    (!rest.contains('/')).then(|| (rest.to_string(), *k))
                })
                .collect())
        }
        fn mode(&self, _: &str) -> io::Result<u32> {
            unsupported()
        }
        fn write_new(&self, _: &str, _: &[u8], _: Option<u32>) -> io::Result<()> {
            unsupported()
        }
        fn hard_link(&self, _: &str, _: &str) -> io::Result<()> {
            unsupported()
        }
        fn rename(&self, _: &str, _: &str) -> io::Result<()> {
            unsupported()
        }
        fn remove_file(&self, _: &str) -> io::Result<()> {
            unsupported()
        }
        fn create_dir(&self, _: &str) -> io::Result<()> {
            unsupported()
        }
        fn remove_dir(&self, _: &str) -> io::Result<()> {
            unsupported()
        }
        fn sync_dir(&self, _: &str) -> io::Result<()> {
            unsupported()
        }
    }

    fn found(fs: &dyn Fs, wanted: &str, looking: Looking) -> Vec<(String, &'static str)> {
        similar_paths(fs, wanted, looking)
            .paths
            .into_iter()
            .map(|s| (s.path, s.relation.as_str()))
            .collect()
    }

    #[test]
    fn similar_paths_are_ranked_by_relation_then_distance() {
        let tree = Tree::new(&[
            "src/app.py",
            "Src/App.py",
            "lib/vendor/app.py",
            "app.PY",
            "node_modules/x/app.py",
            ".git/app.py",
            "docs/readme.md",
        ]);
        assert_eq!(
            found(&tree, "src/App.py", Looking::File),
            vec![
                ("Src/App.py".to_string(), "case_variant"),
                ("src/app.py".to_string(), "case_variant"),
                ("app.PY".to_string(), "extra_leading_folder"),
                ("lib/vendor/app.py".to_string(), "same_name"),
            ]
        );
        assert_eq!(
            found(&tree, "app.py", Looking::File),
            vec![
                ("app.PY".to_string(), "case_variant"),
                ("Src/App.py".to_string(), "missing_leading_folder"),
                ("src/app.py".to_string(), "missing_leading_folder"),
                ("lib/vendor/app.py".to_string(), "missing_leading_folder"),
            ]
        );
        assert_eq!(
            found(&tree, "vendor/app.py", Looking::File)[0],
            ("lib/vendor/app.py".to_string(), "missing_leading_folder")
        );
        assert_eq!(
            found(&tree, "source/docs", Looking::Dir),
            vec![("docs".to_string(), "extra_leading_folder")]
        );
        assert!(found(&tree, "nothing.rs", Looking::File).is_empty());
    }

    #[test]
    fn the_walk_stops_once_it_has_seen_its_entry_bound() {
        // The root is read whole; the next folder is listed only while
        // fewer than MAX_WALK_ENTRIES entries have been seen.
        let walk = |root_files: usize| {
            let mut files: Vec<String> = (0..root_files).map(|i| format!("f{i:05}.txt")).collect();
            files.push("sub/target.txt".to_string());
            let tree = Tree::new(&files.iter().map(String::as_str).collect::<Vec<_>>());
            let similar = similar_paths(&tree, "target.txt", Looking::File);
            (similar, tree.listed.load(Ordering::Relaxed))
        };
        // MAX - 1 files and `sub`: the bound is reached, `sub` is not listed.
        let (similar, listed) = walk(MAX_WALK_ENTRIES - 1);
        assert!(similar.cut_short);
        assert!(similar.paths.is_empty());
        assert_eq!(listed, 1);
        // One entry fewer: `sub` is listed and its file found.
        let (similar, listed) = walk(MAX_WALK_ENTRIES - 2);
        assert!(!similar.cut_short);
        assert_eq!(similar.paths.len(), 1);
        assert_eq!(listed, 2);
    }

    #[test]
    fn the_walk_stops_at_its_bound() {
        // More folders than the directory bound, the file in the last one.
        let mut files: Vec<String> = (0..MAX_WALK_DIRS + 10)
            .map(|i| format!("d{i:05}/other.txt"))
            .collect();
        files.push(format!("d{:05}/target.txt", MAX_WALK_DIRS + 9));
        let tree = Tree::new(&files.iter().map(String::as_str).collect::<Vec<_>>());
        let similar = similar_paths(&tree, "target.txt", Looking::File);
        assert!(similar.cut_short);
        assert!(similar.paths.is_empty());
        assert_eq!(tree.listed.load(Ordering::Relaxed), MAX_WALK_DIRS);
        assert!(missing_file_hint("target.txt", &similar, false).contains("the search stopped at"));
    }

    #[test]
    fn hints_name_the_suggestions() {
        let tree = Tree::new(&["src/app.py"]);
        let similar = similar_paths(&tree, "app.py", Looking::File);
        assert_eq!(
            missing_file_hint("app.py", &similar, false),
            "no file app.py; did you mean src/app.py (under a leading folder)?"
        );
        let none = Similar::default();
        assert!(missing_file_hint("x.py", &none, false).contains("*** Add File: x.py"));
        assert!(missing_file_hint("x.py", &none, true).contains("nothing to delete"));
        assert!(add_exists_hint("a.txt").contains("*** Update File: a.txt"));
    }

    #[test]
    fn absolute_paths_inside_the_root_become_relative() {
        let root = Path::new("/work/ws");
        let rel = |raw: &str| relative_to_root(raw, root);
        assert_eq!(rel("/work/ws/src/a.py").as_deref(), Some("src/a.py"));
        assert_eq!(rel("//work/./ws//src/a.py").as_deref(), Some("src/a.py"));
        assert_eq!(rel("/work/wsx/a.py"), None);
        assert_eq!(rel("/work/ws"), None);
        assert_eq!(rel("/work/ws/../etc/passwd"), None);
        assert_eq!(rel("/etc/passwd"), None);
        assert_eq!(relative_to_root("/a/b", Path::new("relative/root")), None);
        assert!(absolute_path_hint("/work/ws/a", Some("a")).contains("write it as a"));
    }

    #[test]
    fn envelope_shapes_are_recognised() {
        let shape = |text: &str, line: usize| envelope_shape(text, line).and_then(|(s, _)| s);
        let git = "diff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n";
        let (s, hint) = envelope_shape(git, 1).expect("a git diff");
        assert_eq!(s, Some(Shape::UnifiedDiff));
        assert!(
            hint.starts_with("this is a unified diff; send an apply_patch envelope"),
            "{hint}"
        );
        assert!(hint.contains("*** Update File: src/a.py"), "{hint}");
        let plain = "--- a.txt\t2024-01-01\n+++ a.txt\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(shape(plain, 1), Some(Shape::UnifiedDiff));
        let added = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n";
        assert!(envelope_shape(added, 1)
            .unwrap()
            .1
            .contains("*** Add File: new.txt"));
        let deleted = "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        assert!(envelope_shape(deleted, 1)
            .unwrap()
            .1
            .contains("*** Delete File: old.txt"));
        let bare_hunk = "@@ -3,2 +3,2 @@\n a\n-b\n+c\n";
        assert_eq!(shape(bare_hunk, 1), Some(Shape::UnifiedDiff));
        let fenced_diff = "```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n";
        let (s, hint) = envelope_shape(fenced_diff, 1).unwrap();
        assert_eq!(s, Some(Shape::UnifiedDiff));
        assert!(hint.contains("Markdown fence"), "{hint}");
        let fenced_envelope = "```\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n```\n";
        let (s, hint) = envelope_shape(fenced_envelope, 1).unwrap();
        assert_eq!(s, Some(Shape::FencedBlock));
        assert!(hint.contains("wrapped in a Markdown fence"), "{hint}");
        assert_eq!(shape("~~~\nhello\n~~~\n", 1), Some(Shape::FencedBlock));
        assert_eq!(
            shape("apply_patch <<'EOF'\n*** Begin Patch\n", 1),
            Some(Shape::Heredoc)
        );
        assert_eq!(shape("cat <<-PATCH\n", 1), Some(Shape::Heredoc));
        assert_eq!(shape("std::cout << x;\n", 1), None);
        assert_eq!(shape("let y = 1 << 4;\n", 1), None);
        assert_eq!(shape("a\n", 0), None);
        let closing = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n```";
        assert_eq!(shape(closing, 4), Some(Shape::FencedBlock));
        let headers_inside =
            "*** Begin Patch\n*** Update File: a\n--- a/a\n+++ b/a\n@@\n-x\n*** End Patch\n";
        assert_eq!(shape(headers_inside, 3), Some(Shape::UnifiedDiff));
        // Not these shapes: prose, a lone `---` rule, an envelope error
        // elsewhere; the first and a miscased marker still get a hint.
        let prose = envelope_shape("Here is the patch:\n\n*** Begin Patch\n", 1).unwrap();
        assert_eq!(prose.0, None);
        assert!(
            prose
                .1
                .contains("remove the 2 lines before it (it is on line 3)"),
            "{}",
            prose.1
        );
        let miscased = envelope_shape("*** begin patch\n", 1).unwrap();
        assert!(miscased.1.contains("exactly"), "{}", miscased.1);
        assert_eq!(envelope_shape("---\ntitle: x\n---\n", 1), None);
        assert_eq!(shape("*** Begin Patch\n*** Update File: a\nx\n", 3), None);
        assert_eq!(shape("", 1), None);
        assert!(!numbered_hunk_header("@@ -a,b +c @@"));
        assert!(numbered_hunk_header("@@ -1,3 +1,4 @@ fn main()"));
    }
}
