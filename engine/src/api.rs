//! The typed front door: a [`Workspace`] opened once, then one method per
//! tool, each taking Rust values and returning `Result<Success, ToolError>`
//! — the same tool code [`crate::dispatch`] runs for a JSON call, without
//! the JSON.
//!
//! A workspace is opened read-only ([`Workspace::open`]: no writer lock,
//! no recovery, nothing written) or for writing ([`Workspace::open_for_writing`]:
//! the writer lock, held until the value is dropped, and the recovery of a
//! commit a dead writer left). Only a writable workspace has the editing
//! tools; the type says which one you hold.
//!
//! With the `ide` feature (a default), the four IDE-plugin tools too:
//! [`Workspace::read_lines`] (the IDE `read_file`), [`Workspace::grep_file`],
//! [`Workspace::call_chain`] and, writable only, [`Workspace::apply_change`].
//! Each takes the tool's checked params as a Rust value (`XArgs`, the very
//! value the wire's JSON is parsed into) and returns its success body or a
//! `ToolError<IdeErrorKind>`: what `dispatch::call` would put in the
//! result document, before serialization.

use std::io;
use std::marker::PhantomData;
use std::path::Path;

#[cfg(feature = "ide")]
use crate::error::IdeErrorKind;
use crate::error::ToolError;
use crate::fs::RealFs;
#[cfg(feature = "ide")]
use crate::tools::ide::{
    apply_change::{self, ChangeArgs, ChangeBody},
    call_chain::{self, ChainArgs, ChainBody},
    grep_file::{self, GrepArgs, GrepBody},
    read_file::{self as ide_read_file, ReadArgs, ReadBody},
};
use crate::tools::tul::apply_patch::{self, ApplyOptions, ChangedFile, Refusal};
use crate::tools::tul::create_file::{
    self, CreateFileErrorCode, CreateFileOptions, CreateFileParams, CreateFileResult,
};
use crate::tools::tul::read_file::{self, FileContent, ReadFileArgs, ReadFileErrorCode};
use crate::tools::tul::write_patch::{self, BatchReport, ValidatedBatch};
use crate::trash::TrashEntry;
use crate::workspace::Recovered;

/// What a [`Workspace`] may do: [`ReadOnly`] or [`Writable`].
pub trait Access: sealed::Sealed {}

/// A workspace opened by [`Workspace::open`]: the reading tools only.
#[derive(Debug)]
pub enum ReadOnly {}

/// A workspace opened by [`Workspace::open_for_writing`]: every tool,
/// under the writer lock.
#[derive(Debug)]
pub enum Writable {}

impl Access for ReadOnly {}
impl Access for Writable {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ReadOnly {}
    impl Sealed for super::Writable {}
}

/// A workspace: a folder every path of every call is relative to, held
/// open (a directory handle: a folder swapped for a symlink later cannot
/// lead a call outside it).
///
/// ```
/// use patchspec_engine::{ApplyOptions, Operation, Workspace};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
///
/// let workspace = Workspace::open_for_writing(dir.path())?;
/// let patch = "*** Begin Patch\n\
///              *** Update File: hello.txt\n\
///              @@\n\
///              -hello\n\
///              +hello, world\n\
///              *** End Patch\n";
/// let changed = workspace.apply_patch(patch, &ApplyOptions::default())?;
/// assert_eq!(changed[0].path, "hello.txt");
/// assert_eq!(changed[0].operation, Operation::Update);
///
/// // A refusal is a value: its kind, reason and message name what and why
/// // (and, for a non-atomic apply, which sections stayed applied).
/// let refusal = workspace
///     .apply_patch(patch, &ApplyOptions::default())
///     .unwrap_err();
/// assert_eq!(refusal.error.kind.as_str(), "patch_apply_error");
/// assert_eq!(refusal.error.reason.map(|r| r.as_str()), Some("context_not_found"));
/// assert!(refusal.changed_files.is_empty());
///
/// let read = workspace.read_file("hello.txt", None)?;
/// assert_eq!(read.content, "hello, world\n");
/// # Ok(())
/// # }
/// ```
pub struct Workspace<A: Access = ReadOnly> {
    fs: RealFs,
    access: PhantomData<A>,
}

impl<A: Access> std::fmt::Debug for Workspace<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.fs.root_path())
            .finish_non_exhaustive()
    }
}

