//! `patchspec apply` and `patchspec call` through the real binary: arguments,
//! input from a file or standard input, human and JSON output, exit codes
//! (0 applied, 1 refused, 2 usage), and a reader that closes the pipe early.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use patchspec_engine::hash::sha256_hex;
use serde_json::Value;

const PATCHSPEC: &str = env!("CARGO_BIN_EXE_patchspec");

/// A workspace with `files`.
fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }
    dir
}

fn read(dir: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(path)).ok()
}

/// Run the binary with `args`, `stdin` as standard input, in `cwd`.
fn run(args: &[&str], stdin: &str, cwd: Option<&Path>) -> Output {
    let mut cmd = Command::new(PATCHSPEC);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().expect("spawn patchspec");
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    // A command that exits before reading its input (a usage error) closes
    // the pipe first; that race is not the binary's fault, so a broken pipe
    // is accepted and the exit status is what the test judges.
    if let Err(err) = written {
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::BrokenPipe,
            "write stdin: {err}"
        );
    }
    child.wait_with_output().expect("wait")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited, not killed")
}

fn envelope(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// Every kind of section at once, from a file outside the workspace.
#[test]
fn apply_from_a_file_changes_the_files_and_lists_them() {
    let ws = workspace(&[("a.txt", "a\n"), ("gone.txt", "x\n"), ("old.txt", "o\n")]);
    let patch_dir = tempfile::tempdir().unwrap();
    let patch = patch_dir.path().join("p.patch");
    std::fs::write(
        &patch,
        envelope(
            "*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: new.txt\n+n\n\
             *** Delete File: gone.txt\n*** Move File: old.txt -> moved.txt\n",
        ),
    )
    .unwrap();
    let root = ws.path().to_str().unwrap();
    let out = run(
        &["apply", patch.to_str().unwrap(), "--root", root],
        "",
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "changed:\n  update a.txt\n  add    new.txt\n  delete gone.txt\n  move   old.txt -> moved.txt\n"
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("A\n"));
    assert_eq!(read(ws.path(), "new.txt").as_deref(), Some("n\n"));
    assert_eq!(read(ws.path(), "gone.txt"), None);
    assert_eq!(read(ws.path(), "old.txt"), None);
    assert_eq!(read(ws.path(), "moved.txt").as_deref(), Some("o\n"));
}

#[test]
fn apply_reads_standard_input_for_a_dash_and_by_default() {
    for args in [&["apply", "-"][..], &["apply"][..]] {
        let ws = workspace(&[("a.txt", "a\n")]);
        let mut args = args.to_vec();
        args.extend(["--root", ws.path().to_str().unwrap()]);
        let out = run(
            &args,
            &envelope("*** Update File: a.txt\n@@\n-a\n+b\n"),
            None,
        );
        assert_eq!(code(&out), 0, "{args:?}: {}", text(&out.stderr));
        assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("b\n"));
    }
}

#[test]
fn apply_works_in_the_current_directory_without_root() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let out = run(
        &["apply"],
        &envelope("*** Update File: a.txt\n@@\n-a\n+b\n"),
        Some(ws.path()),
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("b\n"));
}

