//! `patchspec matrix` and `--judge outcome`, tested like a product: the
//! reference engine and purpose-built executors (`patchspec-test-executor`:
//! engine-like, `--always refuse`, `--always outside`, `--always crash`) run
//! a few real corpus cases; `matrix.json`, the badges and the JSON-lines
//! report are parsed back and compared with what each executor must have
//! done — meaning, not layout. One temp dir per test.

use std::path::Path;

use serde_json::Value;

mod common;

use common::{patchspec, repo_corpus as corpus, Run, EXECUTOR, PATCHSPEC};

/// Expected success: applies; expected failure: refused, tree unchanged; another tool.
const APPLIES: &str = "apply_patch/add/adds-file-with-final-newline";
const REFUSED: &str = "apply_patch/add/already-exists";
const NOT_FUZZED: &str = "apply_patch/update/trailing-space-is-not-fuzzed";
const READ: &str = "workspace.read_file/basic/reads-whole-file";

/// `patchspec matrix` over the four cases, with executors `NAME=ARGS` run as the test executor.
fn matrix(out: &Path, judge: &str, executors: &[(&str, &str)], code: i32) -> Value {
    matrix_with(out, judge, &[], executors, code)
}

/// [`matrix`] with `extra` arguments (more `--run`s, options).
fn matrix_with(
    out: &Path,
    judge: &str,
    extra: &[String],
    executors: &[(&str, &str)],
    code: i32,
) -> Value {
    let mut args: Vec<String> = vec![
        "matrix".into(),
        "--corpus".into(),
        corpus().display().to_string(),
        "--out".into(),
        out.display().to_string(),
        "--markdown".into(),
        out.join("matrix.md").display().to_string(),
        "--judge".into(),
        judge.into(),
        "-j".into(),
        "2".into(),
    ];
    for id in [APPLIES, REFUSED, NOT_FUZZED, READ] {
        args.push("--run".into());
        args.push(id.into());
    }
    args.extend_from_slice(extra);
    for (name, extra) in executors {
        args.push("--executor".into());
        // The executor path is quoted: the command is split like shell words.
        args.push(format!("{name}='{EXECUTOR}' {extra}"));
    }
    let run = patchspec(&args);
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let text = std::fs::read_to_string(out.join("matrix.json")).expect("matrix.json written");
    serde_json::from_str(&text).expect("matrix.json is JSON")
}

/// (outcome, departure or "") of one cell.
fn cell(m: &Value, id: &str, name: &str) -> (String, String) {
    let case = m["cases"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no case {id} in {m}"));
    let r = &case["results"][name];
    (
        r["outcome"].as_str().unwrap_or_default().to_owned(),
        r["departure"].as_str().unwrap_or_default().to_owned(),
    )
}

fn disagree(m: &Value, id: &str) -> bool {
    m["cases"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"] == id))
        .and_then(|c| c["disagree"].as_bool())
        .unwrap_or_else(|| panic!("no disagree for {id}"))
}

fn implementation<'a>(m: &'a Value, name: &str) -> &'a Value {
    m["implementations"]
        .as_array()
        .and_then(|is| is.iter().find(|i| i["name"] == name))
        .unwrap_or_else(|| panic!("no implementation {name}"))
}

fn check_cells(m: &Value, name: &str, want: &[(&str, &str, &str)]) {
    for (id, outcome, departure) in want {
        assert_eq!(
            cell(m, id, name),
            (outcome.to_string(), departure.to_string()),
            "{name} on {id}"
        );
    }
}

