//! The Tool-Use-Layer tools (TUL-001 to TUL-004) and the `apply_patch`
//! envelope tool: the file-edit tools an agent calls by their own specs,
//! each with its own result document and error vocabulary.
//!
//! - [`apply_patch`]: the envelope (patch-envelope.md);
//! - [`write_patch`]: `workspace_write_patch` line-patch batches (TUL-002);
//! - [`create_file`]: `workspace_create_file` (TUL-004);
//! - [`get_patch_change`]: a stored `workspace_write_patch` batch, file
//!   patch or change by ID, with its unified diff (TUL-002 §7.1, §11);
//! - [`read_file`]: `workspace.read_file` (TUL-001); not the IDE `read_file`,
//!   which is `crate::tools::ide::read_file` (the `ide` feature).

pub mod apply_patch;
pub mod create_file;
pub mod get_patch_change;
pub mod read_file;
pub mod write_patch;
