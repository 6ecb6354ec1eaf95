//! `apply_change` (websocket-tool-protocol.md): one SEARCH/REPLACE edit of
//! one file, or the creation of a file.
//!
//! Modify (C-ide-change-match): `searchContent` must occur exactly once in the
//! file, as a substring, byte for byte except for line endings: the file's
//! CRLF endings and the search's compare as LF, a leading BOM is not part of
//! the text. Every start position counts, so overlapping occurrences (`aa` in
//! `aaa`) are two. Zero occurrences is `no_match` (with the lines where the
//! search's first line appears, whitespace aside, as a hint); several is
//! `multiple_matches` (with the count and the line of each). Line endings in
//! `replaceContent` are written as the file's own (C-ide-change-endings).
//!
//! Create (C-ide-change-create): an absent, `null` or empty `searchContent`
//! means "create this file with `replaceContent`", exactly as given; the file
//! must not exist (`already_exists`) and its directory must
//! (`not_found`, reason `missing_parent`): this tool never creates
//! directories.
//!
//! No formatting (C-ide-change-format): the spec's "auto-format" belongs to
//! an IDE; the reference writes exactly the replacement. One write, through
//! [`crate::commit::commit`], keeping the file's permission bits; an edit that
//! changes nothing is reported (`changed: false`) and not written.
//!
//! Cost: O(F + S + R) time and memory for a file of F bytes, a SEARCH of S
//! and a REPLACE of R, whatever their content: the occurrences are counted by
//! memmem plus one Knuth–Morris–Pratt pass (overlapping repetitions included,
//! see `occurrences`), and lines are numbered in one pass. The
//! `work_is_linear_*` tests count the steps.

use std::sync::Arc;

use memchr::memmem;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::error::{IdeErrorKind, Reason};
use crate::commit::{commit, Change};
use crate::content::Content;
use crate::fs::{EntryKind, Fs};
use crate::layout::parent_of;
use crate::hash::sha256_hex;
use crate::path_guard::{resolve, GuardOptions};
use crate::text::{Lines, Newline, BOM};
use crate::tools::ide::read_file::not_found;
use crate::tools::ide::{io_error, path_error, IdeError, IdeTool, Params};

/// At most this many line numbers are listed in a `multiple_matches` or
/// `no_match` error.
pub const MAX_LINES_REPORTED: usize = 20;

/// The params of `apply_change`, for the catalog's schema; [`parse`] reads
/// them into [`ChangeArgs`] (the corpus test holds the two in agreement).
/// Unknown keys are ignored; `null` counts as absent.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "apply_change params")]
pub struct ApplyChangeParams {
    /// The file, relative to the workspace root (`/`-separated).
    #[schemars(regex(pattern = r"\S"))]
    pub relative_path: String,
    /// The exact text to replace: it must occur exactly once in the file
    /// (line endings compare as LF). Absent, `null` or empty: create the file.
    pub search_content: Option<String>,
    /// The replacement text (or the new file's whole content).
    pub replace_content: String,
    /// What the change is for; echoed back.
    pub description: Option<String>,
}

/// The success body of `apply_change`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChangeBody {
    /// The path, normalised.
    pub path: String,
    /// `create` or `modify`.
    #[schemars(extend("enum" = ["create", "modify"]))]
    pub operation: &'static str,
    /// False when the edit changed nothing (and nothing was written).
    pub changed: bool,
    /// The line where the replaced text starts (1 for a created file).
    pub line: usize,
    /// Lowercase hex SHA-256 of the file as it now is.
    pub sha256: String,
    /// The call's `description`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What to change: `apply_change`'s params, checked. Built from JSON by
/// the wire, or in Rust from its fields: `ChangeArgs { path: "a.txt".into(),
/// search: Some("old".into()), replace: "new".into(), description: None }`
/// modifies, `search: None` creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeArgs {
    /// `relativePath`, as given.
    pub path: String,
    /// `searchContent`; `None` or empty: create the file.
    pub search: Option<String>,
    /// `replaceContent`.
    pub replace: String,
    /// `description`, echoed.
    pub description: Option<String>,
}