#[test]
fn outcome_judge_matrix_classifies_every_cell() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let m = matrix(
        &out,
        "outcome",
        &[
            ("engine-like", "--hello --tool apply_patch"),
            ("refuser", "--always refuse"),
            ("leaky", "--always outside"),
        ],
        0,
    );
    assert_eq!(m["formatVersion"], 1);
    assert_eq!(m["judge"], "outcome");
    let names: Vec<&str> = m["implementations"]
        .as_array()
        .expect("implementations")
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert_eq!(names, ["reference", "engine-like", "refuser", "leaky"]);
    assert_eq!(implementation(&m, "reference")["reference"], true);
    assert_eq!(implementation(&m, "reference")["totals"]["passRate"], 1.0);

    // Declared by HELLO: only apply_patch, so the read_file case is skipped.
    let engine_like = implementation(&m, "engine-like");
    assert_eq!(engine_like["declaredBy"], "hello");
    assert_eq!(
        engine_like["implementation"]["name"],
        "patchspec-test-executor"
    );
    check_cells(
        &m,
        "engine-like",
        &[
            (APPLIES, "pass", ""),
            (REFUSED, "pass", ""),
            (READ, "skip", ""),
        ],
    );
    // No HELLO (its answer is a TOOL_RESULT): nothing declared, every case runs.
    assert!(
        implementation(&m, "refuser")["declaredBy"]
            .as_str()
            .is_some_and(|d| d.starts_with("nothing (no HELLO")),
        "{m}"
    );
    // Outcome judge: a bare refusal passes where a refusal is expected.
    check_cells(
        &m,
        "refuser",
        &[
            (APPLIES, "fail", "refused-valid"),
            (REFUSED, "pass", ""),
            (NOT_FUZZED, "pass", ""),
            (READ, "fail", "refused-valid"),
        ],
    );
    check_cells(
        &m,
        "leaky",
        &[
            (APPLIES, "fail", "wrote-outside"),
            (REFUSED, "fail", "wrote-outside"),
        ],
    );
    let refuser = implementation(&m, "refuser");
    assert_eq!(refuser["totals"]["pass"], 2);
    assert_eq!(refuser["totals"]["fail"], 2);
    assert_eq!(refuser["totals"]["passRate"], 0.5);
    assert_eq!(refuser["byTool"]["apply_patch"]["pass"], 2);
    assert_eq!(refuser["byTool"]["workspace.read_file"]["fail"], 1);
    let reason = m["cases"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"] == APPLIES))
        .map(|c| c["results"]["refuser"]["reason"].clone())
        .expect("a reason");
    assert_eq!(
        reason,
        "refused an edit the spec applies: refused by the test executor"
    );
    // The implementations under test always differ here: leaky writes outside.
    assert!(disagree(&m, REFUSED));

    // Badges, shields.io endpoint format.
    let badge: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("badges/refuser.json")).expect("badge"),
    )
    .expect("badge JSON");
    assert_eq!(
        badge,
        serde_json::json!({"schemaVersion": 1, "label": "patchspec (outcome)", "message": "50% passing", "color": "yellow"})
    );

    // The page: self-contained, with the table, the filters and the details.
    let html = std::fs::read_to_string(out.join("matrix.html")).expect("matrix.html");
    for needle in [
        "id=\"matrix\"",
        "id=\"only-disagree\"",
        "id=\"only-failures\"",
        "id=\"patchspec-details\"",
        "data-d=\"0\"",
        "Judge: <b id=\"judge\">outcome</b>",
    ] {
        assert!(html.contains(needle), "matrix.html lacks {needle}");
    }
    for external in ["<link", " src=", "http://", "@import", "url("] {
        assert!(!html.contains(external), "matrix.html has {external}");
    }
    let md = std::fs::read_to_string(out.join("matrix.md")).expect("matrix.md");
    assert!(md.contains("Judge: **outcome**"), "{md}");
    assert!(md.contains("| `apply_patch` | 3 |"), "{md}");
    assert!(md.contains("### Departures: leaky"), "{md}");
}

#[test]
fn full_judge_and_disagreement_among_the_implementations_under_test() {
    let dir = tempfile::tempdir().expect("temp dir");
    let m = matrix(
        &dir.path().join("out"),
        "full",
        &[("engine-like", ""), ("refuser", "--always refuse")],
        0,
    );
    assert_eq!(m["judge"], "full");
    // Full judge: a refusal without the error kind is a wrong result.
    check_cells(
        &m,
        "refuser",
        &[
            (APPLIES, "fail", "refused-valid"),
            (REFUSED, "fail", "wrong-result"),
        ],
    );
    // Both refuse and change nothing: they agree (both differ from the spec only in the
    // result document); where one applies and the other refuses, they disagree.
    assert!(!disagree(&m, REFUSED));
    assert!(!disagree(&m, NOT_FUZZED));
    assert!(disagree(&m, APPLIES));
    assert!(disagree(&m, READ));
    let badge: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/badges/engine-like.json")).expect("badge"),
    )
    .expect("badge JSON");
    assert_eq!(badge["label"], "patchspec");
    assert_eq!(badge["message"], "100% passing");
}

