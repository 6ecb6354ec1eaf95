//! A purpose-built executor for the runner's own tests (not shipped).
//!
//! It speaks the protocol like a third-party executor would (serde_json
//! only), implements one fake tool, `test.write {path, content}` (write the
//! file, answer `{"success": true, "path": path}`), and hands every other
//! tool to the reference engine. A case picks a misbehaviour with the param
//! `misbehave`:
//!
//! | misbehave | what the executor does | the runner must report |
//! |---|---|---|
//! | `crash` | aborts (SIGABRT) without answering | error (crash) |
//! | `exit3` | exits with code 3 without answering | error (crash) |
//! | `hang` | starts a grandchild holding stdout (its pid written to the param `pidFile`, when given), then sleeps | error (timeout); the grandchild is killed with the group |
//! | `garbage` | prints text that is not JSON | error (protocol) |
//! | `two` | prints two answers, in one write | error (protocol) |
//! | `two-delayed` | prints the answer, then the same answer again in a second write: in a session once the next message (the next call, or BYE) has arrived, so the runner has judged the call | error (protocol), in a session after the fact |
//! | `wrong-id` | echoes another toolCallId | error (protocol) |
//! | `result-not-json` | `data.result` is not JSON | error (protocol) |
//! | `wrong-tree` | answers success, writes other content | fail (files) |
//! | `wrong-result` | answers with another result document | fail (result) |
//! | `outside` | also writes `../escaped.txt` | fail (outside) |
//! | `tmp-leftover` | also leaves `$TMPDIR/leftover.txt` | fail (outside) |
//! | `run-root` | also writes `<workspace>/../../../escaped.txt` (an absolute path, the per-run root) | fail with `-j 1`, else a run-level error |
//! | `temp-file` | leaves `<path>.tmp1.apply-patch.tmp` | fail (extra file) |
//! | `private` | also writes `.private/trash/x` | pass when `.private` is declared |
//! | `stderr` | writes noise on stderr, answers right | pass |
//! | `refuse` | answers `success: false` (no error kind), changes nothing | fail where success is expected |
//!
//! Flags: `--session` speaks the session transport (HELLO declares the tools
//! `test.write` plus the engine's, the unsupported tag `unsupported`, and the
//! private path `.private`); `--always MODE` misbehaves on every call;
//! `--bad-hello` answers the handshake with garbage. In oneshot, a `HELLO`
//! on stdin is answered like any call (an executor that knows no HELLO)
//! unless `--hello` (answer the same HELLO as a session),
//! `--hello-garbage` (print garbage) or `--hello-exit` (print the HELLO and
//! exit 4) is given. `--tool NAME` (repeatable) narrows the tools the HELLO
//! declares.

use std::io::{BufRead, Read, Write};
use std::path::Path;

use serde_json::{json, Value};

fn result_message(id: &str, success: bool, doc: &Value) -> String {
    json!({"type": "TOOL_RESULT", "data": {"toolCallId": id, "success": success, "result": doc.to_string()}}).to_string()
}

