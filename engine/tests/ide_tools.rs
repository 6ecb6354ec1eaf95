//! The four IDE-plugin tools (websocket-tool-protocol.md) end to end through
//! the one wire boundary, `patchspec_engine::dispatch::call`, on real
//! temporary workspaces: one `check` helper, data-driven tables, and a
//! property test that no params object makes a tool panic. Built only with
//! the engine's `ide` feature (on by default).
#![cfg(feature = "ide")]

use std::path::Path;

use patchspec_engine::dispatch::{call, Session, ToolCall, ToolOutcome, SUPPORTED_TOOLS};
use proptest::prelude::*;
use serde_json::{json, Value};

const TOOLS: [&str; 4] = ["read_file", "grep_file", "apply_change", "call_chain"];

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    dir
}

fn tool(root: &Path, name: &str, params: &Value) -> ToolOutcome {
    let out = call(&ToolCall {
        tool_name: name,
        params,
        workspace_root: root,
        session: &Session::default(),
    });
    // The outcome mirrors the document, and explains every failure.
    assert_eq!(
        Some(out.success),
        out.result["success"].as_bool(),
        "{}",
        out.result
    );
    assert_eq!(out.error.is_some(), !out.success);
    if let Some(e) = &out.error {
        assert_eq!(Some(e.as_str()), out.result["error"]["message"].as_str());
    }
    out
}

/// Every member of `want` is in `got`, recursively (objects as subsets).
fn subset(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|gv| subset(v, gv))),
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(a, b)| subset(a, b))
        }
        _ => want == got,
    }
}

