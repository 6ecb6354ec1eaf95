//! The four IDE-plugin tools of websocket-tool-protocol.md, one module each
//! ([`read_file`], [`grep_file`], [`apply_change`], [`call_chain`]), and
//! their shared plumbing here: parameter checks, the one failure document
//! they share, the one runner ([`run_with`] over [`IdeTool`]) and the
//! workspace walk.
//!
//! The main type is [`IdeError`]: every failure of these tools is one
//! `{"success": false, "error": {"kind", "message", "details"}}` document
//! (the shape of `apply_patch`'s failures), and [`outcome`] turns a tool's
//! `Result` into the [`ToolOutcome`] the wire carries. [`Params`] reads the
//! params object strictly (an integer is a JSON integer, a boolean a JSON
//! boolean; `null` counts as absent; unknown keys such as `projectKey` and
//! `webSocketSessionId` are ignored). [`walk_files`] lists the files a search
//! visits: a `list_dir` walk through the [`Fs`] seam with ripgrep's rules
//! (the `ignore` crate's gitignore matcher and file types).
//!
//! Left out on purpose: the message layer (`toolCallId`, `webSocketSessionId`
//! at the root) belongs to the transport; these tools see params only.
//! Documented in `docs/ide-tools.md`; decisions in
//! `docs/clarifications.md` (`C-ide-…`).

pub mod apply_change;
pub mod call_chain;
pub mod grep_file;
pub mod read_file;

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::types::Types;
use ignore::Match;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::tools::wire::{Failed, Succeeded};

use crate::call::{ToolCall, ToolOutcome};
use crate::fs::{EntryKind, Fs};
use crate::error::{IdeErrorKind, Reason, ToolError};
use crate::path_guard::PathError;
use crate::layout::{file_name_of, SKIPPED_DIRS};
use crate::tools::{guarded, OpenFs};

/// One failure of an IDE tool: the front door's [`ToolError`] with the IDE
/// tools' kinds, so a failure is the same value whether the tool was called
/// through [`crate::Workspace`] or as JSON. Its `details` are the wire's in
/// the wire's order; `reason`, when set, is also `details.reason`.
pub type IdeError = ToolError<IdeErrorKind>;

impl IdeError {
    /// `invalid_params` for `field` (`reason`: `missing`, `wrong_type`,
    /// `empty`, `out_of_range`, `invalid_value`, `conflict`).
    pub(crate) fn invalid(field: &str, reason: Reason, message: impl Into<String>) -> IdeError {
        IdeError::new(IdeErrorKind::InvalidParams, message)
            .with("field", field)
            .because(reason)
    }

    /// The failure document.
    pub(crate) fn to_json(&self) -> Value {
        crate::tools::wire::document::<IdeDocument<'_, ()>>(&IdeDocument::Refused {
            success: Failed::default(),
            error: IdeErrorBody {
                kind: self.kind.as_str(),
                message: &self.message,
                details: &self.details,
            },
        })
    }
}

/// The result document of an IDE tool whose success body is `T`: the body
/// with `"success": true` first, or the one failure shape all four share.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum IdeDocument<'a, T> {
    /// The tool did what was asked.
    Done {
        /// Always `true` here.
        success: Succeeded,
        /// The tool's own fields.
        #[serde(flatten)]
        body: T,
    },
    /// The tool refused or failed; nothing was changed.
    Refused {
        /// Always `false` here.
        success: Failed,
        /// Why.
        error: IdeErrorBody<'a>,
    },
}

/// `error` of a failed IDE tool call.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct IdeErrorBody<'a> {
    /// The error kind (`invalid_params`, `not_found`, `no_match`,
    /// `multiple_matches`, `already_exists`, `outside_workspace`, ...;
    /// docs/ide-tools.md).
    pub kind: &'a str,
    /// One line for a human or a model.
    pub message: &'a str,
    /// Where and why (`field` and `reason` for `invalid_params`, `path`,
    /// `lines`, `count`, ...).
    pub details: &'a Map<String, Value>,
}

/// Turn a tool's result into the wire outcome. A success document gets
/// `"success": true` as its first member; a panic inside `run` becomes an
/// `internal_error` document (the engine never panics on input, but a bug
/// must not take the executor down).
pub fn outcome<T: Serialize>(run: impl FnOnce() -> Result<T, IdeError>) -> ToolOutcome {
    guarded(
        || document(run()),
        || {
            document::<()>(Err(IdeError::new(
                IdeErrorKind::InternalError,
                "an unexpected error occurred (a bug in the engine)",
            )))
        },
    )
}

