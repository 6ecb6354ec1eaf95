//! `read_file` (websocket-tool-protocol.md): a file's text, whole or a
//! window of lines.
//!
//! The window, 1-based and inclusive (C-ide-read-window): `line` with
//! `context_lines` (default 20) gives `[line - c, line + c]`; `start_line`
//! and/or `end_line` give an explicit range (a missing end is the last line, a
//! missing start the first); neither gives the whole file. `line` together
//! with `start_line` or `end_line` is refused: two windows, no obvious union.
//! A window is clamped to the file, except that it must start inside it:
//! `start_line` or `line` past the last line is `line_out_of_range`, with the
//! line count (C-ide-read-range).
//!
//! Lines are those of [`crate::text::Lines`]: `content` is the window's bytes
//! exactly, endings included (CRLF stays CRLF), without a leading BOM; bytes
//! that are not UTF-8 become U+FFFD and the document says
//! `"encoding": "utf-8-lossy"`. Read-only: nothing is written.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

pub use crate::tools::tul::read_file::Encoding;

use crate::error::{IdeErrorKind, Reason};
use crate::fs::{EntryKind, Fs};
use crate::path_guard::{resolve, GuardOptions};
use crate::text::Lines;
use crate::tools::ide::{io_error, out_of_range, path_error, IdeError, IdeTool, Params};

/// The default of `context_lines`.
pub const DEFAULT_CONTEXT_LINES: u64 = 20;

/// Which lines to return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadWindow {
    /// The whole file.
    Whole,
    /// `start_line` and/or `end_line`.
    Range {
        /// First line (1-based), `None` = 1.
        start: Option<u64>,
        /// Last line (1-based, inclusive), `None` = the last line.
        end: Option<u64>,
    },
    /// `line` ± `context`.
    Around {
        /// The centre line (1-based).
        line: u64,
        /// Lines on each side.
        context: u64,
    },
}

/// What to read: `read_file`'s params, checked. Built from JSON by the
/// wire, or in Rust from its fields: `ReadArgs { path: "src/Main.java".into(),
/// window: ReadWindow::Whole }` (the wire's default `context_lines` for a
/// [`ReadWindow::Around`] is 20). A window with a line 0, or an end before its
/// start, is refused as `invalid_params`, as on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadArgs {
    /// The path as given.
    pub path: String,
    /// The lines wanted.
    pub window: ReadWindow,
}

/// The params of `read_file`, for the catalog's schema; [`parse`] reads
/// them into [`ReadArgs`] (the corpus test holds the two in agreement).
/// Unknown keys (`projectKey`, `webSocketSessionId`) are ignored; `null`
/// counts as absent. Integers must be JSON integers.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[schemars(title = "read_file params")]
pub struct ReadFileParams {
    /// The file, relative to the workspace root (`/`-separated).
    #[serde(rename = "relativePath")]
    #[schemars(regex(pattern = r"\S"))]
    pub relative_path: String,
    /// The line to centre the window on (1-based); not together with
    /// `start_line`/`end_line`.
    #[schemars(range(min = 1))]
    pub line: Option<u64>,
    /// Lines on each side of `line` (default 20).
    #[schemars(range(min = 0))]
    pub context_lines: Option<u64>,
    /// First line of an explicit range (1-based, inclusive).
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Last line of an explicit range (inclusive; clamped to the file).
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

/// The success body of `read_file`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadBody {
    /// The path, normalised.
    pub path: String,
    /// Lines in the file.
    pub total_lines: u64,
    /// First line returned (1-based).
    pub start_line: u64,
    /// Last line returned (inclusive; `startLine - 1` when none).
    pub end_line: u64,
    /// The window's text, line endings included, without a leading BOM.
    pub content: String,
    /// Present when bytes that are not UTF-8 became U+FFFD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
}

/// Check the params (C-ide-params), before any I/O.
pub fn parse(params: &Value) -> Result<ReadArgs, IdeError> {
    let p = Params::of(params)?;
    let path = p.req_str("relativePath", false)?.to_string();
    let start = p.int("start_line", 1, u64::MAX)?;
    let end = p.int("end_line", 1, u64::MAX)?;
    let line = p.int("line", 1, u64::MAX)?;
    let context = p
        .int("context_lines", 0, u64::MAX)?
        .unwrap_or(DEFAULT_CONTEXT_LINES);
    let window = match (line, start, end) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(IdeError::invalid(
                "line",
                Reason::Conflict,
                "'line' cannot be combined with 'start_line' or 'end_line': give a line (with context_lines) or a range",
            ))
        }
        (Some(line), None, None) => ReadWindow::Around { line, context },
        (None, None, None) => ReadWindow::Whole,
        (None, start, end) => ReadWindow::Range { start, end },
    };
    window.check()?;
    Ok(ReadArgs { path, window })
}