impl Workspace<ReadOnly> {
    /// Open the folder at `root` for reading: no lock is taken and nothing
    /// is written, not even the recovery of an interrupted commit (a
    /// pending one is reported as an event; the next writer recovers it).
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Workspace {
            fs: crate::workspace::open_for_reading(root.as_ref())?,
            access: PhantomData,
        })
    }
}

impl Workspace<Writable> {
    /// Open the folder at `root` for writing: take the writer lock (waiting
    /// for another writer to finish) and recover a commit a dead writer
    /// left; an error when recovery is impossible (docs/reliability.md).
    pub fn open_for_writing(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Workspace {
            fs: crate::workspace::open_for_writing(root.as_ref())?,
            access: PhantomData,
        })
    }

    /// `apply_patch`: apply an envelope (patch-envelope.md), all-or-nothing
    /// unless `options.atomic` is false. On success, the files changed (or,
    /// with `options.dry_run`, that would change), in envelope order.
    ///
    /// The envelope is text or bytes: bytes that are not UTF-8 are a
    /// `patch_parse_error` naming the line of the first invalid byte. On a
    /// refusal with `atomic: false`, the sections before the refused one
    /// stay applied: [`Refusal::changed_files`] lists them.
    pub fn apply_patch(
        &self,
        patch: impl AsRef<[u8]>,
        options: &ApplyOptions,
    ) -> Result<Vec<ChangedFile>, Refusal> {
        apply_patch::apply_bytes(&self.fs, patch.as_ref(), options)
    }

    /// `patchspec recover`: open the folder at `root` for writing, roll
    /// back every interrupted commit this engine can prove its own, and
    /// remove every engine temp file left in the workspace (a walk of the
    /// whole tree: the one entry point whose cost is the workspace's size).
    /// With `discard`, also remove what recovery found foreign (listed in
    /// the result either way).
    pub fn recover(root: impl AsRef<Path>, discard: bool) -> io::Result<Recovered> {
        crate::workspace::recover(root.as_ref(), discard)
    }

    /// `workspace_write_patch`: apply a validated batch
    /// (`write_patch::validate` builds one from the wire params), every
    /// file or none. `Err` holds the same report when a file was refused
    /// or the commit failed: each file's outcome says why.
    pub fn write_patch(&self, batch: &ValidatedBatch) -> Result<BatchReport, BatchReport> {
        let report = write_patch::apply_batch(&self.fs, batch);
        if report.success() {
            Ok(report)
        } else {
            Err(report)
        }
    }

    /// `workspace_create_file`: create the text file `path` with `content`
    /// (line endings normalised to LF), or replace it when `overwrite` is
    /// true; the default size limit applies.
    pub fn create_file(
        &self,
        path: &str,
        content: &str,
        overwrite: bool,
    ) -> Result<CreateFileResult, ToolError<CreateFileErrorCode>> {
        let params = CreateFileParams {
            path,
            content,
            overwrite: Some(overwrite),
        };
        let result = create_file::create(&self.fs, &params, &CreateFileOptions::default());
        match result.error_code {
            None => Ok(result),
            Some(code) => Err(ToolError::new(code, result.message)),
        }
    }
}

/// The IDE-plugin tools (websocket-tool-protocol.md, docs/ide-tools.md)
/// that only read: on any workspace.
#[cfg(feature = "ide")]
impl<A: Access> Workspace<A> {
    /// The IDE tool `read_file`: the text of the file `args.path`, whole or
    /// a window of lines, and its line count.
    ///
    /// Named for what sets it apart, the window of lines, because
    /// [`Workspace::read_file`] is the TUL tool `workspace.read_file` (the
    /// file cut at a byte count). Refusals: `not_found`, `not_a_file`,
    /// `line_out_of_range`, `invalid_path`, `outside_workspace`, `io_error`,
    /// and `invalid_params` for a window with a line 0 or an end before its
    /// start.
    pub fn read_lines(&self, args: &ReadArgs) -> Result<ReadBody, ToolError<IdeErrorKind>> {
        ide_read_file::read(&self.fs, args)
    }