/// One IDE tool: how it reads its params and what it does with them. The
/// four tools differ only here; [`run_with`] is the one wrapper around them
/// (params first, then the workspace, then the tool, all inside [`outcome`]).
pub trait IdeTool {
    /// The checked params.
    type Args;
    /// The success body: the document's fields after `"success": true`.
    type Body: Serialize;
    /// Check the params before any filesystem work.
    fn parse(params: &Value) -> Result<Self::Args, IdeError>;
    /// Run the tool on the opened workspace; the success body, without `"success"`.
    fn execute(fs: &dyn Fs, args: &Self::Args) -> Result<Self::Body, IdeError>;
}

/// Run IDE tool `T` on one call, opening the workspace with `open`: the
/// params are checked first (a bad call never touches the workspace), and a
/// panic (a bug) is `internal_error`. The runner [`crate::tools::REGISTRY`]
/// holds for each IDE tool.
pub fn run_with<T: IdeTool>(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    outcome(|| {
        let args = T::parse(call.params)?;
        let fs = open_workspace(open, call.workspace_root)?;
        T::execute(&*fs, &args)
    })
}

fn document<T: Serialize>(result: Result<T, IdeError>) -> ToolOutcome {
    match result {
        Ok(body) => ToolOutcome {
            success: true,
            result: crate::tools::wire::document(&IdeDocument::Done {
                success: Succeeded::default(),
                body,
            }),
            error: None,
        },
        Err(e) => ToolOutcome {
            success: false,
            error: Some(e.message.clone()),
            result: e.to_json(),
        },
    }
}

/// The params object, read strictly.
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    obj: &'a Map<String, Value>,
}

impl<'a> Params<'a> {
    /// The params must be a JSON object.
    pub fn of(value: &'a Value) -> Result<Params<'a>, IdeError> {
        match value.as_object() {
            Some(obj) => Ok(Params { obj }),
            None => Err(IdeError::new(
                IdeErrorKind::InvalidParams,
                format!("params must be a JSON object, got {}", json_type(value)),
            )
            .because(Reason::NotObject)),
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name).filter(|v| !v.is_null())
    }

    /// An optional string (`null` = absent).
    pub fn opt_str(&self, name: &str) -> Result<Option<&'a str>, IdeError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(wrong_type(name, "a string", v)),
        }
    }

    /// A required string; `allow_empty` false also refuses `""` and
    /// whitespace-only strings.
    pub fn req_str(&self, name: &str, allow_empty: bool) -> Result<&'a str, IdeError> {
        match self.opt_str(name)? {
            None => Err(IdeError::invalid(
                name,
                Reason::Missing,
                format!("missing required parameter '{name}'"),
            )),
            Some(s) if !allow_empty && s.trim().is_empty() => Err(IdeError::invalid(
                name,
                Reason::Empty,
                format!("parameter '{name}' must not be empty"),
            )),
            Some(s) => Ok(s),
        }
    }

    /// An optional boolean with its default.
    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, IdeError> {
        match self.get(name) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(wrong_type(name, "a boolean", v)),
        }
    }

    /// An optional JSON integer in `min..=max` (`3.0` and `"3"` are refused).
    pub fn int(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, IdeError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) if n.is_u64() => n.as_u64(),
            Value::Number(n) if n.is_i64() => None,
            _ => return Err(wrong_type(name, "an integer", v)),
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(out_of_range(name, min, max, v)),
        }
    }
}

/// `invalid_params` for the integer `got` of parameter `name`, outside
/// `min..=max` (`u64::MAX`: no upper bound).
pub(crate) fn out_of_range(name: &str, min: u64, max: u64, got: impl std::fmt::Display) -> IdeError {
    IdeError::invalid(
        name,
        Reason::OutOfRange,
        if max == u64::MAX {
            format!("parameter '{name}' must be an integer >= {min}, got {got}")
        } else {
            format!("parameter '{name}' must be an integer from {min} to {max}, got {got}")
        },
    )
    .with("min", min)
    .with(
        "max",
        if max == u64::MAX {
            Value::Null
        } else {
            max.into()
        },
    )
}

fn wrong_type(name: &str, want: &str, got: &Value) -> IdeError {
    IdeError::invalid(
        name,
        Reason::WrongType,
        format!("parameter '{name}' must be {want}, got {}", json_type(got)),
    )
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "an integer",
        Value::Number(_) => "a non-integer number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The error for a path the guard refused (`field` is the parameter's name).
pub fn path_error(field: &str, raw: &str, e: &PathError) -> IdeError {
    match e {
        PathError::NotADirectory { file, .. } => IdeError::new(
            IdeErrorKind::NotFound,
            format!("file not found: {raw} ({file} is a file)"),
        )
        .with("path", raw),
        PathError::Io { message, .. } => {
            IdeError::new(IdeErrorKind::IoError, format!("{raw}: {message}")).with("path", raw)
        }
        e if e.is_escape() => IdeError::new(
            IdeErrorKind::OutsideWorkspace,
            format!("{raw} is outside the workspace"),
        )
        .with("path", raw)
        .with("field", field),
        e => IdeError::new(IdeErrorKind::InvalidPath, format!("invalid {field}: {e}"))
            .with("path", raw)
            .with("field", field),
    }
}

/// Open the workspace root with `open`.
pub fn open_workspace<'o>(open: &OpenFs<'o>, root: &Path) -> Result<Box<dyn Fs + 'o>, IdeError> {
    open(root).map_err(|e| {
        IdeError::new(
            IdeErrorKind::IoError,
            format!("the workspace {} cannot be opened: {e}", root.display()),
        )
    })
}

