//! The patch store and the events through the real binary: a batch stored
//! by one process and read by another, two processes writing one store at
//! once, files that are not a store refused at start and left untouched,
//! and the JSON events paired per call: in a session of nine chosen calls,
//! and over a whole corpus run recorded in one store.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{patchspec, PATCHSPEC};
use patchspec_engine::hash::sha256_hex as sha;
use serde_json::{json, Value};

fn batch(text: &str) -> Value {
    json!({"batchKey": "bk", "files": [{
    "docPath": "a.txt", "fileKey": "fk", "originalSha256": sha(text.as_bytes()),
    "changes": [
        {"operation": "insert", "afterLine": 0, "newLines": ["top"], "changeKey": "c0", "description": "a header"},
        {"operation": "replace", "startLine": 2, "endLine": 2, "expectedOriginalLines": ["two"], "newLines": ["2"]}
    ]}]})
}

fn call(tool: &str, params: &Value, root: &Path, store: Option<&Path>) -> (i32, Value) {
    let mut args = vec![
        "call".to_string(),
        tool.to_string(),
        params.to_string(),
        "--root".into(),
        root.display().to_string(),
    ];
    if let Some(store) = store {
        args.extend(["--store".into(), store.display().to_string()]);
    }
    let run = patchspec(&args);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, doc)
}