/// Check the params (C-ide-params), before any I/O.
pub fn parse(params: &Value) -> Result<ChangeArgs, IdeError> {
    let p = Params::of(params)?;
    let path = p.req_str("relativePath", false)?.to_string();
    let search = p.opt_str("searchContent")?.map(str::to_string);
    let replace = p.req_str("replaceContent", true)?.to_string();
    let description = p.opt_str("description")?.map(str::to_string);
    Ok(ChangeArgs {
        path,
        search,
        replace,
        description,
    })
}

/// A file's text with CRLF folded to LF, and the way back to byte offsets.
struct LfView {
    text: Vec<u8>,
    /// Positions (in `text`) of the `\n`s that were `\r\n`.
    crlf: Vec<usize>,
    /// Length of the BOM in front of the original (0 or 3).
    body: usize,
}

impl LfView {
    fn new(bytes: &[u8]) -> LfView {
        let body = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
        let src = &bytes[body..];
        let mut text = Vec::with_capacity(src.len());
        let mut crlf = Vec::new();
        let mut i = 0;
        while i < src.len() {
            if src[i] == b'\r' && src.get(i + 1) == Some(&b'\n') {
                crlf.push(text.len());
                text.push(b'\n');
                i += 2;
            } else {
                text.push(src[i]);
                i += 1;
            }
        }
        LfView { text, crlf, body }
    }

    /// The original byte offset of view offset `v` (a `\r\n` whose `\n` is at
    /// `v` maps to its `\r`).
    fn orig(&self, v: usize) -> usize {
        self.body + v + self.crlf.partition_point(|&p| p < v)
    }

    /// 1-based lines of the ascending view offsets `offsets`, in one pass
    /// over the text up to the last of them.
    fn lines_of(&self, offsets: &[usize]) -> Vec<usize> {
        let (mut line, mut from) = (1, 0);
        offsets
            .iter()
            .map(|&v| {
                line += memchr::memchr_iter(b'\n', &self.text[from..v]).count();
                from = v;
                line
            })
            .collect()
    }
}

/// The occurrences of a SEARCH in a text: how many there are (overlapping
/// ones included) and where the first [`MAX_LINES_REPORTED`] start.
#[derive(Debug, Default, PartialEq, Eq)]
struct Occurrences {
    count: usize,
    /// Start offsets of the first occurrences, ascending.
    first: Vec<usize>,
    /// Unit steps of work spent: what the cost-bound tests count.
    work: u64,
}

impl Occurrences {
    fn record(&mut self, at: usize) {
        self.count += 1;
        if self.first.len() < MAX_LINES_REPORTED {
            self.first.push(at);
        }
    }
}

/// Every start position of `needle` (non-empty) in `hay`, overlapping ones
/// included, in O(`hay` + `needle`) time and O(`needle`) memory.
///
/// memmem (linear per call) finds the first occurrence, which is all the
/// common cases (none, one) need at SIMD speed; the rest is counted by one
/// Knuth–Morris–Pratt pass from one byte after it. Restarting memmem after
/// each hit instead would cost O(`hay` × `needle`) on overlapping
/// repetitions (`a`×n searched for `a`×n/2: 165 s at 1 MB).
fn occurrences(hay: &[u8], needle: &[u8]) -> Occurrences {
    let mut found = Occurrences::default();
    let Some(first) = memmem::find(hay, needle) else {
        found.work = hay.len() as u64 + needle.len() as u64;
        return found;
    };
    found.record(first);
    let table = crate::matching::borders(needle);
    // `matched` bytes of the needle end just before `i`; starting one byte
    // after the first hit with the border of the whole needle keeps every
    // overlapping occurrence that starts after it.
    let mut matched = table[needle.len() - 1];
    let mut steps = (first + needle.len()) as u64 + needle.len() as u64;
    for (i, &b) in hay.iter().enumerate().skip(first + needle.len()) {
        while matched > 0 && needle[matched] != b {
            matched = table[matched - 1];
            steps += 1;
        }
        if needle[matched] == b {
            matched += 1;
        }
        steps += 1;
        if matched == needle.len() {
            found.record(i + 1 - needle.len());
            matched = table[matched - 1];
        }
    }
    found.work = steps;
    found
}

fn to_lf(s: &str) -> Vec<u8> {
    s.replace("\r\n", "\n").into_bytes()
}

