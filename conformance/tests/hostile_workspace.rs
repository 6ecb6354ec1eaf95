//! The runner against executors that leave hostile workspaces behind: a
//! file far past the per-case limit (sparse, so the test costs nothing),
//! and a workspace replaced by a symlink to `/`. Each case fails with the
//! reason, the run goes on to the next case, and `check` exits 1 with its
//! report written. Shell-script executors: the misbehaviour is the script.

mod common;

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use common::{check_json, Corpus};

/// A oneshot executor: answers every TOOL_CALL with success after running
/// `misbehave` in its workspace (its cwd); exits 1 on anything else (HELLO).
fn script(path: &std::path::Path, misbehave: &str) -> String {
    let text = format!(
        r#"#!/bin/sh
line=$(head -n 1)
case "$line" in *TOOL_CALL*) ;; *) exit 1;; esac
id=$(printf '%s' "$line" | sed -n 's/.*"toolCallId":"\([^"]*\)".*/\1/p')
case "$id" in *hostile*) {misbehave} ;; esac
printf '{{"type":"TOOL_RESULT","data":{{"toolCallId":"%s","success":true,"result":"{{\\"success\\":true}}","executionTime":0}}}}\n' "$id"
"#
    );
    std::fs::write(path, text).expect("write the script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_str().expect("utf-8").to_owned()
}

fn write_case(corpus: &Corpus, id: &str) {
    corpus.raw(
        id,
        json!({
            "id": id, "summary": "the executor answers success", "spec": ["websocket-tool-protocol#tool-result"],
            "tool": "test.write", "given": {"files": {"keep.txt": "k\n"}}, "call": {},
            "expect": {"result": {"success": true}, "files": "unchanged"}
        }),
    );
}

/// Run `check` on a hostile case and a well-behaved one after it; returns
/// the hostile case's record and asserts the rest.
fn run(misbehave: &str) -> Value {
    let corpus = Corpus::new();
    write_case(&corpus, "t/a-hostile");
    write_case(&corpus, "t/b-fine");
    let executor = script(&corpus.path("executor.sh"), misbehave);
    let run = check_json(&corpus.root(), &[], &[&executor], 1);
    run.footer();
    assert_eq!(run.case("t/b-fine")["outcome"], "pass", "the run went on");
    run.case("t/a-hostile")
}

fn message(case: &Value) -> String {
    case.to_string()
}

#[test]
fn a_file_past_the_per_case_limit_fails_the_case_unread() {
    // 300 MiB apparent, no blocks: past the 256 MiB default limit.
    let case = run("truncate -s 300M big.bin");
    assert_eq!(case["outcome"], "error", "{case}");
    let text = message(&case);
    assert!(text.contains("per-case limit of 268435456 bytes"), "{text}");
    assert!(text.contains("big.bin"), "{text}");
}

#[test]
fn a_workspace_replaced_by_a_symlink_is_not_followed() {
    let case = run("cd .. && rm -rf ws && ln -s / ws");
    assert_eq!(case["outcome"], "error", "{case}");
    let text = message(&case);
    assert!(text.contains("replaced by a symlink to /"), "{text}");
}

/// `--max-case-bytes` sets the limit: 3 MiB left is fine under the
/// default, an error under `--max-case-bytes 1M`, and the message gives it.
#[test]
fn the_per_case_limit_is_a_flag() {
    let corpus = Corpus::new();
    write_case(&corpus, "t/a-hostile");
    let executor = script(&corpus.path("executor.sh"), "truncate -s 3M big.bin");
    let ok = check_json(&corpus.root(), &[], &[&executor], 1);
    let case = ok.case("t/a-hostile");
    assert_ne!(case["outcome"], "error", "{case}");
    let run = check_json(&corpus.root(), &["--max-case-bytes", "1M"], &[&executor], 1);
    let case = run.case("t/a-hostile");
    assert_eq!(case["outcome"], "error", "{case}");
    let text = message(&case);
    assert!(text.contains("per-case limit of 1048576 bytes"), "{text}");
}
