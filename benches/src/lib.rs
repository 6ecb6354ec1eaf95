//! Deterministic input generators for the patchspec benchmarks.
