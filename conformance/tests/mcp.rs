//! `patchspec mcp` through the real binary, spoken to line by line as a
//! third-party MCP client would (raw JSON-RPC, none of the runner's code):
//! the handshake and `tools/list` against the catalog, a call that applies,
//! one that is refused, unknown tools, malformed input, `--read-only` and
//! `--tools`, Streamable HTTP with `--listen`, and a client that goes away
//! mid-call. Then `check --transport mcp` and `matrix --transport mcp`, the
//! runner as an MCP client.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::{CORPUS_SHARD, PATCHSPEC};
use patchspec_engine::catalog::catalog;
use serde_json::{json, Value};

/// A `patchspec mcp` server on stdio.
struct Server {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start(root: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(PATCHSPEC)
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("patchspec mcp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child: Some(child),
            stdin,
            lines,
            next_id: 1,
        }
    }

    /// A server that has done the `initialize` handshake.
    fn initialized(root: &Path, extra: &[&str]) -> (Server, Value) {
        let mut server = Server::start(root, extra);
        let init = server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}
            }),
        );
        server.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        (server, init)
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// The next message from the server.
    fn read(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers within 20 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Send a request; the whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let response = self.read();
        assert_eq!(
            response["id"],
            json!(id),
            "answer to request {id}: {response}"
        );
        response
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .expect("tools array")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_owned())
            .collect()
    }

    /// Close stdin and wait for the exit (at most 20 s).
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait_exit(self.child.as_mut().expect("running"))
    }

    /// Go away as a client can: close stdin, never read stdout again.
    /// The server process, to watch it exit.
    fn vanish(mut self) -> Child {
        drop(self.stdin.take());
        self.child.take().expect("running")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every entry under `root` (relative path → bytes), `.patchspec` left out.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    patchspec_snapshot::flat(root, Some(".patchspec"))
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").expect("write");
    dir
}

const APPLIES: &str =
    "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n*** End Patch\n";
const REFUSED: &str =
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-gamma\n+GAMMA\n*** End Patch\n";

#[test]
fn initialize_and_tools_list_serve_the_catalog() {
    let ws = workspace();
    let (mut server, init) = Server::initialized(ws.path(), &[]);
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25", "{init}");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");
    assert_eq!(result["serverInfo"]["name"], "patchspec");
    assert_eq!(
        result["_meta"]["dev.patchspec/executor"]["privatePaths"],
        json!([".patchspec"])
    );
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let catalog = catalog();
    assert_eq!(tools.len(), catalog.len());
    for (tool, def) in tools.iter().zip(&catalog) {
        assert_eq!(tool["name"], def.name);
        assert_eq!(tool["description"], def.description.as_str());
        assert_eq!(tool["inputSchema"], def.params_schema, "{}", def.name);
        assert_eq!(tool["outputSchema"], def.result_schema, "{}", def.name);
        assert_eq!(tool["annotations"]["readOnlyHint"], json!(!def.writes));
    }
    assert!(server.finish().success());
}

#[test]
fn a_call_that_applies_returns_its_document_and_writes() {
    let ws = workspace();
    let (mut server, _) = Server::initialized(ws.path(), &[]);
    let response = server.call("apply_patch", json!({"patch": APPLIES}));
    let result = &response["result"];
    assert_eq!(result["isError"], false, "{response}");
    let document = &result["structuredContent"];
    assert_eq!(document["success"], true, "{response}");
    assert_eq!(
        document["data"]["changedFiles"],
        json!([{"path": "a.txt", "operation": "update"}])
    );
    // The same document as text, for clients that read only text.
    let text = result["content"][0]["text"].as_str().expect("text block");
    assert_eq!(
        &serde_json::from_str::<Value>(text).expect("JSON text"),
        document
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "alpha\nBETA\n"
    );
}