#[test]
fn a_refused_patch_exits_1_and_names_where_and_why() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let root = ws.path().to_str().unwrap();
    let out = run(
        &["apply", "--root", root],
        &envelope("*** Update File: a.txt\n@@\n-zzz\n+b\n"),
        None,
    );
    assert_eq!(code(&out), 1);
    assert_eq!(text(&out.stdout), "");
    let err = text(&out.stderr);
    assert!(
        err.starts_with(
            "error[patch_apply_error]: a.txt: hunk 0 (envelope line 3): context not found"
        ),
        "{err}"
    );
    assert!(err.contains("cause: "), "the diagnosis is shown: {err}");
    assert!(err.ends_with("note: nothing was written\n"), "{err}");
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("a\n"));

    // A parse error names its envelope line.
    let out = run(
        &["apply", "--root", root],
        "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n",
        None,
    );
    assert_eq!(code(&out), 1);
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error[patch_parse_error]: line 2: "),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let root = ws.path().to_str().unwrap();
    let patch = envelope("*** Update File: a.txt\n@@\n-a\n+b\n");
    let missing = ws.path().join("no-such-dir");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["apply", "--root", root, "--frobnicate"],
            "--frobnicate",
        ),
        (
            vec!["apply", "--root", root, "--expect-sha", "a.txt"],
            "--expect-sha takes PATH=HEX",
        ),
        (
            vec!["apply", "--root", root, "--expect-sha", "a=deadbeef"],
            "--expect-sha \"a=deadbeef\": HEX must be a SHA-256 (64 hexadecimal digits)",
        ),
        (
            vec!["apply", "--root", missing.to_str().unwrap()],
            "cannot open the workspace",
        ),
        (
            vec!["apply", "/no/such/patch/file", "--root", root],
            "cannot read",
        ),
        (vec!["call"], "TOOL"),
        (
            vec!["call", "workspace.read_file", "{not json", "--root", root],
            "params are not JSON",
        ),
        (
            vec![
                "call",
                "workspace.read_file",
                "{}",
                "--active-files",
                "/no/such/file.json",
            ],
            "--active-files",
        ),
    ];
    for (args, says) in cases {
        let out = run(&args, &patch, None);
        assert_eq!(code(&out), 2, "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("a\n"));
}

#[test]
fn a_dry_run_checks_everything_and_writes_nothing() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let root = ws.path().to_str().unwrap();
    let patch = envelope("*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: n.txt\n+n\n");
    let out = run(&["apply", "--dry-run", "--root", root], &patch, None);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "would change:\n  update a.txt\n  add    n.txt\n"
    );
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("a\n"));
    assert_eq!(read(ws.path(), "n.txt"), None);
    // A dry run still refuses what would be refused, without "nothing was written".
    let out = run(
        &["apply", "--dry-run", "--root", root],
        &envelope("*** Update File: a.txt\n@@\n-zzz\n+b\n"),
        None,
    );
    assert_eq!(code(&out), 1);
    assert!(!text(&out.stderr).contains("nothing was written"));
}

#[test]
fn a_refusal_with_a_repair_says_so_and_save_repair_writes_it_without_applying() {
    let ws = workspace(&[("a.txt", "a\nb\n")]);
    let root = ws.path().to_str().unwrap();
    let saved = ws.path().join("fixed.patch");
    // A blank line before *** End Patch: exactly one correction fits.
    let patch = envelope("*** Update File: a.txt\n@@\n a\n-b\n+c\n\n");
    let out = run(
        &[
            "apply",
            "--root",
            root,
            "--save-repair",
            saved.to_str().unwrap(),
        ],
        &patch,
        None,
    );
    assert_eq!(code(&out), 1);
    let err = text(&out.stderr);
    assert!(err.contains("repair: exactly one correction"), "{err}");
    assert!(err.contains("blank_separator_line"), "{err}");
    assert!(err.contains("--save-repair"), "{err}");
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("a\nb\n"));
    let fixed = std::fs::read_to_string(&saved).expect("the repair is written");
    let out = run(&["apply", "--root", root], &fixed, None);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("a\nc\n"));
}

