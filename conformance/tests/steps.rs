//! Multi-step cases through the real binary: a later call uses an earlier
//! result, a step's own expectation fails the case, a template naming what
//! a result lacks is an error of kind `step`, lint refuses a template that
//! names a later step, and a case is skipped when any of its steps' tools is.

mod common;

use common::{check_json, patchspec, Corpus};
use serde_json::{json, Value};

const TEXT: &str = "alpha\nbeta\n";

fn flow(id: &str, read_expect: Value, sha: &str, call_tool_in_step: &str) -> Value {
    json!({
        "id": id,
        "summary": "read, then patch with the SHA read",
        "spec": ["tul-002-workspace-write-patch#8.2-sha-from-read"],
        "tool": "workspace_write_patch",
        "given": {"files": {"a.txt": TEXT}},
        "steps": [{"tool": call_tool_in_step, "call": {"path": "a.txt"}, "expect": {"result": read_expect}}],
        "call": {"files": [{"docPath": "a.txt", "originalSha256": sha,
            "changes": [{"operation": "replace", "startLine": 2, "endLine": 2,
                         "expectedOriginalLines": ["beta"], "newLines": ["BETA"]}]}]},
        "expect": {"result": {"success": true}, "files": {"a.txt": "alpha\nBETA\n"}}
    })
}

#[test]
fn steps_pass_fail_error_and_skip_as_their_calls_do() {
    let corpus = Corpus::new();
    let sha = "{{steps.0.result.file.sha256}}";
    corpus
        .raw(
            "flow/pass",
            flow(
                "flow/pass",
                json!({"success": true}),
                sha,
                "workspace.read_file",
            ),
        )
        .raw(
            "flow/step-mismatch",
            flow(
                "flow/step-mismatch",
                json!({"success": false}),
                sha,
                "workspace.read_file",
            ),
        )
        .raw(
            "flow/bad-template",
            flow(
                "flow/bad-template",
                json!({"success": true}),
                "{{steps.0.result.file.sha512}}",
                "workspace.read_file",
            ),
        )
        .raw(
            "flow/skipped",
            flow("flow/skipped", json!({}), sha, "get_patch_change"),
        );
    let root = corpus.root();
    let run = check_json(&root, &["--skip-tool", "get_patch_change"], &[], 1);
    let outcomes = run.outcomes();
    assert_eq!(outcomes["flow/pass"].0, "pass", "{}", run.stdout);
    assert_eq!(outcomes["flow/step-mismatch"].0, "fail");
    assert_eq!(
        outcomes["flow/bad-template"],
        ("error".into(), "step".into())
    );
    assert_eq!(outcomes["flow/skipped"].0, "skip");
    let mismatch = run.case("flow/step-mismatch");
    assert_eq!(
        mismatch["mismatches"][0]["path"], "steps[0].$.success",
        "{mismatch}"
    );
    assert!(
        run.case("flow/bad-template")["message"]
            .as_str()
            .is_some_and(|m| m.contains("sha512")),
        "{}",
        run.stdout
    );
    // The report shows the call with its template resolved.
    let pass = run.case("flow/pass");
    assert!(pass["result"]["result"]["files"][0]["originalSha256"]
        .as_str()
        .is_some_and(|s| s.len() == 64));
}

#[test]
fn lint_refuses_a_template_that_names_a_later_step() {
    let corpus = Corpus::new();
    let mut case = flow(
        "flow/later",
        json!({"success": true}),
        "{{steps.1.result.file.sha256}}",
        "workspace.read_file",
    );
    case["steps"][0]["call"]["path"] = json!("{{steps.0.result.file.path}}");
    corpus.raw("flow/later", case);
    let root = corpus.root();
    let run = patchspec(&["lint", "--corpus", root.to_str().unwrap(), "--no-run"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("$.steps[0].call.path"), "{all}");
    assert!(all.contains("$.call.files[0].originalSha256"), "{all}");
}