#[test]
fn a_refused_edit_is_is_error_with_the_diagnosis_and_changes_nothing() {
    let ws = workspace();
    std::fs::write(ws.path().join("b.txt"), "untouched\n").unwrap();
    let before = tree(ws.path());
    let (mut server, _) = Server::initialized(ws.path(), &[]);
    // Two sections: the first would apply, the second cannot; nothing is written.
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: a.txt\n@@\n-gamma\n+GAMMA\n*** End Patch\n";
    let response = server.call("apply_patch", json!({"patch": patch}));
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    let reason = result["content"][0]["text"].as_str().expect("text");
    assert!(reason.starts_with("a.txt: hunk 0"), "{reason}");
    assert!(reason.contains("context not found"), "{reason}");
    assert!(reason.contains("diagnosis:\n  cause: "), "{reason}");
    assert_eq!(result["structuredContent"]["success"], false);
    assert_eq!(
        result["structuredContent"]["error"]["kind"],
        "patch_apply_error"
    );
    let last = result["content"].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(last).unwrap(),
        result["structuredContent"]
    );
    assert_eq!(
        tree(ws.path()),
        before,
        "a refused edit changed the workspace"
    );
    // Params the engine cannot read are its own refusal, in its vocabulary.
    let response = server.call("apply_patch", json!({"input": REFUSED}));
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        response["result"]["structuredContent"]["error"]["details"]["reason"],
        "invalid_params"
    );
    assert_eq!(tree(ws.path()), before);
}