/// The lines whose content, trimmed, equals the search's first non-blank
/// line, trimmed: a hint for a `no_match`.
fn candidate_lines(bytes: &[u8], search: &[u8]) -> Vec<usize> {
    let Some(first) = search
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty())
    else {
        return Vec::new();
    };
    let lines = Lines::new(bytes);
    (0..lines.len())
        .filter(|&i| lines.content(i).trim_ascii() == first)
        .map(|i| i + 1)
        .take(MAX_LINES_REPORTED)
        .collect()
}

fn list(lines: &[usize]) -> String {
    lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where and what to write for a modify of `bytes`.
fn plan_modify(
    path: &str,
    bytes: &[u8],
    search: &str,
    replace: &str,
) -> Result<(Vec<u8>, usize), IdeError> {
    let view = LfView::new(bytes);
    let needle = to_lf(search);
    let found = occurrences(&view.text, &needle);
    let lines = view.lines_of(&found.first);
    match found.count {
        1 => {}
        0 => {
            let hint = candidate_lines(bytes, &needle);
            let mut message = format!("searchContent was not found in {path}");
            if !hint.is_empty() {
                message.push_str(&format!(
                    "; its first line appears (ignoring surrounding whitespace) at line{} {}",
                    if hint.len() == 1 { "" } else { "s" },
                    list(&hint)
                ));
            }
            return Err(IdeError::new(IdeErrorKind::NoMatch, message)
                .with("path", path)
                .with("occurrences", 0)
                .with("candidateLines", hint));
        }
        n => {
            return Err(IdeError::new(
                IdeErrorKind::MultipleMatches,
                format!(
                    "searchContent occurs {n} times in {path} (at lines {}); include more surrounding lines so that it occurs once",
                    list(&lines)
                ),
            )
            .with("path", path)
            .with("occurrences", n)
            .with("lines", lines));
        }
    }
    let start = found.first[0];
    let (from, to) = (view.orig(start), view.orig(start + needle.len()));
    let mut replacement = to_lf(replace);
    if Lines::new(bytes).newline() == Newline::CrLf {
        replacement = replacement
            .split(|&b| b == b'\n')
            .collect::<Vec<_>>()
            .join(&b"\r\n"[..]);
    }
    let mut out = Vec::with_capacity(bytes.len() + replacement.len());
    out.extend_from_slice(&bytes[..from]);
    out.extend_from_slice(&replacement);
    out.extend_from_slice(&bytes[to..]);
    Ok((out, lines[0]))
}

/// Apply `args` to the workspace of `fs`.
pub fn apply(fs: &dyn Fs, args: &ChangeArgs) -> Result<ChangeBody, IdeError> {
    let raw = args.path.as_str();
    let g = resolve(fs, raw, GuardOptions::for_writing())
        .map_err(|e| path_error("relativePath", raw, &e))?;
    let path = g.normalized.as_str();
    let kind = fs.kind(&g.target).map_err(|e| io_error(path, &e))?;
    let not_a_file = || {
        IdeError::new(IdeErrorKind::NotAFile, format!("{path} is a directory, not a file")).with("path", path)
    };
    let search = args.search.as_deref().filter(|s| !s.is_empty());
    let (operation, bytes, line, change) = match (search, kind) {
        (None, Some(EntryKind::File)) => {
            return Err(IdeError::new(
                IdeErrorKind::AlreadyExists,
                format!("{path} already exists; give searchContent to modify it"),
            )
            .with("path", path))
        }
        (None, None) => {
            let parent = parent_of(&g.target);
            if fs.kind(parent).map_err(|e| io_error(path, &e))? != Some(EntryKind::Dir) {
                return Err(IdeError::new(
                    IdeErrorKind::NotFound,
                    format!("the directory of {path} does not exist; apply_change does not create directories"),
                )
                .with("path", path)
                .because(Reason::MissingParent));
            }
            let bytes = args.replace.clone().into_bytes();
            let change = Change::Write {
                path: g.target.clone(),
                content: Content::Whole(bytes.clone()),
                before: None,
                mode: None,
            };
            ("create", bytes, 1, Some(change))
        }
        (Some(_), None) => {
            return Err(IdeError::new(
                IdeErrorKind::NotFound,
                format!("file not found: {path} (to create it, leave searchContent empty)"),
            )
            .with("path", path))
        }
        (_, Some(EntryKind::Dir | EntryKind::Other | EntryKind::Symlink)) => {
            return Err(not_a_file())
        }
        (Some(search), Some(EntryKind::File)) => {
            let old = match fs.read(&g.target) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(path)),
                Err(e) => return Err(io_error(path, &e)),
            };
            let (new, line) = plan_modify(path, &old, search, &args.replace)?;
            let change = if new == old {
                None
            } else {
                let mode = fs.mode(&g.target).map_err(|e| io_error(path, &e))?;
                Some(Change::Write {
                    path: g.target.clone(),
                    content: Content::Whole(new.clone()),
                    before: Some(Arc::new(old)),
                    mode: Some(mode),
                })
            };
            ("modify", new, line, change)
        }
    };
    let changed = change.is_some();
    if let Some(change) = change {
        commit(fs, [change]).map_err(|e| {
            IdeError::new(IdeErrorKind::IoError, format!("writing {path} failed: {e}"))
                .with("path", path)
                .with("step", e.step)
                .with("rolledBack", e.rollback())
        })?;
    }
    Ok(ChangeBody {
        path: path.to_string(),
        operation,
        changed,
        line,
        sha256: sha256_hex(&bytes),
        description: args.description.clone(),
    })
}