/// Run `params` with `name` on a workspace of `files`; the result document
/// must contain `want`; returns the workspace for tree checks.
fn check(files: &[(&str, &str)], name: &str, params: Value, want: Value) -> tempfile::TempDir {
    let dir = workspace(files);
    let out = tool(dir.path(), name, &params);
    assert!(
        subset(&want, &out.result),
        "{name} {params}\nwant (subset): {want}\ngot: {:#}",
        out.result
    );
    dir
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

#[test]
fn the_four_tools_are_supported() {
    for t in TOOLS {
        assert!(SUPPORTED_TOOLS.contains(&t), "{t}");
    }
}

#[test]
fn missing_required_params_name_the_field_before_any_work() {
    // The workspace root does not even exist: the params are checked first.
    let nowhere = Path::new("/nonexistent/patchspec-ide");
    let table = [
        ("read_file", json!({}), "relativePath"),
        ("read_file", json!({"relativePath": ""}), "relativePath"),
        ("grep_file", json!({"relativePath": "a"}), "pattern"),
        ("grep_file", json!({"pattern": ""}), "pattern"),
        (
            "apply_change",
            json!({"replaceContent": "x"}),
            "relativePath",
        ),
        (
            "apply_change",
            json!({"relativePath": "a", "searchContent": "x"}),
            "replaceContent",
        ),
        ("call_chain", json!({"direction": "callers"}), "method"),
        ("call_chain", json!({"method": null}), "method"),
    ];
    for (name, params, field) in table {
        let out = tool(nowhere, name, &params);
        assert_eq!(
            out.result["error"]["kind"], "invalid_params",
            "{name} {params}"
        );
        assert_eq!(
            out.result["error"]["details"]["field"], field,
            "{name} {params}"
        );
        assert!(out.error.unwrap().contains(field));
    }
    let out = tool(nowhere, "grep_file", &json!("TODO"));
    assert_eq!(out.result["error"]["details"]["reason"], "not_object");
}

#[test]
fn protocol_keys_are_accepted_and_ignored() {
    let extra = json!({"projectKey": "autoloop", "webSocketSessionId": "83742e07"});
    let with = |v: Value| {
        let mut v = v;
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    let files = [
        ("a.txt", "TODO one\n"),
        ("A.java", "class A { void m() {} }\n"),
    ];
    check(
        &files,
        "read_file",
        with(json!({"relativePath": "a.txt"})),
        json!({"success": true}),
    );
    check(
        &files,
        "grep_file",
        with(json!({"pattern": "todo"})),
        json!({"totalMatches": 1}),
    );
    check(
        &files,
        "call_chain",
        with(json!({"method": "A.m"})),
        json!({"success": true}),
    );
    let dir = check(
        &files,
        "apply_change",
        with(json!({"relativePath": "a.txt", "searchContent": "one", "replaceContent": "two"})),
        json!({"success": true, "changed": true}),
    );
    assert_eq!(read(dir.path(), "a.txt"), "TODO two\n");
}

#[test]
fn read_file_windows() {
    let files = [("f.txt", "1\n2\n3\n4\n5\n")];
    let table = [
        (
            json!({}),
            json!({"startLine": 1, "endLine": 5, "totalLines": 5, "content": "1\n2\n3\n4\n5\n"}),
        ),
        (
            json!({"start_line": 4}),
            json!({"startLine": 4, "endLine": 5, "content": "4\n5\n"}),
        ),
        (
            json!({"end_line": 2}),
            json!({"startLine": 1, "endLine": 2, "content": "1\n2\n"}),
        ),
        (
            json!({"start_line": 2, "end_line": 3}),
            json!({"content": "2\n3\n"}),
        ),
        (
            json!({"line": 3, "context_lines": 1}),
            json!({"startLine": 2, "endLine": 4}),
        ),
        (json!({"line": 3}), json!({"startLine": 1, "endLine": 5})),
        (
            json!({"start_line": 9}),
            json!({"success": false, "error": {"kind": "line_out_of_range", "details": {"totalLines": 5}}}),
        ),
        (
            json!({"line": 2, "end_line": 3}),
            json!({"success": false, "error": {"kind": "invalid_params", "details": {"field": "line", "reason": "conflict"}}}),
        ),
    ];
    for (extra, want) in table {
        let mut params = json!({"relativePath": "f.txt"});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        check(&files, "read_file", params, want);
    }
    check(
        &files,
        "read_file",
        json!({"relativePath": "nope.txt"}),
        json!({"error": {"kind": "not_found"}}),
    );
    check(
        &files,
        "read_file",
        json!({"relativePath": "../f.txt"}),
        json!({"error": {"kind": "outside_workspace"}}),
    );
    check(
        &files,
        "read_file",
        json!({"relativePath": "/etc/passwd"}),
        json!({"error": {"kind": "invalid_path"}}),
    );
}

#[test]
fn grep_file_walks_like_a_user_would() {
    let files = [
        (".gitignore", "generated/\n"),
        ("src/A.java", "// TODO a\nclass A {}\n"),
        ("src/b.kt", "// todo b\n"),
        ("generated/G.java", "// TODO g\n"),
        ("target/T.java", "// TODO t\n"),
        ("node_modules/x/i.js", "// TODO n\n"),
        (".git/HEAD", "TODO\n"),
    ];
    let paths = |doc: &Value| -> Vec<String> {
        doc["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
            .collect()
    };
    let dir = workspace(&files);
    let out = tool(dir.path(), "grep_file", &json!({"pattern": "TODO"}));
    assert_eq!(paths(&out.result), ["src/A.java:1", "src/b.kt:1"]);
    let out = tool(
        dir.path(),
        "grep_file",
        &json!({"pattern": "TODO", "case_sensitive": true, "file_type": "java"}),
    );
    assert_eq!(paths(&out.result), ["src/A.java:1"]);
    let out = tool(
        dir.path(),
        "grep_file",
        &json!({"pattern": "TODO", "file_type": ".kt"}),
    );
    assert_eq!(paths(&out.result), ["src/b.kt:1"]);
    let out = tool(
        dir.path(),
        "grep_file",
        &json!({"pattern": "TODO", "relativePath": "target"}),
    );
    assert_eq!(paths(&out.result), ["target/T.java:1"]);
    let out = tool(
        dir.path(),
        "grep_file",
        &json!({"pattern": "TODO", "relativePath": "generated/G.java"}),
    );
    assert_eq!(paths(&out.result), ["generated/G.java:1"]);
    let out = tool(
        dir.path(),
        "grep_file",
        &json!({"pattern": "[", "regex": true}),
    );
    assert_eq!(out.result["error"]["kind"], "invalid_regex");
}

#[test]
fn apply_change_modifies_creates_and_refuses() {
    let files = [("a.txt", "x\ny\nx\n"), ("d/keep.txt", "k\n")];
    let dir = check(
        &files,
        "apply_change",
        json!({"relativePath": "a.txt", "searchContent": "x\n", "replaceContent": "z\n"}),
        json!({"success": false, "error": {"kind": "multiple_matches", "details": {"occurrences": 2, "lines": [1, 3]}}}),
    );
    assert_eq!(read(dir.path(), "a.txt"), "x\ny\nx\n");
    let dir = check(
        &files,
        "apply_change",
        json!({"relativePath": "a.txt", "searchContent": "y\nx", "replaceContent": "Y", "description": "rename"}),
        json!({"success": true, "operation": "modify", "line": 2, "description": "rename"}),
    );
    assert_eq!(read(dir.path(), "a.txt"), "x\nY\n");
    let dir = check(
        &files,
        "apply_change",
        json!({"relativePath": "d/new.txt", "replaceContent": "n"}),
        json!({"success": true, "operation": "create", "changed": true}),
    );
    assert_eq!(read(dir.path(), "d/new.txt"), "n");
    check(
        &files,
        "apply_change",
        json!({"relativePath": "a.txt", "searchContent": "", "replaceContent": "n"}),
        json!({"error": {"kind": "already_exists"}}),
    );
    check(
        &files,
        "apply_change",
        json!({"relativePath": "e/new.txt", "replaceContent": "n"}),
        json!({"error": {"kind": "not_found", "details": {"reason": "missing_parent"}}}),
    );
    check(
        &files,
        "apply_change",
        json!({"relativePath": "d", "searchContent": "k", "replaceContent": "n"}),
        json!({"error": {"kind": "not_a_file"}}),
    );
}

#[test]
fn call_chain_through_dispatch() {
    let files = [
        ("src/A.java", "class A {\n  void a() { new B().b(); }\n}\n"),
        (
            "src/B.java",
            "class B {\n  void b() { c(); }\n  void c() {}\n}\n",
        ),
    ];
    check(
        &files,
        "call_chain",
        json!({"method": "B.b", "depth": 2, "includeSource": true}),
        json!({
            "success": true,
            "declarations": [{"method": "B.b", "file": "src/B.java", "line": 2, "source": "void b() { c(); }"}],
            "callers": [{"method": "A.a", "file": "src/A.java", "line": 2,
                         "callSites": [{"line": 2, "resolution": "type"}], "callers": []}],
            "callees": [{"method": "B.c", "external": false, "callSites": [{"line": 2}], "callees": []}],
        }),
    );
}

fn arb_json() -> impl Strategy<Value = Value> {
    let keys = prop_oneof![
        Just("relativePath"),
        Just("start_line"),
        Just("end_line"),
        Just("line"),
        Just("context_lines"),
        Just("pattern"),
        Just("regex"),
        Just("case_sensitive"),
        Just("limit"),
        Just("file_type"),
        Just("searchContent"),
        Just("replaceContent"),
        Just("description"),
        Just("method"),
        Just("direction"),
        Just("depth"),
        Just("includeSource"),
        Just("projectKey"),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        prop_oneof![
            Just("a.txt".to_string()),
            Just("..".to_string()),
            Just("/".to_string()),
            Just("A.m".to_string()),
            Just("java".to_string()),
            Just("(".to_string()),
            Just("callers".to_string()),
            Just("x\n".to_string()),
            Just(".".to_string()),
            "[a-zA-Z.()/*\\[\\\\\r\n ]{0,8}",
        ]
        .prop_map(Value::String),
    ];
    let value = leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop_oneof![
        4 => prop::collection::btree_map(keys, value.clone(), 0..6)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        1 => value,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// No params object makes a tool panic, and the outcome always mirrors
    /// its document.
    #[test]
    fn arbitrary_params_never_panic(params in arb_json(), t in 0usize..4) {
        let dir = workspace(&[
            ("a.txt", "one\r\ntwo\n"),
            ("A.java", "class A { void m() { m(); } }\n"),
        ]);
        let out = call(&ToolCall {
            tool_name: TOOLS[t],
            params: &params,
            workspace_root: dir.path(),
            session: &Session::default(),
        });
        prop_assert_eq!(Some(out.success), out.result["success"].as_bool());
        prop_assert_ne!(out.result["error"]["kind"].as_str(), Some("internal_error"));
    }
}