#[test]
fn unknown_tools_and_malformed_requests_are_errors_not_crashes() {
    let ws = workspace();
    let before = tree(ws.path());
    let (mut server, _) = Server::initialized(ws.path(), &[]);
    let response = server.call("rm_rf", json!({}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(response["error"]["message"]
        .as_str()
        .unwrap()
        .contains("rm_rf"));
    // Arguments that are not an object: invalid params.
    let response = server.request(
        "tools/call",
        json!({"name": "apply_patch", "arguments": [1]}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // A line cut short is a parse error answered with its id; a line that
    // is not JSON and has no id is dropped (nothing to answer); JSON that is
    // not JSON-RPC is an invalid request (id null); the server goes on.
    server.send_line("{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ");
    let cut = server.read();
    assert_eq!(cut["id"], 99, "{cut}");
    assert_eq!(cut["error"]["code"], -32700, "{cut}");
    server.send_line("not json at all");
    server.send_line("{\"hello\": 1}");
    let invalid = server.read();
    assert_eq!(invalid["id"], Value::Null, "{invalid}");
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    // Session state in _meta that does not parse is refused, not ignored.
    let response = server.request(
        "tools/call",
        json!({"name": "workspace.read_file", "arguments": {"path": "a.txt"},
               "_meta": {"dev.patchspec/session": {"activeFiles": 3}}}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let response = server.call("workspace.read_file", json!({"path": "a.txt"}));
    assert_eq!(
        response["result"]["structuredContent"]["file"]["content"],
        "alpha\nbeta\n"
    );
    assert_eq!(tree(ws.path()), before);
    assert!(server.finish().success());
}

#[test]
fn session_state_travels_in_meta() {
    let ws = workspace();
    let (mut server, _) = Server::initialized(ws.path(), &[]);
    let response = server.request(
        "tools/call",
        json!({"name": "workspace.read_file", "arguments": {"path": "a.txt"},
               "_meta": {"dev.patchspec/session": {"activeFiles": {"a.txt": "alpha\nbeta\n"}}}}),
    );
    let plain = server.call("workspace.read_file", json!({"path": "a.txt"}));
    assert_ne!(
        response["result"]["structuredContent"], plain["result"]["structuredContent"],
        "ActiveFiles in _meta made no difference: {response}"
    );
}

#[test]
fn read_only_and_tools_hide_tools_and_refuse_their_calls() {
    let ws = workspace();
    let before = tree(ws.path());
    let (mut server, _) = Server::initialized(ws.path(), &["--read-only"]);
    let writers: Vec<&str> = catalog()
        .iter()
        .filter(|t| t.writes)
        .map(|t| t.name)
        .collect();
    let names = server.tool_names();
    assert!(!names.is_empty());
    for writer in &writers {
        assert!(
            !names.iter().any(|n| n == writer),
            "{writer} listed read-only"
        );
    }
    let response = server.call("apply_patch", json!({"patch": APPLIES}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(tree(ws.path()), before);
    drop(server);

    let (mut server, _) =
        Server::initialized(ws.path(), &["--tools", "workspace.read_file,apply_change"]);
    let subset: Vec<String> = names_in_catalog_order()
        .into_iter()
        .filter(|n| n == "apply_change" || n == "workspace.read_file")
        .collect();
    assert_eq!(subset.len(), 2);
    assert_eq!(server.tool_names(), subset);
    let response = server.call("apply_patch", json!({"patch": APPLIES}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(tree(ws.path()), before);
    drop(server);

    // Both: only what is in the subset and read-only; a model name
    // (workspace_read_file) names its tool as the wire name does.
    let (mut server, _) = Server::initialized(
        ws.path(),
        &["--tools", "workspace_read_file,apply_change", "--read-only"],
    );
    assert_eq!(server.tool_names(), ["workspace.read_file"]);
    drop(server);

    // --read-only serves exactly the tools that never write.
    let (mut server, _) = Server::initialized(ws.path(), &["--read-only"]);
    let readers: Vec<String> = catalog()
        .iter()
        .filter(|t| !t.writes)
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        readers,
        [
            "workspace.read_file",
            "get_patch_change",
            "read_file",
            "grep_file",
            "call_chain"
        ]
    );
    assert_eq!(server.tool_names(), readers);
    let listed = server.request("tools/list", json!({}));
    for tool in listed["result"]["tools"].as_array().expect("tools") {
        assert!(
            tool["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{tool}"
        );
        assert_eq!(tool["annotations"]["idempotentHint"], true, "{tool}");
    }
}

fn names_in_catalog_order() -> Vec<String> {
    catalog().iter().map(|t| t.name.to_string()).collect()
}

#[test]
fn bad_options_are_usage_errors() {
    let ws = workspace();
    let run = |args: &[&str]| {
        Command::new(PATCHSPEC)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("runs")
    };
    let root = ws.path().to_str().unwrap();
    let out = run(&["mcp", "--root", root, "--tools", "apply_patch,nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown tool \"nope\""));
    let out = run(&[
        "mcp",
        "--root",
        root,
        "--tools",
        "apply_patch",
        "--read-only",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool left"));
    let out = run(&["mcp", "--root", &format!("{root}/missing")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

#[test]
fn a_client_that_goes_away_mid_call_leaves_the_workspace_consistent() {
    // Large creates keep the engine busy (normalise, hash, write, fsync)
    // while the client closes both pipes without waiting for an answer.
    let content: String = "0123456789abcdef\n".repeat(400_000); // 6.8 MB
    for round in 0..3 {
        let ws = workspace();
        let mut server = Server::initialized(ws.path(), &[]).0;
        for i in 0..4 {
            let id = 100 + i;
            server.send_line(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "workspace_create_file",
                    "arguments": {"path": format!("big{i}.txt"), "content": content}
                }})
                .to_string(),
            );
        }
        // Vanish: stdin closed, stdout never read again (the reader
        // thread's channel is dropped with the Server).
        let mut child = server.vanish();
        let status = wait_exit(&mut child);
        assert!(
            status.code().is_some(),
            "round {round}: killed by a signal: {status:?}"
        );
        // Each file is absent or whole: never partial, never a temp file beside it.
        let files = tree(ws.path());
        for (name, bytes) in &files {
            match name.as_str() {
                "a.txt" => assert_eq!(bytes, b"alpha\nbeta\n"),
                n if n.starts_with("big") && n.ends_with(".txt") => {
                    assert_eq!(bytes.len(), content.len(), "round {round}: {n} is partial")
                }
                other => panic!("round {round}: stray file {other}"),
            }
        }
        // And the engine finds nothing to recover.
        let out = Command::new(PATCHSPEC)
            .args(["recover", "--root"])
            .arg(ws.path())
            .output()
            .expect("recover runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn streamable_http_with_listen_serves_the_same_tools() {
    let ws = workspace();
    let mut child = Command::new(PATCHSPEC)
        .arg("mcp")
        .arg("--root")
        .arg(ws.path())
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).expect("the listening line");
    let url = line
        .trim()
        .strip_prefix("patchspec mcp: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_owned();
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .expect("http://ADDR/mcp");
    let post = |body: &Value, session: Option<&str>| -> (String, String) {
        let mut stream = std::net::TcpStream::connect(authority).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let body = body.to_string();
        let session = session
            .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        (head.to_owned(), body.to_owned())
    };
    let (head, body) = post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        None,
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");
    let session = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .expect("a session id");
    post(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    );
    let (head, body) = post(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "apply_patch", "arguments": {"patch": APPLIES}}}),
        Some(&session),
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    assert!(body.contains("\"structuredContent\""), "{body}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "alpha\nBETA\n"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `patchspec check --transport mcp` with `args` after `--`; (exit code, stdout, stderr).
fn check(extra: &[&str], server: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(PATCHSPEC)
        .arg("check")
        .args(extra)
        .args(["--transport", "mcp", "--"])
        .args(server)
        .output()
        .expect("check runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_over_mcp_passes_the_reference_server() {
    // A shard with cases of every tool; the whole corpus runs over MCP in
    // `.ci/run`'s gate stage (a server process per case).
    let (code, stdout, stderr) = check(
        &["--shard", CORPUS_SHARD],
        &[PATCHSPEC, "mcp", "--root", "{root}"],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("[mcp]"), "{stdout}");
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

#[test]
fn check_over_mcp_skips_the_tools_the_server_does_not_list() {
    let (code, stdout, stderr) = check(
        &[
            "--tool",
            "apply_change",
            "--tool",
            "workspace.read_file",
            "--shard",
            CORPUS_SHARD,
        ],
        &[PATCHSPEC, "mcp", "--root", "{root}", "--read-only"],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // apply_change writes: its cases are skipped (all of them, however
    // many the corpus has), workspace.read_file's run.
    assert!(stdout.contains(" passed, 0 failed, "), "{stdout}");
    assert!(
        stdout.contains("the executor does not support tool \"apply_change\""),
        "{stdout}"
    );
    let per_tool = |tool: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{tool}:")))
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    assert!(
        per_tool("apply_change").starts_with("apply_change: skip "),
        "{stdout}"
    );
    assert!(
        per_tool("workspace.read_file").starts_with("workspace.read_file: pass "),
        "{stdout}"
    );
}

#[test]
fn check_over_mcp_finds_a_server_that_is_not_one_unusable() {
    // Exits at once, and answers nothing that is MCP.
    let (code, _, stderr) = check(&["--tool", "apply_change"], &["sh", "-c", "echo not-mcp"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("initialize"), "{stderr}");
}

#[test]
fn matrix_accepts_mcp_executors() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = Command::new(PATCHSPEC)
        .args([
            "matrix",
            "--tool",
            "apply_change",
            "--shard",
            CORPUS_SHARD,
            "--transport",
            "mcp",
            "--out",
        ])
        .arg(out_dir.path())
        .arg("--executor")
        .arg(format!("mcp-server={PATCHSPEC} mcp --root {{root}}"))
        .output()
        .expect("matrix runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("matrix.json")).unwrap())
            .unwrap();
    let text = m.to_string();
    assert!(text.contains("mcp-server"), "{text}");
    assert!(text.contains("\"mcp\""), "{text}");
}

/// A fake MCP server in sh: it answers `initialize` and `tools/list`
/// (one tool, `apply_change`) properly, and `tools/call` as `$1` says:
/// `hang`, `huge` (17 MB on one line), `no-document`, `rpc-error`, `exit`.
const FAKE_SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"initialize"'*)
      echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"}}}" ;;
    *'"tools/list"'*)
      echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"tools\":[{\"name\":\"apply_change\",\"inputSchema\":{\"type\":\"object\"}}]}}" ;;
    *'"tools/call"'*)
      case "$1" in
        hang) sleep 30 ;;
        huge) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' "$id"
              head -c 17000000 /dev/zero | tr '\0' a
              echo '"}]}}' ;;
        no-document) echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}" ;;
        rpc-error) echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"error\":{\"code\":-32000,\"message\":\"nope\"}}" ;;
        exit) exit 7 ;;
      esac ;;
  esac
done
"#;

/// `check --transport mcp` of one apply_change case against the fake server in `mode`.
fn check_fake(mode: &str) -> (Option<i32>, String) {
    let (code, stdout, stderr) = check(
        &[
            "--run",
            "apply_change/modify/replace-once",
            "--timeout",
            "2s",
            "--report",
            "json",
        ],
        &["sh", "-c", FAKE_SERVER, "fake-mcp", mode],
    );
    (code, format!("{stdout}\n{stderr}"))
}

#[test]
fn check_over_mcp_bounds_a_server_that_hangs_or_floods() {
    let (code, out) = check_fake("hang");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("timed out after 2.0s"), "{out}");
    let (code, out) = check_fake("huge");
    assert_ne!(code, Some(0), "{out}");
    assert!(
        out.contains("output exceeds the 16777216-byte bound"),
        "{out}"
    );
}

#[test]
fn check_over_mcp_reports_answers_that_are_not_results_as_errors() {
    for (mode, needle) in [
        (
            "no-document",
            "no structuredContent and no text block that is a JSON object",
        ),
        (
            "rpc-error",
            "tools/call answered with JSON-RPC error -32000: nope",
        ),
        ("exit", "the server closed the connection before answering"),
    ] {
        let (code, out) = check_fake(mode);
        assert_ne!(code, Some(0), "{mode}: {out}");
        assert!(out.contains(needle), "{mode}: {out}");
    }
}

/// A small deterministic generator (xorshift64*): the fuzz below is the
/// same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One message carrying `id` (its JSON text) and broken in one of many
/// ways, or a valid one; the id is always readable (before the point where
/// the text stops being JSON, or anywhere when the text is JSON serde
/// cannot type).
fn malformed(rng: &mut Rng, id: &str) -> Vec<u8> {
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let wrap = |args: &str, rng: &mut Rng| -> String {
        let tool =
            ["apply_patch", "workspace.read_file", "grep_file", "nope"][rng.below(4) as usize];
        let params = format!(r#"{{"name":"{tool}","arguments":{{"x":{args}}}}}"#);
        // The id first, or last as JavaScript SDKs write it.
        if rng.below(2) == 0 {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{params},"id":{id}}}"#)
        }
    };
    match rng.below(12) {
        0 => wrap(&deep(129 + rng.below(400) as usize), rng).into_bytes(),
        1 => wrap(["1e400", "-1e999", "1E+500", "123456789e999"][rng.below(4) as usize], rng)
            .into_bytes(),
        2 => wrap(
            [r#""\ud800""#, r#""\udfff""#, r#""a\ud83dz""#, r#"["\udc00"]"#][rng.below(4) as usize],
            rng,
        )
        .into_bytes(),
        3 => {
            // Invalid UTF-8 inside a string.
            let bad: &[u8] = [&b"\xff"[..], b"\xc3\x28", b"\xe2\x82", b"\xf0\x28\x8c\x28", b"\xed\xa0\x80"]
                [rng.below(5) as usize];
            let text = wrap(r#""@@""#, rng);
            let at = text.find("@@").expect("the marker");
            let mut bytes = text.as_bytes()[..at].to_vec();
            bytes.extend_from_slice(bad);
            bytes.extend_from_slice(&text.as_bytes()[at + 2..]);
            bytes
        }
        4 => {
            // Cut short anywhere after the id.
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"apply_patch","arguments":{{"patch":"x"}}}}}}"#);
            let start = text.find(id).expect("the id") + id.len();
            let cut = start + rng.below((text.len() - start - 1) as u64) as usize;
            text.as_bytes()[..cut].to_vec()
        }
        5 => {
            // A syntax error after the id.
            let junk = [",}", "{,}", "[1,,2]", "tru", "\"unterminated", "01", "+1", "'s'", "NaN"]
                [rng.below(9) as usize];
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{junk}}}"#)
                .into_bytes()
        }
        6 => {
            // JSON, but not a JSON-RPC message.
            let body = [r#""method":5"#, r#""jsonrpc":"1.0","method":"ping""#, r#""result":1,"error":{}"#, r#""hello":1"#, r#""method":null"#]
                [rng.below(5) as usize];
            format!(r#"{{"id":{id},{body}}}"#).into_bytes()
        }
        7 => {
            // Typed wrong: rmcp answers (-32602 or -32601).
            let params = [r#""params":{"name":5}"#, r#""params":"x""#, r#""params":{"name":"apply_patch","arguments":[1]}"#]
                [rng.below(3) as usize];
            let method = ["tools/call", "no/such/method"][rng.below(2) as usize];
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}",{params}}}"#).into_bytes()
        }
        8 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes(),
        9 => {
            // Nesting past 128 where serde stops reading, outside params.
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","_x":{}}}"#, deep(300)).into_bytes()
        }
        10 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"workspace.read_file\",\"arguments\":{{\"path\":\"a.txt\"}}}}}}\r")
            .into_bytes(),
        _ => {
            // Whitespace and a lone surrogate in the method.
            format!("  {{ \"id\" : {id} , \"jsonrpc\":\"2.0\", \"method\":\"\\ud800\" }}  ").into_bytes()
        }
    }
}

/// Issue 39: every message that carries an id gets exactly one answer, over
/// 10,000 malformed ones (and some valid ones between them).
#[test]
fn every_id_bearing_message_on_stdio_is_answered_exactly_once() {
    const MESSAGES: u64 = 10_000;
    let ws = workspace();
    let (mut server, _) = Server::initialized(ws.path(), &[]);
    let mut stdin = server.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut rng = Rng(0x39_39_39_39);
        let mut expected = Vec::new();
        for n in 0..MESSAGES {
            let id = if n % 3 == 0 {
                json!(format!("s-{n}"))
            } else {
                json!(1000 + n)
            };
            let mut line = malformed(&mut rng, &id.to_string());
            line.push(b'\n');
            stdin.write_all(&line).expect("write");
            expected.push(id);
        }
        stdin.flush().expect("flush");
        (expected, stdin)
    });
    let mut answers: BTreeMap<String, usize> = BTreeMap::new();
    let mut unexpected = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while answers.values().sum::<usize>() + unexpected.len() < MESSAGES as usize {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = server.lines.recv_timeout(left.min(Duration::from_secs(20))) else {
            break;
        };
        let answer: Value = serde_json::from_str(&line).expect("an answer is JSON");
        assert!(
            answer.get("result").is_some() || answer["error"]["code"].is_i64(),
            "{answer}"
        );
        match &answer["id"] {
            Value::Null => unexpected.push(answer),
            id => *answers.entry(id.to_string()).or_default() += 1,
        }
    }
    let (expected, stdin) = writer.join().expect("the writer");
    let unanswered: Vec<&Value> = expected
        .iter()
        .filter(|id| !answers.contains_key(&id.to_string()))
        .collect();
    let twice: Vec<_> = answers.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        unexpected.is_empty(),
        "answers with id null: {unexpected:?}"
    );
    assert!(
        unanswered.is_empty() && twice.is_empty(),
        "{} of {MESSAGES} unanswered (first: {:?}); answered twice: {twice:?}",
        unanswered.len(),
        unanswered.first()
    );
    server.stdin = Some(stdin);
    let response = server.call("workspace.read_file", json!({"path": "a.txt"}));
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert!(server.finish().success());
}

/// A line over the 16 MiB limit is answered with -32600 naming the limit,
/// its id read from its start or (JavaScript SDKs write it last) its end.
#[test]
fn a_line_over_the_limit_is_answered_with_its_id() {
    let ws = workspace();
    let (mut server, _) = Server::initialized(ws.path(), &[]);
    let content = "a".repeat(16 << 20);
    for (id, line) in [
        (
            json!(41),
            format!(
                r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"workspace_create_file","arguments":{{"path":"big.txt","content":"{content}"}}}}}}"#
            ),
        ),
        (
            json!("last"),
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"workspace_create_file","arguments":{{"path":"big.txt","content":"{content}"}}}},"id":"last"}}"#
            ),
        ),
    ] {
        server.send_line(&line);
        let answer = server.read();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        let message = answer["error"]["message"].as_str().expect("a message");
        assert!(message.contains("16777216"), "{message}");
    }
    assert!(!ws.path().join("big.txt").exists());
    let response = server.call("workspace.read_file", json!({"path": "a.txt"}));
    assert_eq!(response["result"]["isError"], false, "{response}");
}
