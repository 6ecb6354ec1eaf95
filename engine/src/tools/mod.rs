//! The tools, one module each: parse the tool's JSON params, run it on the
//! shared layers (path guard, line views, committer), and build the result
//! document its own spec defines.

pub mod apply_patch;
pub mod create_file;
pub mod read_file;
pub mod write_patch;
