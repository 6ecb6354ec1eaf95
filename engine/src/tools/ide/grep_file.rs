//! `grep_file` (websocket-tool-protocol.md): the lines of one file, one
//! directory or the whole workspace that match a literal or a regex.
//!
//! Matching is per line (C-ide-grep-match): a line's content without its
//! ending (LF or CRLF) and without a leading BOM, so `$` anchors before a
//! `\r\n` and a pattern never spans lines (a pattern containing a newline is
//! refused). `regex: false` (the default) searches the pattern literally;
//! `regex: true` uses the `regex` crate's syntax (RE2-like: no look-around,
//! no back-references); an invalid regex is `invalid_regex`. Case is ignored
//! by default (Unicode simple case folding).
//!
//! What is searched (C-ide-walk, C-ide-grep-file-type): the named file; or
//! the files under the named directory, or the whole workspace, as
//! [`crate::tools::ide::walk_files`] lists them (hidden entries, build output
//! and `.gitignore`d files skipped), narrowed by `file_type` ("all", a
//! ripgrep type name such as `java`, or an extension with its dot, `.kt`).
//! Files containing a NUL byte are binary and are not searched.
//!
//! `limit` (default 20) caps the matching lines returned, across all files, in
//! path order then line order, and so does [`MAX_RESULT_TEXT_BYTES`] of line
//! text; `totalMatches` counts them all and `truncated` says some were left
//! out (C-ide-grep-limit). Each match may carry
//! `context_lines` lines before and after it, independently of its
//! neighbours. Read-only: nothing is written. Listing and reading both go
//! through [`Fs`] (no symlink is followed by the walk).
//!
//! Cost: O(P) to build the matcher for a pattern of P bytes (a regex: at
//! most the two limits above), then O(F) per file of F bytes (memmem and
//! the `regex` crate's search are linear in the line; folding is one pass),
//! holding one file at a time: memory O(P + largest file +
//! [`MAX_RESULT_TEXT_BYTES`]). Sizing a match's window costs O(its lines),
//! paid only while the answer has room. Listing the files is the walk's
//! cost ([`crate::tools::ide::walk_files`]: one listing per directory
//! visited, one read per ignore file).

use ignore::types::{Types, TypesBuilder};
use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::error::{IdeErrorKind, Reason};
use crate::fs::{EntryKind, Fs};
use crate::path_guard::{resolve, GuardOptions};
use crate::text::Lines;
use crate::tools::ide::read_file::not_found;
use crate::tools::ide::{
    io_error, names_root, out_of_range, path_error, walk_files, IdeError, IdeTool, Params,
};

/// The default of `limit`.
pub const DEFAULT_LIMIT: u64 = 20;

/// The most bytes of line text (matches and their context) one result
/// carries: past it no more matches are listed and `truncated` is set, so
/// a huge `limit` with a huge `context_lines` cannot make the answer grow
/// as matches × context (C-ide-grep-limit).
pub const MAX_RESULT_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// What each line listed costs against [`MAX_RESULT_TEXT_BYTES`] on top of
/// its text: about the size of a JSON string value in memory.
pub const LINE_OVERHEAD_BYTES: usize = 32;

/// The name under which an extension filter (`.kt`) is registered (letters
/// and digits only, as the `ignore` crate requires).
const EXT_TYPE: &str = "patchspecextension";

/// What `file_type` selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrepFileType {
    /// Every file (`"all"`).
    All,
    /// A ripgrep type name (`java`, `rust`, `py`, ...).
    Named(String),
    /// An extension with its dot (`.kt`).
    Extension(String),
}

