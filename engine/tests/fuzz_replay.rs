//! Replays every checked-in fuzz input through the fuzz targets' oracles on
//! stable: the seeds in `fuzz/corpus/<target>/`, the saved crashes in
//! `fuzz/regressions/<target>/`, and the seeds derived live from the JSON
//! corpus (so a new corpus case is covered before `extract-seeds` runs).
//!
//! The oracles are the very functions the cargo-fuzz targets call
//! (`fuzz/src/oracles/`, compiled here by `#[path]`), so a bug the fuzzer
//! once found stays guarded in `cargo test` without nightly. Every input is
//! run, a panic is recorded as that input's failure, and the test fails at
//! the end listing all of them (with the file to re-run under
//! `cargo fuzz run <target> <file>`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../../fuzz/src/oracles/mod.rs"]
mod oracles;

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

/// The checked-in `envelope_parse` seeds keep libFuzzer's input limit at its
/// default: it is the longest seed when that is over 4096 bytes, and one long
/// seed makes every mutation that long (`seeds::for_the_fuzzer`).
#[test]
fn checked_in_parse_seeds_fit_libfuzzers_default_limit() {
    let dir = repo().join("fuzz/corpus/envelope_parse");
    let seeds = files_in(&dir);
    assert!(!seeds.is_empty(), "no seeds under {}", dir.display());
    let long: Vec<String> = seeds
        .iter()
        .filter_map(|p| {
            let len = std::fs::metadata(p).expect("stat a seed").len();
            (len > oracles::seeds::ENVELOPE_PARSE_SEED_MAX_LEN as u64)
                .then(|| format!("{} ({len} bytes)", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "envelope_parse seeds over {} bytes (libFuzzer would fuzz every input up to that \
         length; `extract-seeds` leaves them out, the replay test still runs them):\n{}",
        oracles::seeds::ENVELOPE_PARSE_SEED_MAX_LEN,
        long.join("\n")
    );
}
