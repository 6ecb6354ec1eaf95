//! `workspace_write_patch` (TUL-002): a JSON batch of per-file line edits,
//! each file guarded by the SHA-256 of the content the edits were planned on.
//!
//! The engine plays both halves of the spec in one executor:
//!
//! - [`validate()`] is the server side: it checks the batch shape and every
//!   rule of §4–§6 (collecting *every* error, not the first), assigns the
//!   canonical IDs and returns a [`ValidatedBatch`];
//! - `apply_changes` is the client side for one file, pure and in memory:
//!   original bytes + validated changes → new bytes, or the first
//!   [`ApplyError`];
//! - [`apply_batch`] runs the client side over a workspace: locate each
//!   `docPath`, verify `originalSha256`, apply, and commit every file through
//!   the one atomic writer ([`crate::commit`]) — all files or none;
//! - `run` is the wire entry point used by [`crate::dispatch`]: it renders
//!   the InvokeResult-style document.
//!
//! The exact rules (line model, ordering and overlap, final newline, unknown
//! fields, error codes) are written down in `docs/clarifications.md`
//! ("workspace_write_patch"). Left out: `session.activeFiles` is not
//! consulted (the workspace file *is* the authoritative content for this
//! engine), and nothing is stored for later introspection by ID.

mod apply;
mod batch;
mod document;
mod params;
mod tool;
mod validate;
mod workspace;

pub use apply::ApplyError;
pub use batch::{FilePatch, LineChange, LineOp, ValidatedBatch};
pub(crate) use document::WritePatchDocument;
pub(crate) use params::WritePatchParams;
pub(crate) use tool::{run_with, HOOKS};
pub use validate::{ValidationCode, ValidationError};
pub use workspace::{apply_batch, BatchReport, CommitFailure, FileFailure, FileOutcome, FileStatus};

// The seams the fuzz oracles and benches drive (the `testing` feature).
#[cfg(any(test, feature = "testing"))]
pub use apply::apply_changes;
#[cfg(any(test, feature = "testing"))]
pub use document::filed;
#[cfg(any(test, feature = "testing"))]
pub use validate::validate;
#[cfg(any(test, feature = "testing"))]
pub use workspace::{SKIPPED_BECAUSE_COMMIT, SKIPPED_BECAUSE_OTHER};

#[cfg(test)]
use tool::render_result;
#[cfg(test)]
pub(crate) mod tests;