/// The params of `grep_file`, for the catalog's schema; [`parse`] reads
/// them into [`GrepArgs`] (the corpus test holds the two in agreement).
/// Unknown keys (`projectKey`, `webSocketSessionId`) are ignored; `null`
/// counts as absent. Integers must be JSON integers.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[schemars(title = "grep_file params")]
pub struct GrepFileParams {
    /// What to find within one line: a literal (default) or, with
    /// `regex: true`, a regex (RE2-like syntax: no look-around, no
    /// back-references). Must not be empty nor contain a newline.
    #[schemars(length(min = 1), regex(pattern = r"^[^\n]*$"))]
    pub pattern: String,
    /// A file or directory relative to the workspace root; absent: the
    /// whole workspace (hidden entries, build output and `.gitignore`d
    /// files are skipped).
    #[serde(rename = "relativePath")]
    pub relative_path: Option<String>,
    /// Treat `pattern` as a regex (default false).
    pub regex: Option<bool>,
    /// Match case exactly (default false: Unicode simple case folding).
    pub case_sensitive: Option<bool>,
    /// Lines of context before and after each match (default 0).
    #[schemars(range(min = 0))]
    pub context_lines: Option<u64>,
    /// At most this many matching lines (default 20); `totalMatches` counts them all.
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// `all` (default), a ripgrep type name (`java`, `rust`, `py`, ...) or
    /// an extension with its dot (`.kt`).
    pub file_type: Option<String>,
}

/// The success body of `grep_file`: the call's settings as applied, the
/// counts, and the matches in path order then line order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepBody {
    /// The pattern, as given.
    pub pattern: String,
    /// Whether it was a regex.
    pub regex: bool,
    /// Whether case mattered.
    pub case_sensitive: bool,
    /// The path searched, normalised; `null` for the whole workspace.
    pub relative_path: Option<String>,
    /// The file type filter.
    pub file_type: String,
    /// Context lines per side.
    pub context_lines: u64,
    /// The match limit.
    pub limit: u64,
    /// Files read and searched (binary files are not).
    pub files_searched: u64,
    /// Files with at least one match.
    pub files_with_matches: u64,
    /// Every matching line, listed or not.
    pub total_matches: u64,
    /// True when some matches are not listed (`limit` or the size cap).
    pub truncated: bool,
    /// The listed matches.
    pub matches: Vec<GrepMatch>,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The line number (1-based).
    pub line: u64,
    /// The line's text, without its ending.
    pub text: String,
    /// Up to `context_lines` lines before (present when `context_lines` > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Vec<String>>,
    /// Up to `context_lines` lines after (present when `context_lines` > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<String>>,
}

/// What to search: `grep_file`'s params, checked. Built from JSON by the
/// wire, or in Rust with [`GrepArgs::new`] (the wire's defaults) and its
/// public fields. A pattern that is empty or holds a newline, a `limit` of
/// 0 or a `file_type` the wire would refuse is `invalid_params`, as on the
/// wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepArgs {
    /// The pattern, as given.
    pub pattern: String,
    /// `relativePath`; `None` (or `""`, `.`) = the whole workspace.
    pub path: Option<String>,
    /// Is `pattern` a regex?
    pub regex: bool,
    /// Match case exactly?
    pub case_sensitive: bool,
    /// Lines of context on each side of a match.
    pub context_lines: u64,
    /// At most this many matches are returned.
    pub limit: u64,
    /// The files searched.
    pub file_type: GrepFileType,
}

impl GrepArgs {
    /// A search of the whole workspace for `pattern` with the wire's
    /// defaults: a literal, case ignored, no context, at most
    /// 20 matches, every file type.
    pub fn new(pattern: impl Into<String>) -> GrepArgs {
        GrepArgs {
            pattern: pattern.into(),
            path: None,
            regex: false,
            case_sensitive: false,
            context_lines: 0,
            limit: DEFAULT_LIMIT,
            file_type: GrepFileType::All,
        }
    }

    /// `invalid_params` for what no params could give (a `limit` of 0, an
    /// unknown file type) and what [`parse`] refuses in a pattern.
    pub(crate) fn check(&self) -> Result<(), IdeError> {
        check_pattern(&self.pattern)?;
        if self.limit == 0 {
            return Err(out_of_range("limit", 1, u64::MAX, 0));
        }
        let raw = self.file_type.as_wire();
        if parse_file_type(raw)? != self.file_type {
            return Err(unknown_file_type(raw));
        }
        Ok(())
    }
}

