//! `patchspec fuzz` through the real binaries: the reference against
//! itself finds nothing; `patchspec-mutant`'s defects for the classic
//! mistakes are each caught within 10,000 calls and shrunk to a case of at
//! most ten lines, written once, which `patchspec check --corpus DIR`
//! replays (failing the defect, passing the reference); one seed gives
//! one run.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const PATCHSPEC: &str = env!("CARGO_BIN_EXE_patchspec");
const MUTANT: &str = env!("CARGO_BIN_EXE_patchspec-mutant");

/// `patchspec fuzz ARGS… -- EXECUTOR…` with `--report json`: (exit code, report).
fn fuzz(args: &[&str], executor: &[&str]) -> (i32, Value) {
    let out = Command::new(PATCHSPEC)
        .arg("fuzz")
        .args(args)
        .args(["--report", "json", "--"])
        .args(executor)
        .output()
        .expect("patchspec runs");
    let code = out.status.code().expect("an exit code");
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON report ({e}); exit {code}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, report)
}

fn check(corpus: &Path, executor: &[&str]) -> i32 {
    Command::new(PATCHSPEC)
        .args(["check", "-j", "1", "--corpus"])
        .arg(corpus)
        .arg("--")
        .args(executor)
        .output()
        .expect("patchspec runs")
        .status
        .code()
        .expect("an exit code")
}

#[test]
fn the_reference_against_itself_finds_nothing() {
    let (code, report) = fuzz(
        &["--seed", "11", "--runs", "400", "-j", "2"],
        &[PATCHSPEC, "exec", "--session"],
    );
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["calls"], 400);
    assert_eq!(report["disagreements"], 0);
    for tool in [
        "apply_patch",
        "workspace_write_patch",
        "workspace_create_file",
        "workspace.read_file",
    ] {
        assert!(
            report["byTool"][tool]["calls"].as_u64() > Some(50),
            "{tool}: {report:#}"
        );
    }
}

/// One classic mistake: caught within 10,000 calls, shrunk to at most ten
/// lines, replayed by `check`; with `again`, the same run once more writes
/// nothing new (one seed, one run; a case found twice is written once).
fn caught(defect: &str, again: bool) {
    let out = tempfile::tempdir().expect("temp dir");
    let dir = out.path().to_str().expect("utf-8 path");
    let args = [
        "--seed",
        "1",
        "--runs",
        "10000",
        "-j",
        "2",
        "--max-found",
        "1",
        "--out",
        dir,
    ];
    let executor = [MUTANT, defect, "--session"];
    let (code, report) = fuzz(&args, &executor);
    assert_eq!(code, 1, "{defect}: {report:#}");
    let found = &report["found"][0];
    assert!(found["firstCall"].as_u64() < Some(10_000), "{found:#}");
    assert!(
        found["sizeAfter"].as_u64() <= Some(10),
        "{defect}: shrunk to {} lines: {:#}",
        found["sizeAfter"],
        found["case"]
    );
    assert_eq!(found["known"], false);
    let written = found["written"].as_str().expect("written");
    assert!(Path::new(written).is_file());
    assert!(
        found["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("found/")),
        "{found:#}"
    );
    if again {
        let (again_code, again) = fuzz(&args, &executor);
        assert_eq!(again_code, 1);
        assert_eq!(again["found"][0]["id"], found["id"]);
        assert_eq!(again["found"][0]["firstCall"], found["firstCall"]);
        assert_eq!(again["found"][0]["known"], true);
        // Recognised by its signature (the output directory's index): run
        // once, not shrunk again.
        assert_eq!(again["found"][0]["recognised"], true, "{again:#}");
        assert_eq!(again["found"][0]["checks"], 0, "{again:#}");
        assert_eq!(found["recognised"], false, "{found:#}");
    }
    // Replayed as a corpus: the defect fails it, the reference passes it.
    assert_eq!(check(out.path(), &[MUTANT, defect]), 1, "{defect}");
    assert_eq!(check(out.path(), &[]), 0, "{defect}");
}

#[test]
fn trimming_trailing_whitespace_when_matching_is_caught() {
    caught("ap-match-trims-trailing-whitespace", false);
}

#[test]
fn taking_the_first_of_two_matches_is_caught() {
    caught("ap-first-of-two-matches", false);
}

#[test]
fn adding_a_final_newline_is_caught() {
    caught("ap-final-newline-added", true);
}

#[test]
fn writing_files_one_by_one_without_rollback_is_caught() {
    caught("ap-refusal-not-atomic", false);
}

#[test]
fn following_a_symlink_out_is_caught() {
    caught("follows-symlink-out", true);
}

/// Every disagreement is counted under its signature, each signature shrunk
/// once: the counts add up to the disagreements, and there is one found case
/// per signature, whose count is its signature's.
#[test]
fn disagreements_are_counted_per_signature_and_each_signature_shrunk_once() {
    let out = tempfile::tempdir().expect("temp dir");
    let dir = out.path().to_str().expect("utf-8 path");
    let args = [
        "--seed",
        "5",
        "--runs",
        "600",
        "-j",
        "2",
        "--skip-tool",
        "workspace.read_file",
        "--out",
        dir,
    ];
    let executor = [MUTANT, "ap-final-newline-added", "--session"];
    let (code, report) = fuzz(&args, &executor);
    assert_eq!(code, 1, "{report:#}");
    let by_signature = report["bySignature"].as_object().expect("bySignature");
    let total: u64 = by_signature.values().filter_map(Value::as_u64).sum();
    assert_eq!(Some(total), report["disagreements"].as_u64(), "{report:#}");
    let found = report["found"].as_array().expect("found");
    assert_eq!(found.len(), by_signature.len(), "{report:#}");
    for f in found {
        let signature = f["signature"].as_str().expect("a signature");
        assert_eq!(f["count"], by_signature[signature], "{report:#}");
    }
    let index: Value = serde_json::from_slice(
        &std::fs::read(out.path().join(".fuzz-signatures.json")).expect("the signature index"),
    )
    .expect("JSON");
    for f in found {
        assert_eq!(index[f["signature"].as_str().unwrap_or_default()], f["id"]);
    }
}

#[test]
fn skipped_tools_and_tags_are_not_generated() {
    let (code, report) = fuzz(
        &[
            "--seed",
            "3",
            "--runs",
            "200",
            "-j",
            "1",
            "--skip-tool",
            "apply_patch",
            "--skip-tag",
            "symlink",
        ],
        &[MUTANT, "follows-symlink-out", "--session"],
    );
    // The defect needs a link; with none generated, it is the reference.
    assert_eq!(code, 0, "{report:#}");
    assert!(report["byTool"].get("apply_patch").is_none(), "{report:#}");
}

#[test]
fn an_executor_that_does_not_answer_is_unusable() {
    let out = Command::new(PATCHSPEC)
        .args([
            "fuzz",
            "--runs",
            "5",
            "--transport",
            "oneshot",
            "--",
            "false",
        ])
        .output()
        .expect("patchspec runs");
    assert_eq!(out.status.code(), Some(3));
}