#[test]
fn a_batch_stored_by_one_process_is_read_back_by_another() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let (code, written) = call(
        "workspace_write_patch",
        &batch("one\ntwo\n"),
        dir.path(),
        Some(&store),
    );
    assert_eq!(code, 0, "{written}");
    let ids = &written["result"];
    let batch_id = ids["batchId"].as_str().unwrap();
    let file = &ids["files"][0];

    let (code, whole) = call(
        "get_patch_change",
        &json!({"batchId": batch_id}),
        dir.path(),
        Some(&store),
    );
    assert_eq!(code, 0, "{whole}");
    assert_eq!(whole["batch"]["batchKey"], "bk");
    assert_eq!(whole["batch"]["applied"], true);
    assert_eq!(whole["batch"]["files"][0]["newSha256"], file["newSha256"]);
    assert_eq!(
        whole["diff"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+top\n@@ -2,1 +3,1 @@\n-two\n+2\n"
    );

    let (code, one_file) = call(
        "get_patch_change",
        &json!({"batchId": batch_id, "filePatchId": file["filePatchId"]}),
        dir.path(),
        Some(&store),
    );
    assert_eq!(code, 0);
    assert_eq!(one_file["filePatch"]["fileKey"], "fk");
    assert_eq!(one_file["filePatch"]["originalSha256"], sha(b"one\ntwo\n"));

    let (code, change) = call(
        "get_patch_change",
        &json!({"batchId": batch_id, "changeId": file["changes"][0]["changeId"]}),
        dir.path(),
        Some(&store),
    );
    assert_eq!(code, 0);
    assert_eq!(change["change"]["description"], "a header");
    assert_eq!(change["change"]["docPath"], "a.txt");
    assert_eq!(
        change["diff"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+top\n"
    );

    for (params, store, kind) in [
        (
            json!({"batchId": format!("batch-{}", "0".repeat(32))}),
            Some(&store),
            "not_found",
        ),
        (
            json!({"batchId": batch_id, "changeId": format!("chg-{}", "0".repeat(32))}),
            Some(&store),
            "not_found",
        ),
        (
            json!({"batchId": "batch-1"}),
            Some(&store),
            "invalid_params",
        ),
        (json!({"batchId": batch_id}), None, "store_not_configured"),
    ] {
        let (code, doc) = call(
            "get_patch_change",
            &params,
            dir.path(),
            store.map(|p| p.as_path()),
        );
        assert_eq!(code, 1, "{doc}");
        assert_eq!(doc["error"]["kind"], kind, "{params}");
    }
}

fn tool_call(id: &str, tool: &str, root: &Path, params: Value) -> String {
    json!({
        "type": "TOOL_CALL", "toolCallId": id, "toolName": tool, "params": params,
        "webSocketSessionId": "", "workspaceRoot": root.display().to_string(), "session": {}
    })
    .to_string()
}

/// Run `patchspec exec --session EXTRA` on `calls`; its answers by call id, and its stderr.
fn session(extra: &[&str], calls: &[String]) -> (BTreeMap<String, Value>, String) {
    let mut child = Command::new(PATCHSPEC)
        .args(["exec", "--session"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in calls {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let data = &v["data"];
            (
                data["toolCallId"].as_str().unwrap().to_string(),
                serde_json::from_str(data["result"].as_str().unwrap()).unwrap(),
            )
        })
        .collect();
    (answers, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn two_processes_write_one_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let store_arg = store.display().to_string();
    let runs: Vec<_> = ["p", "q"]
        .into_iter()
        .map(|name| {
            let root = dir.path().join(name);
            std::fs::create_dir(&root).unwrap();
            let calls: Vec<String> = (0..40)
                .map(|i| {
                    let text = "one\ntwo\n";
                    std::fs::write(root.join(format!("f{i}.txt")), text).unwrap();
                    let mut b = batch(text);
                    b["files"][0]["docPath"] = json!(format!("f{i}.txt"));
                    tool_call(&format!("{name}{i}"), "workspace_write_patch", &root, b)
                })
                .collect();
            let store_arg = store_arg.clone();
            std::thread::spawn(move || session(&["--store", &store_arg], &calls))
        })
        .collect();
    let mut batch_ids = Vec::new();
    for run in runs {
        let (answers, stderr) = run.join().unwrap();
        assert!(!stderr.contains("Store.WriteFailed"), "{stderr}");
        assert_eq!(answers.len(), 40);
        for result in answers.values() {
            assert_eq!(result["success"], true, "{result}");
            batch_ids.push(result["result"]["batchId"].as_str().unwrap().to_string());
        }
    }
    let reader = patchspec_store::SqliteStore::open(&store).unwrap();
    assert_eq!(reader.call_count().unwrap(), 80);
    use patchspec_engine::store::PatchStore;
    for id in &batch_ids {
        let stored = reader.batch(id).unwrap().unwrap();
        assert!(stored.applied && stored.files[0].changes.len() == 2, "{id}");
    }
}

#[test]
fn a_file_that_is_not_a_store_stops_every_command_at_start_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.db");
    std::fs::write(&notes, "my notes, not a database\n").unwrap();
    let notes_arg = notes.display().to_string();
    let root = dir.path().display().to_string();
    for args in [
        vec!["call", "get_patch_change", "{}", "--store", &notes_arg],
        vec!["exec", "--store", &notes_arg],
        vec!["exec", "--session", "--store", &notes_arg],
        vec!["mcp", "--root", &root, "--store", &notes_arg],
    ] {
        let run = patchspec(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("not an SQLite database"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("left untouched"), "{}", run.stderr);
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            "my notes, not a database\n"
        );
    }
}

#[test]
fn every_call_logs_its_received_and_executed_or_error_pair_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    let calls = vec![
        tool_call("c1", "workspace.read_file", &root, json!({"path": "a.txt"})),
        tool_call("c2", "workspace_write_patch", &root, batch("one\ntwo\n")),
        tool_call("c3", "workspace_write_patch", &root, batch("stale\n")),
        tool_call("c4", "workspace_write_patch", &root, json!({"files": []})),
        tool_call(
            "c5",
            "workspace_create_file",
            &root,
            json!({"path": "n.txt", "content": "x\n"}),
        ),
        tool_call(
            "c6",
            "workspace_create_file",
            &root,
            json!({"path": "n.txt", "content": "x\n"}),
        ),
        tool_call(
            "c7",
            "apply_patch",
            &root,
            json!({"patch": "*** Begin Patch\n*** Add File: m.txt\n+y\n*** End Patch\n"}),
        ),
        tool_call(
            "c8",
            "get_patch_change",
            &root,
            json!({"batchId": format!("batch-{}", "0".repeat(32))}),
        ),
        tool_call("c9", "no_such_tool", &root, json!({})),
    ];
    let store_arg = store.display().to_string();
    let (answers, stderr) = session(&["--store", &store_arg, "--log-format", "json"], &calls);
    let mut events: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in stderr.lines() {
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(event["target"], "patchspec::events", "{line}");
        let id = event["call_id"].as_str().unwrap().to_string();
        events.entry(id).or_default().push(event);
    }
    assert_eq!(answers.len(), calls.len());
    for (id, result) in &answers {
        let seen = &events[id];
        let names: Vec<&str> = seen.iter().map(|e| e["event"].as_str().unwrap()).collect();
        assert_call_pair(id, &names, result["success"] == true);
        assert!(seen.iter().all(|e| e["tool"] == seen[0]["tool"]), "{id}");
        assert!(
            seen.last().unwrap()["duration_ms"].as_f64().is_some(),
            "{id}"
        );
    }
    let find = |id: &str, name: &str| -> Value {
        events[id]
            .iter()
            .find(|e| e["event"] == name)
            .unwrap_or_else(|| panic!("{id}: no {name}"))
            .clone()
    };
    let stored = find("c2", "Tool.WritePatch.BatchStored");
    assert_eq!(stored["batch_id"], answers["c2"]["result"]["batchId"]);
    assert_eq!(
        (stored["files"].as_u64(), stored["changes"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(find("c2", "Tool.WritePatch.BatchReceived")["changes"], 2);
    let refused = find("c3", "Tool.WritePatch.Error");
    assert_eq!(refused["error_code"], "sha256_mismatch");
    assert_eq!(refused["doc_path"], "a.txt");
    assert_eq!(
        find("c4", "Tool.WritePatch.Error")["validation_failures"]
            .as_u64()
            .map(|n| n > 0),
        Some(true)
    );
    let executed = find("c5", "Tool.CreateFile.Executed");
    assert_eq!(executed["hash"], answers["c5"]["hash"]);
    assert_eq!(executed["size_bytes"], 2);
    assert_eq!(
        find("c6", "Tool.CreateFile.ResultReceived")["error_code"],
        "FileExists"
    );
    assert_eq!(find("c5", "Tool.CreateFile.Forwarded")["path"], "n.txt");
    find("c7", "Store.Recorded");
    assert_eq!(find("c8", "Tool.Call.Error")["error_code"], "not_found");
    assert!(!events["c1"].iter().any(|e| e["event"] == "Store.Recorded"));
}

/// A call's events, by name: `Tool.Call.Received` first, and last the one
/// of `Tool.Call.Executed` / `Tool.Call.Error` its answer calls for, and no
/// other `Tool.Call.*` event.
fn assert_call_pair(id: &str, names: &[&str], succeeded: bool) {
    assert_eq!(
        names.first(),
        Some(&"Tool.Call.Received"),
        "{id}: {names:?}"
    );
    let last = if succeeded {
        "Tool.Call.Executed"
    } else {
        "Tool.Call.Error"
    };
    assert_eq!(names.last(), Some(&last), "{id}: {names:?}");
    assert_eq!(
        names.iter().filter(|n| n.starts_with("Tool.Call.")).count(),
        2,
        "{id}: {names:?}"
    );
}

/// The error code a result document carries: `errorCode`, the first
/// `errors[].code`, or `error.kind` (docs/tools.md "Events").
fn result_error_code(result: &Value) -> &str {
    result["errorCode"]
        .as_str()
        .or_else(|| result["errors"][0]["code"].as_str())
        .or_else(|| result["error"]["kind"].as_str())
        .unwrap_or("")
}

/// Every line of the files in `dir` whose names start with `prefix`, as JSON.
fn json_lines(dir: &Path, prefix: &str) -> Vec<Value> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with(prefix) {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            lines
                .push(serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}")));
        }
    }
    lines
}

/// The whole corpus through `patchspec exec --session --store S --log-format
/// json`, with each executor process's stdin, stdout and stderr copied to
/// files: every tool call the runner sent has its events, `Tool.Call.Received`
/// first and exactly one of `Tool.Call.Executed` / `Tool.Call.Error` last, as
/// its answer says, all naming its tool; every call of a writing tool was
/// recorded (`Store.Recorded`; a batch with IDs `Tool.WritePatch.BatchStored`
/// with its batchId and counts); each tool's own events carry the answer's
/// values; and no event names a call that was not made.
#[test]
fn a_corpus_run_logs_each_calls_pair_and_tool_events_with_the_right_ids() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let store = dir.path().join("s.db");
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    // One set of files per executor process ($$), so that parallel
    // workers never interleave their lines.
    let script = format!(
        "tee {logs}/calls.$$ | \"$0\" exec --session --store {store} --log-format json \
         2>{logs}/events.$$ | tee {logs}/answers.$$",
        logs = logs.display(),
        store = store.display()
    );
    let run = patchspec(&[
        "check",
        "--corpus",
        corpus,
        "--transport",
        "session",
        "-j",
        "2",
        "--",
        "sh",
        "-c",
        &script,
        PATCHSPEC,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let calls: BTreeMap<String, Value> = json_lines(&logs, "calls.")
        .into_iter()
        .filter(|m| m["type"] == "TOOL_CALL")
        .map(|m| (m["toolCallId"].as_str().unwrap().to_string(), m))
        .collect();
    let answers: BTreeMap<String, Value> = json_lines(&logs, "answers.")
        .into_iter()
        .filter(|m| m["type"] == "TOOL_RESULT")
        .map(|m| {
            let data = &m["data"];
            let result = serde_json::from_str(data["result"].as_str().unwrap()).unwrap();
            (data["toolCallId"].as_str().unwrap().to_string(), result)
        })
        .collect();
    let mut events: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for event in json_lines(&logs, "events.") {
        assert_eq!(event["target"], "patchspec::events", "{event}");
        // The journal's events belong to a workspace, not to a call
        // (docs/tools.md): the corpus's planted-journal cases raise them.
        let Some(id) = event["call_id"].as_str().map(str::to_string) else {
            let name = event["event"].as_str().unwrap_or("");
            assert!(
                name.starts_with("Journal."),
                "an event with no call_id: {event}"
            );
            continue;
        };
        assert!(calls.contains_key(&id), "an event of no call: {event}");
        events.entry(id).or_default().push(event);
    }
    // Every case ran (the check passed); some have several steps.
    assert!(calls.len() >= 1_000, "{} calls", calls.len());
    assert_eq!(
        calls.keys().collect::<Vec<_>>(),
        answers.keys().collect::<Vec<_>>()
    );

    let mut recorded = 0;
    for (id, call) in &calls {
        let tool = call["toolName"].as_str().unwrap();
        let result = &answers[id];
        let seen = events.get(id).map_or(&[][..], Vec::as_slice);
        let names: Vec<&str> = seen.iter().map(|e| e["event"].as_str().unwrap()).collect();
        let find = |name: &str| -> &Value {
            seen.iter()
                .find(|e| e["event"] == name)
                .unwrap_or_else(|| panic!("{id}: no {name} in {names:?}"))
        };
        let succeeded = result["success"] == true;
        assert_call_pair(id, &names, succeeded);
        assert!(seen.iter().all(|e| e["tool"] == tool), "{id}: {names:?}");
        if !succeeded {
            assert_eq!(
                find("Tool.Call.Error")["error_code"],
                result_error_code(result),
                "{id}"
            );
        }
        assert!(!names.contains(&"Store.WriteFailed"), "{id}: {names:?}");
        let writes = patchspec_engine::tools::writes(tool);
        assert_eq!(names.contains(&"Store.Recorded"), writes, "{id}: {names:?}");
        recorded += usize::from(writes);
        match tool {
            "workspace_write_patch" => {
                let files = call["params"]["files"].as_array();
                let changes: usize = files.map_or(0, |f| {
                    f.iter()
                        .map(|f| f["changes"].as_array().map_or(0, Vec::len))
                        .sum()
                });
                assert_eq!(
                    find("Tool.WritePatch.BatchReceived")["changes"],
                    changes,
                    "{id}"
                );
                match result["result"]["batchId"].as_str() {
                    Some(batch_id) => {
                        let stored = find("Tool.WritePatch.BatchStored");
                        assert_eq!(stored["batch_id"], batch_id, "{id}");
                        assert_eq!(
                            stored["files"],
                            result["result"]["files"].as_array().unwrap().len(),
                            "{id}"
                        );
                    }
                    None => assert!(!names.contains(&"Tool.WritePatch.BatchStored"), "{id}"),
                }
                if !succeeded {
                    let error = find("Tool.WritePatch.Error");
                    assert_eq!(
                        error["batch_id"],
                        result["result"]["batchId"].as_str().unwrap_or(""),
                        "{id}"
                    );
                }
            }
            "workspace_create_file" => {
                find("Tool.CreateFile.Forwarded");
                for name in ["Tool.CreateFile.Executed", "Tool.CreateFile.ResultReceived"] {
                    let event = find(name);
                    assert_eq!(event["success"], result["success"], "{id}: {name}");
                    assert_eq!(
                        event["hash"],
                        result["hash"].as_str().unwrap_or(""),
                        "{id}: {name}"
                    );
                    assert_eq!(event["size_bytes"], result["sizeBytes"], "{id}: {name}");
                }
            }
            _ => {}
        }
    }
    // And the store holds exactly those calls.
    let reader = patchspec_store::SqliteStore::open(&store).unwrap();
    assert_eq!(reader.call_count().unwrap(), recorded as u64);
}
