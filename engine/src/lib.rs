//! patchspec-engine: the reference implementation of the file-edit tools that
//! coding agents call — the `apply_patch` envelope, `workspace_write_patch`
//! line-patch batches, `workspace_create_file` and `workspace.read_file`,
//! and the IDE-plugin tools `read_file`, `grep_file`, `apply_change` and
//! `call_chain` (one list of them all: [`tools::REGISTRY`]).
//!
//! A library first: the `patchspec` binary (in `patchspec-conformance`) only
//! parses arguments and calls [`dispatch`]. The layers, bottom up:
//!
//! - [`hash`], [`fs`], [`path_guard`], [`commit`]: one hash helper, one
//!   filesystem seam, one path guard and one atomic writer, shared by every tool,
//!   which writes [`content`] (whole, or spliced from the pre-image);
//!   [`journal`] (the commit's intent record and crash recovery), [`trash`]
//!   (its bound) and [`workspace`] (the writer lock and recovery on entry);
//! - [`text`]: line views over file bytes (endings, BOM, final newline),
//!   split on every core when large (`parallel`, private);
//! - [`envelope`] (grammar), [`matching`] (zero-fuzz hunk location),
//!   [`diagnose`] (why an edit did not apply) and [`hints`] (what to send
//!   instead), both on the failure path only, and the tools in [`tools`]
//!   (`tools::tul`, and `tools::ide` behind the default-on `ide` feature);
//! - [`dispatch`]: tool name + JSON params → the tool's JSON result document,
//!   the only wire boundary.
//!
//! Serialization lives in `tools`, `dispatch` and the diagnosis's wire form
//! (`diagnose::json`) only; the layers below speak Rust types. Nothing here
//! spawns a process. Outside tests, `unwrap`, `expect` and `panic!` are
//! denied (the engine never panics on input; `FaultFs`'s injected panic is
//! the one allowed exception).
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod api;
pub mod catalog;
pub mod commit;
pub mod content;
pub mod diagnose;
pub mod dispatch;
pub mod envelope;
mod error;
pub mod events;
pub mod fs;
pub mod hash;
pub mod hints;
pub mod journal;
pub mod matching;
mod parallel;
pub mod path_guard;
pub mod repair;
pub mod seal;
pub mod store;
pub mod text;
pub mod tools;
pub mod trash;
pub mod workspace;

pub use api::{Access, ReadOnly, Workspace, Writable};
pub use error::{ErrorKind, Reason, ToolError};
pub use tools::tul::apply_patch::{ApplyOptions, ChangedFile, Operation};
