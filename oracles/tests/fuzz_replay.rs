//! Replays every checked-in fuzz input through the fuzz targets' oracles on
//! stable: the seeds in `fuzz/corpus/<target>/`, the saved crashes in
//! `fuzz/regressions/<target>/`, and the seeds derived live from the JSON
//! corpus (so a new corpus case is covered before `extract-seeds` runs).
//!
//! The oracles are the very functions the cargo-fuzz targets call (the
//! `patchspec-oracles` crate, `oracles/`), so a bug the fuzzer
//! once found stays guarded in `cargo test` without nightly. Every input is
//! run, a panic is recorded as that input's failure, and the test fails at
//! the end listing all of them (with the file to re-run under
//! `cargo fuzz run <target> <file>`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use patchspec_oracles as oracles;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Run one input; `Some(message)` when an oracle panicked.
fn run(f: fn(&[u8]), data: &[u8]) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| f(data))).err().map(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic with a non-string payload".into())
    })
}

#[test]
fn every_seed_and_regression_passes_its_oracles() {
    let root = repo().join("fuzz");
    let mut failures = Vec::new();
    let mut count = 0;
    for (target, f) in oracles::TARGETS {
        for kind in ["corpus", "regressions"] {
            for file in files_in(&root.join(kind).join(target)) {
                let data = std::fs::read(&file).expect("read a fuzz input");
                count += 1;
                if let Some(msg) = run(*f, &data) {
                    failures.push(format!("{target} {}: {msg}", file.display()));
                }
            }
        }
    }
    for (target, data) in oracles::seeds::all(&repo().join("corpus")) {
        let f = oracles::TARGETS
            .iter()
            .find(|(t, _)| *t == target)
            .map(|(_, f)| *f)
            .expect("every seed names a target");
        count += 1;
        if let Some(msg) = run(f, &data) {
            failures.push(format!(
                "{target} live seed {}: {msg}",
                oracles::seeds::name(&data)
            ));
        }
    }
    assert!(count > 0, "no fuzz inputs found under {}", root.display());
    assert!(
        failures.is_empty(),
        "{} of {count} fuzz inputs fail their oracles:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Every checked-in seed is one `extract-seeds` would write: no
/// `envelope_parse` seed over libFuzzer's default input limit (one long seed
/// makes every mutation that long), no workspace wide enough to make every
/// execution of its mutations a hundred times the average
/// (`seeds::for_the_fuzzer`).
#[test]
fn checked_in_seeds_are_fit_for_the_fuzzer() {
    let mut seen = 0;
    let mut unfit = Vec::new();
    for (target, _) in oracles::TARGETS {
        for seed in files_in(&repo().join("fuzz/corpus").join(target)) {
            seen += 1;
            let bytes = std::fs::read(&seed).expect("read a seed");
            if !oracles::seeds::for_the_fuzzer(target, &bytes) {
                unfit.push(format!("{} ({} bytes)", seed.display(), bytes.len()));
            }
        }
    }
    assert!(seen > 0, "no seeds under fuzz/corpus");
    assert!(
        unfit.is_empty(),
        "seeds too costly to fuzz (`extract-seeds` leaves them out; the replay test still \
         runs them):\n{}",
        unfit.join("\n")
    );
}
