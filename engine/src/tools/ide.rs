//! Shared plumbing of the four IDE-plugin tools of websocket-tool-protocol.md
//! (`read_file`, `grep_file`, `apply_change`, `call_chain`): parameter
//! checks, the one failure document they share, and the workspace walk.
//!
//! The main type is [`IdeError`]: every failure of these tools is one
//! `{"success": false, "error": {"kind", "message", "details"}}` document
//! (the shape of `apply_patch`'s failures), and [`outcome`] turns a tool's
//! `Result` into the [`ToolOutcome`] the wire carries. [`Params`] reads the
//! params object strictly (an integer is a JSON integer, a boolean a JSON
//! boolean; `null` counts as absent; unknown keys such as `projectKey` and
//! `webSocketSessionId` are ignored). [`walk_files`] lists the files a search
//! visits, with the `ignore` crate (the walker ripgrep uses).
//!
//! Left out on purpose: the message layer (`toolCallId`, `webSocketSessionId`
//! at the root) belongs to the transport; these tools see params only.
//! Documented in `docs/ide-tools.md`; decisions in
//! `docs/clarifications-parts/ide.md` (`C-ide-…`).

use std::io;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::dispatch::ToolOutcome;
use crate::fs::Fs;
use crate::path_guard::PathError;
use crate::tools::{guarded, OpenFs};

/// Directory names that are build output or dependency caches: never entered
/// by a workspace walk, at any depth (C-ide-walk).
pub const SKIPPED_DIRS: &[&str] = &[
    "target",
    "build",
    "out",
    "dist",
    "node_modules",
    "__pycache__",
];

/// One failure of an IDE tool: a snake_case `kind`, a one-line message and
/// machine-readable details.
#[derive(Clone, Debug, PartialEq)]
pub struct IdeError {
    /// The error kind (`invalid_params`, `not_found`, `no_match`, ...).
    pub kind: &'static str,
    /// One line for a human or a model.
    pub message: String,
    /// Where and why, as JSON members.
    pub details: Map<String, Value>,
}

impl IdeError {
    /// An error with no details.
    pub fn new(kind: &'static str, message: impl Into<String>) -> IdeError {
        IdeError {
            kind,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Add one detail member.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> IdeError {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// `invalid_params` for `field` (`reason`: `missing`, `wrong_type`,
    /// `empty`, `out_of_range`, `invalid_value`, `conflict`).
    pub fn invalid(field: &str, reason: &str, message: impl Into<String>) -> IdeError {
        IdeError::new("invalid_params", message)
            .with("field", field)
            .with("reason", reason)
    }

    /// The failure document.
    pub fn to_json(&self) -> Value {
        json!({
            "success": false,
            "error": {"kind": self.kind, "message": self.message, "details": self.details},
        })
    }
}

/// Turn a tool's result into the wire outcome. A success document gets
/// `"success": true` as its first member; a panic inside `run` becomes an
/// `internal_error` document (the engine never panics on input, but a bug
/// must not take the executor down).
pub fn outcome(run: impl FnOnce() -> Result<Map<String, Value>, IdeError>) -> ToolOutcome {
    guarded(
        || document(run()),
        || {
            document(Err(IdeError::new(
                "internal_error",
                "an unexpected error occurred (a bug in the engine)",
            )))
        },
    )
}

fn document(result: Result<Map<String, Value>, IdeError>) -> ToolOutcome {
    match result {
        Ok(body) => {
            let mut doc = Map::new();
            doc.insert("success".into(), Value::Bool(true));
            doc.extend(body);
            ToolOutcome {
                success: true,
                result: Value::Object(doc),
                error: None,
            }
        }
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
                "invalid_params",
                format!("params must be a JSON object, got {}", json_type(value)),
            )
            .with("reason", "not_object")),
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
                "missing",
                format!("missing required parameter '{name}'"),
            )),
            Some(s) if !allow_empty && s.trim().is_empty() => Err(IdeError::invalid(
                name,
                "empty",
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
            _ => Err(IdeError::invalid(
                name,
                "out_of_range",
                if max == u64::MAX {
                    format!("parameter '{name}' must be an integer >= {min}, got {v}")
                } else {
                    format!("parameter '{name}' must be an integer from {min} to {max}, got {v}")
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
            )),
        }
    }
}

fn wrong_type(name: &str, want: &str, got: &Value) -> IdeError {
    IdeError::invalid(
        name,
        "wrong_type",
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
            "not_found",
            format!("file not found: {raw} ({file} is a file)"),
        )
        .with("path", raw),
        PathError::Io { message, .. } => {
            IdeError::new("io_error", format!("{raw}: {message}")).with("path", raw)
        }
        e if e.is_escape() => IdeError::new(
            "outside_workspace",
            format!("{raw} is outside the workspace"),
        )
        .with("path", raw)
        .with("field", field),
        e => IdeError::new("invalid_path", format!("invalid {field}: {e}"))
            .with("path", raw)
            .with("field", field),
    }
}