    /// The IDE tool `grep_file`: the lines of one file, one folder or the
    /// whole workspace that match `args.pattern` (hidden entries, build
    /// output and `.gitignore`d files are skipped), at most `args.limit` of
    /// them listed, in path order then line order.
    ///
    /// ```
    /// use patchspec_engine::{GrepArgs, IdeErrorKind, Workspace};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "one\nTwo\nthree\n")?;
    ///
    /// let workspace = Workspace::open(dir.path())?;
    /// let found = workspace.grep_file(&GrepArgs::new("two"))?;
    /// assert_eq!((found.matches[0].path.as_str(), found.matches[0].line), ("a.txt", 2));
    ///
    /// let regex = GrepArgs { regex: true, ..GrepArgs::new("(unclosed") };
    /// let refused = workspace.grep_file(&regex).unwrap_err();
    /// assert_eq!(refused.kind, IdeErrorKind::InvalidRegex);
    /// # Ok(())
    /// # }
    /// ```
    pub fn grep_file(&self, args: &GrepArgs) -> Result<GrepBody, ToolError<IdeErrorKind>> {
        grep_file::grep(&self.fs, args)
    }

    /// The IDE tool `call_chain`: who calls the Java method `args.method`
    /// (`ClassName.methodName`) and what it calls, `args.depth` levels deep,
    /// over the workspace's `.java` files. Refusals: `method_not_found`,
    /// `ambiguous_method`, `nesting_too_deep`, `io_error`, and
    /// `invalid_params` for a malformed `method` or a `depth` outside 1 to 10.
    pub fn call_chain(&self, args: &ChainArgs) -> Result<ChainBody, ToolError<IdeErrorKind>> {
        call_chain::analyse(&self.fs, args)
    }
}

/// The IDE-plugin tool that writes.
#[cfg(feature = "ide")]
impl Workspace<Writable> {
    /// The IDE tool `apply_change`: replace the one occurrence of
    /// `args.search` in the file `args.path` with `args.replace` (line
    /// endings compared as LF, written as the file's own), or, with no
    /// search, create the file with `args.replace`. Refusals: `no_match`,
    /// `multiple_matches`, `already_exists`, `not_found`, `not_a_file`,
    /// `invalid_path`, `outside_workspace`, `io_error`; a refused or failed
    /// change writes nothing.
    pub fn apply_change(&self, args: &ChangeArgs) -> Result<ChangeBody, ToolError<IdeErrorKind>> {
        apply_change::apply(&self.fs, args)
    }
}

impl<A: Access> Workspace<A> {
    /// `apply_patch` as a dry run, on a workspace opened either way: what
    /// the envelope would change, or why it would be refused; nothing is
    /// written and no lock is needed (`options.dry_run` is taken as true).
    pub fn preview_patch(
        &self,
        patch: impl AsRef<[u8]>,
        options: &ApplyOptions,
    ) -> Result<Vec<ChangedFile>, Refusal> {
        let dry_run = ApplyOptions {
            dry_run: true,
            ..options.clone()
        };
        apply_patch::apply_bytes(&self.fs, patch.as_ref(), &dry_run)
    }

    /// The commits kept in the workspace's trash, oldest first, with the
    /// files each replaced or removed (docs/reliability.md, "The trash").
    pub fn trash(&self) -> io::Result<Vec<TrashEntry>> {
        crate::trash::list(&self.fs)
    }

