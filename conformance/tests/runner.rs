//! The runner, tested like a product: purpose-built executors
//! (`patchspec-test-executor`, see its docs for the misbehaviours) run
//! against generated corpora, and the JSON-lines and JUnit reports the runner
//! emits are parsed back and compared with an expected-outcome model —
//! meaning, not layout. One temp dir per test; one `check` helper; the
//! scaffolding shared with the other integration tests is in `common/`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;

use common::{check_json, corpus_tools, patchspec, Corpus, Run, CORPUS_SHARD, EXECUTOR, PATCHSPEC};

/// `patchspec check --corpus C --report json <extra> [-- executor...]`, asserting the exit code.
fn check(corpus: &Corpus, extra: &[&str], executor: &[&str], code: i32) -> Run {
    check_json(&corpus.root(), extra, executor, code)
}

/// The broken-executor corpus and the outcome each case must get.
fn broken_corpus() -> (Corpus, BTreeMap<String, (String, String)>) {
    let c = Corpus::new();
    let model = [
        ("t/a-ok", "", "pass", ""),
        ("t/crash", "crash", "error", "crash"),
        ("t/exit3", "exit3", "error", "crash"),
        ("t/hang", "hang", "error", "timeout"),
        ("t/garbage", "garbage", "error", "protocol"),
        ("t/two-messages", "two", "error", "protocol"),
        ("t/wrong-id", "wrong-id", "error", "protocol"),
        ("t/result-not-json", "result-not-json", "error", "protocol"),
        ("t/wrong-tree", "wrong-tree", "fail", ""),
        ("t/wrong-result", "wrong-result", "fail", ""),
        ("t/outside", "outside", "fail", ""),
        ("t/tmp-leftover", "tmp-leftover", "fail", ""),
        ("t/temp-file", "temp-file", "fail", ""),
        ("t/stderr-noise", "stderr", "pass", ""),
        ("t/z-ok-after-all-that", "", "pass", ""),
    ];
    let mut expected = BTreeMap::new();
    for (id, mode, outcome, kind) in model {
        c.case(id, mode, &[]);
        expected.insert(id.to_owned(), (outcome.to_owned(), kind.to_owned()));
    }
    (c, expected)
}

