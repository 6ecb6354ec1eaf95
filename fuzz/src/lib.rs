//! patchspec-fuzz: the cargo-fuzz targets of patchspec and their oracles.
//!
//! Everything a target checks is a plain function in [`oracles`], so the
//! same checks run under `cargo fuzz run <target>` (nightly, libFuzzer) and
//! under `cargo test -p patchspec-engine --test fuzz_replay` (stable, every
//! checked-in seed and saved crash). See docs/fuzzing.md.
//!
//! Left out: anything that needs nightly. This crate builds on stable too
//! (`cargo run --example extract-seeds` writes the seed corpora).
#![deny(missing_docs)]

#[path = "oracles/mod.rs"]
pub mod oracles;