impl GrepFileType {
    /// The `file_type` string of the wire: `all`, the type name, or the
    /// extension with its dot.
    fn as_wire(&self) -> &str {
        match self {
            GrepFileType::All => "all",
            GrepFileType::Named(s) | GrepFileType::Extension(s) => s,
        }
    }
}

/// A pattern must not be empty, and matches within one line.
fn check_pattern(pattern: &str) -> Result<(), IdeError> {
    if pattern.is_empty() {
        return Err(IdeError::invalid(
            "pattern",
            Reason::Empty,
            "parameter 'pattern' must not be empty",
        ));
    }
    if pattern.contains('\n') {
        return Err(IdeError::invalid(
            "pattern",
            Reason::InvalidValue,
            "grep_file matches within one line: 'pattern' must not contain a newline",
        ));
    }
    Ok(())
}

/// Check the params (C-ide-params), before any I/O.
pub fn parse(params: &Value) -> Result<GrepArgs, IdeError> {
    let p = Params::of(params)?;
    let pattern = p.req_str("pattern", true)?;
    check_pattern(pattern)?;
    let path = p.opt_str("relativePath")?.map(str::to_string);
    let regex = p.bool_or("regex", false)?;
    let case_sensitive = p.bool_or("case_sensitive", false)?;
    let context_lines = p.int("context_lines", 0, u64::MAX)?.unwrap_or(0);
    let limit = p.int("limit", 1, u64::MAX)?.unwrap_or(DEFAULT_LIMIT);
    let file_type = parse_file_type(p.opt_str("file_type")?.unwrap_or("all"))?;
    Ok(GrepArgs {
        pattern: pattern.to_string(),
        path,
        regex,
        case_sensitive,
        context_lines,
        limit,
        file_type,
    })
}

/// The ripgrep type names `file_type` accepts, sorted.
pub fn type_names() -> Vec<String> {
    let mut b = TypesBuilder::new();
    b.add_defaults();
    let mut names: Vec<String> = b
        .definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    names.sort();
    names
}

fn parse_file_type(raw: &str) -> Result<GrepFileType, IdeError> {
    if raw == "all" {
        return Ok(GrepFileType::All);
    }
    if let Some(ext) = raw.strip_prefix('.') {
        let ok = !ext.is_empty()
            && !ext.starts_with('.')
            && ext
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c));
        if ok {
            return Ok(GrepFileType::Extension(raw.to_string()));
        }
    } else if type_names().iter().any(|n| n == raw) {
        return Ok(GrepFileType::Named(raw.to_string()));
    }
    Err(unknown_file_type(raw))
}

fn unknown_file_type(raw: &str) -> IdeError {
    IdeError::invalid(
        "file_type",
        Reason::InvalidValue,
        format!(
            "unknown file_type {raw:?}: use \"all\", a ripgrep type name (java, kotlin, xml, js, ts, py, rust, go, md, json, yaml, ...) or an extension with its dot (\".kt\")"
        ),
    )
}

fn types_for(ft: &GrepFileType) -> Result<Option<Types>, IdeError> {
    let internal = |e: ignore::Error| {
        IdeError::new(
            IdeErrorKind::InternalError,
            format!("the file_type filter cannot be built: {e}"),
        )
    };
    let mut b = TypesBuilder::new();
    b.add_defaults();
    match ft {
        GrepFileType::All => return Ok(None),
        GrepFileType::Named(name) => {
            b.select(name);
        }
        GrepFileType::Extension(ext) => {
            // The extension was checked to hold no glob metacharacters.
            b.add(EXT_TYPE, &format!("*{ext}")).map_err(internal)?;
            b.select(EXT_TYPE);
        }
    }
    b.build().map(Some).map_err(internal)
}

/// Longest `pattern` accepted with `regex: true`. A regex's parse tree costs
/// a few hundred bytes per pattern byte before the engine's own size check
/// can refuse it; 16 KiB keeps that under ~10 MB and is far above any regex
/// written by hand or by a model.
pub const MAX_REGEX_PATTERN_BYTES: usize = 16 * 1024;