#[test]
fn broken_executors_get_their_outcomes_oneshot() {
    let (corpus, expected) = broken_corpus();
    let junit = corpus.path("junit.xml");
    let started = Instant::now();
    let run = check(
        &corpus,
        &[
            "--timeout",
            "700ms",
            "-j",
            "4",
            "--junit",
            junit.to_str().expect("utf-8"),
        ],
        &[EXECUTOR],
        1,
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the hang must be killed at the timeout"
    );
    assert_eq!(run.outcomes(), expected);
    // Details carry the meaning.
    assert_eq!(
        run.case("t/wrong-result")["mismatches"][0]["path"],
        "$.path"
    );
    assert_eq!(
        run.case("t/outside")["outside"]["extra"],
        json!(["../escaped.txt"])
    );
    assert_eq!(
        run.case("t/temp-file")["files"]["extra"],
        json!(["a.txt.tmp1.apply-patch.tmp"])
    );
    assert_eq!(
        run.case("t/wrong-tree")["files"]["changed"],
        json!(["a.txt"])
    );
    assert!(run.case("t/stderr-noise")["stderr"]
        .as_str()
        .unwrap_or_default()
        .contains("noise"));
    let footer = run.footer();
    assert_eq!(
        (
            footer["passed"].as_u64(),
            footer["failed"].as_u64(),
            footer["skipped"].as_u64()
        ),
        (Some(3), Some(12), Some(0))
    );
    assert_eq!(
        run.case("t/tmp-leftover")["outside"]["extra"],
        json!(["../tmp/leftover.txt"]),
        "a file left in the TMPDIR the runner gave is a write outside"
    );
    // Human output (on stderr here) ends with the count line.
    assert_eq!(
        run.stderr.lines().last(),
        Some("3 passed, 12 failed, 0 skipped"),
        "{}",
        run.stderr
    );

    // JUnit: failure vs error vs success, parsed back.
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit");
    // Every suite carries the run's identity.
    let props: BTreeMap<&str, &str> = report.test_suites[0]
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    assert!(props["runner"].starts_with("patchspec "), "{props:?}");
    assert!(props["corpus.hash"].starts_with("sha256:"), "{props:?}");
    assert_eq!(props["corpus.version"], "none");
    assert_eq!(props["executor.transport"], "oneshot");
    assert_eq!(props["executor.command"], EXECUTOR);
    assert_eq!(props["executor.implementation"], "undeclared");
    assert_eq!(props["executor.declaredBy"], "none");
    let mut got = BTreeMap::new();
    for suite in &report.test_suites {
        for tc in &suite.test_cases {
            let kind = match &tc.status {
                quick_junit::TestCaseStatus::Success { .. } => "success",
                quick_junit::TestCaseStatus::NonSuccess {
                    kind: quick_junit::NonSuccessKind::Failure,
                    ..
                } => "failure",
                quick_junit::TestCaseStatus::NonSuccess {
                    kind: quick_junit::NonSuccessKind::Error,
                    ..
                } => "error",
                quick_junit::TestCaseStatus::Skipped { .. } => "skipped",
            };
            got.insert(tc.name.as_str().to_owned(), kind);
        }
    }
    let want: BTreeMap<String, &str> = expected
        .iter()
        .map(|(id, (o, _))| {
            (
                id.clone(),
                match o.as_str() {
                    "pass" => "success",
                    "fail" => "failure",
                    _ => "error",
                },
            )
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn broken_executors_get_their_outcomes_in_a_session() {
    let (corpus, mut expected) = broken_corpus();
    corpus.case("t/private", "private", &[]);
    corpus.case("t/unsupported", "", &["unsupported"]);
    expected.insert("t/private".into(), ("pass".into(), "".into()));
    expected.insert("t/unsupported".into(), ("skip".into(), "".into()));
    // Six cases kill their process (crash, exit3, hang, garbage, two, wrong-id, result-not-json: seven).
    let run = check(
        &corpus,
        &[
            "--timeout",
            "700ms",
            "-j",
            "1",
            "--transport",
            "session",
            "--max-restarts",
            "10",
        ],
        &[EXECUTOR, "--session"],
        1,
    );
    assert_eq!(run.outcomes(), expected);
    let header = &run.lines()[0];
    assert_eq!(
        header["executor"]["implementation"]["name"],
        "patchspec-test-executor"
    );
    assert_eq!(header["executor"]["privatePaths"], json!([".private"]));
    assert_eq!(header["executor"]["declaredBy"], "hello");
    // Session processes share one TMPDIR; with -j 1 a leftover is pinned on its case.
    assert_eq!(
        run.case("t/tmp-leftover")["outside"]["extra"],
        json!(["../../../exec/tmp/leftover.txt"])
    );
    assert_eq!(run.footer()["runErrors"], json!([]));
}

/// Session: a second answer written in its own write, after a delay, is
/// pinned on the call it answers again — whether it arrives while the next
/// call waits or after BYE — and that case becomes an error although it had
/// passed; the next case is not harmed.
#[test]
fn a_late_second_answer_in_a_session_is_blamed_on_its_own_case() {
    let c = Corpus::new();
    c.case("d/a-two-delayed", "two-delayed", &[]);
    c.case("d/b-ok", "", &[]);
    c.case("d/c-ok", "", &[]);
    c.case("d/d-two-delayed-last", "two-delayed", &[]);
    let junit = c.path("junit.xml");
    let run = check(
        &c,
        &[
            "-j",
            "1",
            "--transport",
            "session",
            "--junit",
            junit.to_str().expect("utf-8"),
        ],
        &[EXECUTOR, "--session"],
        1,
    );
    let o = run.outcomes();
    assert_eq!(o["d/a-two-delayed"], ("error".into(), "protocol".into()));
    assert_eq!(o["d/b-ok"], ("pass".into(), "".into()));
    assert_eq!(o["d/c-ok"], ("pass".into(), "".into()));
    assert_eq!(
        o["d/d-two-delayed-last"],
        ("error".into(), "protocol".into())
    );
    let a = run.case("d/a-two-delayed");
    assert_eq!(a["amended"], true);
    assert!(
        a["message"]
            .as_str()
            .unwrap_or_default()
            .contains("after its answer, it also sent"),
        "{a}"
    );
    let footer = run.footer();
    assert_eq!(
        (
            footer["totals"]["pass"].as_u64(),
            footer["totals"]["error"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert_eq!(footer["failed"], 2);
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert_eq!(xml.matches("<error").count(), 2, "{xml}");
}

/// Oneshot: before the first case the executor gets one HELLO (one process,
/// as for a call); a valid answer declares it, anything else declares nothing
/// and the report says so.
#[test]
fn oneshot_asks_for_a_hello_and_falls_back_without_one() {
    let c = Corpus::new();
    c.case("h/a-private", "private", &[]);
    c.case("h/b-unsupported", "", &["unsupported"]);
    let run = check(&c, &[], &[EXECUTOR, "--hello"], 0);
    let header = &run.lines()[0];
    assert_eq!(header["executor"]["declaredBy"], "hello");
    assert_eq!(header["executor"]["noHello"], Value::Null);
    assert_eq!(
        header["executor"]["implementation"]["name"],
        "patchspec-test-executor"
    );
    assert_eq!(header["executor"]["privatePaths"], json!([".private"]));
    assert_eq!(run.outcomes()["h/a-private"].0, "pass");
    assert_eq!(run.outcomes()["h/b-unsupported"].0, "skip");
    assert!(!run.stderr.contains("no HELLO given"), "{}", run.stderr);
    for (flag, why) in [
        ("--hello-garbage", "not a JSON message"),
        ("--hello-exit", "exit code 4"),
        (
            "--no-such-flag",
            "answered with a \"TOOL_RESULT\" message, not a HELLO",
        ),
    ] {
        let run = check(&c, &[], &[EXECUTOR, flag], 1);
        let header = &run.lines()[0];
        assert_eq!(header["executor"]["declaredBy"], "none", "{flag}");
        assert_eq!(header["executor"]["implementation"], Value::Null);
        let note = header["executor"]["noHello"].as_str().unwrap_or_default();
        assert!(note.contains(why), "{flag}: {note}");
        assert!(
            run.stderr.contains("no HELLO given"),
            "{flag}: {}",
            run.stderr
        );
        // Undeclared, the private trash is an extra directory again.
        assert_eq!(run.outcomes()["h/a-private"].0, "fail", "{flag}");
    }
}

/// An executor that writes anywhere else under the per-run root — here, at
/// the root itself, by absolute path — fails loudly: on its case with -j 1,
/// as a run-level error when calls overlap.
#[test]
fn a_write_in_the_per_run_root_fails_loudly() {
    let c = Corpus::new();
    c.case("w/a-ok", "", &[]);
    c.case("w/b-run-root", "run-root", &[]);
    c.case("w/c-ok", "", &[]);
    let run = check(&c, &["-j", "1"], &[EXECUTOR], 1);
    assert_eq!(run.outcomes()["w/b-run-root"].0, "fail");
    assert_eq!(
        run.case("w/b-run-root")["outside"]["extra"],
        json!(["../../../escaped.txt"])
    );
    assert_eq!(run.outcomes()["w/c-ok"].0, "pass");
    assert_eq!(run.footer()["runErrors"], json!([]));
    assert!(
        run.stderr.contains("WROTE OUTSIDE THE WORKSPACE"),
        "{}",
        run.stderr
    );
    let run = check(&c, &["-j", "2"], &[EXECUTOR], 1);
    let errors = run.footer()["runErrors"].clone();
    let first = errors[0].as_str().unwrap_or_default();
    assert!(
        first.contains("wrote outside the workspaces") && first.contains("escaped.txt"),
        "{errors}"
    );
    assert_eq!(run.footer()["failed"], 1);
    assert!(run.stderr.contains("RUN ERROR"), "{}", run.stderr);
    assert!(
        run.stderr.lines().last() == Some("2 passed, 1 failed, 0 skipped")
            || run.stderr.lines().last() == Some("3 passed, 1 failed, 0 skipped"),
        "{}",
        run.stderr
    );
}

#[test]
fn session_restart_bound_is_enforced() {
    let c = Corpus::new();
    c.case("t/a-ok", "", &[]);
    for i in 0..4 {
        c.case(&format!("t/crash-{i}"), "crash", &[]);
    }
    c.case("t/z-ok", "", &[]);
    let run = check(
        &c,
        &["-j", "1", "--transport", "session", "--max-restarts", "2"],
        &[EXECUTOR, "--session"],
        1,
    );
    let o = run.outcomes();
    // 1 + 2 processes: the first and two restarts; crash-0..crash-2 use them up.
    assert_eq!(o["t/crash-0"], ("error".into(), "crash".into()));
    assert_eq!(o["t/crash-2"], ("error".into(), "crash".into()));
    assert_eq!(o["t/crash-3"], ("error".into(), "session".into()));
    assert_eq!(o["t/z-ok"], ("error".into(), "session".into()));
}

#[test]
fn private_paths_are_ignored_only_when_declared_oneshot() {
    let c = Corpus::new();
    c.case("t/private", "private", &[]);
    let run = check(&c, &[], &[EXECUTOR], 1);
    assert_eq!(
        run.case("t/private")["files"]["extra"],
        json!([".private", ".private/trash", ".private/trash/x"])
    );
    check(&c, &["--ignore-path", ".private"], &[EXECUTOR], 0);
}

#[test]
fn skips_by_flag_are_not_failures() {
    let c = Corpus::new();
    c.case("t/a", "", &["slow"]);
    c.case("t/b", "crash", &["broken"]);
    let junit = c.path("junit.xml");
    let run = check(
        &c,
        &[
            "--skip-tag",
            "broken",
            "--junit",
            junit.to_str().expect("utf-8"),
        ],
        &[EXECUTOR],
        0,
    );
    assert_eq!(run.outcomes()["t/b"].0, "skip");
    // JUnit: a `<skipped>` element, counted in `skipped`, not in `disabled`.
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert!(
        xml.contains(
            r#"<testsuite name="test.write" tests="2" disabled="0" errors="0" failures="0""#
        ) && xml.contains(r#"skipped="1">"#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<skipped message="the executor does not support tag &quot;broken&quot;"#)
            || xml.contains(r#"<skipped message="tag &quot;broken&quot; skipped (--skip-tag)"/>"#),
        "{xml}"
    );
    let footer = run.footer();
    assert_eq!(
        (footer["passed"].as_u64(), footer["skipped"].as_u64()),
        (Some(1), Some(1))
    );
    // Skipping everything judges nothing: refused, unless asked for.
    let run = check(&c, &["--skip-tool", "test.write"], &[EXECUTOR], 2);
    assert!(
        run.stderr
            .contains("2 × tool \"test.write\" skipped (--skip-tool)"),
        "{}",
        run.stderr
    );
    let run = check(
        &c,
        &["--skip-tool", "test.write", "--allow-empty"],
        &[EXECUTOR],
        0,
    );
    assert_eq!(run.footer()["totals"]["skip"], 2);
}

/// A HELLO that names a tool no case and no engine knows stops the run
/// (exit 3) with the closest known name; the suggestion is not offered for
/// a name that is nothing like any known one.
#[test]
fn a_misspelled_tool_in_the_hello_is_an_unusable_executor() {
    let c = Corpus::new();
    c.case("t/a", "", &[]);
    for transport in [&[][..], &["--transport", "session"][..]] {
        let mut executor = vec![EXECUTOR, "--hello", "--tool", "test.write"];
        executor.extend(["--tool", "workspace_read_fille"]);
        if !transport.is_empty() {
            executor.push("--session");
        }
        let run = check(&c, transport, &executor, 3);
        assert!(
            run.stderr.contains(
                "declares a tool the corpus does not know: \"workspace_read_fille\" (did you mean \"workspace.read_file\"?)"
            ),
            "{transport:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "no case ran: {}", run.stdout);
    }
    let run = check(
        &c,
        &[],
        &[
            EXECUTOR,
            "--hello",
            "--tool",
            "test.write",
            "--tool",
            "frobnicate",
        ],
        3,
    );
    assert!(run.stderr.contains("\"frobnicate\";"), "{}", run.stderr);
    assert!(!run.stderr.contains("did you mean"), "{}", run.stderr);
}

/// `--tool T` against an executor whose HELLO does not declare T selects
/// cases that are all skipped: exit 2 with the reason, not a green run.
#[test]
fn a_run_that_judges_nothing_exits_2_unless_allowed() {
    let c = Corpus::new();
    c.case("t/a", "", &[]);
    c.raw(
        "r/reads",
        json!({
            "id": "r/reads", "summary": "reads a file", "spec": ["websocket-tool-protocol#tool-result"],
            "tool": "workspace.read_file", "given": {"files": {"a.txt": "x\n"}},
            "call": {"path": "a.txt"},
            "expect": {"result": {"success": true}, "files": "unchanged"}
        }),
    );
    let executor = [EXECUTOR, "--hello", "--tool", "test.write"];
    // Unfiltered, one case is judged: the run goes on.
    check(&c, &[], &executor, 0);
    let run = check(&c, &["--tool", "workspace.read_file"], &executor, 2);
    for needle in [
        "nothing to judge",
        "1 × the executor does not support tool \"workspace.read_file\"",
        "the executor declares the tools test.write",
        "--allow-empty",
    ] {
        assert!(run.stderr.contains(needle), "{needle} in {}", run.stderr);
    }
    let run = check(
        &c,
        &["--tool", "workspace.read_file", "--allow-empty"],
        &executor,
        0,
    );
    assert_eq!(run.outcomes()["r/reads"].0, "skip");
}

#[test]
fn exit_codes() {
    let c = Corpus::new();
    c.case("t/a-ok", "", &[]);
    c.case("t/b-fail", "wrong-tree", &[]);
    check(&c, &["--run", "t/a-ok"], &[EXECUTOR], 0);
    check(&c, &[], &[EXECUTOR], 1);
    // Zero cases selected: 2, with a message.
    let run = check(&c, &["--run", "nothing/**"], &[EXECUTOR], 2);
    assert!(run.stderr.contains("no case selected"), "{}", run.stderr);
    check(&c, &["--tag", "no-such-tag"], &[EXECUTOR], 2);
    // Executor unusable: 3.
    check(&c, &[], &["/nonexistent/executor"], 3);
    check(&c, &[], &[EXECUTOR, "--always", "garbage"], 3);
    check(&c, &[], &[EXECUTOR, "--always", "crash"], 3);
    check(
        &c,
        &["--transport", "session"],
        &[EXECUTOR, "--session", "--bad-hello"],
        3,
    );
    check(&c, &["--setup", "exit 1"], &[EXECUTOR], 3);
    // Usage: 2.
    check(&c, &["--timeout", "soon"], &[EXECUTOR], 2);
    check(&c, &["--transport", "session"], &[], 2);
    // Corpus error: 2.
    c.raw("t/c-bad", json!({"id": "t/not-my-path", "summary": "", "spec": [], "tool": "x", "given": {}, "call": {}, "expect": {"result": {"$nope": 1}, "files": "unchanged"}}));
    let run = check(&c, &[], &[EXECUTOR], 2);
    for needle in [
        "$.id",
        "$.summary",
        "$.spec",
        "$.expect.result",
        "unknown matcher",
    ] {
        assert!(run.stderr.contains(needle), "{needle} in {}", run.stderr);
    }
}

/// Is the process alive (a zombie counts as gone)?
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn a_hang_is_killed_with_its_process_group() {
    let c = Corpus::new();
    c.case("t/a-ok", "", &[]);
    let pid_file = c.path("grandchild.pid");
    c.raw(
        "t/hang",
        json!({
            "id": "t/hang", "summary": "hangs, with a grandchild", "spec": ["websocket-tool-protocol#tool-result"],
            "tool": "test.write", "given": {},
            "call": {"path": "a.txt", "content": "x", "misbehave": "hang", "pidFile": pid_file.to_str().expect("utf-8")},
            "expect": {"result": {"success": true}, "files": {"a.txt": "x"}}
        }),
    );
    let started = Instant::now();
    let run = check(&c, &["--timeout", "300ms"], &[EXECUTOR], 1);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(run.outcomes()["t/hang"], ("error".into(), "timeout".into()));
    // The grandchild (`sleep 600`) went with the group.
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("the executor wrote its grandchild's pid")
        .trim()
        .parse()
        .expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the grandchild {pid} outlived the timeout"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn baseline_semantics() {
    let c = Corpus::new();
    c.case("t/a-ok", "", &[]);
    c.case("t/b-fail", "wrong-tree", &[]);
    c.case("t/c-error", "garbage", &[]);
    let baseline = c.path("baseline.json");
    let b = baseline.to_str().expect("utf-8");
    let write = |v: Value| std::fs::write(&baseline, v.to_string()).expect("write baseline");

    // Known failures, exactly as listed: xfail, exit 0.
    write(
        json!([{"id": "t/b-fail", "outcome": "fail", "reason": "r", "issue": "https://example.invalid/1"}, {"id": "t/c-error", "outcome": "error"}]),
    );
    let run = check(&c, &["--baseline", b], &[EXECUTOR], 0);
    assert_eq!(run.outcomes()["t/b-fail"].0, "xfail");
    assert_eq!(run.outcomes()["t/c-error"].0, "xfail");

    // A new failure: t/c-error is not listed.
    write(json!([{"id": "t/b-fail", "outcome": "fail"}]));
    let run = check(&c, &["--baseline", b], &[EXECUTOR], 1);
    assert_eq!(run.outcomes()["t/c-error"].0, "error");

    // A listed case that passes: xpass.
    write(
        json!([{"id": "t/a-ok", "outcome": "fail"}, {"id": "t/b-fail", "outcome": "fail"}, {"id": "t/c-error", "outcome": "error"}]),
    );
    let run = check(&c, &["--baseline", b], &[EXECUTOR], 1);
    assert_eq!(run.outcomes()["t/a-ok"].0, "xpass");

    // A listed case that fails differently.
    write(json!([{"id": "t/b-fail", "outcome": "error"}, {"id": "t/c-error", "outcome": "error"}]));
    let run = check(&c, &["--baseline", b], &[EXECUTOR], 1);
    assert_eq!(run.case("t/b-fail")["outcome"], "fail");
    assert_eq!(run.case("t/b-fail")["expected"], "error");

    // A stale entry.
    write(
        json!([{"id": "t/b-fail", "outcome": "fail"}, {"id": "t/c-error", "outcome": "error"}, {"id": "t/gone", "outcome": "fail"}]),
    );
    let junit = c.path("junit.xml");
    let run = check(
        &c,
        &["--baseline", b, "--junit", junit.to_str().expect("utf-8")],
        &[EXECUTOR],
        1,
    );
    assert_eq!(run.footer()["stale"], json!(["t/gone"]));
    // JUnit counts the stale entry as a failure, so it agrees with the exit code.
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit");
    let stale: Vec<&quick_junit::TestCase> = report
        .test_suites
        .iter()
        .filter(|s| s.name.as_str() == "baseline")
        .flat_map(|s| &s.test_cases)
        .collect();
    assert_eq!(stale.len(), 1, "{xml}");
    assert_eq!(stale[0].name.as_str(), "t/gone");
    assert!(
        matches!(&stale[0].status, quick_junit::TestCaseStatus::NonSuccess { kind: quick_junit::NonSuccessKind::Failure, ty: Some(t), .. } if t.as_str() == "stale"),
        "{xml}"
    );
    assert!(xml.contains("failures=\"1\""), "{xml}");

    // Rewriting: refused on a partial run, then done on a full one (keeping reasons).
    write(
        json!([{"id": "t/b-fail", "outcome": "fail", "reason": "kept"}, {"id": "t/gone", "outcome": "fail"}]),
    );
    check(
        &c,
        &["--baseline", b, "--update-baseline", "--run", "t/**"],
        &[EXECUTOR],
        2,
    );
    check(
        &c,
        &["--baseline", b, "--update-baseline", "--shard", "1/2"],
        &[EXECUTOR],
        2,
    );
    check(&c, &["--baseline", b, "--update-baseline"], &[EXECUTOR], 0);
    let rewritten: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("read")).expect("json");
    assert_eq!(
        rewritten,
        json!([{"id": "t/b-fail", "outcome": "fail", "reason": "kept"}, {"id": "t/c-error", "outcome": "error"}])
    );
    check(&c, &["--baseline", b], &[EXECUTOR], 0);

    // A case skipped by a flag was not judged: a rewrite keeps its entry.
    c.case("t/d-skipped", "crash", &["skipped"]);
    write(
        json!([{"id": "t/b-fail", "outcome": "fail", "reason": "kept"}, {"id": "t/c-error", "outcome": "error"}, {"id": "t/d-skipped", "outcome": "error", "reason": "crashes"}]),
    );
    check(
        &c,
        &[
            "--baseline",
            b,
            "--update-baseline",
            "--skip-tag",
            "skipped",
        ],
        &[EXECUTOR],
        0,
    );
    let rewritten: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("read")).expect("json");
    assert_eq!(
        rewritten,
        json!([{"id": "t/b-fail", "outcome": "fail", "reason": "kept"}, {"id": "t/c-error", "outcome": "error"}, {"id": "t/d-skipped", "outcome": "error", "reason": "crashes"}])
    );
    // Cases left unrun: refused, and the file is left as it was.
    write(json!([]));
    check(
        &c,
        &[
            "--baseline",
            b,
            "--update-baseline",
            "--fail-fast",
            "-j",
            "1",
        ],
        &[EXECUTOR],
        2,
    );
    assert_eq!(std::fs::read_to_string(&baseline).expect("read"), "[]");

    // An unreadable baseline is a usage error.
    std::fs::write(&baseline, "[{\"id\": 1}]").expect("write");
    check(&c, &["--baseline", b], &[EXECUTOR], 2);
}

#[test]
fn shards_cover_the_selection_exactly_once() {
    let c = Corpus::new();
    for i in 0..40 {
        c.case(&format!("s/case-{i:02}"), "", &[]);
    }
    c.case("other/x", "", &[]);
    let root = c.root();
    let list = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "list",
            "--corpus",
            root.to_str().expect("utf-8"),
            "--run",
            "s/**",
        ];
        args.extend_from_slice(extra);
        let run = patchspec(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout.lines().map(str::to_owned).collect()
    };
    let all = list(&[]);
    assert_eq!(all.len(), 40);
    for n in [1u32, 2, 3, 7] {
        let mut seen = Vec::new();
        for i in 1..=n {
            seen.extend(list(&["--shard", &format!("{i}/{n}")]));
        }
        seen.sort();
        assert_eq!(seen, all, "shards of {n}");
    }
    // check agrees with list.
    let run = check(&c, &["--run", "s/**", "--shard", "2/3"], &[EXECUTOR], 0);
    let ran: Vec<String> = run.outcomes().into_keys().collect();
    assert_eq!(ran, list(&["--shard", "2/3"]));
}

#[test]
fn results_are_in_id_order_whatever_the_parallelism() {
    let c = Corpus::new();
    for i in 0..24 {
        c.case(
            &format!("o/{i:02}"),
            if i % 5 == 0 { "stderr" } else { "" },
            &[],
        );
    }
    let run = check(&c, &["-j", "8"], &[EXECUTOR], 0);
    let ids: Vec<String> = run
        .lines()
        .into_iter()
        .filter(|v| v["type"] == "case")
        .map(|v| v["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    assert_eq!(ids.len(), 24);
}

#[test]
fn fail_fast_and_max_fail_stop_starting_cases() {
    let c = Corpus::new();
    c.case("f/a-ok", "", &[]);
    for i in 0..6 {
        c.case(&format!("f/b-fail-{i}"), "wrong-tree", &[]);
    }
    let run = check(&c, &["-j", "1", "--fail-fast"], &[EXECUTOR], 1);
    let footer = run.footer();
    assert_eq!(footer["totals"]["fail"], 1);
    assert_eq!(footer["notRun"], 5);
    assert_eq!(footer["stopped"], "--fail-fast");
    assert_eq!(
        footer["notRunCases"],
        json!([
            "f/b-fail-1",
            "f/b-fail-2",
            "f/b-fail-3",
            "f/b-fail-4",
            "f/b-fail-5"
        ])
    );
    assert!(
        run.stderr
            .contains("stopped by --fail-fast: 5 selected case(s) not run"),
        "{}",
        run.stderr
    );
    let junit = c.path("junit.xml");
    let run = check(
        &c,
        &[
            "-j",
            "1",
            "--max-fail",
            "3",
            "--junit",
            junit.to_str().expect("utf-8"),
        ],
        &[EXECUTOR],
        1,
    );
    assert_eq!(run.footer()["totals"]["fail"], 3);
    assert_eq!(run.footer()["stopped"], "--max-fail 3");
    // JUnit: the unrun cases are there, skipped, with the reason.
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert_eq!(
        xml.matches("not run: stopped by --max-fail 3").count(),
        3,
        "{xml}"
    );
    // Zero (or less) is refused: it would stop before the first case.
    for bad in ["--max-fail=0", "--max-fail=-1"] {
        let run = check(&c, &[bad], &[EXECUTOR], 2);
        assert!(run.stderr.contains("--max-fail"), "{}", run.stderr);
    }
}

#[test]
fn markdown_report_summarises() {
    let c = Corpus::new();
    c.case("m/a-ok", "", &[]);
    c.case("m/b-fail", "wrong-result", &[]);
    let root = c.root();
    let run = patchspec(&[
        "check",
        "--corpus",
        root.to_str().expect("utf-8"),
        "--report",
        "markdown",
        "--",
        EXECUTOR,
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("| `test.write` | 1 | 1 | 0 | 0 | 0 | 0 |"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("| `m/b-fail` | fail | $.path: expected"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.lines().last(),
        Some("1 passed, 1 failed, 0 skipped")
    );
    // The run's identity: runner, judge mode, corpus version and hash, executor.
    for needle in [
        "- **Runner:** patchspec ",
        "- **Judge mode:** full: ",
        "- **Corpus:** version none, `sha256:",
        "over `oneshot`; declared nothing (no HELLO given",
    ] {
        assert!(run.stdout.contains(needle), "{needle} in\n{}", run.stdout);
    }
}

/// An implementation pins the corpus it was checked against: another
/// version or other content is a usage error (2), never a silent run.
#[test]
fn a_pinned_corpus_version_and_hash_are_enforced() {
    let c = Corpus::new();
    c.case("p/a", "", &[]);
    std::fs::write(c.root().join("VERSION"), "1.2.3\n").expect("write VERSION");
    let run = check(&c, &[], &[EXECUTOR], 0);
    let hash = run.lines()[0]["corpus"]["hash"]
        .as_str()
        .expect("the hash")
        .to_owned();
    assert!(
        hash.starts_with("sha256:") && hash.len() == 7 + 64,
        "{hash}"
    );
    assert_eq!(run.lines()[0]["corpus"]["version"], "1.2.3");
    // The human header shows the whole hash, ready to pin.
    assert!(
        run.stderr.contains(&format!("corpus 1.2.3 {hash}")),
        "{}",
        run.stderr
    );
    check(
        &c,
        &["--corpus-version", "1.2.3", "--corpus-hash", &hash],
        &[EXECUTOR],
        0,
    );
    let run = check(&c, &["--corpus-version", "1.2.4"], &[EXECUTOR], 2);
    assert!(
        run.stderr.contains("not the pinned version 1.2.4") && run.stderr.contains(&hash),
        "{}",
        run.stderr
    );
    // One byte more in one case: another hash.
    c.case("p/b", "", &[]);
    let run = check(&c, &["--corpus-hash", &hash], &[EXECUTOR], 2);
    assert!(
        run.stderr.contains("its cases differ from the pinned ones"),
        "{}",
        run.stderr
    );
}

/// `patchspec show`: a write-patch batch one change per line with its lines
/// as text blocks, hashes labelled, bytes that are not UTF-8 escaped.
#[test]
fn show_prints_a_case_readably() {
    let shown = patchspec(&[
        "show",
        "workspace_write_patch/apply/blank-lines",
        "--corpus",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"),
    ]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    for needle in [
        "  files[0]: docPath=\"p.md\" originalSha256=\"57f34f2aad981c5bb287145a5c6b2970908cec505631fefce3581abfcd579091\" (sha256 of given file p.md)\n",
        "    changes[0]: operation=\"delete\" startLine=2 endLine=3\n      expectedOriginalLines: (2 line(s))\n        │ \n        │ \n",
        "    changes[1]: operation=\"insert\" afterLine=4\n      newLines: (2 line(s))\n        │ \n        │ More\n",
    ] {
        assert!(shown.stdout.contains(needle), "{needle:?} in\n{}", shown.stdout);
    }
    let c = Corpus::new();
    c.raw(
        "s/bytes",
        json!({
            "id": "s/bytes", "summary": "not UTF-8", "spec": ["websocket-tool-protocol#tool-result"],
            "tool": "test.write", "given": {"files": {"latin1.txt": {"base64": "Y2Fm6Qo="}}},
            "call": {"path": "a.txt", "content": "x", "sha": "0000000000000000000000000000000000000000000000000000000000000000"},
            "expect": {"result": {"success": true}, "files": "unchanged"}
        }),
    );
    let shown = patchspec(&[
        "show",
        "s/bytes",
        "--corpus",
        c.root().to_str().expect("utf-8"),
    ]);
    assert!(shown.stdout.contains("  caf\\xE9\n"), "{}", shown.stdout);
    assert!(
        shown.stdout.contains("(matches no given file)"),
        "{}",
        shown.stdout
    );
}

/// A reader that goes away (`patchspec list | head -1`) ends the command
/// quietly, with its normal exit code: no panic, no error.
#[test]
fn a_closed_stdout_is_a_quiet_normal_exit() {
    let c = Corpus::new();
    c.case("q/a", "", &[]);
    let corpus = c.root();
    let corpus = corpus.to_str().expect("utf-8");
    let real = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    // The first write fails whatever the output's size: a one-case corpus
    // where the shipped one is not needed (each load of it costs seconds).
    let commands: [(&[&str], i32); 6] = [
        (&["list", "--corpus", corpus], 0),
        (&["list", "--json", "--corpus", corpus], 0),
        (&["show", "q/a", "--corpus", corpus], 0),
        (&["lint", "--no-run", "--corpus", real], 0),
        (
            &["coverage", "--corpus", real],
            patchspec(&["coverage", "--corpus", real]).code,
        ),
        (&["check", "--corpus", corpus, "--", EXECUTOR], 0),
    ];
    for (args, code) in commands {
        let mut child = Command::new(PATCHSPEC)
            .args(args)
            .env("CI", "true")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run patchspec");
        // Close the reading end before the first line is written.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("error"),
            "{args:?}: {stderr}"
        );
    }
}

/// `patchspec check` without `--report`: the human report alone.
fn human(corpus: &Corpus, extra: &[&str], executor: &[&str], code: i32) -> Run {
    let root = corpus.root();
    let mut args = vec!["check", "--corpus", root.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(executor);
    let run = patchspec(&args);
    assert_eq!(run.code, code, "{args:?}\n{}\n{}", run.stdout, run.stderr);
    run
}

/// A green run prints its header and summary, not a line per case;
/// `--verbose` lists them all, with `[n/N]`.
#[test]
fn a_green_human_report_is_short_and_verbose_lists_every_case() {
    let c = Corpus::new();
    for id in ["g/a", "g/b", "g/c"] {
        c.case(id, "", &[]);
    }
    c.case("g/d-skipped", "", &["unsupported"]);
    let run = human(&c, &[], &[EXECUTOR, "--hello"], 0);
    assert!(!run.stdout.contains("PASS"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "skipped (not judged):\n  1 × the executor does not support tag \"unsupported\"\n"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.lines().last(),
        Some("3 passed, 0 failed, 1 skipped")
    );
    let run = human(&c, &["--verbose"], &[EXECUTOR, "--hello"], 0);
    for line in [
        "[1/4] PASS  g/a (",
        "[3/4] PASS  g/c (",
        "[4/4] SKIP  g/d-skipped (",
    ] {
        assert!(run.stdout.contains(line), "{line} in {}", run.stdout);
    }
}

/// Failures that share a cause — here an undeclared tool the executor
/// answers with `unknown_tool` — are listed three times as they come, then
/// explained once with the count, the ids, one example and a suggestion.
#[test]
fn failures_that_share_a_cause_are_grouped_with_a_suggestion() {
    let c = Corpus::new();
    for i in 1..=6 {
        let id = format!("u/case-{i}");
        c.raw(
            &id,
            json!({
                "id": id, "summary": "a tool the executor does not have",
                "spec": ["websocket-tool-protocol#tool-result"], "tool": "other.tool",
                "given": {"files": {}}, "call": {"path": "a.txt"},
                "expect": {"result": {"success": true}, "files": {"a.txt": "x\n"}}
            }),
        );
    }
    c.case("w/wrong", "wrong-tree", &[]);
    let run = human(&c, &[], &[EXECUTOR], 1);
    let out = &run.stdout;
    let listed = out
        .lines()
        .filter(|l| l.contains("] FAIL  u/case-"))
        .count();
    assert_eq!(listed, 3, "{out}");
    assert!(
        out.contains("[4/7] … u/case-4 and further failures of the same cause are not listed"),
        "{out}"
    );
    for needle in [
        "──── FAIL × 6: the executor refused with error kind \"unknown_tool\" ────",
        "suggestion: the executor does not implement other.tool: declare only the tools it implements in its HELLO",
        "--skip-tool other.tool",
        "cases:   u/case-1, u/case-2, u/case-3, u/case-4, u/case-5, … and 1 more (--verbose lists them all)",
        "example: u/case-1",
        "──── FAIL w/wrong ────",
    ] {
        assert!(out.contains(needle), "{needle} in:\n{out}");
    }
    // One example in full, not six.
    assert_eq!(out.matches("result received:").count(), 1, "{out}");
    let run = human(&c, &["--verbose"], &[EXECUTOR], 1);
    assert!(
        run.stdout.contains("u/case-5, u/case-6\nexample: u/case-1"),
        "{}",
        run.stdout
    );
}

/// `-- sh exec.sh --hello`: every argument that names a file relative to
/// the current directory is made absolute (the executor runs in the case
/// workspace, where `exec.sh` does not exist); options stay as they are.
#[test]
fn every_argument_naming_a_file_here_resolves_against_the_current_directory() {
    let c = Corpus::new();
    c.case("t/a", "", &[]);
    let here = c.path("here");
    std::fs::create_dir_all(&here).expect("mkdir");
    std::fs::write(here.join("exec.sh"), format!("exec '{EXECUTOR}' \"$@\"\n"))
        .expect("write the script");
    let corpus = c.root();
    let out = Command::new(PATCHSPEC)
        .args(["check", "--corpus", corpus.to_str().expect("utf-8")])
        .args(["--report", "json", "--", "sh", "exec.sh", "--hello"])
        .current_dir(&here)
        .env("CI", "true")
        .stdin(Stdio::null())
        .output()
        .expect("run patchspec");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let header: Value =
        serde_json::from_str(stdout.lines().next().unwrap_or_default()).expect("a JSON header");
    let script = here.join("exec.sh");
    assert_eq!(
        header["executor"]["command"],
        json!(["sh", script.to_str().expect("utf-8"), "--hello"])
    );
    assert_eq!(header["executor"]["declaredBy"], "hello");
}

/// `check -- cat 2>&1 | head -1`: both streams closed early, and an
/// executor that fails (here unusable, exit 3) — the error message that
/// cannot be written is dropped, never a panic (exit 101).
#[test]
fn closed_stdout_and_stderr_keep_the_exit_code() {
    let c = Corpus::new();
    c.case("q/a", "", &[]);
    let corpus = c.root();
    let corpus = corpus.to_str().expect("utf-8");
    for (executor, code) in [
        (&[EXECUTOR, "--always", "garbage"][..], 3),
        (&["cat"][..], 3),
    ] {
        let mut args = vec!["check", "--corpus", corpus, "--"];
        args.extend_from_slice(executor);
        let mut child = Command::new(PATCHSPEC)
            .args(&args)
            .env("CI", "true")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run patchspec");
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(code), "{args:?}");
    }
}

#[test]
fn human_report_explains_a_file_difference() {
    let c = Corpus::new();
    c.case("h/a-ok", "", &[]);
    c.raw(
        "h/b-crlf",
        json!({
            "id": "h/b-crlf", "summary": "expects CRLF and no final newline", "spec": ["websocket-tool-protocol#tool-result"],
            "tool": "test.write", "given": {}, "call": {"path": "a.txt", "content": "x \n"},
            "expect": {"result": {"success": true}, "files": {"a.txt": "x\r\ny"}}
        }),
    );
    let root = c.root();
    let run = patchspec(&[
        "check",
        "--corpus",
        root.to_str().expect("utf-8"),
        "--",
        EXECUTOR,
    ]);
    assert_eq!(run.code, 1);
    for needle in [
        "──── FAIL h/b-crlf",
        "expects CRLF",
        "websocket-tool-protocol#tool-result",
        "-x␍",
        "+x·",
        "\\ No newline at end of file",
    ] {
        assert!(run.stdout.contains(needle), "{needle:?} in\n{}", run.stdout);
    }
    assert_eq!(
        run.stdout.lines().last(),
        Some("1 passed, 1 failed, 0 skipped")
    );
}

#[test]
fn lint_checks_ids_and_spec_references() {
    let c = Corpus::new();
    c.case("l/ok", "", &[]);
    std::fs::create_dir_all(c.root().join("schema")).expect("mkdir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/schema/case.schema.json"),
        c.root().join("schema/case.schema.json"),
    )
    .expect("copy schema");
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // An anchor list, when present, is enforced.
    std::fs::create_dir_all(c.path("docs")).expect("mkdir");
    std::fs::write(
        c.path("docs/spec-clauses.md"),
        "- `websocket-tool-protocol#other`: something\n",
    )
    .expect("write");
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is not listed in"), "{}", run.stderr);
    std::fs::write(
        c.path("docs/spec-clauses.md"),
        "- `websocket-tool-protocol#tool-result`: the answer\n",
    )
    .expect("write");
    assert_eq!(patchspec(&["lint", "--corpus", r, "--no-run"]).code, 0);
    // Unknown documents, and ids that are not the path.
    // A versioned corpus needs its changelog entry.
    std::fs::write(c.root().join("VERSION"), "1.2.3\n").expect("write");
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("CHANGELOG.md"), "{}", run.stderr);
    std::fs::write(c.root().join("CHANGELOG.md"), "# x\n## 1.2.2\n").expect("write");
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert!(
        run.stderr.contains("no entry for the corpus version 1.2.3"),
        "{}",
        run.stderr
    );
    std::fs::write(c.root().join("CHANGELOG.md"), "# x\n## 1.2.3\n").expect("write");
    assert_eq!(patchspec(&["lint", "--corpus", r, "--no-run"]).code, 0);
    c.raw("l/bad-doc", json!({"id": "l/bad-doc", "summary": "s", "spec": ["nope#x"], "tool": "t", "given": {}, "call": {}, "expect": {"result": {}, "files": "unchanged"}}));
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("\"nope\" is not a spec document"),
        "{}",
        run.stderr
    );
    c.raw("l/bad-doc", json!({"id": "l/other", "summary": "s", "spec": ["nope#x"], "tool": "t", "given": {}, "call": {}, "expect": {"result": {}, "files": "unchanged"}}));
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert!(
        run.stderr.contains("does not equal the file's path"),
        "{}",
        run.stderr
    );
}

/// `"$schema"` in a case (an editor's pointer at case.schema.json) is
/// allowed by the schema and the docs, so lint and check accept it too.
#[test]
fn a_schema_member_in_a_case_is_accepted() {
    let c = Corpus::new();
    c.raw(
        "s/with-schema",
        json!({
            "$schema": "../schema/case.schema.json",
            "id": "s/with-schema", "summary": "a case with $schema",
            "spec": ["websocket-tool-protocol#tool-result"], "tool": "test.write",
            "given": {"files": {}}, "call": {"path": "a.txt", "content": "new\n"},
            "expect": {"result": {"success": true, "path": "a.txt"}, "files": {"a.txt": "new\n"}}
        }),
    );
    std::fs::create_dir_all(c.root().join("schema")).expect("mkdir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/schema/case.schema.json"),
        c.root().join("schema/case.schema.json"),
    )
    .expect("copy schema");
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    let run = patchspec(&["lint", "--corpus", r, "--no-run"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = check(&c, &[], &[EXECUTOR], 0);
    assert_eq!(run.outcomes()["s/with-schema"].0, "pass");
}

/// A shard of the shipped corpus (cases of every tool) through the
/// reference executor, both transports: proves the protocol path of
/// `patchspec exec`. The whole corpus runs over each in `.ci/run`'s gate
/// stages, and over the session transport in `store.rs`.
#[test]
fn a_corpus_shard_passes_against_patchspec_exec_in_both_transports() {
    for (extra, exec) in [
        (vec!["-j", "2"], vec![PATCHSPEC, "exec"]),
        (
            vec!["-j", "2", "--transport", "session"],
            vec![PATCHSPEC, "exec", "--session"],
        ),
    ] {
        // Exactly as the README writes it: no --ignore-path; the executor
        // declares its private trash in its HELLO, in both transports.
        let mut args = vec![
            "check",
            "--report",
            "json",
            "--shard",
            CORPUS_SHARD,
            "--corpus",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"),
        ];
        args.extend(extra);
        args.push("--");
        args.extend(exec);
        let run = patchspec(&args);
        assert_eq!(run.code, 0, "{args:?}\n{}\n{}", run.stdout, run.stderr);
        let footer = run.footer();
        assert_eq!(footer["failed"], 0);
        let executor = &run.lines()[0]["executor"];
        assert_eq!(executor["implementation"]["name"], "patchspec-engine");
        assert_eq!(executor["privatePaths"], json!([".patchspec"]));
        assert_eq!(executor["declaredBy"], "hello");
        assert_eq!(run.tools(), corpus_tools(), "{args:?}");
    }
}

/// In process by default (the whole corpus runs so in `gate.rs`; a shard
/// here), and the corpus lints clean: ids, schema, changelog and spec
/// references (`--no-run`: lint's run of every case against the reference
/// engine is the gate's run, `gate.rs`; `.ci/run` lints in full).
#[test]
fn the_corpus_passes_in_process_and_lints_clean() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let run = patchspec(&[
        "check",
        "--corpus",
        corpus,
        "--report",
        "json",
        "--shard",
        CORPUS_SHARD,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.lines()[0]["executor"]["transport"], "inprocess");
    assert_eq!(run.tools(), corpus_tools());
    let lint = patchspec(&["lint", "--no-run", "--corpus", corpus]);
    assert_eq!(lint.code, 0, "{}\n{}", lint.stdout, lint.stderr);
}

/// A repro of `id` from the repository's corpus into `dir`: the request it
/// wrote, and the answer of the command it printed (run with `sh -c`).
fn repro(id: &str, dir: &std::path::Path) -> (Value, Value) {
    let run = patchspec(&[
        "repro",
        id,
        "--corpus",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"),
        "--out",
        dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("request.json")).expect("request"))
            .expect("json");
    let answer = Command::new("sh")
        .arg("-c")
        .arg(run.stdout.trim())
        .output()
        .expect("run the printed command");
    let answer: Value = serde_json::from_slice(&answer.stdout).expect("a TOOL_RESULT");
    (request, answer)
}

#[test]
fn repro_writes_the_request_and_a_working_command() {
    let out = tempfile::tempdir().expect("temp dir");
    // A space and a quote: the printed command must quote them for sh.
    let dir = out.path().join("r it's");
    let (request, answer) = repro("workspace.read_file/basic/reads-whole-file", &dir);
    assert_eq!(request["type"], "TOOL_CALL");
    assert_eq!(request["toolName"], "workspace.read_file");
    assert_eq!(
        std::fs::read_to_string(dir.join("ws/src/a.txt")).expect("workspace file"),
        "one\ntwo\n"
    );
    assert_eq!(answer["type"], "TOOL_RESULT");
    assert_eq!(answer["data"]["toolCallId"], request["toolCallId"]);
}

#[test]
fn repro_writes_the_workspace_root_into_the_request() {
    let out = tempfile::tempdir().expect("temp dir");
    let (request, answer) = repro(
        "apply_patch/diagnostics/hint-absolute-path-inside-workspace",
        &out.path().join("r"),
    );
    let root = request["workspaceRoot"].as_str().expect("workspaceRoot");
    let patch = request["params"]["patch"].as_str().expect("patch");
    assert!(
        patch.contains(&format!("*** Update File: {root}/src/a.py\n")),
        "{patch}"
    );
    assert!(!patch.contains("{{"), "{patch}");
    // apply_patch's result document travels as a JSON string.
    let result: Value = serde_json::from_str(answer["data"]["result"].as_str().expect("a string"))
        .expect("the result document");
    let details = &result["error"]["details"];
    assert_eq!(details["relativePath"], "src/a.py", "{answer}");
    assert_eq!(details["path"], format!("{root}/src/a.py"));
}

#[test]
fn zero_selection_in_list_and_shown_cases() {
    let c = Corpus::new();
    c.case("z/a", "", &[]);
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    assert_eq!(
        patchspec(&["list", "--corpus", r, "--tool", "none"]).code,
        2
    );
    let shown = patchspec(&["show", "z/a", "--corpus", r]);
    assert_eq!(shown.code, 0);
    assert!(
        shown.stdout.contains("misbehave") || shown.stdout.contains("content: |"),
        "{}",
        shown.stdout
    );
    assert_eq!(patchspec(&["show", "z/none", "--corpus", r]).code, 2);
}

#[test]
fn unique_ids_are_enforced() {
    let c = Corpus::new();
    c.case("u/a", "", &[]);
    // Two files cannot share an id, because the id must equal the path; a copy under another path is caught as id ≠ path.
    let text = std::fs::read_to_string(c.root().join("u/a.json")).expect("read");
    std::fs::write(c.root().join("u/b.json"), text).expect("write");
    let run = patchspec(&["list", "--corpus", c.root().to_str().expect("utf-8")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("does not equal the file's path"),
        "{}",
        run.stderr
    );
}

/// `coverage` lists each clause with the cases that cite it, and fails on a gap.
#[test]
fn coverage_lists_pinned_clauses_and_fails_on_gaps() {
    let c = Corpus::new();
    c.case("cov/one", "", &[]);
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    // No clause list: a usage error, not a silent pass.
    assert_eq!(patchspec(&["coverage", "--corpus", r]).code, 2);
    std::fs::create_dir_all(c.path("docs")).expect("mkdir");
    std::fs::write(
        c.path("docs/spec-clauses.md"),
        "# clauses\n- `websocket-tool-protocol#tool-result`: the answer\n- `websocket-tool-protocol#tool-call`: the call\n",
    )
    .expect("write");
    let run = patchspec(&["coverage", "--corpus", r, "--json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(doc["gaps"], json!(["websocket-tool-protocol#tool-call"]));
    assert_eq!(doc["clauses"][0]["cases"], json!(["cov/one"]));
    let run = patchspec(&["coverage", "--corpus", r, "--gaps"]);
    assert!(
        run.stdout.contains("websocket-tool-protocol#tool-call"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("#tool-result"), "{}", run.stdout);
    assert!(
        run.stdout.contains("2 clauses, 1 pinned, 1 gaps"),
        "{}",
        run.stdout
    );
    // Pin the gap: exit 0.
    std::fs::write(
        c.path("docs/spec-clauses.md"),
        "- `websocket-tool-protocol#tool-result`: the answer\n",
    )
    .expect("write");
    assert_eq!(patchspec(&["coverage", "--corpus", r]).code, 0);
}

/// A clause no case cites is pinned by a named test that exists; a pending
/// or missing test leaves it a gap, and a missing one fails even beside cases.
#[test]
fn coverage_accepts_a_named_test_that_exists() {
    let c = Corpus::new();
    c.case("cov/one", "", &[]);
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    std::fs::create_dir_all(c.path("docs")).expect("mkdir");
    std::fs::create_dir_all(c.path("engine")).expect("mkdir");
    std::fs::write(c.path("engine/fault.rs"), "fn io_error_is_reported() {}\n").expect("write");
    let clauses = |toctou: &str, answer: &str| {
        std::fs::write(
            c.path("docs/spec-clauses.md"),
            format!(
                "- `websocket-tool-protocol#tool-result`: the answer{answer}\n\
                 - `websocket-tool-protocol#race`: a race (pinned by test: {toctou})\n"
            ),
        )
        .expect("write");
    };
    clauses("engine/fault.rs::tests::io_error_is_reported", "");
    let run = patchspec(&["coverage", "--corpus", r]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("websocket-tool-protocol#race  (pinned by test)  a race"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("1 pinned by a named test only"),
        "{}",
        run.stdout
    );
    clauses("pending", "");
    let run = patchspec(&["coverage", "--corpus", r, "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(doc["gaps"], json!(["websocket-tool-protocol#race"]));
    assert_eq!(doc["clauses"][1]["tests"][0]["status"], "pending");
    clauses("engine/fault.rs::io_error_is_reported_twice", "");
    let run = patchspec(&["coverage", "--corpus", r, "--gaps"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("test NOT FOUND"), "{}", run.stdout);
    // A wrong reference fails even on a clause that cases pin.
    clauses(
        "engine/fault.rs::io_error_is_reported",
        " (pinned by test: engine/fault.rs::gone)",
    );
    let run = patchspec(&["coverage", "--corpus", r]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("declares no fn gone"), "{}", run.stdout);
}

#[test]
fn work_dir_holds_the_case_workspaces_and_is_named_in_the_header() {
    let corpus = Corpus::new();
    corpus.case("c/one", "", &[]);
    let work = tempfile::tempdir().expect("work dir");
    let work_text = work.path().to_str().expect("utf-8");
    let run = check(&corpus, &["--work-dir", work_text], &[EXECUTOR], 0);
    let header = run.lines().into_iter().find(|v| v["type"] == "header");
    assert_eq!(
        header.expect("a header line")["workDir"],
        format!("{work_text} (--work-dir)"),
        "{}",
        run.stdout
    );
    // The per-run root was made there, and removed with the run.
    assert_eq!(
        std::fs::read_dir(work.path())
            .expect("read work dir")
            .count(),
        0,
        "the run leaves nothing in --work-dir"
    );

    let missing = work.path().join("absent");
    let missing_text = missing.to_str().expect("utf-8");
    let refused = patchspec(&[
        "check",
        "--corpus",
        corpus.root().to_str().expect("utf-8"),
        "--work-dir",
        missing_text,
    ]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains(missing_text), "{}", refused.stderr);
}
