//! patchspec-fuzz: the cargo-fuzz targets of patchspec.
//!
//! Everything a target checks is a plain function of `patchspec-oracles`
//! (the main workspace's `oracles/` crate, re-exported here as
//! [`oracles`]), so the same checks run under `cargo fuzz run <target>`
//! (nightly, libFuzzer) and under `cargo test -p patchspec-oracles --test
//! fuzz_replay` (stable, every checked-in seed and saved crash). See
//! docs/fuzzing.md.
//!
//! The targets, one file each in `fuzz_targets/`, one line each over their
//! oracle: `envelope_parse`, `envelope_apply`, `write_patch_validate` and
//! `write_patch_apply`. [`oracles`] also holds the naive models the
//! differential oracles compare against, an in-memory filesystem, the seed
//! format and extraction, and the mode that runs the same oracles against
//! another executor (`PATCHSPEC_FUZZ_EXECUTOR`).
//!
//! Left out: anything that needs nightly. This crate builds on stable too
//! (`cargo run --example extract-seeds` writes the seed corpora).
#![deny(missing_docs)]

pub use patchspec_oracles as oracles;
