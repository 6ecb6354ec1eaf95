//! The tools, one module each: parse the tool's JSON params, run it on the
//! shared layers (path guard, line views, committer), and build the result
//! document its own spec defines.
//!
//! The IDE-plugin tools of websocket-tool-protocol.md (`read_file`,
//! `grep_file`, `apply_change`, `call_chain`) share [`ide`]: their params
//! checks, failure document and workspace walk.
//!
//! Every tool's `run_with` goes through [`guarded`], so a panic (a bug: the
//! engine never panics on input) becomes the tool's own internal-error
//! result instead of taking the executor down; and every tool opens its
//! workspace through an [`OpenFs`] (in production [`open_real`]), the seam
//! through which tests hand it a [`crate::fs::FaultFs`].

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use crate::dispatch::ToolOutcome;
use crate::fs::Fs;

pub mod apply_change;
pub mod apply_patch;
pub mod call_chain;
pub mod create_file;
pub mod grep_file;
pub mod ide;
pub mod ide_read_file;
pub mod read_file;
pub mod write_patch;

/// How a tool opens the workspace at a root: [`open_real`] in production.
pub type OpenFs<'o> = dyn Fn(&Path) -> io::Result<Box<dyn Fs + 'o>> + 'o;

/// The real workspace, to read: [`RealFs`](crate::fs::RealFs) on the root, after recovering
/// an interrupted commit of a dead writer ([`crate::workspace::open_for_reading`]).
pub fn open_real(root: &Path) -> io::Result<Box<dyn Fs>> {
    Ok(Box::new(crate::workspace::open_for_reading(root)?))
}

/// The real workspace, to write: the writer lock held until the returned
/// handle is dropped, and any interrupted commit rolled back
/// ([`crate::workspace::open_for_writing`]).
pub fn open_for_writing(root: &Path) -> io::Result<Box<dyn Fs>> {
    Ok(Box::new(crate::workspace::open_for_writing(root)?))
}

/// True for the tools that may write (they take the writer lock).
pub fn writes(tool_name: &str) -> bool {
    matches!(
        tool_name,
        "apply_patch" | "workspace_write_patch" | "workspace_create_file" | "apply_change"
    )
}

/// Run a tool's body; if it panics, return `on_panic()` (the tool's
/// internal-error result) instead. The one place a tool catches a panic.
pub fn guarded(
    body: impl FnOnce() -> ToolOutcome,
    on_panic: impl FnOnce() -> ToolOutcome,
) -> ToolOutcome {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| on_panic())
}
