//! The tools, one module each: parse the tool's JSON params, run it on the
//! shared layers (path guard, line views, committer), and build the result
//! document its own spec defines.
//!
//! The IDE-plugin tools of websocket-tool-protocol.md (`read_file`,
//! `grep_file`, `apply_change`, `call_chain`) share [`ide`]: their params
//! checks, failure document and workspace walk.

pub mod apply_change;
pub mod apply_patch;
pub mod call_chain;
pub mod create_file;
pub mod grep_file;
pub mod ide;
pub mod ide_read_file;
pub mod read_file;
pub mod write_patch;