/// An I/O failure on `path`.
pub fn io_error(path: &str, e: &io::Error) -> IdeError {
    IdeError::new(IdeErrorKind::IoError, format!("{path}: {e}")).with("path", path)
}

/// True when `raw` names the workspace root (`.`, `./`, `.//.`): all its
/// components are empty or `.`, and it is not empty.
pub fn names_root(raw: &str) -> bool {
    !raw.is_empty() && raw.split('/').all(|c| c.is_empty() || c == ".")
}


/// The ignore rules one directory adds (its `.ignore` and `.gitignore`),
/// linked to those of the nearest ancestor in the walk that has any, as the
/// `ignore` crate chains them.
struct DirRules {
    /// The directory, workspace-relative: its rules match paths relative to it.
    dir: String,
    /// From `.ignore`: outranks every `.gitignore`, as in ripgrep.
    ignore: Gitignore,
    /// From `.gitignore`.
    gitignore: Gitignore,
    parent: Option<Rc<DirRules>>,
}

/// True for an error that says what the tree is rather than that reading it
/// failed: the entry vanished, is not a directory (or not a regular file),
/// may not be read, has a name too long to open, or is a symlink loop or a
/// way out of the workspace (a race with a concurrent change). The walk
/// skips such an entry, as ripgrep does; any other error (`EIO`, ...) fails
/// the search with `io_error`, since its result would silently miss files
/// (C-ide-walk).
fn describes_the_tree(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied | io::ErrorKind::InvalidInput
    ) || matches!(
        e.raw_os_error(),
        Some(libc::ENOTDIR | libc::EISDIR | libc::ELOOP | libc::ENAMETOOLONG | libc::EXDEV)
    )
}

/// The path shown for a workspace-relative directory (`.` for the root).
fn shown(dir: &str) -> &str {
    if dir.is_empty() {
        "."
    } else {
        dir
    }
}

/// The rules of the ignore file `name` in `dir`, read through `fs` when the
/// listing `entries` holds it as a file or a symlink. Parsed as the `ignore`
/// crate parses one (line by line, a leading BOM dropped, reading stops at
/// the first line that is not UTF-8, a malformed pattern is left out and the
/// rest applies).
fn ignore_file(
    fs: &dyn Fs,
    dir: &str,
    entries: &[(String, EntryKind)],
    name: &str,
) -> Result<Gitignore, IdeError> {
    let present = entries
        .binary_search_by(|(n, _)| n.as_str().cmp(name))
        .ok()
        .is_some_and(|i| matches!(entries[i].1, EntryKind::File | EntryKind::Symlink));
    if !present {
        return Ok(Gitignore::empty());
    }
    let path = crate::layout::join(dir, name);
    let bytes = match fs.read(&path) {
        Ok(bytes) => bytes,
        Err(e) if describes_the_tree(&e) => return Ok(Gitignore::empty()),
        Err(e) => return Err(io_error(&path, &e)),
    };
    // Rooted at "": every path is matched relative to `dir` (see `admitted`).
    let mut builder = GitignoreBuilder::new("");
    for (i, line) in io::Cursor::new(bytes).lines().enumerate() {
        let Ok(line) = line else { break };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            &line
        };
        // A malformed glob is left out; the file's other lines still apply.
        let _ = builder.add_line(Some(PathBuf::from(&path)), line);
    }
    Ok(builder.build().unwrap_or_else(|_| Gitignore::empty()))
}

/// The rules that apply inside `dir`: its own ignore files chained to the
/// `inherited` ones (the same chain when it has none).
fn rules_inside(
    fs: &dyn Fs,
    dir: &str,
    entries: &[(String, EntryKind)],
    inherited: Option<Rc<DirRules>>,
) -> Result<Option<Rc<DirRules>>, IdeError> {
    let ignore = ignore_file(fs, dir, entries, ".ignore")?;
    let gitignore = ignore_file(fs, dir, entries, ".gitignore")?;
    if ignore.is_empty() && gitignore.is_empty() {
        return Ok(inherited);
    }
    Ok(Some(Rc::new(DirRules {
        dir: dir.to_string(),
        ignore,
        gitignore,
        parent: inherited,
    })))
}