/// The regex engine's limit on a compiled regex (the `regex` crate's
/// default, stated here so the error and the docs can name it).
pub const MAX_COMPILED_REGEX_BYTES: usize = 10 * 1024 * 1024;

/// How a line is tested (C-ide-grep-match).
#[derive(Debug)]
pub enum LineMatcher {
    /// `regex: true`: the `regex` crate's byte regex.
    Regex(Regex),
    /// A literal, case-sensitive: memmem over the line's bytes.
    Literal(memmem::Finder<'static>),
    /// A literal, case ignored: memmem of the folded pattern over the folded
    /// line (see [`CaseFolder`]).
    FoldedLiteral {
        /// The folded pattern's finder.
        finder: memmem::Finder<'static>,
        /// The folding, with its cache.
        folder: CaseFolder,
        /// The folded line, reused from line to line.
        scratch: Vec<u8>,
    },
}

impl LineMatcher {
    /// Does `line` (content without its ending) match? O(line) for a
    /// literal; the regex engine's linear-time search for a regex.
    pub fn is_match(&mut self, line: &[u8]) -> bool {
        match self {
            LineMatcher::Regex(re) => re.is_match(line),
            LineMatcher::Literal(finder) => finder.find(line).is_some(),
            LineMatcher::FoldedLiteral {
                finder,
                folder,
                scratch,
            } => {
                if line.len() < finder.needle().len() {
                    // A character folds to one no greater than itself, so
                    // never to more bytes: the folded line is too short.
                    return false;
                }
                scratch.clear();
                folder.fold_into(line, scratch);
                finder.find(scratch).is_some()
            }
        }
    }
}

/// Unicode simple case folding to one representative per class, the
/// smallest character of its orbit (`k`, `K` and U+212A KELVIN SIGN all fold
/// to `K`): two strings fold equal exactly when the `regex` crate's
/// case-insensitive mode makes them match each other character for
/// character. Bytes that are not UTF-8 are kept as they are (no UTF-8
/// pattern can match across them).
#[derive(Debug, Default)]
pub struct CaseFolder {
    cache: std::collections::HashMap<char, char>,
}

impl CaseFolder {
    /// The representative of `c`'s case-folding class.
    pub fn fold(&mut self, c: char) -> char {
        if c.is_ascii() {
            // The smallest member of an ASCII letter's orbit is its upper
            // case (the others, such as U+212A, are beyond ASCII).
            return c.to_ascii_uppercase();
        }
        *self.cache.entry(c).or_insert_with(|| {
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            class.ranges().first().map_or(c, ClassUnicodeRange::start)
        })
    }

    /// Append the folding of `bytes` to `out`.
    pub fn fold_into(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                let f = self.fold(c);
                let mut buf = [0; 4];
                out.extend_from_slice(f.encode_utf8(&mut buf).as_bytes());
            }
            out.extend_from_slice(chunk.invalid());
        }
    }
}