impl ReadWindow {
    /// `invalid_params` for a window no params could give: a line 0, or an
    /// end before the start (C-ide-read-window). What [`parse`] reads from
    /// JSON passes; a window built in Rust is checked here.
    pub(crate) fn check(self) -> Result<(), IdeError> {
        let at_least_one = |name: &str, value: Option<u64>| match value {
            Some(0) => Err(out_of_range(name, 1, u64::MAX, 0)),
            _ => Ok(()),
        };
        match self {
            ReadWindow::Whole => Ok(()),
            ReadWindow::Around { line, .. } => at_least_one("line", Some(line)),
            ReadWindow::Range { start, end } => {
                at_least_one("start_line", start)?;
                at_least_one("end_line", end)?;
                match (start, end) {
                    (Some(s), Some(e)) if e < s => Err(IdeError::invalid(
                        "end_line",
                        Reason::OutOfRange,
                        format!("end_line ({e}) is before start_line ({s})"),
                    )),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// The 1-based inclusive lines `[first, last]` of `window` in a file of `n`
/// lines; `[1, 0]` is the empty window of an empty file.
pub fn resolve_window(window: ReadWindow, n: u64) -> Result<(u64, u64), IdeError> {
    let out_of_range = |field: &str, value: u64| {
        IdeError::new(
            IdeErrorKind::LineOutOfRange,
            format!(
                "{field} {value} is past the end of the file, which has {n} line{}",
                if n == 1 { "" } else { "s" }
            ),
        )
        .with("field", field)
        .with("value", value)
        .with("totalLines", n)
    };
    match window {
        ReadWindow::Whole => Ok((1, n)),
        ReadWindow::Range { start, end } => {
            let first = start.unwrap_or(1);
            if start.is_some() && first > n {
                return Err(out_of_range("start_line", first));
            }
            Ok((first, end.map_or(n, |e| e.min(n))))
        }
        ReadWindow::Around { line, context } => {
            if line > n {
                return Err(out_of_range("line", line));
            }
            Ok((
                line.saturating_sub(context).max(1),
                line.saturating_add(context).min(n),
            ))
        }
    }
}

/// Read `args` from the workspace of `fs`.
pub fn read(fs: &dyn Fs, args: &ReadArgs) -> Result<ReadBody, IdeError> {
    args.window.check()?;
    let raw = args.path.as_str();
    let guarded = resolve(fs, raw, GuardOptions::default())
        .map_err(|e| path_error("relativePath", raw, &e))?;
    let path = guarded.normalized.as_str();
    match fs.kind(&guarded.target) {
        Ok(Some(EntryKind::File)) => {}
        Ok(Some(EntryKind::Dir)) => {
            return Err(
                IdeError::new(IdeErrorKind::NotAFile, format!("{path} is a directory, not a file"))
                    .with("path", path),
            )
        }
        Ok(_) => return Err(not_found(path)),
        Err(e) => return Err(io_error(path, &e)),
    }
    let bytes = match fs.read(&guarded.target) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(path)),
        Err(e) => return Err(io_error(path, &e)),
    };
    let lines = Lines::new(&bytes);
    let n = lines.len() as u64;
    let (first, last) = resolve_window(args.window, n)?;
    let (from, to) = if last < first {
        (lines.start(0), lines.start(0))
    } else {
        // Both are within 1..=n here, so the casts cannot truncate.
        (lines.start(first as usize - 1), lines.start(last as usize))
    };
    let text = String::from_utf8_lossy(&bytes[from..to]);
    let lossy = matches!(text, std::borrow::Cow::Owned(_));
    Ok(ReadBody {
        path: path.to_string(),
        total_lines: n,
        start_line: first,
        end_line: last,
        content: text.into_owned(),
        encoding: lossy.then_some(Encoding::Utf8Lossy),
    })
}

/// The `not_found` error for `path`.
pub fn not_found(path: &str) -> IdeError {
    IdeError::new(IdeErrorKind::NotFound, format!("file not found: {path}")).with("path", path)
}

/// The `read_file` tool, as [`crate::tools::REGISTRY`] runs it
/// ([`crate::tools::ide::run_with`]).
pub struct IdeReadFile;

impl IdeTool for IdeReadFile {
    type Args = ReadArgs;
    type Body = ReadBody;
    fn parse(params: &Value) -> Result<ReadArgs, IdeError> {
        parse(params)
    }
    fn execute(fs: &dyn Fs, args: &ReadArgs) -> Result<ReadBody, IdeError> {
        read(fs, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn window(params: Value, n: u64) -> Result<(u64, u64), IdeError> {
        resolve_window(parse(&params)?.window, n)
    }

    fn reason(e: IdeError) -> (String, String) {
        (
            e.details["field"].as_str().unwrap_or("").to_string(),
            e.details
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or(e.kind.as_str())
                .to_string(),
        )
    }

    #[test]
    fn windows_table() {
        let p = |extra: Value| {
            let mut v = json!({"relativePath": "a"});
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            v
        };
        let ok: &[(Value, u64, (u64, u64))] = &[
            (json!({}), 5, (1, 5)),
            (json!({}), 0, (1, 0)),
            (json!({"start_line": 2}), 5, (2, 5)),
            (json!({"end_line": 3}), 5, (1, 3)),
            (json!({"end_line": 99}), 5, (1, 5)),
            (json!({"end_line": 3}), 0, (1, 0)),
            (json!({"start_line": 2, "end_line": 2}), 5, (2, 2)),
            (json!({"line": 3}), 100, (1, 23)),
            (json!({"line": 50}), 100, (30, 70)),
            (json!({"line": 3, "context_lines": 0}), 5, (3, 3)),
            (json!({"line": 3, "context_lines": 1}), 5, (2, 4)),
            (json!({"line": 5, "context_lines": 1}), 5, (4, 5)),
            // context_lines without line is checked but has no effect.
            (json!({"context_lines": 1}), 5, (1, 5)),
            (json!({"start_line": 2, "context_lines": 1}), 5, (2, 5)),
            (json!({"line": null, "start_line": 2}), 5, (2, 5)),
        ];
        for (extra, n, want) in ok {
            assert_eq!(
                window(p(extra.clone()), *n).unwrap(),
                *want,
                "{extra} n={n}"
            );
        }
        let bad: &[(Value, u64, (&str, &str))] = &[
            (json!({"line": 2, "start_line": 1}), 5, ("line", "conflict")),
            (json!({"line": 2, "end_line": 1}), 5, ("line", "conflict")),
            (
                json!({"start_line": 3, "end_line": 2}),
                5,
                ("end_line", "out_of_range"),
            ),
            (json!({"start_line": 0}), 5, ("start_line", "out_of_range")),
            (json!({"line": -1}), 5, ("line", "out_of_range")),
            (json!({"line": 1.0}), 5, ("line", "wrong_type")),
            (
                json!({"context_lines": "2"}),
                5,
                ("context_lines", "wrong_type"),
            ),
            (
                json!({"start_line": 6}),
                5,
                ("start_line", "line_out_of_range"),
            ),
            (
                json!({"start_line": 1}),
                0,
                ("start_line", "line_out_of_range"),
            ),
            (json!({"line": 6}), 5, ("line", "line_out_of_range")),
        ];
        for (extra, n, want) in bad {
            let got = reason(window(p(extra.clone()), *n).unwrap_err());
            assert_eq!((got.0.as_str(), got.1.as_str()), *want, "{extra} n={n}");
        }
    }

    #[test]
    fn required_path_is_checked_first() {
        let e = parse(&json!({"line": "x"})).unwrap_err();
        assert_eq!(reason(e), ("relativePath".into(), "missing".into()));
        let e = parse(&json!({"relativePath": " "})).unwrap_err();
        assert_eq!(reason(e), ("relativePath".into(), "empty".into()));
        let e = parse(&json!([1])).unwrap_err();
        assert_eq!(e.details["reason"], "not_object");
    }

    #[test]
    fn content_keeps_endings_and_drops_the_bom() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), b"\xEF\xBB\xBFone\r\ntwo\r\nthree").unwrap();
        let fs = crate::fs::RealFs::open(dir.path()).unwrap();
        let args = |w| ReadArgs {
            path: "./a.txt".into(),
            window: w,
        };
        let doc = read(&fs, &args(ReadWindow::Whole)).unwrap();
        assert_eq!(doc.content, "one\r\ntwo\r\nthree");
        assert_eq!(doc.path, "a.txt");
        assert_eq!(doc.total_lines, 3);
        let doc = read(
            &fs,
            &args(ReadWindow::Around {
                line: 2,
                context: 0,
            }),
        )
        .unwrap();
        assert_eq!(doc.content, "two\r\n");
        let doc = read(
            &fs,
            &args(ReadWindow::Range {
                start: Some(3),
                end: None,
            }),
        )
        .unwrap();
        assert_eq!(doc.content, "three");
        assert_eq!(doc.encoding, None);
    }
}
