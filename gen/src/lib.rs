//! patchspec-gen: the input generators of patchspec, in one place.
//!
//! Both users of generated inputs read them from here: the cargo-fuzz
//! targets of `fuzz/` (their structured inputs, with `arbitrary`) and the
//! runner's `patchspec fuzz` (whole tool calls with their workspaces, from a
//! seed). Modules:
//!
//! - [`envelope`]: a workspace and an `apply_patch` envelope cut from its
//!   files (near misses, CRLF, no final newline, BOM, duplicate contexts,
//!   moves, path tricks), optionally mutated byte by byte;
//! - [`write_patch`]: a `workspace_write_patch` batch planned against the
//!   workspace, and a loosely typed batch for the validator;
//! - [`call`]: whole tool calls of the four TUL tools, with symlinks,
//!   ActiveFiles and limits, generated from a seed and an index
//!   ([`call::generate`]), or as a proptest strategy (feature `proptest`);
//! - [`tree`]: the workspace view and lookups the generators share.
//!
//! What it leaves out: judging. The fuzz targets' models and the runner's
//! judge decide what a generated input should do.
#![deny(missing_docs)]

pub mod call;
pub mod envelope;
pub mod tree;
pub mod write_patch;

/// The generators' version, recorded in every case `patchspec fuzz` writes:
/// the same seed gives the same calls only under the same version. Bump it
/// whenever a change alters what a seed generates.
pub const GENERATOR_VERSION: &str = "2";