/// Open the workspace root with `open`.
pub fn open_workspace<'o>(open: &OpenFs<'o>, root: &Path) -> Result<Box<dyn Fs + 'o>, IdeError> {
    open(root).map_err(|e| {
        IdeError::new(
            "io_error",
            format!("the workspace {} cannot be opened: {e}", root.display()),
        )
    })
}

/// An I/O failure on `path`.
pub fn io_error(path: &str, e: &io::Error) -> IdeError {
    IdeError::new("io_error", format!("{path}: {e}")).with("path", path)
}

/// True when `raw` names the workspace root (`.`, `./`, `.//.`): all its
/// components are empty or `.`, and it is not empty.
pub fn names_root(raw: &str) -> bool {
    !raw.is_empty() && raw.split('/').all(|c| c.is_empty() || c == ".")
}

/// A workspace-relative `/`-separated path from a walked path; `None` for
/// names that are not UTF-8 (no tool call can name them).
fn rel_of(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut parts = Vec::new();
    for c in rel.components() {
        parts.push(c.as_os_str().to_str()?.to_string());
    }
    Some(parts.join("/"))
}

/// The regular files a search visits under `start` (a workspace-relative
/// directory, `""` for the root), in path order (component by component,
/// byte-wise). See `C-ide-walk`: hidden entries and [`SKIPPED_DIRS`] are
/// skipped, `.gitignore` and `.ignore` files inside the workspace apply
/// (never those above it, nor the user's global excludes), symlinks are not
/// followed. `types`, when given, keeps only the files it selects.
///
/// A `start` directory that the rules themselves skip (a hidden directory, a
/// build directory, an ignored one) is still searched, as ripgrep searches a
/// path named on its command line: it is then walked as a root of its own.
pub fn walk_files(
    root: &Path,
    start: &str,
    types: Option<&ignore::types::Types>,
) -> Result<Vec<String>, IdeError> {
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
            // On the way down to `start`: only its ancestors (and itself).
            if depth <= prefix.len() {
                return rel[..] == prefix[..depth];
            }
            rel[..prefix.len()] == prefix[..] && !skipped_dir(e)
        });
        collect(root, &builder, &prefix, &mut files, &mut seen_start)?;
    }
    if !seen_start {
        // The rules pruned `start` (or a parent): walk it as its own root.
        let dir = root.join(start);
        let mut builder = builder(&dir, types);
        builder.filter_entry(|e| e.depth() == 0 || !skipped_dir(e));
        let mut ignored = true;
        collect(root, &builder, &prefix, &mut files, &mut ignored)?;
    }
    files.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    files.dedup();
    Ok(files)
}

fn rel_of_entry(e: &ignore::DirEntry) -> Option<Vec<String>> {
    // The walk's root is the workspace (or `start`); its depth-0 path is the
    // base, so the entry's own components past it are what we need. We
    // rebuild them from the path's tail: `depth` components.
    let comps: Vec<_> = e.path().components().collect();
    let depth = e.depth();
    let base = comps.len().checked_sub(depth)?;
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
) -> Result<(), IdeError> {
    for entry in builder.build() {
        let entry = match entry {
            Ok(e) => e,
            // An unreadable directory or a malformed .gitignore: skip it,
            // as ripgrep does, rather than fail the whole search.
            Err(_) => continue,
        };
        let Some(rel) = rel_of(root, entry.path()) else {
            continue;
        };
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir && !prefix.is_empty() && rel.split('/').eq(prefix.iter().map(String::as_str)) {
            *seen_start = true;
        }
        // A commit's staged temp file is never workspace content, even while
        // a concurrent writer holds it (C-commit-temp-name).
        if entry.file_type().is_some_and(|t| t.is_file()) && !crate::commit::is_temp_name(&rel) {
            files.push(rel);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let files = walk_files(dir.path(), "", None).unwrap();
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
        let files = walk_files(dir.path(), "", None).unwrap();
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
            walk_files(dir.path(), "src", None).unwrap(),
            vec!["src/a.txt"]
        );
        assert_eq!(
            walk_files(dir.path(), "target", None).unwrap(),
            vec!["target/d.txt"]
        );
        // A hidden directory is walked as its own root: only the ignore
        // files at and below it apply, not the root's `*.yml`.
        assert_eq!(
            walk_files(dir.path(), ".github", None).unwrap(),
            vec![".github/w.yml"]
        );
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