    /// `workspace.read_file`: the file at `path`, its content cut at
    /// `max_bytes` (on a character boundary) when given.
    pub fn read_file(
        &self,
        path: &str,
        max_bytes: Option<usize>,
    ) -> Result<FileContent, ToolError<ReadFileErrorCode>> {
        let args = ReadFileArgs {
            path: path.to_string(),
            max_bytes,
        };
        read_file::read_at(&self.fs, &args).map_err(|e| ToolError::new(e.code, e.errors.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::tul::apply_patch::ErrorKind;

    #[test]
    fn a_read_only_workspace_writes_nothing_and_reads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        assert_eq!(workspace.read_file("a.txt", None).unwrap().content, "a\n");
        let missing = workspace.read_file("b.txt", None).unwrap_err();
        assert_eq!(missing.kind, ReadFileErrorCode::NotFound);
        drop(workspace);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"], "no private folder, no lock file");
    }

    #[test]
    fn each_writing_tool_returns_its_typed_success_or_error() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open_for_writing(dir.path()).unwrap();
        let created = workspace.create_file("d/a.txt", "one\r\n", false).unwrap();
        assert!(created.created);
        assert_eq!(std::fs::read(dir.path().join("d/a.txt")).unwrap(), b"one\n");
        let exists = workspace
            .create_file("d/a.txt", "two\n", false)
            .unwrap_err();
        assert_eq!(exists.kind, CreateFileErrorCode::FileExists);

        let refused = workspace
            .apply_patch("*** Begin Patch\n", &ApplyOptions::default())
            .unwrap_err()
            .error;
        assert_eq!(refused.kind, ErrorKind::PatchParseError);
        assert_eq!(refused.reason, Some(crate::error::Reason::PatchParseError));

        let sha = crate::hash::sha256_hex(b"one\n");
        let batch = write_patch::validate(&serde_json::json!({"files": [{
            "docPath": "d/a.txt", "originalSha256": sha,
            "changes": [{"operation": "insert", "afterLine": 1, "newLines": ["two"]}]
        }]}))
        .unwrap();
        workspace.write_patch(&batch).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("d/a.txt")).unwrap(),
            b"one\ntwo\n"
        );
        let stale = workspace.write_patch(&batch).unwrap_err();
        assert!(!stale.success());
    }

    #[cfg(feature = "ide")]
    const JAVA: &str = "class Shop {\n    void pay() { charge(); }\n    void charge() {}\n}\n";

    /// Every file's path and bytes under `root`, private folders included.
    #[cfg(feature = "ide")]
    fn tree(root: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    out.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[cfg(feature = "ide")]
    #[test]
    fn a_read_only_workspace_runs_the_reading_ide_tools_and_writes_nothing() {
        use crate::tools::ide::call_chain::ChainDirection;
        use crate::tools::ide::read_file::ReadWindow;
        use crate::IdeErrorKind;

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/Shop.java"), JAVA).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
        let before = tree(dir.path());
        let workspace = Workspace::open(dir.path()).unwrap();

        let window = ReadArgs {
            path: "notes.txt".into(),
            window: ReadWindow::Range {
                start: Some(2),
                end: None,
            },
        };
        let read = workspace.read_lines(&window).unwrap();
        assert_eq!(
            (read.total_lines, read.start_line, read.end_line),
            (3, 2, 3)
        );
        assert_eq!(read.content, "two\r\nthree\r\n");
        let past_the_end = ReadArgs {
            window: ReadWindow::Around {
                line: 9,
                context: 1,
            },
            ..window
        };
        let e = workspace.read_lines(&past_the_end).unwrap_err();
        assert_eq!(e.kind, IdeErrorKind::LineOutOfRange);
        assert_eq!(e.details["totalLines"], 3);

        let found = workspace
            .grep_file(&GrepArgs {
                path: Some("src".into()),
                ..GrepArgs::new("CHARGE();")
            })
            .unwrap();
        assert_eq!(found.total_matches, 1);
        assert_eq!(
            (found.matches[0].path.as_str(), found.matches[0].line),
            ("src/Shop.java", 2)
        );
        let outside = workspace
            .grep_file(&GrepArgs {
                path: Some("../x".into()),
                ..GrepArgs::new("a")
            })
            .unwrap_err();
        assert_eq!(outside.kind, IdeErrorKind::OutsideWorkspace);
        for root in ["", ".", "./"] {
            let everywhere = workspace
                .grep_file(&GrepArgs {
                    path: Some(root.into()),
                    ..GrepArgs::new("o")
                })
                .unwrap();
            assert_eq!(everywhere.relative_path, None, "{root:?}");
            assert_eq!(everywhere.files_with_matches, 2, "{root:?}");
        }

        let chain = workspace
            .call_chain(&ChainArgs {
                direction: ChainDirection::Callers,
                ..ChainArgs::new("Shop.charge")
            })
            .unwrap();
        assert_eq!(chain.declarations[0].method, "Shop.charge");
        let callers = chain.callers.unwrap();
        assert_eq!(callers[0]["method"], "Shop.pay");
        assert!(chain.callees.is_none());
        let missing = workspace
            .call_chain(&ChainArgs::new("Shop.refund"))
            .unwrap_err();
        assert_eq!(missing.kind, IdeErrorKind::MethodNotFound);
        assert_eq!(missing.reason, Some(crate::error::Reason::NoSuchMethod));

        drop(workspace);
        assert_eq!(
            tree(dir.path()),
            before,
            "nothing written, no private folder"
        );
    }

    #[cfg(feature = "ide")]
    #[test]
    fn apply_change_returns_its_typed_success_or_error_and_a_refusal_writes_nothing() {
        use crate::IdeErrorKind;

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\r\ntwo\r\n").unwrap();
        let workspace = Workspace::open_for_writing(dir.path()).unwrap();
        let modify = ChangeArgs {
            path: "a.txt".into(),
            search: Some("two\n".into()),
            replace: "2\n".into(),
            description: None,
        };
        let changed = workspace.apply_change(&modify).unwrap();
        assert_eq!(
            (changed.operation, changed.changed, changed.line),
            ("modify", true, 2)
        );
        let bytes = std::fs::read(dir.path().join("a.txt")).unwrap();
        assert_eq!(bytes, b"one\r\n2\r\n", "the file's own line endings");
        assert_eq!(changed.sha256, crate::hash::sha256_hex(&bytes));

        let gone = workspace.apply_change(&modify).unwrap_err();
        assert_eq!(gone.kind, IdeErrorKind::NoMatch);
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), bytes);

        // An empty search creates, as `"searchContent": ""` does on the wire.
        let create = ChangeArgs {
            path: "b.txt".into(),
            search: Some(String::new()),
            replace: "new\n".into(),
            description: Some("add b".into()),
        };
        let created = workspace.apply_change(&create).unwrap();
        assert_eq!(created.operation, "create");
        assert_eq!(created.description.as_deref(), Some("add b"));
        let exists = workspace.apply_change(&create).unwrap_err();
        assert_eq!(exists.kind, IdeErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(dir.path().join("b.txt")).unwrap(), b"new\n");
    }

    /// Args built in Rust can say what no JSON params can (a line 0, a
    /// limit of 0, an unknown file type, a depth of 0): each is the
    /// `invalid_params` the wire gives for its nearest JSON, never a panic.
    #[cfg(feature = "ide")]
    #[test]
    fn args_built_in_rust_are_checked_as_the_wire_checks_params() {
        use crate::tools::ide::grep_file::GrepFileType;
        use crate::tools::ide::read_file::ReadWindow;
        use crate::IdeErrorKind;

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let field_and_reason = |e: ToolError<IdeErrorKind>| {
            assert_eq!(e.kind, IdeErrorKind::InvalidParams, "{e}");
            (e.details["field"].clone(), e.details["reason"].clone())
        };
        let read = |window| ReadArgs {
            path: "a.txt".into(),
            window,
        };
        for (window, field) in [
            (
                ReadWindow::Range {
                    start: Some(0),
                    end: None,
                },
                "start_line",
            ),
            (
                ReadWindow::Range {
                    start: None,
                    end: Some(0),
                },
                "end_line",
            ),
            (
                ReadWindow::Range {
                    start: Some(2),
                    end: Some(1),
                },
                "end_line",
            ),
            (
                ReadWindow::Around {
                    line: 0,
                    context: 3,
                },
                "line",
            ),
        ] {
            let e = workspace.read_lines(&read(window)).unwrap_err();
            assert_eq!(
                field_and_reason(e),
                (field.into(), "out_of_range".into()),
                "{window:?}"
            );
        }
        let grep = |args: GrepArgs| field_and_reason(workspace.grep_file(&args).unwrap_err());
        assert_eq!(
            grep(GrepArgs {
                limit: 0,
                ..GrepArgs::new("a")
            })
            .0,
            "limit"
        );
        assert_eq!(grep(GrepArgs::new("")).1, "empty");
        assert_eq!(grep(GrepArgs::new("a\nb")).1, "invalid_value");
        for file_type in [
            GrepFileType::Named("no-such-type".into()),
            GrepFileType::Extension("kt".into()),
            GrepFileType::Extension(".*".into()),
        ] {
            let args = GrepArgs {
                file_type,
                ..GrepArgs::new("a")
            };
            assert_eq!(grep(args).0, "file_type");
        }
        let huge_context = GrepArgs {
            context_lines: u64::MAX,
            ..GrepArgs::new("a")
        };
        assert_eq!(workspace.grep_file(&huge_context).unwrap().total_matches, 1);
        for args in [
            ChainArgs {
                depth: 0,
                ..ChainArgs::new("A.b")
            },
            ChainArgs {
                depth: 11,
                ..ChainArgs::new("A.b")
            },
            ChainArgs::new("A.b()"),
        ] {
            let e = workspace.call_chain(&args).unwrap_err();
            assert_eq!(e.kind, IdeErrorKind::InvalidParams, "{args:?}");
        }
    }
}
