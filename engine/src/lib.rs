//! patchspec-engine: the reference implementation of the file-edit tools that
//! coding agents call — the `apply_patch` envelope, `workspace_write_patch`
//! line-patch batches, `workspace_create_file` and `workspace.read_file`,
//! and the IDE-plugin tools `read_file`, `grep_file`, `apply_change` and
//! `call_chain` (one list of them all: [`REGISTRY`]).
//!
//! # The front door
//!
//! Open a [`Workspace`] — read-only with [`Workspace::open`] (no lock,
//! nothing written), or with [`Workspace::open_for_writing`] (the writer
//! lock, and the recovery of a commit a dead writer left) — then call a
//! tool: [`Workspace::apply_patch`], [`Workspace::write_patch`] (with a
//! batch from [`ValidatedBatch::validate`]), [`Workspace::create_file`],
//! [`Workspace::read_file`], and with the `ide` feature (a default) the
//! IDE-plugin tools: `Workspace::read_lines` (the IDE `read_file`: a
//! window of lines), `Workspace::grep_file`, `Workspace::call_chain` and
//! `Workspace::apply_change`, each taking its checked params as a Rust
//! value (`ReadArgs`, `GrepArgs`, `ChainArgs`, `ChangeArgs`). Each returns
//! `Result<success, error>`; a refusal is a [`ToolError`] with the spec's
//! kind (an enum per tool vocabulary: [`ErrorKind`], `IdeErrorKind`, ...),
//! a [`Reason`], and a message naming the file, hunk or change and why
//! (for `apply_patch`, a [`Refusal`]: the error, and the files a
//! non-atomic apply changed before it). Every write is atomic and
//! journaled; a refused atomic call leaves the workspace byte for byte as
//! it was. Beside the tools: [`Workspace::preview_patch`] (a dry run, on
//! any workspace), [`Workspace::trash`] and [`Workspace::recover`].
//!
//! ```
//! use patchspec_engine::{ApplyOptions, Workspace};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
//! let workspace = Workspace::open_for_writing(dir.path())?;
//! let patch = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello, world\n*** End Patch\n";
//! let changed = workspace.apply_patch(patch, &ApplyOptions::default())?;
//! assert_eq!(changed[0].path, "hello.txt");
//! # Ok(())
//! # }
//! ```
//!
//! # The wire
//!
//! A host that speaks the tools' JSON calls [`dispatch::call`]: a tool
//! name and its params in, the spec's result document out — the runner's
//! built-in executor and `patchspec exec` do exactly that. Around the tool
//! it emits the call's events ([`events::TARGET`]) and records the writing
//! tools' calls in the session's [`store::PatchStore`].
//! [`catalog::catalog`] gives each tool's description for a model and its
//! params and result JSON Schemas.
//!
//! # Inside
//!
//! The layers, bottom up (private; the `testing` feature makes them public
//! for this repository's own tests, benches and fuzz oracles): one hash
//! helper, one filesystem seam (`fs`), one path guard, one atomic writer
//! (`commit`) with its journal, trash and writer lock (`workspace`); line
//! views (`text`); the envelope grammar, zero-fuzz hunk matching, the
//! failure-path diagnosis, hints and repairs; the tools. Serialization
//! lives in the tools, `dispatch` and the diagnosis's wire form only.
//! Nothing here spawns a process. Outside tests, `unwrap`, `expect` and
//! `panic!` are denied (the engine never panics on input; `FaultFs`'s
//! injected panic is the one allowed exception).
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

// The modules a user of the crate reaches by path: small on purpose.
pub mod catalog;
pub mod dispatch;
pub mod events;
pub mod hash;
pub mod store;

mod api;
mod call;
mod error;
mod outcome;
mod parallel;
mod schema;

/// The engine's internals, public only with the `testing` feature: the
/// seams this workspace's own tests, benches and fuzz oracles drive
/// (`FaultFs`, the journal's steps, the matcher, the parser ...). Not an
/// API: nothing outside this repository should enable it.
macro_rules! internal_modules {
    ($($name:ident)*) => {$(
        #[cfg(feature = "testing")]
        pub mod $name;
        #[cfg(not(feature = "testing"))]
        mod $name;
    )*};
}

internal_modules! {
    commit content diagnose envelope fs hints journal layout
    path_guard seal text tools trash workspace
}

// The matcher is the fuzz oracles' and benches' seam too; some of it is
// theirs only (`apply_hunks`).
#[cfg(feature = "testing")]
pub mod matching;
#[cfg(not(feature = "testing"))]
#[allow(dead_code)]
mod matching;

pub use api::{Access, ReadOnly, Workspace, Writable};
#[cfg(feature = "ide")]
pub use error::IdeErrorKind;
pub use error::{ErrorKind, Reason, ToolError};
#[cfg(feature = "ide")]
pub use tools::ide::{
    apply_change::{ChangeArgs, ChangeBody},
    call_chain::{ChainArgs, ChainBody, ChainDirection, MethodNode, SkippedFile},
    grep_file::{GrepArgs, GrepBody, GrepFileType, GrepMatch},
    read_file::{ReadArgs, ReadBody, ReadWindow},
};
pub use tools::tul::apply_patch::{ApplyOptions, ChangedFile, Operation, Refusal};
pub use tools::tul::create_file::{CreateFileErrorCode, CreateFileResult};
pub use tools::tul::read_file::{FileContent, ReadFileErrorCode};
pub use tools::tul::write_patch::{
    ApplyError, BatchReport, CommitFailure, FileFailure, FileOutcome, FilePatch, FileStatus,
    LineChange, LineOp, ValidatedBatch, ValidationCode, ValidationError,
};
pub use tools::{ToolEntry, REGISTRY};

/// engine/README.md's examples, compiled by `cargo test --doc` so that
/// the page a crates.io reader starts from cannot drift from the API (not
/// run: they open a folder of the reader's).
#[cfg(all(doctest, feature = "ide"))]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

pub use trash::{Bounds as TrashBounds, TrashEntry};
pub use workspace::Recovered;

// What the `patchspec` command line's `apply` uses beside the front door.
pub use {
    diagnose::visible_line, diagnose::VisibleStyle, tools::tul::apply_patch::repair::repair_of,
};