#[test]
fn json_prints_the_result_document_on_success_and_failure() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let root = ws.path().to_str().unwrap();
    let out = run(
        &["apply", "--json", "--root", root],
        &envelope("*** Update File: a.txt\n@@\n-a\n+b\n"),
        None,
    );
    assert_eq!(code(&out), 0);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(
        doc,
        serde_json::json!({"success": true, "data": {"changedFiles": [{"path": "a.txt", "operation": "update"}], "atomic": true}})
    );
    let out = run(
        &["apply", "--json", "--no-atomic", "--root", root],
        &envelope("*** Update File: a.txt\n@@\n-zzz\n+b\n"),
        None,
    );
    assert_eq!(code(&out), 1);
    assert_eq!(
        text(&out.stderr),
        "",
        "--json keeps the error in the document"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["success"], false);
    assert_eq!(doc["error"]["kind"], "patch_apply_error");
    assert_eq!(doc["error"]["details"]["hunkIndex"], 0);
    assert_eq!(doc["data"]["atomic"], false);
}

#[test]
fn no_atomic_keeps_the_sections_before_the_failure_and_says_so() {
    let ws = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let root = ws.path().to_str().unwrap();
    let patch =
        envelope("*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-zzz\n+B\n");
    let out = run(&["apply", "--no-atomic", "--root", root], &patch, None);
    assert_eq!(code(&out), 1);
    assert_eq!(text(&out.stdout), "changed:\n  update a.txt\n");
    let err = text(&out.stderr);
    assert!(
        err.contains("error[patch_apply_error]: b.txt: hunk 0"),
        "{err}"
    );
    assert!(err.contains("note: not atomic"), "{err}");
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("A\n"));
    assert_eq!(read(ws.path(), "b.txt").as_deref(), Some("b\n"));
    // The same patch, atomic: nothing.
    std::fs::write(ws.path().join("a.txt"), "a\n").unwrap();
    let out = run(&["apply", "--root", root], &patch, None);
    assert_eq!(code(&out), 1);
    assert_eq!(text(&out.stdout), "");
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("a\n"));
}