/// Whether the entry `path` survives the ignore rules, the type filter and
/// the hidden-name rule, decided as the `ignore` crate decides it: the
/// nearest `.ignore` that matches, else the nearest `.gitignore` that
/// matches; an ignore verdict skips it, a whitelist (`!pattern`, or a file
/// the type filter selects) keeps it even when its name is hidden.
fn admitted(rules: Option<&DirRules>, path: &str, is_dir: bool, types: Option<&Types>) -> bool {
    let (mut by_ignore, mut by_gitignore) = (Match::None, Match::None);
    let mut node = rules;
    while let Some(r) = node {
        if !by_ignore.is_none() && !by_gitignore.is_none() {
            break;
        }
        let rel = if r.dir.is_empty() {
            path
        } else {
            &path[r.dir.len() + 1..]
        };
        if by_ignore.is_none() {
            by_ignore = r.ignore.matched(rel, is_dir).map(|_| ());
        }
        if by_gitignore.is_none() {
            by_gitignore = r.gitignore.matched(rel, is_dir).map(|_| ());
        }
        node = r.parent.as_deref();
    }
    let verdict = by_ignore.or(by_gitignore);
    if verdict.is_ignore() {
        return false;
    }
    let mut whitelisted = verdict.is_whitelist();
    if let Some(types) = types {
        let by_type = types.matched(path, is_dir);
        if by_type.is_ignore() {
            return false;
        }
        whitelisted |= by_type.is_whitelist();
    }
    whitelisted || !file_name_of(path).starts_with('.')
}

/// The regular files a search visits under `start` (a workspace-relative
/// directory, `""` for the root), in path order (component by component,
/// byte-wise). See `C-ide-walk`: hidden entries (the engine's `.patchspec`
/// among them) and [`SKIPPED_DIRS`] are skipped, `.gitignore` and `.ignore`
/// files inside the workspace apply (never those above it, nor git's
/// `info/exclude` or the user's global excludes; no `.git` is needed),
/// symlinks are not followed, engine temp files are never listed. `types`,
/// when given, keeps only the files it selects.
///
/// A `start` directory that the rules themselves skip (a hidden directory, a
/// build directory, an ignored one) is still searched, as ripgrep searches a
/// path named on its command line: it is then walked as a root of its own,
/// and only the ignore files at and below it apply.
///
/// Everything goes through `fs` (`list_dir` from the root down, ignore files
/// with `read`), so the held root handle confines it and a `FaultFs`
/// reaches it. An entry that vanished or may not be read is skipped; any
/// other I/O error is the tool's `io_error` (`describes_the_tree`).
///
/// Cost: one `list_dir` per directory visited and one `read` per ignore file
/// in one (a skipped directory is never listed; directories above `start`
/// that lead to it are), so O(E + B) for E entries listed and B bytes of
/// ignore files; each entry is then matched against the ignore files of at
/// most R directories above it (only those holding one), O(E × R) glob-set
/// lookups, each linear in the path. No recursion: a pending-directory stack
/// holds O(E) paths. The `the_walk_lists_each_directory_once` test counts it.
///
/// `FaultFs`: crate::fs::FaultFs
pub fn walk_files(
    fs: &dyn Fs,
    start: &str,
    types: Option<&Types>,
) -> Result<Vec<String>, IdeError> {
    let prefix: Vec<&str> = start.split('/').filter(|c| !c.is_empty()).collect();
    let mut files = Vec::new();
    if !walk_below(fs, "", &prefix, types, &mut files)? {
        // The rules pruned `start` (or a parent): walk it as its own root.
        walk_below(fs, &prefix.join("/"), &[], types, &mut files)?;
    }
    files.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    files.dedup();
    Ok(files)
}

