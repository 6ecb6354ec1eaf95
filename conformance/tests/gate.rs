//! The conformance gate as a single test: the whole corpus through the
//! `patchspec` binary against the built-in reference engine, exactly as the
//! README's main command runs it.
//!
//! It duplicates part of `runner.rs` on purpose: this file is the *only*
//! test cargo-mutants runs (`.cargo/mutants.toml`), so the mutation score
//! in docs/mutation-testing.md measures what the corpus alone catches, not
//! what the engine's unit tests catch.

use std::process::Command;

#[test]
fn the_whole_corpus_passes_against_the_reference_engine() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let mut check = Command::new(env!("CARGO_BIN_EXE_patchspec"));
    check.args(["check", "--corpus", corpus]);
    // scripts/mutants.sh sets it: a mutant is caught by its first failing
    // case, so the rest of the corpus is not run (the outcome is the same,
    // caught or not; only a caught mutant's time changes).
    if let Ok(n) = std::env::var("PATCHSPEC_GATE_MAX_FAIL") {
        check.args(["--max-fail", &n]);
    }
    let out = check.output().expect("run the patchspec binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the gate failed:\n{stdout}\n{stderr}"
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(" 0 failed") || last.contains(" 0 failed,"),
        "unexpected closing line: {last}"
    );
}