#[test]
fn expect_sha_checks_the_file_and_splits_at_the_last_equals_sign() {
    let ws = workspace(&[("a=b.txt", "x\n"), ("c.txt", "c\n")]);
    let root = ws.path().to_str().unwrap();
    let right = format!("a=b.txt={}", sha256_hex(b"x\n"));
    let wrong = format!("a=b.txt={}", sha256_hex(b"other\n"));
    let patch = envelope("*** Update File: a=b.txt\n@@\n-x\n+y\n");

    let out = run(
        &["apply", "--root", root, "--expect-sha", &wrong],
        &patch,
        None,
    );
    assert_eq!(code(&out), 1);
    assert!(
        text(&out.stderr).starts_with("error[stale_file]: a=b.txt: "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(read(ws.path(), "a=b.txt").as_deref(), Some("x\n"));

    let out = run(
        &["apply", "--root", root, "--expect-sha", &right],
        &patch,
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(read(ws.path(), "a=b.txt").as_deref(), Some("y\n"));

    // `PATH=` asserts absence; repeatable.
    let c = format!("c.txt={}", sha256_hex(b"c\n"));
    let patch = envelope("*** Add File: n.txt\n+n\n*** Update File: c.txt\n@@\n-c\n+C\n");
    let out = run(
        &[
            "apply",
            "--root",
            root,
            "--expect-sha",
            "n.txt=",
            "--expect-sha",
            &c,
        ],
        &patch,
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(read(ws.path(), "n.txt").as_deref(), Some("n\n"));
    assert_eq!(read(ws.path(), "c.txt").as_deref(), Some("C\n"));
}

#[test]
fn call_runs_one_tool_with_params_inline_from_a_file_or_stdin() {
    let ws = workspace(&[("a.txt", "hello\n")]);
    let root = ws.path().to_str().unwrap();
    let params = r#"{"path": "a.txt"}"#;
    let params_file = ws.path().join("params.json");
    std::fs::write(&params_file, params).unwrap();
    let at_file = format!("@{}", params_file.display());
    for (args, stdin) in [
        (
            vec!["call", "workspace.read_file", params, "--root", root],
            "",
        ),
        (
            vec!["call", "workspace.read_file", &at_file, "--root", root],
            "",
        ),
        (
            vec!["call", "workspace.read_file", "-", "--root", root],
            params,
        ),
        (vec!["call", "workspace.read_file", "--root", root], params),
    ] {
        let out = run(&args, stdin, None);
        assert_eq!(code(&out), 0, "{args:?}: {}", text(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(doc["success"], true, "{args:?}");
        assert_eq!(doc["file"]["content"], "hello\n", "{args:?}");
    }
    // Without --root: the current directory.
    let out = run(
        &["call", "workspace.read_file", params],
        "",
        Some(ws.path()),
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
}

#[test]
fn call_exits_1_when_the_tool_fails_and_reads_active_files() {
    let ws = workspace(&[("a.txt", "hello\n")]);
    let root = ws.path().to_str().unwrap();
    let out = run(
        &[
            "call",
            "workspace.read_file",
            r#"{"path": "missing.txt"}"#,
            "--root",
            root,
        ],
        "",
        None,
    );
    assert_eq!(code(&out), 1);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["errorCode"], "NOT_FOUND");

    let active = ws.path().join("active.json");
    std::fs::write(&active, r#"{"a.txt": "hello\n"}"#).unwrap();
    let out = run(
        &[
            "call",
            "workspace.read_file",
            r#"{"path": "a.txt"}"#,
            "--root",
            root,
            "--active-files",
            active.to_str().unwrap(),
        ],
        "",
        None,
    );
    assert_eq!(code(&out), 1);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["errorCode"], "ALREADY_IN_CONTEXT");

    let out = run(&["call", "no_such_tool", "{}", "--root", root], "", None);
    assert_eq!(code(&out), 1);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["error"]["kind"], "unknown_tool");
}

/// Read the first line of a command's output, then close the pipe while the
/// command still has more than a pipe buffer to write: it must end quietly
/// with its own exit code, not panic on EPIPE.
fn first_line_then_hang_up(mut cmd: Command) -> (String, Output) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    reader.read_line(&mut first).expect("a first line");
    drop(reader);
    let mut stderr = Vec::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_end(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    (
        first,
        Output {
            status,
            stdout: Vec::new(),
            stderr,
        },
    )
}

#[test]
fn a_reader_that_goes_away_is_not_an_error() {
    // `call`: a result document far larger than a pipe buffer.
    let big = "0123456789abcdef\n".repeat(30_000);
    let ws = workspace(&[("big.txt", &big)]);
    let mut cmd = Command::new(PATCHSPEC);
    cmd.args([
        "call",
        "workspace.read_file",
        r#"{"path": "big.txt"}"#,
        "--root",
    ])
    .arg(ws.path());
    let (first, out) = first_line_then_hang_up(cmd);
    assert_eq!(first, "{\n");
    assert_eq!(text(&out.stderr), "", "no panic, no message");
    assert_eq!(code(&out), 0);

    // `apply`: thousands of changed files listed.
    let ws = workspace(&[]);
    let mut body = String::new();
    for i in 0..6000 {
        body.push_str(&format!("*** Add File: file-number-{i:05}.txt\n+x\n"));
    }
    let patch = ws.path().join("..").join(format!(
        "{}.patch",
        ws.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&patch, envelope(&body)).unwrap();
    let mut cmd = Command::new(PATCHSPEC);
    cmd.arg("apply").arg(&patch).arg("--root").arg(ws.path());
    let (first, out) = first_line_then_hang_up(cmd);
    std::fs::remove_file(&patch).unwrap();
    assert_eq!(first, "changed:\n");
    assert_eq!(text(&out.stderr), "", "no panic, no message");
    assert_eq!(code(&out), 0);
    assert_eq!(
        read(ws.path(), "file-number-05999.txt").as_deref(),
        Some("x\n")
    );
}

/// `apply` is a tool call like any other (through the engine's dispatch):
/// `--log-format json` shows its `Tool.Call.*` events and `--store` records
/// it, applied or refused, with its params and result document.
#[test]
fn apply_emits_the_call_events_and_store_records_it() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let root = ws.path().to_str().expect("utf-8 path");
    let store_dir = tempfile::tempdir().expect("temp dir");
    let store = store_dir.path().join("calls.db");
    let store = store.to_str().expect("utf-8 path");
    let events = |stderr: &[u8]| -> Vec<Value> {
        text(stderr)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    };
    let names = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| e["event"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    // `--json`: the result document on stdout, so stderr holds only the events.
    let args = [
        "apply",
        "--json",
        "--root",
        root,
        "--store",
        store,
        "--log-format",
        "json",
    ];

    let applied = run(&args, &envelope("*** Add File: b.txt\n+b\n"), None);
    assert_eq!(code(&applied), 0, "{}", text(&applied.stderr));
    assert_eq!(read(ws.path(), "b.txt").as_deref(), Some("b\n"));
    let seen = events(&applied.stderr);
    let seen_names = names(&seen);
    assert_eq!(
        seen_names.first().map(String::as_str),
        Some("Tool.Call.Received")
    );
    assert_eq!(
        seen_names.last().map(String::as_str),
        Some("Tool.Call.Executed")
    );
    assert!(
        seen_names.iter().any(|n| n == "Store.Recorded"),
        "{seen_names:?}"
    );
    assert!(seen.iter().all(|e| e["tool"] == "apply_patch"), "{seen:?}");

    let refused = run(&args, &envelope("*** Delete File: missing.txt\n"), None);
    assert_eq!(code(&refused), 1, "{}", text(&refused.stderr));
    let doc: Value = serde_json::from_slice(&refused.stdout).expect("a result document");
    assert_eq!(doc["error"]["kind"], "not_found", "{doc}");
    let seen_names = names(&events(&refused.stderr));
    assert_eq!(
        seen_names.last().map(String::as_str),
        Some("Tool.Call.Error")
    );
    assert!(
        seen_names.iter().any(|n| n == "Store.Recorded"),
        "{seen_names:?}"
    );

    let recorded = patchspec_store::SqliteStore::open(Path::new(store))
        .expect("the store opens")
        .call_count()
        .expect("the store counts its calls");
    assert_eq!(recorded, 2);
}

/// An envelope file that is not UTF-8 is read as bytes; the checks of
/// `--expect-sha` still come first, as for a text envelope: a malformed
/// digest is a usage error of the command line (exit 2, before the
/// envelope is looked at), then two keys that disagree about one path are
/// the engine's refusal (found by fuzzing: fuzz/regressions/envelope_apply/b1-…, b3-…).
#[test]
fn expect_sha_problems_are_named_before_an_envelope_that_is_not_utf8() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let patch = ws.path().join("p.patch");
    std::fs::write(
        &patch,
        b"*** Begin Patch\n*** Add File: b.txt\n+\xff\n*** End Patch\n",
    )
    .expect("write the envelope");
    let root = ws.path().to_str().expect("utf-8 path");
    let file = patch.to_str().expect("utf-8 path");
    let sha = sha256_hex(b"a\n");
    let reason = |extra: &[&str]| {
        let mut args = vec!["apply", file, "--root", root, "--json"];
        args.extend_from_slice(extra);
        let out = run(&args, "", None);
        assert_eq!(code(&out), 1, "{}", text(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).expect("a result document");
        doc["error"]["details"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(reason(&[]), "patch_parse_error");
    let out = run(
        &[
            "apply",
            file,
            "--root",
            root,
            "--json",
            "--expect-sha",
            "a.txt=abc",
        ],
        "",
        None,
    );
    assert_eq!(code(&out), 2, "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("HEX must be a SHA-256"),
        "{}",
        text(&out.stderr)
    );
    let first = format!("a.txt={sha}");
    let second = format!("./a.txt={}", "0".repeat(64));
    assert_eq!(
        reason(&["--expect-sha", &first, "--expect-sha", &second]),
        "conflicting_expected_sha256"
    );
    assert_eq!(read(ws.path(), "b.txt"), None);
}

/// An interrupted commit, as the engine leaves it when it dies between its
/// renames (made through the engine's own committer, killed at its third
/// rename, so its journal is sealed with this user's key as a real one is):
/// `a.txt` already replaced (its pre-image kept as `pre-0`), `gone.txt` in
/// the trash, `b.txt`'s temp still staged.
fn interrupted_workspace() -> tempfile::TempDir {
    use patchspec_engine::commit::{commit, Change};
    use patchspec_engine::fs::{FaultFs, FsOp, RealFs};
    use std::sync::Arc;
    let dir = workspace(&[
        ("a.txt", "old a\n"),
        ("b.txt", "old b\n"),
        ("gone.txt", "bye\n"),
    ]);
    let fs = RealFs::open(dir.path()).expect("open");
    let dying = FaultFs::dying(&fs, |op| op == FsOp::Rename, 2);
    let changes = vec![
        Change::Write {
            path: "a.txt".into(),
            content: b"new a\n".to_vec().into(),
            before: Some(Arc::new(b"old a\n".to_vec())),
            mode: None,
        },
        Change::Delete {
            path: "gone.txt".into(),
            size: 4,
        },
        Change::Write {
            path: "b.txt".into(),
            content: b"new b\n".to_vec().into(),
            before: Some(Arc::new(b"old b\n".to_vec())),
            mode: None,
        },
    ];
    assert!(commit(&dying, &changes).is_err(), "the commit died");
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("new a\n"));
    assert_eq!(read(dir.path(), "gone.txt"), None);
    dir
}

#[test]
fn recover_rolls_an_interrupted_commit_back_and_says_so() {
    let dir = interrupted_workspace();
    let root = dir.path().to_str().expect("utf-8");
    let out = run(&["recover", "--root", root], "", None);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "rolled back 2 files of 1 interrupted commit; removed 1 staged temp file\n"
    );
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("old a\n"));
    assert_eq!(read(dir.path(), "b.txt").as_deref(), Some("old b\n"));
    assert_eq!(read(dir.path(), "gone.txt").as_deref(), Some("bye\n"));
    assert!(!dir.path().join(".patchspec/txn").exists());
    let again = run(&["recover", "--root", root], "", None);
    assert_eq!(code(&again), 0);
    assert_eq!(
        text(&again.stdout),
        "nothing to do: no interrupted commit\n"
    );
}

/// A read writes nothing, not even a recovery: it sees the half-done tree;
/// the next writing call rolls the dead commit back first.
#[test]
fn a_read_writes_nothing_and_the_next_write_recovers_first() {
    let dir = interrupted_workspace();
    let root = dir.path().to_str().expect("utf-8");
    let out = run(
        &[
            "call",
            "workspace.read_file",
            r#"{"path":"a.txt"}"#,
            "--root",
            root,
        ],
        "",
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("new a"), "{}", text(&out.stdout));
    assert_eq!(read(dir.path(), "gone.txt"), None);
    assert!(dir.path().join(".patchspec/txn").exists());
    let out = run(
        &["apply", "--root", root],
        &envelope("*** Add File: c.txt\n+c\n"),
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("old a\n"));
    assert_eq!(read(dir.path(), "gone.txt").as_deref(), Some("bye\n"));
    assert_eq!(read(dir.path(), "c.txt").as_deref(), Some("c\n"));
}

/// A journal planted by a clone is never executed, by a read, a write or
/// `recover`; `recover` lists it, `recover --discard` removes it.
#[test]
fn recover_lists_a_planted_journal_and_discard_removes_it() {
    let dir = workspace(&[
        ("notes.md", "mine\n"),
        (".patchspec/txn/1700000000000-0a1b2c3d-0/renaming", ""),
    ]);
    let intent = serde_json::json!({"version": 2, "transaction": "1700000000000-0a1b2c3d-0",
        "steps": [{"op": "create", "path": "notes.md", "temp": "nope"}]});
    std::fs::write(
        dir.path()
            .join(".patchspec/txn/1700000000000-0a1b2c3d-0/intent"),
        intent.to_string(),
    )
    .expect("plant");
    let root = dir.path().to_str().expect("utf-8");
    let out = run(
        &["apply", "--root", root],
        &envelope("*** Add File: c.txt\n+c\n"),
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let out = run(&["recover", "--root", root], "", None);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("not executed, left as it is: .patchspec/txn/1700000000000-0a1b2c3d-0: its record is not sealed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`patchspec recover --discard` removes it"),
        "{stdout}"
    );
    assert_eq!(read(dir.path(), "notes.md").as_deref(), Some("mine\n"));
    let out = run(&["recover", "--root", root, "--discard"], "", None);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .starts_with("discarded .patchspec/txn/1700000000000-0a1b2c3d-0 (3 entries)"),
        "{}",
        text(&out.stdout)
    );
    assert!(!dir.path().join(".patchspec/txn").exists());
    assert_eq!(read(dir.path(), "notes.md").as_deref(), Some("mine\n"));
}

#[test]
fn trash_lists_what_a_delete_put_there() {
    let dir = workspace(&[("keep.txt", "k\n"), ("gone.txt", "bye\n")]);
    let root = dir.path().to_str().expect("utf-8");
    let out = run(
        &["apply", "--root", root],
        &envelope("*** Delete File: gone.txt\n"),
        None,
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let listed = run(&["trash", "--root", root], "", None);
    assert_eq!(code(&listed), 0, "{}", text(&listed.stderr));
    let stdout = text(&listed.stdout);
    assert!(
        stdout.starts_with("trash: 1 commit (kept: 7 days, 1024 MiB"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  4 bytes  1 file\n  gone.txt\n"),
        "{stdout}"
    );
}

/// `patchspec catalog`: each format prints valid JSON of its shape, a
/// selection keeps its order, an unknown tool is a usage error, and
/// `--write-schemas` writes two files a tool.
#[test]
fn catalog_prints_every_format_and_writes_schemas() {
    let json_of = |args: &[&str]| {
        let out = run(args, "", None);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).expect("JSON")
    };
    let full = json_of(&["catalog"]);
    let names: Vec<&str> = full
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, patchspec_engine::dispatch::SUPPORTED_TOOLS);
    let mcp = json_of(&["catalog", "--format", "mcp"]);
    assert_eq!(mcp["tools"][3]["name"], "workspace.read_file");
    assert_eq!(mcp["tools"][3]["outputSchema"]["type"], "object");
    let openai = json_of(&[
        "catalog",
        "--format",
        "openai",
        "--tools",
        "call_chain,workspace.read_file",
    ]);
    assert_eq!(openai[0]["function"]["name"], "call_chain");
    assert_eq!(openai[1]["function"]["name"], "workspace_read_file");
    let anthropic = json_of(&[
        "catalog",
        "--format",
        "anthropic",
        "--tools",
        "workspace_read_file",
    ]);
    assert_eq!(anthropic[0]["input_schema"]["required"][0], "path");

    let out = run(&["catalog", "--tools", "apply_patch,nope"], "", None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown tool \"nope\""));
    let out = run(&["catalog", "--format", "yaml"], "", None);
    assert_eq!(out.status.code(), Some(2));

    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("schemas");
    let target_arg = target.to_str().expect("utf-8");
    let out = run(&["catalog", "--write-schemas", target_arg], "", None);
    assert_eq!(out.status.code(), Some(0));
    let written = std::fs::read_dir(&target).expect("written").count();
    assert_eq!(
        written,
        2 * patchspec_engine::dispatch::SUPPORTED_TOOLS.len()
    );
}
