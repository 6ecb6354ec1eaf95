//! patchspec-conformance: the case model, the runner, its reports, and the
//! `patchspec` command line.
#![deny(missing_docs)]

pub mod cmd_engine;
