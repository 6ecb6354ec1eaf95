//! The TUL tools end to end through the one wire boundary,
//! `patchspec_engine::dispatch::call`, on real temporary workspaces.

use std::path::Path;

use patchspec_engine::dispatch::{call, Session, ToolCall, ToolOutcome};
use patchspec_engine::hash::sha256_hex;
use serde_json::{json, Value};

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    dir
}

fn tool(root: &Path, name: &str, params: Value, session: &Session) -> ToolOutcome {
    let out = call(&ToolCall {
        tool_name: name,
        params: &params,
        workspace_root: root,
        session,
    });
    // The outcome mirrors the document, and explains every failure.
    assert_eq!(
        Some(out.success),
        out.result["success"].as_bool(),
        "{}",
        out.result
    );
    assert_eq!(out.error.is_some(), !out.success);
    out
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

#[test]
fn create_then_read_then_patch_then_read() {
    let dir = workspace(&[]);
    let s = Session::default();
    let created = tool(
        dir.path(),
        "workspace_create_file",
        json!({"path": "src\\lib.rs", "content": "fn a() {}\r\nfn c() {}\r\n"}),
        &s,
    );
    assert!(created.success);
    assert_eq!(created.result["path"], "src/lib.rs");
    assert_eq!(read(dir.path(), "src/lib.rs"), "fn a() {}\nfn c() {}\n");

    let got = tool(
        dir.path(),
        "workspace.read_file",
        json!({"path": "src/lib.rs"}),
        &s,
    );
    let file = &got.result["file"];
    assert_eq!(file["content"], "fn a() {}\nfn c() {}\n");
    // The hash the create reported is the one the read reports and the patch wants.
    assert_eq!(file["sha256"], created.result["hash"]);

    let patched = tool(
        dir.path(),
        "workspace_write_patch",
        json!({"batchKey": "add-b", "files": [{"docPath": "src/lib.rs", "originalSha256": file["sha256"],
            "changes": [{"changeKey": "b", "operation": "insert", "afterLine": 1, "newLines": ["fn b() {}"]}]}]}),
        &s,
    );
    assert!(patched.success, "{}", patched.result);
    assert_eq!(patched.result["result"]["batchKey"], "add-b");
    assert_eq!(
        read(dir.path(), "src/lib.rs"),
        "fn a() {}\nfn b() {}\nfn c() {}\n"
    );
    let again = tool(
        dir.path(),
        "workspace.read_file",
        json!({"path": "src/lib.rs", "maxBytes": 9}),
        &s,
    );
    assert_eq!(again.result["file"]["content"], "fn a() {}");
    assert_eq!(again.result["file"]["isTruncated"], true);
    assert_eq!(
        again.result["file"]["sha256"],
        patched.result["result"]["files"][0]["newSha256"]
    );
}

#[test]
fn a_stale_patch_changes_nothing_in_any_file() {
    let dir = workspace(&[("a.txt", "a\n"), ("b/c.txt", "c\n"), ("d.txt", "d\n")]);
    let s = Session::default();
    let out = tool(
        dir.path(),
        "workspace_write_patch",
        json!({"files": [
            {"docPath": "a.txt", "originalSha256": sha256_hex(b"a\n"), "changes": [{"operation": "delete", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"]}]},
            {"docPath": "b/c.txt", "originalSha256": sha256_hex(b"c\n"), "changes": [{"operation": "replace", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["C"], "newLines": ["x"]}]},
            {"docPath": "d.txt", "originalSha256": sha256_hex(b"d\n"), "changes": [{"operation": "insert", "afterLine": 1, "newLines": ["e"]}]}
        ]}),
        &s,
    );
    assert!(!out.success);
    let files = &out.result["result"]["files"];
    assert_eq!(files[1]["error"]["code"], "line_mismatch");
    assert_eq!(files[1]["error"]["line"], 1);
    assert_eq!(
        files[0]["skippedBecause"],
        "another file in the batch failed"
    );
    assert_eq!(
        files[2]["skippedBecause"],
        "another file in the batch failed"
    );
    assert_eq!(
        (
            read(dir.path(), "a.txt"),
            read(dir.path(), "b/c.txt"),
            read(dir.path(), "d.txt")
        ),
        ("a\n".into(), "c\n".into(), "d\n".into())
    );
}

#[test]
fn an_invalid_batch_lists_every_error_and_touches_nothing() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let out = tool(
        dir.path(),
        "workspace_write_patch",
        json!({"files": [{"docPath": "a.txt", "originalSha256": "nope", "changes": [
            {"operation": "insert", "afterLine": -1, "newLines": []},
            {"operation": "delete", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"], "newLines": ["b"]}
        ]}]}),
        &Session::default(),
    );
    let codes: Vec<&str> = out.result["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "sha256_malformed",
            "after_line_negative",
            "new_lines_empty",
            "new_lines_on_delete"
        ]
    );
    assert_eq!(out.result["result"], Value::Null);
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
}

#[test]
fn read_file_respects_active_files_and_the_workspace_boundary() {
    let dir = workspace(&[("src/billing.cs", "class B {}\n")]);
    let mut s = Session::default();
    s.active_files
        .insert("src/billing.cs".into(), "class B {}\n".into());
    let out = tool(
        dir.path(),
        "workspace.read_file",
        json!({"path": "src/billing.cs"}),
        &s,
    );
    assert_eq!(out.result["errorCode"], "ALREADY_IN_CONTEXT");
    let out = tool(
        dir.path(),
        "workspace.read_file",
        json!({"path": "../etc/passwd"}),
        &s,
    );
    assert_eq!(out.result["errorCode"], "INVALID_ARGUMENT");
    let out = tool(
        dir.path(),
        "workspace.read_file",
        json!({"path": "src/experimental.cs"}),
        &s,
    );
    assert_eq!(out.result["errorCode"], "NOT_FOUND");
    assert_eq!(
        out.result["errors"][0],
        "File 'src/experimental.cs' is not available in activeFiles or the workspace. Ask the user to upload it if needed."
    );
}

#[test]
fn create_file_refuses_escapes_and_existing_files() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let s = Session::default();
    for path in [
        "../evil.txt",
        "/tmp/evil.txt",
        "C:\\evil.txt",
        "\\\\srv\\share\\evil.txt",
    ] {
        let out = tool(
            dir.path(),
            "workspace_create_file",
            json!({"path": path, "content": "x"}),
            &s,
        );
        assert_eq!(out.result["errorCode"], "InvalidPath", "{path}");
    }
    let out = tool(
        dir.path(),
        "workspace_create_file",
        json!({"path": "a.txt", "content": "x"}),
        &s,
    );
    assert_eq!(out.result["errorCode"], "FileExists");
    assert_eq!(out.result["success"], false);
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
    let out = tool(
        dir.path(),
        "workspace_create_file",
        json!({"path": "a.txt", "content": "x", "overwrite": true}),
        &s,
    );
    assert_eq!(
        (
            out.result["created"].as_bool(),
            out.result["overwritten"].as_bool()
        ),
        (Some(false), Some(true))
    );
}

#[test]
fn no_tool_panics_on_params_of_any_shape() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let s = Session::default();
    let shapes = [
        json!(null),
        json!(true),
        json!(3),
        json!(-1),
        json!(1.5),
        json!("a.txt"),
        json!([]),
        json!([{}]),
        json!({}),
        json!({"path": {"nested": 1}, "content": [], "maxBytes": u64::MAX, "files": [null]}),
        json!({"files": [{"docPath": "a.txt", "originalSha256": sha256_hex(b"a\n"), "changes": [
            {"operation": "replace", "startLine": u64::MAX, "endLine": u64::MAX, "expectedOriginalLines": ["a"], "newLines": ["b"]}]}]}),
        json!({"files": [{"docPath": "a.txt", "originalSha256": sha256_hex(b"a\n"), "changes": [
            {"operation": "insert", "afterLine": i64::MAX, "newLines": ["b"]}]}]}),
    ];
    for name in [
        "workspace_write_patch",
        "workspace_create_file",
        "workspace.read_file",
    ] {
        for params in &shapes {
            let out = tool(dir.path(), name, params.clone(), &s);
            assert!(out.result.is_object(), "{name} {params}");
        }
    }
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
}