/// The `apply_change` tool, as [`crate::tools::REGISTRY`] runs it
/// ([`crate::tools::ide::run_with`]).
pub struct ApplyChange;

impl IdeTool for ApplyChange {
    type Args = ChangeArgs;
    type Body = ChangeBody;
    fn parse(params: &Value) -> Result<ChangeArgs, IdeError> {
        parse(params)
    }
    fn execute(fs: &dyn Fs, args: &ChangeArgs) -> Result<ChangeBody, IdeError> {
        apply(fs, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FaultFs, FsOp, RealFs};
    use serde_json::json;

    fn modify(bytes: &[u8], search: &str, replace: &str) -> Result<Vec<u8>, IdeError> {
        plan_modify("f", bytes, search, replace).map(|(b, _)| b)
    }

    #[test]
    fn table() {
        let ok: &[(&[u8], &str, &str, &[u8])] = &[
            (b"a\nb\nc\n", "b\n", "B\n", b"a\nB\nc\n"),
            (b"a\nb\nc\n", "b", "", b"a\n\nc\n"),
            // CRLF file, LF search, LF replacement: endings stay CRLF.
            (
                b"a\r\nb\r\nc\r\n",
                "a\nb\n",
                "x\ny\nz\n",
                b"x\r\ny\r\nz\r\nc\r\n",
            ),
            // CRLF search on an LF file; replacement written in LF.
            (b"a\nb\n", "a\r\nb", "1\r\n2", b"1\n2\n"),
            // A match ending before a CRLF keeps it.
            (b"ab\r\n", "b", "c", b"ac\r\n"),
            // The BOM stays in front and is not matched.
            (b"\xEF\xBB\xBFx\n", "x", "y", b"\xEF\xBB\xBFy\n"),
            // Not UTF-8 around the match: bytes kept.
            (b"\xff\nkey\n", "key", "k", b"\xff\nk\n"),
            // Mixed endings: the first terminated line decides (LF here).
            (b"a\nb\r\n", "b", "c\nd", b"a\nc\nd\r\n"),
            // Whitespace is exact.
            (b"  x = 1;\n", "  x = 1;", "x=1;", b"x=1;\n"),
        ];
        for (file, s, r, want) in ok {
            assert_eq!(modify(file, s, r).unwrap(), *want, "{s:?}");
        }
        let e = modify(b"aaa", "aa", "b").unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::MultipleMatches);
        assert_eq!(e.details["occurrences"], 2);
        assert_eq!(e.details["lines"], json!([1, 1]));
        let e = modify(b"x\ny\nx\n", "x\n", "z").unwrap_err();
        assert_eq!(e.details["lines"], json!([1, 3]));
        let e = modify(b"  foo();\nbar\n  foo();\n", "foo();\nbaz", "z").unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::NoMatch);
        assert_eq!(e.details["candidateLines"], json!([1, 3]));
        let e = modify(b"x = 1;\n", "x  = 1;", "z").unwrap_err();
        assert_eq!(e.details["occurrences"], 0);
    }

    /// Every start position, the slow obvious way.
    fn naive(hay: &[u8], needle: &[u8]) -> Vec<usize> {
        (0..hay.len())
            .filter(|&i| hay[i..].starts_with(needle))
            .collect()
    }

    proptest::proptest! {
        /// Over a two-letter alphabet (so overlaps are common), the count and
        /// the first positions are the naive scan's.
        #[test]
        fn occurrences_are_every_start_position(
            hay in proptest::collection::vec(0u8..2, 0..200),
            needle in proptest::collection::vec(0u8..2, 1..8),
        ) {
            let want = naive(&hay, &needle);
            let got = occurrences(&hay, &needle);
            proptest::prop_assert_eq!(got.count, want.len());
            let first: Vec<usize> = want.into_iter().take(MAX_LINES_REPORTED).collect();
            proptest::prop_assert_eq!(got.first, first);
        }
    }

    /// The audit's shapes: `a`×n searched for `a`×n/2 (every position a hit,
    /// each hit overlapping the next) and `a`×n searched for `a`×(n/2)`b`
    /// (every position almost a hit). Restarting memmem after each hit took
    /// 165 s at 1 MB; the steps here stay within 4 × (F + S) at every size.
    #[test]
    fn work_is_linear_on_overlapping_repetitions() {
        for n in [1 << 10, 1 << 14, 1 << 18] {
            let hay = vec![b'a'; n];
            let half = vec![b'a'; n / 2];
            let mut near = half.clone();
            near.push(b'b');
            for (needle, count) in [(&half, n - n / 2 + 1), (&near, 0)] {
                let got = occurrences(&hay, needle);
                assert_eq!(got.count, count, "n={n}");
                let bound = 4 * (hay.len() + needle.len()) as u64;
                assert!(got.work <= bound, "n={n}: {} steps > {bound}", got.work);
            }
        }
    }

    /// Through the tool: a 256 KB file of `a` lines and a SEARCH of half of
    /// it reports the exact count and the first 20 lines.
    #[test]
    fn reports_every_overlapping_occurrence() {
        let file = "a\n".repeat(1 << 17);
        let search = "a\n".repeat(1 << 16);
        let e = modify(file.as_bytes(), &search, "b").unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::MultipleMatches);
        assert_eq!(e.details["occurrences"], (1 << 16) + 1);
        let lines: Vec<usize> = (1..=MAX_LINES_REPORTED).collect();
        assert_eq!(e.details["lines"], json!(lines));
    }

    #[test]
    fn params() {
        let e = parse(&json!({"searchContent": "a", "replaceContent": "b"})).unwrap_err();
        assert_eq!(e.details["field"], "relativePath");
        let e = parse(&json!({"relativePath": "a", "searchContent": "a"})).unwrap_err();
        assert_eq!(e.details["field"], "replaceContent");
        let e = parse(&json!({"relativePath": "a", "replaceContent": 1})).unwrap_err();
        assert_eq!(e.details["reason"], "wrong_type");
        let a = parse(&json!({"relativePath": "a", "searchContent": "", "replaceContent": ""}))
            .unwrap();
        // An empty search means create: `apply` reads it so.
        assert_eq!(a.search.as_deref(), Some(""));
    }

    #[test]
    fn a_failed_commit_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let real = RealFs::open(dir.path()).unwrap();
        let args = parse(
            &json!({"relativePath": "a.txt", "searchContent": "old", "replaceContent": "new"}),
        )
        .unwrap();
        for step in 0..3 {
            let fs = FaultFs::new(&real, FsOp::is_mutation, Some(step));
            let r = apply(&fs, &args);
            if step < fs.count() {
                assert_eq!(r.unwrap_err().kind, IdeErrorKind::IoError);
                assert_eq!(
                    std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
                    "old\n"
                );
            }
        }
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn keeps_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        std::fs::write(&p, "echo a\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let fs = RealFs::open(dir.path()).unwrap();
        let args =
            parse(&json!({"relativePath": "run.sh", "searchContent": "a", "replaceContent": "b"}))
                .unwrap();
        let doc = apply(&fs, &args).unwrap();
        assert!(doc.changed);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "echo b\n");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
}