/// The matcher for `args` (C-ide-grep-match). A literal is never compiled
/// as a regex: memmem, over folded text when case is ignored, in
/// O(pattern) memory whatever its length. A regex longer than
/// [`MAX_REGEX_PATTERN_BYTES`], or whose compiled form exceeds
/// [`MAX_COMPILED_REGEX_BYTES`], is `regex_too_large`; any other regex the
/// engine refuses is `invalid_regex`.
pub fn matcher(args: &GrepArgs) -> Result<LineMatcher, IdeError> {
    if !args.regex {
        let needle = args.pattern.as_bytes();
        if args.case_sensitive {
            return Ok(LineMatcher::Literal(
                memmem::Finder::new(needle).into_owned(),
            ));
        }
        let mut folder = CaseFolder::default();
        let mut folded = Vec::with_capacity(needle.len());
        folder.fold_into(needle, &mut folded);
        return Ok(LineMatcher::FoldedLiteral {
            finder: memmem::Finder::new(&folded).into_owned(),
            folder,
            scratch: Vec::new(),
        });
    }
    let too_large = |reason: Reason, limit: usize, what: &str| {
        IdeError::new(
            IdeErrorKind::RegexTooLarge,
            format!(
                "the regex is too large: {what} exceeds the limit of {limit} bytes; search a literal (regex: false) or a shorter regex"
            ),
        )
        .because(reason)
        .with("limit", limit)
        .with("patternBytes", args.pattern.len())
    };
    if args.pattern.len() > MAX_REGEX_PATTERN_BYTES {
        return Err(too_large(
            Reason::PatternBytes,
            MAX_REGEX_PATTERN_BYTES,
            &format!("its {} bytes", args.pattern.len()),
        ));
    }
    RegexBuilder::new(&args.pattern)
        .case_insensitive(!args.case_sensitive)
        .size_limit(MAX_COMPILED_REGEX_BYTES)
        .build()
        .map(LineMatcher::Regex)
        .map_err(|e| {
            if let regex::Error::CompiledTooBig(limit) = &e {
                return too_large(Reason::CompiledSize, *limit, "its compiled form");
            }
            let full = e.to_string();
            let summary = full
                .lines()
                .rev()
                .find(|l| l.starts_with("error:"))
                .map_or(full.as_str(), |l| l.trim_start_matches("error:").trim())
                .to_string();
            IdeError::new(
                IdeErrorKind::InvalidRegex,
                format!("invalid regex {:?}: {summary}", args.pattern),
            )
            .with("pattern", args.pattern.as_str())
            .with("error", full)
        })
}