#[test]
fn full_out_judges_the_answers_of_an_outcome_run_as_a_full_run_judges_them() {
    // Its expected result names the workspace root: read back from the call.
    const ROOT_IN_RESULT: &str = "apply_patch/diagnostics/hint-absolute-path-inside-workspace";
    let dir = tempfile::tempdir().expect("temp dir");
    let executors = [
        ("engine-like", ""),
        ("refuser", "--always refuse"),
        ("leaky", "--always outside"),
    ];
    let more = ["--run".to_owned(), ROOT_IN_RESULT.to_owned()];
    let full = matrix_with(&dir.path().join("full"), "full", &more, &executors, 0);
    let rejudged_dir = dir.path().join("rejudged");
    let mut extra = more.to_vec();
    extra.extend(["--full-out".to_owned(), rejudged_dir.display().to_string()]);
    let outcome = matrix_with(
        &dir.path().join("outcome"),
        "outcome",
        &extra,
        &executors,
        0,
    );
    let text = std::fs::read_to_string(rejudged_dir.join("matrix.json")).expect("matrix.json");
    let rejudged: Value = serde_json::from_str(&text).expect("matrix.json is JSON");
    assert_eq!(outcome["judge"], "outcome");
    assert_eq!(rejudged["judge"], "full");
    assert!(rejudged_dir.join("matrix.md").is_file());
    assert!(rejudged_dir.join("badges/refuser.json").is_file());
    for name in ["reference", "engine-like", "refuser", "leaky"] {
        for id in [APPLIES, REFUSED, NOT_FUZZED, READ, ROOT_IN_RESULT] {
            assert_eq!(
                cell(&rejudged, id, name),
                cell(&full, id, name),
                "{name} on {id}"
            );
        }
    }
    assert_eq!(cell(&full, ROOT_IN_RESULT, "engine-like").0, "pass");
    // Judged by outcome, a bare refusal of a case that must be refused
    // passes; judged in full, it does not.
    assert_eq!(cell(&outcome, REFUSED, "refuser").0, "pass");
    assert_eq!(cell(&rejudged, REFUSED, "refuser").0, "fail");

    // Only an outcome run is judged again.
    let run = patchspec(&[
        "matrix".into(),
        "--corpus".into(),
        corpus().display().to_string(),
        "--out".into(),
        dir.path().join("bad").display().to_string(),
        "--full-out".into(),
        dir.path().join("bad-full").display().to_string(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("needs --judge outcome"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unusable_executor_is_exit_3_and_its_column_is_not_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let m = matrix(
        &dir.path().join("out"),
        "outcome",
        &[("crashy", "--always crash")],
        3,
    );
    let crashy = implementation(&m, "crashy");
    assert!(crashy["unusable"].as_str().is_some(), "{crashy}");
    assert_eq!(
        cell(&m, APPLIES, "crashy"),
        ("error".into(), "error".into())
    );
    assert_eq!(cell(&m, READ, "crashy").0, "not-run");
    assert_eq!(cell(&m, READ, "reference").0, "pass");
}

/// An adapter that is not installed: its stderr is shown (as `check` shows
/// it), no badge claims a pass rate for it (and an old one is removed), and
/// every column reports its progress. A column whose HELLO declares an
/// unknown tool is not run either.
#[test]
fn an_unusable_column_shows_its_stderr_and_gets_no_badge() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("badges")).expect("mkdir");
    std::fs::write(out.join("badges/broken.json"), "{}").expect("an old badge");
    let mut args: Vec<String> = ["matrix", "--corpus"].map(String::from).to_vec();
    args.push(corpus().display().to_string());
    args.extend(["--out".into(), out.display().to_string()]);
    for id in [APPLIES, REFUSED, NOT_FUZZED, READ] {
        args.extend(["--run".into(), id.into()]);
    }
    args.extend([
        "--executor".into(),
        "broken=sh -c 'echo my-adapter: the interpreter is missing >&2; exit 3'".into(),
        "--executor".into(),
        format!("typo='{EXECUTOR}' --hello --tool workspace_read_fille"),
    ]);
    let run = patchspec(&args);
    assert_eq!(run.code, 3, "{}", run.stderr);
    for needle in [
        "matrix: reference: [4/4]",
        "matrix: broken: the first case",
        "my-adapter: the interpreter is missing",
        "did you mean \"workspace.read_file\"?",
    ] {
        assert!(run.stderr.contains(needle), "{needle} in:\n{}", run.stderr);
    }
    assert!(out.join("badges/reference.json").exists());
    assert!(!out.join("badges/broken.json").exists());
    assert!(!out.join("badges/typo.json").exists());
    assert!(
        run.stdout
            .contains("broken: not run (unusable; no badge written)"),
        "{}",
        run.stdout
    );
    let text = std::fs::read_to_string(out.join("matrix.json")).expect("matrix.json written");
    let m: Value = serde_json::from_str(&text).expect("matrix.json is JSON");
    assert_eq!(cell(&m, READ, "typo").0, "not-run");
}

#[test]
fn bad_executor_specs_are_usage_errors() {
    for spec in ["noequals", "reference=cmd", "x=cmd 'open", "a/b=cmd"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = patchspec(&[
            "matrix".into(),
            "--corpus".into(),
            corpus().display().to_string(),
            "--out".into(),
            dir.path().join("out").display().to_string(),
            "--executor".into(),
            spec.into(),
        ]);
        assert_eq!(run.code, 2, "{spec}: {}", run.stderr);
        assert!(run.stderr.contains("--executor"), "{spec}: {}", run.stderr);
        assert!(!dir.path().join("out/matrix.json").exists());
    }
}

#[test]
fn check_judge_outcome_is_named_in_every_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junit = dir.path().join("junit.xml");
    let run = patchspec(&[
        "check".into(),
        "--corpus".into(),
        corpus().display().to_string(),
        "--run".into(),
        REFUSED.into(),
        "--run".into(),
        APPLIES.into(),
        "--judge".into(),
        "outcome".into(),
        "--report".into(),
        "json".into(),
        "--junit".into(),
        junit.display().to_string(),
        "--".into(),
        EXECUTOR.into(),
        "--hello".into(),
        // Declared exactly: `test.write` is no tool of the real corpus.
        "--tool".into(),
        "apply_patch".into(),
        "--always".into(),
        "refuse".into(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines[0]["judge"], "outcome");
    assert_eq!(
        lines[0]["executor"]["implementation"]["name"],
        "patchspec-test-executor"
    );
    let outcome = |id: &str| {
        lines
            .iter()
            .find(|l| l["id"] == id)
            .map(|l| l["outcome"].clone())
    };
    assert_eq!(outcome(REFUSED), Some("pass".into()));
    assert_eq!(outcome(APPLIES), Some("fail".into()));
    assert!(
        run.stderr.contains("judge outcome"),
        "human header: {}",
        run.stderr
    );
    let xml = std::fs::read_to_string(&junit).expect("junit");
    assert!(xml.contains("name=\"judge\" value=\"outcome\""), "{xml}");

    // Markdown too.
    let run = patchspec(&[
        "check".into(),
        "--corpus".into(),
        corpus().display().to_string(),
        "--run".into(),
        REFUSED.into(),
        "--judge".into(),
        "outcome".into(),
        "--report".into(),
        "markdown".into(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("**Judge mode:** outcome:"),
        "{}",
        run.stdout
    );
}

/// `patchspec matrix` over the four cases with raw `--executor` specs and
/// extra arguments; returns the run and `matrix.json` (when written).
fn matrix_raw(out: &Path, extra: &[&str]) -> (Run, Option<Value>) {
    let mut args: Vec<String> = vec![
        "matrix".into(),
        "--corpus".into(),
        corpus().display().to_string(),
        "--out".into(),
        out.display().to_string(),
        "-j".into(),
        "2".into(),
    ];
    for id in [APPLIES, REFUSED, NOT_FUZZED, READ] {
        args.push("--run".into());
        args.push(id.into());
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let run = patchspec(&args);
    let doc = std::fs::read_to_string(out.join("matrix.json"))
        .ok()
        .map(|text| serde_json::from_str(&text).expect("matrix.json is JSON"));
    (run, doc)
}

/// `--transport` reaches every column through the transports `check` uses:
/// the reference engine as a session executor and as a WebSocket plugin
/// passes what the in-process column passes, and says which transport ran.
#[test]
fn matrix_runs_executors_over_the_session_and_websocket_transports() {
    for (transport, cmd) in [
        ("session", format!("ref='{PATCHSPEC}' exec --session")),
        (
            "websocket",
            format!("ref='{PATCHSPEC}' exec --connect {{url}}"),
        ),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (run, m) = matrix_raw(
            &dir.path().join("out"),
            &["--transport", transport, "--executor", &cmd],
        );
        assert_eq!(run.code, 0, "{transport}: {}", run.stderr);
        let m = m.expect("matrix.json written");
        let column = implementation(&m, "ref");
        assert_eq!(column["transport"], transport, "{column}");
        assert_eq!(column["declaredBy"], "hello", "{column}");
        assert_eq!(column["totals"]["pass"], 4, "{transport}: {column}");
        for id in [APPLIES, REFUSED, NOT_FUZZED, READ] {
            assert_eq!(cell(&m, id, "ref"), cell(&m, id, "reference"), "{id}");
        }
    }
}

/// A session executor that cannot start is unusable (exit 3): its column
/// is not run, the others still are; `--no-hello` belongs to oneshot.
#[test]
fn a_session_that_cannot_start_is_an_unusable_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (run, m) = matrix_raw(
        &dir.path().join("out"),
        &[
            "--transport",
            "session",
            "--executor",
            "gone=/nonexistent/patchspec-executor",
            "--executor",
            &format!("ref='{PATCHSPEC}' exec --session"),
        ],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    let m = m.expect("matrix.json written");
    let gone = implementation(&m, "gone");
    assert_eq!(gone["transport"], "session", "{gone}");
    assert!(gone["unusable"].as_str().is_some(), "{gone}");
    assert_eq!(cell(&m, READ, "gone").0, "not-run");
    assert_eq!(cell(&m, READ, "ref").0, "pass");

    let (refused, _) = matrix_raw(
        &dir.path().join("other"),
        &[
            "--transport",
            "session",
            "--no-hello",
            "--executor",
            "x=true",
        ],
    );
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("--no-hello"), "{}", refused.stderr);
}
