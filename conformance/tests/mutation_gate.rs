//! The mutation gate's executor, `patchspec-mutant`, through the real
//! binaries: its list is well-formed, a defect is caught by the case that
//! pins what it breaks, and a defect leaves the tools it does not touch
//! exactly as the reference answers them (so `--tool` narrowing is sound).
//! The whole gate over the corpus is `scripts/mutation-gate.py` (.ci/run).

use std::collections::BTreeSet;
use std::process::Command;

const PATCHSPEC: &str = env!("CARGO_BIN_EXE_patchspec");
const MUTANT: &str = env!("CARGO_BIN_EXE_patchspec-mutant");

fn corpus() -> String {
    format!("{}/../corpus", env!("CARGO_MANIFEST_DIR"))
}

/// `patchspec check` over the cases whose ids match `runs`, against one defect; the exit code.
fn check(defect: &str, runs: &[&str]) -> i32 {
    let mut cmd = Command::new(PATCHSPEC);
    cmd.args(["check", "-j", "1", "--corpus", &corpus()]);
    for run in runs {
        cmd.args(["--run", run]);
    }
    cmd.args(["--", MUTANT, defect]);
    let out = cmd.output().expect("patchspec runs");
    out.status.code().expect("an exit code")
}

#[test]
fn the_list_has_forty_or_more_unique_defects_each_described() {
    let out = Command::new(MUTANT).arg("--list").output().expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 4, "name, tools, what, pending: {line:?}");
        assert!(names.insert(fields[0]), "{} listed twice", fields[0]);
        assert!(!fields[1].is_empty() && !fields[2].is_empty(), "{line:?}");
    }
    assert!(names.len() >= 40, "{} defects", names.len());
}

#[test]
fn a_defect_is_caught_by_the_case_that_pins_what_it_breaks() {
    // context-twice pins hunkLine 3 of its multiple_matches refusal.
    assert_eq!(
        check(
            "ap-hunk-line-off-by-one",
            &["apply_patch/update/context-twice"]
        ),
        1
    );
    // The same case against a defect of another tool: the reference's answer.
    assert_eq!(
        check(
            "grep-line-zero-based",
            &["apply_patch/update/context-twice"]
        ),
        0
    );
}

#[test]
fn a_defect_that_touches_the_files_is_caught_by_the_tree() {
    // The write left by a non-atomic apply: only the tree shows it.
    assert_eq!(
        check(
            "ap-refusal-not-atomic",
            &["apply_patch/add/already-exists-in-later-section"]
        ),
        1
    );
}

#[test]
fn an_unknown_defect_is_a_usage_error() {
    let out = Command::new(MUTANT)
        .arg("no-such-defect")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--list"));
}