/// Walk from `base`, first down the directories `down_to` only (the named
/// directory below `base`), then everything below that; add the files to
/// `files`. True when the end of `down_to` was reached (always, for an
/// empty `down_to`).
fn walk_below(
    fs: &dyn Fs,
    base: &str,
    down_to: &[&str],
    types: Option<&Types>,
    files: &mut Vec<String>,
) -> Result<bool, IdeError> {
    let mut reached = down_to.is_empty();
    // (directory, its depth below `base`, the rules of the directories above it)
    let mut pending: Vec<(String, usize, Option<Rc<DirRules>>)> = vec![(base.to_string(), 0, None)];
    while let Some((dir, depth, inherited)) = pending.pop() {
        let entries = match fs.list_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if describes_the_tree(&e) => continue,
            Err(e) => return Err(io_error(shown(&dir), &e)),
        };
        let rules = rules_inside(fs, &dir, &entries, inherited)?;
        let depth = depth + 1;
        for (name, kind) in &entries {
            let is_dir = *kind == EntryKind::Dir;
            let wanted = match down_to.get(depth - 1) {
                // On the way down to the named directory: only it and its parents.
                Some(step) => name == step,
                None => !(is_dir && SKIPPED_DIRS.contains(&name.as_str())),
            };
            let path = crate::layout::join(&dir, name);
            if !wanted || !admitted(rules.as_deref(), &path, is_dir, types) {
                continue;
            }
            match kind {
                EntryKind::Dir => {
                    reached |= depth == down_to.len();
                    pending.push((path, depth, rules.clone()));
                }
                // A commit's staged temp file is never workspace content,
                // even while a concurrent writer holds it (C-commit-temp-name).
                EntryKind::File if !crate::layout::is_temp_name(&path) => files.push(path),
                _ => {}
            }
        }
    }
    Ok(reached)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::call::{Session, ToolCall};
    use crate::fs::{FaultFs, FsOp, RealFs};
    use crate::tools::OpenFs;
    use proptest::prelude::*;
    use serde_json::json;

    /// Call a workspace-walking tool (`grep_file`, `call_chain`) on `root`
    /// through a [`FaultFs`]: a fault at the `k`-th listing or read gives
    /// the tool's `io_error` document on `path`, for each `(k, path)` of
    /// `walk_steps`; a panic at the first listing gives its `internal_error`.
    pub(crate) fn assert_walk_faults_reach_the_tool(
        run_with: fn(&ToolCall<'_>, &OpenFs<'_>) -> ToolOutcome,
        params: &Value,
        root: &Path,
        walk_steps: &[(usize, &str)],
    ) {
        let real = RealFs::open(root).unwrap();
        let session = Session::default();
        let call = ToolCall {
            tool_name: "walking tool",
            params,
            workspace_root: root,
            session: &session,
        };
        let listing_or_reading = |op| matches!(op, FsOp::ListDir | FsOp::Read);
        let fine = run_with(&call, &|_| {
            Ok(Box::new(FaultFs::new(&real, listing_or_reading, None)))
        });
        assert!(fine.success, "{}", fine.result);
        for &(k, path) in walk_steps {
            let out = run_with(&call, &|_| {
                Ok(Box::new(FaultFs::new(&real, listing_or_reading, Some(k))))
            });
            assert!(!out.success, "step {k}: {}", out.result);
            assert_eq!(out.result["error"]["kind"], "io_error", "step {k}");
            assert_eq!(out.result["error"]["details"]["path"], path, "step {k}");
        }
        let out = run_with(&call, &|_| {
            Ok(Box::new(FaultFs::panicking(
                &real,
                |op| op == FsOp::ListDir,
                0,
            )))
        });
        assert_eq!(
            out.result["error"]["kind"], "internal_error",
            "{}",
            out.result
        );
    }

    fn real(dir: &tempfile::TempDir) -> RealFs {
        RealFs::open(dir.path()).unwrap()
    }

    fn ws(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        }
        dir
    }

    #[test]
    fn the_walk_never_lists_an_engine_temp_file() {
        let dir = ws(&[
            "a.txt",
            "d/b.txt",
            "d/b.txt.0123456789abcdef.apply-patch.tmp",
            "notes.apply-patch.tmp",
        ]);
        let files = walk_files(&real(&dir), "", None).unwrap();
        assert_eq!(files, ["a.txt", "d/b.txt", "notes.apply-patch.tmp"]);
    }

    #[test]
    fn the_walk_skips_hidden_build_and_ignored_entries_in_path_order() {
        let dir = ws(&[
            "b.txt",
            "a/z.txt",
            "a.txt",
            ".git/config",
            ".hidden",
            "target/x.txt",
            "src/build/gen.txt",
            "node_modules/m/index.js",
            "logs/x.log",
            "keep.log",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "logs/\n").unwrap();
        let files = walk_files(&real(&dir), "", None).unwrap();
        assert_eq!(files, vec!["a/z.txt", "a.txt", "b.txt", "keep.log"]);
    }

    #[test]
    fn a_named_directory_limits_the_walk_and_is_searched_even_if_skipped() {
        let dir = ws(&[
            "src/a.txt",
            "src/.h/b.txt",
            "other/c.txt",
            "target/d.txt",
            ".github/w.yml",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "*.yml\n").unwrap();
        assert_eq!(
            walk_files(&real(&dir), "src", None).unwrap(),
            vec!["src/a.txt"]
        );
        assert_eq!(
            walk_files(&real(&dir), "target", None).unwrap(),
            vec!["target/d.txt"]
        );
        // A hidden directory is walked as its own root: only the ignore
        // files at and below it apply, not the root's `*.yml`.
        assert_eq!(
            walk_files(&real(&dir), ".github", None).unwrap(),
            vec![".github/w.yml"]
        );
    }

    /// The walker this module had before the walk went through [`Fs`]:
    /// `ignore::WalkBuilder` on the real root, kept as the oracle that the
    /// `Fs` walk must agree with (C-ide-walk's semantics are ripgrep's).
    mod ripgrep_oracle {
        use crate::layout::SKIPPED_DIRS;
        use std::path::Path;

        fn rel_of(root: &Path, path: &Path) -> Option<String> {
            let rel = path.strip_prefix(root).ok()?;
            let mut parts = Vec::new();
            for c in rel.components() {
                parts.push(c.as_os_str().to_str()?.to_string());
            }
            Some(parts.join("/"))
        }

        fn rel_of_entry(e: &ignore::DirEntry) -> Option<Vec<String>> {
            let comps: Vec<_> = e.path().components().collect();
            let base = comps.len().checked_sub(e.depth())?;
            comps[base..]
                .iter()
                .map(|c| c.as_os_str().to_str().map(str::to_string))
                .collect()
        }

        fn skipped_dir(e: &ignore::DirEntry) -> bool {
            e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n))
        }

        fn builder(dir: &Path, types: Option<&ignore::types::Types>) -> ignore::WalkBuilder {
            let mut b = ignore::WalkBuilder::new(dir);
            b.standard_filters(true)
                .hidden(true)
                .parents(false)
                .ignore(true)
                .git_ignore(true)
                .git_global(false)
                .git_exclude(false)
                .require_git(false)
                .follow_links(false)
                .threads(1);
            if let Some(t) = types {
                b.types(t.clone());
            }
            b
        }

        fn collect(
            root: &Path,
            builder: &ignore::WalkBuilder,
            prefix: &[String],
            files: &mut Vec<String>,
            seen_start: &mut bool,
        ) {
            for entry in builder.build().flatten() {
                let Some(rel) = rel_of(root, entry.path()) else {
                    continue;
                };
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if is_dir
                    && !prefix.is_empty()
                    && rel.split('/').eq(prefix.iter().map(String::as_str))
                {
                    *seen_start = true;
                }
                if entry.file_type().is_some_and(|t| t.is_file())
                    && !crate::layout::is_temp_name(&rel)
                {
                    files.push(rel);
                }
            }
        }

        pub fn walk(root: &Path, start: &str, types: Option<&ignore::types::Types>) -> Vec<String> {
            let prefix: Vec<String> = start
                .split('/')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            let mut seen_start = prefix.is_empty();
            let mut files = Vec::new();
            {
                let keep = prefix.clone();
                let mut builder = builder(root, types);
                builder.filter_entry(move |e| {
                    let prefix = &keep;
                    let Some(rel) = rel_of_entry(e) else {
                        return false;
                    };
                    let depth = rel.len();
                    if depth <= prefix.len() {
                        return rel[..] == prefix[..depth];
                    }
                    rel[..prefix.len()] == prefix[..] && !skipped_dir(e)
                });
                collect(root, &builder, &prefix, &mut files, &mut seen_start);
            }
            if !seen_start {
                let mut builder = builder(&root.join(start), types);
                builder.filter_entry(|e| e.depth() == 0 || !skipped_dir(e));
                let mut ignored = true;
                collect(root, &builder, &prefix, &mut files, &mut ignored);
            }
            files.sort_by(|a, b| a.split('/').cmp(b.split('/')));
            files.dedup();
            files
        }
    }

    fn java_types() -> Types {
        let mut b = ignore::types::TypesBuilder::new();
        b.add_defaults();
        b.select("java");
        b.build().unwrap()
    }

    fn txt_types() -> Types {
        let mut b = ignore::types::TypesBuilder::new();
        b.add_defaults();
        b.add("ext", "*.txt").unwrap();
        b.select("ext");
        b.build().unwrap()
    }

    /// A tree with nested ignore files, negations (of a file, of a hidden
    /// file, of a directory), `.ignore` outranking `.gitignore`, hidden
    /// entries, build directories, symlinks to a file and to a directory,
    /// and a hidden file that a type filter selects.
    fn nested_tree() -> tempfile::TempDir {
        let dir = ws(&[
            "README.md",
            "notes.log",
            ".env",
            ".hidden/h.txt",
            ".github/w.yml",
            "src/Main.java",
            "src/.Secret.java",
            "src/gen/G.java",
            "src/gen/keep.txt",
            "src/build/B.java",
            "src/deep/a/b/c.txt",
            "src/deep/a/b/skip.tmp",
            "docs/guide.md",
            "docs/draft.md",
            "docs/inner/x.md",
            "logs/today.log",
            "target/t.txt",
            "node_modules/m/i.js",
        ]);
        let write = |p: &str, s: &str| std::fs::write(dir.path().join(p), s).unwrap();
        write(
            ".gitignore",
            "*.log\n!notes.log\n!.env\nlogs/\n*.tmp\n!.github/\n",
        );
        write("src/.gitignore", "gen/\n!gen/keep.txt\n");
        write("docs/.gitignore", "draft.md\n");
        write("docs/.ignore", "!draft.md\ninner\n");
        std::os::unix::fs::symlink("src", dir.path().join("link-dir")).unwrap();
        std::os::unix::fs::symlink("README.md", dir.path().join("link-file")).unwrap();
        dir
    }

    #[test]
    fn a_nested_tree_walks_as_ripgrep_lists_it() {
        let dir = nested_tree();
        let fs = real(&dir);
        let everything = walk_files(&fs, "", None).unwrap();
        assert_eq!(
            everything,
            [
                ".env",
                ".github/w.yml",
                "README.md",
                "docs/draft.md",
                "docs/guide.md",
                "notes.log",
                "src/Main.java",
                "src/deep/a/b/c.txt",
            ]
        );
        // A type filter whitelists a hidden file it selects, as in ripgrep.
        let java = java_types();
        assert_eq!(
            walk_files(&fs, "", Some(&java)).unwrap(),
            ["src/.Secret.java", "src/Main.java"]
        );
        // `gen/` is ignored, so `!gen/keep.txt` cannot bring its file back;
        // named, the directory is walked as its own root.
        assert_eq!(
            walk_files(&fs, "src/gen", None).unwrap(),
            ["src/gen/G.java", "src/gen/keep.txt"]
        );
        assert_eq!(
            walk_files(&fs, "docs/inner", None).unwrap(),
            ["docs/inner/x.md"]
        );
        assert_eq!(walk_files(&fs, ".hidden", None).unwrap(), [".hidden/h.txt"]);
        for (start, types) in [
            ("", None),
            ("", Some(&java)),
            ("src/gen", None),
            ("docs", None),
        ] {
            assert_eq!(
                walk_files(&fs, start, types).unwrap(),
                ripgrep_oracle::walk(dir.path(), start, types),
                "{start:?}"
            );
        }
    }

    /// One `list_dir` per directory visited, one `read` per ignore file in
    /// one; skipped directories (hidden, build output, ignored) are never
    /// listed.
    #[test]
    fn the_walk_lists_each_directory_once() {
        let dir = nested_tree();
        let real = real(&dir);
        let counting = FaultFs::new(&real, |_| true, None);
        walk_files(&counting, "", None).unwrap();
        let log = counting.log();
        let listed: Vec<&str> = log
            .iter()
            .filter(|(op, _)| *op == FsOp::ListDir)
            .map(|(_, p)| p.as_str())
            .collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "",
                ".github",
                "docs",
                "src",
                "src/deep",
                "src/deep/a",
                "src/deep/a/b"
            ]
        );
        let read: Vec<&str> = log
            .iter()
            .filter(|(op, _)| *op == FsOp::Read)
            .map(|(_, p)| p.as_str())
            .collect();
        assert_eq!(read.len(), 4, "{read:?}");
        assert!(read.iter().all(|p| p.ends_with("ignore")), "{read:?}");
        assert_eq!(log.len(), listed.len() + read.len(), "{log:?}");
    }

    /// A fault at any step of the walk (a listing or an ignore file) is the
    /// tool's `io_error` naming the path; never a panic, never a silently
    /// shorter list.
    #[test]
    fn a_fault_at_any_step_of_the_walk_is_an_io_error() {
        let dir = nested_tree();
        let real = real(&dir);
        let steps = {
            let counting = FaultFs::new(&real, |_| true, None);
            walk_files(&counting, "src", None).unwrap();
            counting.log()
        };
        assert!(steps.len() >= 5, "{steps:?}");
        for (k, (op, path)) in steps.iter().enumerate() {
            let faulty = FaultFs::new(&real, |_| true, Some(k));
            let e = walk_files(&faulty, "src", None).unwrap_err();
            assert_eq!(e.kind, IdeErrorKind::IoError, "step {k} ({op:?} {path})");
            let shown = if path.is_empty() { "." } else { path.as_str() };
            assert_eq!(e.details["path"], shown, "step {k}");
        }
    }

    #[test]
    fn errors_that_describe_the_tree_are_skipped_others_are_not() {
        for errno in [
            libc::ENOENT,
            libc::EACCES,
            libc::ENOTDIR,
            libc::EISDIR,
            libc::ELOOP,
            libc::ENAMETOOLONG,
            libc::EXDEV,
        ] {
            assert!(
                describes_the_tree(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
        for errno in [libc::EIO, libc::EMFILE, libc::ENOMEM] {
            assert!(
                !describes_the_tree(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
        assert!(!describes_the_tree(&io::Error::other("injected")));
    }

    /// Ignore files that cannot be read as text rules: not UTF-8 (read up to
    /// there), a FIFO (never opened), a directory, a dangling symlink.
    #[test]
    fn odd_ignore_files_are_read_as_far_as_they_go() {
        let dir = ws(&["a.txt", "b.txt", "c.txt", "d/x.txt", "e/y.txt", "f/z.txt"]);
        std::fs::write(
            dir.path().join(".gitignore"),
            b"\xef\xbb\xbfa.txt\nb.txt\n\xff\nc.txt\n",
        )
        .unwrap();
        let fifo =
            std::ffi::CString::new(dir.path().join("d/.gitignore").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        std::fs::create_dir(dir.path().join("e/.gitignore")).unwrap();
        std::os::unix::fs::symlink("nowhere", dir.path().join("f/.ignore")).unwrap();
        let files = walk_files(&real(&dir), "", None).unwrap();
        assert_eq!(files, ["c.txt", "d/x.txt", "e/y.txt", "f/z.txt"]);
    }

    fn arb_tree() -> impl Strategy<Value = Vec<(usize, usize, usize)>> {
        prop::collection::vec(
            (0..TREE_DIRS.len(), 0..TREE_NAMES.len(), 0..RULE_SETS.len()),
            1..24,
        )
    }

    const TREE_DIRS: &[&str] = &[
        "",
        "a",
        "a/b",
        ".h",
        ".h/c",
        "target",
        "a/node_modules",
        "a/.x",
    ];
    const TREE_NAMES: &[&str] = &[
        "f.txt",
        "g.java",
        ".e",
        ".E.java",
        "t.log",
        "a",
        "b",
        "c",
        ".gitignore",
        ".ignore",
        "link",
        "f.txt.0123456789abcdef.apply-patch.tmp",
    ];
    const RULE_SETS: &[&str] = &[
        "*.txt\n",
        "!f.txt\n*.log\n",
        "b/\n!.e\n",
        "/a\n",
        "*\n!*/\n!g.java\n",
        "!.h\n!.h/\n",
        "c\n# comment\n\\!x\n[\n",
        "**/t.log\n!a/**/t.log\n",
        "\u{feff}g.java\n",
        "!target/\n",
    ];

    /// Build the tree; `rules` are the root's `.gitignore` and `.ignore`
    /// (always both, so the two kinds of ignore file meet).
    fn build_tree(root: &Path, rules: (usize, usize), tree: &[(usize, usize, usize)]) {
        std::fs::write(root.join(".gitignore"), RULE_SETS[rules.0]).unwrap();
        std::fs::write(root.join(".ignore"), RULE_SETS[rules.1]).unwrap();
        for &(d, n, r) in tree {
            let dir = root.join(TREE_DIRS[d]);
            if std::fs::create_dir_all(&dir).is_err() {
                continue;
            }
            let path = dir.join(TREE_NAMES[n]);
            if path.symlink_metadata().is_ok() {
                continue;
            }
            let _ = match TREE_NAMES[n] {
                ".gitignore" | ".ignore" => std::fs::write(&path, RULE_SETS[r]),
                "link" if r % 2 == 0 => std::os::unix::fs::symlink("..", &path),
                "link" => std::os::unix::fs::symlink("f.txt", &path),
                "a" | "b" | "c" => std::fs::create_dir(&path),
                _ => std::fs::write(&path, "x\n"),
            };
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The `Fs` walk lists exactly what ripgrep's walker lists, for any
        /// tree built from hidden names, build directories, nested ignore
        /// files with negations, symlinks and temp files; from the root or a
        /// named (possibly hidden, skipped or ignored) directory; with or
        /// without a type filter.
        #[test]
        fn the_walk_agrees_with_ripgreps_walker(
            tree in arb_tree(),
            rules in (0..RULE_SETS.len(), 0..RULE_SETS.len()),
            start in 0..TREE_DIRS.len(),
            types in 0..3usize,
        ) {
            let dir = tempfile::tempdir().unwrap();
            build_tree(dir.path(), rules, &tree);
            let start = TREE_DIRS[start];
            prop_assume!(dir.path().join(start).is_dir());
            let types = match types {
                0 => None,
                1 => Some(java_types()),
                _ => Some(txt_types()),
            };
            let ours = walk_files(&real(&dir), start, types.as_ref()).unwrap();
            let theirs = ripgrep_oracle::walk(dir.path(), start, types.as_ref());
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn root_spellings() {
        assert!(names_root("."));
        assert!(names_root("./"));
        assert!(!names_root(""));
        assert!(!names_root("./a"));
    }

    #[test]
    fn integers_are_strict() {
        let v = json!({"a": 3.0, "b": "3", "c": -1, "d": 5, "e": null});
        let p = Params::of(&v).unwrap();
        assert_eq!(
            p.int("a", 1, 10).unwrap_err().details["reason"],
            "wrong_type"
        );
        assert_eq!(
            p.int("b", 1, 10).unwrap_err().details["reason"],
            "wrong_type"
        );
        assert_eq!(
            p.int("c", 1, 10).unwrap_err().details["reason"],
            "out_of_range"
        );
        assert_eq!(
            p.int("d", 1, 4).unwrap_err().details["reason"],
            "out_of_range"
        );
        assert_eq!(p.int("d", 1, 10).unwrap(), Some(5));
        assert_eq!(p.int("e", 1, 10).unwrap(), None);
        assert_eq!(p.int("zz", 1, 10).unwrap(), None);
    }
}