/// Search the workspace of `fs`.
pub fn grep(fs: &dyn Fs, args: &GrepArgs) -> Result<GrepBody, IdeError> {
    args.check()?;
    let mut re = matcher(args)?;
    let types = types_for(&args.file_type)?;
    let named = args.path.as_deref().filter(|p| !p.is_empty() && !names_root(p));
    let (shown_path, files) = match named {
        None => (None, walk_files(fs, "", types.as_ref())?),
        Some(raw) => {
            let g = resolve(fs, raw, GuardOptions::default())
                .map_err(|e| path_error("relativePath", raw, &e))?;
            let files = match fs.kind(&g.target) {
                Ok(Some(EntryKind::File)) => vec![g.target.clone()],
                Ok(Some(EntryKind::Dir)) => walk_files(fs, &g.target, types.as_ref())?,
                Ok(_) => return Err(not_found(&g.normalized)),
                Err(e) => return Err(io_error(&g.normalized, &e)),
            };
            (Some(g.normalized), files)
        }
    };
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let context = usize::try_from(args.context_lines).unwrap_or(usize::MAX);
    let mut matches = Vec::new();
    let mut text_left = MAX_RESULT_TEXT_BYTES;
    let (mut searched, mut with_matches, mut total) = (0u64, 0u64, 0u64);
    for path in &files {
        // A file that vanished or cannot be read is skipped, as ripgrep does.
        let Ok(bytes) = fs.read(path) else { continue };
        if memchr::memchr(0, &bytes).is_some() {
            continue;
        }
        searched += 1;
        let lines = Lines::new(&bytes);
        let mut any = false;
        for i in 0..lines.len() {
            if !re.is_match(lines.content(i)) {
                continue;
            }
            any = true;
            total += 1;
            if matches.len() < limit && text_left > 0 {
                let window = if args.context_lines > 0 {
                    i.saturating_sub(context)
                        ..lines.len().min(i.saturating_add(context).saturating_add(1))
                } else {
                    i..i + 1
                };
                // A line counts its text plus what a JSON string costs in
                // memory, so empty lines are paid for too.
                let bytes: usize = window
                    .map(|j| lines.content(j).len() + LINE_OVERHEAD_BYTES)
                    .sum();
                if bytes <= text_left {
                    text_left -= bytes;
                    matches.push(one_match(path, &lines, i, args.context_lines > 0, context));
                } else {
                    // Stop listing (a later, smaller match would break the
                    // path-then-line order of a prefix).
                    text_left = 0;
                }
            }
        }
        with_matches += u64::from(any);
    }
    Ok(GrepBody {
        pattern: args.pattern.clone(),
        regex: args.regex,
        case_sensitive: args.case_sensitive,
        relative_path: shown_path,
        file_type: args.file_type.as_wire().to_string(),
        context_lines: args.context_lines,
        limit: args.limit,
        files_searched: searched,
        files_with_matches: with_matches,
        total_matches: total,
        truncated: total > matches.len() as u64,
        matches,
    })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn one_match(path: &str, lines: &Lines<'_>, i: usize, with_context: bool, c: usize) -> GrepMatch {
    let (before, after) = if with_context {
        let before = (i.saturating_sub(c)..i)
            .map(|j| text(lines.content(j)))
            .collect();
        let after = (i + 1..lines.len().min(i.saturating_add(c).saturating_add(1)))
            .map(|j| text(lines.content(j)))
            .collect();
        (Some(before), Some(after))
    } else {
        (None, None)
    };
    GrepMatch {
        path: path.to_string(),
        line: i as u64 + 1,
        text: text(lines.content(i)),
        before,
        after,
    }
}

/// The `grep_file` tool, as [`crate::tools::REGISTRY`] runs it
/// ([`crate::tools::ide::run_with`]).
pub struct GrepFile;

impl IdeTool for GrepFile {
    type Args = GrepArgs;
    type Body = GrepBody;
    fn parse(params: &Value) -> Result<GrepArgs, IdeError> {
        parse(params)
    }
    fn execute(fs: &dyn Fs, args: &GrepArgs) -> Result<GrepBody, IdeError> {
        grep(fs, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn args(v: Value) -> GrepArgs {
        parse(&v).unwrap()
    }

    fn ws(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (f, c) in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, c).unwrap();
        }
        dir
    }

    fn run_on(dir: &tempfile::TempDir, v: Value) -> Result<Map<String, Value>, IdeError> {
        let fs = crate::fs::RealFs::open(dir.path()).unwrap();
        grep(&fs, &parse(&v)?).map(|body| as_map(&body))
    }

    fn as_map(body: &GrepBody) -> Map<String, Value> {
        match crate::tools::wire::document(body) {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    /// The walk goes through the workspace's `Fs`: a fault listing a
    /// directory or reading an ignore file is `io_error`, not a shorter
    /// answer; a fault reading a searched file skips that file.
    #[test]
    fn a_fault_in_the_walk_is_an_io_error() {
        let dir = ws(&[
            ("a.txt", b"needle\n"),
            ("d/b.txt", b"needle\n"),
            (".gitignore", b"*.log\n"),
        ]);
        let params = json!({"pattern": "needle"});
        crate::tools::ide::tests::assert_walk_faults_reach_the_tool(
            crate::tools::ide::run_with::<GrepFile>,
            &params,
            dir.path(),
            &[(0, "."), (1, ".gitignore"), (2, "d")],
        );
        let params = json!({"pattern": "needle", "relativePath": "d"});
        crate::tools::ide::tests::assert_walk_faults_reach_the_tool(
            crate::tools::ide::run_with::<GrepFile>,
            &params,
            dir.path(),
            &[(0, "."), (1, ".gitignore"), (2, "d")],
        );
    }

    #[test]
    fn defaults() {
        let a = args(json!({"pattern": "x", "projectKey": "p", "webSocketSessionId": "s"}));
        assert_eq!(
            a,
            GrepArgs {
                pattern: "x".into(),
                path: None,
                regex: false,
                case_sensitive: false,
                context_lines: 0,
                limit: 20,
                file_type: GrepFileType::All,
            }
        );
        assert_eq!(a, GrepArgs::new("x"));
        // Kept as given: `grep` reads a root spelling as the whole workspace.
        assert_eq!(
            args(json!({"pattern": "x", "relativePath": "."})).path.as_deref(),
            Some(".")
        );
    }

    #[test]
    fn literal_regex_and_case() {
        let cases: &[(Value, &[u8], bool)] = &[
            (json!({"pattern": "a.c"}), b"abc", false),
            (json!({"pattern": "a.c"}), b"xA.Cx", true),
            (
                json!({"pattern": "a.c", "case_sensitive": true}),
                b"A.C",
                false,
            ),
            (json!({"pattern": "a.c", "regex": true}), b"abc", true),
            (json!({"pattern": "^b$", "regex": true}), b"b", true),
            (json!({"pattern": "ÉTÉ"}), "été".as_bytes(), true),
        ];
        for (v, line, want) in cases {
            assert_eq!(
                matcher(&args(v.clone())).unwrap().is_match(line),
                *want,
                "{v}"
            );
        }
        let e = matcher(&args(json!({"pattern": "(", "regex": true}))).unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::InvalidRegex);
        assert!(e.message.contains("unclosed group"), "{}", e.message);
        // The same text as a literal is fine.
        assert!(matcher(&args(json!({"pattern": "("}))).is_ok());
    }

    #[test]
    fn regex_too_large_is_its_own_kind() {
        let long = "a".repeat(MAX_REGEX_PATTERN_BYTES + 1);
        let e = matcher(&args(json!({"pattern": long, "regex": true}))).unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::RegexTooLarge);
        assert_eq!(e.details["reason"], "pattern_bytes");
        assert_eq!(e.details["limit"], MAX_REGEX_PATTERN_BYTES);
        assert!(e.message.contains("16384"), "{}", e.message);
        // Short, but compiles past the engine's limit.
        let e = matcher(&args(json!({"pattern": "\\w{1000}{1000}", "regex": true}))).unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::RegexTooLarge);
        assert_eq!(e.details["reason"], "compiled_size");
        assert_eq!(e.details["limit"], MAX_COMPILED_REGEX_BYTES);
        // The same text as a literal is searched as a literal.
        let long = "a".repeat(MAX_REGEX_PATTERN_BYTES + 1);
        assert!(matcher(&args(json!({"pattern": long}))).is_ok());
    }

    /// The audit's shape: a 1 MB literal pattern, case ignored, against a
    /// line that holds it and one that falls one byte short. (Compiled as a
    /// regex it took 371 MB and was then refused as `invalid_regex`.)
    #[test]
    fn a_long_literal_is_searched_as_a_literal() {
        let pattern = "Ab".repeat(1 << 19);
        let mut m = matcher(&args(json!({"pattern": pattern}))).unwrap();
        let hit = format!("x{}x", "aB".repeat(1 << 19));
        assert!(m.is_match(hit.as_bytes()));
        let miss = format!("{}A", "aB".repeat((1 << 19) - 1));
        assert!(!m.is_match(miss.as_bytes()));
    }

    proptest::proptest! {
        /// A literal, folded or not, matches exactly the lines its escaped
        /// regex matches (the rule before literals bypassed the regex
        /// engine), over letters whose case classes are unusual: `k`/`K`/
        /// KELVIN SIGN, `s`/`S`/LONG S, `ß`/`ẞ`, Greek sigmas, dotted and
        /// dotless `i`, and a byte that is not UTF-8.
        #[test]
        fn a_literal_matches_as_its_escaped_regex_did(
            pattern in proptest::collection::vec(0usize..14, 1..4),
            line in proptest::collection::vec(0usize..15, 0..10),
            case_sensitive in proptest::bool::ANY,
        ) {
            const PIECES: [&str; 14] = [
                "k", "K", "\u{212A}", "s", "S", "\u{17F}", "ß", "\u{1E9E}",
                "σ", "ς", "Σ", "i", "\u{130}", ".",
            ];
            let pattern: String = pattern.iter().map(|&i| PIECES[i]).collect();
            let mut bytes = Vec::new();
            for &i in &line {
                bytes.extend_from_slice(PIECES.get(i).map_or(&b"\xff"[..], |p| p.as_bytes()));
            }
            let a = args(json!({"pattern": pattern, "case_sensitive": case_sensitive}));
            let want = RegexBuilder::new(&regex::escape(&pattern))
                .case_insensitive(!case_sensitive)
                .build()
                .unwrap()
                .is_match(&bytes);
            proptest::prop_assert_eq!(matcher(&a).unwrap().is_match(&bytes), want);
        }
    }

    /// Every line matches, with a context of every line: the answer stops
    /// at MAX_RESULT_TEXT_BYTES of text instead of growing as lines², and
    /// empty lines count too.
    #[test]
    fn the_answer_text_is_bounded() {
        let line = "a".repeat(1023);
        let n = 4096; // 4 MB of lines: each match's window is the whole file
        let file = format!("{line}\n").repeat(n);
        let dir = ws(&[("a.txt", file.as_bytes())]);
        let doc = run_on(
            &dir,
            json!({"pattern": "a", "limit": 1_000_000, "context_lines": 1_000_000}),
        )
        .unwrap();
        assert_eq!(doc["totalMatches"], n);
        assert_eq!(doc["truncated"], true);
        let shown = doc["matches"].as_array().unwrap().len();
        assert_eq!(
            shown,
            MAX_RESULT_TEXT_BYTES / ((1023 + LINE_OVERHEAD_BYTES) * n)
        );
        let dir = ws(&[("e.txt", "\n".repeat(1 << 16).as_bytes())]);
        let doc = run_on(
            &dir,
            json!({"pattern": "^$", "regex": true, "limit": 1_000_000, "context_lines": 1_000_000}),
        )
        .unwrap();
        let shown = doc["matches"].as_array().unwrap().len();
        assert_eq!(shown, MAX_RESULT_TEXT_BYTES / (LINE_OVERHEAD_BYTES << 16));
    }

    #[test]
    fn file_types() {
        let ft = |s: &str| parse(&json!({"pattern": "x", "file_type": s})).map(|a| a.file_type);
        assert_eq!(ft("java").unwrap(), GrepFileType::Named("java".into()));
        assert_eq!(ft(".kt").unwrap(), GrepFileType::Extension(".kt".into()));
        for bad in ["", "nosuchtype", ".", "..x", ".*", "*.java", "Java"] {
            assert_eq!(ft(bad).unwrap_err().details["field"], "file_type", "{bad}");
        }
    }

    #[test]
    fn crlf_bom_binary_limit_and_context() {
        let dir = ws(&[
            ("a.txt", b"\xEF\xBB\xBFhit\r\nmiss\r\nhit end\r\n"),
            ("b.bin", b"hit\0"),
            ("c.txt", b"1\n2\nhit\n4\n5"),
        ]);
        let doc = run_on(
            &dir,
            json!({"pattern": "^hit", "regex": true, "limit": 2, "context_lines": 1}),
        )
        .unwrap();
        assert_eq!(doc["filesSearched"], 2);
        assert_eq!(doc["filesWithMatches"], 2);
        assert_eq!(doc["totalMatches"], 3);
        assert_eq!(doc["truncated"], true);
        assert_eq!(
            doc["matches"],
            json!([
                {"path": "a.txt", "line": 1, "text": "hit", "before": [], "after": ["miss"]},
                {"path": "a.txt", "line": 3, "text": "hit end", "before": ["miss"], "after": []},
            ])
        );
        let doc = run_on(&dir, json!({"pattern": "end$", "regex": true})).unwrap();
        assert_eq!(doc["totalMatches"], 1);
        assert!(doc["matches"][0].get("before").is_none());
    }

    #[test]
    fn paths() {
        let dir = ws(&[("src/a.txt", b"x\n"), ("b.txt", b"x\n")]);
        let doc = run_on(&dir, json!({"pattern": "x", "relativePath": "src"})).unwrap();
        assert_eq!(
            doc["matches"],
            json!([{"path": "src/a.txt", "line": 1, "text": "x"}])
        );
        let doc = run_on(&dir, json!({"pattern": "x", "relativePath": "./b.txt"})).unwrap();
        assert_eq!(doc["relativePath"], "b.txt");
        let e = run_on(&dir, json!({"pattern": "x", "relativePath": "nope"})).unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::NotFound);
        let e = run_on(&dir, json!({"pattern": "x", "relativePath": "../x"})).unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::OutsideWorkspace);
    }
}