/// Answer one TOOL_CALL; `None` means "say nothing" (after a crash or exit).
fn answer(call: &Value, always: Option<&str>, session: bool) -> Option<String> {
    let id = call["toolCallId"].as_str().unwrap_or_default().to_owned();
    let root = Path::new(call["workspaceRoot"].as_str().unwrap_or("."));
    let params = &call["params"];
    let mode = always
        .or_else(|| params["misbehave"].as_str())
        .unwrap_or("");
    let tool = call["toolName"].as_str().unwrap_or_default();
    if mode == "refuse" {
        let doc = json!({"success": false, "error": {"message": "refused by the test executor"}});
        return Some(result_message(&id, false, &doc));
    }
    let (success, doc) = if tool == "test.write" {
        let path = params["path"].as_str().unwrap_or("out.txt");
        let mut content = params["content"].as_str().unwrap_or_default().to_owned();
        if mode == "wrong-tree" {
            content.push_str("WRONG\n");
        }
        let target = patchspec_conformance::rel_path::under(root, path);
        if let Some(parent) = target.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&target, content);
        (true, json!({"success": true, "path": path}))
    } else {
        let session_state = patchspec_engine::dispatch::Session {
            active_files: serde_json::from_value(call["session"]["activeFiles"].clone())
                .unwrap_or_default(),
            ..Default::default()
        };
        let outcome = patchspec_engine::dispatch::call(&patchspec_engine::dispatch::ToolCall {
            tool_name: tool,
            params,
            workspace_root: root,
            session: &session_state,
        });
        (outcome.success, outcome.result)
    };
    match mode {
        "crash" => std::process::abort(),
        "exit3" => std::process::exit(3),
        "hang" => {
            // A grandchild that inherits stdout: only a process-group kill frees the pipe.
            let child = std::process::Command::new("sleep").arg("600").spawn();
            if let (Ok(child), Some(file)) = (&child, params["pidFile"].as_str()) {
                let _ = std::fs::write(file, child.id().to_string());
            }
            std::thread::sleep(std::time::Duration::from_secs(600));
            None
        }
        "two-delayed" => {
            // The first answer now, the same again in its own write: in a
            // session the caller writes it when the next message comes.
            let one = result_message(&id, success, &doc);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(format!("{one}\n").as_bytes());
            let _ = out.flush();
            Some(one)
        }
        "tmp-leftover" => {
            if let Some(tmp) = std::env::var_os("TMPDIR") {
                let _ = std::fs::write(Path::new(&tmp).join("leftover.txt"), "left\n");
            }
            Some(result_message(&id, success, &doc))
        }
        "run-root" => {
            // <root>/cases/<n>/ws: three levels up is the per-run root.
            if let Some(run) = root.ancestors().nth(3) {
                let _ = std::fs::write(run.join("escaped.txt"), "escaped\n");
            }
            Some(result_message(&id, success, &doc))
        }
        "garbage" => Some("this is not a message".into()),
        "two" => {
            let one = result_message(&id, success, &doc);
            Some(format!("{one}\n{one}"))
        }
        "wrong-id" => Some(result_message(&format!("{id}-not"), success, &doc)),
        "result-not-json" => Some(json!({"type": "TOOL_RESULT", "data": {"toolCallId": id, "success": true, "result": "{not json"}}).to_string()),
        "wrong-result" => Some(result_message(&id, success, &json!({"success": success, "path": "somewhere/else.txt"}))),
        "outside" => {
            let _ = std::fs::write(root.join("../escaped.txt"), "escaped\n");
            Some(result_message(&id, success, &doc))
        }
        "temp-file" => {
            let path = params["path"].as_str().unwrap_or("out.txt");
            let _ = std::fs::write(root.join(format!("{path}.tmp1.apply-patch.tmp")), "partial");
            Some(result_message(&id, success, &doc))
        }
        "private" => {
            let _ = std::fs::create_dir_all(root.join(".private/trash"));
            let _ = std::fs::write(root.join(".private/trash/x"), "kept");
            Some(result_message(&id, success, &doc))
        }
        "stderr" => {
            eprintln!("noise on stderr: never judged");
            Some(result_message(&id, success, &doc))
        }
        _ => {
            let _ = session;
            Some(result_message(&id, success, &doc))
        }
    }
}

/// The executor's HELLO: `test.write` plus the engine's tools, or only `only` when given.
fn hello(only: &[String]) -> String {
    let mut tools = vec!["test.write".to_owned()];
    tools.extend(
        patchspec_engine::dispatch::SUPPORTED_TOOLS
            .iter()
            .map(|s| s.to_string()),
    );
    if !only.is_empty() {
        tools = only.to_vec();
    }
    json!({
        "type": "HELLO", "protocolVersion": 1,
        "implementation": {"name": "patchspec-test-executor", "version": "0.0.0", "language": "Rust"},
        "tools": tools, "unsupportedTags": ["unsupported"], "privatePaths": [".private"]
    })
    .to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only: Vec<String> = args
        .windows(2)
        .filter(|w| w[0] == "--tool")
        .map(|w| w[1].clone())
        .collect();
    let session = args.iter().any(|a| a == "--session");
    let flag = |name: &str| args.iter().any(|a| a == name);
    let bad_hello = args.iter().any(|a| a == "--bad-hello");
    let always = args
        .iter()
        .position(|a| a == "--always")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let mut out = std::io::stdout().lock();
    if !session {
        let mut input = String::new();
        let _ = std::io::stdin().read_to_string(&mut input);
        let call: Value = serde_json::from_str(&input).unwrap_or(Value::Null);
        if call["type"] == "HELLO" {
            if flag("--hello") {
                let _ = writeln!(out, "{}", hello(&only));
                return;
            }
            if flag("--hello-garbage") {
                let _ = writeln!(out, "HELLO? what is a HELLO");
                return;
            }
            if flag("--hello-exit") {
                let _ = writeln!(out, "{}", hello(&only));
                std::process::exit(4);
            }
        }
        if let Some(text) = answer(&call, always, false) {
            // One write, so "two messages" arrive together.
            let _ = out.write_all(format!("{text}\n").as_bytes());
        }
        return;
    }
    // A `two-delayed` call's second answer, written once the next message
    // has arrived: the runner sends it only after judging the call.
    let mut repeat: Option<String> = None;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(text) = repeat.take() {
            let _ = out.write_all(format!("{text}\n").as_bytes());
            let _ = out.flush();
        }
        let msg: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let reply = match msg["type"].as_str() {
            Some("HELLO") if bad_hello => Some("hello?".to_owned()),
            Some("HELLO") => Some(hello(&only)),
            Some("BYE") => return,
            Some("TOOL_CALL") => {
                let reply = answer(&msg, always, true);
                let mode = always.or_else(|| msg["params"]["misbehave"].as_str());
                if mode == Some("two-delayed") {
                    repeat = reply;
                    continue;
                }
                reply
            }
            _ => None,
        };
        if let Some(text) = reply {
            let _ = out.write_all(format!("{text}\n").as_bytes());
            let _ = out.flush();
        }
    }
    if let Some(text) = repeat {
        let _ = out.write_all(format!("{text}\n").as_bytes());
    }
}
