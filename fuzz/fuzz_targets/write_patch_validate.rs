//! cargo-fuzz target `write_patch_validate`: the logic and its oracles are
//! [`patchspec_fuzz::oracles::write_patch_validate`], which `oracles/tests/fuzz_replay.rs`
//! also runs on every checked-in seed and regression.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| patchspec_fuzz::oracles::write_patch_validate(data));
